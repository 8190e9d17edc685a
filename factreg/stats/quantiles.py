"""Quantile statistics for serving-grade latency facts: percentiles with intervals, exact binomial tails, the
test of a recorded percentile.

Pure Python like the summaries of `factreg.stats` (no numpy or scipy at run time); the tests check it against numpy and scipy.
One definition of each rule lives here:

- **Percentile**: linear interpolation between order statistics, Hyndman & Fan type 7 — NumPy's default
  (`method="linear"`), `statistics.quantiles(method="inclusive")`, the same `stats.quantile` that gives the
  median and IQR. `q` is always a fraction: 0.9 for p90.
- **Interval of a percentile**: the distribution-free order-statistic interval [x(l), x(u)]. The number of
  samples at or below the true q-quantile is Binomial(n, q), so with l the smallest rank whose binomial CDF
  reaches 2.5% and u − 1 the smallest whose CDF reaches 97.5%, the interval covers the true quantile with
  probability ≥ 95% for any continuous distribution. It is exact, needs no resampling (so it is
  deterministic) and costs one sort — the same ranks as `scipy.stats.quantile_test(...).confidence_interval()`.
  It is preferred to the percentile bootstrap, which is random, ~1,000× slower in pure Python and covers tail
  percentiles poorly at small n. When l < 1 or u > n that side is unbounded (None): too few samples.
- **Enough samples** (`enough_for`): at least `TAIL_SAMPLES` = 10 samples expected beyond the quantile on its
  thin side, n·min(q, 1 − q) ≥ 10: p50 ≥ 20, p90 ≥ 100, p95 ≥ 200, p99 ≥ 1,000, p99.9 ≥ 10,000. With fewer, the
  upper end of the interval is one of the few largest samples, so one outlier decides it (the bare minimum for a
  bounded 95% interval, q^n ≤ 2.5%, is n ≥ 36 for p90 and 368 for p99). The rule matches the usual "1,000
  requests for p99"; for p90 it is looser than the 500 requests sometimes advised for reports, which the
  interval then shows honestly (between the 84th and 96th of 100 samples).
- **Test of a recorded percentile** (`verify_quantile`): a fact "the q-quantile is X" against new samples is the
  quantile test of Conover (1999, §3.2), as `scipy.stats.quantile_test`: under H0 the number of new samples
  above X is Binomial(n, 1 − q). One-sided p-values come from exact binomial tails in log space (stable up to
  n = 100,000 and beyond); the two-sided p-value is twice the smaller one-sided one. Which p-value decides is
  set by the claim: `equal` (the recorded number is the quantile; two-sided, the default, as `verdicts`
  refutes a wrong number in either direction), `at_most` (an SLO-style bound "p90 ≤ X": one-sided, refuted
  only when significantly more than 1 − q of the new samples exceed X) or `at_least` (its mirror, for rates).
  Refuted = significant (p < alpha) **and** the new percentile outside the practical tolerance of X, as in
  `verdict.compare`. Confirmed = the new 95% interval lies inside the tolerance (an equivalence check, so a
  small n never confirms). Otherwise inconclusive, with a rough n that would decide.

SLOs, goodput and capacity are `measure/slo.py`; inter-token latency and TPOT `measure/latency.py`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from factreg import fmt, stats
from factreg.errors import BadInput, UsageError
from factreg.stats import verdict
from factreg.verdicts import DEFAULT_TOLERANCE, Verdict

TAIL_SAMPLES = 10
CONFIDENCE = 0.95
SUMMARY_QS = (0.5, 0.9, 0.95, 0.99)

Claim = Literal["equal", "at_most", "at_least"]
CLAIMS: tuple[str, ...] = get_args(Claim)


# --- percentiles -------------------------------------------------------------------------------------------


def label(q: float) -> str:
    """`p90` for 0.9, `p99.9` for 0.999, `max` for 1."""
    if q == 1.0:
        return "max"
    return f"p{round(q * 100, 6):g}"


def _check_q(q: float, allow_ends: bool = True) -> float:
    q = float(q)
    low_ok = q >= 0.0 if allow_ends else q > 0.0
    high_ok = q <= 1.0 if allow_ends else q < 1.0
    if not (low_ok and high_ok) or math.isnan(q):
        hint = " (q is a fraction: 0.9 for p90)" if 1.0 < q <= 100.0 else ""
        ends = "[0, 1]" if allow_ends else "(0, 1)"
        raise UsageError(f"quantile q={q:g} must be in {ends}{hint}")
    return q


def clean(samples: Iterable[float], what: str = "samples") -> list[float]:
    xs: list[float] = []
    for x in samples:
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise BadInput(f"{what} must be numbers, not {type(x).__name__}")
        if not math.isfinite(x):
            raise BadInput(f"{what} must be finite numbers, not {x}")
        xs.append(float(x))
    if not xs:
        raise BadInput(f"no {what}")
    return xs


def percentile(samples: Iterable[float], q: float) -> float:
    """The q-quantile (q a fraction) by linear interpolation, type 7 — NumPy's default."""
    q = _check_q(q)
    return stats.quantile(sorted(clean(samples)), q)


