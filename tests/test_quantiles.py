"""Quantile statistics: percentiles and binomial tails against numpy/scipy, interval coverage, the small-n rule,
the test of a recorded percentile, ITL/TPOT, SLO parsing, goodput and capacity."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
import scipy.stats as sps
from hypothesis import given, settings
from hypothesis import strategies as st

from factreg.errors import BadInput, FactregError, UsageError
from factreg.measure import latency
from factreg.measure import slo as S
from factreg.stats import quantiles as Q
from factreg.verdicts import Verdict

LOGNORMAL = sps.lognorm(s=0.5, scale=0.4)  # a TTFT-like distribution: median 0.4 s, long right tail


def exact_sample(dist, n: int) -> list[float]:
    """n "perfect" samples: the distribution's quantiles at (i − 0.5)/n, deterministic."""
    return [float(x) for x in dist.ppf((np.arange(n) + 0.5) / n)]


# --- percentile ---------------------------------------------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(
    xs=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=40),
    q=st.floats(0.0, 1.0),
)
def test_percentile_is_numpy_default_linear(xs, q):
    assert Q.percentile(xs, q) == pytest.approx(float(np.quantile(xs, q)), rel=1e-12, abs=1e-9)


def test_percentile_by_hand_is_type_7_not_nearest_rank():
    # Position (n − 1)·q = 2.7: 3 + 0.7·(4 − 3). Nearest rank would give 4.
    assert Q.percentile([4, 1, 3, 2], 0.9) == pytest.approx(3.7)
    assert Q.percentile([4, 1, 3, 2], 0.0) == 1 and Q.percentile([4, 1, 3, 2], 1.0) == 4
    assert Q.percentile([7.5], 0.99) == 7.5


@pytest.mark.parametrize(
    "samples, q, error, words",
    [
        ([1.0, 2.0], 90, UsageError, "q is a fraction: 0.9 for p90"),
        ([1.0, 2.0], -0.1, UsageError, "must be in [0, 1]"),
        ([], 0.5, BadInput, "no samples"),
        ([1.0, float("nan")], 0.5, BadInput, "finite"),
        ([1.0, "2"], 0.5, BadInput, "numbers"),
    ],
)
def test_percentile_bad_input_is_one_line_error(samples, q, error, words):
    with pytest.raises(error) as info:
        Q.percentile(samples, q)
    assert words in str(info.value) and "\n" not in str(info.value)


# --- exact binomial tails -----------------------------------------------------------------------------------

TAIL_CASES = [
    (1, 0.5, 0),
    (10, 0.3, 2),
    (100, 0.9, 85),
    (100, 0.9, 97),
    (1000, 0.01, 20),
    (1000, 0.99, 975),
    (20, 0.9, 0),
    (100_000, 0.1, 10_100),
    (100_000, 0.1, 9_000),  # a tail of 1e-27: summed in log space, no underflow to 0
    (100_000, 0.99, 98_950),
    (100_000, 0.5, 50_000),
    (100_000, 0.9, 91_500),  # 1e-100 far out
]


@pytest.mark.parametrize("n, p, k", TAIL_CASES)
def test_binomial_tails_match_scipy(n, p, k):
    le, ge = Q.binom_le(k, n, p), Q.binom_ge(k, n, p)
    assert le == pytest.approx(sps.binom.cdf(k, n, p), rel=1e-8, abs=1e-300)
    assert ge == pytest.approx(sps.binom.sf(k - 1, n, p), rel=1e-8, abs=1e-300)
    # The one-sided p-values of scipy's exact binomial test are these tails.
    assert ge == pytest.approx(sps.binomtest(k, n, p, alternative="greater").pvalue, rel=1e-8, abs=1e-300)
    assert le == pytest.approx(sps.binomtest(k, n, p, alternative="less").pvalue, rel=1e-8, abs=1e-300)


def _exact_tail(lo: int, hi: int, n: int, p: float) -> float:
    """P(lo ≤ K ≤ hi) for K ~ Binomial(n, p), in exact rational arithmetic (a float is a rational), rounded once."""
    from fractions import Fraction
    from math import comb

    q = Fraction(p)
    return float(sum(comb(n, j) * q**j * (1 - q) ** (n - j) for j in range(max(lo, 0), min(hi, n) + 1)))


