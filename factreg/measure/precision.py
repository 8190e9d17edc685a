"""Facts precise enough to verify: a measurement is repeated until its 95% interval is narrow enough, or its
time budget is spent.

A fact recorded from five noisy repetitions (CV 22%: a 95% interval of ±27%) can never be shown to hold within
±10%, however often it is verified: its own interval is wider than the tolerance. So `bench` (and `probe
--record`) measure again, pooling the samples, until the relative half-width of the mean's 95% interval is at
most the **target** — by default half the verification tolerance (±5% for ±10%), `[record] precision` in the
config — or the **budget** is spent: `[record] budget` times the first run's time (default 4, so a run of a
second takes at most five), or `--budget DURATION`. A fact that stops short is flagged `imprecise` and keeps the
info condition `precision`: what it reached, and about how many samples the target would take.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from factreg import stats

if TYPE_CHECKING:
    from factreg.config import Settings

KEY = "precision"
FLAG = "imprecise"
DEFAULT_BUDGET = 4.0
MAX_RUNS = 20

T = TypeVar("T")


def half_width(samples: Sequence[float]) -> float | None:
    """The 95% interval's half-width relative to the mean (0.05 = ±5%); None below two samples or at a zero mean."""
    if len(samples) < 2:
        return None
    s = stats.summarize(samples)
    if s.stdev is None or not s.mean:
        return None
    return stats.t_ppf(0.975, s.n - 1) * s.stdev / math.sqrt(s.n) / abs(s.mean)


def target(settings: Settings | None) -> float:
    """`[record] precision`, else half of `[verify] tolerance` (half of ±10% by default)."""
    from factreg.verdicts import DEFAULT_TOLERANCE

    get = settings.get if settings is not None and hasattr(settings, "get") else (lambda _k, d=None: d)
    given = get("record.precision", None)
    if given is not None:
        return float(given)
    return float(get("verify.tolerance", DEFAULT_TOLERANCE)) / 2


def budget_multiple(settings: Settings | None) -> float:
    get = settings.get if settings is not None and hasattr(settings, "get") else (lambda _k, d=None: d)
    return float(get("record.budget", DEFAULT_BUDGET))


def samples_needed(samples: Sequence[float], goal: float) -> int | None:
    """About how many samples would bring the interval to `goal` (the half-width falls with √n)."""
    reached = half_width(samples)
    if reached is None or goal <= 0:
        return None
    return max(len(samples), math.ceil(len(samples) * (reached / goal) ** 2))


def describe(samples: Sequence[float], goal: float) -> str:
    """`±7.3% at n=5 (target ±5%: about n=11)`, or `±3.1% at n=20 (target ±5%)`."""
    reached = half_width(samples)
    if reached is None:
        return f"unknown at n={len(samples)} (target ±{goal * 100:g}%)"
    text = f"±{reached * 100:.1f}% at n={len(samples)} (target ±{goal * 100:g}%"
    if reached > goal:
        text += f": about n={samples_needed(samples, goal)}"
    return text + ")"


def until_precise(
    run: Callable[[], T],
    worst: Callable[[T], float | None],
    merge: Callable[[T, T], T | None],
    goal: float,
    *,
    budget: float = DEFAULT_BUDGET,
    budget_s: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[T, int]:
    """Run once, then again while the widest interval (`worst`) is above `goal` and another run (as long as the
    first) fits the budget; `merge` pools two runs (None: they cannot be pooled, stop). (pooled result, runs)."""
    started = clock()
    result = run()
    first_s = clock() - started
    allowed = budget_s if budget_s is not None else budget * first_s
    runs = 1
    while runs < MAX_RUNS:
        w = worst(result)
        if w is None or w <= goal:
            break
        if clock() - started > allowed:  # the runs after the first, and one more as long as it, would overrun
            break
        merged = merge(result, run())
        if merged is None:
            break
        result, runs = merged, runs + 1
    return result, runs
