"""The diagonal and low-rank ridge states against brute force, against the full state, and against their bounds."""

import pytest
import torch

from hare.model.covariance import RidgeState
from hare.model.covariance_approx import (
    COVARIANCE_KINDS,
    DiagonalRidgeState,
    LowRankRidgeState,
    covariance_bytes,
    make_cluster_covariance,
)

N_RUNS, GROUPS, DIM, LAM = 2, (3, 4), 6, 0.7


def stream(rounds, weighted, seed=0, dim=DIM, structured=False):
    """``[(x, reward, weight)]`` with ``x`` ``(N_RUNS, *GROUPS, dim)``; weights one-hot per (run, head) over the
    clusters, or random in [0, 1) with some exact zeros (``weighted``). ``structured``: ``x`` near a 2-dimensional
    subspace (a sketch of rank >= 2 captures most of it, not all)."""
    gen = torch.Generator().manual_seed(seed)
    mixing = torch.randn(2, dim, generator=gen, dtype=torch.float64)
    rounds_ = []
    for _ in range(rounds):
        if structured:
            x = torch.randn(N_RUNS, *GROUPS, 2, generator=gen, dtype=torch.float64) @ mixing
            x = x + 0.3 * torch.randn(N_RUNS, *GROUPS, dim, generator=gen, dtype=torch.float64)
        else:
            x = torch.randn(N_RUNS, *GROUPS, dim, generator=gen, dtype=torch.float64)
        reward = torch.randn(N_RUNS, *GROUPS, generator=gen, dtype=torch.float64)
        if weighted:
            weight = torch.rand(N_RUNS, *GROUPS, generator=gen, dtype=torch.float64)
            weight = torch.where(weight < 0.25, 0.0, weight)
        else:
            chosen = torch.randint(GROUPS[1], (N_RUNS, GROUPS[0]), generator=gen)
            weight = torch.nn.functional.one_hot(chosen, GROUPS[1]).to(torch.float64)
        rounds_.append((x, reward, weight))
    return rounds_


def brute_force(history, dim=DIM):
    """``S = sum w x x^T`` ``(N_RUNS, *GROUPS, dim, dim)``, ``b = sum w r x``, counts, ``||X||_F^2``."""
    s = sum(w[..., None, None] * x[..., :, None] * x[..., None, :] for x, _, w in history)
    b = sum((w * r)[..., None] * x for x, r, w in history)
    counts = sum(w for _, _, w in history)
    frobenius = sum(w * (x * x).sum(-1) for x, _, w in history)
    return s, b, counts, frobenius


def feed(state, history):
    for x, reward, weight in history:
        state.update(x, reward, weight)
    return state


def dense_inverse(state: LowRankRidgeState) -> torch.Tensor:
    """``A_lr^{-1} = M^{-1} - P^T P`` as a dense matrix per group."""
    return torch.diag_embed(state.inverse_diagonal) - state.basis.mT @ state.basis


