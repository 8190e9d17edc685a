"""Verdict statistics: Welch/one-sample tests against scipy, tolerance, power and the n needed."""

from __future__ import annotations

import pytest
from scipy import stats as sps

from factreg.measure import judge
from factreg.stats.verdict import Side, compare


class FakeSettings:
    def __init__(self, data):
        self.data = data

    def get(self, dotted, default=None):
        node = self.data
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node


def side(xs):
    return judge.new_side(xs, None, None, None)


def test_case_study_28_vs_measured_is_refuted():
    # The skill doc's 28 tok/s (no spread) against llama-bench's 11.9 ± 7.2, n=5.
    new = [4.0, 6.0, 11.0, 18.5, 20.0]
    out = compare(Side(28.0, None, None), side(new), 0.10, unit="tok/s")
    assert out.verdict == "refuted"
    assert out.p_value == pytest.approx(sps.ttest_1samp(new, 28.0).pvalue, rel=1e-6)
    assert out.rel_diff == pytest.approx(11.9 / 28 - 1)
    assert "outside tolerance ±10%" in out.message and "11.9 ± 7.2 tok/s" in out.message


def test_welch_matches_scipy():
    old, new = [29.0, 28.0, 27.0, 28.5], [12.0, 9.0, 15.0, 11.0, 13.5]
    out = compare(side(old), side(new), 0.10)
    assert out.p_value == pytest.approx(sps.ttest_ind(old, new, equal_var=False).pvalue, rel=1e-6)
    assert out.verdict == "refuted"


def test_welch_from_summary_statistics_when_the_fact_has_no_samples():
    new = [10.1, 10.3, 9.9, 10.2, 10.0]
    out = compare(Side(14.0, 0.5, 5), side(new), 0.10)
    ref = sps.ttest_ind_from_stats(14.0, 0.5, 5, sum(new) / 5, side(new).sd, 5, equal_var=False)
    assert out.p_value == pytest.approx(ref.pvalue, rel=1e-6)
    assert out.verdict == "refuted"


def test_significant_but_inside_tolerance_is_confirmed():
    old = [100.0, 100.5, 99.5, 100.2, 99.8, 100.1]
    new = [104.0, 104.5, 103.5, 104.2, 103.8, 104.1]
    out = compare(side(old), side(new), 0.10)
    assert out.p_value < 0.001
    assert out.verdict == "confirmed" and "equivalent within tolerance ±10% (90% interval of the difference +3" \
        in out.message


def test_outside_tolerance_but_not_significant_with_few_noisy_samples_is_inconclusive():
    # 3 very noisy samples of the fact itself: no number of new samples can confirm it, and the verdict says so.
    old = [5.0, 12.0, 19.0]
    new = [11.0, 13.5, 10.0, 12.5, 11.5]
    out = compare(side(old), side(new), 0.10)
    assert out.verdict == "inconclusive"
    assert out.p_value > 0.05
    assert out.needed_n is None
    assert "the fact itself is too imprecise to confirm within tolerance ±10%: its own interval is ±" in out.message
    assert "re-record it with more samples" in out.message


def test_a_fact_recorded_with_r5_at_cv_22_percent_is_too_imprecise_not_a_call_for_n_61():
    # The case: 7,615 ± 1,681 tok/s, n = 5 (CV 22%), re-measured a minute later.
    out = compare(Side(7615.0, 1681.0, 5), Side(7400.0, 1500.0, 5), 0.10)
    assert out.verdict == "inconclusive" and out.needed_n is None and "need n ≥" not in out.message
    assert "the fact itself is too imprecise" in out.message and "(n=5)" in out.message


def test_needed_n_is_enough_to_confirm():
    # A precise fact, a noisy new measurement and no difference: the n the verdict asks for confirms.
    old = Side(12.0, 0.5, 50)
    first = compare(old, Side(12.0, 4.0, 5), 0.10)
    assert first.verdict == "inconclusive" and "need n ≥" in first.message
    n = first.needed_n
    assert n is not None and n > 5
    assert compare(old, Side(12.0, 4.0, n), 0.10).verdict == "confirmed"


def test_quiet_samples_and_no_difference_confirm():
    old = [50.0, 50.5, 49.5, 50.2, 49.8]
    new = [50.1, 49.7, 50.4, 49.9, 50.3]
    out = compare(side(old), side(new), 0.10)
    assert out.verdict == "confirmed" and out.p_value > 0.05


