"""Change points in a series of values: where its level shifts, each with its p-value, the points that belong to no
level, and a level's median with its interval (`registry/changes.py` applies it to a fact's history).

A fact is re-verified for months; its points (versions and verifications, in time order) form a series.
`change_points` finds the points where the series' level shifts, so a team can hear "decode on gamebox dropped 18%
on 2026-11-02, when build_commit went 8cf427ff → 1a2b3c4".

Method
------
E-Divisive in the family of Matteson & James (2014) and of Apache Otava / Hunter (Fleming et al., 2023): split the
series where a divisive statistic is largest, keep the split when it is significant, go on inside the pieces.

- Divisive statistic. Matteson & James's energy statistic Q̂ with exponent 2 is the between-groups sum of squares
  `n1·n2/(n1+n2)·(mean1 − mean2)²` ("E-Divisive means": it sees shifts of the level, not of the spread, which is
  what a performance fact's regressions are). Dividing by the within-groups sum of squares makes it Student's t
  of the two pieces, so the split that maximises Q̂ in a stretch also maximises |t|, and prefix sums make every
  split of a stretch cost O(1).
- Where splits are looked for. Plain binary segmentation (maximise over one split of the whole stretch) misses a
  short excursion that comes back (a level that drops for a week, then recovers): the two pieces' means barely
  differ. Otava searches every (split, end) pair for this, which costs O(n²) per stretch. Here the first search
  runs over seeded intervals (Kovács, Li, Bühlmann & Munk, 2023): the whole series, then halves overlapping by
  half, then quarters, ... down to `2·min_segment` points (decay 1/2; about 2·log2(n / min_segment) · n splits in
  all), so every change has an interval around it that holds no other one. Seeded intervals alone miss a short
  excursion in the middle of a short series (a 4–6-point dip in 16–24 points: no interval holds one of its edges
  with `min_segment` points on each side), so a window of `2·min_segment` points at every position is searched too,
  split in its middle (n − 2·min_segment + 1 more splits; a window that is already a seeded interval is not
  counted twice). The best split of each interval or window is a candidate; candidates are taken most significant
  first, skipping any closer than `min_segment` to one already taken (the "greedy" selection of seeded binary
  segmentation).
- Significance. A permutation test (Matteson & James; Otava's original mode) would need ≥ 1/alpha permutations
  per test and is far too slow here; Otava's faster mode applies a t-test to the best split as if it had been
  chosen in advance, which makes false alarms much more frequent than its p-value threshold says (the maximum
  of many t statistics is not a t statistic). Here each split's t-test is exact under independent normal noise
  (the within-groups variance is estimated from the same interval), and a candidate is kept only if its p-value
  times the number of splits searched in all intervals and windows (Bonferroni) is at most `alpha`, so a flat series with
  normal noise gives a false alarm with probability at most `alpha`, whatever its length. No random numbers are
  drawn: no permutations, no seed, and the result is a pure function of the input.
- Then, once something was found: binary segmentation inside each piece (its best split, kept when its p-value
  times the piece's number of splits is at most `alpha`; this finds the other edge of an excursion whose first
  edge the intervals found); each change is moved to the best split between its neighbours; and, as in Otava's
  merge step, each change is tested against the stretch between its neighbours (two-sample t-test, p-value times
  the number of splits in that stretch), the weakest one above `alpha` is dropped and its neighbours are tested
  again, until all pass. That last p-value is `Change.p_value`.
- Points that belong to no level. A mean is pulled by one far point, so a single disturbed run 1–3 points before a
  real step pulled the split onto itself (the split then also read its cause from the disturbed run, whose
  conditions were the old ones). Such points are set aside before the split is searched (`set_aside` lists them):
  first, every point more than `OUTLIER_SDS` noise SDs from the median of its `min_segment − 1` neighbours on each
  side (the one side it has at an end of the series); then, once changes are found, every point within `NEAR`
  points of a change that lies more than `LEVEL_SDS` SDs from the medians of both levels the change separates (each
  level's own noise SD when it has `LEVEL_POINTS` points or more, since noise often grows with the level), after
  which the rest is searched again. The noise SD is robust: from the median difference of neighbours, which a step
  or an outlier touches only a few of. Each point of a level of `min_segment` points has its own level on one side,
  so the first rule never sets it aside (a 4-point dip is still found at both edges). Set-aside points are left
  out of the search and of the p-values; they stay in the levels' medians and counts; and a level begins at a point
  that belongs to it, so a point set aside just before a change stays with the level before (the cause is read
  from the first point of the new level). With the outlier 1–3 points before a step of ≥ 3 SDs, 3–10 SDs beyond the
  new level, the change lands within ±1 point of the step in 96.2% of 10,000 series (34.5% before; 97.3% with the
  outlier taken out by hand), and names the build that changed there in 93.7% (3.0% before). On clean series it
  costs a little placement — a genuine point 2.75 SDs beyond a new level's first point is set aside too, and the
  change begins one point later: shifts of ≥ 3 SDs exactly placed 90.2% (91.4% before), found within ±1 97.2%
  (97.5%) — and no false alarms: 0.22% of 10,000 flat series (0.19% before), 0.36% with 2% of the points 40%
  slower (0.33%). `detect()` takes a third more CPU (bench/results/changes_placement.md).

Parameters (defaults)
---------------------
- `min_segment=4`: no segment (before the first change, between two, after the last) has fewer points, so a
  shift is reported once 4 points were measured after it. A step of 3 noise standard deviations 4 points from
  either end of a 100-point series is found within ±1 point 90% of the time; in the middle, 97% (the rest is the
  place, not the finding: at 3 SDs even the best split lands 2 or more points off about 2.6% of the time).
  At least 2.
- `alpha=0.01`: the family-wise significance level: a series without a shift reports one with probability at most
  `alpha` under normal noise (Bonferroni makes it conservative: about 0.2% measured). Setting points aside makes
  the t-tests approximate (the points left out are the far ones, so the kept ones spread a little less than the
  noise), which that margin absorbs: 0.22% of 10,000 flat series. Under other noise it is approximate too; with 2%
  of the points 40% slower, false alarms stayed under 1% (bench/bench_changes.py).
- Seeded intervals decay by 1/2 per level, down to `2·min_segment` points (a decay of 1/√2 found slightly more
  on generated series, at 2.4 times the time).
- `OUTLIER_SDS=3.5`, `LEVEL_SDS=2.75`, `NEAR=3`, `LEVEL_POINTS=10` (fixed): chosen on generated series of other
  seeds than the benchmark's (3.0 instead of 2.75 found 0.3 points fewer steps next to an outlier, with the same
  placement on clean series; 2.5, 0.2 more, placing 1% fewer clean shifts exactly).

The before/after summaries are the medians of the points' values on each side, each with a distribution-free 95%
interval from order statistics (binomial). With fewer than 6 points no pair of order statistics reaches 95%: the
interval is then [min, max] and `ci_level` says what it covers (87.5% for 4 points, 93.75% for 5).

Pure: no I/O, no database, no clock; the standard library and factreg's own small helpers only. Measured
quality and speed, against Apache Otava on the same series: bench/results/changes.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from factreg.errors import BadInput
from factreg.stats import t_sf

MIN_SEGMENT = 4
ALPHA = 0.01
DECAY = 0.5
OUTLIER_SDS = 3.5  # a point this many noise SDs from the medians of its neighbours on both sides belongs to no level
LEVEL_SDS = 2.75  # ... or, within NEAR points of a change, this many from the medians of both levels
NEAR = 3
LEVEL_POINTS = 10


@dataclass(frozen=True)
class Level:
    """The median of a segment's point values, with its order-statistic interval."""

    median: float
    ci_low: float
    ci_high: float
    ci_level: float
    n: int


