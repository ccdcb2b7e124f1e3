"""Cheaper per-cluster covariances for very large pools (the source notes' third open question; paper, sec:scale).

:class:`~hare.model.covariance.RidgeState` keeps, per group ``g`` (a (head, cluster) pair of HARE) of every run,
the full ``A = lam I + sum_s w_s x_s x_s^T`` and its inverse: ``O(dim^2)`` memory and ``O(dim^2)`` per bonus. The
two states here approximate ``S = sum_s w_s x_s x_s^T`` and keep the rest exact (``b = sum_s w_s r_s x_s``,
``theta = A^{-1} b``, the counts):

* :class:`DiagonalRidgeState`: ``A_diag = lam I + diag(S)``, memory ``O(dim)`` per group; the bonus
  ``x^T A_diag^{-1} x = sum_i x_i^2 / A_ii`` costs ``O(dim)``.
* :class:`LowRankRidgeState` (rank ``r``): a frequent-directions sketch ``B`` ``(r, dim)`` of the group's
  ``sqrt(w_s) x_s`` (Liberty 2013; the one-row-per-step form of Ghashami et al. 2016) keeps the top directions of
  ``S``, and the exact diagonal of the rest: ``A_lr = lam I + D + B^T B``, ``D = diag(S - B^T B)``, so
  ``diag(A_lr) = diag(A)``. Memory ``O(r dim)`` per group; ``A_lr^{-1}`` is applied by the Woodbury identity.

Both expose what :class:`~hare.model.attention.UncertaintyAttention` uses of :class:`RidgeState`:
:meth:`quadratic_form`, :meth:`row_products` (``A^{-1} x``), :attr:`theta`, :meth:`update`, :meth:`update_chosen`,
the buffers ``response`` and ``counts``, ``lam``, ``dim``, ``group_shape``, and :meth:`memory_bytes`. Algebra in
float64, batched over runs and groups (no loop over either).

The error of the low-rank state. Frequent directions guarantees ``0 <= S - B^T B <= Delta I`` in the PSD order,
with ``Delta`` the sum of the step's shrinkages (buffer ``shrinkage``), and
``Delta = (||X||_F^2 - ||B||_F^2) / (r + 1) <= ||X||_F^2 / (r + 1)``, ``||X||_F^2 = sum_s w_s ||x_s||^2``. Since
``D`` is the diagonal of a PSD matrix of norm ``<= Delta``, ``0 <= D <= Delta I``, and with ``A_B = lam I + B^T B``:
``A_B <= A_lr <= A + Delta I`` and ``A <= A_B + Delta I``. Both sides being ``>= lam I``,

    A / (1 + Delta / lam)  <=  A_lr  <=  (1 + Delta / lam) A,

so the squared bonus ``x^T A_lr^{-1} x`` lies within a factor ``1 + Delta / lam`` of the exact ``x^T A^{-1} x``,
above or below (the diagonal term may over-fill directions the sketch dropped); without ``D`` it would only
over-estimate. With ``r >= dim`` every shrinkage is zero (``r + 1`` rows in ``dim`` dimensions have a zero singular
value): ``B^T B = S``, ``D = 0`` and the state equals the full one to rounding. The diagonal state ignores every
correlation, and its bound is only the trivial one: ``A`` and ``A_diag`` both lie between ``lam I`` and
``(lam + ||S||) I``, so its squared bonus is within a factor ``1 + ||S|| / lam`` of the exact one, either way; along
a coordinate axis it under-estimates (``(A^{-1})_ii >= 1 / A_ii``).
"""

from __future__ import annotations

import torch
from torch import nn

from hare.model.covariance import RidgeState

COVARIANCE_KINDS = ("full", "diagonal", "low_rank")


