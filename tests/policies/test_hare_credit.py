"""Synthesize mode's credit rules (``HAREConfig.credit``, :mod:`hare.policies.hare`): which cluster statistics move
after the reward of a novel output ``z``, and by how much, against brute-force recomputations with plain loops."""

import dataclasses
import math

import numpy as np
import pytest
import torch

from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.model.projections import random_projections
from hare.policies import build_policy, make_config
from hare.policies.hare import CREDITS
from hare.random import run_keys

SMALL = SyntheticConfig(n_items=24, n_clusters=4, n_users=3)
RULES = CREDITS
RANDOM_HEADS = {"projections": "random", "n_heads": 2, "key_dim": 4, "lam": 0.5}


def environment(runs, horizon=12, config=SMALL):
    return SyntheticBandit(config, len(runs), horizon, run_keys(0, runs, "env"))


def policy_for(env, runs, params):
    return build_policy("hare_synthesize", params, env, run_keys(0, runs, "policy"))


def play(policy, env, rounds, start=0):
    """Play ``rounds`` synthesize rounds; per round ``(q, A, z, r, w)`` as numpy arrays, with ``w`` the policy's
    credit weights of the round (before its update)."""
    history = []
    for t in range(start, start + rounds):
        observation = env.round(t).observation
        z = policy.synthesize(observation)
        out = policy.attend(observation)
        weights = policy.credit_weights(out, z)
        reward, _, _ = env.synthesis_outcome(t, z)
        history.append(tuple(v.detach().numpy().copy() for v in (out.queries, out.weights, z, reward, weights)))
        policy.update_synthesis(observation, z, reward)
    return history


# -- brute force ----------------------------------------------------------------------------------------------------


def brute_mass(A, clusters, n_clusters):
    """``M_{h,j} = sum_{n in j} A_{h,n}`` by loops: A ``(B, H, N)`` -> ``(B, H, C)``."""
    B, H, N = A.shape
    mass = np.zeros((B, H, n_clusters))
    for b in range(B):
        for h in range(H):
            for n in range(N):
                mass[b, h, clusters[n]] += A[b, h, n]
    return mass


def brute_gradient_attribution(policy, q, A):
    """``a_{h,j} = sum_{n in j} A_{h,n} dr_hat/dA_{h,n}`` with ``r_hat = <c, z(A)>``, ``z(A) = concat_h(A_h V_h) W_O``
    differentiated by autograd (not through the closed form ``<c, o_{h,n}>``), ``c`` by loops: ``(B, H, C)``."""
    att, proj = policy.attention, policy.projections
    clusters = att.clusters.numpy()
    B, H, N = A.shape
    d_k = policy.key_dim
    attribution = np.zeros((B, H, policy.n_clusters))
    for b in range(B):
        c = sum(proj.key[h].T @ torch.as_tensor(q[b, h]) for h in range(H)) / (H * math.sqrt(d_k))
        weights = torch.tensor(A[b], requires_grad=True)
        heads = torch.stack([weights[h] @ att.values[h] for h in range(H)])  # (H, d_v)
        z = heads.flatten() @ att.output
        (grad,) = torch.autograd.grad((c * z).sum(), weights)
        for h in range(H):
            for n in range(N):
                attribution[b, h, clusters[n]] += A[b, h, n] * float(grad[h, n])
    return attribution


def brute_weights(rule, policy, q, A, z):
    """The credit ``w_{h,j}`` of ``rule`` for one round, by loops: ``(B, H, C)``."""
    clusters = policy.clusters.numpy()
    C = policy.n_clusters
    mass = brute_mass(A, clusters, C)
    B, H, _ = A.shape
    w = np.zeros((B, H, C))
    if rule == "attention_weighted":
        return mass
    if rule == "gradient":
        attribution = brute_gradient_attribution(policy, q, A)
        for b in range(B):
            for h in range(H):
                positive = [max(a, 0.0) for a in attribution[b, h]]
                total = sum(positive)
                w[b, h] = [p / total for p in positive] if total > 0 else mass[b, h]
        return w
    for b in range(B):
        if rule == "nearest_item":
            items = policy.env_items
            distances = [sum((z[b, d] - items[n, d]) ** 2 for d in range(items.shape[1])) for n in range(len(items))]
            target = clusters[int(np.argmin(distances))]
        for h in range(H):
            if rule == "dominant":
                w[b, h, int(np.argmax(mass[b, h]))] = 1.0
            elif rule == "nearest_item":
                w[b, h, target] = 1.0
    return w  # none: zeros


