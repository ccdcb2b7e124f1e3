"""NeuralUCB, NeuralTS and BootstrapNN: the three exploration modes against each other, batching,
validation and a regret sanity check."""

from __future__ import annotations

import pytest
import torch
from conftest_neural import GaussianContextBandit, batched_matches_alone, play, synthetic_regret

from hare.policies.base import build_policy, make_config
from hare.random import run_keys

N_ARMS, DIM = 3, 4
SMALL = dict(width=8, lr=1e-2, lam=0.1, train_steps=3, batch_size=8, dense_training_rounds=1000)


def small_env(n_runs: int, keys: torch.Tensor, horizon: int = 30) -> GaussianContextBandit:
    return GaussianContextBandit(n_runs, N_ARMS, DIM, horizon, keys)


def trained_policy(exploration: str, rounds: int = 12):
    """A NeuralUCB after ``rounds`` rounds, so ``Z`` and the network have moved from initialisation."""
    keys = run_keys(0, [0, 1], "neural-modes")
    env = small_env(2, keys)
    policy, _, _ = play("neural_ucb", dict(SMALL, exploration=exploration), env, keys, rounds)
    return policy, env.round(rounds).observation


@pytest.mark.parametrize("method", ["jacobian", "functional_jacobian"])
def test_vectorised_jacobians_equal_the_k_pass_loop(method):
    """The closed form and the ``torch.func`` Jacobian (vmap over runs and arms of jacrev) against K autograd passes."""
    policy, observation = trained_policy("loop")
    x = policy.encode_all_arms(observation.contexts)
    computed = getattr(policy.network, method)(x)
    loop = torch.stack([policy.network.gradient(x[:, arm]) for arm in range(N_ARMS)], dim=1)
    assert computed.shape == (2, N_ARMS, policy.network.n_parameters)
    torch.testing.assert_close(computed, loop, atol=1e-6, rtol=0)


@pytest.mark.parametrize("dtype, atol", [(torch.float64, 1e-10), (torch.float32, 1e-5)])
def test_closed_form_jacobian_equals_autograd(dtype, atol):
    """Random parameters and inputs (not the sign-paired initialisation): the closed-form gradient
    against ``torch.autograd`` on each group and input separately, in the order ``(W, w)``."""
    from hare.policies.neural import BatchedReLUNetwork
    from hare.random import CounterRNG

    n_groups, n, width, d_in = 3, 5, 6, 7
    network = BatchedReLUNetwork(CounterRNG(run_keys(0, [0, 1, 2], "neural-closed-form")), "init", 1, width, d_in).to(
        dtype
    )
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        network.weight_in.copy_(torch.randn(n_groups, width, d_in, generator=generator, dtype=dtype))
        network.weight_out.copy_(torch.randn(n_groups, width, generator=generator, dtype=dtype))
    x = torch.randn(n_groups, n, d_in, generator=generator, dtype=dtype)
    closed_form = network.jacobian(x)
    assert closed_form.shape == (n_groups, n, network.n_parameters) and closed_form.dtype == dtype
    for group in range(n_groups):
        for i in range(n):
            out = network(x[:, i : i + 1])[group, 0]
            d_in_grad, d_out_grad = torch.autograd.grad(out, (network.weight_in, network.weight_out))
            expected = torch.cat([d_in_grad[group].flatten(), d_out_grad[group]])
            torch.testing.assert_close(closed_form[group, i], expected, atol=atol, rtol=0)
            assert d_in_grad[torch.arange(n_groups) != group].abs().max() == 0


def test_disjoint_support_gradient_is_the_full_jacobian_on_its_support():
    """``jacrev`` with respect to arm a's block of ``W`` gives the full Jacobian's entries on that block and on ``w``,
    and the full Jacobian is zero elsewhere."""
    policy, observation = trained_policy("jacobian")
    m, dim = SMALL["width"], DIM
    x = policy.encode_all_arms(observation.contexts)
    full = policy.network.functional_jacobian(x)  # (n_runs, K, m K dim + m)
    blocks = policy.network.weight_in.detach().view(2, m, N_ARMS, dim).permute(0, 2, 1, 3)
    support = policy.network.functional_jacobian(
        observation.contexts.to(torch.float32), blocks
    )  # (n_runs, K, m dim + m)
    for arm in range(N_ARMS):
        w_part = full[:, arm, : m * N_ARMS * dim].view(2, m, N_ARMS, dim)
        torch.testing.assert_close(w_part[:, :, arm].flatten(1), support[:, arm, : m * dim], atol=1e-6, rtol=0)
        assert w_part[:, :, torch.arange(N_ARMS) != arm].abs().max() == 0
        torch.testing.assert_close(full[:, arm, m * N_ARMS * dim :], support[:, arm, m * dim :], atol=1e-6, rtol=0)