def make_cluster_covariance(
    kind: str,
    n_runs: int,
    group_shape: tuple[int, ...],
    dim: int,
    lam: float = 1.0,
    refactor_every: int = 1000,
    rank: int = 8,
) -> RidgeState | DiagonalRidgeState | LowRankRidgeState:
    """The ridge state of ``kind`` (:data:`COVARIANCE_KINDS`) over ``(n_runs, *group_shape)`` groups of ``dim``
    features. ``full``: :class:`RidgeState` (``rank`` unused); ``diagonal``: :class:`DiagonalRidgeState`
    (``refactor_every``, ``rank`` unused); ``low_rank``: :class:`LowRankRidgeState` of ``rank`` (``refactor_every``
    unused: its inverse is rebuilt exactly from the sketch at every update)."""
    if kind == "full":
        return RidgeState(n_runs, group_shape, dim, lam, refactor_every)
    if kind == "diagonal":
        return DiagonalRidgeState(n_runs, group_shape, dim, lam)
    if kind == "low_rank":
        return LowRankRidgeState(n_runs, group_shape, dim, lam, rank)
    raise ValueError(f"covariance kind must be one of {COVARIANCE_KINDS}, got {kind!r}")


def covariance_bytes(kind: str, n_groups: int, dim: int, rank: int = 8) -> int:
    """The closed form of ``memory_bytes()`` of :func:`make_cluster_covariance`'s state of ``kind`` over ``n_groups``
    groups in all (runs times groups per run), float64, without building it: ``full`` ``8 (G (2 d^2 + 2 d + 1) + 1)``,
    ``diagonal`` ``8 (G (2 d + 1) + 1)``, ``low_rank`` ``8 (G (2 r d + 3 d + 2) + 1)`` with ``r = min(rank, d)``."""
    per_group = {
        "full": 2 * dim * dim + 2 * dim + 1,
        "diagonal": 2 * dim + 1,
        "low_rank": 2 * min(rank, dim) * dim + 3 * dim + 2,
    }
    if kind not in per_group:
        raise ValueError(f"covariance kind must be one of {COVARIANCE_KINDS}, got {kind!r}")
    return 8 * (n_groups * per_group[kind] + 1)


def _broadcast_state(state: torch.Tensor, x: torch.Tensor, trailing: int) -> torch.Tensor:
    """``state`` ``(n_runs, *groups, *rest)`` (``trailing = len(rest)``) viewed with ones for the extra batch
    dimensions of ``x`` ``(n_runs, *batch, *groups, dim)``, so the two broadcast."""
    n_extra = x.dim() - state.dim() + trailing - 1
    if n_extra <= 0:
        return state
    return state.reshape(state.shape[0], *(1,) * n_extra, *state.shape[1:])


