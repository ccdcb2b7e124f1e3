"""Shared fixtures of the baseline-policy tests: recorded rounds, a reward-table bandit, and drivers."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch

from hare.envs.base import BanditEnvironment, BanditRound, Observation
from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.policies import build_policy
from hare.policies.base import Policy
from hare.random import CounterRNG, run_keys

SMALL_KERNEL = {"max_points": 48, "refactor_every": 40}

DEFAULT_PARAMS = {
    "random": {},
    "ucb1": {},
    "kl_ucb": {},
    "eps_greedy": {"epsilon": 0.1},
    "beta_thompson": {},
    "linucb": {},
    "lin_ts": {"nu": 0.1},
    "lin_thompson_ucb": {"alpha": 0.5, "nu": 0.1},
    "kernel_ucb": dict(SMALL_KERNEL),
    "kernel_ts": {**SMALL_KERNEL, "nu": 0.1},
}

SANITY_ENV = SyntheticConfig(n_items=8, n_clusters=4, n_users=1, link="logistic", reward_scale=3.0)
"""A small linear HARE-Sim instance with mean rewards in (0, 1), where the best fixed arm is
clearly better than a random one, so context-free policies have something to learn too."""


class TableBandit(BanditEnvironment):
    """A bandit read from fixed tables, one run per leading index.

    contexts: ``(n_runs, horizon, n_arms, dim)``; rewards: ``(n_runs, horizon, n_arms)`` (also the means).
    """

    def __init__(self, contexts: torch.Tensor, rewards: torch.Tensor):
        self.contexts = contexts.to(torch.float64)
        self.rewards = rewards.to(torch.float64)
        self.n_runs, self.horizon, self.n_arms, self.dim = self.contexts.shape
        self.query_dim = self.dim

    def round(self, t: int) -> BanditRound:
        rewards = self.rewards[:, t]
        return BanditRound(Observation(t, self.contexts[:, t]), rewards, rewards)


def random_table(
    seed: int, n_runs: int, horizon: int, n_arms: int, dim: int, shared_context: bool = True
) -> TableBandit:
    """A :class:`TableBandit` with unit-norm Gaussian contexts and rewards ``x^T theta_a + noise``."""
    rng = CounterRNG(run_keys(seed, range(n_runs), "table"))
    n_context_arms = 1 if shared_context else n_arms
    x = rng.normal("contexts", 0, (horizon, n_context_arms, dim))
    x = (x / x.norm(dim=-1, keepdim=True)).expand(n_runs, horizon, n_arms, dim)
    theta = CounterRNG(run_keys(seed, [0], "table-theta")).normal("theta", 0, (n_arms, dim))[0]
    rewards = (x * theta).sum(-1) + 0.1 * rng.normal("noise", 0, (horizon, n_arms))
    return TableBandit(x.contiguous(), rewards)


@dataclass
class Trajectory:
    """What one simulation produced: arms ``(horizon, n_runs)``, pseudo-regret ``(horizon, n_runs)`` and the
    policy in its final state."""

    arms: torch.Tensor
    regret: torch.Tensor
    policy: Policy


def simulate(
    name: str, params: dict, env: BanditEnvironment, keys: torch.Tensor, rounds: list[BanditRound] | None = None
) -> Trajectory:
    """Run policy ``name`` on ``env`` for its horizon (or on pre-recorded ``rounds``)."""
    policy = build_policy(name, params, env, keys)
    arms, regret = [], []
    for t in range(env.horizon):
        current = rounds[t] if rounds is not None else env.round(t)
        chosen = policy.select(current.observation)
        policy.update(current.observation, chosen, current.reward(chosen))
        arms.append(chosen)
        regret.append(current.regret(chosen))
    return Trajectory(torch.stack(arms), torch.stack(regret), policy)


@pytest.fixture(autouse=True, scope="session")
def single_thread():
    """Tiny tensors: one thread is faster and keeps timings steady."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="session")
def default_params() -> dict:
    return DEFAULT_PARAMS


@pytest.fixture(scope="session")
def simulator():
    return simulate


@pytest.fixture(scope="session")
def table_bandit():
    return random_table


@pytest.fixture(scope="session")
def sanity_rounds():
    """``(env, rounds)``: 4 runs of 800 recorded rounds of :data:`SANITY_ENV`."""
    env = SyntheticBandit(SANITY_ENV, 4, 800, run_keys(0, range(4), "sanity-env"))
    return env, [env.round(t) for t in range(env.horizon)]


@pytest.fixture(scope="session")
def sanity_regret(sanity_rounds):
    """Mean cumulative pseudo-regret of a policy on :func:`sanity_rounds`, memoised per name."""
    env, rounds = sanity_rounds
    cache: dict[str, float] = {}

    def regret(name: str) -> float:
        if name not in cache:
            keys = run_keys(0, range(env.n_runs), "sanity", name)
            cache[name] = float(simulate(name, DEFAULT_PARAMS[name], env, keys, rounds).regret.sum(0).mean())
        return cache[name]

    return regret


@pytest.fixture(scope="session")
def batched_equals_unbatched():
    """Assert that ``n_runs`` runs together pull exactly the arms each run pulls alone."""

    def check(name: str, params: dict, n_runs: int = 3, horizon: int = 60) -> None:
        config = SyntheticConfig(n_items=5, n_clusters=5, n_users=2)
        env_keys = run_keys(7, range(n_runs), "batched-env")
        policy_keys = run_keys(7, range(n_runs), "batched", name)
        together = simulate(name, params, SyntheticBandit(config, n_runs, horizon, env_keys), policy_keys).arms
        for run in range(n_runs):
            alone = simulate(
                name, params, SyntheticBandit(config, 1, horizon, env_keys[run : run + 1]), policy_keys[run : run + 1]
            ).arms
            assert torch.equal(together[:, run], alone[:, 0]), f"{name}: run {run} differs when batched"

    return check
