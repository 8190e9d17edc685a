"""The metric vocabulary: name, unit, direction, meaning, and the conditions each family needs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from factreg.errors import UsageError

HIGHER = "higher"
LOWER = "lower"


@dataclass(frozen=True)
class Metric:
    """One metric: a value of it is only comparable with values of the same metric."""

    name: str
    unit: str
    direction: str | None  # "higher" or "lower" is better; None when neither
    family: str
    meaning: str
    # Each entry is a tuple of alternatives: at least one of them must be an identity condition.
    required: tuple[tuple[str, ...], ...] = field(default=())
    custom: bool = False
    # The values a measurement of it can take: a time, a rate, a count or a ratio is never negative, a share is at
    # most 1. A custom metric (a temperature, a change) may be anything.
    lowest: float | None = 0.0
    highest: float | None = None


_LATENCY_REQUIRED = (("model",), ("endpoint", "machine"))
_RATE_REQUIRED = (("machine",), ("model", "model_filename", "model_type"))

VOCABULARY: dict[str, Metric] = {
    m.name: m
    for m in [
        Metric("ttft", "s", LOWER, "latency",
               "request sent → first answer (visible content) token; reasoning does not count", _LATENCY_REQUIRED),
        Metric("ttft_any", "s", LOWER, "latency",
               "request sent → first token of any kind (reasoning included)", _LATENCY_REQUIRED),
        Metric("ttfb", "s", LOWER, "latency", "request sent → first byte of the response", _LATENCY_REQUIRED),
        Metric("reasoning_time", "s", LOWER, "latency",
               "first reasoning token → first answer token (thinking preamble)", _LATENCY_REQUIRED),
        Metric("e2e", "s", LOWER, "latency", "request sent → last answer token (the whole reply)", _LATENCY_REQUIRED),
        Metric("itl", "s", LOWER, "latency",
               "inter-token latency: each gap between consecutive answer chunks, pooled over requests",
               _LATENCY_REQUIRED),
        Metric("itl_reasoning", "s", LOWER, "latency",
               "each gap between consecutive reasoning chunks, pooled over requests", _LATENCY_REQUIRED),
        Metric("tpot", "s", LOWER, "latency",
               "time per output token after the first: (e2e − ttft) / (answer tokens − 1), per request",
               _LATENCY_REQUIRED),
        Metric("tpot_reasoning", "s", LOWER, "latency",
               "time per reasoning token after the first: reasoning span / (reasoning tokens − 1), per request",
               _LATENCY_REQUIRED),
        Metric("answer_tokens", "tok", None, "count", "answer tokens of one reply (usage, else chunks)",
               _LATENCY_REQUIRED),
        Metric("reasoning_tokens", "tok", None, "count", "reasoning tokens of one reply (usage, else chunks)",
               _LATENCY_REQUIRED),
        Metric("goodput", "share", HIGHER, "capacity",
               "share of requests at one load level that met every SLO (sweep)", _LATENCY_REQUIRED, highest=1.0),
        Metric("capacity", "streams", HIGHER, "capacity",
               "highest concurrency whose goodput, and every lower level's, meets the threshold (sweep)",
               _LATENCY_REQUIRED),
        Metric("decode_rate", "tok/s", HIGHER, "rate",
               "generated tokens / generation span, (n−1)/span for n tokens", _RATE_REQUIRED),
        Metric("prefill_rate", "tok/s", HIGHER, "rate", "prompt tokens / prefill time", _RATE_REQUIRED),
        Metric("tg_rate", "tok/s", HIGHER, "rate", "llama-bench tg<N>: avg_ts of the text-generation test",
               _RATE_REQUIRED),
        Metric("pp_rate", "tok/s", HIGHER, "rate", "llama-bench pp<N>: avg_ts of the prompt-processing test",
               _RATE_REQUIRED),
        Metric("pptg_rate", "tok/s", HIGHER, "rate",
               "llama-bench pp<N>+tg<M>: (n_prompt + n_gen) / total time of the combined test", _RATE_REQUIRED),
        Metric("output_throughput", "tok/s", HIGHER, "throughput",
               "generated tokens of all requests / the run's duration (a load benchmark's output throughput)",
               _LATENCY_REQUIRED),
        Metric("request_throughput", "req/s", HIGHER, "throughput",
               "completed requests / the run's duration (a load benchmark's request throughput)", _LATENCY_REQUIRED),
        Metric("reachable", "bool", HIGHER, "availability",
               "endpoint answered an authenticated request with 2xx (1) or not (0)", (("endpoint",),), highest=1.0),
        Metric("ratio", "×", None, "derived", "ratio of the medians of two comparable facts (derived fact)"),
    ]
}

# Conditions that never decide comparability even when given with --cond.
# `machine_state` and `control` (measure/machine.py, measure/control.py) are the machine's state and the control
# measurement of a run: a verification observes them, a correction carries them into the new fact as info.
# `server_state` (measure/endpoint.py) is a probe's evidence about the server: its scheduling, its other traffic.
# `uptime_s` is how long the server had been up at one run: it differs from run to run (it decides `cold`, from
# either side), so it can never tell two situations apart.
ALWAYS_INFO = frozenset({"test_time", "note", "notes", "cpu_temp", "machine_state", "control", "server_state",
                         "uptime_s"})


# A percentile of a metric's distribution is a metric of its own: `ttft_p90` is the 90th percentile of ttft (never
# comparable with a median of ttft). Only these families have per-request distributions worth a percentile.
_PERCENTILE_RE = re.compile(r"^([a-z][a-z0-9_]*?)_p(\d{1,2}(?:\.\d{1,3})?)$")
PERCENTILE_FAMILIES = frozenset({"latency", "rate", "count"})


def split_percentile(name: str) -> tuple[str, float] | None:
    """`ttft_p90` → ("ttft", 0.9); `itl_p99.9` → ("itl", 0.999); None for a plain or unknown name."""
    m = _PERCENTILE_RE.match(name)
    if m is None:
        return None
    base, pct = m.group(1), float(m.group(2))
    known = VOCABULARY.get(base)
    if known is None or known.family not in PERCENTILE_FAMILIES or not 0.0 < pct < 100.0:
        return None
    return base, round(pct / 100.0, 6)


def percentile_name(base: str, q: float) -> str:
    """("ttft", 0.9) → `ttft_p90`."""
    return f"{base}_p{round(q * 100, 6):g}"


def _percentile_metric(name: str) -> Metric | None:
    split = split_percentile(name)
    if split is None:
        return None
    base = VOCABULARY[split[0]]
    return Metric(name, base.unit, base.direction, base.family,
                  f"{name.rsplit('_', 1)[1]} of {base.name} ({base.meaning})", base.required,
                  lowest=base.lowest, highest=base.highest)


def get_metric(name: str, unit: str | None = None, direction: str | None = None) -> Metric:
    """The vocabulary entry for `name` (or a percentile of one, `ttft_p90`), or a custom metric when a unit
    is given."""
    known = VOCABULARY.get(name) or _percentile_metric(name)
    if known is not None:
        if unit and unit != known.unit:
            raise UsageError(f"metric {name!r} is measured in {known.unit!r}, not {unit!r}")
        return known
    if not unit:
        raise UsageError(
            f"unknown metric {name!r}: use one of {', '.join(sorted(VOCABULARY))}, "
            "or give --unit for a custom metric"
        )
    if direction not in (None, HIGHER, LOWER):
        raise UsageError(f"--direction must be {HIGHER!r} or {LOWER!r}")
    return Metric(name, unit, direction, "custom", "custom metric", (), custom=True, lowest=None)


def check_value(metric: Metric, value: float, what: str) -> float:
    """`value` when a measurement of `metric` can have it (a latency, rate or count is never negative, a share
    never over 1), else a UsageError naming `what` — the one rule for `record`, imports, the MCP `record` tool and
    facts a command derives."""
    if metric.lowest is not None and value < metric.lowest:
        raise UsageError(f"{what} of {metric.name} ({metric.unit}) cannot be below {metric.lowest:g}, got {value:g}")
    if metric.highest is not None and value > metric.highest:
        raise UsageError(f"{what} of {metric.name} ({metric.unit}) cannot be above {metric.highest:g}, got {value:g}")
    return value


def known(name: str) -> Metric | None:
    """The vocabulary entry for `name` or a percentile of one; None for a custom metric."""
    return VOCABULARY.get(name) or _percentile_metric(name)


def missing_required(metric: Metric, identity: dict[str, str]) -> list[str]:
    """Required identity conditions of the metric's family that are absent (each as `a|b`)."""
    return ["|".join(alts) for alts in metric.required if not any(a in identity for a in alts)]
