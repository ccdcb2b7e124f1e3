"""HARE's bonus weights ``alpha_h`` learned online, per head, two ways (paper, sec:learned-alpha: the source
notes' fourth open question).

Both start from the config's ``alpha`` and spend no tuning run; both learn from the online rounds only (a logged
interaction of the warm start was not chosen through ``alpha``).

* **Meta-gradient** (:func:`surrogate`, :func:`surrogate_log_alpha_gradient`, :func:`meta_gradient_step`): after
  round ``t``'s update, one ascent step on ``log alpha_h`` of the softmax-relaxed expected reward under the
  attention with the bonus, with the online mean as its critic (paper, eq:alpha-surrogate)::

      J_t(alpha) = (1/H) sum_h sum_n A_{h,n}(alpha_h) m_{h,c(n)},   A_h = softmax_n(s_{h,n} + alpha_h U_{h,c(n)}),

  ``s``, ``U`` and ``q`` those of the round as played, ``m_{h,j} = <theta_{h,j}, q_h>`` the cluster mean after the
  round's update (the observed reward included). Its gradient has the closed form
  ``dJ/dlog alpha_h = (alpha_h / H) Cov_{A_h}(U_{h,c(.)}, m_{h,c(.)})`` (the covariance of bonus and critic under the
  attention), and the step is multiplicative, ``alpha_h <- alpha_h exp(eta g_h)``: ``alpha_h`` stays positive, and
  ``eta = 0`` leaves it bit for bit (``exp(0) = 1``).
* **EXP3 over a grid** (:func:`exp3_probabilities`, :func:`exp3_update`; Auer et al., 2002, Fig. 1): per head an
  adversarial bandit over the grid ``alpha^(1..K)``: ``p = (1 - gamma) w / sum w + gamma / K``, ``alpha_h`` drawn from
  ``p`` each round, and after the reward ``x`` (rescaled to [0, 1], :func:`unit_rewards`) the drawn point's weight
  ``w_k <- w_k exp(gamma x / (p_k K))``. Weights are kept as logarithms, shifted to a maximum of 0 after each update
  (the probabilities are unchanged).

Every function is batched over runs and heads (and grid points): tensors ``(n_runs, H, ...)``, no loop.
"""

from __future__ import annotations

import torch


def surrogate(
    scores: torch.Tensor, bonuses: torch.Tensor, clusters: torch.Tensor, alpha: torch.Tensor, critic: torch.Tensor
) -> torch.Tensor:
    """``J(alpha)`` of paper eq:alpha-surrogate, ``(n_runs,)``: the head mean of the critic's value under the attention
    with the bonus.

    scores ``s_{h,n}`` ``(n_runs, H, N)``; bonuses ``U_{h,j}`` and critic ``m_{h,j}`` ``(n_runs, H, C)``; clusters
    ``c(n)`` ``(N,)``; alpha ``(n_runs, H)`` (differentiable: the finite-difference and autograd reference of
    :func:`surrogate_log_alpha_gradient`).
    """
    logits = scores + alpha[..., None] * bonuses.index_select(-1, clusters)
    weights = torch.softmax(logits, dim=-1)  # (n_runs, H, N)
    return (weights * critic.index_select(-1, clusters)).sum(-1).mean(-1)


def surrogate_log_alpha_gradient(
    weights: torch.Tensor, bonuses: torch.Tensor, clusters: torch.Tensor, alpha: torch.Tensor, critic: torch.Tensor
) -> torch.Tensor:
    """``dJ/dlog alpha_h = (alpha_h / H) Cov_{A_h}(U_{h,c(.)}, m_{h,c(.)})``, ``(n_runs, H)``: the gradient of
    :func:`surrogate` in closed form (paper, eq:alpha-surrogate), from the attention weights ``A_h`` ``(n_runs, H, N)``
    the round played with (those of :func:`surrogate` at ``alpha``), bonuses and critic ``(n_runs, H, C)``, clusters
    ``(N,)`` and alpha ``(n_runs, H)``."""
    item_bonus = bonuses.index_select(-1, clusters)  # (n_runs, H, N)
    item_value = critic.index_select(-1, clusters)
    centred = item_bonus - (weights * item_bonus).sum(-1, keepdim=True)
    covariance = (weights * centred * item_value).sum(-1)  # (n_runs, H)
    return alpha * covariance / alpha.shape[-1]


def meta_gradient_step(alpha: torch.Tensor, gradient: torch.Tensor, lr: float) -> torch.Tensor:
    """One ascent step on ``log alpha``: ``alpha exp(lr g)`` (any shape); ``lr = 0`` returns ``alpha``'s values
    exactly."""
    return alpha * torch.exp(lr * gradient)


def exp3_probabilities(log_weights: torch.Tensor, gamma: float) -> torch.Tensor:
    """EXP3's draw probabilities ``(1 - gamma) w / sum w + gamma / K`` over the last dim (the ``K`` grid points) of
    ``log w`` ``(n_runs, H, K)``."""
    return (1.0 - gamma) * torch.softmax(log_weights, dim=-1) + gamma / log_weights.shape[-1]


def exp3_draw(probabilities: torch.Tensor, uniforms: torch.Tensor) -> torch.Tensor:
    """The grid point each ``(run, head)`` draws, ``(n_runs, H)`` int64, by inverting the cumulative probabilities
    ``(n_runs, H, K)`` at ``uniforms`` ``(n_runs, H)`` in (0, 1)."""
    below = (probabilities.cumsum(-1) < uniforms[..., None]).sum(-1)
    return below.clamp_max(probabilities.shape[-1] - 1)


def exp3_update(
    log_weights: torch.Tensor, probabilities: torch.Tensor, drawn: torch.Tensor, rewards: torch.Tensor, gamma: float
) -> torch.Tensor:
    """EXP3's update of ``log w`` ``(n_runs, H, K)``: the drawn point ``k`` ``(n_runs, H)`` gains
    ``gamma x / (p_k K)`` with ``x`` the round's reward in [0, 1] ``(n_runs,)`` (every head sees the same reward) and
    ``p`` the probabilities it was drawn with; then shifted to a maximum of 0."""
    n_points = log_weights.shape[-1]
    chosen = torch.nn.functional.one_hot(drawn, n_points).to(log_weights.dtype)  # (n_runs, H, K)
    p_drawn = (probabilities * chosen).sum(-1, keepdim=True)
    updated = log_weights + chosen * gamma * rewards[:, None, None] / (p_drawn * n_points)
    return updated - updated.max(-1, keepdim=True).values


def unit_rewards(rewards: torch.Tensor, low: torch.Tensor, high: torch.Tensor) -> torch.Tensor:
    """Rewards ``(n_runs,)`` mapped to [0, 1] by the range ``[low, high]`` each run has observed so far (this round's
    reward included; ``1/2`` before the range opens): EXP3 needs bounded rewards, and a bandit knows no range in
    advance."""
    width = high - low
    return torch.where(width > 0, (rewards - low) / torch.where(width > 0, width, 1.0), torch.full_like(rewards, 0.5))
