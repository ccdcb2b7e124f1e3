"""Shared helpers of the neural and neighbour policy tests (imported explicitly, not a conftest)."""

from __future__ import annotations

import functools

import torch

from hare.envs.base import BanditEnvironment, BanditRound, Observation
from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.policies.base import build_policy
from hare.random import CounterRNG, run_keys


class GaussianContextBandit(BanditEnvironment):
    """Small environment with one random unit-norm context per arm: ``mean = <x_a, beta_a>``."""

    def __init__(self, n_runs: int, n_arms: int, dim: int, horizon: int, keys: torch.Tensor):
        self.n_runs, self.n_arms, self.dim, self.horizon, self.query_dim = n_runs, n_arms, dim, horizon, dim
        self.rng = CounterRNG(keys)
        self.beta = CounterRNG(run_keys(0, [0], "beta")).normal("beta", 0, (n_arms, dim))[0]

    def round(self, t: int) -> BanditRound:
        x = torch.nn.functional.normalize(self.rng.normal("x", t, (self.n_arms, self.dim)), dim=-1)
        mean = (x * self.beta).sum(-1)
        return BanditRound(Observation(t, x), mean, mean + 0.1 * self.rng.normal("noise", t, (self.n_arms,)))


def play(name: str, params: dict, env: BanditEnvironment, policy_keys: torch.Tensor, horizon: int):
    """Run ``horizon`` rounds; returns (policy, arms ``(n_runs, horizon)``, total regret ``(n_runs,)``)."""
    policy = build_policy(name, params, env, policy_keys)
    arms, regret = [], torch.zeros(env.n_runs, dtype=torch.float64)
    for t in range(horizon):
        bandit_round = env.round(t)
        chosen = policy.select(bandit_round.observation)
        arms.append(chosen)
        regret += bandit_round.regret(chosen).to(torch.float64)
        policy.update(bandit_round.observation, chosen, bandit_round.reward(chosen))
    return policy, torch.stack(arms, dim=1), regret


def synthetic_regret(name: str, params: dict, n_runs: int, horizon: int) -> torch.Tensor:
    """Mean total regret of ``name`` on default HARE-Sim (uniform random's is cached)."""
    if name == "random":
        return _random_regret(n_runs, horizon)
    return _regret(name, params, n_runs, horizon)


@functools.cache
def _random_regret(n_runs: int, horizon: int) -> torch.Tensor:
    return _regret("random", {}, n_runs, horizon)


def _regret(name: str, params: dict, n_runs: int, horizon: int) -> torch.Tensor:
    keys = run_keys(0, list(range(n_runs)), "synthetic-sanity")
    env = SyntheticBandit(SyntheticConfig(), n_runs, horizon, keys)
    return play(name, params, env, run_keys(1, list(range(n_runs)), name), horizon)[2].mean()


def batched_matches_alone(name: str, params: dict, make_env, n_runs: int, horizon: int, atol: float) -> None:
    """Arms of ``n_runs`` batched runs equal each run alone; every floating state within ``atol``."""
    env_keys = run_keys(3, list(range(n_runs)), "env")
    policy_keys = run_keys(4, list(range(n_runs)), "policy")
    batched, batched_arms, _ = play(name, params, make_env(n_runs, env_keys), policy_keys, horizon)
    for run in range(n_runs):
        alone, alone_arms, _ = play(
            name, params, make_env(1, env_keys[run : run + 1]), policy_keys[run : run + 1], horizon
        )
        assert torch.equal(alone_arms[0], batched_arms[run])
        batched_state = batched.state_dict()
        for key, value in alone.state_dict().items():
            if value.dim() == 0 or key == "run_keys":
                continue
            reference = batched_state[key]
            if (
                value.shape[0] != 1 and reference.shape[0] == n_runs * value.shape[0]
            ):  # groups: n_runs * networks per run
                reference = reference.view(n_runs, *value.shape)[run]
            else:
                reference = reference[run : run + 1]
            if value.is_floating_point():
                torch.testing.assert_close(value, reference, atol=atol, rtol=0, msg=key)
            else:
                assert torch.equal(value, reference), key
