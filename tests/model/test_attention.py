import math

import pytest
import torch

from hare.model.attention import UncertaintyAttention
from hare.model.clustering import kmeans
from hare.model.covariance import RidgeState
from hare.model.covariance_approx import DiagonalRidgeState, LowRankRidgeState


def build(problem, lam=1.0, kind="full", rank=8):
    return UncertaintyAttention(
        problem["keys"],
        problem["values"],
        problem["output"],
        problem["clusters"],
        problem["n_runs"],
        lam,
        covariance_kind=kind,
        covariance_rank=rank,
    )


def train(attention, problem, rounds=6):
    gen = torch.Generator().manual_seed(1)
    n_runs, n_heads, key_dim = problem["n_runs"], *problem["keys"].shape[::2]
    history = []
    for _ in range(rounds):
        q = torch.randn(n_runs, n_heads, key_dim, generator=gen, dtype=torch.float64)
        w = torch.rand(n_runs, n_heads, attention.n_clusters, generator=gen, dtype=torch.float64)
        attention.update(q, w)
        history.append((q, w))
    return history


def test_alpha_zero_equals_scaled_dot_product_attention(attention_problem):
    attention = build(attention_problem)
    train(attention, attention_problem)
    q = attention_problem["queries"]  # (B, Q, H, d_k)
    out = attention(q, alpha=0.0)
    b, nq, h, _ = q.shape
    keys = attention_problem["keys"][None].expand(b, -1, -1, -1)  # (B, H, N, d_k)
    values = attention_problem["values"][None].expand(b, -1, -1, -1)
    reference = torch.nn.functional.scaled_dot_product_attention(q.transpose(1, 2), keys, values)  # (B, H, Q, d_v)
    z = reference.transpose(1, 2).flatten(-2) @ attention_problem["output"]
    torch.testing.assert_close(out.synthesis, z, rtol=1e-10, atol=1e-12)


def test_bonus_equals_brute_force_per_item(attention_problem):
    attention = build(attention_problem, lam=0.5)
    history = train(attention, attention_problem)
    q = attention_problem["queries"]
    alpha = torch.tensor([0.3, 1.0, 2.0], dtype=torch.float64)[:, None]  # per head (H, 1)
    out = attention(q, alpha=alpha)
    clusters = attention_problem["clusters"]
    b_runs, nq, n_heads, key_dim = q.shape
    for b in range(b_runs):
        for h in range(n_heads):
            sigma = [0.5 * torch.eye(key_dim, dtype=torch.float64) for _ in range(4)]
            for qs, w in history:
                for j in range(4):
                    sigma[j] = sigma[j] + w[b, h, j] * torch.outer(qs[b, h], qs[b, h])
            for i in range(nq):
                x = q[b, i, h]
                logits = []
                for n in range(len(clusters)):
                    bonus = torch.sqrt(x @ torch.linalg.inv(sigma[int(clusters[n])]) @ x)
                    torch.testing.assert_close(out.bonuses[b, i, h, clusters[n]], bonus)
                    logits.append(x @ attention_problem["keys"][h, n] / math.sqrt(key_dim) + alpha[h, 0] * bonus)
                torch.testing.assert_close(out.weights[b, i, h], torch.softmax(torch.stack(logits), 0))


def test_weights_sum_to_one_and_heads_are_independent(attention_problem):
    attention = build(attention_problem)
    train(attention, attention_problem)
    q = attention_problem["queries"]
    out = attention(q, alpha=1.0)
    torch.testing.assert_close(out.weights.sum(-1), torch.ones(out.weights.shape[:-1], dtype=torch.float64))
    perturbed = q.clone()
    perturbed[:, :, 1] += 3.0
    out2 = attention(perturbed, alpha=1.0)
    for h in (0, 2):
        torch.testing.assert_close(out2.weights[:, :, h], out.weights[:, :, h], rtol=0, atol=0)
        torch.testing.assert_close(out2.bonuses[:, :, h], out.bonuses[:, :, h], rtol=0, atol=0)
    assert not torch.allclose(out2.weights[:, :, 1], out.weights[:, :, 1])


