"""Statistics in pure Python, at the bottom of the package (it knows nothing of facts, registries or servers).

Here: summaries at write time, Student's t, Welch's t-test and sample-size estimates. Beside them:
`quantiles.py` (percentiles with their intervals, exact binomial tails, the test of a recorded percentile),
`changepoints.py` (where the level of a series shifts) and `verdict.py` (the verdict rule: Welch, TOST, power).

Kept free of scipy so that reading and recording stay fast to start; tests check it against scipy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

FEW_SAMPLES = 5
HIGH_CV = 0.20
# At most this many samples per version (and per verification): enough for any percentile factreg states, and a
# bound on what one recording writes and every later read of it costs (README, "Samples").
MAX_SAMPLES = 100_000


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-14:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(lbeta)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_sf(t: float, df: float) -> float:
    """Survival function P(T > t) of Student's t with `df` degrees of freedom."""
    if math.isinf(df):
        return 0.5 * math.erfc(t / math.sqrt(2))
    x = df / (df + t * t)
    tail = 0.5 * betainc(df / 2.0, 0.5, x)
    return tail if t > 0 else 1.0 - tail


@lru_cache(maxsize=512)
def t_ppf(q: float, df: float) -> float:
    """Quantile of Student's t (bisection on the survival function; 1e-10 precise)."""
    if not 0.0 < q < 1.0:
        raise ValueError("q must be in (0, 1)")
    if q == 0.5:
        return 0.0
    target = 1.0 - q
    lo, hi = -1e3, 1e3
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_sf(mid, df) > target:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-10:
            break
    return (lo + hi) / 2


def norm_ppf(q: float) -> float:
    return t_ppf(q, math.inf)


def quantile(sorted_xs: Sequence[float], q: float) -> float:
    """Linear-interpolation quantile (NumPy's default, `statistics.quantiles(method='inclusive')`)."""
    if len(sorted_xs) == 1:
        return sorted_xs[0]
    pos = (len(sorted_xs) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)


@dataclass(frozen=True)
class Summary:
    """Write-time statistics of a fact's samples."""

    n: int
    mean: float
    median: float
    stdev: float | None
    min: float
    max: float
    iqr: float
    cv: float | None
    ci95: tuple[float, float] | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "mean": self.mean,
            "median": self.median,
            "stdev": self.stdev,
            "min": self.min,
            "max": self.max,
            "iqr": self.iqr,
            "cv": self.cv,
            "ci95": list(self.ci95) if self.ci95 else None,
        }


def summarize(samples: Sequence[float]) -> Summary:
    """n, mean, median, sample stdev, min, max, IQR, CV and the 95% t-interval of the mean."""
    xs = sorted(float(x) for x in samples)
    n = len(xs)
    if n == 0:
        raise ValueError("no samples")
    mean = math.fsum(xs) / n
    median = quantile(xs, 0.5)
    if n >= 2:
        stdev = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
        half = t_ppf(0.975, n - 1) * stdev / math.sqrt(n)
        ci: tuple[float, float] | None = (mean - half, mean + half)
        cv = stdev / abs(mean) if mean != 0 else None
    else:
        stdev, ci, cv = None, None, None
    iqr = quantile(xs, 0.75) - quantile(xs, 0.25)
    return Summary(n, mean, median, stdev, xs[0], xs[-1], iqr, cv, ci)


@dataclass(frozen=True)
class TestResult:
    t: float
    df: float
    p_value: float


def welch(mean1: float, sd1: float, n1: int, mean2: float, sd2: float, n2: int) -> TestResult | None:
    """Welch's two-sample t-test from summary statistics; None when it cannot be computed."""
    if n1 < 2 or n2 < 2:
        return None
    v1, v2 = sd1 * sd1 / n1, sd2 * sd2 / n2
    se2 = v1 + v2
    if se2 <= 0:
        if mean1 == mean2:
            return TestResult(0.0, float(n1 + n2 - 2), 1.0)
        return TestResult(math.copysign(math.inf, mean2 - mean1), float(n1 + n2 - 2), 0.0)
    t = (mean2 - mean1) / math.sqrt(se2)
    df = se2 * se2 / ((v1 * v1) / (n1 - 1) + (v2 * v2) / (n2 - 1))
    return TestResult(t, df, min(1.0, 2.0 * t_sf(abs(t), df)))


def one_sample(reference: float, mean: float, sd: float, n: int) -> TestResult | None:
    """One-sample t-test of new samples against a reference value that carries no spread."""
    if n < 2:
        return None
    if sd <= 0:
        return TestResult(0.0 if mean == reference else math.inf, n - 1, 1.0 if mean == reference else 0.0)
    t = (mean - reference) / (sd / math.sqrt(n))
    return TestResult(t, n - 1, min(1.0, 2.0 * t_sf(abs(t), n - 1)))


def needed_n(sd: float, delta: float, alpha: float = 0.05, power: float = 0.8) -> int | None:
    """Samples per side to detect a difference `delta` with two-sided `alpha` and `power`."""
    if delta <= 0 or sd <= 0:
        return None
    z = norm_ppf(1 - alpha / 2) + norm_ppf(power)
    return max(2, math.ceil(2 * (z * sd / delta) ** 2) + 1)


def flags_for(n: int | None, cv: float | None) -> list[str]:
    """Integrity flags that follow from the numbers alone: `few_samples` (n unknown or < 5), `high_variance`."""
    flags: list[str] = []
    if n is None or n < FEW_SAMPLES:
        flags.append("few_samples")
    if cv is not None and cv > HIGH_CV:
        flags.append("high_variance")
    return flags


def thin(samples: Sequence[float], k: int = MAX_SAMPLES) -> list[float]:
    """At most `k` samples standing for `samples`: the order statistics at evenly spaced ranks (the minimum, the
    maximum and every quantile in between kept, to within 1/k), in ascending order. `samples` as they are when
    there are no more than `k`."""
    if len(samples) <= k:
        return list(samples)
    ordered = sorted(samples)
    last = len(ordered) - 1
    return [ordered[round(i * last / (k - 1))] for i in range(k)]