# --- exact binomial tails ------------------------------------------------------------------------------------


def _log_pmf(k: int, n: int, p: float) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * math.log(p) + (n - k) * math.log1p(-p)


def _tail(k: int, n: int, p: float, step: int) -> float:
    """pmf(k) + pmf(k + step) + … in log space; the terms must be non-increasing from k on."""
    odds = p / (1.0 - p)
    total, term, j = 1.0, 1.0, k
    while (j < n) if step > 0 else (j > 0):
        term *= (n - j) / (j + 1) * odds if step > 0 else j / ((n - j + 1) * odds)
        j += step
        total += term
        # Past the mode the terms fall faster than geometrically: what is left is below 1e-16 of the sum.
        if term < total * 1e-18:
            break
    return min(1.0, math.exp(_log_pmf(k, n, p) + math.log(total)))


def _check_binom(n: int, p: float) -> None:
    if n < 0 or not 0.0 <= p <= 1.0:
        raise UsageError(f"binomial needs n ≥ 0 and 0 ≤ p ≤ 1 (got n={n}, p={p})")


def binom_le(k: int, n: int, p: float) -> float:
    """P(K ≤ k) for K ~ Binomial(n, p), exact."""
    _check_binom(n, p)
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if p == 0.0:
        return 1.0
    if p == 1.0:
        return 0.0
    if k <= n * p:
        return _tail(k, n, p, -1)
    return max(0.0, 1.0 - _tail(k + 1, n, p, +1))


def binom_ge(k: int, n: int, p: float) -> float:
    """P(K ≥ k) for K ~ Binomial(n, p), exact."""
    _check_binom(n, p)
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    if p == 0.0:
        return 0.0
    if p == 1.0:
        return 1.0
    if k >= n * p:
        return _tail(k, n, p, +1)
    return max(0.0, 1.0 - _tail(k - 1, n, p, -1))


