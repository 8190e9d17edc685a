"""The interleaved control (measure/interleave.py): chunks, control-relative samples, pooling, and the verdicts
`speed.adjust` reaches with them. Fixed numbers, so every verdict is exact; the real llama-bench runs C M C … C
in tests/test_verify_control.py and bench/bench_confirm.py."""

from __future__ import annotations

import json
import math
import random

import pytest

from factreg.measure import control, interleave, looks, machine, speed
from factreg.measure import verify as engine
from factreg.measure.measurement import Measurement

SPEC = {"model": control.TINY_NAME, "threads": "1", "workload": "tiny tg64"}
IDENT = {"machine": "testhost", "model_filename": "tiny.gguf", "n_threads": "1"}


def ctl_data(chunks: list[tuple[int, float]], se: float = 0.01) -> dict:
    """A control condition of interleaved runs: (samples in the chunk, control value around it)."""
    values = [c for _n, c in chunks]
    return {"kind": "llama-bench-tiny", "spec": SPEC, "unit": "tok/s", "value": sum(values) / len(values),
            "samples": [v for v in values for _ in range(4)], "parts": values,
            interleave.KEY: [[n, c, se] for n, c in chunks]}  # fmt: skip


def drifting(level: float, speeds: list[float], per_chunk: int, cv: float, seed: int) -> tuple[list[float], list]:
    """Samples of a workload whose true rate is `level` × the machine's speed, the speed moving chunk by chunk."""
    rng = random.Random(seed)
    samples, chunks = [], []
    for pace in speeds:
        samples += [level * pace * (1 + rng.gauss(0, cv)) for _ in range(per_chunk)]
        chunks.append((per_chunk, 9000.0 * pace))
    return samples, chunks


def fact(samples: list[float], chunks: list, direction: str = "higher") -> dict:
    info = {control.KEY: json.dumps(ctl_data(chunks))}
    return {"id": "testhost/tiny/tg32", "version": 1, "metric": "tg_rate", "unit": "tok/s", "direction": direction,
            "value": sum(samples) / len(samples), "spread": None, "n": len(samples), "samples": list(samples),
            "tolerance": None, "conditions": {"identity": dict(IDENT), "info": info}}  # fmt: skip


def measured(samples: list[float], chunks: list) -> Measurement:
    observed = {**IDENT, control.KEY: json.dumps(ctl_data(chunks)),
                machine.KEY: machine.as_condition({"load1": 1.0, "ncpu": 2})}  # fmt: skip
    return Measurement(samples=list(samples), observed=observed)


def test_chunks_of_reads_explicit_chunks_the_old_before_after_pair_and_nothing_else():
    data = ctl_data([(5, 9000.0), (5, 8000.0)])
    assert [c.n for c in interleave.chunks_of(data, 10)] == [5, 5]
    assert [c.n for c in interleave.chunks_of(data, 5)] == [5]  # a last run that was not pooled is dropped
    assert interleave.chunks_of(data, 7) is None  # chunks that do not add up to the samples pair nothing
    old = {"samples": [9000.0, 9100.0, 8900.0, 9050.0], "parts": [9000.0, 8100.0], "value": 9000.0}
    [one] = interleave.chunks_of(old, 12)  # recorded before chunks were kept: one chunk, the geometric mean
    assert one.n == 12 and one.control == pytest.approx(math.sqrt(9000.0 * 8100.0))
    assert interleave.chunks_of({"samples": [9000.0], "value": 9000.0}, 5) is None  # borrowed: no parts
    assert interleave.chunks_of({interleave.KEY: [[5, -1, 0.01]]}, 5) is None
    assert interleave.chunks_of({interleave.KEY: [["5", 9000, 0.01]]}, 5) is None


def test_relative_samples_divide_a_rate_and_multiply_a_latency_by_their_own_chunks_control():
    data = ctl_data([(2, 10.0), (2, 20.0)])
    assert interleave.relative([100.0, 110.0, 200.0, 220.0], data, "higher") == [10.0, 11.0, 10.0, 11.0]
    assert interleave.relative([1.0, 1.1, 0.5, 0.55], data, "lower") == [10.0, 11.0, 10.0, 11.0]
    assert interleave.relative([1.0, 2.0, 3.0], data, "higher") is None