def test_closed_form_block_jacobian_equals_functional_jacobian():
    policy, observation = trained_policy("diagonal")
    blocks = policy.network.weight_in.detach().view(2, SMALL["width"], N_ARMS, DIM).transpose(1, 2)
    x = observation.contexts.to(torch.float32)
    torch.testing.assert_close(
        policy.network.block_jacobian(x, blocks), policy.network.functional_jacobian(x, blocks), atol=1e-6, rtol=0
    )


def test_disjoint_diagonal_width_equals_the_full_gradient_computation():
    """After training and ``Z`` updates, the support-only diagonal width against ``sum_i g_i^2 / Z_ii`` over all ``p``
    coordinates."""
    policy, observation = trained_policy("diagonal")
    _, width = policy.posterior(observation.contexts)
    full = (
        policy.arm_block_order(policy.network.jacobian(policy.encode_all_arms(observation.contexts))).to(torch.float64)
        / SMALL["width"] ** 0.5
    )
    expected = (full.square() / policy.diagonal_precision[:, None, :]).sum(-1)
    assert not torch.allclose(policy.diagonal_precision, torch.full_like(policy.diagonal_precision, SMALL["lam"]))
    torch.testing.assert_close(width, expected, atol=1e-9, rtol=1e-9)


def test_jacobian_bonus_equals_loop_bonus():
    loop_policy, observation = trained_policy("loop")
    keys = loop_policy.run_keys
    jacobian_policy = build_policy("neural_ucb", dict(SMALL, exploration="jacobian"), small_env(2, keys), keys)
    jacobian_policy.load_state_dict(loop_policy.state_dict())
    loop_mean, loop_width = loop_policy.posterior(observation.contexts)
    mean, width = jacobian_policy.posterior(observation.contexts)
    assert not torch.allclose(
        loop_policy.ridge.inverse, torch.eye(loop_policy.network.n_parameters, dtype=torch.float64) / SMALL["lam"]
    )
    torch.testing.assert_close(mean, loop_mean, atol=0, rtol=0)
    torch.testing.assert_close(width, loop_width, atol=1e-6, rtol=0)


def test_diagonal_equals_full_while_z_is_diagonal():
    keys = run_keys(0, [0, 1], "neural-diagonal")
    env = small_env(2, keys)
    observation = env.round(0).observation
    full = build_policy("neural_ucb", dict(SMALL, exploration="loop"), env, keys)
    diagonal = build_policy("neural_ucb", dict(SMALL, exploration="diagonal"), env, keys)
    torch.testing.assert_close(
        diagonal.posterior(observation.contexts), full.posterior(observation.contexts), atol=1e-12, rtol=0
    )


def test_chunking_changes_nothing():
    policy, observation = trained_policy("jacobian")
    one_arm_mb = policy.bytes_per_arm() / 2**20
    unchunked = policy.posterior(observation.contexts)
    chunked = build_policy(
        "neural_ucb",
        dict(SMALL, exploration="jacobian", memory_budget_mb=1.5 * one_arm_mb),
        small_env(2, policy.run_keys),
        policy.run_keys,
    )
    chunked.load_state_dict(policy.state_dict())
    assert chunked.arms_per_chunk() == 1 and policy.arms_per_chunk() == N_ARMS
    torch.testing.assert_close(chunked.posterior(observation.contexts), unchunked, atol=1e-12, rtol=0)


def test_one_arm_over_budget_is_a_clear_error():
    keys = run_keys(0, [0, 1], "neural-budget")
    env = small_env(2, keys)
    policy = build_policy("neural_ucb", dict(SMALL, exploration="jacobian", memory_budget_mb=1e-4), env, keys)
    with pytest.raises(ValueError, match=r"memory_budget_mb=0.0001 is too small"):
        policy.select(env.round(0).observation)


@pytest.mark.parametrize(
    "name, params",
    [
        ("neural_ucb", dict(SMALL, exploration="jacobian", alpha=0.5)),
        ("neural_ucb", dict(SMALL, exploration="diagonal", alpha=0.5)),
        ("neural_ts", dict(SMALL, exploration="jacobian", nu=0.5)),
        ("bootstrap_nn", dict(SMALL, n_networks=3)),
    ],
)
def test_batched_equals_alone(name, params):
    """Float32 ``bmm`` over a different number of groups may round differently in the last bits, so
    states are compared to 1e-5 and the arm sequences exactly."""
    batched_matches_alone(name, params, lambda n, keys: small_env(n, keys), n_runs=3, horizon=15, atol=1e-5)


