"""The statistics the claims and tables share (:mod:`hare.statistics`), against hand computations."""

import math

import numpy as np
import pytest

from hare.statistics import upper_tail_mean
from hare.theory.claims.expressions import evaluate_expression


def test_worst_decile_mean_of_twenty_runs_is_the_mean_of_the_two_worst():
    regrets = [5.0, 1.0, 9.0, 3.0, 7.0, 2.0, 8.0, 4.0, 6.0, 10.0, 0.0, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5]
    assert upper_tail_mean(regrets, 0.1) == (10.0 + 9.5) / 2


def test_a_fractional_tail_weights_the_next_run():
    # level n = 0.1 x 15 = 1.5: the worst run whole, half of the second worst, over 1.5
    regrets = np.arange(15, dtype=float)  # worst 14, then 13
    assert upper_tail_mean(regrets, 0.1) == pytest.approx((14.0 + 0.5 * 13.0) / 1.5, rel=1e-15)


def test_ninety_runs_take_exactly_the_nine_worst():
    regrets = np.random.default_rng(0).uniform(0, 100, 90)
    assert upper_tail_mean(regrets, 0.1) == pytest.approx(np.sort(regrets)[-9:].mean(), rel=1e-14)


def test_fewer_than_one_run_in_the_tail_is_the_worst_run_and_the_whole_level_is_the_mean():
    assert upper_tail_mean([3.0, 1.0, 2.0, 8.0, 4.0], 0.1) == 8.0
    assert upper_tail_mean([3.0, 1.0, 2.0], 1.0) == 2.0


def test_undefined_and_invalid_inputs():
    assert math.isnan(upper_tail_mean([], 0.1))
    assert math.isnan(upper_tail_mean([1.0, math.nan], 0.1))
    with pytest.raises(ValueError, match="level"):
        upper_tail_mean([1.0], 0.0)


def test_the_claims_evaluator_exposes_it_as_cvar():
    assert evaluate_expression("cvar(a.total_regret, 0.1)", {"a": {"total_regret": np.arange(10.0)}}) == 9.0


@pytest.mark.parametrize(("k", "n"), [(0, 5), (1, 5), (3, 20), (20, 20), (0, 1), (7, 73)])
def test_clopper_pearson_against_scipy(k, n):
    from scipy.stats import binomtest

    from hare.statistics import clopper_pearson

    expected = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    low, high = clopper_pearson(k, n)
    assert low == pytest.approx(expected.low, abs=1e-12) and high == pytest.approx(expected.high, abs=1e-12)


def test_clopper_pearson_agrees_with_the_beta_quantiles_it_replaced():
    """Every count of up to 120 runs: scipy's exact interval equals the Beta quantiles the register computed before
    (``B^{-1}(a/2; k, n-k+1)``, ``B^{-1}(1-a/2; k+1, n-k)``) within 1e-12, far below any margin."""
    from scipy.stats import beta

    from hare.statistics import clopper_pearson

    for n in range(1, 121):
        for k in range(n + 1):
            low, high = clopper_pearson(k, n)
            assert low == pytest.approx(0.0 if k == 0 else beta.ppf(0.025, k, n - k + 1), abs=1e-12)
            assert high == pytest.approx(1.0 if k == n else beta.ppf(0.975, k + 1, n - k), abs=1e-12)


def test_clopper_pearson_one_lock_in_of_five_does_not_decide_at_five_percent():
    """One of five runs above the level: the share 0.2 but its exact interval [0.005, 0.716] holds 5%, so the
    no_lock_in claim (share <= 5%) is INCONCLUSIVE, not FAIL; none of 20 still allows up to 16.8%."""
    from hare.statistics import clopper_pearson
    from hare.theory.claims.expressions import FUNCTIONS
    from hare.verdicts import decide

    low, high = clopper_pearson(1, 5)
    assert low < 0.05 < high and decide(low, high, "<=", 0.05) == "INCONCLUSIVE"
    assert clopper_pearson(0, 20) == (0.0, pytest.approx(0.16843, abs=1e-5))
    totals = [1.0, 1.0, 1.0, 1.0, 9.0]
    assert FUNCTIONS["share_above"](totals, 5.0) == 0.2
    assert (FUNCTIONS["share_above_low"](totals, 5.0), FUNCTIONS["share_above_high"](totals, 5.0)) == (low, high)
    assert decide(*clopper_pearson(10, 20), "<=", 0.05) == "FAIL"


def test_clopper_pearson_refuses_impossible_counts():
    from hare.statistics import clopper_pearson

    with pytest.raises(ValueError, match="6 successes out of 5"):
        clopper_pearson(6, 5)
    assert all(v != v for v in clopper_pearson(0, 0))


def test_t_interval_matches_the_closed_form():
    """The one Student t interval of the package (the claims' per-run uncertainty, the tables, the checks)."""
    from scipy import stats

    from hare.statistics import t_interval

    x = np.array([1.0, -2.0, 0.5, 4.0, 3.0])
    interval = t_interval(x)
    half = stats.t.ppf(0.975, 4) * x.std(ddof=1) / math.sqrt(5)
    assert interval["estimate"] == pytest.approx(1.3)
    assert (interval["ci_low"], interval["ci_high"]) == pytest.approx((1.3 - half, 1.3 + half))
    assert t_interval([2.0])["estimate"] == 2.0 and t_interval([2.0])["ci_low"] is None


def test_loglog_slope_fits_the_positive_points_only():
    """The growth exponent of one curve (the decomposition figure's fallback): points at or below zero left out."""
    from hare.statistics import loglog_slope

    T = np.array([10.0, 100.0, 1000.0, 10000.0])
    assert loglog_slope(T, 3 * T**0.5) == pytest.approx(0.5)
    assert loglog_slope(T, np.array([-1.0, 20.0, 200.0, 2000.0])) == pytest.approx(1.0)
    assert math.isnan(loglog_slope(T, np.array([-1.0, 0.0, 0.0, 5.0])))
