"""Kernel bandits: KernelUCB and KernelTS with per-arm RBF kernels.

Kernel. A point is a pair (context, arm); two points interact only within an arm:

    k((x, a), (x', a')) = 1[a = a'] exp(-||x - x'||^2 / (2 bandwidth^2)).

This is the kernel analogue of disjoint LinUCB (one function per arm); the Gram matrix is
block diagonal by arm. The RBF bandwidth is a hyperparameter (default 1: contexts of unit
norm lie at distance <= 2).

Posterior. With arm ``a``'s dictionary ``X_a`` of ``n_a`` points, rewards ``y_a`` and
``M_a = K(X_a, X_a) + lam I``, a point ``z = (x, a)`` has

    mu(z) = k_z^T M_a^{-1} y_a,    sigma^2(z) = k(z, z) - k_z^T M_a^{-1} k_z,    k_z = K(X_a, x).

The inverses ``M_a^{-1}`` are kept exactly per (run, arm) block by
:class:`hare.model.kernel_dictionary.KernelDictionary` (its docstring states the block layout, the
Schur-complement addition, the removal and their rank-2 Woodbury form), so a posterior costs
``sum_a n_a^2`` per run. A round evaluates the kernel once: :meth:`KernelPolicy.update` reuses the
kernel row and the weights ``M_a^{-1} k_z`` that :meth:`KernelPolicy.select` computed for the pulled
arm (a warm start, which feeds ``update`` alone, computes them there).

When the dictionary holds ``max_points`` points, ``when_full = "window"`` (default) drops the
oldest point, over all arms, before adding the new one (a ring buffer, so the kernel estimate
tracks the last ``max_points`` rounds), and ``"stop"`` stops learning. Every ``refactor_every``
updates the inverses are recomputed from the Gram blocks by Cholesky.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, ClassVar

import torch

from hare.envs.base import BanditEnvironment, Observation
from hare.model.kernel_dictionary import KernelDictionary, peak_bytes, rbf_kernel
from hare.policies.base import (
    Policy,
    PolicyConfig,
    pulled_contexts,
    register_policy,
    upper_confidence_bound,
)
from hare.typed import at_least, nonnegative, one_of, positive

__all__ = [
    "KernelModelConfig",
    "KernelPolicy",
    "KernelTS",
    "KernelTSConfig",
    "KernelUCB",
    "KernelUCBConfig",
    "rbf_kernel",
]


WHEN_FULL = ("window", "stop")
"""What a full dictionary does with a new point: drop the oldest (``window``) or keep what it has (``stop``)."""


@dataclass(frozen=True)
class KernelModelConfig(PolicyConfig):
    """Kernel posterior hyperparameters shared by KernelUCB and KernelTS.

    lam: regulariser (1 in LNUCB-TA (Khosravi et al., 2025) §5.1); bandwidth: RBF length scale; max_points: dictionary
    size; when_full: "window" (drop the oldest point) or "stop" (stop adding);
    refactor_every: updates between exact re-inversions.
    """

    lam: Annotated[float, positive] = 1.0
    bandwidth: Annotated[float, positive] = 1.0
    max_points: Annotated[int, at_least(1)] = 1000
    when_full: Annotated[str, one_of(WHEN_FULL)] = "window"
    refactor_every: Annotated[int, at_least(1)] = 500


@dataclass(frozen=True)
class KernelUCBConfig(KernelModelConfig):
    """KernelUCB hyperparameters: those of :class:`KernelModelConfig` and the bonus weight alpha
    (LNUCB-TA §5.1 tunes it over {1, 0.1, 0.01}). Tunable: alpha (lam = 1 as in §5.1)."""

    tunable: ClassVar[tuple[str, ...]] = ("alpha",)

    alpha: Annotated[float, nonnegative] = 1.0


@dataclass(frozen=True)
class KernelTSConfig(KernelModelConfig):
    """KernelTS hyperparameters: those of :class:`KernelModelConfig` and the posterior scale nu
    (LNUCB-TA §5.1 tunes it over {1, 0.1, 0.01}). Tunable: nu (lam = 1 as in §5.1)."""

    tunable: ClassVar[tuple[str, ...]] = ("nu",)

    nu: Annotated[float, nonnegative] = 0.1


class KernelPolicy(Policy):
    """A policy reading the kernel posterior of :class:`KernelDictionary`."""

    def __init__(self, config: KernelModelConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        self.dictionary = KernelDictionary(
            env.n_runs,
            env.n_arms,
            env.dim,
            config.max_points,
            config.bandwidth,
            config.lam,
            config.when_full,
            config.refactor_every,
        )

    @classmethod
    def memory_bytes(
        cls, config: KernelModelConfig, arms: int, dim: int, length: int, clusters: int
    ) -> tuple[int, int]:
        """:meth:`Policy.memory_bytes` plus the dictionary of ``n = min(max_points, length)`` points in per-arm blocks
        of capacity ``C`` (about ``n / arms`` when arms are pulled evenly): ``24 arms C^2 + 8 arms C dim`` (the block
        inverses, and the Gram blocks and their Cholesky factors at a refactorisation; the points),
        :func:`hare.model.kernel_dictionary.peak_bytes`."""
        grows, fixed = super().memory_bytes(config, arms, dim, length, clusters)
        return grows, fixed + peak_bytes(arms, dim, config.max_points, length)

    def update(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        self.dictionary.add(pulled_contexts(observation.contexts, arms), arms, rewards, observation.contexts)

    def select(self, observation: Observation) -> torch.Tensor:
        return self.tie_break(self.scores(observation), observation.t)


@register_policy("kernel_ucb")
class KernelUCB(KernelPolicy):
    """KernelUCB (Valko, Korda, Munos, Flaounas & Cristianini 2013, Alg. 1).

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


@register_policy("kernel_ts")
class KernelTS(KernelPolicy):
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
