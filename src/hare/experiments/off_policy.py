"""Off-policy estimators of an evaluation policy's value on logged bandit feedback.

Logged data ``(x_i, a_i, r_i, p_i)``, ``i = 1..n``, with ``p_i = pi_b(a_i | x_i)`` the
logging propensity and, as in OBP, a display position ``k_i``. The evaluation policy is
given by its action distribution ``pi(a | x_i, k)`` (``action_dist``
``(*batch, n, n_actions, len_list)``; any leading batch dims, e.g. runs), and a reward
model by ``q_hat(x_i, a, k)`` of the same trailing shape. With ``w_i = pi(a_i | x_i, k_i) / p_i``:

* IPW (Horvitz & Thompson 1952; Precup et al. 2000): ``V = 1/n sum_i w_i r_i``;
* SNIPW (Swaminathan & Joachims 2015): ``V = sum_i w_i r_i / sum_i w_i``;
* DM (Beygelzimer & Langford 2009): ``V = 1/n sum_i sum_a pi(a | x_i, k_i) q_hat(x_i, a, k_i)``;
* DR (Dudík, Langford & Li 2011): ``V = DM_i + w_i (r_i - q_hat(x_i, a_i, k_i))`` averaged.

These are the definitions of OBP 0.4.1 (``obp.ope.InverseProbabilityWeighting``,
``SelfNormalizedInverseProbabilityWeighting``, ``DirectMethod``, ``DoublyRobust``, without
clipping); the tests check equality on identical inputs. Standard errors are
``std(v_i) / sqrt(n)`` of the per-event terms ``v_i`` whose mean is the estimate (sample std
with ``n - 1``); for SNIPW, a ratio, the delta-method terms ``v_i = w_i (r_i - V) / mean(w)``.
The reward model of :func:`fit_ridge_reward_model` is fitted in-sample (OBP's
``RegressionModel`` with ``n_folds=1``).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class Estimate:
    """A policy-value estimate and its standard error, both ``(*batch,)``."""

    value: torch.Tensor
    standard_error: torch.Tensor


def _mean_and_se(terms: torch.Tensor) -> Estimate:
    """``terms`` ``(*batch, n)`` -> mean and ``std / sqrt(n)``."""
    n = terms.shape[-1]
    se = terms.std(dim=-1, unbiased=True) / n**0.5 if n > 1 else torch.full_like(terms[..., 0], float("nan"))
    return Estimate(terms.mean(dim=-1), se)


def _as_tensors(reward, action, pscore, position, action_dist):
    """Logged arrays as float64/int64 tensors on ``action_dist``'s device; position defaults to 0."""
    action_dist = torch.as_tensor(action_dist, dtype=torch.float64)
    device = action_dist.device
    n = action_dist.shape[-3]
    reward = None if reward is None else torch.as_tensor(reward, dtype=torch.float64, device=device)
    action = None if action is None else torch.as_tensor(action, dtype=torch.int64, device=device)
    pscore = None if pscore is None else torch.as_tensor(pscore, dtype=torch.float64, device=device)
    position = (
        torch.zeros(n, dtype=torch.int64, device=device)
        if position is None
        else torch.as_tensor(position, dtype=torch.int64, device=device)
    )
    return reward, action, pscore, position, action_dist


def _at_position(table: torch.Tensor, position: torch.Tensor) -> torch.Tensor:
    """``table[..., i, :, position_i]``: ``(*batch, n, n_actions, len_list) -> (*batch, n, n_actions)``."""
    index = position[:, None, None].expand(*table.shape[:-1], 1)  # (*batch, n, n_actions, 1)
    return table.gather(-1, index).squeeze(-1)


def importance_weights(
    action: torch.Tensor, pscore: torch.Tensor, action_dist: torch.Tensor, position: torch.Tensor
) -> torch.Tensor:
    """``w_i = pi(a_i | x_i, k_i) / p_i``, ``(*batch, n)``."""
    pi = _at_position(action_dist, position)  # (*batch, n, n_actions)
    index = action[:, None].expand(*pi.shape[:-1], 1)  # (*batch, n, 1)
    return pi.gather(-1, index).squeeze(-1) / pscore


def inverse_probability_weighting(reward, action, pscore, action_dist, position=None) -> Estimate:
    """IPW: ``1/n sum_i w_i r_i``; arrays ``(n,)``, ``action_dist`` ``(*batch, n, n_actions, len_list)``."""
    reward, action, pscore, position, action_dist = _as_tensors(reward, action, pscore, position, action_dist)
    return _mean_and_se(importance_weights(action, pscore, action_dist, position) * reward)


