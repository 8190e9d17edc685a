"""Serving-grade checks of a load run: SLOs, goodput and capacity, and verifying a recorded capacity
(`stats/quantiles.py` holds the percentiles they rest on).

- **SLO** strings `METRIC[:STAT]OP LIMIT`: `ttft<0.5`, `ttft:p90<0.5`, `itl:p99<0.08`, `itl:max<0.08`,
  `decode_rate:p10>=20`. STAT is `pNN` (0 < NN ≤ 100) or `max` (= p100, also the default); LIMIT is a number in
  the metric's unit (seconds for latencies). An SLO holds for a set of observations when their percentile STAT
  (type 7) is within LIMIT. Per request (goodput) the set is the request's own observations — one value for
  ttft or e2e, so the percentile does not matter there; the request's gaps for itl. For a whole run
  (`run_check`) it is all the run's observations pooled, where `ttft:p90<0.5` means "p90 of ttft < 0.5 s".
- **Goodput**: the share of requests that meet every SLO (vLLM's per-request goodput), with its Wilson 95%
  interval. A failed request (None) or a missing/None value never meets an SLO — a request is good only when it
  shows it met every limit; a one-chunk reply has no gaps and meets ITL limits. (Unlike vLLM, which counts a
  one-token reply with TPOT 0, a TPOT limit is not met by a reply whose TPOT is undefined.)
- **Capacity**: the highest load level such that it and every lower measured level have a goodput share of at
  least `threshold` (default 0.95, on the point share; the Wilson interval is reported alongside). A level that
  passes above a failing one is noise, not capacity, and is not counted.
- **Verifying a capacity** (`verify_capacity`): a recorded capacity C claims that every level up to C keeps
  goodput ≥ threshold and (when a higher level was swept) that the next level above C does not. The re-run
  measures those levels (the "needed" ones) and decides, per level, on its Wilson 95% interval:
  `refuted` when a level ≤ C now misses **with its whole interval below the threshold** (the server no longer
  holds C), or when the level above C now holds with its whole interval at or above it (the capacity is higher
  than recorded; with no recorded capacity, the lowest level); `confirmed` when every level ≤ C meets the
  threshold on its point share (as `capacity` decides) and the level above C still misses on its point share
  (or none was swept); `inconclusive` otherwise — a level on the wrong side of the threshold whose interval
  still reaches across it. Refuting asks for the interval, confirming only for the point share: a claim is
  refuted only on clear evidence, while a capacity that re-measures as recorded is confirmed even at the small
  n a sweep can afford (a 95% Wilson interval wholly above 0.95 needs 73 good requests out of 73).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from factreg import fmt, stats
from factreg.errors import BadInput, UsageError
from factreg.registry import metrics
from factreg.stats.quantiles import (
    CONFIDENCE,
    Estimate,
    clean,
    estimate,
    interval_text,
    label,
    shortfall,
)
from factreg.stats.verdict import Outcome
from factreg.verdicts import Verdict

CAPACITY_THRESHOLD = 0.95

# --- SLOs, goodput and capacity ------------------------------------------------------------------------

# Per-request metrics an SLO may name: the latency vocabulary plus the serving metrics defined here.
PER_REQUEST = ("ttft", "ttft_any", "ttfb", "reasoning_time", "e2e", "decode_rate", "prefill_rate")
SLO_METRICS: dict[str, str] = {
    **{name: metrics.VOCABULARY[name].direction or "" for name in PER_REQUEST},
    "itl": metrics.LOWER,
    "tpot": metrics.LOWER,
}
LIST_METRICS = frozenset({"itl"})

_OPS = {
    "<": lambda v, lim: v < lim,
    "<=": lambda v, lim: v <= lim,
    ">": lambda v, lim: v > lim,
    ">=": lambda v, lim: v >= lim,
}
_SLO_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?::\s*([^<>=\s]+)\s*)?(<=|>=|<|>)\s*(\S+)\s*$")


@dataclass(frozen=True)
class Slo:
    """A service-level objective: `metric:pNN < limit` (q = 1.0 for `max` or no percentile)."""

    metric: str
    q: float
    op: str
    limit: float

    @property
    def text(self) -> str:
        stat = "" if self.q == 1.0 else f":{label(self.q)}"
        return f"{self.metric}{stat}{self.op}{self.limit:g}"

    def holds(self, observations: Sequence[float]) -> bool:
        """The SLO on a set of observations: their q-percentile is within the limit (no observation: holds)."""
        if not observations:
            return True
        return bool(_OPS[self.op](stats.quantile(sorted(observations), self.q), self.limit))


def parse_slo(text: str) -> Slo:
    """`ttft:p90<0.5` → Slo; a bad string raises UsageError with a one-line reason."""
    m = _SLO_RE.match(text)
    shape = "write METRIC[:pNN]<LIMIT, e.g. ttft:p90<0.5 or itl:p99<0.08"
    if not m:
        raise UsageError(f"bad SLO {text!r}: {shape}")
    metric, stat, op, limit_text = m.group(1).lower(), m.group(2), m.group(3), m.group(4)
    if metric not in SLO_METRICS:
        raise UsageError(f"bad SLO {text!r}: unknown metric {metric!r}; use one of {', '.join(sorted(SLO_METRICS))}")
    q = 1.0
    if stat is not None:
        sm = re.fullmatch(r"[pP](\d+(?:\.\d+)?)", stat)
        if stat.lower() == "max":
            q = 1.0
        elif sm is None:
            raise UsageError(f"bad SLO {text!r}: statistic {stat!r} must be pNN (p50, p90, p99.9) or max")
        else:
            pct = float(sm.group(1))
            if not 0.0 < pct <= 100.0:
                raise UsageError(f"bad SLO {text!r}: percentile {stat!r} must be above p0 and at most p100")
            q = pct / 100.0
    try:
        limit = float(limit_text)
    except ValueError:
        raise UsageError(
            f"bad SLO {text!r}: limit {limit_text!r} is not a number; write it in the metric's unit "
            "(seconds for latencies: 0.08, not 80ms)"
        ) from None
    if not math.isfinite(limit):
        raise UsageError(f"bad SLO {text!r}: limit must be a finite number")
    direction = SLO_METRICS[metric]
    if direction == metrics.LOWER and op in (">", ">="):
        raise UsageError(f"bad SLO {text!r}: lower {metric} is better, so its limit is an upper bound (< or <=)")
    if direction == metrics.HIGHER and op in ("<", "<="):
        raise UsageError(f"bad SLO {text!r}: higher {metric} is better, so its limit is a lower bound (> or >=)")
    return Slo(metric, q, op, limit)


def parse_slos(texts: Iterable[str]) -> list[Slo]:
    """Several SLOs, each string holding one or more separated by commas."""
    out = [parse_slo(part) for text in texts for part in text.split(",") if part.strip()]
    if not out:
        raise UsageError("no SLO given: write e.g. ttft:p90<0.5,itl:p99<0.08")
    return out


def _observations(request: Mapping[str, Any] | None, metric: str) -> list[float] | None:
    """A request's observations of a metric; None when unknown (failed request, missing or None value)."""
    if request is None:
        return None
    value = request.get(metric)
    if value is None:
        return None
    if metric in LIST_METRICS:
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise BadInput(f"{metric} of a request must be a list of gaps, not {type(value).__name__}")
        return clean(value, metric) if value else []
    return clean([value], metric)


