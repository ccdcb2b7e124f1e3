"""Every registered policy runs on the device of its inputs: 5 rounds of the synthetic environment
on CPU, and on CUDA (marked ``cuda``) with the same arms as on CPU."""

from __future__ import annotations

import pytest
import torch

from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.policies import build_policy
from hare.policies.base import policy_names
from hare.random import run_keys

SKIPPED = {"hare_synthesize"}
"""Synthesize mode outputs a vector, not an arm: no ``select`` to compare."""

SMALL = {
    "kernel_ucb": {"max_points": 16},
    "kernel_ts": {"max_points": 16},
    "neural_ucb": {"width": 8, "train_steps": 2, "batch_size": 4},
    "neural_ts": {"width": 8, "train_steps": 2, "batch_size": 4},
    "bootstrap_nn": {"width": 8, "train_steps": 2, "batch_size": 4, "n_networks": 3},
}
"""Smaller networks and kernel dictionaries, so the check stays quick; defaults otherwise."""

N_RUNS, ROUNDS = 3, 5
POLICIES = [name for name in policy_names() if name not in SKIPPED]


def play(name: str, device: str) -> torch.Tensor:
    """Arms ``(ROUNDS, N_RUNS)`` of policy ``name`` on ``device``, checking every tensor's device."""
    config = SyntheticConfig(n_items=12, n_clusters=3, n_users=2)
    env = SyntheticBandit(config, N_RUNS, ROUNDS, run_keys(0, range(N_RUNS), "devices-env"), device)
    policy = build_policy(name, SMALL.get(name, {}), env, run_keys(0, range(N_RUNS), "devices", name)).to(device)
    expected = torch.device(device)
    for tensor in [*policy.parameters(), *policy.buffers()]:
        assert tensor.device.type == expected.type, f"{name}: state on {tensor.device}, policy moved to {device}"
    played = []
    for t in range(ROUNDS):
        round_ = env.round(t)
        arms = policy.select(round_.observation)
        assert arms.device.type == expected.type and arms.dtype == torch.int64 and arms.shape == (N_RUNS,), name
        assert bool(((arms >= 0) & (arms < env.n_arms)).all()), name
        policy.update(round_.observation, arms, round_.reward(arms))
        played.append(arms.cpu())
    return torch.stack(played)


@pytest.mark.parametrize("name", POLICIES)
def test_runs_on_cpu(name):
    play(name, "cpu")


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("name", POLICIES)
def test_cuda_picks_the_arms_of_cpu(name):
    assert torch.equal(play(name, "cuda"), play(name, "cpu")), name


WARM_STARTED = {
    "hare_learned": ("hare", {"projections": "learned", "fit_steps": 20, "alpha": 0.5}),
    "hare_log_prototypes": ("hare", {"projections": "random", "pool": "log_prototypes", "alpha": 0.5}),
}
"""Configurations whose warm start rebuilds state (HARE's learned projections and its log-prototype pool): after it,
every tensor must still be on the policy's device."""


def play_warm(name: str, device: str) -> torch.Tensor:
    """Arms ``(ROUNDS, N_RUNS)`` of a warm-started configuration of ``WARM_STARTED`` on ``device``."""
    policy_name, params = WARM_STARTED[name]
    config = SyntheticConfig(n_items=12, n_clusters=3, n_users=2)
    env = SyntheticBandit(config, N_RUNS, ROUNDS + 20, run_keys(0, range(N_RUNS), "devices-env"), device)
    policy = build_policy(policy_name, params, env, run_keys(0, range(N_RUNS), "devices", name)).to(device)
    policy.warm_start(env.logged(20))
    for tensor in [*policy.parameters(), *policy.buffers()]:
        assert tensor.device.type == torch.device(device).type, f"{name}: state on {tensor.device} after the warm start"
    played = []
    for t in range(20, 20 + ROUNDS):
        round_ = env.round(t)
        arms = policy.select(round_.observation)
        policy.update(round_.observation, arms, round_.reward(arms))
        played.append(arms.cpu())
    return torch.stack(played)


@pytest.mark.parametrize("name", sorted(WARM_STARTED))
def test_warm_started_state_runs_on_cpu(name):
    play_warm(name, "cpu")


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("name", sorted(WARM_STARTED))
def test_warm_started_cuda_picks_the_arms_of_cpu(name):
    assert torch.equal(play_warm(name, "cuda"), play_warm(name, "cpu")), name
