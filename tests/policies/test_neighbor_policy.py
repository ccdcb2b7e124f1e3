"""Every nearest-neighbour policy (hare.policies.neighbor_policy and its families): batching, validation and a regret
sanity check."""

from __future__ import annotations

import pytest
import torch
from conftest_neural import GaussianContextBandit, batched_matches_alone, synthetic_regret

from hare.policies.base import make_config

N_ARMS, DIM = 3, 2


def small_env(n_runs: int, keys: torch.Tensor, horizon: int = 40) -> GaussianContextBandit:
    return GaussianContextBandit(n_runs, N_ARMS, DIM, horizon, keys)


NAMES = [
    ("knn_ucb", {"theta": 0.1, "max_neighbors": 10}),
    ("knn_kl_ucb", {"theta": 0.1, "max_neighbors": 10}),
    ("lin_knn_ucb", {"k": 3}),
    ("lnucb_ta", {}),
    ("beta_thompson_enhanced", {}),
    ("eps_greedy_enhanced", {"epsilon": 0.2}),
    ("lin_thompson_enhanced", {}),
]


@pytest.mark.parametrize("name, params", NAMES)
def test_batched_equals_alone(name, params):
    batched_matches_alone(name, params, lambda n, keys: small_env(n, keys), n_runs=3, horizon=25, atol=0)


@pytest.mark.parametrize(
    "name, params, match",
    [
        ("knn_ucb", {"theta": 0.0}, "theta: must be > 0"),
        ("knn_ucb", {"lipschitz": -1.0}, "lipschitz"),
        ("knn_kl_ucb", {"max_neighbors": 0}, "max_neighbors"),
        ("lin_knn_ucb", {"k": 0}, r"\.k: must be >= 1"),
        ("lin_knn_ucb", {"alpha": -1.0}, "alpha"),
        ("lnucb_ta", {"kappa": 1.5}, r"kappa: must be in \[0, 1\]"),
        ("lnucb_ta", {"theta_min": 0}, "theta_min"),
        ("lnucb_ta", {"theta_min": 5, "theta_max": 3}, "theta_max: must be >= theta_min"),
        ("lnucb_ta", {"alpha_0": -1.0}, "alpha_0"),
        ("lnucb_ta", {"global_mean": "all"}, "global_mean"),
        ("beta_thompson_enhanced", {"prior_alpha": 0.0}, "prior_alpha"),
        ("eps_greedy_enhanced", {"epsilon": 1.5}, "epsilon"),
        ("lin_thompson_enhanced", {"v": -1.0}, r"\.v: must be >= 0"),
        ("lin_thompson_enhanced", {"gamma": -1.0}, "gamma"),
    ],
)
def test_invalid_hyperparameters(name, params, match):
    with pytest.raises(ValueError, match=match):
        make_config(name, params)


SANITY = [
    ("knn_ucb", {"theta": 0.01, "lipschitz": 0.1, "max_neighbors": 10}),
    ("knn_kl_ucb", {"theta": 0.01, "lipschitz": 0.1, "max_neighbors": 10}),
    ("lin_knn_ucb", {"k": 3}),
    ("lnucb_ta", {}),
    ("beta_thompson_enhanced", {}),
    ("eps_greedy_enhanced", {"epsilon": 0.2}),
    ("lin_thompson_enhanced", {"v": 0.1}),
]


@pytest.mark.parametrize("name, params", SANITY)
def test_beats_random_on_synthetic(name, params):
    """Total regret over 200 rounds at most 85% of uniform random's (2 runs)."""
    assert synthetic_regret(name, params, 2, 200) <= 0.85 * synthetic_regret("random", {}, 2, 200)
