"""The statistics of the regret decomposition (hare.theory.decomposition_stats) on hand-made inputs."""

from __future__ import annotations

import numpy as np

from hare.policies.hare import HAREConfig
from hare.theory.bound_table import BOUNDS
from hare.theory.bounds import user_regret_sum
from hare.theory.decomposition_stats import S_FLOOR, bound_rows, explore_constants, warm_bound, warm_user_regret_sum


def test_bound_rows_flag_holds_and_vacuous_on_a_hand_example():
    measured = np.array([[1.0, 5.0], [3.0, 7.0]])
    rows = bound_rows(measured, np.array([4.0, 6.0]), np.array([2, 3]), max_gap=2.0)
    assert [r["holds"] for r in rows] == [True, False]
    assert [r["vacuous"] for r in rows] == [True, True]
    assert rows[0]["mean"] == 2.0 and rows[0]["worst"] == 3.0 and rows[0]["ratio"] == 0.5
    rows = bound_rows(measured, np.array([4.0, 6.0]), np.array([2, 3]), max_gap=3.0)
    assert [r["vacuous"] for r in rows] == [False, False]


def test_warm_started_bounds_run_to_m_plus_t():
    """sqrt(T/(M+T)) bound(M+T) is the bound itself without a warm start, and the user sum shifts its rounds by M."""
    constants = {"C": 3, "d_k": 4, "lam": 1.0, "delta": 0.05, "sigma": 0.1, "S": 1.0, "B_x": 2.0}
    T = np.array([10.0, 100.0])
    np.testing.assert_allclose(
        warm_bound("hare_explore_oful", T, 0, **constants),
        np.asarray(BOUNDS["hare_explore_oful"].numeric(T=T, **constants), dtype=float),
    )
    warm = warm_bound("hare_explore_oful", T, 50, **constants)
    cold_at_total = np.asarray(BOUNDS["hare_explore_oful"].numeric(T=T + 50, **constants), dtype=float)
    np.testing.assert_allclose(warm, np.sqrt(T / (T + 50)) * cold_at_total)
    lam_min = np.linspace(1.0, 3.0, 6)
    user = {"L_u": 2.0, "sigma": 0.1, "d_u": 3, "delta": 0.05}
    shifted = warm_user_regret_sum(lam_min, 4, **user)
    by_hand = np.cumsum([2.0 * 0.1 * np.sqrt(3 * np.log((4 + s) / 0.05) / lam_min[s - 1]) for s in range(1, 7)])
    np.testing.assert_allclose(shifted, by_hand)
    np.testing.assert_allclose(warm_user_regret_sum(lam_min, 0, **user), user_regret_sum(lam_min, **user))


def test_one_item_per_cluster_gives_a_finite_exploration_bound():
    """With one item per cluster the online mean's prior is the true parameter (S_prior = 0); the bound is its
    S -> 0 limit."""
    constants = {"n_clusters": 60, "key_dim": 4, "noise_sigma": 0.1, "S": 1.3, "S_prior": 0.0, "query_norm_bound": 2.0}
    assert explore_constants(constants, HAREConfig(mean="online"), 0.05)["S"] == S_FLOOR
    assert explore_constants(constants, HAREConfig(mean="frozen"), 0.05)["S"] == 1.3
