"""Kernel policies: block-inverse updates against brute force, posterior and scores, batching, regret."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from conftest_neural import GaussianContextBandit, play

from hare.envs.base import LoggedRounds, Observation
from hare.model.kernel_dictionary import KernelDictionary
from hare.policies import build_policy, make_config
from hare.policies.kernel_dense import DenseKernelTS, DenseKernelUCB
from hare.random import CounterRNG, run_keys

KERNEL = ["kernel_ucb", "kernel_ts"]
DENSE = {"kernel_ucb": DenseKernelUCB, "kernel_ts": DenseKernelTS}


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


def held_points(env, arms: torch.Tensor, kept: range, run: int, arm: int) -> tuple[np.ndarray, np.ndarray]:
    """Contexts and rewards of the rounds in ``kept`` where ``run`` pulled ``arm``, sorted by reward."""
    rounds = [t for t in kept if int(arms[run, t]) == arm]
    points = env.contexts[run, rounds, arm].numpy()
    targets = env.rewards[run, rounds, arm].numpy()
    order = np.argsort(targets, kind="stable")
    return points[order], targets[order]


@pytest.mark.parametrize(
    "when_full, n_updates, refactor_every",
    [
        ("window", 7, 10**9),
        ("window", 20, 10**9),
        ("window", 45, 10**9),
        ("window", 80, 10**9),
        ("stop", 45, 10**9),
        ("window", 40, 10),
        ("window", 43, 10),
    ],
)
def test_block_inverses_match_brute_force_through_the_window(when_full, n_updates, refactor_every, table_bandit):
    """Every (run, arm) block holds exactly that arm's points of the window (the last ``max_points`` updates, or the
    first in ``stop`` mode) and its inverse is ``(K(X_a, X_a) + lam I)^{-1}`` of them, zero on empty slots."""
    max_points, lam, bandwidth = 16, 0.5, 0.8
    env = table_bandit(2, 2, 90, 3, 4, shared_context=False)
    params = {
        "max_points": max_points,
        "lam": lam,
        "bandwidth": bandwidth,
        "when_full": when_full,
        "refactor_every": refactor_every,
    }
    policy, arms = fill("kernel_ucb", params, env, n_updates)
    dictionary = policy.dictionary
    inverse = dictionary.block_inverse()
    kept = (
        range(max(0, n_updates - max_points), n_updates) if when_full == "window" else range(min(n_updates, max_points))
    )
    assert int(dictionary.occupied.sum()) == 2 * len(kept)
    for run in range(2):
        for arm in range(3):
            held = dictionary.occupied[run, arm]
            points, targets = held_points(env, arms, kept, run, arm)
            ours = dictionary.targets[run, arm, held].numpy()
            order = np.argsort(ours, kind="stable")
            np.testing.assert_array_equal(ours[order], targets)
            np.testing.assert_array_equal(dictionary.points[run, arm, held].numpy()[order], points)
            gram = rbf(points, points, bandwidth) + lam * np.eye(len(points))
            block = inverse[run, arm][held][:, held].numpy()[np.ix_(order, order)]
            np.testing.assert_allclose(block, np.linalg.inv(gram), rtol=0, atol=1e-8)
            assert bool((inverse[run, arm][~held].abs() < 1e-12).all())
            assert bool((inverse[run, arm][:, ~held].abs() < 1e-12).all())


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


def play_against_dense(name: str, params: dict, env, n_logged: int, device: str = "cpu") -> int:
    """Play ``name`` and its dense reference side by side on ``env`` (after a warm start on its first ``n_logged``
    rounds, arms from the run keys, when ``n_logged > 0``): every round the posterior means and widths agree to 1e-9
    and the chosen arms are equal. Returns the rounds compared."""
    keys = run_keys(0, range(env.n_runs), name)
    ours = build_policy(name, params, env, keys).to(device)
    reference = DENSE[name](make_config(name, params), env, keys).to(device)
    if n_logged:
        logged_arms = CounterRNG(run_keys(1, [0], "logged")).randint("arms", 0, env.n_arms, (n_logged,))[0]
        contexts = env.contexts[0, :n_logged]
        rewards = env.rewards[0, :n_logged].gather(1, logged_arms[:, None]).squeeze(1)
        logs = LoggedRounds(contexts.to(device), None, None, logged_arms.to(device), rewards.to(device))
        ours.warm_start(logs)
        reference.warm_start(logs)
    for t in range(n_logged, env.horizon):
        current = env.round(t)
        observation = Observation(t, current.observation.contexts.to(device))
        mean, width = ours.dictionary.posterior(observation.contexts)
        dense_mean, dense_width = reference.dictionary.posterior(observation.contexts)
        torch.testing.assert_close(mean, dense_mean, rtol=0, atol=1e-9)
        torch.testing.assert_close(width, dense_width, rtol=0, atol=1e-9)
        arms = ours.select(observation)
        assert torch.equal(arms, reference.select(observation)), f"round {t}"
        rewards = current.reward(arms.cpu()).to(device)
        ours.update(observation, arms, rewards)
        reference.update(observation, arms, rewards)
    return env.horizon - n_logged


EQUIVALENCE = [
    pytest.param(name, n_arms, when_full, n_logged, id=f"{name}-K{n_arms}-{when_full}-warm{n_logged}")
    for name in KERNEL
    for n_arms, when_full, n_logged in [(1, "window", 0), (4, "window", 0), (4, "stop", 0), (3, "window", 30)]
]


@pytest.mark.parametrize("name, n_arms, when_full, n_logged", EQUIVALENCE)
def test_posterior_and_arms_equal_the_dense_reference(name, n_arms, when_full, n_logged, table_bandit):
    """60 rounds of play past a full dictionary (20 points, refactorised every 25 updates, folds in between)."""
    env = table_bandit(8, 3, n_logged + 60, n_arms, 5, shared_context=False)
    params = {"max_points": 20, "lam": 0.7, "bandwidth": 0.9, "refactor_every": 25, "when_full": when_full}
    assert play_against_dense(name, {**params, **({"nu": 0.3} if name == "kernel_ts" else {})}, env, n_logged) == 60


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("name, n_arms, when_full, n_logged", EQUIVALENCE)
def test_cuda_posterior_and_arms_equal_the_dense_reference(name, n_arms, when_full, n_logged, table_bandit):
    env = table_bandit(8, 3, n_logged + 60, n_arms, 5, shared_context=False)
    params = {"max_points": 20, "lam": 0.7, "bandwidth": 0.9, "refactor_every": 25, "when_full": when_full}
    params = {**params, **({"nu": 0.3} if name == "kernel_ts" else {})}
    assert play_against_dense(name, params, env, n_logged, "cuda") == 60


@pytest.mark.parametrize("name", KERNEL)
def test_batched_blocks_equal_each_run_alone(name):
    """Arms, and every block's points and exact inverse, of 4 batched runs equal each run alone (whose block capacity
    may be smaller: the batched blocks are zero beyond it)."""
    params = {"max_points": 24, "refactor_every": 30, **({"nu": 0.3} if name == "kernel_ts" else {})}
    env_keys, policy_keys = run_keys(3, range(4), "env"), run_keys(4, range(4), "policy")
    batched, batched_arms, _ = play(name, params, GaussianContextBandit(4, 3, 6, 70, env_keys), policy_keys, 70)
    together = batched.dictionary
    for run in range(4):
        alone, alone_arms, _ = play(
            name, params, GaussianContextBandit(1, 3, 6, 70, env_keys[run : run + 1]), policy_keys[run : run + 1], 70
        )
        assert torch.equal(alone_arms[0], batched_arms[run])
        single = alone.dictionary
        c = single.capacity
        assert torch.equal(single.occupied[0], together.occupied[run, :, :c])
        assert not together.occupied[run, :, c:].any()
        assert torch.equal(single.points[0], together.points[run, :, :c])
        inverse = together.block_inverse()[run]
        torch.testing.assert_close(single.block_inverse()[0], inverse[:, :c, :c], rtol=0, atol=1e-10)
        assert bool((inverse[:, c:].abs() < 1e-12).all()) and bool((inverse[:, :, c:].abs() < 1e-12).all())


def test_update_after_select_reuses_its_kernel_rows(monkeypatch, table_bandit):
    """A round evaluates the kernel once: ``update`` after ``select`` on the same observation reads the rows
    ``select`` computed; ``update`` alone (a warm start) computes them."""
    env = table_bandit(2, 2, 30, 3, 4, shared_context=False)
    policy, _ = fill("kernel_ucb", {"max_points": 10}, env, 12)
    calls = []
    original = KernelDictionary.kernel_rows
    monkeypatch.setattr(KernelDictionary, "kernel_rows", lambda self, x: calls.append(1) or original(self, x))
    current = env.round(12)
    arms = policy.select(current.observation)
    policy.update(current.observation, arms, current.reward(arms))
    assert len(calls) == 1
    current = env.round(13)
    policy.update(current.observation, arms, current.reward(arms))
    assert len(calls) == 2
