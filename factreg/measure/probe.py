"""The endpoint probe: time OpenAI-compatible streaming replies the way a user hears them.

Protocol (DESIGN.md, "Measurement protocol"): an identity check first (`/v1/models`, `/props`, one 1-token
authenticated request), then settle (warm-up requests discarded, server uptime), then `n` measured requests
with the same body. Each request keeps raw event times on a monotonic clock; every metric is derived from
them. A request that fails gives a verdict (`auth_failed`, `unreachable`, `error`), never a value; measured replies
without an answer token give `no_answer`. A base URL (`http://host:8080/v1`) is probed at its `/chat/completions`.

This module holds the spec, the run loop, the result, and recording and re-verifying facts; one request is
`stream`, the identity check `identity`, the server's uptime `uptime`.
"""

from __future__ import annotations

import json
import math
import os
import re
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from factreg import secrets, stats
from factreg.config import DEFAULT_MIN_UPTIME_S
from factreg.errors import UsageError
from factreg.measure.http import USER_AGENT, make_client
from factreg.measure.identity import check_identity
from factreg.measure.load import Load
from factreg.measure.stream import DEFAULT_MAX_BYTES, ProbeFailure, RequestTrace, request_body, rounded, stream_request
from factreg.measure.uptime import is_local, server_uptime
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
# Bounds of a probe, from the command line or a stored method: requests, and seconds (timeout, spacing, uptime).
MAX_N = 10_000
MAX_WARMUP = 1_000
MAX_SECONDS = 3600.0
MAX_UPTIME = 365 * 86400.0
MAX_CONCURRENCY = 1024
MAX_RATE = 10_000.0

# Observable before any timing: a difference here stops the probe early.
EARLY_KEYS = ("endpoint", "model", "build", "body_sha256", "machine")


