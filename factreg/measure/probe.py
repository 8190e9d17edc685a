"""The endpoint probe: time OpenAI-compatible streaming replies the way a user hears them.

Protocol (DESIGN.md, "Measurement protocol"): an identity check first (`/v1/models`, `/props`, one 1-token
authenticated request), then settle (warm-up requests discarded, server uptime), then `n` measured requests
with the same body. Each request keeps raw event times on a monotonic clock; every metric is derived from
them. A request that fails gives a verdict (`auth_failed`, `unreachable`, `error`), never a value; measured replies
without an answer token give `no_answer`. A base URL (`http://host:8080/v1`) is probed at its `/chat/completions`.

This module holds the run loop, the result, and recording and re-verifying facts; the spec and a stored method are
`probe_spec`, one request is `stream`, the identity check `identity`, the server's uptime `uptime`.
"""

from __future__ import annotations

import json
import math
import os
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factreg import secrets, stats
from factreg.errors import UsageError
from factreg.measure.http import USER_AGENT, make_client
from factreg.measure.identity import check_identity
from factreg.measure.probe_spec import MAX_N as MAX_N  # the bounds and the spec have their module; known here too
from factreg.measure.probe_spec import ProbeSpec as ProbeSpec
from factreg.measure.probe_spec import changed, expected
from factreg.measure.probe_spec import spec_from_method as spec_from_method
from factreg.measure.stream import request_body, stream_request
from factreg.measure.trace import ProbeFailure, RequestTrace, rounded
from factreg.measure.uptime import is_local, settle
from factreg.registry import conditions as cond
from factreg.stats import quantiles
from factreg.verdicts import FAILURES, Verdict

if TYPE_CHECKING:
    import httpx

    from factreg.config import Settings
    from factreg.measure.measurement import Measurement
    from factreg.registry.facts import NewFact
    from factreg.registry.types import FactData, Method

OK = "ok"
METRICS = (
    "ttft",
    "ttft_any",
    "ttfb",
    "reasoning_time",
    "e2e",
    "decode_rate",
    "tpot",
    "tpot_reasoning",
    "itl",
    "itl_reasoning",
    "answer_tokens",
    "reasoning_tokens",
)
# What `--record` stores by default; the token counts stay conditions (in `info`), reasoning metrics only when the
# server thinks, and percentiles only when asked (`--percentile`).
RECORDED = ("ttft", "ttft_any", "ttfb", "reasoning_time", "e2e", "decode_rate", "tpot", "tpot_reasoning", "itl",
            "itl_reasoning")
REASONING_METRICS = frozenset({"reasoning_time", "tpot_reasoning", "itl_reasoning"})
# Observable before any timing: a difference here stops the probe early.
EARLY_KEYS = ("endpoint", "model", "build", "body_sha256", "machine")


