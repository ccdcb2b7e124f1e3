"""The warm start (paper: sec:regimes): a policy fed M logged interactions holds the state of one that
played them online, for every registered policy; and the online rounds continue at t = M."""

from __future__ import annotations

import pytest
import torch

from hare.envs.base import LoggedDataUnavailable
from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.experiments.simulation import SimulationOptions, simulate
from hare.policies import build_policy
from hare.policies.base import policy_names
from hare.random import run_keys

SMALL_NEURAL = {"width": 8, "exploration": "diagonal", "train_steps": 2, "dense_training_rounds": 5, "train_every": 5}
PARAMS = {
    "kernel_ucb": {"max_points": 24, "refactor_every": 10},
    "kernel_ts": {"max_points": 24, "refactor_every": 10},
    "neural_ucb": SMALL_NEURAL,
    "neural_ts": SMALL_NEURAL,
    "bootstrap_nn": {**{k: v for k, v in SMALL_NEURAL.items() if k != "exploration"}, "n_networks": 2},
    "hare": {"projections": "oracle", "alpha": 0.5},
    "hare_synthesize": {"projections": "oracle"},
    "rag_cosine": {"projections": "oracle"},
}
STATELESS = {"random", "rag_cosine"}
"""Policies that learn nothing online: a warm start cannot change them."""

ONLINE_ONLY = {"hare_synthesize"}
"""Synthesize mode outputs z, not arms: it has no arm-level update to warm-start."""

CONFIG = SyntheticConfig(n_items=6, n_clusters=3, n_users=2)
N_RUNS, N_LOGGED = 2, 30


def environment(n_runs: int = N_RUNS, horizon: int = 20) -> SyntheticBandit:
    return SyntheticBandit(CONFIG, n_runs, horizon, run_keys(3, range(n_runs), "warm-env"))


def fresh(name: str, env: SyntheticBandit):
    return build_policy(name, PARAMS.get(name, {}), env, run_keys(3, range(env.n_runs), "warm", name))


def state(policy) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in policy.state_dict().items()}


def assert_same_state(a: dict, b: dict, name: str) -> None:
    assert a.keys() == b.keys(), name
    for key in a:
        assert torch.equal(a[key], b[key]), f"{name}: state {key!r} differs"


def differs(a: dict, b: dict) -> bool:
    return any(not torch.equal(a[key], b[key]) for key in a)


WARM_POLICIES = [name for name in policy_names() if name not in ONLINE_ONLY]


@pytest.mark.parametrize("name", WARM_POLICIES)
def test_warm_start_equals_playing_the_logs_online(name):
    """warm_start(logs) == select then update with the logged arm, round by round; and it is not a no-op."""
    env = environment()
    logs = env.logged(N_LOGGED)
    warm = fresh(name, env)
    warm.warm_start(logs)
    played = fresh(name, env)
    untouched = state(played)
    for m in range(len(logs)):
        observation, arms, rewards = logs.step(m, env.n_runs)
        played.select(observation)
        played.update(observation, arms, rewards)
    assert_same_state(state(warm), state(played), name)
    if name not in STATELESS:
        assert differs(state(warm), untouched), f"{name}: the warm start left the policy unchanged"


@pytest.mark.parametrize("name", sorted(STATELESS))
def test_stateless_policies_have_nothing_to_warm_start(name):
    """The exemption above is earned: these policies hold no per-run learned state at all."""
    policy = fresh(name, environment())
    learned = {k: v for k, v in policy.state_dict().items() if k != "run_keys" and k not in {"query_to_item", "items"}}
    assert not learned, f"{name} holds state {sorted(learned)}; it must be warm-started and tested"


def test_logs_are_one_set_for_every_run_and_policy():
    env, other = environment(), environment(n_runs=5, horizon=40)
    a, b = env.logged(N_LOGGED), other.logged(N_LOGGED)
    assert a.digest() == b.digest()
    observation, arms, rewards = a.step(4, 3)
    assert observation.t == 4 and arms.shape == (3,) and torch.equal(arms, a.arms[4].expand(3))
    assert torch.equal(observation.contexts[0], observation.contexts[2])


def test_simulate_continues_at_round_m_after_the_warm_start():
    env = environment(horizon=5)
    logs = env.logged(N_LOGGED)
    seen = []

    class Recorder(torch.nn.Module):
        run_keys = torch.zeros(N_RUNS, dtype=torch.int64)

        def warm_start(self, logs):
            seen.append(("warm", len(logs)))

        def select(self, observation):
            seen.append(observation.t)
            return torch.zeros(N_RUNS, dtype=torch.int64)

        def update(self, observation, arms, rewards):
            pass

    out = simulate(env, Recorder(), SimulationOptions(record_every=5), logs=logs)
    assert seen == [("warm", N_LOGGED), *range(N_LOGGED, N_LOGGED + 5)]
    assert out["cumulative_regret"].shape == (N_RUNS, 1)


def test_cold_environment_serves_no_logs():
    env = environment()
    env.logs_allowed = False
    with pytest.raises(LoggedDataUnavailable, match="cold regime"):
        env.logged(5)
    with pytest.raises(LoggedDataUnavailable, match="cold regime"):
        env.sample_logged(5, run_keys(0, [0], "x"))
    assert env.logged_reads == 0


@pytest.mark.parametrize(
    "name", ["knn_ucb", "lin_knn_ucb", "lnucb_ta", "beta_thompson_enhanced", "eps_greedy_enhanced"]
)
def test_a_second_warm_start_equals_playing_both_logs(name):
    """The neighbour policies fill an empty history with all logs at once (ArmHistory.extend); a second warm start
    finds it non-empty and appends log by log: both give the state of playing the logs online, to the bit."""
    env = environment(horizon=N_LOGGED)  # room for a second set of logs
    logs = env.logged(N_LOGGED)
    warm = fresh(name, env)
    warm.warm_start(logs)
    warm.warm_start(logs)
    played = fresh(name, env)
    for _ in range(2):
        for m in range(len(logs)):
            observation, arms, rewards = logs.step(m, env.n_runs)
            played.update(observation, arms, rewards)
    assert_same_state(state(warm), state(played), name)
