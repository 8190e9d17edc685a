"""Facts precise enough to verify (measure/precision.py): repeated until the 95% interval meets the target, or the
budget is spent; what stops short is flagged `imprecise` and says what it reached."""

from __future__ import annotations

import pytest

from factreg.measure import precision
from tests.llamabench_support import llama_bench, tiny_model  # noqa: F401


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_the_half_width_is_the_t_interval_relative_to_the_mean():
    assert precision.half_width([10.0, 12.0, 8.0]) == pytest.approx(4.303 * 2 / 3**0.5 / 10, rel=1e-3)
    assert precision.half_width([5.0]) is None and precision.half_width([0.0, 0.0]) is None


def test_a_noisy_run_is_repeated_and_pooled_until_precise():
    clock = Clock()
    batches = iter([[100.0, 130.0, 70.0], [101.0, 99.0, 100.0] * 3, [100.0] * 30])

    def run():
        clock.t += 1.0
        return list(next(batches))

    got, runs = precision.until_precise(run, precision.half_width, lambda a, b: a + b, 0.05, budget=4, clock=clock)
    assert runs == 3 and len(got) == 42 and precision.half_width(got) <= 0.05  # 12 samples were still ±8%


def test_the_budget_stops_the_runs_and_the_fact_says_what_it_would_take():
    clock = Clock()

    def run():
        clock.t += 1.0
        return [100.0, 160.0, 40.0]

    got, runs = precision.until_precise(run, precision.half_width, lambda a, b: a + b, 0.05, budget=2, clock=clock)
    assert runs == 3 and len(got) == 9  # the first run and two more: a fourth would pass 2× the first run's time
    text = precision.describe(got, 0.05)
    assert text.startswith("±") and "at n=9 (target ±5%: about n=" in text
    assert precision.samples_needed(got, 0.05) > 9


def test_the_target_is_half_the_tolerance_unless_the_config_says(tmp_path):
    class S:
        def __init__(self, data):
            self.data = data

        def get(self, key, default=None):
            return self.data.get(key, default)

    assert precision.target(None) == 0.05
    assert precision.target(S({"verify.tolerance": 0.2})) == 0.1
    assert precision.target(S({"verify.tolerance": 0.2, "record.precision": 0.03})) == 0.03


@pytest.mark.llama
def test_bench_repeats_llama_bench_until_precise_or_flags_the_fact(cli, tiny_model):  # noqa: F811
    r = cli("bench", "--json", "--", "-m", str(tiny_model), "-p", "0", "-n", "16", "-r", "5", "-t", "1")
    assert r.exit_code == 0, r.stderr
    [fact] = r.json()
    reached = precision.half_width(fact["samples"])
    assert reached is not None
    said = fact["conditions"]["info"][precision.KEY]
    assert said.startswith(f"±{reached * 100:.1f}% at n={fact['n']} (target ±5%")
    if fact["n"] == 5:  # one run was enough
        assert reached <= 0.05 and "imprecise" not in fact["flags"]
    else:  # run again, repetitions pooled: precise, or stopped by the budget and flagged
        assert fact["n"] % 5 == 0 and f", {fact['n'] // 5} runs" in said
        assert ("imprecise" in fact["flags"]) == (reached > 0.05)
