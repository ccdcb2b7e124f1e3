"""Linear contextual bandits."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from hare.envs.base import BanditEnvironment, Observation
from hare.model.covariance import RidgeState
from hare.policies.base import Policy, PolicyConfig, register_policy, upper_confidence_bound


@dataclass(frozen=True)
class LinUCBConfig(PolicyConfig):
    """LinUCB hyperparameters.

    alpha: bonus weight; lam: ridge regulariser; refactor_every: rounds between
    exact re-inversions of the covariance.
    """

    alpha: float = 1.0
    lam: float = 1.0
    refactor_every: int = 1000

    def __post_init__(self) -> None:
        self.require(self.alpha >= 0, "alpha", "must be >= 0")
        self.require(self.lam > 0, "lam", "must be > 0")
        self.require(self.refactor_every >= 1, "refactor_every", "must be >= 1")


@register_policy("linucb")
class LinUCB(Policy):
    """LinUCB with disjoint arms (Li et al. 2010, Alg. 1; seed 000 §1).

    Per arm ``a``: ``A_a = lam I + sum x x^T``, ``b_a = sum r x``, ``theta_a = A_a^{-1} b_a``;
    select ``argmax_a x_a^T theta_a + alpha sqrt(x_a^T A_a^{-1} x_a)`` with contexts
    ``(n_runs, n_arms, dim)``.
    """

    config_class = LinUCBConfig

    def __init__(self, config: LinUCBConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        self.ridge = RidgeState(env.n_runs, (env.n_arms,), env.dim, config.lam, config.refactor_every)

    def scores(self, contexts: torch.Tensor) -> torch.Tensor:
        """UCB index of every arm, ``(n_runs, n_arms)``."""
        x = contexts.to(torch.float64)
        mean = (x * self.ridge.theta).sum(-1)
        width = self.ridge.quadratic_form(x).sqrt()
        return upper_confidence_bound(mean, width, self.config.alpha)

    def select(self, observation: Observation) -> torch.Tensor:
        return self.tie_break(self.scores(observation.contexts), observation.t)

    def update(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        runs = torch.arange(self.n_runs, device=arms.device)
        self.ridge.update_selected(arms, observation.contexts[runs, arms], rewards)