def brute_statistics(policy, history, rule):
    """``Sigma_{h,j} = lam I + sum_t w q q^T`` and ``b_{h,j} = sum_t w q r`` (identity link) by loops."""
    B, H, C, d_k = policy.n_runs, policy.n_heads, policy.n_clusters, policy.key_dim
    lam = policy.config.lam
    precision = np.zeros((B, H, C, d_k, d_k))
    response = np.zeros((B, H, C, d_k))
    for b in range(B):
        for h in range(H):
            for j in range(C):
                precision[b, h, j] = lam * np.eye(d_k)
    for q, A, z, r, _ in history:
        w = brute_weights(rule, policy, q, A, z)
        for b in range(B):
            for h in range(H):
                for j in range(C):
                    precision[b, h, j] += w[b, h, j] * np.outer(q[b, h], q[b, h])
                    response[b, h, j] += w[b, h, j] * q[b, h] * r[b]
    return precision, response


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("params", [{"alpha": 1.0}, dict(RANDOM_HEADS, alpha=2.0)])
def test_each_rule_moves_the_statistics_a_brute_force_computation_gives(rule, params):
    """Round by round the rule's weights, and after the rounds ``Sigma`` and ``b`` of every (run, head, cluster),
    equal a recomputation by loops from the rounds' queries, attention, outputs and rewards."""
    runs = [0, 1]
    env = environment(runs, horizon=6)
    policy = policy_for(env, runs, dict(params, credit=rule))
    policy.env_items = env.pool.embeddings.to(torch.float64).numpy()
    history = play(policy, env, 6)
    for q, A, z, _, weights in history:
        np.testing.assert_allclose(weights, brute_weights(rule, policy, q, A, z), rtol=1e-10, atol=1e-12)
    precision, response = brute_statistics(policy, history, rule)
    covariance = policy.attention.covariance
    np.testing.assert_allclose(covariance.precision.numpy(), precision, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(covariance.response.numpy(), response, rtol=1e-10, atol=1e-12)
    moved = (covariance.counts > 0).numpy()
    if rule in ("dominant", "nearest_item"):  # one cluster per head and round
        assert (covariance.counts.sum(-1) == 6).all() and (moved.sum(-1) <= 6).all()
    if rule == "none":
        assert not moved.any()


def test_the_rules_differ_on_the_same_rounds():
    """On one instance the five rules credit different clusters or weights at least once (no rule is an alias)."""
    runs = [0, 1]
    credited = {}
    for rule in RULES:
        env = environment(runs, horizon=6)
        policy = policy_for(env, runs, dict(RANDOM_HEADS, credit=rule, alpha=0.0))
        credited[rule] = np.stack([w for *_, w in play(policy, env, 6)])
    for i, a in enumerate(RULES):
        for b in RULES[i + 1 :]:
            assert not np.allclose(credited[a], credited[b]), (a, b)


def test_gradient_credit_with_random_values_and_output():
    """Non-identity ``W_V``, ``W_O`` (``d_v = 3``): the closed form ``<c, o_{h,n}>`` equals the autograd derivative of
    ``<c, z(A)>``, and the attributions add up to ``<c, z>`` (gradient times input is exact for a linear model)."""
    runs = [0, 1]
    env = environment(runs, horizon=4)
    policy = policy_for(env, runs, dict(RANDOM_HEADS, credit="gradient"))
    items = env.pool.embeddings.to(torch.float64)
    projections = random_projections(
        2, 4, env.query_dim, env.user_dim, items.shape[1], seed=3, value_init="random", value_dim=3
    )
    policy._build(projections, items, policy.clusters.clone())
    observation = env.round(0).observation
    out = policy.attend(observation)
    q, A = out.queries.numpy(), out.weights.numpy()
    np.testing.assert_allclose(
        policy.credit_weights(out, out.synthesis).numpy(),
        brute_weights("gradient", policy, q, A, out.synthesis.numpy()),
        rtol=1e-10,
        atol=1e-12,
    )
    attribution = brute_gradient_attribution(policy, q, A)
    c = torch.einsum("hke,bhk->be", projections.key, out.queries) / (2 * math.sqrt(4))
    np.testing.assert_allclose(attribution.sum((1, 2)), (c * out.synthesis).sum(-1).numpy(), rtol=1e-10, atol=1e-12)


def test_gradient_credit_falls_back_to_attention_mass_when_no_attribution_is_positive():
    """``q = 0`` gives ``c = 0``: every attribution is zero, and the credit is the attention mass of each cluster;
    with the sign of ``c`` flipped, a head's positive and non-positive clusters swap."""
    runs = [0, 1]
    env = environment(runs, horizon=2)
    policy = policy_for(env, runs, dict(RANDOM_HEADS, credit="gradient"))
    out = policy.attend(env.round(0).observation)
    mass = policy.attention.cluster_mass(out.weights)
    zero = dataclasses.replace(out, queries=torch.zeros_like(out.queries))
    assert torch.equal(policy.credit_weights(zero, out.synthesis), mass)
    forward = policy.credit_weights(out, out.synthesis)
    flipped = policy.credit_weights(dataclasses.replace(out, queries=-out.queries), out.synthesis)
    torch.testing.assert_close(forward.sum(-1), torch.ones_like(forward[..., 0]))
    for w, v in ((forward, flipped), (flipped, forward)):
        positive = w > 0
        has_both = positive.any(-1) & (~positive).any(-1)  # heads with both signs: the other sign gets weight 0
        assert has_both.any()
        assert torch.equal((v > 0)[has_both], ~positive[has_both])


def _onehot_round(policy, observation):
    """Replace the round's attention by one-hot rows (the item of largest weight in each head)."""
    out = policy.attend(observation)
    onehot = torch.nn.functional.one_hot(out.weights.argmax(-1), out.weights.shape[-1]).to(torch.float64)
    policy._cache = (observation, dataclasses.replace(out, weights=onehot))
    return out.synthesis


@pytest.mark.parametrize("rule", ["attention_weighted", "gradient"])
def test_one_hot_attention_credits_as_the_dominant_cluster(rule):
    """With one-hot attention, ``M_{h,j}`` is one-hot on the dominant cluster: attention-weighted (and gradient, whose
    one nonzero attribution or its fallback sits on that cluster) move the same statistics as ``dominant``."""
    runs = [0, 1, 2]
    env = environment(runs, horizon=8)
    states = []
    for credit in ("dominant", rule):
        policy = policy_for(env, runs, dict(RANDOM_HEADS, credit=credit))
        for t in range(8):
            observation = env.round(t).observation
            z = _onehot_round(policy, observation)
            policy.update_synthesis(observation, z, env.synthesis_outcome(t, z)[0])
        states.append(policy.state_dict())
    dominant, other = states
    assert set(other) - set(dominant) <= {"credit_outputs"} and set(dominant) <= set(other)
    for name in dominant:
        torch.testing.assert_close(other[name], dominant[name], rtol=1e-13, atol=1e-14, msg=name)
    assert int(dominant["attention.covariance.counts"].sum()) == 3 * 2 * 8


def test_none_freezes_sigma_and_b_after_the_warm_start():
    """``credit: none``: the warm start's logged pulls fill ``Sigma`` and ``b``; the online rounds leave them bit for
    bit as they were, while the user posterior keeps learning."""
    runs = [0, 1]
    env = environment(runs, horizon=10)
    policy = policy_for(env, runs, {"credit": "none"})
    policy.warm_start(env.logged(40))
    covariance = policy.attention.covariance
    frozen = {name: buffer.clone() for name, buffer in covariance.named_buffers() if name != "estimate"}
    assert int(covariance.counts.sum()) == 2 * 40
    posterior = policy.user_posterior.counts.clone()
    play(policy, env, 10)
    for name, buffer in covariance.named_buffers():
        if name in frozen and name != "n_updates":
            assert torch.equal(buffer, frozen[name]), name
    assert not torch.equal(policy.user_posterior.counts, posterior)


@pytest.mark.parametrize("rule", RULES)
def test_batched_equals_single_runs(rule):
    """Three runs at once play as each run alone: ``z`` to 1e-12 (products over the run dimension may round in the
    last bit), the credited clusters of the one-hot rules exactly, ``Sigma`` and ``b`` to rounding."""
    params = dict(RANDOM_HEADS, credit=rule, online_lr=0.1)
    runs = [0, 1, 2]
    env = environment(runs, horizon=8)
    batched = policy_for(env, runs, params)
    together = play(batched, env, 8)
    for i in runs:
        env_alone = environment([i], horizon=8)
        policy = policy_for(env_alone, [i], params)
        alone = play(policy, env_alone, 8)
        for (_, _, z_b, _, w_b), (_, _, z_a, _, w_a) in zip(together, alone, strict=True):
            np.testing.assert_allclose(z_a[0], z_b[i], rtol=0, atol=1e-12)
            if rule in ("dominant", "nearest_item", "none"):
                assert np.array_equal(w_a[0], w_b[i])
            else:
                np.testing.assert_allclose(w_a[0], w_b[i], rtol=1e-10, atol=1e-12)
        for name in ("precision", "response", "counts"):
            np.testing.assert_allclose(
                getattr(policy.attention.covariance, name)[0].numpy(),
                getattr(batched.attention.covariance, name)[i].numpy(),
                rtol=1e-10,
                atol=1e-12,
                err_msg=name,
            )


def _trajectory(params, config=SMALL, runs=(0, 1, 2), horizon=20):
    runs = list(runs)
    env = environment(runs, horizon, config)
    policy = policy_for(env, runs, params)
    outputs = torch.stack([torch.as_tensor(z) for _, _, z, _, _ in play(policy, env, horizon)])
    return outputs, policy.state_dict()


@pytest.mark.parametrize(
    "params, same",
    [
        ({}, {"credit": "dominant"}),
        ({"projections": "random", "n_heads": 2, "online_lr": 0.1}, {"credit": "dominant"}),
        ({"covariance_update": "attention_weighted"}, {"credit": "attention_weighted"}),
        ({"covariance": "low_rank", "covariance_rank": 3, "n_heads": 2}, {"credit": "dominant"}),
    ],
)
def test_the_default_credit_is_the_explicit_rule_bit_for_bit(params, same):
    """Leaving ``credit`` unset plays exactly as ``credit: dominant`` (and ``covariance_update:
    attention_weighted`` as ``credit: attention_weighted``, as before the credit rules): outputs and every buffer."""
    z, state = _trajectory(params)
    z_explicit, state_explicit = _trajectory(dict(params, **same))
    assert torch.equal(z, z_explicit)
    assert state.keys() == state_explicit.keys()
    for name in state:
        assert torch.equal(state[name], state_explicit[name]), name


@pytest.mark.parametrize(
    "params, recorded",
    [
        ({}, (22.79314253326438, 207.0474555841448, 0.16969178518637162)),
        (
            {"covariance_update": "attention_weighted", "alpha_schedule": "inverse_sqrt"},
            (22.921654508137582, 205.7337544911682, 0.28980754714341755),
        ),
    ],
)
def test_the_default_credit_reproduces_the_recorded_run(params, recorded):
    """Sums of ``z`` over 20 rounds of three runs, of ``Sigma`` and of ``b``, as the policy played them before the
    credit rules existed (recorded from that code)."""
    z, state = _trajectory(params)
    got = (z.sum().item(), state["attention.covariance.precision"].sum().item())
    got += (state["attention.covariance.response"].sum().item(),)
    np.testing.assert_allclose(got, recorded, rtol=1e-9, atol=1e-12)  # a logic change moves them far more; BLAS less


@pytest.mark.parametrize(
    "name, params, match",
    [
        ("hare_synthesize", {"credit": "attention"}, "credit: must be one of"),
        ("hare", {"credit": "gradient"}, "synthesize mode"),
        ("hare_synthesize", {"covariance_update": "attention_weighted", "credit": "nearest_item"}, "credit"),
    ],
)
def test_invalid_credit_configs(name, params, match):
    with pytest.raises(ValueError, match=match):
        make_config(name, params)


@pytest.mark.parametrize("rule", RULES)
def test_every_rule_is_a_synthesize_config(rule):
    assert make_config("hare_synthesize", {"credit": rule}).credit == rule