class _ApproximateRidge(nn.Module):
    """What both approximations share: ``response`` ``b``, ``counts``, ``n_updates``, the run offsets of
    :meth:`update_chosen`, and :meth:`memory_bytes`."""

    def __init__(self, n_runs: int, group_shape: tuple[int, ...], dim: int, lam: float):
        super().__init__()
        if lam <= 0:
            raise ValueError(f"lam must be positive, got {lam}")
        self.group_shape = tuple(group_shape)
        self.dim = int(dim)
        self.lam = float(lam)
        shape = (n_runs, *self.group_shape)
        self.register_buffer("response", torch.zeros(*shape, dim, dtype=torch.float64))
        self.register_buffer("counts", torch.zeros(shape, dtype=torch.float64))
        self.register_buffer("n_updates", torch.zeros((), dtype=torch.int64))

    @property
    def theta(self) -> torch.Tensor:
        """Ridge estimate ``A^{-1} b``, ``(n_runs, *group_shape, dim)``."""
        return self.row_products(self.response)

    def row_products(self, x: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def memory_bytes(self) -> int:
        """Bytes of the state's tensors (every buffer)."""
        return sum(t.numel() * t.element_size() for t in self.buffers())

    def flat_index(self, index: torch.Tensor) -> torch.Tensor:
        """``(n_runs, S)`` group indices within each run -> ``(n_runs * S,)`` indices into the flattened groups."""
        n_groups = self.counts[0].numel()
        return (index + n_groups * torch.arange(index.shape[0], device=index.device)[:, None]).reshape(-1)

    def _accumulate(self, x: torch.Tensor, reward: torch.Tensor, weight: torch.Tensor) -> None:
        """``b += w r x``, ``counts += w`` on every group (``x`` ``(n_runs, *group_shape, dim)`` float64)."""
        self.response.add_(x * (weight * reward.to(torch.float64))[..., None])
        self.counts.add_(weight)
        self.n_updates.add_(1)

    def _accumulate_chosen(self, flat: torch.Tensor, x: torch.Tensor, reward: torch.Tensor) -> None:
        """``b += r x``, ``counts += 1`` on the flat groups ``flat`` ``(M,)`` (distinct), ``x`` ``(M, dim)``."""
        self.response.view(-1, self.dim).index_add_(0, flat, x * reward.to(torch.float64).reshape(-1)[:, None])
        self.counts.view(-1).index_add_(0, flat, torch.ones(flat.shape[0], dtype=torch.float64, device=flat.device))
        self.n_updates.add_(1)


class DiagonalRidgeState(_ApproximateRidge):
    """``A = lam I + diag(sum_s w_s x_s x_s^T)`` per group of ``(n_runs, *group_shape)``.

    Buffers: ``diagonal`` ``(n_runs, *group_shape, dim)`` (``A_ii``), ``response`` ``b`` of the same shape,
    ``counts`` ``(n_runs, *group_shape)``, ``n_updates``. ``A^{-1} x = x / diag``: exact for the diagonal ``A``,
    so nothing drifts and nothing is refactorised.
    """

    def __init__(self, n_runs: int, group_shape: tuple[int, ...], dim: int, lam: float = 1.0):
        super().__init__(n_runs, group_shape, dim, lam)
        self.register_buffer("diagonal", torch.full((n_runs, *self.group_shape, dim), self.lam, dtype=torch.float64))

    def quadratic_form(self, x: torch.Tensor) -> torch.Tensor:
        """``x^T A^{-1} x = sum_i x_i^2 / A_ii``: x ``(n_runs, *batch, *group_shape, dim)`` (a group dimension may
        be 1 to share one vector over it) -> ``(n_runs, *batch, *group_shape)``."""
        x = x.to(torch.float64)
        return (x * x / _broadcast_state(self.diagonal, x, 1)).sum(-1)

    def row_products(self, x: torch.Tensor) -> torch.Tensor:
        """``A^{-1} x = x / diag``: ``(n_runs, *group_shape, dim)`` -> the same."""
        return x.to(torch.float64) / self.diagonal

    def update(self, x: torch.Tensor, reward: torch.Tensor, weight: torch.Tensor) -> None:
        """``A_ii += w x_i^2``, ``b += w r x`` for every group: x ``(n_runs, *group_shape, dim)``; reward, weight
        ``(n_runs, *group_shape)``, ``w >= 0`` (a weight-0 group is unchanged)."""
        x = x.to(torch.float64)
        weight = weight.to(torch.float64)
        self.diagonal.add_(weight[..., None] * x * x)
        self._accumulate(x, reward, weight)

    def update_chosen(self, index: torch.Tensor, x: torch.Tensor, reward: torch.Tensor) -> None:
        """:meth:`update` with weight 1 on the chosen groups and 0 elsewhere, touching the chosen ones only.

        index ``(n_runs, S)`` flat group indices, distinct within a run; x ``(n_runs, S, dim)``; reward
        ``(n_runs, S)``. Each chosen entry gets one addition of ``x_i^2``, as in :meth:`update`.
        """
        flat = self.flat_index(index)
        x = x.to(torch.float64).reshape(-1, self.dim)
        self.diagonal.view(-1, self.dim).index_add_(0, flat, 1.0 * x * x)
        self._accumulate_chosen(flat, x, reward)


class LowRankRidgeState(_ApproximateRidge):
    """``A_lr = lam I + D + B^T B`` per group of ``(n_runs, *group_shape)``: a rank-``r`` frequent-directions
    sketch ``B`` of the group's ``sqrt(w) x`` plus the exact diagonal of the remainder (module docstring: the
    bound ``A / (1 + Delta/lam) <= A_lr <= (1 + Delta/lam) A``).

    Buffers: ``sketch`` ``B`` and ``basis`` ``P`` ``(n_runs, *group_shape, r, dim)``; ``diagonal`` ``diag(A)``,
    ``inverse_diagonal`` ``M^{-1}`` (``M = lam I + D``) and ``response`` ``(n_runs, *group_shape, dim)``;
    ``shrinkage`` ``Delta`` and ``counts`` ``(n_runs, *group_shape)``; ``n_updates``. ``r = min(rank, dim)``.

    Woodbury: with ``L L^T = I_r + B M^{-1} B^T`` and ``P = L^{-1} B M^{-1}``,

        A_lr^{-1} = M^{-1} - P^T P,    x^T A_lr^{-1} x = x^T M^{-1} x - ||P x||^2,

    ``P`` rebuilt from ``B`` and ``M`` for the updated groups at every update (cost ``O(r^2 dim + r^3)`` per
    group), so no rounding drift accumulates in the inverse.
    """

    def __init__(self, n_runs: int, group_shape: tuple[int, ...], dim: int, lam: float = 1.0, rank: int = 8):
        super().__init__(n_runs, group_shape, dim, lam)
        if rank < 1:
            raise ValueError(f"rank must be >= 1, got {rank}")
        self.rank = min(int(rank), self.dim)
        shape = (n_runs, *self.group_shape)
        self.register_buffer("sketch", torch.zeros(*shape, self.rank, dim, dtype=torch.float64))
        self.register_buffer("basis", torch.zeros(*shape, self.rank, dim, dtype=torch.float64))
        self.register_buffer("diagonal", torch.full((*shape, dim), self.lam, dtype=torch.float64))
        self.register_buffer("inverse_diagonal", torch.full((*shape, dim), 1.0 / self.lam, dtype=torch.float64))
        self.register_buffer("shrinkage", torch.zeros(shape, dtype=torch.float64))

    def quadratic_form(self, x: torch.Tensor) -> torch.Tensor:
        """``x^T A_lr^{-1} x = x^T M^{-1} x - ||P x||^2``: x ``(n_runs, *batch, *group_shape, dim)`` (a group
        dimension may be 1 to share one vector over it) -> ``(n_runs, *batch, *group_shape)``, clamped at 0."""
        x = x.to(torch.float64)
        diagonal_part = torch.einsum("...d,...d->...", x * x, _broadcast_state(self.inverse_diagonal, x, 1))
        projected = torch.einsum("...rd,...d->...r", _broadcast_state(self.basis, x, 2), x)  # (..., r)
        return (diagonal_part - (projected * projected).sum(-1)).clamp_min(0.0)

    def row_products(self, x: torch.Tensor) -> torch.Tensor:
        """``A_lr^{-1} x = M^{-1} x - P^T (P x)``: ``(n_runs, *group_shape, dim)`` -> the same."""
        x = x.to(torch.float64)
        projected = torch.einsum("...rd,...d->...r", self.basis, x)
        return x * self.inverse_diagonal - torch.einsum("...rd,...r->...d", self.basis, projected)

    def sketch_step(
        self, sketch: torch.Tensor, diagonal: torch.Tensor, row: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """One frequent-directions step for a batch of groups, and the new Woodbury factors.

        sketch ``(M, r, dim)``, diagonal ``diag(A)`` after the update ``(M, dim)``, row ``sqrt(w) x`` ``(M, dim)``.
        With ``C = [B; row]`` ``(r + 1, dim)`` and ``C C^T = U diag(s^2) U^T`` (ascending), ``delta = s_0^2``:
        ``B' = diag(sqrt(max(s_i^2 - delta, 0)) / s_i) U^T C`` over the top ``r`` (``B'^T B' = V diag(s^2 -
        delta) V^T``, so ``0 <= C^T C - B'^T B' <= delta I``). Returns ``(B', P, M^{-1}, delta)``.
        """
        stacked = torch.cat([sketch, row[:, None, :]], dim=1)  # (M, r + 1, dim)
        eigenvalues, eigenvectors = torch.linalg.eigh(stacked @ stacked.mT)  # ascending
        eigenvalues = eigenvalues.clamp_min(0.0)
        delta = eigenvalues[:, 0]
        top = eigenvalues[:, 1:]  # (M, r)
        scale = torch.where(top > 0, ((top - delta[:, None]).clamp_min(0.0) / top.clamp_min(1e-300)).sqrt(), 0.0)
        new_sketch = (eigenvectors[:, :, 1:].mT @ stacked) * scale[:, :, None]  # (M, r, dim)
        inverse_diagonal = 1.0 / (diagonal - (new_sketch * new_sketch).sum(1)).clamp_min(self.lam)
        scaled = new_sketch * inverse_diagonal[:, None, :]  # B M^{-1}
        capacitance = torch.eye(self.rank, dtype=torch.float64, device=row.device) + scaled @ new_sketch.mT
        factor = torch.linalg.cholesky(capacitance)
        basis = torch.linalg.solve_triangular(factor, scaled, upper=False)  # L^{-1} B M^{-1}
        return new_sketch, basis, inverse_diagonal, delta

    def update(self, x: torch.Tensor, reward: torch.Tensor, weight: torch.Tensor) -> None:
        """Weighted update of every group: x ``(n_runs, *group_shape, dim)``; reward, weight
        ``(n_runs, *group_shape)``, ``w >= 0``. ``diag(A) += w x^2``, ``b += w r x``, and the sketch takes the
        row ``sqrt(w) x`` (:meth:`sketch_step`); a weight-0 group is left unchanged."""
        x = x.to(torch.float64)
        weight = weight.to(torch.float64)
        dim, rank = self.dim, self.rank
        self.diagonal.add_(weight[..., None] * x * x)
        row = (x * weight.sqrt()[..., None]).reshape(-1, dim)
        sketch, basis, inverse_diagonal, delta = self.sketch_step(
            self.sketch.view(-1, rank, dim), self.diagonal.view(-1, dim), row
        )
        moved = (weight > 0).reshape(-1)
        self.sketch.view(-1, rank, dim).copy_(
            torch.where(moved[:, None, None], sketch, self.sketch.view(-1, rank, dim))
        )
        self.basis.view(-1, rank, dim).copy_(torch.where(moved[:, None, None], basis, self.basis.view(-1, rank, dim)))
        self.inverse_diagonal.view(-1, dim).copy_(
            torch.where(moved[:, None], inverse_diagonal, self.inverse_diagonal.view(-1, dim))
        )
        self.shrinkage.view(-1).add_(torch.where(moved, delta, 0.0))
        self._accumulate(x, reward, weight)

    def update_chosen(self, index: torch.Tensor, x: torch.Tensor, reward: torch.Tensor) -> None:
        """:meth:`update` with weight 1 on the chosen groups and 0 elsewhere, touching the chosen ones only (a
        gather, the sketch step, a scatter).

        index ``(n_runs, S)`` flat group indices, distinct within a run; x ``(n_runs, S, dim)``; reward
        ``(n_runs, S)``.
        """
        dim, rank = self.dim, self.rank
        flat = self.flat_index(index)
        x = x.to(torch.float64).reshape(-1, dim)
        diagonal = self.diagonal.view(-1, dim)
        diagonal.index_add_(0, flat, 1.0 * x * x)
        sketch, basis, inverse_diagonal, delta = self.sketch_step(
            self.sketch.view(-1, rank, dim).index_select(0, flat), diagonal.index_select(0, flat), x
        )
        self.sketch.view(-1, rank, dim).index_copy_(0, flat, sketch)
        self.basis.view(-1, rank, dim).index_copy_(0, flat, basis)
        self.inverse_diagonal.view(-1, dim).index_copy_(0, flat, inverse_diagonal)
        self.shrinkage.view(-1).index_add_(0, flat, delta)
        self._accumulate_chosen(flat, x, reward)
