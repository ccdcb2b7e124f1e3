"""The dense reference of the kernel bandits: one ``(max_points, max_points)`` inverse per run, preallocated.

This is the implementation the project ran before the per-arm-block dictionaries of :mod:`hare.policies.kernel`, kept
unchanged as the reference those are tested against and timed against (``hare bench-neural``). It is not registered:
no config can name it. The equations are those of :mod:`hare.policies.kernel`'s docstring; here the block-diagonal
Gram inverse is stored whole, at its maximum size from round 1.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from hare.envs.base import BanditEnvironment, Observation
from hare.policies.base import Policy, pulled_contexts, upper_confidence_bound
from hare.policies.kernel import KernelModelConfig, KernelTSConfig, KernelUCBConfig, rbf_kernel


class DenseKernelDictionary(nn.Module):
    """Per-run dictionary of (context, arm, reward) points and the inverse of ``K + lam I``.

    Buffers: ``points`` ``(n_runs, max_points, dim)``, ``point_arms`` ``(n_runs, max_points)`` int64,
    ``targets`` ``(n_runs, max_points)``, ``inverse`` ``(n_runs, max_points, max_points)``,
    ``occupied`` ``(max_points,)`` bool. All runs add one point per update, so the slot written
    is the same for every run.
    """

    def __init__(
        self, n_runs: int, dim: int, max_points: int, bandwidth: float, lam: float, when_full: str, refactor_every: int
    ):
        super().__init__()
        self.max_points = max_points
        self.bandwidth = bandwidth
        self.lam = lam
        self.when_full = when_full
        self.refactor_every = refactor_every
        self.register_buffer("points", torch.zeros(n_runs, max_points, dim, dtype=torch.float64))
        self.register_buffer("point_arms", torch.full((n_runs, max_points), -1, dtype=torch.int64))
        self.register_buffer("targets", torch.zeros(n_runs, max_points, dtype=torch.float64))
        self.register_buffer("inverse", torch.zeros(n_runs, max_points, max_points, dtype=torch.float64))
        self.register_buffer("occupied", torch.zeros(max_points, dtype=torch.bool))
        self.register_buffer("n_updates", torch.zeros((), dtype=torch.int64))

    def kernel_to(self, contexts: torch.Tensor, arms: torch.Tensor) -> torch.Tensor:
        """``K(X, z)`` for queries ``z = (contexts (n_runs, n, dim), arms (n_runs, n))``: ``(n_runs, n, max_points)``.

        Empty slots give 0.
        """
        same_arm = (arms[:, :, None] == self.point_arms[:, None, :]) & self.occupied
        return rbf_kernel(contexts.to(torch.float64), self.points, self.bandwidth) * same_arm

    def posterior(self, contexts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean and standard deviation of every arm, each ``(n_runs, n_arms)``; contexts ``(n_runs, n_arms, dim)``."""
        n_runs, n_arms, _ = contexts.shape
        arms = torch.arange(n_arms, device=contexts.device).expand(n_runs, n_arms)
        k = self.kernel_to(contexts, arms)  # (n_runs, n_arms, max_points)
        weights = k @ self.inverse  # k^T M^{-1}, M^{-1} symmetric
        mean = (weights * self.targets[:, None, :]).sum(-1)
        variance = (1.0 - (weights * k).sum(-1)).clamp_min(0.0)
        return mean, variance.sqrt()

    def _remove(self, slot: int) -> None:
        column = (
            self.inverse[:, slot, :] * self.inverse[:, slot, slot, None].rsqrt()
        )  # c / sqrt(c_ss), (n_runs, max_points)
        self.inverse.addcmul_(column[:, :, None], column[:, None, :], value=-1.0)
        self.inverse[:, slot, :] = 0.0
        self.inverse[:, :, slot] = 0.0
        self.occupied[slot] = False

    def add(self, contexts: torch.Tensor, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        """Append one point per run: contexts ``(n_runs, dim)``, arms and rewards ``(n_runs,)``."""
        count = int(self.n_updates)
        if count >= self.max_points and self.when_full == "stop":
            return
        slot = count % self.max_points
        if count >= self.max_points:
            self._remove(slot)
        x = contexts.to(torch.float64)
        k = self.kernel_to(x[:, None, :], arms[:, None])[:, 0]  # (n_runs, max_points)
        u = torch.bmm(k[:, None, :], self.inverse).squeeze(1)  # (M^{-1} k)^T as the faster row product
        schur = 1.0 + self.lam - (k * u).sum(-1)  # (n_runs,), k(z, z) = 1
        scaled = u * schur.rsqrt()[:, None]
        self.inverse.addcmul_(scaled[:, :, None], scaled[:, None, :])
        self.inverse[:, slot, :] = -u / schur[:, None]
        self.inverse[:, :, slot] = -u / schur[:, None]
        self.inverse[:, slot, slot] = 1.0 / schur
        self.points[:, slot] = x
        self.point_arms[:, slot] = arms
        self.targets[:, slot] = rewards.to(torch.float64)
        self.occupied[slot] = True
        self.n_updates += 1
        if int(self.n_updates) % self.refactor_every == 0:
            self.refactorise()

    def gram(self) -> torch.Tensor:
        """``K(X, X) + lam I`` on occupied slots, identity elsewhere: ``(n_runs, max_points, max_points)``."""
        k = self.kernel_to(self.points, self.point_arms)
        k = k * self.occupied[:, None]
        eye = torch.eye(self.max_points, dtype=torch.float64, device=k.device)
        return k + torch.where(self.occupied, self.lam, 1.0) * eye

    def refactorise(self) -> None:
        """Recompute ``(K + lam I)^{-1}`` on the occupied slots by Cholesky; zero elsewhere."""
        inverse = torch.cholesky_inverse(torch.linalg.cholesky(self.gram()))
        mask = self.occupied[:, None] & self.occupied[None, :]
        self.inverse.copy_(inverse * mask)


class DenseKernelPolicy(Policy):
    """A policy reading the kernel posterior of :class:`DenseKernelDictionary`."""

    def __init__(self, config: KernelModelConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        self.dictionary = DenseKernelDictionary(
            env.n_runs,
            env.dim,
            config.max_points,
            config.bandwidth,
            config.lam,
            config.when_full,
            config.refactor_every,
        )

    def update(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        self.dictionary.add(pulled_contexts(observation.contexts, arms), arms, rewards)

    def select(self, observation: Observation) -> torch.Tensor:
        return self.tie_break(self.scores(observation), observation.t)


class DenseKernelUCB(DenseKernelPolicy):
    """DenseKernelUCB (Valko, Korda, Munos, Flaounas & Cristianini 2013, Alg. 1).

        a_t = argmax_a  mu(x_a, a) + (alpha / sqrt(lam)) sigma(x_a, a)

    with ``mu`` and ``sigma`` the kernel ridge posterior of the module docstring (Valko et al.
    write the width as ``eta / sqrt(gamma) * sqrt(k(z,z) - k_z^T (K + gamma I)^{-1} k_z)``;
    ``eta = alpha``, ``gamma = lam``).
    """

    config_class = KernelUCBConfig
    per_run_hyperparameters = ("alpha",)

    def scores(self, observation: Observation) -> torch.Tensor:
        """UCB of every arm, ``(n_runs, n_arms)``."""
        mean, width = self.dictionary.posterior(observation.contexts)
        width = width / math.sqrt(self.config.lam)
        return upper_confidence_bound(mean, width, self.hyperparameter("alpha", width))


class DenseKernelTS(DenseKernelPolicy):
    """Kernel Thompson sampling, GP-TS (Chowdhury & Gopalan 2017, Alg. 2, IGP-TS).

        f_a ~ N(mu(x_a, a), nu^2 sigma^2(x_a, a)),    a_t = argmax_a f_a,

    with ``lam`` playing ``1 + eta``. The arms' kernels are disjoint, so the GP posterior over
    the ``n_arms`` points of a round has zero covariance between arms and the joint sample is
    the independent per-arm sample above; the standard normals come from the run keys.
    Chowdhury & Gopalan's theoretical ``v_t = B + R sqrt(2(gamma_t + 1 + log(1/delta)))`` is
    replaced by the tuned constant ``nu`` (LNUCB-TA §5.1).
    """

    config_class = KernelTSConfig
    per_run_hyperparameters = ("nu",)

    def scores(self, observation: Observation) -> torch.Tensor:
        """Sampled reward of every arm, ``(n_runs, n_arms)``."""
        mean, width = self.dictionary.posterior(observation.contexts)
        z = self.rng.normal("kernel-ts", observation.t, (self.n_arms,))
        return mean + self.hyperparameter("nu", width) * width * z