class _Prefix:
    """Prefix sums of a series (centred on its first value, so that sums of squares keep their precision)."""

    def __init__(self, xs: Sequence[float]):
        ref = xs[0]
        s1 = [0.0]
        s2 = [0.0]
        a1 = a2 = 0.0
        for x in xs:
            d = x - ref
            a1 += d
            a2 += d * d
            s1.append(a1)
            s2.append(a2)
        self.s1 = s1
        self.s2 = s2

    def best_split(self, a: int, b: int, m: int) -> tuple[int, float]:
        """The split τ of [a, b) (pieces of ≥ m points) with the largest between-groups sum of squares, and it."""
        s1 = self.s1
        sa = s1[a]
        length = b - a
        total = s1[b] - sa
        best_tau, best = a + m, -1.0
        for tau in range(a + m, b - m + 1):
            n1 = tau - a
            num = length * (s1[tau] - sa) - total * n1
            val = num * num / (n1 * (length - n1))
            if val > best:
                best, best_tau = val, tau
        return best_tau, best / length

    def t_stat(self, a: int, tau: int, b: int) -> float:
        """|t| of the two-sample test (pooled variance) of [a, τ) against [τ, b)."""
        s1, s2 = self.s1, self.s2
        n1, n2 = tau - a, b - tau
        sum1, sum2 = s1[tau] - s1[a], s1[b] - s1[tau]
        diff = sum1 / n1 - sum2 / n2
        rss = (s2[b] - s2[a]) - sum1 * sum1 / n1 - sum2 * sum2 / n2
        scale = abs(s2[b] - s2[a]) + 1e-300
        if rss <= scale * 1e-12:  # no spread left: identical values on each side
            return math.inf if abs(diff) > 1e-12 * math.sqrt(scale / (n1 + n2)) else 0.0
        var = rss / (n1 + n2 - 2)
        return abs(diff) / math.sqrt(var * (1 / n1 + 1 / n2))


