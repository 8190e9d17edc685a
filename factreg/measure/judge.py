"""Judging a re-measurement of a fact: the fact's side and the measurement's, the tolerance that applies, and the
conditions that changed. The verdict rule itself (Welch, TOST, power) is `factreg.stats.verdict`; its `compare`,
`Side`, `Outcome` and `DEFAULT_ALPHA` are re-exported here, so that a verifier reads one module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from factreg import stats
from factreg.stats.verdict import DEFAULT_ALPHA, Outcome, Side, compare
from factreg.verdicts import DEFAULT_TOLERANCE

if TYPE_CHECKING:
    from factreg.config import Settings

__all__ = ["DEFAULT_ALPHA", "Outcome", "Side", "compare", "condition_message", "new_side",
           "old_side", "tolerance_for"]


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


def condition_message(diff: Mapping[str, Sequence[Any]]) -> str:
    """`build_commit 8cf427ff → 1a2b3c4; n_threads 8 → 4`."""
    return "; ".join(
        f"{k} {v[0] if v[0] is not None else '∅'} → {v[1] if v[1] is not None else '∅'}" for k, v in diff.items()
    )