def test_the_relative_side_is_widened_by_the_controls_own_noise():
    samples = [100.0, 101.0, 99.0, 100.0]
    quiet = interleave.side(samples, {interleave.KEY: [[4, 10.0, 0.0]]}, "higher")
    noisy = interleave.side(samples, {interleave.KEY: [[4, 10.0, 0.05]]}, "higher")
    assert quiet is not None and noisy is not None and quiet.mean == noisy.mean == pytest.approx(10.0)
    assert quiet.sd == pytest.approx(0.08165, rel=1e-3)
    # the control's 5% error moves the whole chunk: SE of the mean ≥ 5% of it, whatever the samples' spread
    assert noisy.sd / math.sqrt(noisy.n) >= 0.05 * noisy.mean


def test_two_verification_batches_pool_their_controls_each_beside_its_samples():
    a = {**ctl_data([(3, 9000.0)]), "run_s": 1.0}
    b = {"kind": "llama-bench-tiny", "samples": [6000.0, 6100.0], "parts": [6000.0, 6100.0], "run_s": 2.0}
    both = interleave.pooled(a, 3, b, 4)
    assert [c[:2] for c in both[interleave.KEY]] == [[3, 9000.0], [4, pytest.approx(math.sqrt(6000 * 6100), 1e-3)]]
    assert both["run_s"] == 2.0 and len(both["samples"]) == 4 + 2
    pooled = looks.pool("llama-bench", measured([1.0, 2.0, 3.0], [(3, 9000.0)]),
                          measured([4.0, 5.0], [(2, 4500.0)]))  # fmt: skip
    assert interleave.relative(pooled.samples, control.parse(pooled.observed[control.KEY]), "higher") == \
        pytest.approx([1 / 9000, 2 / 9000, 3 / 9000, 4 / 4500, 5 / 4500])  # fmt: skip


SPEEDS_THEN = [1.0, 0.6, 1.3, 0.75]  # the machine's speed moving run by run: raw values spread ~30%
SPEEDS_NOW = [0.7, 1.25, 0.8, 1.1]


def test_drift_between_runs_cancels_and_a_true_fact_is_confirmed():
    old, old_chunks = drifting(8000.0, SPEEDS_THEN, 3, 0.02, seed=1)
    new, new_chunks = drifting(8000.0, SPEEDS_NOW, 3, 0.02, seed=2)
    res = engine.judge(fact(old, old_chunks), measured(new, new_chunks))
    assert res["as_measured"] == "inconclusive"  # as measured, the drift keeps it from a decision
    assert res["verdict"] == "confirmed" and res["decided_by"] == "control-relative"
    assert res["relative"]["verdict"] == "confirmed" and abs(res["relative"]["rel_diff"]) < 0.03
    assert res["message"].startswith("relative to the interleaved control:") and "held its speed" in res["message"]


def test_a_claim_twenty_percent_above_the_real_rate_is_refuted_through_the_drift():
    old, old_chunks = drifting(8000.0, SPEEDS_THEN, 3, 0.02, seed=3)
    new, new_chunks = drifting(8000.0, SPEEDS_NOW, 3, 0.02, seed=4)
    claim = [x * 1.2 for x in old]  # the same runs, their samples 20% higher: a claim above the real rate
    res = engine.judge(fact(claim, old_chunks), measured(new, new_chunks))
    assert res["verdict"] == "refuted", res["message"]
    assert res["relative"]["rel_diff"] == pytest.approx(-1 / 6, abs=0.03)


def test_a_machine_that_slowed_for_good_is_never_confirmed_by_its_control():
    # Everything on the machine runs 1.6× slower now: relative to the control the fact holds, but its value does
    # not — what a user reads in the doc is 8,000 tok/s and the machine gives 5,000.
    old, old_chunks = drifting(8000.0, [1.0, 1.02, 0.98, 1.0], 5, 0.02, seed=5)
    new, new_chunks = drifting(8000.0, [0.62, 0.63, 0.61, 0.625], 5, 0.02, seed=6)
    res = engine.judge(fact(old, old_chunks), measured(new, new_chunks))
    assert res["verdict"] == "inconclusive" and res["as_measured"] == "refuted"
    assert res["relative"]["verdict"] == "confirmed"
    assert "1.6× slower" in res["message"]


