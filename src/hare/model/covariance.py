"""Batched ridge-regression state with Sherman–Morrison updates.

For every group ``g`` (an arm for LinUCB, a (head, cluster) pair for HARE) of every
run ``b`` the state holds

    A = lam I + sum_s w_s x_s x_s^T,    b = sum_s w_s r_s x_s,    theta = A^{-1} b

and keeps ``A^{-1}`` current with the Sherman–Morrison identity

    (A + w x x^T)^{-1} = A^{-1} - w A^{-1} x x^T A^{-1} / (1 + w x^T A^{-1} x).

Algebra runs in float64. Every ``refactor_every`` updates the inverse is recomputed
from ``A`` by a Cholesky factorisation, so rounding drift cannot accumulate over long
horizons.
"""

from __future__ import annotations

import torch
from torch import nn


class RidgeState(nn.Module):
    """Ridge state of shape ``(n_runs, *group_shape)`` over ``dim`` features.

    Buffers: ``precision`` and ``inverse`` ``(n_runs, *group_shape, dim, dim)``,
    ``response`` ``(n_runs, *group_shape, dim)``, ``counts`` ``(n_runs, *group_shape)``.
    """

    def __init__(self, n_runs: int, group_shape: tuple[int, ...], dim: int, lam: float = 1.0, refactor_every: int = 1000):
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

    @property
    def theta(self) -> torch.Tensor:
        """Ridge estimate ``A^{-1} b``, ``(n_runs, *group_shape, dim)``."""
        return (self.inverse @ self.response[..., None]).squeeze(-1)

    def quadratic_form(self, x: torch.Tensor) -> torch.Tensor:
        """``x^T A^{-1} x`` for every group, batched.

        x: ``(n_runs, *batch, *group_shape, dim)``, where ``batch`` is any number of extra
        dimensions (a batch of queries) and any group dimension may be 1 to share one
        vector across those groups (one query against every cluster). Returns
        ``(n_runs, *batch, *group_shape)``. Clamped at zero: the exact value is positive,
        rounding may not be.
        """
        x = x.to(torch.float64)
        n_extra = x.dim() - self.inverse.dim() + 1
        inverse = self.inverse
        if n_extra > 0:
            inverse = inverse.reshape(inverse.shape[0], *(1,) * n_extra, *inverse.shape[1:])  # (n_runs, 1.., *groups, dim, dim)
        return torch.einsum("...i,...ij,...j->...", x, inverse, x).clamp_min(0.0)

    def update(self, x: torch.Tensor, reward: torch.Tensor, weight: torch.Tensor) -> None:
        """Weighted rank-one update of every group at once.

        x: ``(n_runs, *group_shape, dim)``; reward, weight: ``(n_runs, *group_shape)``.
        A group with weight 0 is left unchanged.
        """
        x = x.to(torch.float64)
        weight = weight.to(torch.float64)
        a_inv_x = (self.inverse @ x[..., None]).squeeze(-1)  # (n_runs, *groups, dim)
        denom = 1.0 + weight * (x * a_inv_x).sum(-1)
        coef = (weight / denom)[..., None, None]
        self.inverse -= coef * a_inv_x[..., :, None] * a_inv_x[..., None, :]
        self.precision += weight[..., None, None] * x[..., :, None] * x[..., None, :]
        self.response += (weight * reward.to(torch.float64))[..., None] * x
        self.counts += weight
        self._after_update()

    def update_selected(self, index: torch.Tensor, x: torch.Tensor, reward: torch.Tensor) -> None:
        """Rank-one update of one group per run, at cost ``O(n_runs dim^2)``.

        index: ``(n_runs,)`` flat index into ``group_shape``; x: ``(n_runs, dim)``; reward: ``(n_runs,)``.
        """
        n_runs = x.shape[0]
        runs = torch.arange(n_runs, device=x.device)
        x = x.to(torch.float64)
        inverse = self.inverse.view(n_runs, -1, self.dim, self.dim)  # (n_runs, n_groups, dim, dim)
        precision = self.precision.view(n_runs, -1, self.dim, self.dim)
        response = self.response.view(n_runs, -1, self.dim)
        counts = self.counts.view(n_runs, -1)
        a_inv = inverse[runs, index]  # (n_runs, dim, dim)
        a_inv_x = (a_inv @ x[..., None]).squeeze(-1)
        denom = 1.0 + (x * a_inv_x).sum(-1)
        inverse[runs, index] = a_inv - a_inv_x[:, :, None] * a_inv_x[:, None, :] / denom[:, None, None]
        precision[runs, index] += x[:, :, None] * x[:, None, :]
        response[runs, index] += reward.to(torch.float64)[:, None] * x
        counts[runs, index] += 1.0
        self._after_update()

    def _after_update(self) -> None:
        self.n_updates += 1
        if int(self.n_updates) % self.refactor_every == 0:
            self.refactorise()

    def refactorise(self) -> None:
        """Recompute ``A^{-1}`` from ``A`` through its Cholesky factor."""
        self.inverse.copy_(torch.cholesky_inverse(torch.linalg.cholesky(self.precision)))

    def inverse_drift(self) -> torch.Tensor:
        """Largest ``|A^{-1} A - I|`` entry per run, ``(n_runs,)``: the rounding drift of the inverse."""
        eye = torch.eye(self.dim, dtype=torch.float64, device=self.inverse.device)
        return (self.inverse @ self.precision - eye).abs().flatten(1).max(dim=1).values

    def relative_drift(self) -> torch.Tensor:
        """``max_g ||A_g^{-1} - chol_inv(A_g)||_F / ||chol_inv(A_g)||_F`` per run, ``(n_runs,)``.

        The relative error of the Sherman–Morrison inverse against a fresh Cholesky
        inverse (HARE_SPEC, "One round" step 5 asks for < 1e-8 between refactorisations).
        """
        exact = torch.cholesky_inverse(torch.linalg.cholesky(self.precision))
        error = torch.linalg.matrix_norm(self.inverse - exact) / torch.linalg.matrix_norm(exact)
        return error.flatten(1).max(dim=1).values
