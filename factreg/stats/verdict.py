"""The verdict rule: does a re-measurement confirm, refute, or fail to decide a fact? (Names: `factreg.verdicts`.)

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
(default ±10%; per fact, then per metric `verify.tolerance_by_metric.<metric>`, then `verify.tolerance`: chosen by
`measure/judge.py`).
A non-significant result only confirms when the comparison had the power (80%) to see a tolerance-sized
difference; otherwise it is `inconclusive`, with the n per side that would be needed.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from factreg import fmt, stats
from factreg.verdicts import DEFAULT_TOLERANCE, Verdict

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


def _pct(x: float) -> str:
    return f"{x * 100:+.1f}%".replace("-", "−")


@functools.lru_cache(maxsize=8192)
def _t_crit(q: float, df: float) -> float:
    """Student's t quantile with `df` rounded down to a tenth (a little wider, never narrower), cached."""
    return stats.t_ppf(q, df)


def t_crit(q: float, df: float) -> float:
    return _t_crit(q, math.floor(df * 10) / 10 if math.isfinite(df) else df)


def compare(
    old: Side,
    new: Side,
    tolerance: float = DEFAULT_TOLERANCE,
    alpha: float = DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
    unit: str = "",
) -> Outcome:
    """The verdict of a new measurement against a fact (docs/machine.md, "Confirm by equivalence"):

    - **refuted**: significantly different (Welch, or one-sample when the old side has no spread) and outside the
      tolerance;
    - **confirmed**: equivalent within the tolerance by two one-sided tests (TOST) — the 1 − 2α interval of the
      difference new − old lies within ±tolerance × |old|;
    - **inconclusive** otherwise, saying which side keeps it from a decision: the fact's own imprecision (no
      number of new samples could confirm it) or the new measurement's (with the n that would).

    `power` sizes the n asked for: the new samples that would make the interval narrow enough, were the
    difference what it is now."""
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
    v_new = new.sd**2 / new.n
    if two_sample:
        assert old.sd is not None and old.n is not None
        result = stats.welch(old.mean, old.sd, old.n, new.mean, new.sd, new.n)
        v_old = old.sd**2 / old.n
    else:
        result = stats.one_sample(old.mean, new.mean, new.sd, new.n)
        v_old = 0.0
    assert result is not None
    p = result.p_value
    rel = _rel(old.mean, new.mean)
    bound = tolerance * abs(old.mean)
    outside = (abs(rel) > tolerance) if rel is not None else (new.mean != old.mean)
    where = f"new {shown_new} vs {shown_old}"
    change = f"{_pct(rel)}" if rel is not None else "from zero"
    tol_text = f"tolerance ±{tolerance * 100:g}%"
    p_text = f"p={p:.2g}"
    if p < alpha and outside:
        return Outcome(Verdict.REFUTED, p, rel, None, f"{where}: {change}, outside {tol_text} and significant ({p_text})")
    diff = new.mean - old.mean
    se = math.sqrt(v_old + v_new)
    t = t_crit(1 - alpha, result.df) if se > 0 else 0.0
    low, high = diff - t * se, diff + t * se
    if bound > 0 and -bound < low and high < bound:
        span = f"{_pct(low / abs(old.mean))} … {_pct(high / abs(old.mean))}"
        return Outcome(Verdict.CONFIRMED, p, rel, None,
                       f"{where}: {change}, equivalent within {tol_text} ({(1 - 2 * alpha) * 100:g}% interval of "
                       f"the difference {span}; {p_text})")  # fmt: skip
    return _undecided(old, new, p, rel, v_old, v_new, t, bound, alpha, power, two_sample, where, change, tol_text)


def _undecided(
    old: Side, new: Side, p: float, rel: float | None, v_old: float, v_new: float, t: float, bound: float,
    alpha: float, power: float, two_sample: bool, where: str, change: str, tol_text: str,
) -> Outcome:
    """Neither refuted nor confirmed: which side's imprecision keeps the verdict open, and what would close it."""
    p_text = f"p={p:.2g}"
    # Significant here means inside the tolerance (outside it, significance refutes): say so, not "not significant".
    sig = f"not significant ({p_text})" if p >= alpha else f"significant ({p_text}), inside the {tol_text}"
    gap = abs(new.mean - old.mean)
    room = bound - gap  # the half-width an interval may have and still confirm
    # Inside the tolerance, more samples could confirm (an interval within ±bound); outside it, they could refute
    # (an interval that excludes no difference) — either way the interval must narrow to `target`.
    confirming = room > 0
    target = room if confirming else gap
    z = stats.norm_ppf(1 - (alpha if confirming else alpha / 2)) + stats.norm_ppf(power)
    own = (t or z) * math.sqrt(v_old)  # even with endless new samples the interval keeps the fact's own part
    # The fact is to blame only when it is less precise than a fact is recorded to be (half the tolerance,
    # measure/precision.py); a precise fact whose gap to the new value sits at the tolerance's edge is the edge's.
    if two_sample and bound > 0 and own >= target and (own > bound / 2 or not confirming):
        assert old.n is not None and old.sd is not None
        half = (t or z) * math.sqrt(v_old) / abs(old.mean) if old.mean else math.inf
        what = f"confirm within {tol_text}" if confirming else f"tell a {change} difference from none"
        return Outcome(
            Verdict.INCONCLUSIVE, p, rel, None,
            f"{where}: {change}, {sig}; the fact itself is too imprecise to {what}: its own "
            f"interval is ±{half * 100:.0f}% (n={old.n}) — re-record it with more samples",
        )  # fmt: skip
    edge = Outcome(Verdict.INCONCLUSIVE, p, rel, None,
                   f"{where}: {change}, {sig.split(', inside')[0]}, at the edge of the {tol_text}: more samples on both sides would "
                   "decide it")  # fmt: skip
    if bound <= 0 or target <= 0 or (not confirming and p < alpha):  # (significant, and exactly at the bound)
        return edge
    # New samples n such that z·√(v_old + s²/n) ≤ target.
    assert new.sd is not None
    left = (target / z) ** 2 - v_old
    if left <= 0 and t:  # no n gives the power asked for: the n that would do it at this look's level alone
        left = (target / t) ** 2 - v_old
    needed = max(2, math.ceil(new.sd**2 / left)) if left > 0 and new.sd > 0 else None
    if needed is None:  # the fact's own part alone fills the room: only samples on both sides would decide it
        return edge
    if new.n is not None and needed <= new.n:
        needed = new.n + 1
    ask = f": need n ≥ {needed} new samples (have {new.n})"
    if not confirming:
        return Outcome(Verdict.INCONCLUSIVE, p, rel, needed,
                       f"{where}: {change}, outside {tol_text} but {sig}: too noisy to tell it from no "
                       f"difference{ask}")  # fmt: skip
    return Outcome(
        Verdict.INCONCLUSIVE, p, rel, needed,
        f"{where}: {change}, {sig} but too noisy to tell a {tol_text[10:]} difference{ask}",
    )  # fmt: skip


def _rel(old: float, new: float) -> float | None:
    if old == 0:
        return None
    return (new - old) / abs(old)
