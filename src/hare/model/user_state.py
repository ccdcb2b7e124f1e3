"""Bayesian linear-regression posterior of every user's latent state (paper, sec:method, "User posterior"; term R_user
of sec:decomposition).

For user ``i`` of run ``b``, with prior ``u ~ N(0, prior_var I)`` and observations
``y_s = phi_s^T u + eta_s``, ``eta_s ~ N(0, sigma^2)``:

    S_i   = I / prior_var + sum_s phi_s phi_s^T / sigma^2        (precision)
    m_i   = S_i^{-1} sum_s phi_s y_s / sigma^2                   (posterior mean)

After every update the precision of each touched (run, user) is factorised afresh
(``S = L L^T``, ``O(d_u^3)``, ``d_u`` is small) and the mean is solved from the factor, so
no inverse is ever propagated and there is no drift to control. ``lambda_min`` is the
smallest eigenvalue of ``S_i`` (the ``lambda_min(t)`` of paper, sec:assumptions, assumption 5).
"""

from __future__ import annotations

import torch
from torch import nn


class UserPosterior(nn.Module):
    """Posterior over ``(n_runs, n_users)`` user states of dimension ``user_dim``.

    Buffers: ``precision`` ``(n_runs, n_users, d_u, d_u)``, ``cholesky`` (its lower factor),
    ``information`` ``(n_runs, n_users, d_u)`` (``sum phi y / sigma^2``), ``mean``
    ``(n_runs, n_users, d_u)``, ``counts`` ``(n_runs, n_users)``.
    """

    def __init__(self, n_runs: int, n_users: int, user_dim: int, prior_var: float = 1.0, noise_sigma: float = 0.1):
        super().__init__()
        if prior_var <= 0 or noise_sigma <= 0:
            raise ValueError(f"prior_var and noise_sigma must be positive (got {prior_var}, {noise_sigma})")
        self.n_users = n_users
        self.user_dim = user_dim
        self.prior_var = float(prior_var)
        self.noise_var = float(noise_sigma) ** 2
        eye = torch.eye(user_dim, dtype=torch.float64)
        shape = (n_runs, n_users, user_dim, user_dim)
        self.register_buffer("precision", (eye / prior_var).expand(shape).clone())
        self.register_buffer("cholesky", (eye / prior_var**0.5).expand(shape).clone())
        self.register_buffer("information", torch.zeros(shape[:-1], dtype=torch.float64))
        self.register_buffer("mean", torch.zeros(shape[:-1], dtype=torch.float64))
        self.register_buffer("counts", torch.zeros(shape[:-2], dtype=torch.float64))

    def states(self, users: torch.Tensor) -> torch.Tensor:
        """Posterior means of the active users ``(n_runs,)`` -> ``(n_runs, d_u)``."""
        runs = torch.arange(self.mean.shape[0], device=users.device)
        return self.mean[runs, users]

    def update(self, users: torch.Tensor, features: torch.Tensor, targets: torch.Tensor) -> None:
        """One observation per run: users ``(n_runs,)``, features ``phi`` ``(n_runs, d_u)``, targets ``y``
        ``(n_runs,)``."""
        runs = torch.arange(self.mean.shape[0], device=users.device)
        phi = features.to(torch.float64)
        precision = (
            self.precision[runs, users] + phi[:, :, None] * phi[:, None, :] / self.noise_var
        )  # (n_runs, d_u, d_u)
        information = self.information[runs, users] + phi * targets.to(torch.float64)[:, None] / self.noise_var
        factor = torch.linalg.cholesky(precision)
        self.precision[runs, users] = precision
        self.cholesky[runs, users] = factor
        self.information[runs, users] = information
        self.mean[runs, users] = torch.cholesky_solve(information[:, :, None], factor).squeeze(-1)
        self.counts[runs, users] += 1.0

    def covariance(self) -> torch.Tensor:
        """Posterior covariance ``S^{-1}``, ``(n_runs, n_users, d_u, d_u)``."""
        return torch.cholesky_inverse(self.cholesky)

    def lambda_min(self) -> torch.Tensor:
        """Smallest eigenvalue of the precision, ``(n_runs, n_users)``."""
        return torch.linalg.eigvalsh(self.precision)[..., 0]
