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


def per_arm_gradients(policy, contexts):
    """Scaled gradients of every arm by one autograd pass per arm, ``(n_runs, n_arms, p)`` float64, block-major."""
    x = contexts.to(torch.float32)
    arms = torch.arange(N_ARMS).expand(x.shape[0], -1)
    return (
        torch.stack(
            [policy.network.gradient(x[:, arm], policy.blocks_of(arms[:, arm])) for arm in range(N_ARMS)], dim=1
        ).to(torch.float64)
        / SMALL["width"] ** 0.5
    )


@pytest.mark.parametrize("method", ["block_jacobian", "functional_jacobian"])
def test_vectorised_jacobians_equal_the_k_pass_loop(method):
    """The closed form and the ``torch.func`` Jacobian (vmap over runs and arms of jacrev) on each arm's support
    against K autograd passes over all parameters, which vanish off that support."""
    policy, observation = trained_policy("loop")
    m = SMALL["width"]
    x = observation.contexts.to(torch.float32)
    computed = getattr(policy.network, method)(x, policy.network.weight_in.detach())  # (n_runs, K, m dim + m)
    loop = per_arm_gradients(policy, observation.contexts).to(torch.float32) * m**0.5
    assert computed.shape == (2, N_ARMS, m * DIM + m)
    for arm in range(N_ARMS):
        blocks = loop[:, arm, : N_ARMS * m * DIM].view(2, N_ARMS, m * DIM)
        torch.testing.assert_close(computed[:, arm, : m * DIM], blocks[:, arm], atol=1e-6, rtol=0)
        assert blocks[:, torch.arange(N_ARMS) != arm].abs().max() == 0
        torch.testing.assert_close(computed[:, arm, m * DIM :], loop[:, arm, N_ARMS * m * DIM :], atol=1e-6, rtol=0)


@pytest.mark.parametrize("dtype, atol", [(torch.float64, 1e-10), (torch.float32, 1e-5)])
def test_closed_form_jacobian_equals_autograd(dtype, atol):
    """Random parameters and inputs (not the sign-paired initialisation): the closed-form gradient of each input at
    its block against ``torch.autograd`` on each run and input separately, in the order ``(W_b, w)``."""
    from hare.model.relu_network import BlockReLUNetwork
    from hare.random import CounterRNG

    n_runs, n, width, n_blocks, dim = 3, 5, 6, 4, 7
    rng = CounterRNG(run_keys(0, [0, 1, 2], "neural-closed-form"))
    network = BlockReLUNetwork(rng, "init", 1, width, n_blocks, dim).to(dtype)
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        network.weight_in.copy_(torch.randn(n_runs, n_blocks, width, dim, generator=generator, dtype=dtype))
        network.weight_out.copy_(torch.randn(n_runs, width, generator=generator, dtype=dtype))
    x = torch.randn(n_runs, n, dim, generator=generator, dtype=dtype)
    blocks = torch.randint(0, n_blocks, (n_runs, n), generator=generator)
    per_input = network.weight_in.detach()[torch.arange(n_runs)[:, None], blocks]  # (n_runs, n, m, dim)
    closed_form = network.block_jacobian(x, per_input)
    assert closed_form.shape == (n_runs, n, width * dim + width) and closed_form.dtype == dtype
    for i in range(n):
        full = network.gradient(x[:, i], blocks[:, i])  # (n_runs, p): one backward pass, every run at once
        for run in range(n_runs):
            block = int(blocks[run, i])
            on_block = full[run, : n_blocks * width * dim].view(n_blocks, width * dim)
            expected = torch.cat([on_block[block], full[run, n_blocks * width * dim :]])
            torch.testing.assert_close(closed_form[run, i], expected, atol=atol, rtol=0)
            assert on_block[torch.arange(n_blocks) != block].abs().max() == 0


def test_closed_form_block_jacobian_equals_functional_jacobian():
    policy, observation = trained_policy("diagonal")
    blocks = policy.network.weight_in.detach()
    x = observation.contexts.to(torch.float32)
    torch.testing.assert_close(
        policy.network.block_jacobian(x, blocks), policy.network.functional_jacobian(x, blocks), atol=1e-6, rtol=0
    )


def test_disjoint_diagonal_width_equals_the_full_gradient_computation():
    """After training and ``Z`` updates, the per-block closed-form diagonal width against ``sum_i g_i^2 / Z_ii`` over
    all ``p`` coordinates, with the autograd gradient of each arm (float32, hence the tolerance: the width squares
    its products ``u_j x_k`` in float64)."""
    policy, observation = trained_policy("diagonal")
    _, width = policy.posterior(observation.contexts)
    full = per_arm_gradients(policy, observation.contexts)
    inverse = torch.cat([policy.inverse_precision_in.flatten(1), policy.inverse_precision_out], dim=1)
    expected = (full.square() * inverse[:, None, :]).sum(-1)
    assert not torch.allclose(inverse, torch.full_like(inverse, 1 / SMALL["lam"]))
    torch.testing.assert_close(width, expected, atol=1e-9, rtol=1e-6)


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
    """Means exactly; widths to float32 rounding (the loop squares float32 autograd products ``u_j x_k``, the diagonal
    mode their float64 factors)."""
    keys = run_keys(0, [0, 1], "neural-diagonal")
    env = small_env(2, keys)
    observation = env.round(0).observation
    full = build_policy("neural_ucb", dict(SMALL, exploration="loop"), env, keys)
    diagonal = build_policy("neural_ucb", dict(SMALL, exploration="diagonal"), env, keys)
    (diagonal_mean, diagonal_width), (full_mean, full_width) = (
        diagonal.posterior(observation.contexts),
        full.posterior(observation.contexts),
    )
    torch.testing.assert_close(diagonal_mean, full_mean, atol=0, rtol=0)
    torch.testing.assert_close(diagonal_width, full_width, atol=1e-12, rtol=1e-6)


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
        "inverse_precision_in",
        "inverse_precision_out",
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
        q, m = policy.config.n_networks, policy.config.width
        head = policy.rng.randint("bootstrap-head", t, q)
        weight_in = policy.network.block_weights()[torch.arange(3), head].double()  # (n_runs, K, m, dim)
        weight_out = policy.network.weight_out.view(3, q, m)[torch.arange(3), head].double()
        hidden = torch.relu(torch.einsum("rkmd,rkd->rkm", weight_in, contexts.double()))
        exact = m**0.5 * (hidden * weight_out[:, None, :]).sum(-1)
        assert bool(((scores - exact).abs() <= rounding).all()), t
        assert bool((rounding < 1e-3 * (exact.abs().amax() + 1)).all()), "the bound is loose by orders of magnitude"
    ties = fresh.rng.uniform("ties", 0, (env.n_arms,), torch.float64).argmax(-1)
    assert torch.equal(fresh.select(env.round(0).observation), ties), "at the symmetric start every arm ties"