def self_normalized_inverse_probability_weighting(reward, action, pscore, action_dist, position=None) -> Estimate:
    """SNIPW: ``sum_i w_i r_i / sum_i w_i``; delta-method standard error."""
    reward, action, pscore, position, action_dist = _as_tensors(reward, action, pscore, position, action_dist)
    w = importance_weights(action, pscore, action_dist, position)
    mean_w = w.mean(dim=-1, keepdim=True)
    value = (w * reward).mean(dim=-1) / mean_w.squeeze(-1)
    se = _mean_and_se(w * (reward - value[..., None]) / mean_w).standard_error
    return Estimate(value, se)


def direct_method(action_dist, estimated_rewards, position=None) -> Estimate:
    """DM: ``1/n sum_i sum_a pi(a | x_i, k_i) q_hat(x_i, a, k_i)``; ``estimated_rewards`` broadcastable to
    ``action_dist``."""
    _, _, _, position, action_dist = _as_tensors(None, None, None, position, action_dist)
    q = torch.as_tensor(estimated_rewards, dtype=torch.float64, device=action_dist.device).expand_as(action_dist)
    return _mean_and_se((_at_position(q, position) * _at_position(action_dist, position)).sum(-1))


def doubly_robust(reward, action, pscore, action_dist, estimated_rewards, position=None) -> Estimate:
    """DR: ``1/n sum_i [sum_a pi(a | x_i, k_i) q_hat(x_i, a, k_i) + w_i (r_i - q_hat(x_i, a_i, k_i))]``."""
    reward, action, pscore, position, action_dist = _as_tensors(reward, action, pscore, position, action_dist)
    q = _at_position(
        torch.as_tensor(estimated_rewards, dtype=torch.float64, device=action_dist.device).expand_as(action_dist),
        position,
    )  # (*batch, n, n_actions)
    baseline = (q * _at_position(action_dist, position)).sum(-1)
    q_factual = q.gather(-1, action[:, None].expand(*q.shape[:-1], 1)).squeeze(-1)
    w = importance_weights(action, pscore, action_dist, position)
    return _mean_and_se(baseline + w * (reward - q_factual))


def action_dist_from_arms(arms: torch.Tensor, n_actions: int, len_list: int = 1) -> torch.Tensor:
    """One-hot action distribution of a deterministic policy.

    arms: ``(*batch, n)`` int64 chosen arm per logged event -> ``(*batch, n, n_actions, len_list)``
    float64, the same choice at every position.
    """
    one_hot = F.one_hot(arms.to(torch.int64), n_actions).to(torch.float64)  # (*batch, n, n_actions)
    return one_hot[..., None].expand(*one_hot.shape, len_list)


def fit_ridge_reward_model(
    features: torch.Tensor, action: torch.Tensor, reward: torch.Tensor, lam: float = 1.0
) -> torch.Tensor:
    """Per-action ridge regression of the reward, evaluated at every (event, action).

    features: ``(n, n_actions, dim)`` context ``x_{i,a}`` of each action; action, reward ``(n,)``.
    For each action ``a``: ``A_a = lam I + sum_{i: a_i = a} x_{i,a} x_{i,a}^T``,
    ``b_a = sum_{i: a_i = a} r_i x_{i,a}``, ``theta_a = A_a^{-1} b_a``. Returns
    ``q_hat(x_i, a) = x_{i,a}^T theta_a`` as ``(n, n_actions, 1)`` (one position).
    """
    if lam <= 0:
        raise ValueError(f"lam must be positive, got {lam}")
    n, n_actions, dim = features.shape
    x = features.to(torch.float64)
    action = torch.as_tensor(action, dtype=torch.int64, device=x.device)
    reward = torch.as_tensor(reward, dtype=torch.float64, device=x.device)
    factual = x[torch.arange(n, device=x.device), action]  # (n, dim)
    precision = lam * torch.eye(dim, dtype=torch.float64, device=x.device).expand(n_actions, dim, dim).clone()
    precision.index_add_(0, action, factual[:, :, None] * factual[:, None, :])
    response = torch.zeros(n_actions, dim, dtype=torch.float64, device=x.device).index_add_(
        0, action, reward[:, None] * factual
    )
    theta = torch.linalg.solve(precision, response[..., None]).squeeze(-1)  # (n_actions, dim)
    return (x * theta).sum(-1)[..., None]