def queries(seed=5, dim=DIM):
    """A batch of 3 queries per run and head, shared over the clusters: ``(N_RUNS, 3, H, 1, dim)``."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(N_RUNS, 3, GROUPS[0], 1, dim, generator=gen, dtype=torch.float64)


@pytest.mark.parametrize("weighted", [False, True])
def test_diagonal_state_equals_a_brute_force_recomputation(weighted):
    history = stream(12, weighted)
    state = feed(DiagonalRidgeState(N_RUNS, GROUPS, DIM, LAM), history)
    s, b, counts, _ = brute_force(history)
    diagonal = LAM + torch.diagonal(s, dim1=-2, dim2=-1)
    torch.testing.assert_close(state.diagonal, diagonal, rtol=1e-13, atol=1e-13)
    torch.testing.assert_close(state.response, b, rtol=1e-13, atol=1e-13)
    torch.testing.assert_close(state.counts, counts, rtol=0, atol=0)
    torch.testing.assert_close(state.theta, b / diagonal, rtol=1e-13, atol=1e-13)
    q = queries()
    expected = torch.einsum("rqhi,rhci,rqhi->rqhc", q[:, :, :, 0], 1.0 / diagonal, q[:, :, :, 0])
    torch.testing.assert_close(state.quadratic_form(q), expected, rtol=1e-13, atol=1e-13)
    axes = torch.eye(DIM, dtype=torch.float64).expand(N_RUNS, DIM, DIM)[:, :, None, None, :]  # e_i, shared
    exact = torch.diagonal(torch.linalg.inv(LAM * torch.eye(DIM, dtype=torch.float64) + s), dim1=-2, dim2=-1)
    along_axes = state.quadratic_form(axes)  # (N_RUNS, DIM, H, C): 1 / A_ii <= (A^{-1})_ii
    assert (along_axes <= exact.movedim(-1, 1) * (1 + 1e-12)).all()
    assert (along_axes < exact.movedim(-1, 1) * (1 - 1e-3)).any()  # correlations exist: strictly below somewhere


@pytest.mark.parametrize("rank", [DIM, DIM + 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_low_rank_state_of_full_rank_equals_the_full_state(rank, weighted):
    history = stream(15, weighted, seed=1)
    full = feed(RidgeState(N_RUNS, GROUPS, DIM, LAM), history)
    low_rank = feed(LowRankRidgeState(N_RUNS, GROUPS, DIM, LAM, rank), history)
    assert low_rank.rank == DIM
    torch.testing.assert_close(dense_inverse(low_rank), full.inverse, rtol=0, atol=1e-10)
    torch.testing.assert_close(low_rank.theta, full.theta, rtol=0, atol=1e-10)
    q = queries()
    torch.testing.assert_close(low_rank.quadratic_form(q), full.quadratic_form(q), rtol=0, atol=1e-10)
    torch.testing.assert_close(low_rank.shrinkage, torch.zeros_like(low_rank.shrinkage), rtol=0, atol=1e-10)
    torch.testing.assert_close(low_rank.response, full.response, rtol=0, atol=0)


@pytest.mark.parametrize("rank", [1, 2, 4])
@pytest.mark.parametrize("seed", [0, 1])
def test_low_rank_state_keeps_the_frequent_directions_bound(rank, seed):
    """``0 <= S - B^T B <= Delta I`` (eigenvalues), ``Delta <= ||X||_F^2 / (r + 1)``, ``diag(A_lr) = diag(A)``, the
    Woodbury factors invert ``A_lr``, and the squared bonus within a factor ``1 + Delta / lam`` of the exact one."""
    history = stream(25, weighted=seed == 1, seed=seed, structured=True)
    state = feed(LowRankRidgeState(N_RUNS, GROUPS, DIM, LAM, rank), history)
    s, b, _, frobenius = brute_force(history)
    sketch_gram = state.sketch.mT @ state.sketch
    residual = torch.linalg.eigvalsh(s - sketch_gram)  # (..., DIM) ascending
    delta = state.shrinkage
    scale = frobenius.clamp_min(1.0)
    assert (residual[..., 0] >= -1e-10 * scale).all()
    assert (residual[..., -1] <= delta + 1e-10 * scale).all()
    assert (delta <= frobenius / (rank + 1) + 1e-10 * scale).all()
    assert (delta > 0.1).any()  # the sketch really dropped mass: the bounds below are not vacuous
    a_lr = (
        torch.diag_embed(LAM + torch.diagonal(s - sketch_gram, dim1=-2, dim2=-1).clamp_min(0.0)) + sketch_gram
    )  # lam I + D + B^T B
    eye = torch.eye(DIM, dtype=torch.float64)
    torch.testing.assert_close(dense_inverse(state) @ a_lr, eye.expand_as(a_lr), rtol=0, atol=1e-9)
    exact = LAM * eye + s
    torch.testing.assert_close(torch.diagonal(a_lr, dim1=-2, dim2=-1), torch.diagonal(exact, dim1=-2, dim2=-1))
    torch.testing.assert_close(state.theta, (dense_inverse(state) @ b[..., None]).squeeze(-1))
    q = queries(seed=7)
    approx = state.quadratic_form(q)  # (N_RUNS, 3, H, C)
    truth = torch.einsum("rqhi,rhcij,rqhj->rqhc", q[:, :, :, 0], torch.linalg.inv(exact), q[:, :, :, 0])
    factor = (1.0 + delta / LAM)[:, None]  # (N_RUNS, 1, H, C)
    assert (approx <= factor * truth * (1 + 1e-9)).all()
    assert (approx >= truth / factor * (1 - 1e-9)).all()
    assert not torch.allclose(approx, truth, rtol=1e-3)  # an approximation, not the exact bonus


def pick(t: torch.Tensor, chosen: torch.Tensor) -> torch.Tensor:
    """``t[r, h, chosen[r, h]]``: ``(N_RUNS, H, C, *rest)`` -> ``(N_RUNS, H, *rest)``."""
    index = chosen.view(*chosen.shape, 1, *(1,) * (t.dim() - 3)).expand(-1, -1, 1, *t.shape[3:])
    return t.gather(2, index).squeeze(2)


@pytest.mark.parametrize("kind", ["diagonal", "low_rank"])
def test_update_chosen_equals_the_one_hot_update(kind):
    """A one-hot :meth:`update` and :meth:`update_chosen` of the chosen clusters agree, and a weight-0 group is
    left exactly as it was."""
    history = stream(10, weighted=False, seed=3)
    rank = 3 if kind == "low_rank" else 8
    dense = make_cluster_covariance(kind, N_RUNS, GROUPS, DIM, LAM, rank=rank)
    sparse = make_cluster_covariance(kind, N_RUNS, GROUPS, DIM, LAM, rank=rank)
    heads = GROUPS[1] * torch.arange(GROUPS[0])
    for x, reward, weight in history:
        before = {k: v.clone() for k, v in dense.state_dict().items()}
        dense.update(x, reward, weight)
        untouched = weight == 0
        for name, value in dense.state_dict().items():
            if value.dim() >= 3:
                assert torch.equal(value[untouched], before[name][untouched]), name
        chosen = weight.argmax(-1)  # (N_RUNS, H)
        sparse.update_chosen(chosen + heads, pick(x, chosen), pick(reward, chosen))
    for name, value in dense.state_dict().items():
        torch.testing.assert_close(sparse.state_dict()[name], value, rtol=0, atol=1e-12, msg=name)
    q = queries()
    torch.testing.assert_close(sparse.quadratic_form(q), dense.quadratic_form(q), rtol=0, atol=1e-12)


@pytest.mark.parametrize("rank", [3, 9])
def test_memory_bytes_equal_the_closed_forms(rank):
    n_groups = N_RUNS * GROUPS[0] * GROUPS[1]
    r = min(rank, DIM)
    expected = {
        "full": 8 * (n_groups * (2 * DIM**2 + 2 * DIM + 1) + 1),
        "diagonal": 8 * (n_groups * (2 * DIM + 1) + 1),
        "low_rank": 8 * (n_groups * (2 * r * DIM + 3 * DIM + 2) + 1),
    }
    for kind in COVARIANCE_KINDS:
        state = make_cluster_covariance(kind, N_RUNS, GROUPS, DIM, LAM, 10, rank)
        assert state.memory_bytes() == expected[kind] == covariance_bytes(kind, n_groups, DIM, rank), kind


def test_factory_builds_each_kind_and_rejects_others():
    assert type(make_cluster_covariance("full", 1, (2,), 3, 0.5, 7)) is RidgeState
    assert make_cluster_covariance("full", 1, (2,), 3, 0.5, 7).refactor_every == 7
    assert type(make_cluster_covariance("diagonal", 1, (2,), 3)) is DiagonalRidgeState
    low_rank = make_cluster_covariance("low_rank", 1, (2,), 3, 0.5, rank=2)
    assert type(low_rank) is LowRankRidgeState and low_rank.rank == 2 and low_rank.lam == 0.5
    with pytest.raises(ValueError, match="kind"):
        make_cluster_covariance("sparse", 1, (2,), 3)
    with pytest.raises(ValueError, match="rank"):
        make_cluster_covariance("low_rank", 1, (2,), 3, rank=0)
    with pytest.raises(ValueError, match="lam"):
        make_cluster_covariance("diagonal", 1, (2,), 3, lam=0.0)


@pytest.mark.parametrize("kind", ["diagonal", "low_rank"])
def test_state_dict_round_trip_restores_the_bonus(kind):
    history = stream(6, weighted=True, seed=4)
    state = feed(make_cluster_covariance(kind, N_RUNS, GROUPS, DIM, LAM, rank=2), history)
    copy = make_cluster_covariance(kind, N_RUNS, GROUPS, DIM, LAM, rank=2)
    copy.load_state_dict(state.state_dict())
    q = queries()
    assert torch.equal(copy.quadratic_form(q), state.quadratic_form(q))
    assert torch.equal(copy.theta, state.theta)
