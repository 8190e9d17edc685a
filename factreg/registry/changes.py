"""Change points in a fact's history: where its level shifted, by how much, and which conditions changed there.

A fact is re-verified for months; its points (versions and verifications, in time order) form a series. `detect`
finds the points where the series' level shifts, so a team can hear "decode on gamebox dropped 18% on 2026-11-02,
when build_commit went 8cf427ff → 1a2b3c4".

The detector, its method and its parameters are `factreg.stats.changepoints` (pure statistics on a series of
values); here a fact's points become its values, and each change found gets its levels, its dates and the
conditions that changed there.

Detection uses each point's `value` (for a version or a verification, the summary of its samples). The samples of
one point are repeated runs under the same conditions and do not show the run-to-run noise that separates points,
so they are carried, not used.

`conditions_changed` compares, for every condition key, the value the before segment mostly had (ties go to the
latest) with the value of the after segment's first point; a key missing on a side counts as None. An empty dict
means no recorded condition changed.

Pure: no I/O, no database, no clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from factreg.registry import conditions
from factreg.secrets import redact
from factreg.stats.changepoints import ALPHA, MIN_SEGMENT, Level, change_points, median_level


@dataclass(frozen=True)
class Point:
    """One point of a fact's history: when, its value, its samples and the conditions it was measured under."""

    at: str
    value: float
    samples: list[float] | None = None
    conditions: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Change:
    """A shift of level between point `index - 1` and point `index`."""

    index: int
    at_before: str
    at_after: str
    before: Level
    after: Level
    relative_change: float | None
    p_value: float
    conditions_changed: dict[str, list[str | None]]

    def describe(self) -> str:
        """One line for people: "dropped 18.0% (41.2 → 33.8) between A and B, when build_commit went x → y"."""
        if self.relative_change is None:
            what = f"changed ({_num(self.before.median)} → {_num(self.after.median)})"
        else:
            verb = "dropped" if self.relative_change < 0 else "rose"
            what = (f"{verb} {abs(self.relative_change) * 100:.1f}% "
                    f"({_num(self.before.median)} → {_num(self.after.median)})")
        line = f"{what} between {self.at_before} and {self.at_after}"
        if not self.conditions_changed:
            return redact(line + ", when no recorded condition changed")
        parts = [f"{k} went {old if old is not None else '(unset)'} → {new if new is not None else '(unset)'}"
                 for k, (old, new) in self.conditions_changed.items()]
        return redact(line + ", when " + ", ".join(parts))

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "index": self.index,
            "at_before": self.at_before,
            "at_after": self.at_after,
            "before": self.before.__dict__.copy(),
            "after": self.after.__dict__.copy(),
            "relative_change": self.relative_change,
            "p_value": self.p_value,
            "conditions_changed": {k: list(v) for k, v in self.conditions_changed.items()},
        }


def _num(x: float) -> str:
    return f"{x:.4g}"


def detect(points: Sequence[Point], *, min_segment: int = MIN_SEGMENT, alpha: float = ALPHA) -> list[Change]:
    """The level shifts in a fact's points (in time order), with medians, p-values and changed conditions."""
    xs = [p.value for p in points]
    found = change_points(xs, min_segment=min_segment, alpha=alpha)
    n = len(points)
    bounds = [0, *(c for c, _ in found), n]
    out: list[Change] = []
    for j, (c, p) in enumerate(found):
        before_pts = points[bounds[j]:c]
        after_pts = points[c:bounds[j + 2]]
        before = median_level([q.value for q in before_pts])
        after = median_level([q.value for q in after_pts])
        rel = after.median / before.median - 1.0 if before.median != 0 else None
        out.append(Change(
            index=c,
            at_before=points[c - 1].at,
            at_after=points[c].at,
            before=before,
            after=after,
            relative_change=rel,
            p_value=p,
            conditions_changed=conditions_changed(before_pts, points[c]),
        ))
    return out


def conditions_changed(before: Sequence[Point], first_after: Point) -> dict[str, list[str | None]]:
    """Keys whose usual value before (the most frequent, ties to the latest) differs from the first point after."""
    keys: set[str] = set(first_after.conditions)
    for p in before:
        keys.update(p.conditions)
    usual: dict[str, str] = {}
    for key in keys:
        counts: dict[str | None, int] = {}
        last: dict[str | None, int] = {}
        for i, p in enumerate(before):
            v = p.conditions.get(key)
            counts[v] = counts.get(v, 0) + 1
            last[v] = i
        if counts:
            old = max(counts, key=lambda v: (counts[v], last[v]))
            if old is not None:
                usual[key] = old
    return conditions.diff(usual, first_after.conditions)