def chat_url(url: str) -> str:
    """The chat completions URL for `url`: a base URL (`http://host:8080`, `…/`, `…/v1`) gets
    `/chat/completions` (under `/v1`) appended, as OpenAI clients do; any other path is kept as given.
    A URL that does not parse (`http://[::1`) is returned as given, for `ProbeSpec.check` to refuse."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return url
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return url
    path = parts.path.rstrip("/")
    if path == "":
        path = "/v1/chat/completions"
    elif path.endswith("/v1"):
        path += "/chat/completions"
    else:
        return url
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


@dataclass
class ProbeSpec:
    """What to probe and how; `headers` are templates (`${ENV}` names), expanded only when sending."""

    url: str
    body: dict[str, Any]
    n: int = 5
    warmup: int = 2
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float = 60.0
    min_uptime: float = DEFAULT_MIN_UPTIME_S
    wait_for_uptime: bool = False
    server_started_at: datetime | None = None
    spacing: float = 0.0
    no_cache: bool = False
    expect: dict[str, str] = field(default_factory=dict)
    max_bytes: int = DEFAULT_MAX_BYTES
    # Load (`measure/load.py`): N streams in flight, or arrivals at a rate; none = one request after another.
    concurrency: int = 0
    rate: float = 0.0
    burstiness: float = 1.0
    duration: float = 0.0
    seed: int = 0
    # The model file a local server serves (`--model-file`): its SHA-256 is an identity condition of the facts.
    model_file: str | None = None

    def __post_init__(self) -> None:
        self.url = chat_url(self.url)

    def check(self) -> None:
        """Refuse arguments that cannot work (exit 2)."""
        try:
            parts = urlsplit(self.url)
            parts.port  # noqa: B018 - a port out of range (99999) or not a number fails here
        except ValueError as exc:
            raise UsageError(f"URL must be http(s)://host[:port]/…, got {self.url!r} ({exc})") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"URL must be http(s)://host[:port]/…, got {self.url!r}")
        if parts.username or parts.password:
            raise UsageError("put credentials in --header or --api-key-env, not in the URL")
        if not isinstance(self.body, dict):
            raise UsageError("--body must hold a JSON object (a chat completions request)")
        # Bounded here, where both the command line and a stored method (`verify`) arrive: a stored
        # `spacing: 100000` would otherwise sleep for days.
        if not 1 <= self.n <= MAX_N:
            raise UsageError(f"--n must be from 1 to {MAX_N}")
        if not 0 <= self.warmup <= MAX_WARMUP:
            raise UsageError(f"--warmup must be from 0 to {MAX_WARMUP}")
        if not (math.isfinite(self.timeout) and 0 < self.timeout <= MAX_SECONDS):
            raise UsageError(f"--timeout must be a number of seconds above 0 and at most {MAX_SECONDS:g}")
        if not (math.isfinite(self.spacing) and 0 <= self.spacing <= MAX_SECONDS):
            raise UsageError(f"--spacing must be a number of seconds from 0 to {MAX_SECONDS:g}")
        if not (math.isfinite(self.min_uptime) and 0 <= self.min_uptime <= MAX_UPTIME):
            raise UsageError(f"--min-uptime must be a number of seconds from 0 to {MAX_UPTIME:g}")
        if not 0 <= self.concurrency <= MAX_CONCURRENCY:
            raise UsageError(f"--concurrency must be from 1 to {MAX_CONCURRENCY}")
        if not (math.isfinite(self.rate) and 0 <= self.rate <= MAX_RATE):
            raise UsageError(f"--rate must be requests per second above 0 and at most {MAX_RATE:g}")
        if not (math.isfinite(self.burstiness) and 0.01 <= self.burstiness <= 100):
            raise UsageError("--burstiness must be from 0.01 to 100 (1: Poisson arrivals)")
        if not (math.isfinite(self.duration) and 0 <= self.duration <= MAX_SECONDS):
            raise UsageError(f"--duration must be a number of seconds from 0 to {MAX_SECONDS:g}")
        if (self.duration or self.burstiness != 1.0) and not self.load.active:
            raise UsageError("--duration and --burstiness go with --concurrency or --rate")
        if self.spacing and self.load.active:
            raise UsageError("--spacing is for one request after another; under load give --rate instead")
        if self.model_file is not None and not Path(self.model_file).is_file():
            raise UsageError(f"--model-file {self.model_file} is not a file")

    @property
    def load(self) -> Load:
        return Load(self.concurrency, self.rate, self.burstiness, self.duration, self.seed)

    def method(self) -> dict[str, Any]:
        """The recipe stored with recorded facts: data, header templates only."""
        return {
            "kind": "probe",
            "url": self.url,
            "body": self.body,
            "n": self.n,
            "warmup": self.warmup,
            "headers": dict(self.headers),
            "timeout": self.timeout,
            "no_cache": self.no_cache,
            "min_uptime": self.min_uptime,
            "spacing": self.spacing,
            **(
                {
                    "concurrency": self.concurrency,
                    "rate": self.rate,
                    "burstiness": self.burstiness,
                    "duration": self.duration,
                    "seed": self.seed,
                }
                if self.load.active
                else {}
            ),
            **({"model_file": self.model_file} if self.model_file else {}),
        }


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


def _norm_expect(expect: Mapping[str, str]) -> dict[str, str]:
    out = {}
    for k, v in expect.items():
        v = str(v)
        if k in ("thinking",):
            v = {"true": "on", "1": "on", "yes": "on", "false": "off", "0": "off", "no": "off"}.get(v.lower(), v)
        elif k == "warm":
            v = v.lower()
        out[k] = v
    return out


def _compare(
    expect: Mapping[str, str], observed: Mapping[str, str], keys: tuple[str, ...] | None = None
) -> dict[str, list[str | None]]:
    names = [k for k in expect if (keys is None or k in keys) and k in observed]
    return cond.diff(dict(expect), dict(observed), names)


def _diff_line(diff: Mapping[str, list[str | None]]) -> str:
    return "; ".join(f"{k}: expected {old!r}, observed {new!r}" for k, (old, new) in diff.items())


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
    expect = _norm_expect(spec.expect)
    try:
        seen = check_identity(
            http, spec.url, spec.body, headers, timeout=spec.timeout, no_cache=spec.no_cache, max_bytes=spec.max_bytes
        )
        result.requests.append(seen.trace)
        result.observed.update(seen.observed)
        result.info.update(seen.info)
        if spec.model_file:
            _model_file(spec.model_file, result)
        result.diff = _compare(expect, result.observed, EARLY_KEYS)
        if result.diff:
            result.verdict = Verdict.CONDITIONS_CHANGED
            result.message = f"conditions changed before timing: {_diff_line(result.diff)}"
            return result
        uptime = _settle_uptime(spec, result, say)
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
    result.diff = _compare(expect, result.observed)
    if result.diff:
        result.verdict = Verdict.CONDITIONS_CHANGED
        result.message = f"conditions changed: {_diff_line(result.diff)}"
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
    """Warm-up then measured requests, one after another, each on a new connection: `http://` through the lean
    client (`measure/wire.py`, a fraction of httpx's CPU per read), other URLs through `http`."""
    from contextlib import nullcontext

    from factreg.measure import load as loading
    from factreg.measure import wire

    lean = wire.handles(spec.url)
    with loading.OneAtATime(spec.timeout) if lean else nullcontext() as seq:
        for phase, count, label in steps:
            for i in range(count):
                if phase == "measured" and i and spec.spacing:
                    time.sleep(spec.spacing)
                say(f"{label} {i + 1}/{count}")
                body = request_body(spec.body, spec.no_cache)
                if seq is not None:
                    trace = seq.request(spec.url, headers, body, spec.timeout, phase, spec.max_bytes)
                else:
                    trace = stream_request(http, spec.url, headers, body, spec.timeout, phase, spec.max_bytes)
                result.requests.append(trace)


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


def _settle_uptime(spec: ProbeSpec, result: ProbeResult, say: Callable[[str], None]) -> float | None:
    uptime, source = server_uptime(spec.url, spec.server_started_at)
    if source is not None:
        result.info["uptime_source"] = source
    if spec.wait_for_uptime:
        if uptime is None:
            raise UsageError("--wait-for-uptime needs a known uptime: a local server, or --server-started-at")
        if uptime < spec.min_uptime:
            wait = spec.min_uptime - uptime
            say(f"server up {uptime:.0f} s; waiting {wait:.0f} s until it has been up {spec.min_uptime:g} s")
            time.sleep(wait)
            uptime += wait
    return uptime


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


# Bounds on a stored probe method: a method from the registry is data, and each field is checked before anything
# is sent (a tampered or imported method cannot make verify send 10⁹ requests, wait a day, or post 1 GB).
STORED_BOUNDS: dict[str, tuple[float, float]] = {
    "n": (1, MAX_N),  # a load run or a p99 fact needs 1,000+; --duration stores its cap, MAX_N
    "warmup": (0, 100),
    "timeout": (0.001, 3600),
    "spacing": (0, 3600),
    "min_uptime": (0, 7 * 86400),
    "concurrency": (0, MAX_CONCURRENCY),
    "rate": (0, MAX_RATE),
    "burstiness": (0.01, 100),
    "duration": (0, 3600),
    "seed": (0, 2**31),
}
MAX_STORED_BODY = 8 * 1024 * 1024  # as `probe --body` reads
MAX_STORED_HEADERS = 64
_HEADER_NAME = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]{1,256}")