def _smallest_k(n: int, p: float, target: float) -> int:
    """Smallest k in [0, n] with P(K ≤ k) ≥ target (the binomial's quantile function)."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if binom_le(mid, n, p) >= target:
            hi = mid
        else:
            lo = mid + 1
    return lo


def interval_ranks(n: int, q: float, confidence: float = CONFIDENCE) -> tuple[int, int]:
    """1-based ranks (l, u) of the order-statistic interval [x(l), x(u)]; l = 0 or u = n + 1 means unbounded."""
    q = _check_q(q, allow_ends=False)
    if not 0.0 < confidence < 1.0:
        raise UsageError(f"confidence {confidence:g} must be in (0, 1)")
    a = (1.0 - confidence) / 2.0
    return _smallest_k(n, q, a), _smallest_k(n, q, 1.0 - a) + 1


# --- summaries ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Estimate:
    """A percentile with its distribution-free interval (None: that side is unbounded at this n)."""

    q: float
    value: float
    low: float | None
    high: float | None
    n: int

    @property
    def label(self) -> str:
        return label(self.q)

    @property
    def enough(self) -> bool:
        return enough_for(self.q, self.n)

    def as_dict(self) -> dict[str, Any]:
        return {"q": self.q, "value": self.value, "ci95": [self.low, self.high], "enough": self.enough}


def _estimate(xs: Sequence[float], q: float, confidence: float = CONFIDENCE) -> Estimate:
    """`xs` sorted."""
    n = len(xs)
    value = stats.quantile(xs, q)
    if q in (0.0, 1.0):
        return Estimate(q, value, None, None, n)
    lo_rank, hi_rank = interval_ranks(n, q, confidence)
    low = xs[lo_rank - 1] if lo_rank >= 1 else None
    high = xs[hi_rank - 1] if hi_rank <= n else None
    return Estimate(q, value, low, high, n)


def estimate(samples: Iterable[float], q: float, confidence: float = CONFIDENCE) -> Estimate:
    """The q-quantile of the samples and its order-statistic interval."""
    q = _check_q(q)
    return _estimate(sorted(clean(samples)), q, confidence)


@dataclass(frozen=True)
class QuantileSummary:
    """p50, p90, p95 and p99 of a fact's samples, each with its 95% interval."""

    n: int
    estimates: tuple[Estimate, ...]

    def __getitem__(self, name: str) -> Estimate:
        for e in self.estimates:
            if e.label == name:
                return e
        raise KeyError(name)

    def as_dict(self) -> dict[str, Any]:
        return {"n": self.n, **{e.label: e.as_dict() for e in self.estimates}}


def summary(samples: Iterable[float], qs: Sequence[float] = SUMMARY_QS) -> QuantileSummary:
    """p50, p90, p95, p99 (or `qs`) with distribution-free 95% intervals; one sort, no resampling."""
    xs = sorted(clean(samples))
    return QuantileSummary(len(xs), tuple(_estimate(xs, _check_q(q)) for q in qs))


# --- how many samples a percentile needs ----------------------------------------------------------------


def min_samples(q: float) -> int | None:
    """Samples the q-quantile needs: n·min(q, 1 − q) ≥ TAIL_SAMPLES; None for the min and max (never enough)."""
    q = _check_q(q)
    thin = min(q, 1.0 - q)
    if thin <= 0.0:
        return None
    # The tolerance absorbs 1 − 0.9 = 0.09999999999999998.
    return math.ceil(TAIL_SAMPLES / thin - 1e-9)


def enough_for(q: float, n: int) -> bool:
    """Whether n samples are enough for the q-quantile to mean something (see `min_samples`)."""
    need = min_samples(q)
    return need is not None and n >= need


def shortfall(q: float, n: int) -> str | None:
    """None when n is enough for the q-quantile, else why not: `p99 needs n ≥ 1000 …; have 120`."""
    need = min_samples(q)
    if need is None:
        return f"{label(q)} is an extreme, not an estimate: no n is enough; use a percentile such as p99"
    if n >= need:
        return None
    side = "above" if q >= 0.5 else "below"
    return f"{label(q)} needs n ≥ {need} (at least {TAIL_SAMPLES} samples {side} it); have {n}"


# --- verifying a recorded percentile ---------------------------------------------------------------------


@dataclass(frozen=True)
class QuantileCheck:
    """The test of a recorded q-quantile X against new samples, and its verdict."""

    q: float
    recorded: float
    claim: str
    n: int
    above: int  # new samples > X
    below: int  # new samples < X
    p_above: float  # one-sided: evidence that the quantile is above X
    p_below: float  # one-sided: evidence that the quantile is below X
    p_two_sided: float
    new: Estimate
    outcome: verdict.Outcome

    @property
    def verdict(self) -> str:
        return self.outcome.verdict

    @property
    def p_value(self) -> float:
        """The p-value that decided: two-sided for `equal`, p_above for `at_most`, p_below for `at_least`."""
        assert self.outcome.p_value is not None
        return self.outcome.p_value


def _needed_n(n: int, q: float, est: Estimate, recorded: float, tolerance: float) -> int | None:
    """Rough n for the interval to fit the tolerance, scaling its half-width as 1/√n; None when hopeless."""
    base = min_samples(q) or n
    band = tolerance * abs(recorded)
    slack = band - abs(est.value - recorded)
    if slack <= 0:
        return None
    if est.low is None or est.high is None:
        return max(base, 2 * n)
    half = max(est.high - est.value, est.value - est.low)
    if half <= 0:
        return max(base, n)
    return max(base, math.ceil(n * (half / slack) ** 2))


