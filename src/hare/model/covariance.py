"""Batched ridge-regression state with Sherman–Morrison updates.

For every group ``g`` (an arm for LinUCB, a (head, cluster) pair for HARE) of every
run ``b`` the state holds

    A = lam I + sum_s w_s x_s x_s^T,    b = sum_s w_s r_s x_s,    theta = A^{-1} b

and keeps ``A^{-1}`` current with the Sherman–Morrison identity

    (A + w x x^T)^{-1} = A^{-1} - w A^{-1} x x^T A^{-1} / (1 + w x^T A^{-1} x).

Algebra runs in float64. Every ``refactor_every`` updates the inverse is recomputed
from ``A`` by a Cholesky factorisation, so rounding drift cannot accumulate over long
horizons.

The estimate ``theta = A^{-1} b`` is cached per group and follows every single-group update by
the recursive-least-squares step ``theta <- theta + v (r - x^T theta) / (1 + x^T v)``,
``v = A^{-1} x`` (exact algebra for ``A^{-1} b`` after the update), so reading it costs nothing.

Matrix-vector products with the symmetric ``A^{-1}`` are taken in row form, ``v^T = x^T A^{-1}``:
on CPU, torch's batched ``(dim, dim) @ (dim, 1)`` product runs a slow kernel (about 5x slower
than the ``(1, dim) @ (dim, dim)`` product at ``dim = 117``, 4x at ``dim = 4020``). The rank-one
term is applied as ``u u^T`` with ``u = v sqrt(c)``, so a symmetric inverse stays exactly
symmetric.
"""

from __future__ import annotations

import torch
from torch import nn


def shared_vector(x: torch.Tensor, group_shape: tuple[int, ...]) -> torch.Tensor | None:
    """``x[:, 0, ..., 0]`` ``(n_runs, dim)`` when ``x`` ``(n_runs, *group_shape, dim)`` repeats one
    vector per run over all its groups by stride 0 (``expand``); else ``None``."""
    n_group_dims = len(group_shape)
    if n_group_dims < 1 or tuple(x.shape[1:-1]) != tuple(group_shape):
        return None
    if any(x.stride(i) != 0 for i in range(1, n_group_dims + 1) if x.shape[i] > 1):
        return None
    return x[(slice(None), *(0,) * n_group_dims)]


