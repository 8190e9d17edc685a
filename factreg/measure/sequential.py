"""Sequential verification: when one batch of samples cannot decide, measure another and judge again — with error
rates that hold however many times the verdict is looked at.

Looking at a t-test after every batch and stopping at the first p < α inflates the false-alarm rate (five looks at
α = 0.05 refute a true fact about 14% of the time; `bench/bench_sequential.py` measures it). So the looks share
one α between them: look k of `planned` is judged at the level that a **Pocock-type spending function** (Lan and
DeMets) releases between information fractions (k − 1)/planned and k/planned,

    α*(t) = α · ln(1 + (e − 1) · t),    α_k = α*(k / planned) − α*((k − 1) / planned),

and since the α_k add up to α, the chance of a false refutation over all looks is at most α (Bonferroni: no
assumption about how the batches correlate). The same α_k is the level of the two one-sided tests that confirm
(`judge.compare`), so a fact that is off by more than the tolerance is confirmed in at most α of runs too. Pocock's
shape spends α evenly: the first look keeps a level near α / planned · 1.3, so a claim 3× off is refuted at once.

A group is re-measured only for the facts still undecided because the **new** side was too noisy (the verdict
asked for more samples); a fact whose own interval is too wide, a failure, changed conditions or a decided
verdict stop at once. Batches are pooled; each look's verdict is the one that stands when the budget — a time
(`budget_s`) and the planned number of looks — runs out.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

DEFAULT_LOOKS = 6  # the first batch and up to five more
DEFAULT_BUDGET = 5.0  # more batches may take up to this many times the first batch's time …
MIN_BUDGET_S = 10.0  # … or this many seconds, whichever is longer: a first batch of a second would allow too few

R = TypeVar("R")


def spent(alpha: float, t: float) -> float:
    """α*(t) = α · ln(1 + (e − 1) t): the share of α a Pocock-type design has spent at information fraction t."""
    t = min(max(t, 0.0), 1.0)
    return alpha * math.log(1 + (math.e - 1) * t)


def look_alphas(alpha: float, planned: int) -> list[float]:
    """The level of each of `planned` looks (they add up to `alpha`); one look keeps the whole of it."""
    if planned <= 1:
        return [alpha]
    return [spent(alpha, k / planned) - spent(alpha, (k - 1) / planned) for k in range(1, planned + 1)]


@dataclass
class Looks:
    """What the looks of one group did: per fact, its batches' sizes and the level each look was judged at."""

    planned: int
    budget_s: float | None
    spent_s: float = 0.0
    batches: dict[str, list[int]] = field(default_factory=dict)
    alphas: dict[str, list[float]] = field(default_factory=dict)

    def as_json(self, fact_id: str) -> dict[str, Any]:
        return {
            "looks": len(self.alphas.get(fact_id, [])),
            "planned_looks": self.planned,
            "batches": self.batches.get(fact_id, []),
            "alpha_per_look": [round(a, 6) for a in self.alphas.get(fact_id, [])],
            "budget_s": None if self.budget_s is None else round(self.budget_s, 3),
            "spent_s": round(self.spent_s, 3),
        }


def run(
    ids: Sequence[str],
    measure: Callable[[Sequence[str]], Mapping[str, Any]],
    judge: Callable[[str, Any, float], R],
    pool: Callable[[Any, Any], Any],
    more: Callable[[R], bool],
    size: Callable[[Any], int],
    *,
    alpha: float,
    planned: int = DEFAULT_LOOKS,
    budget: float = DEFAULT_BUDGET,
    budget_s: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[dict[str, R], dict[str, Any], Looks]:
    """Measure `ids` in batches and judge them at each look's level until each is decided or the budget is spent.

    `measure(ids)` → id → measurement; `judge(id, measurement, alpha)` → verdict; `pool(a, b)` → both batches as
    one measurement; `more(verdict)` → whether another batch could decide it; `size(measurement)` → its n.
    The budget is `budget` × the first batch's time (at least `MIN_BUDGET_S`), or `budget_s` seconds when given.
    Returns the verdicts, the (pooled) measurements and what the looks did."""
    alphas = look_alphas(alpha, planned)
    started = clock()
    measured = dict(measure(ids))
    first_s = clock() - started
    default = max(budget * first_s, MIN_BUDGET_S)
    looks = Looks(planned, (budget_s if budget_s is not None else default) if planned > 1 else None)
    verdicts: dict[str, R] = {}
    for fid in ids:
        verdicts[fid] = judge(fid, measured[fid], alphas[0])
        looks.batches[fid] = [size(measured[fid])]
        looks.alphas[fid] = [alphas[0]]
    for k in range(1, planned):
        open_ids = [fid for fid in ids if more(verdicts[fid])]
        extra = clock() - started - first_s  # what the batches after the first have taken so far
        if not open_ids or looks.budget_s is None or extra + first_s > looks.budget_s:
            break  # decided, or another batch (as long as the first) would overrun the budget
        batch = measure(open_ids)
        for fid in open_ids:
            got = batch.get(fid)
            if got is None:
                continue
            measured[fid] = pool(measured[fid], got)
            verdicts[fid] = judge(fid, measured[fid], alphas[k])
            looks.batches[fid].append(size(got))
            looks.alphas[fid].append(alphas[k])
    looks.spent_s = clock() - started
    return verdicts, measured, looks