def test_faster_than_claimed_also_refutes():
    out = compare(side([10.0, 10.2, 9.8, 10.1]), side([20.0, 20.3, 19.8, 20.1]), 0.10)
    assert out.verdict == "refuted" and out.rel_diff == pytest.approx(1.0, rel=0.01)


def test_one_new_sample_cannot_be_tested():
    out = compare(Side(10.0, 1.0, 5), side([9.0]), 0.10)
    assert out.verdict == "inconclusive" and out.needed_n == 2


def test_tolerance_precedence():
    fact = {"metric": "tg_rate", "tolerance": None}
    assert judge.tolerance_for(fact) == 0.10
    cfg = FakeSettings({"verify": {"tolerance": 0.2}})
    assert judge.tolerance_for(fact, cfg) == 0.2
    cfg = FakeSettings({"verify": {"tolerance": 0.2, "tolerance_by_metric": {"tg_rate": 0.3}}})
    assert judge.tolerance_for(fact, cfg) == 0.3
    assert judge.tolerance_for({**fact, "metric": "ttft"}, cfg) == 0.2
    assert judge.tolerance_for({**fact, "tolerance": 0.05}, cfg) == 0.05


def test_a_wider_tolerance_turns_a_refute_into_a_confirm():
    old, new = side([10.0, 10.1, 9.9, 10.0]), side([12.0, 12.1, 11.9, 12.0])
    assert compare(old, new, 0.10).verdict == "refuted"
    assert compare(old, new, 0.25).verdict == "confirmed"


def test_mann_whitney_cannot_reach_significance_with_3_vs_3():
    # Why the t-test: with 3 vs 3 even completely separated samples give p = 0.1 with Mann-Whitney.
    p = sps.mannwhitneyu([1.0, 2.0, 3.0], [10.0, 11.0, 12.0], alternative="two-sided", method="exact").pvalue
    assert p == pytest.approx(0.1)
    assert compare(side([1.0, 2.0, 3.0]), side([10.0, 11.0, 12.0]), 0.10).verdict == "refuted"


def test_condition_message():
    diff = {"build_commit": ["8cf427ff", "1a2b3c4"], "gpu_driver": [None, "550.54"]}
    assert judge.condition_message(diff) == "build_commit 8cf427ff → 1a2b3c4; gpu_driver ∅ → 550.54"


def test_a_noisy_new_side_outside_the_tolerance_asks_for_new_samples_not_a_new_fact():
    # A precise fact (±0.3%, n = 20) and a noisy re-run 21% below it: the gap is outside the tolerance but not
    # significant. The fact's own interval is no obstacle to telling it — more new samples are, and the verdict asks
    # for them (it used to blame the fact's "±0%" interval and stop the looks).
    old = [100.0, 100.5, 99.5, 100.2, 99.8] * 4
    new = [40.0, 100.0, 70.0, 130.0, 55.0]
    out = compare(side(old), side(new), 0.10)
    assert out.verdict == "inconclusive" and out.needed_n is not None and out.needed_n > 5
    assert "outside tolerance ±10% but not significant" in out.message and "too imprecise" not in out.message
    assert f"need n ≥ {out.needed_n} new samples (have 5)" in out.message


def test_a_precise_fact_at_the_edge_of_the_tolerance_is_not_blamed_for_its_imprecision():
    # A fact recorded within ±1% and a new value 9.6% above it: nothing short of both sides' samples deciding
    # which side of +10% the truth lies would settle it — the fact meets the precision it is recorded to.
    old = [100.0, 101.0, 99.0, 100.5, 99.5] * 4
    new = [109.6, 111.1, 110.1, 109.6, 108.6] * 4
    out = compare(side(old), side(new), 0.10)
    assert out.verdict == "inconclusive" and out.needed_n is None and "too imprecise" not in out.message
    assert "+9.8%, significant (p=" in out.message and "at the edge of the tolerance ±10%" in out.message
    # Inside the tolerance and significant is never worded "not significant".
    near = compare(side(old), side([104.0, 112.0, 106.0, 110.0, 108.0]), 0.10)
    assert near.verdict == "inconclusive" and near.p_value < 0.05
    assert "significant (p=" in near.message and "not significant" not in near.message, near.message