def _matches(mine: float, scipy_value: float, exact) -> bool:  # type: ignore[no-untyped-def]
    """Within 1e-9 of scipy; where scipy itself drifts (far tails, below about 1e-250, it can be off by 3e-9:
    n=270, p=3/64, P(K ≥ 236) = 7.7682819808448e-272 exactly, scipy 7.76828200528e-272), within 1e-12 of the exact
    value."""
    if mine == pytest.approx(scipy_value, rel=1e-9, abs=1e-290):
        return True
    return mine == pytest.approx(exact(), rel=1e-12, abs=0)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 3000), p=st.floats(0.001, 0.999), frac=st.floats(0.0, 1.0))
def test_binomial_tails_match_scipy_anywhere(n, p, frac):
    k = round(frac * n)
    assert _matches(Q.binom_le(k, n, p), sps.binom.cdf(k, n, p), lambda: _exact_tail(0, k, n, p))
    assert _matches(Q.binom_ge(k, n, p), sps.binom.sf(k - 1, n, p), lambda: _exact_tail(k, n, n, p))


def test_a_far_tail_where_scipy_drifts_is_exact() -> None:
    # found by the property test above: scipy is 3e-9 off here, factreg 1e-13
    exact = _exact_tail(236, 270, 270, 0.046875)
    assert Q.binom_ge(236, 270, 0.046875) == pytest.approx(exact, rel=1e-12, abs=0)
    assert sps.binom.sf(235, 270, 0.046875) != pytest.approx(exact, rel=1e-9, abs=0)
    assert Q.binom_le(235, 270, 0.046875) == pytest.approx(1.0 - exact, rel=1e-15)


def test_binomial_tail_edges():
    assert Q.binom_le(-1, 10, 0.5) == 0.0 and Q.binom_le(10, 10, 0.5) == 1.0
    assert Q.binom_ge(0, 10, 0.5) == 1.0 and Q.binom_ge(11, 10, 0.5) == 0.0
    assert Q.binom_ge(1, 10, 0.0) == 0.0 and Q.binom_le(9, 10, 1.0) == 0.0