def linear_means(x: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    """``x_a^T theta_a`` for every arm: x, theta ``(n_runs, n_arms, dim)`` -> ``(n_runs, n_arms)``;
    one ``(dim,) @ (dim, n_arms)`` product per run when the context is shared by the arms."""
    shared = shared_vector(x, theta.shape[1:-1])
    if shared is not None:
        return torch.bmm(shared[:, None, :], theta.mT).squeeze(1)
    return (x * theta).sum(-1)


ROW_PRODUCTS_MIN_DIM = 64
"""From this context dimension on, the linear policies score through ``v_a = A_a^{-1} x_a`` of every arm and keep
the pulled arm's for the update. Measured on CPU (float64, one thread, 20 runs): at ``dim = 117``,
``K = 2`` the products take 115 us against 187 us for the quadratic form alone; at ``dim = 13``,
``K = 60`` the per-matrix cost of 1,200 small products (275 us) loses to the form (52 us)."""


def ridge_bytes(groups: int, dim: int) -> int:
    """Bytes of one run's :class:`RidgeState` of ``groups`` groups over ``dim`` features, float64: per group ``A`` and
    ``A^{-1}`` ``(dim, dim)`` each, the response ``b`` and the estimate ``theta`` ``(dim,)`` each and the count,
    ``8 groups (2 dim^2 + 2 dim + 1)`` (the state's shared step counter aside)."""
    return 8 * groups * (2 * dim * dim + 2 * dim + 1)


class RidgeState(nn.Module):
    """Ridge state of shape ``(n_runs, *group_shape)`` over ``dim`` features.

    Buffers: ``precision`` and ``inverse`` ``(n_runs, *group_shape, dim, dim)``,
    ``response`` ``(n_runs, *group_shape, dim)``, ``counts`` ``(n_runs, *group_shape)``;
    ``estimate`` ``(n_runs, *group_shape, dim)`` caches ``A^{-1} b`` (not persistent: it is
    recomputed after ``load_state_dict``; after an all-group :meth:`update` it is recomputed
    lazily, on the next read of :attr:`theta`).
    """

    def __init__(
        self, n_runs: int, group_shape: tuple[int, ...], dim: int, lam: float = 1.0, refactor_every: int = 1000
    ):
        super().__init__()
        if lam <= 0:
            raise ValueError(f"lam must be positive, got {lam}")
        if refactor_every < 1:
            raise ValueError(f"refactor_every must be >= 1, got {refactor_every}")
        self.group_shape = tuple(group_shape)
        self.dim = dim
        self.lam = float(lam)
        self.refactor_every = int(refactor_every)
        eye = torch.eye(dim, dtype=torch.float64)
        full = (n_runs, *self.group_shape, dim, dim)
        self.register_buffer("precision", (lam * eye).expand(full).clone())
        self.register_buffer("inverse", (eye / lam).expand(full).clone())
        self.register_buffer("response", torch.zeros(*full[:-1], dtype=torch.float64))
        self.register_buffer("counts", torch.zeros(full[:-2], dtype=torch.float64))
        self.register_buffer("n_updates", torch.zeros((), dtype=torch.int64))
        self.register_buffer("estimate", torch.zeros(*full[:-1], dtype=torch.float64), persistent=False)
        self.estimate_stale = False
        self._outer: torch.Tensor | None = None
        self._offsets: torch.Tensor | None = None
        self._ones: torch.Tensor | None = None
        self.register_load_state_dict_post_hook(lambda module, keys: module.refresh_estimate())

    @property
    def theta(self) -> torch.Tensor:
        """Ridge estimate ``A^{-1} b``, ``(n_runs, *group_shape, dim)`` (the cached ``estimate``)."""
        if self.estimate_stale:
            self.refresh_estimate()
        return self.estimate

    def memory_bytes(self) -> int:
        """Bytes of the state's tensors (every buffer, the cached estimate included; not the scratch buffers):
        ``8 (n_runs G (2 dim^2 + 2 dim + 1) + 1)`` for ``G`` groups per run."""
        return sum(t.numel() * t.element_size() for t in self.buffers())

    def refresh_estimate(self) -> None:
        """Recompute the cached ``A^{-1} b`` of every group."""
        self.estimate.copy_(torch.matmul(self.response[..., None, :], self.inverse).squeeze(-2))
        self.estimate_stale = False

    def quadratic_form(self, x: torch.Tensor) -> torch.Tensor:
        """``x^T A^{-1} x`` for every group, batched.

        x: ``(n_runs, *batch, *group_shape, dim)``, where ``batch`` is any number of extra
        dimensions (a batch of queries) and any group dimension may be 1 to share one
        vector across those groups (one query against every cluster). Returns
        ``(n_runs, *batch, *group_shape)``. Clamped at zero: the exact value is positive,
        rounding may not be.

        When ``x`` is one vector per run broadcast over every group (stride 0, as a context
        shared by all arms), ``x^T A^{-1} x = <vec(A^{-1}), vec(x x^T)>`` for all groups is one
        ``(dim^2,) @ (dim^2, n_groups)`` product per run, reading each inverse once.
        """
        x = x.to(torch.float64)
        shared = shared_vector(x, self.inverse.shape[1:-2])
        if shared is not None:
            n_runs, dim = shared.shape
            outer = (shared[:, :, None] * shared[:, None, :]).view(n_runs, 1, dim * dim)
            flat_inverse = self.inverse.view(n_runs, -1, dim * dim)
            return torch.bmm(outer, flat_inverse.mT).view(x.shape[:-1]).clamp_min(0.0)
        n_extra = x.dim() - self.inverse.dim() + 1
        inverse = self.inverse
        if n_extra > 0:
            inverse = inverse.reshape(
                inverse.shape[0], *(1,) * n_extra, *inverse.shape[1:]
            )  # (n_runs, 1.., *groups, dim, dim)
        return torch.einsum("...i,...ij,...j->...", x, inverse, x).clamp_min(0.0)

    def row_products(self, x: torch.Tensor) -> torch.Tensor:
        """``v = A^{-1} x`` of every group, taken as ``x^T A^{-1}`` (``A^{-1}`` is symmetric).

        x: ``(n_runs, *group_shape, dim)``, possibly one vector per run expanded over the groups
        by stride 0; returns ``(n_runs, *group_shape, dim)`` float64.
        """
        x = x.to(torch.float64)
        n_runs, dim = x.shape[0], self.dim
        shared = shared_vector(x, self.inverse.shape[1:-2])
        if shared is not None:
            flat_inverse = self.inverse.view(n_runs, -1, dim, dim)
            return torch.matmul(shared[:, None, None, :], flat_inverse).view(x.shape)
        return torch.matmul(x.unsqueeze(-2), self.inverse).squeeze(-2)

    def update(self, x: torch.Tensor, reward: torch.Tensor, weight: torch.Tensor) -> None:
        """Weighted rank-one update of every group at once.

        x: ``(n_runs, *group_shape, dim)``; reward, weight: ``(n_runs, *group_shape)``.
        Weights must be >= 0; a group with weight 0 is left unchanged. With ``v = A^{-1} x`` and
        ``c = w / (1 + w x^T v)`` the inverse becomes ``A^{-1} - u u^T``, ``u = sqrt(c) v`` (one
        in-place ``addcmul_`` over all groups).
        """
        dim = self.dim
        x = x.to(torch.float64)
        weight = weight.to(torch.float64)
        inverse = self.inverse.view(-1, dim, dim)
        x_flat = x.reshape(-1, dim, 1)
        a_inv_x = torch.bmm(x_flat.mT, inverse)  # (n_groups_total, 1, dim): v^T
        w_flat = weight.reshape(-1, 1, 1)
        coef = w_flat / (1.0 + w_flat * torch.bmm(a_inv_x, x_flat))  # (n_groups_total, 1, 1)
        u = a_inv_x * coef.sqrt()
        inverse.addcmul_(u.mT, u, value=-1.0)
        self.precision.view(-1, dim, dim).addcmul_(w_flat * x_flat, x_flat.mT)
        self.response.add_(x * (weight * reward.to(torch.float64))[..., None])
        self.counts.add_(weight)
        self.estimate_stale = True
        self._after_update()

    def update_chosen(self, index: torch.Tensor, x: torch.Tensor, reward: torch.Tensor) -> None:
        """:meth:`update` with weight 1 on the chosen groups and 0 on every other, touching the chosen ones only: a
        gather, the rank-one update and a scatter, at cost ``O(n_runs S dim^2)`` instead of ``O(n_runs G dim^2)``
        for ``G`` groups per run.

        index: ``(n_runs, S)`` flat group index within each run, distinct within a run; x: ``(n_runs, S, dim)``;
        reward: ``(n_runs, S)``. The arithmetic is :meth:`update`'s, term for term, so the state after it equals
        the state after ``update`` with a one-hot weight, element for element: a weight-0 group is left unchanged
        there (every term it adds is a signed zero), and the chosen groups go through the same float64 operations.
        """
        dim = self.dim
        offsets, _ = self.run_offsets()
        flat = (index + offsets[:, None]).reshape(-1)  # (n_runs * S,)
        x_flat = x.to(torch.float64).reshape(-1, dim, 1)
        weight = torch.ones(flat.shape[0], 1, 1, dtype=torch.float64, device=flat.device)
        inverse = self.inverse.view(-1, dim, dim)
        chosen_inverse = inverse.index_select(0, flat)  # (n_runs * S, dim, dim)
        a_inv_x = torch.bmm(x_flat.mT, chosen_inverse)  # (n_runs * S, 1, dim): v^T
        coef = weight / (1.0 + weight * torch.bmm(a_inv_x, x_flat))
        u = a_inv_x * coef.sqrt()
        inverse.index_copy_(0, flat, chosen_inverse.addcmul_(u.mT, u, value=-1.0))
        precision = self.precision.view(-1, dim, dim)
        precision.index_copy_(0, flat, precision.index_select(0, flat).addcmul_(weight * x_flat, x_flat.mT))
        response = self.response.view(-1, dim)
        step = x_flat.squeeze(-1) * (weight.view(-1) * reward.to(torch.float64).reshape(-1))[:, None]
        response.index_copy_(0, flat, response.index_select(0, flat).add_(step))
        counts = self.counts.view(-1)
        counts.index_copy_(0, flat, counts.index_select(0, flat).add_(weight.view(-1)))
        self.estimate_stale = True
        self._after_update()

    def update_selected(
        self, index: torch.Tensor, x: torch.Tensor, reward: torch.Tensor, a_inv_x: torch.Tensor | None = None
    ) -> None:
        """Rank-one update of one group per run, at cost ``O(n_runs dim^2)``.

        index: ``(n_runs,)`` flat index into ``group_shape``; x: ``(n_runs, dim)``; reward: ``(n_runs,)``;
        a_inv_x: ``v = A^{-1} x`` of the selected groups ``(n_runs, dim)`` when the caller has it
        already (from :meth:`row_products` on the current state), else it is computed here.
        In place on the selected groups: ``A^{-1} <- A^{-1} - v v^T / (1 + x^T v)``,
        ``A <- A + x x^T``, ``b <- b + r x``, ``theta <- theta + v (r - x^T theta) / (1 + x^T v)``.
        """
        n_runs, dim = x.shape
        offsets, ones = self.run_offsets()
        flat = index + offsets  # (n_runs,)
        x = x.to(torch.float64)
        reward = reward.to(torch.float64)
        column = x[:, :, None]  # (n_runs, dim, 1)
        inverse = self.inverse.view(-1, dim, dim)
        if a_inv_x is None:
            a_inv_x = torch.bmm(column.mT, inverse.index_select(0, flat)).squeeze(1)  # (n_runs, dim)
        denom = 1.0 + (x * a_inv_x).sum(-1)  # (n_runs,)
        u = a_inv_x * denom.rsqrt()[:, None]
        outer = self.outer_scratch(n_runs)
        inverse.index_add_(0, flat, torch.mul(u[:, :, None], u[:, None, :], out=outer), alpha=-1.0)
        self.precision.view(-1, dim, dim).index_add_(0, flat, torch.mul(column, column.mT, out=outer))
        self.response.view(-1, dim).index_add_(0, flat, x * reward[:, None])
        self.counts.view(-1).index_add_(0, flat, ones)
        if not self.estimate_stale:
            estimate = self.estimate.view(-1, dim)
            residual = (reward - (x * estimate.index_select(0, flat)).sum(-1)) / denom  # (n_runs,)
            estimate.index_add_(0, flat, a_inv_x * residual[:, None])
        self._after_update()

    def run_offsets(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``(g * arange(n_runs), ones(n_runs))`` with ``g`` groups per run: the flat index of each run's
        first group and the count increment, made once per device."""
        n_runs, device = self.counts.shape[0], self.counts.device
        if self._offsets is None or self._offsets.device != device:
            self._offsets = self.counts[0].numel() * torch.arange(n_runs, device=device)
            self._ones = torch.ones(n_runs, dtype=torch.float64, device=device)
        return self._offsets, self._ones

    def outer_scratch(self, n_runs: int) -> torch.Tensor:
        """A reused ``(n_runs, dim, dim)`` float64 buffer for the rank-one terms of :meth:`update_selected`.

        A fresh tensor of that size is new memory every round, and first touches of new pages cost
        more than the product itself at large ``dim`` (MNIST, ``dim = 784``: 98 MB per round at 20 runs).
        """
        shape = (n_runs, self.dim, self.dim)
        if self._outer is None or self._outer.shape != shape or self._outer.device != self.inverse.device:
            self._outer = torch.empty(shape, dtype=torch.float64, device=self.inverse.device)
        return self._outer

    def _after_update(self) -> bool:
        """Count the update and refactorise when due; ``True`` when it did (the estimate is then fresh)."""
        self.n_updates.add_(1)
        if int(self.n_updates) % self.refactor_every == 0:
            self.refactorise()
            return True
        return False

    def refactorise(self) -> None:
        """Recompute ``A^{-1}`` from ``A`` through its Cholesky factor, and ``theta`` from it."""
        self.inverse.copy_(torch.cholesky_inverse(torch.linalg.cholesky(self.precision)))
        self.refresh_estimate()
