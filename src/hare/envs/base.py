"""The typed bandit problem every environment returns.

A round carries what the policy may see (:class:`Observation`) and what only the
evaluator may see: the mean reward of every arm, so pseudo-regret is exact, and the
realised reward of every arm (full information), so the reward of whichever arm the
policy pulls is fixed before it chooses (Riquelme et al. 2018's reward matrix).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Observation:
    """What a policy sees at round ``t``.

    contexts: ``(n_runs, n_arms, dim)`` arm features. Environments whose arms share
        one context (classification) pass an expanded view, not a copy.
    users: ``(n_runs,)`` int64 index of the active user, or ``None``.
    queries: ``(n_runs, query_dim)`` the raw query for policies that attend over an
        item pool (HARE, retrieval), or ``None``.
    """

    t: int
    contexts: torch.Tensor
    users: torch.Tensor | None = None
    queries: torch.Tensor | None = None


@dataclass(frozen=True)
class BanditRound:
    """One round for ``n_runs`` runs.

    mean_rewards: ``(n_runs, n_arms)`` expected reward of every arm.
    rewards: ``(n_runs, n_arms)`` realised reward of every arm.
    """

    observation: Observation
    mean_rewards: torch.Tensor
    rewards: torch.Tensor

    @property
    def optimal_arms(self) -> torch.Tensor:
        """``(n_runs,)`` arm with the largest mean reward."""
        return self.mean_rewards.argmax(dim=1)

    def regret(self, arms: torch.Tensor) -> torch.Tensor:
        """Pseudo-regret ``max_a mu(a) - mu(arms)``, ``(n_runs,)``."""
        chosen = self.mean_rewards.gather(1, arms[:, None]).squeeze(1)
        return self.mean_rewards.max(dim=1).values - chosen

    def reward(self, arms: torch.Tensor) -> torch.Tensor:
        """Realised reward of the pulled arms, ``(n_runs,)``."""
        return self.rewards.gather(1, arms[:, None]).squeeze(1)


@dataclass(frozen=True)
class ItemPool:
    """A knowledge pool whose items are the arms.

    embeddings: ``(n_arms, item_dim)`` rows of unit norm.
    clusters: ``(n_arms,)`` int64 cluster of each item, values in ``0..n_clusters-1``.
    """

    embeddings: torch.Tensor
    clusters: torch.Tensor

    @property
    def n_clusters(self) -> int:
        return int(self.clusters.max()) + 1


class BanditEnvironment(ABC):
    """``n_runs`` independent runs of one bandit problem, ``horizon`` rounds each."""

    n_runs: int
    n_arms: int
    dim: int
    horizon: int
    query_dim: int
    n_users: int = 1
    user_dim: int = 0
    pool: ItemPool | None = None

    @abstractmethod
    def round(self, t: int) -> BanditRound:
        """The round ``t`` (0-based) of every run."""