def _least_cpu(work, repeats: int = 3) -> float:  # type: ignore[no-untyped-def]
    """The least CPU time of `repeats` runs of `work()`: the least noisy of them on a busy machine."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return min(times)


@pytest.mark.alone
def test_binomial_tails_stop_early_at_n_100000():
    """A tail sums its terms only until they stop counting (about √n of them): 100× the n costs about 10× the CPU,
    never the 100× that summing every term would (growth as a ratio, no time limit)."""
    def tails(n: int):  # type: ignore[no-untyped-def]
        return lambda: [Q.binom_ge(k * n // 1000, n, 0.1) for k in range(90, 110, 1) for _ in range(5)]

    small, large = _least_cpu(tails(1_000)), _least_cpu(tails(100_000))
    assert large < 40 * max(small, 1e-4), (small, large)


# --- intervals and summary ----------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [5, 20, 36, 100, 367, 368, 1000, 2500])
@pytest.mark.parametrize("q", [0.5, 0.9, 0.95, 0.99])
def test_interval_is_scipys_order_statistic_interval(n, q):
    xs = sorted(float(x) for x in np.random.default_rng(n).lognormal(0.0, 0.5, n))
    ours = Q.estimate(xs, q)
    ref = sps.quantile_test(xs, q=0.0, p=q).confidence_interval(0.95)
    assert (ours.low, ours.high) == (
        None if math.isnan(ref.low) else ref.low,
        None if math.isnan(ref.high) else ref.high,
    )


def test_interval_coverage_of_p90_on_a_lognormal():
    # 400 fixed-seed trials of n = 500: the 95% interval must cover the true p90 in 93–97% of them, and its exact
    # coverage (from the binomial law of the ranks) is at least 95%.
    n, q, trials = 500, 0.9, 400
    true_p90 = float(LOGNORMAL.ppf(q))
    rng = np.random.default_rng(20240)
    covered = 0
    for _ in range(trials):
        e = Q.estimate(LOGNORMAL.rvs(size=n, random_state=rng).tolist(), q)
        assert e.low is not None and e.high is not None
        covered += e.low <= true_p90 <= e.high
    assert 0.93 <= covered / trials <= 0.97
    lo, hi = Q.interval_ranks(n, q)
    exact = sps.binom.cdf(hi - 1, n, q) - sps.binom.cdf(lo - 1, n, q)
    assert 0.95 <= exact < 0.97


def test_summary_gives_four_percentiles_with_intervals():
    xs = np.random.default_rng(7).lognormal(-1.0, 0.5, 1000).tolist()
    s = Q.summary(xs)
    assert [e.label for e in s.estimates] == ["p50", "p90", "p95", "p99"]
    for e in s.estimates:
        assert e.value == pytest.approx(np.quantile(xs, e.q))
        assert e.low is not None and e.high is not None and e.low <= e.value <= e.high
    assert s["p99"].enough and s.as_dict()["p90"]["ci95"] == [s["p90"].low, s["p90"].high]


def test_summary_of_few_samples_leaves_the_tail_unbounded():
    s = Q.summary([0.31, 0.35, 0.42, 0.38, 0.9])
    assert s["p99"].high is None and s["p90"].high is None
    assert not s["p50"].enough and not s["p99"].enough


# --- how many samples ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "q, need", [(0.5, 20), (0.9, 100), (0.95, 200), (0.99, 1000), (0.999, 10_000), (0.1, 100), (0.01, 1000)]
)
def test_min_samples_is_ten_beyond_the_quantile(q, need):
    assert Q.min_samples(q) == need
    assert Q.enough_for(q, need) and not Q.enough_for(q, need - 1)
    # At the rule's n the 95% interval is bounded on both sides, with room beyond it.
    lo, hi = Q.interval_ranks(need, q)
    assert lo > 1 and hi < need


def test_bare_minimum_for_a_bounded_interval_is_below_the_rule():
    # q^n ≤ 2.5%: p90 first gets a finite upper end at n = 36, p99 at n = 368; the rule asks for more.
    assert Q.interval_ranks(35, 0.9)[1] == 36 and Q.interval_ranks(36, 0.9)[1] == 36
    assert Q.interval_ranks(367, 0.99)[1] == 368 and Q.interval_ranks(368, 0.99)[1] == 368


def test_shortfall_message():
    assert Q.shortfall(0.99, 1000) is None
    assert Q.shortfall(0.99, 120) == "p99 needs n ≥ 1000 (at least 10 samples above it); have 120"
    assert Q.shortfall(0.1, 50) == "p10 needs n ≥ 100 (at least 10 samples below it); have 50"
    assert "no n is enough" in (Q.shortfall(1.0, 10**6) or "") and not Q.enough_for(1.0, 10**6)


# --- verifying a recorded percentile ------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    xs=st.lists(st.integers(1, 30).map(lambda i: i / 10), min_size=1, max_size=300),  # ties with X on purpose
    x=st.integers(1, 30).map(lambda i: i / 10),
    q=st.sampled_from([0.5, 0.9, 0.95, 0.99]),
)
def test_quantile_test_p_values_match_scipy(xs, x, q):
    check = Q.verify_quantile(x, q, xs)
    for alternative, ours in (("greater", check.p_above), ("less", check.p_below), ("two-sided", check.p_two_sided)):
        ref = sps.quantile_test(xs, q=x, p=q, alternative=alternative).pvalue
        assert ours == pytest.approx(ref, rel=1e-9, abs=1e-300), alternative


def test_exceedances_are_binomial_n_one_minus_q():
    xs = exact_sample(LOGNORMAL, 200)
    x = float(LOGNORMAL.ppf(0.85))
    check = Q.verify_quantile(x, 0.9, xs)
    above = sum(v > x for v in xs)
    assert check.above == above == 30
    ref = sps.binomtest(above, 200, 0.1, alternative="greater").pvalue
    assert check.p_above == pytest.approx(ref, rel=1e-9)


def test_verdict_refuted_when_significant_and_outside_tolerance():
    # Fact: p90 of ttft is 0.5 s. New run: a slower server whose true p90 is 0.65 s.
    slower = sps.lognorm(s=0.5, scale=0.65 / math.exp(0.5 * sps.norm.ppf(0.9)))
    check = Q.verify_quantile(0.5, 0.9, exact_sample(slower, 300), unit="s")
    assert check.verdict == Verdict.REFUTED
    assert check.p_value == check.p_two_sided < 0.05
    assert check.outcome.rel_diff == pytest.approx(0.3, abs=0.02)
    assert "outside tolerance ±10% and significant" in check.outcome.message
    assert f"{check.above} of 300 new samples above 0.500 s (30 expected)" in check.outcome.message
    # The same data refutes the bound "p90 ≤ 0.5 s", on the one-sided p-value.
    bound = Q.verify_quantile(0.5, 0.9, exact_sample(slower, 300), claim="at_most")
    assert bound.verdict == Verdict.REFUTED and bound.p_value == bound.p_above < check.p_two_sided


def test_faster_server_refutes_the_number_but_confirms_the_bound():
    x = 0.5
    faster = sps.lognorm(s=0.5, scale=0.3 / math.exp(0.5 * sps.norm.ppf(0.9)))  # true p90 0.3 s
    xs = exact_sample(faster, 400)
    assert Q.verify_quantile(x, 0.9, xs).verdict == Verdict.REFUTED
    bound = Q.verify_quantile(x, 0.9, xs, claim="at_most")
    assert bound.verdict == Verdict.CONFIRMED and bound.p_value == bound.p_above > 0.5


def test_verdict_confirmed_needs_the_interval_inside_the_tolerance():
    x = float(LOGNORMAL.ppf(0.9))
    check = Q.verify_quantile(x, 0.9, exact_sample(LOGNORMAL, 2000))
    assert check.verdict == Verdict.CONFIRMED
    assert check.new.low is not None and check.new.high is not None
    assert x * 0.9 <= check.new.low and check.new.high <= x * 1.1
    # Same data, a tolerance narrower than the interval: not confirmed, and it says how many samples would do.
    tight = Q.verify_quantile(x, 0.9, exact_sample(LOGNORMAL, 2000), tolerance=0.01)
    assert tight.verdict == Verdict.INCONCLUSIVE
    assert tight.outcome.needed_n is not None and tight.outcome.needed_n > 2000
    assert f"need n ≥ {tight.outcome.needed_n}" in tight.outcome.message


def test_significant_but_inside_tolerance_confirms_with_enough_samples():
    # True p90 4% above the fact: 20,000 samples see the difference (p tiny) but it is inside ±10%.
    x = float(LOGNORMAL.ppf(0.9)) / 1.04
    check = Q.verify_quantile(x, 0.9, exact_sample(LOGNORMAL, 20_000))
    assert check.p_value < 1e-6
    assert check.verdict == Verdict.CONFIRMED


def test_few_samples_never_confirm_but_can_refute():
    x = float(LOGNORMAL.ppf(0.9))
    few = Q.verify_quantile(x, 0.9, exact_sample(LOGNORMAL, 20))
    assert few.verdict == Verdict.INCONCLUSIVE
    assert few.outcome.message.endswith("(2 expected): p90 needs n ≥ 100 (at least 10 samples above it); have 20")
    # 20 of 20 requests slower than the recorded p90: P = 0.1^20, refuted whatever n.
    slow = Q.verify_quantile(0.5, 0.9, [0.8 + i / 100 for i in range(20)])
    assert slow.verdict == Verdict.REFUTED and slow.p_above == pytest.approx(1e-20, rel=1e-9)


def test_quantile_test_size_under_h0_is_at_most_alpha():
    # The test is exact: with the fact true, p < 0.05 in about 5% of runs (a little less: discreteness).
    rng = np.random.default_rng(11)
    x = float(LOGNORMAL.ppf(0.9))
    rejected = sum(
        Q.verify_quantile(x, 0.9, LOGNORMAL.rvs(size=300, random_state=rng).tolist()).p_value < 0.05 for _ in range(400)
    )
    assert 0.02 <= rejected / 400 <= 0.07


def test_verify_quantile_bad_input():
    with pytest.raises(UsageError, match="claim 'below' must be one of"):
        Q.verify_quantile(0.5, 0.9, [0.4], claim="below")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"must be in \(0, 1\)"):
        Q.verify_quantile(0.5, 1.0, [0.4])
    with pytest.raises(BadInput, match="no new samples"):
        Q.verify_quantile(0.5, 0.9, [])


# --- inter-token latency ------------------------------------------------------------------------------------


def test_itl_pools_every_gap_between_answer_chunks():
    requests = [[0.30, 0.35, 0.41, 0.46], [0.50], [0.20, 0.26, 0.26, 0.40]]
    pooled = latency.itl(requests)
    expected = [g for r in requests for g in np.diff(r).tolist()]
    assert pooled == pytest.approx(expected) and len(pooled) == 6
    assert Q.percentile(pooled, 0.5) == pytest.approx(np.quantile(expected, 0.5))


def test_tpot_definition():
    assert latency.tpot(2.5, 0.5, 101) == pytest.approx(0.02)
    assert latency.tpot(0.5, 0.5, 1) is None and latency.tpot(0.5, 0.5, 0) is None
    with pytest.raises(BadInput, match="0 ≤ ttft ≤ e2e"):
        latency.tpot(0.4, 0.5, 10)


def test_per_request_metrics():
    r = latency.per_request([0.3, 0.35, 0.47, 0.5], answer_tokens=7)
    assert r["ttft"] == 0.3 and r["e2e"] == 0.5
    assert r["itl"] == pytest.approx([0.05, 0.12, 0.03]) and r["itl_max"] == pytest.approx(0.12)
    assert r["tpot"] == pytest.approx(0.2 / 6)
    one = latency.per_request([0.3])
    assert one["itl"] == [] and one["itl_max"] is None and one["tpot"] is None


@pytest.mark.parametrize(
    "arrivals, words", [([0.3, 0.2], "must not decrease: 0.2 after 0.3"), ([-0.1, 0.2], "is negative")]
)
def test_bad_arrival_times(arrivals, words):
    with pytest.raises(BadInput, match=words):
        latency.itl([arrivals])


# --- SLOs ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, metric, q, op, limit, canonical",
    [
        ("ttft:p90<0.5", "ttft", 0.9, "<", 0.5, "ttft:p90<0.5"),
        ("itl:p99<0.08", "itl", 0.99, "<", 0.08, "itl:p99<0.08"),
        (" itl : max <= 0.08 ", "itl", 1.0, "<=", 0.08, "itl<=0.08"),
        ("ttft<0.5", "ttft", 1.0, "<", 0.5, "ttft<0.5"),
        ("e2e:P99.9<12", "e2e", 0.999, "<", 12.0, "e2e:p99.9<12"),
        ("decode_rate:p10>=20", "decode_rate", 0.1, ">=", 20.0, "decode_rate:p10>=20"),
        ("tpot:p50<0.05", "tpot", 0.5, "<", 0.05, "tpot:p50<0.05"),
    ],
)
def test_parse_slo(text, metric, q, op, limit, canonical):
    slo = S.parse_slo(text)
    assert (slo.metric, slo.q, slo.op, slo.limit) == (metric, pytest.approx(q), op, limit)
    assert slo.text == canonical and S.parse_slo(slo.text) == slo


@pytest.mark.parametrize(
    "text, words",
    [
        ("ttft:p90", "write METRIC[:pNN]<LIMIT"),
        ("ttft:p90=0.5", "write METRIC[:pNN]<LIMIT"),
        ("", "write METRIC[:pNN]<LIMIT"),
        ("tfft:p90<0.5", "unknown metric 'tfft'; use one of"),
        ("ttft:q90<0.5", "statistic 'q90' must be pNN"),
        ("ttft:p0<0.5", "must be above p0 and at most p100"),
        ("ttft:p101<0.5", "must be above p0 and at most p100"),
        ("itl:p99<80ms", "limit '80ms' is not a number; write it in the metric's unit"),
        ("ttft:p90<nan", "finite"),
        ("ttft:p90>0.5", "lower ttft is better"),
        ("decode_rate:p10<20", "higher decode_rate is better"),
    ],
)
def test_bad_slo_is_one_line_usage_error(text, words):
    with pytest.raises(UsageError) as info:
        S.parse_slo(text)
    message = str(info.value)
    assert words in message and "\n" not in message and message.startswith(f"bad SLO {text!r}")
    assert isinstance(info.value, FactregError) and info.value.exit_code == 2


def test_parse_slos_splits_commas_and_refuses_none():
    assert [s.text for s in S.parse_slos(["ttft:p90<0.5,itl:p99<0.08", "e2e<10"])] == [
        "ttft:p90<0.5",
        "itl:p99<0.08",
        "e2e<10",
    ]
    with pytest.raises(UsageError, match="no SLO given"):
        S.parse_slos([" , "])


# --- goodput and capacity -----------------------------------------------------------------------------------

# Ten requests of a worked example (seconds). SLOs: ttft < 0.5 and every gap < 0.08 (itl:max).
WORKED = [
    {"ttft": 0.31, "itl": [0.04, 0.05, 0.05]},  # good
    {"ttft": 0.42, "itl": [0.05, 0.06]},  # good
    {"ttft": 0.55, "itl": [0.04, 0.04]},  # ttft too slow
    {"ttft": 0.38, "itl": [0.05, 0.09, 0.05]},  # one gap of 90 ms
    {"ttft": 0.29, "itl": []},  # one chunk: no gap, meets the ITL limit
    {"ttft": 0.47, "itl": [0.07, 0.079]},  # good, just
    None,  # failed request: never good
    {"ttft": 0.61, "itl": [0.12]},  # both broken
    {"ttft": 0.33, "itl": [0.03, 0.04]},  # good
    {"itl": [0.03]},  # no answer token, no ttft: not good
]


def test_goodput_worked_example():
    slos = S.parse_slos(["ttft<0.5,itl:max<0.08"])
    g = S.goodput(WORKED, slos)
    assert (g.good, g.total, g.share) == (5, 10, 0.5)
    assert g.missed == {"ttft<0.5": 4, "itl<0.08": 3}
    ci = sps.binomtest(5, 10).proportion_ci(confidence_level=0.95, method="wilson")
    assert (g.low, g.high) == (pytest.approx(ci.low, rel=1e-9), pytest.approx(ci.high, rel=1e-9))
    assert g.message == "5/10 good (50.0%, 95% [23.7–76.3%]); missed ttft<0.5: 4, itl<0.08: 3"
    assert [S.meets(r, slos) for r in WORKED] == [True, True, False, False, True, True, False, False, True, False]


def test_goodput_itl_percentile_is_per_request():
    # itl:p50<0.08: the request's own median gap; the request with one 90 ms gap among 50 ms ones now passes.
    g = S.goodput(WORKED, S.parse_slos(["ttft<0.5,itl:p50<0.08"]))
    assert g.good == 6 and g.missed["itl:p50<0.08"] == 2  # the failed request and the 120 ms one


@pytest.mark.parametrize("k, n", [(0, 10), (10, 10), (97, 100), (1, 3), (950, 1000)])
def test_wilson_matches_scipy(k, n):
    ci = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert S.wilson(k, n) == (pytest.approx(ci.low, abs=1e-9), pytest.approx(ci.high, abs=1e-9))


def test_goodput_refuses_slo_no_request_measured():
    with pytest.raises(BadInput, match="no request has a 'tpot' value for SLO tpot<0.05"):
        S.goodput(WORKED, S.parse_slos(["tpot<0.05"]))


def level(good: int, total: int = 100) -> S.Goodput:
    low, high = S.wilson(good, total)
    return S.Goodput(good, total, low, high)


def test_capacity_worked_example():
    # Concurrency → goodput: 100%, 99%, 96%, 91%, 97%. Capacity 4; 16 passes above a failing 8: not counted.
    levels = {1: level(100), 2: level(99), 4: level(96), 8: level(91), 16: level(97)}
    cap = S.capacity(levels)
    assert cap.level == 4
    assert cap.message == (
        "capacity 4: 96/100 good (96.0%, 95% [90.2–98.4%]) meets goodput ≥ 95%; level 8 does not (91.0%); "
        "not counted above a failing level: 16"
    )
    assert S.capacity(levels, threshold=0.9).level == 16
    assert S.capacity({1: level(90), 2: level(99)}).level is None


def test_capacity_bad_input():
    with pytest.raises(BadInput, match="no load levels"):
        S.capacity({})
    with pytest.raises(UsageError, match="threshold 95 must be in"):
        S.capacity({1: level(99)}, threshold=95)


def test_run_check_pools_observations():
    requests = [{"ttft": v} for v in exact_sample(LOGNORMAL, 200)] + [None]
    p90 = float(np.quantile(exact_sample(LOGNORMAL, 200), 0.9))
    met = S.run_check(S.parse_slo(f"ttft:p90<{p90 * 1.01}"), requests)
    assert met.met and met.estimate.value == pytest.approx(p90) and met.unknown == 1
    assert not S.run_check(S.parse_slo(f"ttft:p90<{p90 * 0.99}"), requests).met
    itl = S.run_check(S.parse_slo("itl:p50<0.05"), WORKED)
    pooled = [g for r in WORKED if r for g in r["itl"]]
    assert itl.estimate.value == pytest.approx(np.quantile(pooled, 0.5)) and itl.met is False
    assert "p50 needs n ≥ 20" in itl.message


@pytest.mark.alone
def test_summary_grows_as_a_sort_does():
    """1,000 samples: one sort and a few binomial tails. 8× the samples costs about 8× the CPU (a quadratic step
    would cost 64×): growth as a ratio, no time limit."""
    rng = np.random.default_rng(7)
    small, large = (rng.lognormal(-1.0, 0.5, n).tolist() for n in (1_000, 8_000))
    t_small, t_large = _least_cpu(lambda: Q.summary(small)), _least_cpu(lambda: Q.summary(large))
    assert t_large < 24 * max(t_small, 1e-4), (t_small, t_large)
