"""Context-free policies."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from hare.envs.base import Observation
from hare.policies.base import Policy, PolicyConfig, register_policy


@dataclass(frozen=True)
class RandomConfig(PolicyConfig):
    """Uniform random arm selection: no hyperparameters."""


@register_policy("random")
class RandomPolicy(Policy):
    """Pulls an arm uniformly at random each round (the regret reference)."""

    config_class = RandomConfig

    def select(self, observation: Observation) -> torch.Tensor:
        return self.rng.randint("random-arm", observation.t, self.n_arms)

    def update(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        """Nothing to learn."""
