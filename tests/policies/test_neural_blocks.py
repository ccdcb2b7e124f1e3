"""The per-arm-block neural bandits against the dense ``x ⊗ e_a`` reference (:mod:`hare.policies.neural_dense`):
initial weights bit for bit, outputs of every arm, parameters after SGD steps, exploration widths of every mode and
the arms chosen over 50 rounds, on CPU and (marked ``cuda``) on a CUDA device."""

from __future__ import annotations

import pytest
import torch
from conftest_neural import GaussianContextBandit, batched_matches_alone

from hare.envs.base import Observation
from hare.envs.classification import disjoint_encoding
from hare.policies.base import make_config
from hare.policies.neural import BootstrapNN
from hare.policies.neural_dense import DenseBootstrapNN, DenseNeuralTS, DenseNeuralUCB
from hare.policies.neural_posterior import NeuralTS, NeuralUCB
from hare.random import CounterRNG, run_keys

CLASSES = {
    "neural_ucb": (NeuralUCB, DenseNeuralUCB),
    "neural_ts": (NeuralTS, DenseNeuralTS),
    "bootstrap_nn": (BootstrapNN, DenseBootstrapNN),
}
SMALL = dict(width=6, lr=5e-2, train_steps=2, batch_size=7, dense_training_rounds=1000)
N_RUNS, DIM = 3, 4

DEVICES = [
    "cpu",
    pytest.param(
        "cuda",
        marks=[pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")],
    ),
]


def pair(name: str, params: dict, n_arms: int, device: str = "cpu", horizon: int = 60):
    """The block policy, the dense reference (same config, keys and device) and their environment."""
    keys = run_keys(0, range(N_RUNS), "neural-blocks", name)
    env = GaussianContextBandit(N_RUNS, n_arms, DIM, horizon, keys)
    config = make_config(name, params)
    new, dense = (cls(config, env, keys).to(device) for cls in CLASSES[name])
    return new, dense, env


def dense_blocks(dense) -> tuple[torch.Tensor, torch.Tensor]:
    """The dense reference's parameters in the block layout: ``(n_runs, n_blocks, q m, dim)`` and ``(n_runs, q m)``."""
    q = dense.network.weight_in.shape[0] // N_RUNS
    width = dense.config.width
    n_blocks = dense.network.input_dim // DIM
    weight_in = dense.network.weight_in.detach().view(N_RUNS, q, width, n_blocks, DIM).permute(0, 3, 1, 2, 4)
    return weight_in.reshape(N_RUNS, n_blocks, q * width, DIM), dense.network.weight_out.detach().reshape(N_RUNS, -1)


def fill_history(policies, n_arms: int, n: int, device: str) -> None:
    """The same random history of ``n`` points (and bootstrap inclusion flags) in every policy."""
    rng = CounterRNG(run_keys(1, range(N_RUNS), "neural-blocks-history"))
    contexts = torch.nn.functional.normalize(rng.normal("x", 0, (n, DIM)), dim=-1).float().to(device)
    arms, rewards = rng.randint("a", 0, n_arms, (n,)).to(device), rng.normal("r", 0, (n,)).float().to(device)
    for policy in policies:
        policy.history_contexts[:, :n], policy.history_arms[:, :n], policy.history_rewards[:, :n] = (
            contexts,
            arms,
            rewards,
        )
        policy.n_observed.fill_(n)
        if hasattr(policy, "inclusion"):
            policy.inclusion[:, :n] = (rng.uniform("in", 0, (n, policy.config.n_networks)) < 0.6).float().to(device)


def play_both(new, dense, env, rounds: int, device: str, follow_dense: bool = False):
    """Both policies over ``rounds`` rounds, each choosing its own arms (or both the reference's); returns the arm
    sequences ``(rounds, n_runs)``."""
    new_arms, dense_arms = [], []
    for t in range(rounds):
        bandit_round = env.round(t)
        observation = Observation(t, bandit_round.observation.contexts.to(device))
        chosen_new, chosen_dense = new.select(observation), dense.select(observation)
        new_arms.append(chosen_new.cpu())
        dense_arms.append(chosen_dense.cpu())
        if follow_dense:
            chosen_new = chosen_dense
        new.update(observation, chosen_new, bandit_round.reward(chosen_new.cpu()).to(device))
        dense.update(observation, chosen_dense, bandit_round.reward(chosen_dense.cpu()).to(device))
    return torch.stack(new_arms), torch.stack(dense_arms)


@pytest.mark.parametrize("encoding", ["disjoint", "arm"])
@pytest.mark.parametrize("n_arms", [1, 3])
@pytest.mark.parametrize("name", sorted(CLASSES))
def test_initial_weights_are_the_dense_draws_bit_for_bit(name, n_arms, encoding):
    params = dict(SMALL, encoding=encoding) | ({"n_networks": 3} if name == "bootstrap_nn" else {})
    new, dense, _ = pair(name, params, n_arms)
    weight_in, weight_out = dense_blocks(dense)
    assert new.network.weight_in.shape == (N_RUNS, n_arms if encoding == "disjoint" else 1, weight_in.shape[2], DIM)
    assert torch.equal(new.network.weight_in.detach(), weight_in)
    assert torch.equal(new.network.weight_out.detach(), weight_out)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    "name, params",
    [
        ("neural_ucb", {"exploration": "diagonal", "alpha": 0.5}),
        ("bootstrap_nn", {"n_networks": 3, "lam": 0.2}),
    ],
)
def test_outputs_of_every_arm_equal_the_dense_network(name, params, device):
    """After 15 rounds of training, every network's output for every arm against the dense ``f(x ⊗ e_a)``."""
    new, dense, env = pair(name, dict(SMALL, **params), 3, device)
    play_both(new, dense, env, 15, device, follow_dense=True)
    x = env.round(15).observation.contexts.to(device).float()
    q = new.networks_per_run
    with torch.no_grad():
        outputs = new.network.output(new.network.arm_hidden(x))  # (n_runs, K, q)
        reference = dense.network(disjoint_encoding(x).repeat_interleave(q, dim=0)).view(N_RUNS, q, 3)
    assert outputs.abs().max() > 1e-3, "training has moved the outputs away from the symmetric start"
    torch.testing.assert_close(outputs, reference.transpose(1, 2), atol=1e-5, rtol=1e-4)