def test_state_follows_device_moves():
    keys = run_keys(0, [0], "neural-device")
    policy = (
        build_policy("neural_ts", dict(SMALL, exploration="diagonal"), small_env(1, keys), keys)
        .to("cpu", torch.float64)
        .to(torch.float32)
    )
    assert {name for name, _ in policy.named_buffers()} >= {
        "diagonal_precision",
        "history_contexts",
        "network.initial_in",
    }
    assert {name for name, _ in policy.named_parameters()} == {"network.weight_in", "network.weight_out"}


@pytest.mark.parametrize(
    "name, params, match",
    [
        ("neural_ucb", {"width": 7}, "width: must be an even integer"),
        ("neural_ucb", {"width": 0}, "width"),
        ("neural_ucb", {"encoding": "onehot"}, "encoding: must be one of"),
        ("neural_ucb", {"lam": 0.0}, r"lam: must be > 0"),
        ("neural_ucb", {"lr": 0.0}, "lr: must be > 0"),
        ("neural_ucb", {"batch_size": 0}, "batch_size"),
        ("neural_ucb", {"train_every": 0}, "train_every"),
        ("neural_ucb", {"exploration": "exact"}, "exploration: must be one of"),
        ("neural_ucb", {"memory_budget_mb": 0}, "memory_budget_mb"),
        ("neural_ucb", {"alpha": -1.0}, "alpha: must be >= 0"),
        ("neural_ts", {"nu": -0.1}, "nu: must be >= 0"),
        ("bootstrap_nn", {"n_networks": 0}, "n_networks"),
        ("bootstrap_nn", {"inclusion_probability": 0.0}, "inclusion_probability"),
        ("bootstrap_nn", {"lam": -1.0}, "lam: must be >= 0"),
    ],
)
def test_invalid_hyperparameters(name, params, match):
    with pytest.raises(ValueError, match=match):
        make_config(name, params)


SANITY = dict(width=8, lr=1e-2, lam=1.0, train_steps=5, batch_size=16, dense_training_rounds=1000)


@pytest.mark.parametrize(
    "name, params",
    [
        ("neural_ucb", dict(SANITY, exploration="diagonal", alpha=0.05)),
        ("neural_ts", dict(SANITY, exploration="diagonal", nu=0.05)),
        ("bootstrap_nn", dict(SANITY, lam=0.0, n_networks=3)),
    ],
)
def test_beats_random_on_synthetic(name, params):
    """Total regret over 150 rounds at most 85% of uniform random's (2 runs)."""
    assert synthetic_regret(name, params, 2, 150) <= 0.85 * synthetic_regret("random", {}, 2, 150)


def test_bootstrap_rounding_bound_covers_the_float32_error_and_ties_the_symmetric_start():
    """BootstrapNN's outputs against a float64 recomputation from the same float32 weights: the error is within the
    stated bound, both at the sign-paired initialisation (where the exact output is 0, so every arm ties and the
    arm is the ties stream's) and after training has moved the weights."""
    keys = run_keys(0, [0, 1, 2], "bootstrap-rounding")
    env = small_env(3, keys)
    params = dict(SMALL, n_networks=3)
    fresh = build_policy("bootstrap_nn", params, env, keys)
    trained, _, _ = play("bootstrap_nn", params, small_env(3, keys), keys, 12)
    for policy, t in ((fresh, 0), (trained, 12)):
        contexts = env.round(t).observation.contexts
        scores, rounding = policy.scores_with_rounding(contexts, t)
        q = policy.config.n_networks
        groups = torch.arange(3) * q + policy.rng.randint("bootstrap-head", t, q)
        x = policy.encode_all_arms(contexts).double()
        hidden = torch.relu(x @ policy.network.weight_in[groups].double().transpose(1, 2))
        exact = policy.config.width**0.5 * (hidden @ policy.network.weight_out[groups].double()[:, :, None]).squeeze(-1)
        assert bool(((scores - exact).abs() <= rounding).all()), t
        assert bool((rounding < 1e-3 * (exact.abs().amax() + 1)).all()), "the bound is loose by orders of magnitude"
    ties = fresh.rng.uniform("ties", 0, (env.n_arms,), torch.float64).argmax(-1)
    assert torch.equal(fresh.select(env.round(0).observation), ties), "at the symmetric start every arm ties"
