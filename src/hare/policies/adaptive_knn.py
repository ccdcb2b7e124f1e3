"""LNUCB-TA's adaptive kNN reward adjustment (Khosravi et al., 2025, Alg. 2), shared by LNUCB-TA and the enhanced
policies of its Appendix B: ``k_a`` from the variance of arm ``a``'s rewards, ``f_a`` the (uniform or
distance-weighted) mean reward of its ``k_a`` nearest past pulls (notation of :mod:`hare.policies.neighbor_policy`).
"""

from __future__ import annotations

import torch

from hare.policies.base import PolicyConfig

K_ROUNDINGS = ("round", "floor")
"""How :func:`adaptive_k` makes ``k`` an integer: Alg. 2 line 5 as written (``round``) or LNUCB-TA's public code
(``floor``)."""


def adaptive_k(variances: torch.Tensor, theta_min: int, theta_max: int, rounding: str = "round") -> torch.Tensor:
    """LNUCB-TA Alg. 2 line 5: ``k = theta_min + (theta_max - theta_min) Var(z_a)``, rounded to the
    nearest integer (``rounding="round"``, :func:`torch.round`: halves to even, so 2.5 -> 2 and 3.5 -> 4) or,
    as LNUCB-TA's public code does, cut to its integer part (``"floor"``: 2.5 -> 2, 2.7 -> 2, 3.5 -> 3), then
    clipped to ``[theta_min, theta_max]`` (a variance above 1 would leave the range).
    ``(n_runs, n_arms)`` float -> int64."""
    if rounding not in K_ROUNDINGS:
        raise ValueError(f"rounding must be one of {K_ROUNDINGS}, not {rounding!r}")
    raw = theta_min + (theta_max - theta_min) * variances
    k = torch.floor(raw) if rounding == "floor" else torch.round(raw)
    return k.clamp(theta_min, theta_max).to(torch.int64)


def mean_of_first_k(rewards: torch.Tensor, counts: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """LNUCB-TA eq. 3 / Alg. 2 line 7: ``f = (1/k) sum`` of the ``k`` nearest rewards where the arm has
    ``N_a >= k`` pulls, else 0 (the condition of Alg. 2 line 6). rewards ``(n_runs, n_arms, k_max)``
    nearest first; counts, k ``(n_runs, n_arms)`` -> ``(n_runs, n_arms)``."""
    cumulative = rewards.cumsum(-1)
    total = cumulative.gather(-1, (k - 1).clamp_min(0)[..., None]).squeeze(-1)
    return torch.where(counts >= k, total / k, torch.zeros_like(total))


def distance_weighted_mean_of_first_k(
    distances: torch.Tensor, rewards: torch.Tensor, counts: torch.Tensor, k: torch.Tensor
) -> torch.Tensor:
    """LNUCB-TA's public-code reading of Alg. 2 line 7 (``knn_weights="distance"``): distance-weighted kNN
    regression over the same ``k`` nearest neighbours as :func:`mean_of_first_k`,

        f = sum_i w_i r_i / sum_i w_i,   w_i = 1 / d_i   (i = 1..k),

    and, when some of the ``k`` lie at distance exactly 0, the mean reward of those exact matches (they take all
    the weight); 0 where ``N_a < k`` (Alg. 2 line 6 stays). distances ``(n_runs, n_arms, k_max)`` (``+inf`` past
    ``N_a``), rewards ``(n_runs, n_arms, k_max)``, nearest first; counts, k ``(n_runs, n_arms)`` -> ``(n_runs,
    n_arms)``."""
    within = torch.arange(distances.shape[-1], device=distances.device) < k[..., None]  # (n_runs, n_arms, k_max)
    exact = within & (distances == 0)
    n_exact = exact.sum(-1)
    exact_mean = torch.where(exact, rewards, 0.0).sum(-1) / n_exact.clamp_min(1)
    weights = torch.where(within & (distances > 0), distances.reciprocal(), 0.0)  # 1/inf = 0 past N_a
    total_weight = weights.sum(-1)
    weighted = (weights * rewards).sum(-1) / torch.where(total_weight > 0, total_weight, 1.0)
    f = torch.where(n_exact > 0, exact_mean, weighted)
    return torch.where(counts >= k, f, torch.zeros_like(f))


def check_neighbor_range(config: PolicyConfig) -> None:
    """The adaptive ``k_a`` range of LNUCB-TA Alg. 2, ``theta_min <= k_a <= theta_max``: refuse ``theta_max <
    theta_min`` (``theta_min >= 1`` is the field's own bound)."""
    config.require(config.theta_max >= config.theta_min, "theta_max", "must be >= theta_min")


class AdaptiveNeighborMixin:
    """LNUCB-TA Alg. 2 (adaptive ``k`` and the kNN reward adjustment) over the ``history`` buffer."""

    def knn_adjustment(self, contexts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(f_{a,k_a}(x_a), k_a)``, each ``(n_runs, n_arms)``, for contexts ``(n_runs, n_arms, dim)``, with ``k_a``
        from the arm's reward variance: ``k_a`` by the config's ``k_rounding``, ``f_a`` by its ``knn_weights``
        (LNUCB-TA's reading switches); a config without them (the enhanced variants) reads Alg. 2 as written."""
        c = self.config
        k = adaptive_k(self.history.variances(), c.theta_min, c.theta_max, getattr(c, "k_rounding", "round"))
        if getattr(c, "knn_weights", "uniform") == "uniform":
            _, rewards = self.history.nearest(contexts, c.theta_max)
            return mean_of_first_k(rewards, self.history.counts, k), k
        _, rewards, slots = self.history.nearest_pulls(contexts, c.theta_max)
        distances = self.history.direct_distances(contexts, slots)
        return distance_weighted_mean_of_first_k(distances, rewards, self.history.counts, k), k