@dataclass
class ProbeResult:
    """Everything a probe saw: verdict, per-request raw events, metric samples, observed conditions."""

    verdict: str
    message: str | None = None
    requests: list[RequestTrace] = field(default_factory=list)
    samples: dict[str, list[float]] = field(default_factory=dict)
    observed: dict[str, str] = field(default_factory=dict)
    info: dict[str, str] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    diff: dict[str, list[str | None]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.verdict in FAILURES

    def summary(self) -> dict[str, dict[str, Any]]:
        """Per metric: n, median, mean ± sd, min, max, the samples, and p50/p90/p95/p99 each with its
        distribution-free 95% interval and whether n is enough for it (`quantiles.enough_for`)."""
        out: dict[str, dict[str, Any]] = {}
        for name in METRICS:
            xs = self.samples.get(name)
            if not xs:
                continue
            s = stats.summarize(xs)
            assert s is not None
            out[name] = {
                "n": s.n,
                "median": rounded(s.median),
                "mean": rounded(s.mean),
                "stdev": rounded(s.stdev),
                "min": rounded(s.min),
                "max": rounded(s.max),
                "percentiles": percentiles(xs),
                "samples": [rounded(x) for x in xs],
            }
        return out

    def as_json(self) -> dict[str, Any]:
        data = {
            "verdict": self.verdict,
            "message": self.message,
            "metrics": self.summary(),
            "observed": dict(self.observed),
            "info": dict(self.info),
            "flags": list(self.flags),
            "diff": self.diff,
            "warnings": self.warnings,
            "requests": [r.as_json() for r in self.requests],
        }
        queued = [r.queued for r in self.requests if r.kind == "measured" and r.queued is not None]
        if queued:
            data["client_queue_s"] = percentiles(queued)
        return dict(secrets.redact_data(data))


def percentiles(xs: list[float]) -> dict[str, dict[str, Any]]:
    """p50, p90, p95, p99 of `xs` with 95% order-statistic intervals; `too_few` says why n does not suffice."""
    out: dict[str, dict[str, Any]] = {}
    for est in quantiles.summary(xs).estimates:
        out[est.label] = {
            "value": rounded(est.value),
            "ci95": [rounded(est.low), rounded(est.high)],
            "enough": est.enough,
            "too_few": quantiles.shortfall(est.q, est.n),
        }
    return out


def probe(
    spec: ProbeSpec,
    *,
    hostname: str,
    client: httpx.Client | None = None,
    progress: Callable[[str], None] | None = None,
    env: Mapping[str, str] | None = None,
    allowed_env: frozenset[str] | None = None,
) -> ProbeResult:
    """Run the whole protocol against `spec.url`; failures come back as verdicts, not exceptions.

    Raises UsageError only for bad arguments (an unset `${ENV}` variable, one not in `allowed_env` when given,
    a bad URL). Everything the server sent is redacted against every secret in play before it is returned.
    """
    spec.check()
    secrets.url_credentials(spec.url)  # a key in the query is masked wherever the URL is shown
    headers = secrets.expand_headers(spec.headers, env, allowed_env)
    return _scrubbed(_run(spec, headers, hostname, client, progress))


PRECISE_METRICS = ("ttft", "e2e", "decode_rate")  # the headline metrics a recorded probe is repeated for


def probe_precise(
    spec: ProbeSpec, goal: float, *, budget: float, budget_s: float | None = None, **kwargs: Any
) -> tuple[ProbeResult, int]:
    """`probe`, repeated (without warm-up: the server is warm) while the widest 95% interval of the headline
    metrics is wider than `goal` and the budget allows (`measure/precision.py`); the runs' requests pooled.
    A load run (`--concurrency`, `--rate`) is not repeated: its totals are one run's."""
    from dataclasses import replace

    from factreg.measure import precision

    if spec.load.active:
        return probe(spec, **kwargs), 1
    again = replace(spec, warmup=0)
    runs = iter([spec])

    def once() -> ProbeResult:
        return probe(next(runs, again), **kwargs)

    def widest(result: ProbeResult) -> float | None:
        if result.verdict != OK:
            return None
        widths = [w for k in PRECISE_METRICS if (w := precision.half_width(result.samples.get(k) or [])) is not None]
        return max(widths) if widths else None

    def pooled(a: ProbeResult, b: ProbeResult) -> ProbeResult | None:
        if a.verdict != OK or b.verdict != OK or a.observed != b.observed:
            return None  # a failure or another server: the first run stands alone
        for k, xs in b.samples.items():
            both = [*a.samples.get(k, []), *xs]
            if len(both) > stats.MAX_SAMPLES:  # pooled gaps: thinned to order statistics, as one run's are
                whole = _stands_for(a, k) + _stands_for(b, k)
                a.info["samples_thinned"] = f"{k}: {stats.MAX_SAMPLES} of {whole}"
                both = stats.thin(both, stats.MAX_SAMPLES)
            a.samples[k] = both
        a.requests.extend(r for r in b.requests if r.kind == "measured")
        a.warnings.extend(w for w in b.warnings if w not in a.warnings)
        return a

    return precision.until_precise(once, widest, pooled, goal, budget=budget, budget_s=budget_s)


def _stands_for(result: ProbeResult, metric: str) -> int:
    """How many samples of `metric` a result's (perhaps thinned) samples stand for (`samples_thinned`)."""
    for part in str(result.info.get("samples_thinned") or "").split(", "):
        name, _, rest = part.partition(": ")
        if name == metric and " of " in rest and rest.rsplit(" of ", 1)[1].isdigit():
            return int(rest.rsplit(" of ", 1)[1])
    return len(result.samples.get(metric) or [])


def _scrubbed(result: ProbeResult) -> ProbeResult:
    """The result with every value that came from the network redacted (a server may echo the credential as its
    model name, build, model ids or model path): conditions, warnings, messages and each request's fields."""
    result.observed = {k: secrets.redact(v) for k, v in result.observed.items()}
    result.info = {k: secrets.redact(v) for k, v in result.info.items()}
    result.warnings = [secrets.redact(w) for w in result.warnings]
    result.message = None if result.message is None else secrets.redact(result.message)
    result.diff = secrets.redact_data(result.diff)
    for trace in result.requests:
        for name in ("model", "system_fingerprint"):
            value = getattr(trace, name, None)
            if isinstance(value, str):
                setattr(trace, name, secrets.redact(value))
    return result


def _run(
    spec: ProbeSpec,
    headers: dict[str, str],
    hostname: str,
    client: httpx.Client | None,
    progress: Callable[[str], None] | None,
) -> ProbeResult:
    say = progress or (lambda _m: None)
    own = client is None
    http = client or make_client(spec.timeout, keepalive=False)
    result = ProbeResult(verdict=OK)
    result.observed["endpoint"] = spec.url
    result.observed["body_sha256"] = cond.body_sha256(spec.body)
    if is_local(spec.url):
        result.observed["machine"] = hostname
    result.info.update(
        {
            "n_warmup": str(spec.warmup),
            "user_agent": USER_AGENT,
            "no_cache": cond.as_text(spec.no_cache),
            "timeout_s": f"{spec.timeout:g}",
        }
    )
    expect = expected(spec.expect)
    try:
        seen = check_identity(
            http, spec.url, spec.body, headers, timeout=spec.timeout, no_cache=spec.no_cache, max_bytes=spec.max_bytes
        )
        result.requests.append(seen.trace)
        result.observed.update(seen.observed)
        result.info.update(seen.info)
        if spec.model_file:
            _model_file(spec.model_file, result)
        result.diff, line = changed(expect, result.observed, EARLY_KEYS)
        if result.diff:
            result.verdict = Verdict.CONDITIONS_CHANGED
            result.message = f"conditions changed before timing: {line}"
            return result
        uptime, source = settle(spec.url, spec.server_started_at, spec.min_uptime if spec.wait_for_uptime else None, say)
        if source is not None:
            result.info["uptime_source"] = source
        if spec.load.active:
            _under_load(spec, headers, result, say)
        # Warm-up requests first (discarded later by their phase), then the measured ones, spaced if asked.
        steps = [] if spec.load.active else [("warmup", spec.warmup, "warm-up"), ("measured", spec.n, "request")]
        if steps:
            _one_at_a_time(spec, headers, http, steps, result, say)
    except ProbeFailure as exc:
        result.verdict, result.message = exc.verdict, exc.message
        result.samples = {}
        return result
    finally:
        if own:
            http.close()
    _derive(spec, result, uptime)
    if result.failed:
        return result
    result.diff, line = changed(expect, result.observed)
    if result.diff:
        result.verdict = Verdict.CONDITIONS_CHANGED
        result.message = f"conditions changed: {line}"
    return result


def _model_file(path: str, result: ProbeResult) -> None:
    """The served file's SHA-256 as an identity condition (cached as llama-bench's is), and a warning when the
    server's own /props names another file (compared as text: a reply never makes factreg read a path)."""
    from factreg.measure.llamabench_args import model_sha256

    size, sha = model_sha256(path)
    result.observed["model_sha256"] = sha
    result.info["model_file"] = str(Path(path).resolve())
    result.info["model_file_size"] = str(size)
    served = result.info.get("model_path")
    if served and os.path.normpath(served) not in (os.path.normpath(path), result.info["model_file"]):
        result.warnings.append(f"the server's /props names model {served}, not --model-file {path}")


def _one_at_a_time(
    spec: ProbeSpec,
    headers: dict[str, str],
    http: httpx.Client,
    steps: list[tuple[str, int, str]],
    result: ProbeResult,
    say: Callable[[str], None],
) -> None:
    """Warm-up then measured requests, one after another, each the one streamed request (`stream.stream_request`)
    on a connection of its own (`http` keeps none alive)."""
    for phase, count, label in steps:
        for i in range(count):
            if phase == "measured" and i and spec.spacing:
                time.sleep(spec.spacing)
            say(f"{label} {i + 1}/{count}")
            body = request_body(spec.body, spec.no_cache)
            result.requests.append(stream_request(http, spec.url, headers, body, spec.timeout, phase, spec.max_bytes))


def _under_load(
    spec: ProbeSpec, headers: dict[str, str], result: ProbeResult, say: Callable[[str], None]
) -> None:
    """Warm-up and measured requests under `spec.load` from one async client (`measure/load.py`). A failed
    request fails the probe, as in a sequential run: the others would be a biased selection (the ones that
    worked); the counts say how many failed."""
    import asyncio

    from factreg.measure import load as loading
    from factreg.measure import wire

    run = asyncio.run(
        loading.run(
            spec.load,
            spec.url,
            headers,
            lambda: request_body(spec.body, spec.no_cache),
            n=spec.n,
            warmup=spec.warmup,
            timeout=spec.timeout,
            max_bytes=spec.max_bytes,
            progress=say,
        )
    )
    result.requests.extend(sorted(run.traces, key=lambda r: r.started))
    result.observed.update(spec.load.describe())
    measured = [r for r in run.traces if r.kind == "measured"]
    queued = sorted(r.queued for r in measured if r.queued is not None)
    result.info.update(
        {
            "connection_reuse": "on",
            "client": "factreg.wire" if wire.handles(spec.url) else "httpx.AsyncClient",
            "requests_sent": str(run.sent),
            "requests_failed": str(len(run.failures)),
            "wall_s": f"{run.wall:.3f}",
            "throughput_rps": f"{len(run.traces) / run.wall:.3f}" if run.wall > 0 else "",
        }
    )
    if queued:
        result.info["queued_p50_s"] = f"{stats.quantile(queued, 0.5):.6f}"
        result.info["queued_p99_s"] = f"{stats.quantile(queued, 0.99):.6f}"
        result.info["queued_max_s"] = f"{queued[-1]:.6f}"
    if run.measurement_errors:
        result.info["measurement_errors"] = str(len(run.measurement_errors))
    if run.failures:
        first = run.failures[0]
        raise ProbeFailure(
            first.verdict, f"{len(run.failures)} of {run.sent} requests under load failed; first: {first.message}"
        )
    if run.measurement_errors:
        # Impossible times are factreg's fault, never the server's, and never samples: the run measured nothing.
        raise ProbeFailure(
            Verdict.ERROR,
            f"internal measurement error: {len(run.measurement_errors)} of {run.sent} requests under load had "
            f"impossible times (none recorded); first: {run.measurement_errors[0].problem}",
        )
    if not measured:
        raise ProbeFailure(Verdict.ERROR, "no measured request finished under load (--duration too short?)")


def _derive(spec: ProbeSpec, result: ProbeResult, uptime: float | None) -> None:
    measured = [r for r in result.requests if r.kind == "measured"]
    samples: dict[str, list[float]] = {}
    for r in measured:
        for name, value in r.metrics().items():
            samples.setdefault(name, []).append(value)
        for name, gaps in r.gaps().items():
            samples.setdefault(name, []).extend(gaps)
    # A long load run pools millions of gaps between chunks (itl): a version keeps at most stats.MAX_SAMPLES,
    # the order statistics at evenly spaced ranks, and says how many it stands for.
    many = {k: len(samples[k]) for k in METRICS if len(samples.get(k) or ()) > stats.MAX_SAMPLES}
    result.samples = {k: stats.thin(samples[k], stats.MAX_SAMPLES) for k in METRICS if samples.get(k)}
    if many:
        result.info["samples_thinned"] = ", ".join(f"{k}: {stats.MAX_SAMPLES} of {n}" for k, n in many.items())
    timed = [r for r in result.requests if r.kind != "identity"]
    thinking = any(r.thinking for r in timed)
    result.observed["thinking"] = "on" if thinking else "off"
    cold = uptime is not None and uptime < spec.min_uptime
    result.observed["warm"] = "false" if cold or spec.warmup == 0 else "true"
    fps = {r.system_fingerprint for r in result.requests if r.system_fingerprint}
    models = {r.model for r in result.requests if r.model}
    if len(fps) > 1 or len(models) > 1:
        result.warnings.append(f"the reply changed during the probe: models {sorted(models)}, builds {sorted(fps)}")
    if uptime is not None:
        result.info["uptime_s"] = f"{uptime:.0f}"
    if cold:
        result.flags.append("cold")
    if spec.warmup == 0:
        result.flags.append("no_warmup")
    if thinking:
        result.flags.append("thinking_on")
    cache = [int(r.timings.get("cache_n") or 0) for r in measured if r.timings]
    if any(c > 0 for c in cache):
        result.flags.append("cache_hit")
        result.info["cache_n"] = ",".join(str(c) for c in cache)
    garbage = sum(r.garbage for r in result.requests)
    if garbage:
        result.flags.append("garbage_lines")
        result.warnings.append(f"{garbage} lines of the stream were not SSE data and were skipped")
    clocks = {r.arrival_clock for r in measured}
    if clocks:
        # What timed the chunks' arrival: the kernel's packet stamps, or the user-space clock (measure/arrival.py)
        result.info["arrival_clock"] = ",".join(sorted(clocks))
    counts = [r.token_counts() for r in measured]
    if counts:
        result.info["answer_tokens"] = ",".join(str(a) for a, _, _ in counts)
        result.info["reasoning_tokens"] = ",".join(str(b) for _, b, _ in counts)
        result.info["tokens_source"] = ",".join(sorted({s for _, _, s in counts}))
    no_done = sum(1 for r in result.requests if not r.done_seen)
    if no_done:
        result.warnings.append(f"{no_done} replies ended without data: [DONE] (accepted: each finished or answered)")
    silent = [r for r in measured if r.first_answer is None]
    if silent:
        # A reply without an answer token has no ttft or e2e: the other replies' values would be a biased
        # selection (the quick ones), so the probe measured nothing it can stand behind.
        finish = sorted({r.finish_reason or "none" for r in silent})
        hint = "; raise max_tokens: the reasoning used them up" if "length" in finish else ""
        result.verdict = Verdict.NO_ANSWER
        result.message = (
            f"{len(silent)} of {len(measured)} measured replies held no answer token "
            f"({sum(r.n_reasoning for r in silent)} reasoning chunks, finish_reason {', '.join(finish)}){hint}"
        )
        result.samples = {}


# ---------------------------------------------------------------- recording and verifying


def parse_percentiles(texts: list[str]) -> list[tuple[str | None, float]]:
    """`--percentile` values → (metric or None for every recorded metric, q): `90`, `p99`, `99.9`, `ttft_p90`."""
    from factreg.registry.metrics import split_percentile

    out: list[tuple[str | None, float]] = []
    for text in texts:
        for part in (p.strip() for p in str(text).split(",")):
            if not part:
                continue
            split = split_percentile(part)
            if split is not None:
                if split[0] not in RECORDED:
                    raise UsageError(f"--percentile {part}: the probe does not record {split[0]}")
                out.append(split)
                continue
            digits = part[1:] if part[:1] in ("p", "P") else part
            try:
                pct = float(digits)
            except ValueError:
                raise UsageError(
                    f"--percentile {part!r}: give a percentile such as 90, p99 or 99.9, or a metric's, ttft_p90"
                ) from None
            if not (math.isfinite(pct) and 0.0 < pct < 100.0) or len(digits) > 8:
                raise UsageError(f"--percentile {part!r} must be above 0 and below 100 (90 for p90)")
            out.append((None, round(pct / 100.0, 6)))
    return out


def new_facts(
    result: ProbeResult,
    prefix: str,
    method: Mapping[str, Any],
    percentiles: list[tuple[str | None, float]] | None = None,
) -> list[NewFact]:
    """The facts `--record PREFIX` writes: one per recorded metric with samples (never for a failed probe), and
    one per asked percentile, `PREFIX/ttft_p90`, whose value is the percentile and whose interval is its 95%
    order-statistic interval (re-verified by the quantile test)."""
    from factreg.registry.facts import NewFact
    from factreg.registry.ids import check_id
    from factreg.registry.metrics import percentile_name

    if result.verdict != OK:
        raise UsageError(f"nothing recorded: the probe's verdict is {result.verdict}")
    prefix = check_id(prefix.rstrip("/"))
    identity = {k: secrets.redact(v) for k, v in result.observed.items()}
    info = {k: secrets.redact(v) for k, v in result.info.items()}
    raw = json.dumps(secrets.redact_data([r.as_json() for r in result.requests]), ensure_ascii=False)
    flags = [f for f in result.flags if f in ("cache_hit", "garbage_lines", "no_warmup")]
    names = [
        k for k in RECORDED
        if result.samples.get(k) and (k not in REASONING_METRICS or result.observed.get("thinking") == "on")
    ]
    out = []
    for name in names:
        xs = result.samples[name]
        out.append(
            NewFact(
                id=f"{prefix}/{name}", metric=name, samples=list(xs), identity=identity, info=info, subject=prefix,
                method={**method, "select": {"metric": name}}, raw=raw, extra_flags=flags,
            )
        )
    for which, q in percentiles or []:
        for name in [which] if which is not None else names:
            if name not in names:
                continue
            xs = result.samples[name]
            est = quantiles.estimate(xs, q)
            pname = percentile_name(name, q)
            few = quantiles.shortfall(q, len(xs))
            out.append(
                NewFact(
                    id=f"{prefix}/{pname}", metric=pname, value=est.value, samples=list(xs), identity=identity,
                    info=info, subject=prefix, method={**method, "select": {"metric": name, "q": q}}, raw=raw,
                    extra_flags=[*flags, *(["few_for_percentile"] if few else [])],
                    interval=(est.low, est.high), note=few,
                )
            )
    return out


def selected(fact: Mapping[str, Any]) -> tuple[str, float | None]:
    """The probe metric a fact holds and its percentile (None: the fact is the metric's median):
    `ttft_p90` → ("ttft", 0.9), from the stored `select` or else the metric's name."""
    from factreg.registry.metrics import split_percentile

    select = (fact.get("method") or {}).get("select") or {}
    name = str(fact.get("metric") or "")
    split = split_percentile(name)
    metric = str(select.get("metric") or (split[0] if split else name))
    q = split[1] if split else None
    return metric, q


def remeasure(method: Method, facts: list[FactData], settings: Settings | None) -> dict[str, Measurement]:
    """Verifier for method kind `probe`: one probe run serves every fact of the group."""
    from factreg.measure.measurement import Measurement

    hostname = getattr(settings, "hostname", None) or socket.gethostname()
    try:
        spec = spec_from_method(method)
        allowed: frozenset[str] = frozenset()
        if settings is not None and hasattr(settings, "get"):
            spec.max_bytes = int(float(settings.get("probe.max_response_mb", 32)) * 1024 * 1024)
            allowed = settings.allowed_env()
        # Stop before timing when the served model or build is not the facts' (the wiring gap).
        first = facts[0]["conditions"]["identity"] if facts else {}
        spec.expect = {k: v for k, v in first.items() if k in ("model", "build")}
        # A stored method expands only the `${VAR}`s the user allows: never AWS_SECRET_ACCESS_KEY to any host.
        result = probe(spec, hostname=hostname, allowed_env=allowed)
    except UsageError as exc:
        return {f["id"]: Measurement(failure=Verdict.ERROR, message=secrets.redact(exc.message)) for f in facts}
    out: dict[str, Measurement] = {}
    raw = json.dumps(result.as_json(), ensure_ascii=False)  # as_json() is redacted
    for fact in facts:
        if result.failed:
            out[fact["id"]] = Measurement(failure=result.verdict, message=result.message, raw=raw)
            continue
        metric, q = selected(fact)
        xs = list(result.samples.get(metric, [])) if result.verdict == OK else []
        ident = fact.get("conditions", {}).get("identity", {})
        observed = {k: v for k, v in result.observed.items() if k in ident}
        s = stats.summarize(xs) if xs else None
        value = (quantiles.percentile(xs, q) if q is not None else s.median) if s else None
        out[fact["id"]] = Measurement(
            samples=xs,
            value=value,
            spread=s.stdev if s else None,
            n=s.n if s else None,
            observed=observed,
            message=result.message,
            raw=raw,
            flags=list(result.flags),
        )
    return out