def test_a_machine_that_moved_confirms_a_fact_whose_value_is_still_inside_the_tolerance():
    # The fact was recorded while the machine's control ran 13% slow and the workload 8.5% slow; now both run at
    # their usual speed. Relative to the control the fact holds, and its value as measured is 9% off — inside
    # ±10%: what a user reads still holds, so the machine's move does not keep it from being confirmed.
    rng = random.Random(13)
    old = [8000.0 * 0.915 * (1 + rng.gauss(0, 0.03)) for _ in range(20)]
    old_chunks = [(5, 9000.0 * pace) for pace in (0.87, 0.88, 0.86, 0.87)]
    new = [8000.0 * (1 + rng.gauss(0, 0.03)) for _ in range(20)]
    new_chunks = [(5, 9000.0 * pace) for pace in (1.0, 1.01, 0.99, 1.0)]
    res = engine.judge(fact(old, old_chunks), measured(new, new_chunks))
    assert res["relative"]["verdict"] == "confirmed" and 0.05 < res["rel_diff"] <= 0.10
    assert res["as_measured"] == "inconclusive"  # as measured, the gap's interval reaches past +10%
    assert "ran 1.1× faster" in res["message"]  # the control moved beyond the tolerance
    assert res["verdict"] == "confirmed" and res["decided_by"] == "control-relative", res["message"]
    # The same move with the value 15% off as measured (the workload followed the machine): not confirmed.
    away = [8000.0 * 0.87 * (1 + rng.gauss(0, 0.03)) for _ in range(20)]
    res = engine.judge(fact(away, old_chunks), measured(new, new_chunks))
    assert res["relative"]["verdict"] == "confirmed" and res["verdict"] == "inconclusive", res["message"]


def test_a_confirmation_as_measured_is_withdrawn_when_relative_to_the_control_it_refutes():
    old, old_chunks = drifting(8000.0, [1.0] * 4, 5, 0.01, seed=7)
    new, _ = drifting(8000.0, [1.0] * 4, 5, 0.01, seed=8)
    now_chunks = [(5, 9000.0 * 0.7)] * 4  # the control ran 30% slower around runs that did not slow at all
    res = engine.judge(fact(old, old_chunks), measured(new, now_chunks))
    assert res["as_measured"] == "confirmed" and res["verdict"] == "inconclusive"
    assert res["relative"]["verdict"] == "refuted"


def test_a_refutation_that_rests_on_a_control_which_itself_moved_is_inconclusive():
    # Seen with SmolLM2's pp32 on a shared machine: the tiny control ran 34% slower in the verification while the
    # workload ran 6% slower. Relative to the control the model looks 42% faster, and as measured the runs are too
    # noisy to decide. The machine's own change is what would make the refutation, so it is not one.
    old, old_chunks = drifting(8000.0, [1.0, 0.8, 1.15, 0.9], 4, 0.02, seed=15)
    rng = random.Random(16)
    new = [8000.0 * 0.94 * pace * (1 + rng.gauss(0, 0.02)) for pace in (1.0, 0.8, 1.15, 0.9) for _ in range(4)]
    now_chunks = [(4, 9000.0 * 0.66 * pace) for pace in (1.0, 0.8, 1.15, 0.9)]
    res = engine.judge(fact(old, old_chunks), measured(new, now_chunks))
    assert res["relative"]["verdict"] == "refuted" and res["relative"]["rel_diff"] > 0.3
    assert res["as_measured"] == "inconclusive" and res["verdict"] == "inconclusive", res["message"]
    assert "only relative to the control does it differ" in res["message"] and "1.5× slower" in res["message"]
    # (with a control that held its speed, a difference seen only relative to it still refutes: the test of a claim
    # twenty percent above the real rate, above)


