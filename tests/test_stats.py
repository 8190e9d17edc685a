import math

import pytest
import scipy.stats as sps
from hypothesis import given, settings
from hypothesis import strategies as st

from factreg import stats


def test_case_study_27b_samples_by_hand():
    s = stats.summarize([0.43, 0.73, 0.85])
    assert s.n == 3
    assert s.median == 0.73
    assert s.mean == pytest.approx(0.67)
    # sample stdev: sqrt(((−0.24)² + 0.06² + 0.18²) / 2) = sqrt(0.0936 / 2)
    assert s.stdev == pytest.approx(math.sqrt(0.0936 / 2))
    assert (s.min, s.max) == (0.43, 0.85)
    # IQR with linear interpolation: q3 = 0.79, q1 = 0.58
    assert s.iqr == pytest.approx(0.21)
    assert s.cv == pytest.approx(math.sqrt(0.0468) / 0.67)
    half = 4.302652729749464 * math.sqrt(0.0468) / math.sqrt(3)
    assert s.ci95 == pytest.approx((0.67 - half, 0.67 + half))
    assert stats.flags_for(s.n, s.cv) == ["few_samples", "high_variance"]


def test_single_sample_has_no_spread():
    s = stats.summarize([11.9])
    assert s.stdev is None and s.ci95 is None and s.cv is None and s.median == 11.9


def test_empty_samples_refused():
    with pytest.raises(ValueError):
        stats.summarize([])


@pytest.mark.parametrize("df", [1, 2, 3, 4, 7, 12, 30, 120])
@pytest.mark.parametrize("q", [0.9, 0.975, 0.995])
def test_t_quantile_matches_scipy(df, q):
    assert stats.t_ppf(q, df) == pytest.approx(sps.t.ppf(q, df), rel=1e-8)


@settings(max_examples=60, deadline=None)
@given(
    a=st.lists(st.floats(0.1, 100), min_size=2, max_size=12),
    b=st.lists(st.floats(0.1, 100), min_size=2, max_size=12),
)
def test_welch_matches_scipy(a, b):
    sa, sb = stats.summarize(a), stats.summarize(b)
    if not sa.stdev or not sb.stdev or sa.stdev < 1e-6 or sb.stdev < 1e-6:
        return
    ours = stats.welch(sa.mean, sa.stdev, sa.n, sb.mean, sb.stdev, sb.n)
    ref = sps.ttest_ind(b, a, equal_var=False)
    assert ours is not None
    assert ours.t == pytest.approx(ref.statistic, rel=1e-6, abs=1e-9)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-5, abs=1e-10)


def test_one_sample_matches_scipy():
    xs = [11.1, 12.4, 10.9, 12.0, 13.1]
    s = stats.summarize(xs)
    ours = stats.one_sample(28.0, s.mean, s.stdev, s.n)
    ref = sps.ttest_1samp(xs, 28.0)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-6)


def test_needed_n_grows_with_noise():
    assert stats.needed_n(1.0, 1.0) < stats.needed_n(3.0, 1.0)
    # ceil(2 * (1.95996 + 0.84162)^2 * (sd/delta)^2) + 1 with sd = delta: ceil(15.70) + 1
    assert stats.needed_n(1.0, 1.0) == 17
    assert stats.needed_n(0.0, 1.0) is None
