"""HARE's bonus weights ``alpha_h`` (paper eq:select), one small strategy per ``alpha_schedule``, chosen once when
the policy is built (:func:`build_alpha_schedule`).

Each schedule is a module of the policy (its state is buffers, so it follows the policy's device and state dict)
and answers, for the policy that holds it:

* :meth:`AlphaSchedule.weights` ``(policy, t)``: ``alpha_h`` at round ``t``, broadcastable to ``(n_runs, H, C)``;
* :meth:`AlphaSchedule.learn` ``(policy, observation, out, rewards)``: the step after an online round's update
  (the learned schedules only: ``learns``);
* :meth:`AlphaSchedule.trajectories`: the per-round series of a learned ``alpha_h``.

The schedules: ``fixed`` (``alpha``), ``inverse_sqrt`` (``alpha / sqrt(t)``, ``t`` the 1-based round), ``per_head``
(``alphas[h]``), ``lnucb_ta`` (LNUCB-TA (Khosravi et al., 2025), Algorithm 3, with clusters as arms:
``alpha_j = alpha / (N_j + 1) * (kappa g + (1 - kappa) n_j)``, ``N_j`` pulls of cluster ``j``, ``n_j`` its mean
reward (0 before its first pull), ``g`` the mean reward so far; clamped at 0, since a bonus weight is non-negative),
and two that learn ``alpha_h`` online from ``alpha`` with no tuning run (paper, sec:learned-alpha;
:mod:`hare.policies.alpha_learning`): ``meta_gradient`` (after each online round's update, a step on
``log alpha_h`` of the surrogate of paper eq:alpha-surrogate, normalised by the running RMS of its gradient) and
``exp3`` (per head, EXP3 over ``alpha_grid`` drawn each round, stream ``"alpha_grid"``, counter ``t``). Both learn
from the online rounds only: an update not preceded by a ``select`` of the same observation (a logged interaction
of the warm start) leaves them as they are.

``policy`` is the :class:`hare.policies.hare.HARE` that holds the schedule: a schedule reads its hyperparameters
(:meth:`~hare.policies.base.Policy.hyperparameter`, so a grid's per-run ``alpha`` applies), its random streams, its
cluster statistics ``cluster_pulls`` and ``cluster_reward_sum`` ``(n_runs, C)``, its ``clusters`` ``(N,)`` and its
cluster means (:meth:`~hare.policies.hare.HARE.cluster_means`).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import torch
from torch import nn

from hare.envs.base import Observation
from hare.model.attention import AttentionOutput
from hare.policies.alpha_learning import (
    exp3_draw,
    exp3_probabilities,
    exp3_update,
    meta_gradient_step,
    surrogate_log_alpha_gradient,
    unit_rewards,
)
from hare.policies.base import temporal_attention_rate


class AlphaSchedule(nn.Module):
    """The bonus weight ``alpha_h`` of one schedule (module docstring); built with the policy's validated
    ``config``, its number of runs and heads, and the device of its run keys."""

    learns: ClassVar[bool] = False
    """Whether the schedule learns from the online rounds (:meth:`learn`)."""

    def __init__(self, config: Any, policy: Any, n_runs: int, n_heads: int, device: torch.device):
        super().__init__()

    def weights(self, policy: Any, t: int) -> torch.Tensor:
        """``alpha_h`` at round ``t``, broadcastable to ``(n_runs, H, C)``."""
        raise NotImplementedError

    def learn(self, policy: Any, observation: Observation, out: AttentionOutput, rewards: torch.Tensor) -> None:
        """The step after round ``observation.t``'s update (attention ``out``, rewards ``(n_runs,)``); nothing for a
        schedule that does not learn."""

    def trajectories(self) -> dict[str, torch.Tensor]:
        """The per-round series of a learned ``alpha_h``, ``{name: (n_runs, ...)}``; nothing by default."""
        return {}


def configured_alpha(policy: Any) -> torch.Tensor:
    """``alpha``: the config's, or a grid's per-run values, ``()`` or ``(n_runs, 1, 1)`` float64."""
    pulls = policy.cluster_pulls  # (n_runs, C)
    return torch.as_tensor(policy.hyperparameter("alpha", pulls[:, None, :]), dtype=torch.float64, device=pulls.device)


class FixedAlpha(AlphaSchedule):
    """``alpha_h = alpha``."""

    def weights(self, policy: Any, t: int) -> torch.Tensor:
        return configured_alpha(policy)


class InverseSqrtAlpha(AlphaSchedule):
    """``alpha_h = alpha / sqrt(t + 1)``, ``t + 1`` the 1-based round."""

    def weights(self, policy: Any, t: int) -> torch.Tensor:
        return configured_alpha(policy) / math.sqrt(t + 1)


class PerHeadAlpha(AlphaSchedule):
    """``alpha_h = alphas[h]``: buffer ``head_alpha`` ``(H,)``."""

    def __init__(self, config: Any, policy: Any, n_runs: int, n_heads: int, device: torch.device):
        super().__init__(config, policy, n_runs, n_heads, device)
        self.register_buffer("head_alpha", torch.tensor(config.alphas, dtype=torch.float64))

    def weights(self, policy: Any, t: int) -> torch.Tensor:
        return self.head_alpha[:, None]  # (H, 1)


class TemporalAttentionAlpha(AlphaSchedule):
    """LNUCB-TA's rate per cluster, the same in every head, ``(n_runs, 1, C)``:
    ``alpha_j = max(0, alpha / (N_j + 1) * (kappa g + (1 - kappa) n_j))``
    (:func:`hare.policies.base.temporal_attention_rate`)."""

    def weights(self, policy: Any, t: int) -> torch.Tensor:
        pulls = policy.cluster_pulls  # (n_runs, C)
        local = policy.cluster_reward_sum / pulls.clamp_min(1.0)  # (n_runs, C)
        overall = policy.cluster_reward_sum.sum(1, keepdim=True) / pulls.sum(1, keepdim=True).clamp_min(
            1.0
        )  # (n_runs, 1)
        factor = temporal_attention_rate(
            policy.hyperparameter("alpha", pulls), pulls, overall, local, policy.config.kappa
        ).clamp_min(0.0)
        return factor[:, None, :]  # (n_runs, 1, C)


class MetaGradientAlpha(AlphaSchedule):
    """``alpha_h`` learned by a meta-gradient step on ``log alpha_h`` (paper, eq:alpha-surrogate). Buffers:
    ``learned_alpha`` ``(n_runs, H)`` from ``alpha``, the running mean square of its gradient
    ``alpha_gradient_square`` ``(n_runs, H)`` and the step count ``alpha_steps`` (scalar), float64."""

    learns = True

    def __init__(self, config: Any, policy: Any, n_runs: int, n_heads: int, device: torch.device):
        super().__init__(config, policy, n_runs, n_heads, device)
        like = torch.zeros(n_runs, 1, dtype=torch.float64, device=device)
        start = torch.as_tensor(policy.hyperparameter("alpha", like), dtype=torch.float64, device=device)
        self.register_buffer("learned_alpha", start.expand(n_runs, n_heads).clone())
        self.register_buffer("alpha_gradient_square", torch.zeros(n_runs, n_heads, dtype=torch.float64))
        self.register_buffer("alpha_steps", torch.zeros((), dtype=torch.float64))

    def weights(self, policy: Any, t: int) -> torch.Tensor:
        return self.learned_alpha[:, :, None]  # (n_runs, H, 1)

    def learn(self, policy: Any, observation: Observation, out: AttentionOutput, rewards: torch.Tensor) -> None:
        """``g_h = dJ/dlog alpha_h`` with the critic ``m`` after the update, then
        ``alpha_h <- alpha_h exp(eta g_h / sqrt(mean_s g_{h,s}^2))``."""
        gradient = surrogate_log_alpha_gradient(
            out.weights, out.bonuses, policy.clusters, self.learned_alpha, policy.cluster_means(out)
        )  # (n_runs, H)
        self.alpha_steps += 1.0
        self.alpha_gradient_square += (gradient.square() - self.alpha_gradient_square) / self.alpha_steps
        rms = self.alpha_gradient_square.sqrt()
        normalised = torch.where(rms > 0, gradient / torch.where(rms > 0, rms, 1.0), torch.zeros_like(gradient))
        self.learned_alpha = meta_gradient_step(self.learned_alpha, normalised, policy.config.alpha_lr)

    def trajectories(self) -> dict[str, torch.Tensor]:
        """``alpha_trajectory`` ``(n_runs, H)``."""
        return {"alpha_trajectory": self.learned_alpha.clone()}


class EXP3Alpha(AlphaSchedule):
    """``alpha_h`` drawn each round by EXP3 over ``alpha_grid`` (one draw per head). Buffers: the grid
    ``alpha_grid_values`` ``(K,)``, the log-weights ``exp3_log_weights`` ``(n_runs, H, K)`` and the observed reward
    range per run, ``reward_low`` and ``reward_high`` ``(n_runs,)``, float64."""

    learns = True

    def __init__(self, config: Any, policy: Any, n_runs: int, n_heads: int, device: torch.device):
        super().__init__(config, policy, n_runs, n_heads, device)
        self.exp3_gamma = config.exp3_gamma
        grid = torch.tensor(config.alpha_grid, dtype=torch.float64, device=device)
        self.register_buffer("alpha_grid_values", grid)
        self.register_buffer("exp3_log_weights", torch.zeros(n_runs, n_heads, grid.numel(), dtype=torch.float64))
        self.register_buffer("reward_low", torch.full((n_runs,), math.inf, dtype=torch.float64))
        self.register_buffer("reward_high", torch.full((n_runs,), -math.inf, dtype=torch.float64))

    def draw(self, policy: Any, t: int) -> tuple[torch.Tensor, torch.Tensor]:
        """EXP3's probabilities ``(n_runs, H, K)`` and the grid point each head draws at round ``t`` ``(n_runs, H)``
        (the same draw every time it is asked within a round: the weights change only in :meth:`learn`)."""
        probabilities = exp3_probabilities(self.exp3_log_weights, self.exp3_gamma)
        return probabilities, exp3_draw(probabilities, policy.rng.uniform("alpha_grid", t, (policy.n_heads,)))

    def weights(self, policy: Any, t: int) -> torch.Tensor:
        _, drawn = self.draw(policy, t)
        return self.alpha_grid_values[drawn][:, :, None]  # (n_runs, H, 1)

    def learn(self, policy: Any, observation: Observation, out: AttentionOutput, rewards: torch.Tensor) -> None:
        """The drawn grid point's weight, with the reward rescaled to [0, 1] by the run's observed range."""
        rewards = rewards.to(torch.float64)
        self.reward_low = torch.minimum(self.reward_low, rewards)
        self.reward_high = torch.maximum(self.reward_high, rewards)
        probabilities, drawn = self.draw(policy, observation.t)
        self.exp3_log_weights = exp3_update(
            self.exp3_log_weights,
            probabilities,
            drawn,
            unit_rewards(rewards, self.reward_low, self.reward_high),
            self.exp3_gamma,
        )

    def trajectories(self) -> dict[str, torch.Tensor]:
        """``alpha_trajectory`` ``(n_runs, H)``, the mean of ``alpha_h`` under the draw probabilities, and the
        probabilities ``alpha_grid_probabilities`` ``(n_runs, H, K)``."""
        probabilities = exp3_probabilities(self.exp3_log_weights, self.exp3_gamma)
        return {
            "alpha_trajectory": (probabilities * self.alpha_grid_values).sum(-1),
            "alpha_grid_probabilities": probabilities,
        }


SCHEDULES: dict[str, type[AlphaSchedule]] = {
    "fixed": FixedAlpha,
    "inverse_sqrt": InverseSqrtAlpha,
    "per_head": PerHeadAlpha,
    "lnucb_ta": TemporalAttentionAlpha,
    "meta_gradient": MetaGradientAlpha,
    "exp3": EXP3Alpha,
}
"""Every ``alpha_schedule`` and its strategy."""

ALPHA_SCHEDULES = tuple(SCHEDULES)
LEARNED_ALPHA_SCHEDULES = tuple(name for name, schedule in SCHEDULES.items() if schedule.learns)


def build_alpha_schedule(config: Any, policy: Any, n_runs: int, n_heads: int, device: torch.device) -> AlphaSchedule:
    """The strategy of ``config.alpha_schedule`` for ``policy`` (``n_runs`` runs, ``n_heads`` heads, its state on
    ``device``)."""
    return SCHEDULES[config.alpha_schedule](config, policy, n_runs, n_heads, device)


def check_alpha_settings(config) -> None:
    """The settings of ``config``'s alpha schedule (a :class:`hare.policies.hare.HAREConfig`): ``exp3`` needs a grid
    of at least two bonus weights and only it takes one; ``meta_gradient`` needs ``alpha > 0`` (it steps on
    ``log alpha``); ``per_head`` needs one ``alpha`` per head and only it takes them. Refused with
    ``config.require`` (one line naming the field)."""
    if config.alpha_schedule == "exp3":
        config.require(
            config.alpha_grid is not None and len(config.alpha_grid) >= 2,
            "alpha_grid",
            "exp3 needs a grid of at least two bonus weights",
        )
    else:
        config.require(config.alpha_grid is None, "alpha_grid", "only used by alpha_schedule='exp3'")
    config.require(
        config.alpha_schedule != "meta_gradient" or config.alpha > 0,
        "alpha",
        "meta_gradient steps on log alpha, which needs alpha > 0",
    )
    if config.alpha_schedule == "per_head":
        config.require(
            config.alphas is not None and len(config.alphas) == config.n_heads,
            "alphas",
            "per_head needs one alpha per head",
        )
    else:
        config.require(config.alphas is None, "alphas", "only used by alpha_schedule='per_head'")