TRAINING = [
    ("neural_ucb", {"lam": 0.5}),
    ("neural_ts", {"lam": 2.0, "batch_size": 1}),
    ("bootstrap_nn", {"n_networks": 3, "lam": 0.0}),
    ("bootstrap_nn", {"n_networks": 2, "lam": 0.7, "batch_size": 5}),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("steps", [1, 6])
@pytest.mark.parametrize("n_arms", [1, 4])
@pytest.mark.parametrize("name, params", TRAINING)
def test_sgd_steps_equal_the_dense_autograd_steps(name, params, n_arms, steps, device):
    """One training (``steps`` SGD steps, closed-form gradients in place) on the same history against the dense
    reference's autograd steps: the parameters to float32 rounding, and they have moved."""
    new, dense, _ = pair(name, dict(SMALL, **params, train_steps=steps), n_arms, device)
    fill_history((new, dense), n_arms, 9, device)
    before = new.network.weight_in.detach().clone()
    new.train_network(9)
    dense.train_network(9)
    weight_in, weight_out = dense_blocks(dense)
    torch.testing.assert_close(new.network.weight_in.detach(), weight_in, atol=2e-6, rtol=1e-5)
    torch.testing.assert_close(new.network.weight_out.detach(), weight_out, atol=2e-6, rtol=1e-5)
    assert not torch.equal(new.network.weight_in.detach(), before)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("exploration", ["diagonal", "jacobian", "loop"])
@pytest.mark.parametrize("n_arms", [1, 3])
def test_widths_equal_the_dense_widths(exploration, n_arms, device):
    """After 12 rounds (``Z`` updated with the pulled gradients, the networks trained), the means and widths of every
    arm against the dense reference's."""
    new, dense, env = pair("neural_ucb", dict(SMALL, exploration=exploration, lam=0.3), n_arms, device)
    play_both(new, dense, env, 12, device, follow_dense=True)
    contexts = env.round(12).observation.contexts.to(device)
    (mean, width), (dense_mean, dense_width) = new.posterior(contexts), dense.posterior(contexts)
    torch.testing.assert_close(mean, dense_mean, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(width, dense_width, atol=1e-9, rtol=1e-5)
    if exploration == "diagonal":
        assert bool((new.inverse_precision_in < 1 / 0.3).any()), "Z has grown from lam I"
    else:
        assert bool((new.ridge.counts == 12).all()), "Z has grown from lam I"
    assert bool((width > 0).any())


ARMS = [
    ("neural_ucb", {"exploration": "diagonal", "alpha": 0.5}, 3, "disjoint"),
    ("neural_ucb", {"exploration": "jacobian", "alpha": 0.5}, 3, "disjoint"),
    ("neural_ucb", {"exploration": "loop", "alpha": 0.5}, 2, "disjoint"),
    ("neural_ucb", {"exploration": "jacobian", "alpha": 0.5}, 3, "arm"),
    ("neural_ts", {"exploration": "diagonal", "nu": 0.5}, 3, "disjoint"),
    ("neural_ts", {"exploration": "diagonal", "nu": 0.5}, 1, "disjoint"),
    ("bootstrap_nn", {"n_networks": 3}, 3, "disjoint"),
    ("bootstrap_nn", {"n_networks": 2, "lam": 0.3, "batch_size": 5}, 4, "disjoint"),
    ("bootstrap_nn", {"n_networks": 3}, 3, "arm"),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name, params, n_arms, encoding", ARMS)
def test_chosen_arms_equal_the_dense_reference(name, params, n_arms, encoding, device):
    """Each policy plays its own arms for 50 rounds: the same arms in every round."""
    new, dense, env = pair(name, dict(SMALL, **params, encoding=encoding), n_arms, device)
    new_arms, dense_arms = play_both(new, dense, env, 50, device)
    assert torch.equal(new_arms, dense_arms)
    if n_arms > 1:
        assert len(new_arms.unique()) > 1


@pytest.mark.parametrize(
    "name, params",
    [
        ("neural_ucb", dict(SMALL, exploration="loop", encoding="arm")),
        ("neural_ts", dict(SMALL, exploration="diagonal", lam=0.5, batch_size=3)),
        ("bootstrap_nn", dict(SMALL, n_networks=2, lam=0.4)),
    ],
)
def test_batched_equals_alone(name, params):
    batched_matches_alone(name, params, lambda n, keys: GaussianContextBandit(n, 3, DIM, 20, keys), 3, 12, atol=1e-5)


def test_diagonal_update_touches_the_pulled_block_only():
    new, _, env = pair("neural_ucb", dict(SMALL, exploration="diagonal", train_steps=0), 3)
    observation = env.round(0).observation
    before = new.inverse_precision_in.clone()
    arms = torch.tensor([0, 2, 2])
    new.update_posterior(observation, arms)
    changed = (new.inverse_precision_in != before).flatten(2).any(-1)  # (n_runs, n_blocks)
    assert torch.equal(changed, torch.nn.functional.one_hot(arms, 3).bool())
