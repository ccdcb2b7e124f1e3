"""LNUCB-TA's adaptive k (hare.policies.adaptive_knn): in range, by hand and during play."""

from __future__ import annotations

import torch
from conftest_neural import GaussianContextBandit

from hare.policies.adaptive_knn import adaptive_k
from hare.policies.base import build_policy
from hare.random import run_keys

N_ARMS, DIM = 3, 2


def small_env(n_runs: int, keys: torch.Tensor, horizon: int = 40) -> GaussianContextBandit:
    return GaussianContextBandit(n_runs, N_ARMS, DIM, horizon, keys)


def test_adaptive_k_stays_in_range():
    variances = torch.tensor([[0.0, 0.1, 0.25, 0.5, 1.0, 3.0, 100.0]], dtype=torch.float64)
    k = adaptive_k(variances, 2, 6)
    assert k.tolist() == [[2, 2, 3, 4, 6, 6, 6]]


def test_lnucb_ta_k_within_bounds_during_play():
    keys = run_keys(0, [0, 1], "lnucb-k")
    env = small_env(2, keys)
    policy = build_policy("lnucb_ta", {"theta_min": 2, "theta_max": 4}, env, keys)
    for t in range(30):
        observation = env.round(t).observation
        _, k = policy.knn_adjustment(observation.contexts)
        assert int(k.min()) >= 2 and int(k.max()) <= 4
        arms = policy.select(observation)
        policy.update(observation, arms, env.round(t).reward(arms))