def meets(request: Mapping[str, Any] | None, slos: Sequence[Slo]) -> bool:
    """Whether one request meets every SLO (a failed request, None, meets none)."""
    for slo in slos:
        obs = _observations(request, slo.metric)
        if obs is None or not slo.holds(obs):
            return False
    return True


def wilson(k: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Wilson score interval of a proportion k/n."""
    if n <= 0 or not 0 <= k <= n:
        raise UsageError(f"a proportion needs 0 ≤ k ≤ n and n > 0 (got {k}/{n})")
    z = stats.norm_ppf(1.0 - (1.0 - confidence) / 2.0)
    p = k / n
    z2n = z * z / n
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z / (1.0 + z2n) * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Goodput:
    """Share of requests that met every SLO, with its Wilson 95% interval and what broke the others."""

    good: int
    total: int
    low: float
    high: float
    missed: dict[str, int] = field(default_factory=dict)  # SLO text → requests that did not meet it

    @property
    def share(self) -> float:
        return self.good / self.total

    @property
    def message(self) -> str:
        interval = f"95% [{self.low * 100:.1f}–{self.high * 100:.1f}%]"
        text = f"{self.good}/{self.total} good ({self.share * 100:.1f}%, {interval})"
        broke = ", ".join(f"{k}: {v}" for k, v in self.missed.items() if v)
        return f"{text}; missed {broke}" if broke else text


def goodput(requests: Sequence[Mapping[str, Any] | None], slos: Sequence[Slo]) -> Goodput:
    """Per-request goodput: the share of requests (None = failed) meeting every SLO."""
    if not requests:
        raise BadInput("no requests")
    if not slos:
        raise UsageError("no SLO given: goodput needs at least one")
    for slo in slos:
        if all(r is None or r.get(slo.metric) is None for r in requests):
            raise BadInput(f"no request has a {slo.metric!r} value for SLO {slo.text}")
    missed = {slo.text: 0 for slo in slos}
    good = 0
    for r in requests:
        ok = True
        for slo in slos:
            obs = _observations(r, slo.metric)
            if obs is None or not slo.holds(obs):
                missed[slo.text] += 1
                ok = False
        good += ok
    low, high = wilson(good, len(requests))
    return Goodput(good, len(requests), low, high, missed)


@dataclass(frozen=True)
class Capacity:
    """The highest load level that keeps goodput at the threshold, and why."""

    level: float | None
    threshold: float
    message: str


def capacity(levels: Mapping[float, Goodput], threshold: float = CAPACITY_THRESHOLD) -> Capacity:
    """Highest load level such that it and every lower level have goodput share ≥ threshold."""
    if not levels:
        raise BadInput("no load levels")
    if not 0.0 < threshold <= 1.0:
        raise UsageError(f"goodput threshold {threshold:g} must be in (0, 1]")
    best: float | None = None
    first_fail: float | None = None
    ignored: list[float] = []
    for level in sorted(levels):
        passes = levels[level].share >= threshold
        if first_fail is None and passes:
            best = level
        elif first_fail is None:
            first_fail = level
        elif passes:
            ignored.append(level)
    need = f"goodput ≥ {threshold * 100:g}%"
    if best is None:
        first = min(levels)
        text = f"no capacity: the lowest level {first:g} has {levels[first].message}, below {need}"
    else:
        text = f"capacity {best:g}: {levels[best].message} meets {need}"
        if first_fail is not None:
            text += f"; level {first_fail:g} does not ({levels[first_fail].share * 100:.1f}%)"
    if ignored:
        text += f"; not counted above a failing level: {', '.join(f'{x:g}' for x in ignored)}"
    return Capacity(best, threshold, text)


@dataclass(frozen=True)
class SloCheck:
    """An SLO on a whole run: the pooled percentile with its interval, and whether it is met."""

    slo: Slo
    estimate: Estimate
    met: bool
    unknown: int  # requests with no value (failed, or not measured), left out of the pool

    @property
    def message(self) -> str:
        e = self.estimate
        verdict = "met" if self.met else "not met"
        text = f"{self.slo.text}: {e.label} {fmt.num(e.value)} (95% {interval_text(e, '')}, n={e.n}) {verdict}"
        few = shortfall(e.q, e.n) if e.q < 1.0 else None
        if few:
            text += f"; {few}"
        if self.unknown:
            text += f"; {self.unknown} request(s) without a value left out"
        return text


def run_check(slo: Slo, requests: Sequence[Mapping[str, Any] | None]) -> SloCheck:
    """The SLO on all the run's observations pooled: `ttft:p90<0.5` → is the run's p90 of ttft < 0.5?"""
    pool: list[float] = []
    unknown = 0
    for r in requests:
        obs = _observations(r, slo.metric)
        if obs is None:
            unknown += 1
        else:
            pool.extend(obs)
    if not pool:
        raise BadInput(f"no {slo.metric!r} values to check {slo.text}")
    est = estimate(pool, slo.q)
    return SloCheck(slo, est, slo.holds(pool), unknown)


def verify_capacity(recorded: float | None, levels: Mapping[float, Goodput],
                    threshold: float = CAPACITY_THRESHOLD) -> Outcome:
    """Judge a recorded capacity (None or 0: no level held) by the goodput re-measured at the levels it needs:
    every level up to it and the next one above (see the module's docstring for the rule)."""
    if not levels:
        raise BadInput("no load levels were re-measured")
    if not 0.0 < threshold <= 1.0:
        raise UsageError(f"goodput threshold {threshold:g} must be in (0, 1]")
    cap = recorded or 0.0
    need = f"goodput ≥ {threshold * 100:g}%"
    below = sorted(lv for lv in levels if lv <= cap)
    above = min((lv for lv in levels if lv > cap), default=None)
    claim = f"capacity {cap:g}" if cap else "no capacity"

    def shown(lv: float) -> str:
        return f"level {lv:g}: {levels[lv].message}"

    lost = [lv for lv in below if levels[lv].high < threshold]
    if lost:
        return Outcome(Verdict.REFUTED, None, None, None,
                             f"{claim} no longer holds: {shown(lost[0])}, the whole interval below {need}")
    if above is not None and levels[above].low >= threshold:
        return Outcome(Verdict.REFUTED, None, None, None,
                             f"{claim} is now exceeded: {shown(above)}, the whole interval at or above {need}")
    unsure = [lv for lv in below if levels[lv].share < threshold]
    if above is not None and levels[above].share >= threshold:
        unsure.append(above)
    if not unsure:
        held = f"levels up to {cap:g} meet {need} ({shown(below[-1])})" if below else "no level was required"
        top = f"; {shown(above)}, still below" if above is not None else ""
        return Outcome(Verdict.CONFIRMED, None, None, None, f"{claim} holds: {held}{top}")
    lv = unsure[0]
    side = "misses" if lv <= cap else "meets"
    return Outcome(Verdict.INCONCLUSIVE, None, None, None,
                         f"{claim}: {shown(lv)} {side} {need} on its share, but its 95% interval reaches across "
                         "it; re-run with a larger --n")