def test_attention_weighted_update_equals_brute_force_weighted_sum(attention_problem):
    attention = build(attention_problem, lam=2.0)
    history = train(attention, attention_problem, rounds=10)
    key_dim = attention_problem["keys"].shape[-1]
    expected = 2.0 * torch.eye(key_dim, dtype=torch.float64) + sum(
        w[..., None, None] * q[:, :, None, :, None] * q[:, :, None, None, :] for q, w in history
    )
    torch.testing.assert_close(attention.covariance.precision, expected)
    torch.testing.assert_close(attention.covariance.inverse, torch.linalg.inv(expected))


def test_cluster_scores_are_mean_item_scores(attention_problem):
    attention = build(attention_problem)
    q = attention_problem["queries"]
    out = attention(q)
    clusters = attention_problem["clusters"]
    expected = torch.stack([out.scores[..., clusters == j].mean(-1) for j in range(4)], dim=-1)
    torch.testing.assert_close(attention.cluster_scores(q), expected)


def test_one_cluster_per_item_gives_per_item_covariance(attention_problem):
    n_items = attention_problem["keys"].shape[1]
    embeddings = torch.randn(n_items, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    labels, _ = kmeans(embeddings, n_items)
    assert sorted(labels.tolist()) == list(range(n_items))
    problem = dict(attention_problem, clusters=labels)
    attention = build(problem)
    q = attention_problem["queries"][:, 0]  # (B, H, d_k)
    attention.update(
        q, torch.nn.functional.one_hot(labels[torch.tensor([[2, 5, 7], [1, 1, 0]])], n_items).to(torch.float64)
    )
    out = attention(attention_problem["queries"])
    eye = torch.eye(q.shape[-1], dtype=torch.float64)
    for b, pulled in enumerate(([2, 5, 7], [1, 1, 0])):
        for h in range(3):
            for n in range(n_items):
                sigma = eye + (torch.outer(q[b, h], q[b, h]) if pulled[h] == n else 0)
                x = attention_problem["queries"][b, :, h]  # (Q, d_k)
                bonus = torch.einsum("qi,ij,qj->q", x, torch.linalg.inv(sigma), x).sqrt()
                torch.testing.assert_close(out.bonuses[b, :, h, labels[n]], bonus)


def test_kmeans_one_cluster_and_determinism():
    points = torch.randn(40, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    assert kmeans(points, 1)[0].eq(0).all()
    first, second = kmeans(points, 4)[0], kmeans(points.clone(), 4)[0]
    assert torch.equal(first, second) and first.unique().numel() == 4
    batched = kmeans(torch.stack([points, points * 2]), 4)[0]
    assert torch.equal(batched[0], first) and torch.equal(batched[1], first)
    with pytest.raises(ValueError, match="n_clusters"):
        kmeans(points, 41)


@pytest.mark.parametrize("kind", ["full", "diagonal", "low_rank"])
@pytest.mark.parametrize("responses", ["none", "shared", "per_cluster"])
def test_chosen_cluster_update_equals_the_one_hot_update(attention_problem, responses, kind):
    """update_chosen(q, j) leaves the attention's state torch.equal to update(q, one_hot(j), y), for a reward shared
    by every cluster (identity link) and one per cluster (the logistic link's working response), for every kind of
    covariance (the low-rank one below full rank, so that its sketch shrinks)."""
    full, chosen = build(attention_problem, kind=kind, rank=2), build(attention_problem, kind=kind, rank=2)
    gen = torch.Generator().manual_seed(3)
    n_runs, n_heads, key_dim = attention_problem["n_runs"], *attention_problem["keys"].shape[::2]
    for _ in range(12):
        q = torch.randn(n_runs, n_heads, key_dim, generator=gen, dtype=torch.float64)
        j = torch.randint(0, full.n_clusters, (n_runs, n_heads), generator=gen)
        y = {
            "none": None,
            "shared": torch.randn(n_runs, 1, 1, generator=gen, dtype=torch.float64),
            "per_cluster": torch.randn(n_runs, 1, full.n_clusters, generator=gen, dtype=torch.float64),
        }[responses]
        full.update(q, torch.nn.functional.one_hot(j, full.n_clusters).double(), y)
        chosen.update_chosen(q, j, y)
    for name, buffer in full.state_dict().items():
        assert torch.equal(buffer, chosen.state_dict()[name]), name


def train_with_responses(attention, problem, rounds=8):
    """Weighted updates with rewards, then one-hot ones through ``update_chosen``; returns ``[(q, w, y)]``."""
    gen = torch.Generator().manual_seed(11)
    n_runs, n_heads, key_dim = problem["n_runs"], *problem["keys"].shape[::2]
    history = []
    for t in range(rounds):
        q = torch.randn(n_runs, n_heads, key_dim, generator=gen, dtype=torch.float64)
        y = torch.randn(n_runs, 1, 1, generator=gen, dtype=torch.float64)
        if t % 2:
            w = torch.rand(n_runs, n_heads, attention.n_clusters, generator=gen, dtype=torch.float64)
            attention.update(q, w, y)
        else:
            j = torch.randint(0, attention.n_clusters, (n_runs, n_heads), generator=gen)
            w = torch.nn.functional.one_hot(j, attention.n_clusters).double()
            attention.update_chosen(q, j, y)
        history.append((q, w, y))
    return history


def test_default_covariance_is_the_full_state_and_estimates_use_its_inverse(attention_problem):
    """The default kind is today's :class:`RidgeState`; ``theta = (lam theta0 + b)^T Sigma^{-1}`` in row form, bit for
    bit."""
    attention = build(attention_problem, lam=0.5)
    assert type(attention.covariance) is RidgeState
    train_with_responses(attention, attention_problem)
    covariance = attention.covariance
    target = covariance.response + attention.prior_parameters() * 0.5
    expected = torch.matmul(target.unsqueeze(-2), covariance.inverse).squeeze(-2)
    assert torch.equal(attention.cluster_estimates(), expected)


def test_low_rank_attention_of_full_rank_equals_the_full_attention(attention_problem):
    full = build(attention_problem, lam=0.5)
    key_dim = attention_problem["keys"].shape[-1]
    low_rank = build(attention_problem, lam=0.5, kind="low_rank", rank=key_dim)
    assert type(low_rank.covariance) is LowRankRidgeState
    train_with_responses(full, attention_problem)
    train_with_responses(low_rank, attention_problem)
    q = attention_problem["queries"]
    expected, out = full(q, alpha=1.5), low_rank(q, alpha=1.5)
    torch.testing.assert_close(out.bonuses, expected.bonuses, rtol=0, atol=1e-10)
    torch.testing.assert_close(out.weights, expected.weights, rtol=0, atol=1e-10)
    torch.testing.assert_close(low_rank.cluster_estimates(), full.cluster_estimates(), rtol=0, atol=1e-10)


def test_diagonal_attention_by_brute_force(attention_problem):
    """``U_{h,j} = sqrt(sum_i q_i^2 / Sigma_ii)`` and ``theta = (lam theta0 + b) / diag(Sigma)`` with
    ``diag(Sigma) = lam + sum w q^2``, ``b = sum w q y``."""
    attention = build(attention_problem, lam=0.5, kind="diagonal")
    assert type(attention.covariance) is DiagonalRidgeState
    history = train_with_responses(attention, attention_problem)
    diagonal = 0.5 + sum(w[..., None] * (q * q)[:, :, None, :] for q, w, _ in history)  # (B, H, C, d_k)
    b = sum((w * y)[..., None] * q[:, :, None, :] for q, w, y in history)
    expected = (0.5 * attention.prior_parameters() + b) / diagonal
    torch.testing.assert_close(attention.cluster_estimates(), expected, rtol=1e-12, atol=1e-12)
    q = attention_problem["queries"]  # (B, Q, H, d_k)
    bonus = torch.einsum("bqhi,bhci->bqhc", q * q, 1.0 / diagonal).sqrt()
    torch.testing.assert_close(attention(q, alpha=1.0).bonuses, bonus, rtol=1e-12, atol=1e-12)
