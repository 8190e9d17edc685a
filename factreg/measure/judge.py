"""Judging a re-measurement: does it confirm, refute, or fail to decide a fact? (Names: `registry.verdicts`.)

The test is **Welch's t-test** (unequal variances), for these reasons:

- n is small on both sides: llama-bench repeats 5 times by default and probes send 3-10 requests. With 3 vs 3
  samples the Mann-Whitney U test cannot reach p < 0.05 at all (its smallest two-sided p is 2/20 = 0.1), so it
  could never refute the case study's 3-sample facts; the t-test can.
- Rates and latencies of a settled server are roughly normal within a run (llama-bench reports mean and
  sample standard deviation itself), and the variances of the old and new runs differ (another load, another
  build), which is what Welch's version allows for.
- It works from summary statistics, so a fact that only carries `value ± spread` and n (a llama-bench markdown
  table, a number from a doc) can still be compared; a fact with no spread at all is compared with a
  one-sample t-test of the new samples against its value.

A significant difference alone never refutes a fact: it must also lie outside a **practical tolerance**
(default ±10%; per fact, then per metric `verify.tolerance_by_metric.<metric>`, then `verify.tolerance`).
A non-significant result only confirms when the comparison had the power (80%) to see a tolerance-sized
difference; otherwise it is `inconclusive`, with the n per side that would be needed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from factreg import fmt
from factreg.registry import stats
from factreg.registry.verdicts import DEFAULT_TOLERANCE, Verdict

if TYPE_CHECKING:
    from factreg.config import Settings

DEFAULT_ALPHA = 0.05
DEFAULT_POWER = 0.80


@dataclass(frozen=True)
class Side:
    """One side of a comparison: centre (mean), standard deviation and n (sd None when unknown)."""

    mean: float
    sd: float | None
    n: int | None


@dataclass(frozen=True)
class Outcome:
    """The statistical verdict of one comparison."""

    verdict: str
    p_value: float | None
    rel_diff: float | None
    needed_n: int | None
    message: str


def tolerance_for(fact: Mapping[str, Any], settings: Settings | None = None) -> float:
    """The fact's own tolerance, else `verify.tolerance_by_metric.<metric>`, else `verify.tolerance`, else 10%."""
    if fact.get("tolerance") is not None:
        return float(fact["tolerance"])
    if settings is not None:
        by_metric = settings.get(f"verify.tolerance_by_metric.{fact.get('metric')}")
        if by_metric is not None:
            return float(by_metric)
        default = settings.get("verify.tolerance")
        if default is not None:
            return float(default)
    return DEFAULT_TOLERANCE


def old_side(fact: Mapping[str, Any]) -> Side:
    """A fact's side: from its samples when it has two or more, else its value ± spread and n."""
    samples = fact.get("samples") or []
    if len(samples) >= 2:
        s = stats.summarize(samples)
        return Side(s.mean, s.stdev, s.n)
    return Side(float(fact["value"]), fact.get("spread"), fact.get("n"))


def new_side(samples: Sequence[float], value: float | None, spread: float | None, n: int | None) -> Side | None:
    """A measurement's side: its samples when there are two or more, else value ± spread and n."""
    if len(samples) >= 2:
        s = stats.summarize(samples)
        return Side(s.mean, s.stdev, s.n)
    if value is not None and spread is not None and n is not None and n >= 2:
        return Side(value, spread, n)
    if len(samples) == 1:
        return Side(samples[0], None, 1)
    if value is not None:
        return Side(value, spread, n)
    return None


def _pct(x: float) -> str:
    return f"{x * 100:+.1f}%".replace("-", "−")


def compare(
    old: Side,
    new: Side,
    tolerance: float = DEFAULT_TOLERANCE,
    alpha: float = DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
    unit: str = "",
) -> Outcome:
    """Significance (Welch, or one-sample when the old side has no spread) and practical tolerance → verdict."""
    two_sample = old.sd is not None and old.n is not None and old.n >= 2
    shown_old = fmt.value(old.mean, old.sd, unit)
    shown_new = fmt.value(new.mean, new.sd, unit)
    if new.n is None or new.n < 2 or new.sd is None:
        return Outcome(
            Verdict.INCONCLUSIVE,
            None,
            _rel(old.mean, new.mean),
            2,
            f"new {shown_new} has fewer than 2 samples: cannot test; need n ≥ 2",
        )
    if two_sample:
        assert old.sd is not None and old.n is not None
        result = stats.welch(old.mean, old.sd, old.n, new.mean, new.sd, new.n)
        pooled_sd = math.sqrt((old.sd**2 + new.sd**2) / 2)
        n_have = min(old.n, new.n)
        sd_for_n = pooled_sd
    else:
        result = stats.one_sample(old.mean, new.mean, new.sd, new.n)
        n_have = new.n
        # One-sample: the two-sample formula with sd/√2 gives (z·sd/δ)² + 1.
        sd_for_n = new.sd / math.sqrt(2)
    assert result is not None
    p = result.p_value
    rel = _rel(old.mean, new.mean)
    delta = tolerance * abs(old.mean)
    needed = stats.needed_n(sd_for_n, delta, alpha, power) if delta > 0 else None
    outside = (abs(rel) > tolerance) if rel is not None else (new.mean != old.mean)
    where = f"new {shown_new} vs {shown_old}"
    change = f"{_pct(rel)}" if rel is not None else "from zero"
    tol_text = f"tolerance ±{tolerance * 100:g}%"
    p_text = f"p={p:.2g}"
    if p < alpha and outside:
        return Outcome(Verdict.REFUTED, p, rel, None, f"{where}: {change}, outside {tol_text} and significant ({p_text})")
    if p < alpha:
        return Outcome(Verdict.CONFIRMED, p, rel, None, f"{where}: {change} is significant ({p_text}) but inside {tol_text}")
    if needed is None or n_have >= needed:
        return Outcome(
            Verdict.CONFIRMED,
            p,
            rel,
            needed,
            f"{where}: {change}, no significant difference ({p_text}; n={n_have} can see ±{tolerance * 100:g}%)",
        )
    side = "per side" if two_sample else "new samples"
    return Outcome(
        Verdict.INCONCLUSIVE,
        p,
        rel,
        needed,
        f"{where}: {change}, not significant ({p_text}) but too noisy to tell a ±{tolerance * 100:g}% "
        f"difference: need n ≥ {needed} {side} (have {n_have})",
    )


def _rel(old: float, new: float) -> float | None:
    if old == 0:
        return None
    return (new - old) / abs(old)


def condition_message(diff: Mapping[str, Sequence[Any]]) -> str:
    """`build_commit 8cf427ff → 1a2b3c4; n_threads 8 → 4`."""
    return "; ".join(
        f"{k} {v[0] if v[0] is not None else '∅'} → {v[1] if v[1] is not None else '∅'}" for k, v in diff.items()
    )
