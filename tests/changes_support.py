"""Generated series with known level shifts, and the scoring of a change-point detector on them.

Shared by tests/test_changes.py and bench/bench_changes.py so that both measure the same thing.

A series: a base level (5–100, a tokens/s-like number), 0, 1 or 2 shifts, each changing the level by a relative
5–40% up or down, normal noise whose standard deviation is `cv` × the current level (cv 5–30%). Every segment has
at least `min_segment` points (shorter ones cannot be reported by a detector with that minimum). A shift's size in
noise standard deviations is its relative size over cv (the level before it is the reference).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass
class Case:
    values: list[float]
    shifts: list[int]  # true change indexes: first point of each new segment
    ratios: list[float]  # each shift's size in noise standard deviations
    cv: float
    meta: dict = field(default_factory=dict)


def make_case(rng: random.Random, n: int, k: int, *, cv: float | None = None, rel: list[float] | None = None,
              min_segment: int = 4) -> Case:
    """One series of length n with k shifts at random places (every segment ≥ min_segment points)."""
    m = min_segment
    extra = n - (k + 1) * m
    if extra < 0:
        raise ValueError(f"{n} points cannot hold {k} shifts with segments of {m}")
    cuts = sorted(rng.sample(range(extra + k), k))
    lengths, prev = [], -1
    for u in cuts:
        lengths.append(m + u - prev - 1)
        prev = u
    lengths.append(m + extra + k - 1 - prev)
    cv = rng.uniform(0.05, 0.30) if cv is None else cv
    level = rng.uniform(5.0, 100.0)
    values: list[float] = []
    shifts: list[int] = []
    ratios: list[float] = []
    for j, length in enumerate(lengths):
        if j:
            r = rng.uniform(0.05, 0.40) if rel is None else rel[j - 1]
            sign = rng.choice((-1.0, 1.0)) if rel is None else 1.0
            shifts.append(len(values))
            ratios.append(abs(r) / cv)
            level *= 1.0 + sign * r
        values.extend(rng.gauss(level, cv * level) for _ in range(length))
    return Case(values, shifts, ratios, cv)


def make_set(seed: int, count: int, *, shifts: tuple[int, ...] = (0, 1, 2), n_min: int = 10, n_max: int = 500,
             min_segment: int = 4) -> list[Case]:
    """`count` series, lengths uniform in [n_min, n_max], the number of shifts drawn from `shifts`."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n = rng.randint(n_min, n_max)
        choices = [k for k in shifts if n >= (k + 1) * min_segment]
        out.append(make_case(rng, n, rng.choice(choices), min_segment=min_segment))
    return out


@dataclass
class Score:
    big_found: int = 0  # shifts of ≥ 3 noise SDs found within ±tol points
    big_total: int = 0
    all_found: int = 0
    all_total: int = 0
    null_series: int = 0  # series without a shift
    null_alarms: int = 0  # ... of which reported at least one change
    extra: int = 0  # reported changes matching no true shift, in series with shifts
    shift_series: int = 0

    @property
    def detection_rate(self) -> float:
        return self.big_found / self.big_total if self.big_total else float("nan")

    @property
    def false_alarm_rate(self) -> float:
        return self.null_alarms / self.null_series if self.null_series else float("nan")


def score(cases: list[Case], found: list[list[int]], *, tol: int = 1, big: float = 3.0) -> Score:
    """Match reported indexes to true shifts (each used once, nearest first) and count."""
    s = Score()
    for case, got in zip(cases, found, strict=True):
        if not case.shifts:
            s.null_series += 1
            s.null_alarms += bool(got)
            continue
        s.shift_series += 1
        pairs = sorted((abs(g - t), i, j) for i, t in enumerate(case.shifts) for j, g in enumerate(got)
                       if abs(g - t) <= tol)
        used_t: set[int] = set()
        used_g: set[int] = set()
        for _d, i, j in pairs:
            if i not in used_t and j not in used_g:
                used_t.add(i)
                used_g.add(j)
        for i, r in enumerate(case.ratios):
            hit = i in used_t
            s.all_total += 1
            s.all_found += hit
            if r >= big:
                s.big_total += 1
                s.big_found += hit
        s.extra += len(got) - len(used_g)
    return s


def make_outlier_nulls(seed: int, count: int, *, frac: float = 0.02, slowdown: float = 0.4, n_min: int = 10,
                       n_max: int = 500) -> list[Case]:
    """Series without a shift where a fraction of the points ran `slowdown` slower (a throttled or disturbed run)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n = rng.randint(n_min, n_max)
        cv = rng.uniform(0.05, 0.30)
        level = rng.uniform(5.0, 100.0)
        values = [rng.gauss(level, cv * level) * (1.0 - slowdown if rng.random() < frac else 1.0) for _ in range(n)]
        out.append(Case(values, [], [], cv))
    return out


def make_step_outliers(seed: int, count: int, *, n_min: int = 10, n_max: int = 500, min_segment: int = 4,
                       big: float = 3.0, beyond: tuple[float, float] = (3.0, 10.0), max_before: int = 3) -> list[Case]:
    """Series with one shift of ≥ `big` noise SDs and one outlier 1…`max_before` points before it.

    The shift: base level 5–100, cv 5–30%, a relative 5–40% up or down, drawn again until it is ≥ `big` SDs; the
    segments around it have ≥ `min_segment` points. The outlier lies beyond the new level, on the far side from the
    old one, by `beyond` (uniform) of the new level's noise SDs: it pulls a split towards itself, and it belongs to
    neither level. `meta` holds the outlier's index (`outlier`) and its distance before the shift (`before`)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n = rng.randint(max(n_min, 2 * min_segment), n_max)
        while True:
            cv, rel = rng.uniform(0.05, 0.30), rng.uniform(0.05, 0.40)
            if rel / cv >= big:
                break
        sign = rng.choice((-1.0, 1.0))
        level = rng.uniform(5.0, 100.0)
        after = level * (1.0 + sign * rel)
        t = rng.randint(max(min_segment, max_before), n - min_segment)
        values = [rng.gauss(level if i < t else after, cv * (level if i < t else after)) for i in range(n)]
        d = rng.randint(1, max_before)
        values[t - d] = after + sign * rng.uniform(*beyond) * cv * after
        out.append(Case(values, [t], [rel / cv], cv, {"outlier": t - d, "before": d}))
    return out
