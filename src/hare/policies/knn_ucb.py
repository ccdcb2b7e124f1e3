"""kNN-UCB and kNN-KL-UCB (Reeve, Mellor & Brown 2018): each arm's index from its own adaptive neighbourhood in the
:class:`~hare.model.arm_history.ArmHistory` (notation of :mod:`hare.policies.neighbor_policy`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, ClassVar

import torch

from hare.envs.base import Observation
from hare.policies.base import PolicyConfig, kl_upper_bound, register_policy
from hare.policies.neighbor_policy import NeighborPolicy
from hare.typed import at_least, nonnegative, positive

KL_BISECTIONS = 50
"""Halvings of kNN-KL-UCB's bisection (:func:`hare.policies.base.kl_upper_bound`): a bracket below ``2^-50``."""


@dataclass(frozen=True)
class KNNUCBConfig(PolicyConfig):
    """kNN-UCB / kNN-KL-UCB (Reeve, Mellor & Brown 2018).

    theta: exploration constant in ``sqrt(theta log t / k)`` (the ``rho``/``c`` of LNUCB-TA Table 5);
    lipschitz: ``phi``, the weight of the neighbourhood radius; max_neighbors: largest ``k`` searched.
    Tunable: theta (LNUCB-TA Table 5 searches it for both kNN-UCB and kNN-KL-UCB).
    """

    tunable: ClassVar[tuple[str, ...]] = ("theta",)

    theta: Annotated[float, positive] = 1.0
    lipschitz: Annotated[float, nonnegative] = 1.0
    max_neighbors: Annotated[int, at_least(1)] = 50


@register_policy("knn_ucb")
class KNNUCB(NeighborPolicy):
    """k-NN UCB (Reeve, Mellor & Brown 2018, Alg. 1), at round ``t`` (1-based ``t+1`` here):

        U_{a,k} = sqrt(theta log t / k),
        k_a = argmin_{1 <= k <= min(N_a, max_neighbors)} U_{a,k} + phi r_{a,k}(x),
        I_a = f_{a,k_a}(x) + U_{a,k_a} + phi r_{a,k_a}(x),

    ``I_a = +inf`` for an unpulled arm. ``phi`` is a constant (``lipschitz``); Reeve et al. allow
    ``phi(t)`` and take a constant bound on the Lipschitz constant in their analysis. The cap
    ``max_neighbors`` bounds the search (LNUCB-TA App. B caps ``k`` the same way for fairness).
    """

    config_class = KNNUCBConfig
    per_run_hyperparameters = ("theta",)

    def neighbourhood(self, contexts: torch.Tensor, t: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Mean ``f_{a,k_a}``, level ``theta log t / k_a`` and radius term ``phi r_{a,k_a}``, each ``(n_runs,
        n_arms)``."""
        c = self.config
        distances, rewards = self.history.nearest(contexts, c.max_neighbors)
        k = torch.arange(1, c.max_neighbors + 1, device=distances.device, dtype=torch.float64)
        log_t = math.log(t + 1)
        uncertainty = torch.sqrt(self.hyperparameter("theta", distances) * log_t / k)  # (k_max,) or (n_runs, 1, k_max)
        objective = uncertainty + c.lipschitz * distances  # inf where k > N_a
        best = objective.argmin(-1, keepdim=True)  # (n_runs, n_arms, 1)
        means = (rewards.cumsum(-1) / k).gather(-1, best).squeeze(-1)
        best_k = (best.squeeze(-1) + 1).to(torch.float64)
        level = self.hyperparameter("theta", best_k) * log_t / best_k
        radius = c.lipschitz * distances.gather(-1, best).squeeze(-1)
        return means, level, radius

    def index(self, means: torch.Tensor, level: torch.Tensor, radius: torch.Tensor) -> torch.Tensor:
        return means + level.sqrt() + radius

    def scores(self, contexts: torch.Tensor, t: int) -> torch.Tensor:
        """Index of every arm, ``(n_runs, n_arms)``."""
        means, level, radius = self.neighbourhood(contexts, t)
        scores = self.index(means, level, radius)
        return torch.where(self.history.counts > 0, scores, torch.full_like(scores, math.inf))

    def select(self, observation: Observation) -> torch.Tensor:
        return self.tie_break(self.scores(observation.contexts, observation.t), observation.t)


@register_policy("knn_kl_ucb")
class KNNKLUCB(KNNUCB):
    """k-NN KL-UCB (Reeve et al. 2018, §5): same ``k_a`` as :class:`KNNUCB`, index

        I_a = sup{w in [0, 1] : k_a d(f_{a,k_a}, w) <= theta log t} + phi r_{a,k_a}(x)

    with the Bernoulli divergence ``d`` (rewards assumed in ``[0, 1]``; the mean is clipped to it).
    """

    def index(self, means: torch.Tensor, level: torch.Tensor, radius: torch.Tensor) -> torch.Tensor:
        return kl_upper_bound(means.clamp(0.0, 1.0), level, KL_BISECTIONS) + radius
