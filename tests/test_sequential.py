"""Sequential verification (measure/sequential.py): the looks' levels, when another batch is measured, the budget.

The error rates themselves over 10,000 simulated runs per case are in bench/bench_sequential.py."""

from __future__ import annotations

import random

import pytest

from factreg.measure import judge as judging
from factreg.measure import sequential
from factreg.stats.verdict import Side


def test_the_looks_share_one_alpha_and_one_look_keeps_it_all():
    alphas = sequential.look_alphas(0.05, 6)
    assert sum(alphas) == pytest.approx(0.05) and len(alphas) == 6
    assert all(a > 0 for a in alphas) and alphas[0] > alphas[-1]  # Pocock's shape: front-loaded a little
    assert alphas[0] == pytest.approx(0.05 * 0.2517, rel=1e-3)
    assert sequential.look_alphas(0.05, 1) == [0.05]


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def _sim(true_rel: float, cv: float, seed: int, planned: int, budget: float, clock: Clock):
    """One fact of 40 precise samples at 100, re-measured in batches of 5 at 100 × (1 + true_rel)."""
    rng = random.Random(seed)
    old = Side(100.0, 1.0, 40)

    def measure(ids):
        clock.t += 1.0  # each batch takes a second
        return {i: [rng.gauss(100 * (1 + true_rel), 100 * cv) for _ in range(5)] for i in ids}

    def judge(_fid, xs, alpha):
        return judging.compare(old, judging.new_side(xs, None, None, None), 0.10, alpha)

    return sequential.run(["f"], measure, judge, pool=lambda a, b: a + b,
                          more=lambda o: o.verdict == "inconclusive" and o.needed_n is not None,
                          size=len, alpha=0.05, planned=planned, budget=budget, clock=clock)


def test_a_noisy_batch_is_measured_again_until_decided():
    clock = Clock()
    verdicts, pooled, looks = _sim(0.0, 0.15, seed=3, planned=6, budget=5, clock=clock)
    assert len(looks.batches["f"]) > 1 and len(pooled["f"]) == 5 * len(looks.batches["f"])
    assert looks.alphas["f"] == sequential.look_alphas(0.05, 6)[: len(looks.batches["f"])]
    assert verdicts["f"].verdict in ("confirmed", "inconclusive")


def test_a_claim_far_off_is_refuted_at_the_first_look():
    verdicts, _, looks = _sim(2.0, 0.05, seed=1, planned=6, budget=5, clock=Clock())
    assert verdicts["f"].verdict == "refuted" and looks.batches["f"] == [5]


def _never_decided(batch_s: float, planned: int, budget: float):
    """`sequential.run` of a verdict that never decides, each batch (one sample) taking `batch_s` seconds."""
    clock = Clock()

    def measure(ids):
        clock.t += batch_s
        return {i: [1.0] for i in ids}

    undecided = judging.Outcome("inconclusive", 0.5, 0.0, 99, "too noisy")
    return sequential.run(["f"], measure, lambda _f, _m, _a: undecided, pool=lambda a, b: a + b,
                          more=lambda o: True, size=len, alpha=0.05, planned=planned, budget=budget, clock=clock)


def test_the_budget_bounds_the_batches():
    # A verdict that never decides: batches stop when one more (as long as the first) would pass the budget.
    _, pooled, looks = _never_decided(10.0, planned=6, budget=2)
    assert looks.batches["f"] == [1, 1, 1] and pooled["f"] == [1.0, 1.0, 1.0]
    assert looks.spent_s == 30.0 and looks.budget_s == 20.0 and looks.as_json("f")["looks"] == 3


def test_a_quick_first_batch_still_has_the_minimum_budget():
    # A tiny model's batch takes a second: 5× that would leave room for four batches of five samples, too few to
    # confirm a ±10% claim at CV 8%. The budget is at least MIN_BUDGET_S.
    _, _, looks = _never_decided(1.0, planned=20, budget=2)
    assert looks.budget_s == sequential.MIN_BUDGET_S == 10.0
    assert looks.batches["f"] == [1] * 11 and looks.spent_s == 11.0  # the last batch starts within it, as above


def test_one_planned_look_is_one_batch_at_the_full_level():
    _, _, looks = _sim(0.0, 0.5, seed=2, planned=1, budget=5, clock=Clock())
    assert looks.batches["f"] == [5] and looks.alphas["f"] == [0.05] and looks.budget_s is None


def test_a_server_kept_from_a_cpu_is_not_measured_again_for_more_samples():
    # More batches beside the same co-runners would measure them, not the server (measure/endpoint.py `denied`).
    from factreg.measure import looks

    noisy = {"verdict": "inconclusive", "needed_n": 12}
    assert looks.needs_more(noisy)
    assert not looks.needs_more({**noisy, "denied": {"share": 0.06, "side": "now", "verdict": "refuted"}})
    assert not looks.needs_more({"verdict": "inconclusive", "needed_n": None})