def _two_sided(t: float, df: int) -> float:
    if math.isinf(t):
        return 0.0
    return min(1.0, 2.0 * t_sf(t, df))


@lru_cache(maxsize=1024)
def _seeded_intervals(n: int, m: int) -> tuple[tuple[int, int], ...]:
    """Seeded intervals of [0, n) with decay 1/2 down to 2·m points, deduplicated, in a fixed order."""
    out: list[tuple[int, int]] = []
    seen: set[tuple[int, int]] = set()
    k = 0
    while True:
        length = n * DECAY**k
        if length < 2 * m:
            break
        count = 2 * math.ceil((1 / DECAY) ** k - 1e-9) - 1
        step = (n - length) / (count - 1) if count > 1 else 0.0
        for i in range(count):
            a = math.floor(i * step)
            b = min(n, math.ceil(i * step + length))
            if b - a >= 2 * m and (a, b) not in seen:
                seen.add((a, b))
                out.append((a, b))
        k += 1
    return tuple(out)


@lru_cache(maxsize=1024)
def _windows(n: int, m: int) -> tuple[int, ...]:
    """Starts of the windows of 2·m points at every position of [0, n) that are not already seeded intervals."""
    seeded = set(_seeded_intervals(n, m))
    return tuple(i for i in range(n - 2 * m + 1) if (i, i + 2 * m) not in seeded)


def _scan_p(t: float, df: int, splits: int) -> float:
    return min(1.0, _two_sided(t, df) * splits)


def change_points(values: Sequence[float], *, min_segment: int = MIN_SEGMENT,
                  alpha: float = ALPHA) -> list[tuple[int, float]]:
    """The indexes where the level of `values` shifts, each with its p-value (see the module docstring)."""
    return _search(_numbers(values, min_segment, alpha), min_segment, alpha)[0]


def set_aside(values: Sequence[float], *, min_segment: int = MIN_SEGMENT, alpha: float = ALPHA) -> list[int]:
    """The indexes of the points that belong to no level, which detection leaves out (see the module docstring)."""
    return _search(_numbers(values, min_segment, alpha), min_segment, alpha)[1]


def _numbers(values: Sequence[float], min_segment: int, alpha: float) -> list[float]:
    _check_params(min_segment, alpha)
    try:
        xs = [float(v) for v in values]
    except (TypeError, ValueError) as exc:
        raise BadInput(f"change detection needs numbers: {exc}") from None
    for v in xs:
        if not math.isfinite(v):
            raise BadInput(f"change detection needs finite values, got {v!r}")
    return xs


def _search(xs: list[float], m: int, alpha: float) -> tuple[list[tuple[int, float]], list[int]]:
    """(changes as (index, p-value), the indexes set aside): points apart from both sides of their neighbourhood
    are left out, the rest searched; then the points next to a change that lie apart from both its levels are left
    out too, and the rest searched again."""
    if len(xs) < 2 * m:
        return [], []
    sd = _noise_sd(xs)
    aside = _isolated(xs, m, sd)
    found = _on_kept(xs, aside, m, alpha)
    if found:
        near = _apart_from_levels(xs, aside, [c for c, _ in found], sd)
        if near:
            aside |= near
            found = _on_kept(xs, aside, m, alpha)
    return found, sorted(aside)


def _noise_sd(xs: Sequence[float]) -> float:
    """The noise's standard deviation, from the differences of neighbours: a step or an outlier touches few of them.

    The median difference, or, when most neighbours are equal (a quantized value), the mean one (both are scaled to
    a standard deviation under normal noise)."""
    diffs = sorted(abs(b - a) for a, b in zip(xs, xs[1:], strict=False))
    mid = _middle(diffs)
    if mid > 0:
        return 1.4826 * mid / math.sqrt(2)
    return math.fsum(diffs) / len(diffs) * math.sqrt(math.pi) / 2