def test_a_refutation_whose_direction_flips_with_the_control_is_inconclusive():
    # Seen with SmolLM2's tg8 on a shared machine: as measured 19% faster than the fact (129 → 153 tok/s), while the
    # tiny control ran 1.45× faster (33.9k → 49.0k tok/s), so relative to it the model looked 23% slower. Both
    # comparisons are significant, in opposite directions: the machine's change decides even which way it differs.
    old, old_chunks = drifting(8000.0, [1.0, 0.98, 1.02, 1.0], 5, 0.02, seed=17)
    new, _ = drifting(8000.0 * 1.19, [1.0, 0.98, 1.02, 1.0], 5, 0.02, seed=18)
    now_chunks = [(5, 9000.0 * 1.55 * pace) for pace in (1.0, 0.98, 1.02, 1.0)]
    res = engine.judge(fact(old, old_chunks), measured(new, now_chunks))
    assert res["as_measured"] == "refuted" and res["rel_diff"] > 0.1
    assert res["relative"]["verdict"] == "refuted" and res["relative"]["rel_diff"] < -0.1
    assert res["verdict"] == "inconclusive" and res["decided_by"] == "control-relative", res["message"]
    assert "decides even the direction" in res["message"] and "1.6× faster" in res["message"]
    # The same control with the workload as slow as it looks relative to it (both ways slower): still refuted.
    slow, _ = drifting(8000.0 * 0.8, [1.0, 0.98, 1.02, 1.0], 5, 0.02, seed=19)
    res = engine.judge(fact(old, old_chunks), measured(slow, now_chunks))
    assert res["verdict"] == "refuted" and res["rel_diff"] < 0 and res["relative"]["rel_diff"] < 0, res["message"]


def test_a_fact_whose_own_relative_interval_is_wide_says_so_and_asks_for_no_new_samples():
    rng = random.Random(9)
    old = [8000.0 * (1 + rng.gauss(0, 0.25)) for _ in range(5)]  # -r 5 at CV 25%
    new, new_chunks = drifting(8000.0, [1.0] * 6, 10, 0.02, seed=10)
    res = engine.judge(fact(old, [(5, 9000.0)]), measured(new, new_chunks))
    assert res["verdict"] == "inconclusive"
    # (its sample drew 14% above the machine's rate: the fact's own interval can tell that from no difference
    # no better than it could confirm it)
    assert "the fact itself is too imprecise to tell a −14.3% difference from none" in res["message"]
    assert res["needed_n"] is None and "re-record the fact" in (engine.resolution(res) or "")


def test_a_control_lent_by_a_verification_pairs_none_of_the_facts_samples(registry):
    from sqlalchemy import insert

    from factreg.registry import facts
    from factreg.registry.facts import VERIFICATION, NewFact

    old, _ = drifting(8000.0, [1.0] * 4, 5, 0.02, seed=11)
    facts.record(registry, NewFact(id="testhost/tiny/tg32", metric="tg_rate", samples=old, identity=IDENT,
                                   method={"kind": "llama-bench", "args": ["-m", "tiny.gguf"]}))  # fmt: skip
    [f] = facts.list_facts(registry, {}, ids=["testhost/tiny/tg32"])
    lent = ctl_data([(10, 9000.0), (10, 4000.0)])  # the verification's own runs, as many samples as the fact
    with registry.write() as conn:
        conn.execute(insert(VERIFICATION), [{"fact_id": f["id"], "fact_version": 1, "method_kind": "llama-bench",
                                             "verified_at": "2026-11-30T11:00:00Z", "samples": "[]", "diff": "{}",
                                             "verdict": "confirmed", "observed": json.dumps({control.KEY: json.dumps(lent)})}])
    got = speed.with_baseline(registry, f)
    assert control.of_fact(got)["value"] == lent["value"]
    assert interleave.KEY not in control.of_fact(got) and "parts" not in control.of_fact(got)
    new, new_chunks = drifting(8000.0, [1.0] * 4, 5, 0.02, seed=12)
    res = engine.judge(got, measured(new, new_chunks))
    assert "relative" not in res and res["speed_factor"] is not None


