"""The base of the nearest-neighbour policies: the :class:`~hare.model.arm_history.ArmHistory` of every pull, and
the per-arm ridge model the linear ones add to it.

Notation (shared by :mod:`hare.policies.knn_ucb`, :mod:`hare.policies.lnucb_ta` and
:mod:`hare.policies.lnucb_ta_enhanced`): ``N_a`` pulls of arm ``a`` before round ``t``; ``r_{a,k}(x)`` distance from
``x`` to its ``k``-th nearest neighbour among them; ``f_{a,k}(x)`` mean reward of those ``k`` neighbours.
"""

from __future__ import annotations

import torch

from hare.envs.base import BanditEnvironment, LoggedRounds, Observation
from hare.model.arm_history import ArmHistory, history_bytes
from hare.model.covariance import RidgeState, ridge_bytes
from hare.policies.base import Policy, PolicyConfig, pulled_contexts


class NeighborPolicy(Policy):
    """Holds the :class:`~hare.model.arm_history.ArmHistory` (capacity: the horizon plus any warm start) and appends
    every pull to it."""

    def __init__(self, config: PolicyConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        self.history = ArmHistory(env.n_runs, env.n_arms, env.history_capacity, env.dim)

    @classmethod
    def memory_bytes(cls, config: PolicyConfig, arms: int, dim: int, length: int, clusters: int) -> tuple[int, int]:
        """:meth:`Policy.memory_bytes` plus the history of ``length`` pulls, which grows with the rounds
        (:func:`hare.model.arm_history.history_bytes`: ``8 length (dim + 6)``, and ``8 length arms`` of foreign-pull
        masks up to :data:`hare.model.arm_history.SELECTION_MAX_ARMS` arms)."""
        grows, fixed = super().memory_bytes(config, arms, dim, length, clusters)
        return grows + history_bytes(arms, dim, length), fixed

    def update(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        """:meth:`learn`, then the pull joins the history."""
        self.learn(observation, arms, rewards)
        self.history.append(arms, pulled_contexts(observation.contexts, arms), rewards)

    def learn(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        """What a pull teaches besides the history (a ridge model, counts, global sums); nothing here. It never
        reads the history, so a warm start may fill the history first (:meth:`warm_start`)."""

    def warm_start(self, logs: LoggedRounds) -> None:
        """The state of :meth:`Policy.warm_start` (every log through :meth:`update` in order), faster: the
        history takes the ``M`` logs at once (:meth:`ArmHistory.extend`, the state of ``M`` appends to the bit),
        then :meth:`learn` sees each log in order (skipped where it learns nothing)."""
        if int(self.history.size) or not len(logs):
            super().warm_start(logs)
            return
        self.history.extend(logs.arms, pulled_contexts(logs.contexts, logs.arms), logs.rewards)
        if type(self).learn is NeighborPolicy.learn:
            return
        for m in range(len(logs)):
            self.learn(*logs.step(m, self.n_runs))


class LinearNeighborPolicy(NeighborPolicy):
    """Adds a disjoint ridge model per arm (``ridge``, as LinUCB) to the history."""

    def __init__(self, config: PolicyConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        self.ridge = RidgeState(env.n_runs, (env.n_arms,), env.dim, config.lam, getattr(config, "refactor_every", 1000))

    @classmethod
    def memory_bytes(cls, config: PolicyConfig, arms: int, dim: int, length: int, clusters: int) -> tuple[int, int]:
        """:meth:`NeighborPolicy.memory_bytes` plus the disjoint ridge model, as LinUCB's: ``ridge``, one
        :class:`~hare.model.covariance.RidgeState` group per arm (:func:`hare.model.covariance.ridge_bytes`), and the
        ``(dim, dim)`` float64 rank-one scratch of an update."""
        grows, fixed = super().memory_bytes(config, arms, dim, length, clusters)
        return grows, fixed + ridge_bytes(arms, dim) + 8 * dim * dim

    def linear_posterior(self, contexts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``l_a = x_a^T mu_a`` and ``sqrt(x_a^T Sigma_a^{-1} x_a)``, each ``(n_runs, n_arms)``."""
        x = contexts.to(torch.float64)
        return (x * self.ridge.theta).sum(-1), self.ridge.quadratic_form(x).sqrt()

    def learn(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        self.ridge.update_selected(arms, pulled_contexts(observation.contexts, arms), rewards)
        super().learn(observation, arms, rewards)