def _middle(ordered: Sequence[float]) -> float:
    k = len(ordered)
    return ordered[k // 2] if k % 2 else (ordered[k // 2 - 1] + ordered[k // 2]) / 2


def _apart(x: float, side: Sequence[float], cut: float) -> bool:
    """Whether `x` lies more than `cut` from the median of `side` (from the nearer middle value of an even number)."""
    if not side:
        return True
    ordered = sorted(side)
    low, high = ordered[(len(ordered) - 1) // 2], ordered[len(ordered) // 2]
    return x < low - cut or x > high + cut


def _isolated(xs: Sequence[float], m: int, sd: float) -> set[int]:
    """The points more than OUTLIER_SDS noise SDs from the median of their m − 1 neighbours on each side (on the one
    side they have, at an end of the series). A level has ≥ m points, so every one of its points has its own level
    on one side."""
    h, cut = m - 1, OUTLIER_SDS * sd
    candidates: set[int] = set()
    # A point apart from the median of up to h neighbours is apart from one of its ⌈h/2⌉ nearest: only those few
    # are looked at closely.
    for lag in range(1, (h + 1) // 2 + 1):
        for j, (a, b) in enumerate(zip(xs, xs[lag:], strict=False)):
            if abs(b - a) > cut:
                candidates.update((j, j + lag))
    return {i for i in candidates
            if _apart(xs[i], xs[max(0, i - h):i], cut) and _apart(xs[i], xs[i + 1:i + 1 + h], cut)}


def _apart_from_levels(xs: Sequence[float], aside: set[int], cps: list[int], sd: float) -> set[int]:
    """The points within NEAR points of a change that lie more than LEVEL_SDS noise SDs from the medians of both
    levels it separates (each level's points not set aside; each level's own noise SD when it has LEVEL_POINTS
    points or more, since noise often grows with the level, else the whole series')."""
    bounds, out = [0, *cps, len(xs)], set()
    for j, c in enumerate(cps):
        lo, hi = bounds[j], bounds[j + 2]
        sides = []
        for a, b in ((lo, c), (c, hi)):
            level = [xs[i] for i in range(a, b) if i not in aside]
            spread = _noise_sd(level) if len(level) >= LEVEL_POINTS else sd
            sides.append((_middle(sorted(level)), LEVEL_SDS * spread))
        (before, cut1), (after, cut2) = sides
        for i in range(max(lo, c - NEAR), min(hi, c + NEAR)):
            if i not in aside and abs(xs[i] - before) > cut1 and abs(xs[i] - after) > cut2:
                out.add(i)
    return out


def _on_kept(xs: Sequence[float], aside: set[int], m: int, alpha: float) -> list[tuple[int, float]]:
    """The changes of the points not set aside, at their indexes in `xs`: a level begins at a point that belongs to
    it, so a point set aside just before a change stays with the level before."""
    keep = [i for i in range(len(xs)) if i not in aside]
    return [(keep[j], p) for j, p in _split(xs if not aside else [xs[i] for i in keep], m, alpha)]


def _split(xs: Sequence[float], m: int, alpha: float) -> list[tuple[int, float]]:
    """The changes of `xs` and their p-values: the search of the module docstring (stages 1 to 4)."""
    n = len(xs)
    if n < 2 * m:
        return []
    pre = _Prefix(xs)
    intervals = _seeded_intervals(n, m)
    windows = _windows(n, m)
    family = sum(b - a - 2 * m + 1 for a, b in intervals) + len(windows)
    level = alpha / family
    z_cut = _normal_cut(level)
    # Stage 1: the best split of every seeded interval, and the middle of every window of 2·m points, kept when it
    # passes the family-wise threshold.
    found: list[tuple[float, float, int, int, int]] = []
    for a, b in intervals:
        tau, _ = pre.best_split(a, b, m)
        t = pre.t_stat(a, tau, b)
        if t < z_cut:  # Student's t has heavier tails than the normal: this cannot pass
            continue
        p = _two_sided(t, b - a - 2)
        if p <= level:
            found.append((p, -t, b - a, a, tau))
    w = 2 * m
    s1, s2 = pre.s1, pre.s2
    cut2 = z_cut * z_cut * 2.0 / (m * (w - 2))  # t ≥ z_cut ⇔ diff² ≥ cut2 · rss (when rss > 0)
    for a in windows:
        sum1, sum2 = s1[a + m] - s1[a], s1[a + w] - s1[a + m]
        diff = (sum1 - sum2) / m
        rss = s2[a + w] - s2[a] - (sum1 * sum1 + sum2 * sum2) / m
        if rss > 0 and diff * diff < cut2 * rss:  # cannot pass: skip the exact test
            continue
        t = pre.t_stat(a, a + m, a + w)
        if t < z_cut:
            continue
        p = _two_sided(t, w - 2)
        if p <= level:
            found.append((p, -t, w, a, a + m))
    found.sort()
    # Stage 2: greedy selection; a split that would leave a piece shorter than m is skipped.
    cps: list[int] = []
    for _p, _t, _len, _a, tau in found:
        if all(abs(tau - c) >= m for c in cps):
            cps.append(tau)
    cps.sort()
    if not cps:
        return []
    # Stage 3: binary segmentation inside the pieces (the other edge of an excursion, a nearby step).
    todo = _segments_of(n, cps)
    while todo:
        lo, hi = todo.pop()
        if hi - lo < 2 * m:
            continue
        tau, _ = pre.best_split(lo, hi, m)
        if _scan_p(pre.t_stat(lo, tau, hi), hi - lo - 2, hi - lo - 2 * m + 1) <= alpha:
            cps.append(tau)
            todo.extend(((lo, tau), (tau, hi)))
    cps.sort()
    # Stage 4: refine each split between its neighbours, prune the weakest until every change passes.
    p_values: list[float] = []
    while cps:
        for _ in range(3):
            moved = False
            for j in range(len(cps)):
                lo = cps[j - 1] if j else 0
                hi = cps[j + 1] if j + 1 < len(cps) else n
                tau, _ = pre.best_split(lo, hi, m)
                if tau != cps[j]:
                    cps[j], moved = tau, True
            if not moved:
                break
        p_values = []
        for j, c in enumerate(cps):
            lo = cps[j - 1] if j else 0
            hi = cps[j + 1] if j + 1 < len(cps) else n
            t = pre.t_stat(lo, c, hi)
            p_values.append(_scan_p(t, hi - lo - 2, hi - lo - 2 * m + 1))
        worst = max(range(len(cps)), key=lambda j: (p_values[j], -j))
        if p_values[worst] <= alpha:
            break
        del cps[worst]
    return list(zip(cps, p_values, strict=True)) if cps else []


def _segments_of(n: int, cps: list[int]) -> list[tuple[int, int]]:
    bounds = [0, *cps, n]
    return [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]


def median_level(values: Sequence[float]) -> Level:
    """The median of `values` with the narrowest order-statistic interval covering ≥ 95% ([min, max] if none)."""
    xs = sorted(values)
    n = len(xs)
    if n == 0:
        raise BadInput("a segment has no points")
    mid = n // 2
    median = xs[mid] if n % 2 else (xs[mid - 1] + xs[mid]) / 2
    # Largest k with P(Binomial(n, 1/2) < k) ≤ 2.5%: [x_(k), x_(n-k+1)] covers the median with ≥ 95%.
    k, tail, term = 0, 0.0, 0.5**n
    while k < n and tail + term <= 0.025:
        tail += term
        k += 1
        term *= (n - k + 1) / k
    if k == 0:  # too few points for 95%: [min, max]
        k, tail = 1, 0.5**n
    return Level(median, xs[k - 1], xs[n - k], 1.0 - 2 * tail, n)


def _check_params(min_segment: int, alpha: float) -> None:
    if isinstance(min_segment, bool) or not isinstance(min_segment, int) or min_segment < 2:
        raise BadInput(f"min_segment must be an integer ≥ 2, got {min_segment!r}")
    if not (isinstance(alpha, (int, float)) and 0.0 < alpha < 1.0):
        raise BadInput(f"alpha must be between 0 and 1, got {alpha!r}")


_NORMAL_CUTS: dict[float, float] = {}


def _normal_cut(level: float) -> float:
    """The two-sided normal quantile for `level`: a |t| below it cannot reach `level` under Student's t."""
    cut = _NORMAL_CUTS.get(level)
    if cut is None:
        lo, hi = 0.0, 40.0
        for _ in range(60):
            mid = (lo + hi) / 2
            if math.erfc(mid / math.sqrt(2)) > level:
                lo = mid
            else:
                hi = mid
        cut = _NORMAL_CUTS[level] = lo
    return cut