def _with(chunks: list, **extra: float) -> str:
    return json.dumps({**ctl_data(chunks), **extra})


def test_a_busier_machine_never_refutes_as_slower_what_its_control_did_not_follow():
    # Beside three busy processes SmolLM2's tg16 ran 2–3.8× slower while the tiny control slowed only 1.2–1.4×:
    # relative to the control it looks 2× slower, but the measured runs themselves waited on a run-queue.
    old, old_chunks = drifting(50.0, [1.0] * 4, 5, 0.02, seed=13)
    new, _ = drifting(50.0 / 3, [1.0] * 4, 5, 0.02, seed=14)
    now_chunks = [(5, 9000.0 / 1.3)] * 4
    f = fact(old, old_chunks)
    f["conditions"]["info"][control.KEY] = _with(old_chunks, run_wait=0.05)
    busy = measured(new, now_chunks)
    busy.observed[control.KEY] = _with(now_chunks, run_wait=0.6)
    res = engine.judge(f, busy)
    assert res["relative"]["verdict"] == "refuted" and res["verdict"] == "inconclusive", res["message"]
    assert "the measured runs waited on a run-queue more than when the fact was recorded: 60%" in res["message"]
    quiet = measured(new, now_chunks)
    quiet.observed[control.KEY] = _with(now_chunks, run_wait=0.06)  # the runs themselves waited as they did
    assert engine.judge(f, quiet)["verdict"] == "refuted"
    faster = measured([x * 9 for x in new], now_chunks)  # 3× faster than the fact: co-runners do not explain that
    faster.observed[control.KEY] = _with(now_chunks, run_wait=0.6)
    assert engine.judge(f, faster)["verdict"] == "refuted"


def test_a_control_run_the_measured_runs_did_not_follow_widens_the_relative_side_and_refutes_nothing():
    # On a quiet machine one control run moved ±10% from the next while the measured runs beside it did not: the
    # fact's own chunks show it, and a verification of one chunk whose control ran 11% slow is not refuted by it.
    old, _ = drifting(8000.0, [1.0] * 4, 5, 0.02, seed=15)
    old_chunks = [(5, 9000.0 * k) for k in (1.0, 1.1, 0.92, 1.08)]  # the controls moved; the runs did not
    new, _ = drifting(8000.0, [1.0], 10, 0.02, seed=16)
    now_chunks = [(10, 9000.0 * 0.89)]
    f = fact(old, old_chunks)
    assert interleave.untracked((old, control.parse(f["conditions"]["info"][control.KEY]), "higher")) > 0.002
    res = engine.judge(f, measured(new, now_chunks))
    assert res["relative"]["verdict"] != "refuted" and res["verdict"] == "confirmed", res["message"]
    tracked, tracked_chunks = drifting(8000.0, SPEEDS_THEN, 3, 0.02, seed=17)  # the runs followed the controls
    assert interleave.untracked((tracked, control.parse(fact(tracked, tracked_chunks)["conditions"]["info"]
                                                        [control.KEY]), "higher")) < 0.0005


def test_two_runs_that_each_refute_relative_to_their_own_controls_reproduce_the_refutation():
    # The claim 20% above the real rate: both runs refute relative to their controls (−14% and −20%), and differ by
    # 6% from each other — sampling noise of two batches of five, not the machine's drift, which cancels there.
    def run(raw: float, rel: float, verdict: str) -> dict:
        return {"verdict": "refuted" if verdict == "refuted" else "inconclusive", "rel_diff": raw, "tolerance": 0.1,
                "message": "m", "relative": {"verdict": verdict, "rel_diff": rel}}

    both = looks.steady(run(-0.17, -0.14, "refuted"), run(-0.18, -0.20, "refuted"), 0)
    assert both["verdict"] == "refuted" and "each relative to its own interleaved control: -14% and -20%" in \
        both["message"]  # fmt: skip
    excused = looks.steady(run(-0.17, -0.08, "inconclusive"), run(-0.18, -0.16, "refuted"), 0)
    assert excused["verdict"] == "inconclusive" and "not steady" in excused["message"]  # the first run excused it