def _bounded(method: Mapping[str, Any], key: str, default: float, whole: bool) -> float:
    value = method.get(key, default)
    low, high = STORED_BOUNDS[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (whole and not isinstance(value, int)):
        raise UsageError(f"the stored probe method's {key} must be a {'whole ' if whole else ''}number, got {value!r}")
    if not (math.isfinite(value) and low <= value <= high):
        raise UsageError(f"the stored probe method's {key} {value!r} is outside {low:g}…{high:g}; refused")
    return value


def spec_from_method(method: Mapping[str, Any]) -> ProbeSpec:
    """A stored probe method → ProbeSpec: data, every field checked and bounded (only known keys are read)."""
    url = method.get("url")
    if not isinstance(url, str) or len(url) > 8192:
        raise UsageError("the stored probe method has no usable url")
    body = method.get("body")
    if not isinstance(body, dict):
        raise UsageError("the stored probe method's body must be a JSON object")
    if len(json.dumps(body, ensure_ascii=False, default=str)) > MAX_STORED_BODY:
        raise UsageError(f"the stored probe method's body is larger than {MAX_STORED_BODY // 2**20} MiB; refused")
    headers = method.get("headers") or {}
    if not isinstance(headers, dict) or len(headers) > MAX_STORED_HEADERS:
        raise UsageError(f"the stored probe method's headers must be an object of at most {MAX_STORED_HEADERS}")
    for name, value in headers.items():
        if not _HEADER_NAME.fullmatch(str(name)) or not isinstance(value, str) or len(value) > 8192 or any(
            ch in value for ch in "\r\n\0"
        ):
            raise UsageError(f"the stored probe method's header {str(name)[:40]!r} is not a valid header; refused")
    no_cache = method.get("no_cache", False)
    if not isinstance(no_cache, bool):
        raise UsageError("the stored probe method's no_cache must be true or false")
    model_file = method.get("model_file")
    if model_file is not None and (not isinstance(model_file, str) or not 0 < len(model_file) <= 4096
                                   or "\0" in model_file):
        raise UsageError("the stored probe method's model_file must be a file path")
    spec = ProbeSpec(
        url=url,
        body=body,
        n=int(_bounded(method, "n", 5, True)),
        warmup=int(_bounded(method, "warmup", 2, True)),
        headers=dict(headers),
        timeout=float(_bounded(method, "timeout", 60, False)),
        no_cache=no_cache,
        min_uptime=float(_bounded(method, "min_uptime", DEFAULT_MIN_UPTIME_S, False)),
        spacing=float(_bounded(method, "spacing", 0, False)),
        concurrency=int(_bounded(method, "concurrency", 0, True)),
        rate=float(_bounded(method, "rate", 0, False)),
        burstiness=float(_bounded(method, "burstiness", 1, False)),
        duration=float(_bounded(method, "duration", 0, False)),
        seed=int(_bounded(method, "seed", 0, True)),
        model_file=model_file,
    )
    spec.check()  # http(s)://host, no credentials in the URL
    return spec


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
