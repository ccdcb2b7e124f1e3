"""kNN-UCB and kNN-KL-UCB (hare.policies.knn_ucb): the index by hand, and the KL bound it reads."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from conftest_neural import GaussianContextBandit

from hare.envs.base import Observation
from hare.policies.base import build_policy, kl_upper_bound
from hare.random import run_keys


def one_arm_env(horizon: int = 10):
    return GaussianContextBandit(1, 2, 1, horizon, run_keys(0, [0], "tiny"))


def test_knn_ucb_index_by_hand():
    """One arm with pulls at x = 0 (r = 1) and x = 1 (r = 0); query x = 0.1 at round t = 4 (log 5)."""
    env = one_arm_env()
    theta, phi = 0.5, 2.0
    policies = {
        name: build_policy(name, {"theta": theta, "lipschitz": phi, "max_neighbors": 4}, env, run_keys(0, [0], name))
        for name in ("knn_ucb", "knn_kl_ucb")
    }
    for policy in policies.values():
        for t, (x, r) in enumerate([(0.0, 1.0), (1.0, 0.0)]):
            policy.update(
                Observation(t, torch.full((1, 2, 1), x, dtype=torch.float64)),
                torch.tensor([0]),
                torch.tensor([r], dtype=torch.float64),
            )
    query = torch.full((1, 2, 1), 0.1, dtype=torch.float64)
    log_t = math.log(5)
    objective = [math.sqrt(theta * log_t / 1) + phi * 0.1, math.sqrt(theta * log_t / 2) + phi * 0.9]
    k = 1 + int(np.argmin(objective))
    mean = [1.0, 0.5][k - 1]
    radius = phi * [0.1, 0.9][k - 1]
    ucb = policies["knn_ucb"].scores(query, 4)[0]
    assert ucb[0].item() == pytest.approx(mean + math.sqrt(theta * log_t / k) + radius, abs=1e-12)
    assert math.isinf(ucb[1].item())
    kl = policies["knn_kl_ucb"].scores(query, 4)[0, 0].item()
    expected_kl = (
        kl_upper_bound(
            torch.tensor(mean, dtype=torch.float64), torch.tensor(theta * log_t / k, dtype=torch.float64), 50
        ).item()
        + radius
    )
    assert kl == pytest.approx(expected_kl, abs=1e-12)


def test_kl_upper_bound_solves_the_divergence_equation():
    mean = torch.tensor([0.2, 0.5, 0.9], dtype=torch.float64)
    level = torch.tensor([0.1, 0.3, 0.01], dtype=torch.float64)
    bound = kl_upper_bound(mean, level, 50)
    divergence = mean * torch.log(mean / bound) + (1 - mean) * torch.log((1 - mean) / (1 - bound))
    torch.testing.assert_close(divergence, level, atol=1e-9, rtol=0)