def verify_quantile(
    recorded: float,
    q: float,
    samples: Iterable[float],
    *,
    claim: Claim = "equal",
    tolerance: float = DEFAULT_TOLERANCE,
    alpha: float = verdict.DEFAULT_ALPHA,
    unit: str = "",
) -> QuantileCheck:
    """Test a recorded q-quantile X with new samples (Conover's quantile test) and decide a verdict."""
    q = _check_q(q, allow_ends=False)
    if claim not in CLAIMS:
        raise UsageError(f"claim {claim!r} must be one of {', '.join(CLAIMS)}")
    if not math.isfinite(recorded):
        raise BadInput(f"recorded value {recorded} must be finite")
    xs = sorted(clean(samples, "new samples"))
    n = len(xs)
    at_or_below = sum(1 for x in xs if x <= recorded)
    below = sum(1 for x in xs if x < recorded)
    above = n - at_or_below
    # Under H0 the count at or below X is Binomial(n, q): few → the quantile is above X, many → below.
    p_above = binom_le(at_or_below, n, q)
    p_below = binom_ge(below, n, q)
    p_two = min(1.0, 2.0 * min(p_above, p_below))
    est = _estimate(xs, q)
    rel = (est.value - recorded) / abs(recorded) if recorded != 0 else None
    hi_band = recorded + tolerance * abs(recorded)
    lo_band = recorded - tolerance * abs(recorded)

    if claim == "equal":
        p = p_two
        outside = est.value > hi_band or est.value < lo_band
        inside = est.low is not None and est.high is not None and est.low >= lo_band and est.high <= hi_band
        tol_text = f"tolerance ±{tolerance * 100:g}%"
    elif claim == "at_most":
        p = p_above
        outside = est.value > hi_band
        inside = est.high is not None and est.high <= hi_band
        tol_text = f"tolerance +{tolerance * 100:g}%"
    else:
        p = p_below
        outside = est.value < lo_band
        inside = est.low is not None and est.low >= lo_band
        tol_text = f"tolerance −{tolerance * 100:g}%"

    name = label(q)
    shown_x = fmt.value(recorded, None, unit)
    change = (f"{rel * 100:+.1f}%".replace("-", "−")) if rel is not None else "from zero"
    expected = n * (1.0 - q)
    where = (
        f"new {name} {fmt.value(est.value, None, unit)} vs {shown_x}: {change}; {above} of {n} new samples "
        f"above {shown_x} ({expected:.3g} expected)"
    )
    p_text = f"p={p:.2g}"
    few = shortfall(q, n)
    if p < alpha and outside:
        outcome = verdict.Outcome(
            Verdict.REFUTED, p, rel, None, f"{where}, outside {tol_text} and significant ({p_text})"
        )
    elif few is None and inside:
        outcome = verdict.Outcome(
            Verdict.CONFIRMED,
            p,
            rel,
            None,
            f"{where}; 95% interval {interval_text(est, unit)} inside {tol_text} ({p_text})",
        )
    else:
        needed = _needed_n(n, q, est, recorded, tolerance)
        if few is not None:
            why = few
        elif p < alpha:
            why = f"significant ({p_text}) but inside {tol_text}; interval {interval_text(est, unit)} is wider"
        else:
            why = f"not significant ({p_text}) but interval {interval_text(est, unit)} is wider than {tol_text}"
        more = needed is not None and needed > n and f"n ≥ {needed}" not in why
        need_text = f"; need n ≥ {needed}" if more else ""
        outcome = verdict.Outcome(Verdict.INCONCLUSIVE, p, rel, needed, f"{where}: {why}{need_text}")
    return QuantileCheck(q, recorded, claim, n, above, below, p_above, p_below, p_two, est, outcome)


def interval_text(est: Estimate, unit: str) -> str:
    low = fmt.num(est.low) if est.low is not None else "−∞"
    high = fmt.num(est.high) if est.high is not None else "∞"
    return f"[{low}, {high}]{' ' + unit if unit else ''}"
