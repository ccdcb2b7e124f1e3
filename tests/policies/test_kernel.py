"""Kernel policies: block-inverse updates against brute force, posterior and scores, batching, regret."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from hare.policies import build_policy, make_config
from hare.random import CounterRNG, run_keys

KERNEL = ["kernel_ucb", "kernel_ts"]


@pytest.mark.parametrize(
    "name, params, match",
    [
        ("kernel_ucb", {"alpha": -1.0}, r"KernelUCBConfig\.alpha: must be >= 0"),
        ("kernel_ucb", {"lam": 0.0}, r"KernelUCBConfig\.lam: must be > 0"),
        ("kernel_ucb", {"bandwidth": -0.5}, r"KernelUCBConfig\.bandwidth: must be > 0"),
        ("kernel_ucb", {"max_points": 0}, r"KernelUCBConfig\.max_points: must be >= 1"),
        ("kernel_ucb", {"when_full": "grow"}, r"KernelUCBConfig\.when_full: must be one of \('window', 'stop'\)"),
        ("kernel_ucb", {"refactor_every": 0}, r"KernelUCBConfig\.refactor_every: must be >= 1"),
        ("kernel_ts", {"nu": -0.1}, r"KernelTSConfig\.nu: must be >= 0"),
        ("kernel_ts", {"bandwidth": math.nan}, r"KernelTSConfig\.bandwidth"),
        ("kernel_ts", {"alpha": 1.0}, r"unknown hyperparameter\(s\) \['alpha'\]"),
    ],
)
def test_invalid_config_names_the_field(name, params, match):
    with pytest.raises(ValueError, match=match):
        make_config(name, params)


def rbf(x: np.ndarray, y: np.ndarray, bandwidth: float) -> np.ndarray:
    return np.exp(-((x[:, None, :] - y[None, :, :]) ** 2).sum(-1) / (2 * bandwidth**2))


def brute_force_posterior(points, arms, targets, query, query_arm, lam, bandwidth):
    """Kernel ridge posterior of one query from an explicit point list, by ``np.linalg.inv``."""
    same = arms[:, None] == arms[None, :]
    gram = rbf(points, points, bandwidth) * same + lam * np.eye(len(points))
    k = rbf(points, query[None], bandwidth)[:, 0] * (arms == query_arm)
    inverse = np.linalg.inv(gram)
    return k @ inverse @ targets, math.sqrt(max(1.0 - k @ inverse @ k, 0.0))


def fill(name: str, params: dict, env, n_updates: int):
    """A policy updated on ``n_updates`` rounds of ``env`` with arms from the run keys; returns it and the arms."""
    policy = build_policy(name, params, env, run_keys(0, range(env.n_runs), name))
    arms = CounterRNG(run_keys(1, range(env.n_runs), "arms")).randint("arms", 0, env.n_arms, (n_updates,))
    for t in range(n_updates):
        current = env.round(t)
        policy.update(current.observation, arms[:, t], current.reward(arms[:, t]))
    return policy, arms


@pytest.mark.parametrize("n_updates", [7, 20, 45])
def test_block_inverse_matches_brute_force_inverse_through_the_window(n_updates, table_bandit):
    env = table_bandit(2, 2, 50, 3, 4, shared_context=False)
    params = {"max_points": 16, "lam": 0.5, "bandwidth": 0.8, "refactor_every": 10**9}
    policy, _ = fill("kernel_ucb", params, env, n_updates)
    dictionary = policy.dictionary
    occupied = dictionary.occupied
    assert int(occupied.sum()) == min(n_updates, 16)
    brute = torch.linalg.inv(dictionary.gram()[:, occupied][:, :, occupied])
    ours = dictionary.inverse[:, occupied][:, :, occupied]
    assert torch.allclose(ours, brute, atol=1e-9)
    assert (dictionary.inverse[:, ~occupied] == 0).all() and (dictionary.inverse[:, :, ~occupied] == 0).all()


@pytest.mark.parametrize("when_full, n_updates", [("window", 12), ("window", 31), ("stop", 31)])
def test_posterior_and_ucb_match_explicit_kernel_ridge(when_full, n_updates, table_bandit):
    max_points, lam, bandwidth, alpha = 10, 2.0, 0.7, 0.6
    env = table_bandit(3, 2, 40, 3, 3, shared_context=False)
    params = {
        "max_points": max_points,
        "lam": lam,
        "bandwidth": bandwidth,
        "alpha": alpha,
        "when_full": when_full,
        "refactor_every": 7,
    }
    policy, arms = fill("kernel_ucb", params, env, n_updates)
    kept = (
        range(max(0, n_updates - max_points), n_updates) if when_full == "window" else range(min(n_updates, max_points))
    )
    query = env.round(n_updates).observation
    scores = policy.scores(query)
    for run in range(2):
        history_arms = arms[run, list(kept)].numpy()
        points = env.contexts[run, list(kept)].numpy()[np.arange(len(kept)), history_arms]
        targets = env.rewards[run, list(kept)].numpy()[np.arange(len(kept)), history_arms]
        for arm in range(3):
            mean, std = brute_force_posterior(
                points, history_arms, targets, query.contexts[run, arm].numpy(), arm, lam, bandwidth
            )
            assert scores[run, arm].item() == pytest.approx(mean + alpha / math.sqrt(lam) * std, abs=1e-9)


def test_kernel_ts_without_noise_is_kernel_ucb_without_bonus(simulator, table_bandit):
    env = table_bandit(4, 3, 50, 4, 3, shared_context=False)
    keys = run_keys(0, range(3), "kernel")
    common = {"max_points": 20, "refactor_every": 15}
    greedy_ts = simulator("kernel_ts", {**common, "nu": 0.0}, env, keys).arms
    greedy_ucb = simulator("kernel_ucb", {**common, "alpha": 0.0}, env, keys).arms
    assert torch.equal(greedy_ts, greedy_ucb)


def test_kernel_ts_sample_spread_is_nu_times_the_posterior_width(table_bandit):
    n_runs, nu = 8000, 0.5
    history = table_bandit(5, 1, 12, 2, 3, shared_context=False)
    env = type(history)(history.contexts.expand(n_runs, -1, -1, -1), history.rewards.expand(n_runs, -1, -1))
    policy = build_policy("kernel_ts", {"nu": nu, "max_points": 16}, env, run_keys(6, range(n_runs), "spread"))
    for t in range(11):
        current = env.round(t)
        arms = torch.full((n_runs,), t % 2)
        policy.update(current.observation, arms, current.reward(arms))
    query = env.round(11).observation
    mean, width = policy.dictionary.posterior(query.contexts)
    samples = policy.scores(query)
    assert torch.allclose(samples.mean(0), mean[0], atol=4 * nu * width[0].max().item() / math.sqrt(n_runs))
    assert torch.allclose(samples.std(0), nu * width[0], rtol=0.05)


@pytest.mark.parametrize("name", KERNEL)
def test_batched_runs_equal_runs_alone(name, default_params, batched_equals_unbatched):
    batched_equals_unbatched(name, default_params[name])


@pytest.mark.parametrize("name", KERNEL)
def test_beats_random_on_the_synthetic_environment(name, sanity_regret):
    """Stated margin: at least 30% less cumulative pseudo-regret than uniform random play over 800 rounds."""
    assert sanity_regret(name) < 0.7 * sanity_regret("random")
