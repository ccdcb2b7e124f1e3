"""The "enhanced" Beta-Thompson, eps-greedy and LinThompson of LNUCB-TA (Khosravi et al., 2025) Appendix B: each its
own core plus LNUCB-TA's adaptive kNN adjustment (Alg. 2, :mod:`hare.policies.adaptive_knn`) and an attention weight
on the exploration (eq. 116); notation of :mod:`hare.policies.neighbor_policy`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar

import torch

from hare.envs.base import BanditEnvironment, Observation
from hare.policies.adaptive_knn import AdaptiveNeighborMixin, check_neighbor_range
from hare.policies.base import PolicyConfig, register_policy
from hare.policies.neighbor_policy import LinearNeighborPolicy, NeighborPolicy
from hare.random import CounterRNG
from hare.typed import at_least, nonnegative, positive, unit_interval


def attention_weights(counts: torch.Tensor, gamma: float) -> torch.Tensor:
    """LNUCB-TA eq. 116 ``softmax_a(-gamma N_a)`` times ``n_arms``, so equal counts (or ``gamma = 0``)
    give weight 1 and the base policy is recovered. ``(n_runs, n_arms)``."""
    return counts.shape[-1] * torch.softmax(-gamma * counts.to(torch.float64), dim=-1)


@dataclass(frozen=True)
class EnhancedConfig(PolicyConfig):
    """Shared by the enhanced variants: adaptive-k range (LNUCB-TA Alg. 2) and attention scale ``gamma`` (eq. 116)."""

    theta_min: Annotated[int, at_least(1)] = 1
    theta_max: int = 5
    gamma: Annotated[float, nonnegative] = 0.1

    def __post_init__(self) -> None:
        check_neighbor_range(self)


@dataclass(frozen=True)
class BetaThompsonEnhancedConfig(EnhancedConfig):
    """Beta prior ``(prior_alpha, prior_beta)``; LNUCB-TA App. B best: (0.5, 0.5).
    Tunable: prior_alpha, prior_beta (as the base Beta-Thompson; gamma and the k range keep their values)."""

    tunable: ClassVar[tuple[str, ...]] = ("prior_alpha", "prior_beta")

    prior_alpha: Annotated[float, positive] = 1.0
    prior_beta: Annotated[float, positive] = 1.0
    gamma_proposals: Annotated[int, at_least(1)] = 16


@dataclass(frozen=True)
class EpsGreedyEnhancedConfig(EnhancedConfig):
    """Exploration probability ``epsilon``; LNUCB-TA App. B best: 0.25. Tunable: epsilon (as the base eps-greedy)."""

    tunable: ClassVar[tuple[str, ...]] = ("epsilon",)

    epsilon: Annotated[float, unit_interval] = 0.1


@dataclass(frozen=True)
class LinThompsonEnhancedConfig(EnhancedConfig):
    """Posterior scale ``v`` and ridge ``lam``; LNUCB-TA App. B best ``v = 2``. Tunable: v (as LinTS's nu)."""

    tunable: ClassVar[tuple[str, ...]] = ("v",)

    v: Annotated[float, nonnegative] = 1.0
    lam: Annotated[float, positive] = 1.0
    refactor_every: Annotated[int, at_least(1)] = 1000


def gamma_draws(
    rng: CounterRNG, stream: str, counter: int, shape_parameter: torch.Tensor, proposals: int
) -> torch.Tensor:
    """Gamma(shape, 1) draws by Marsaglia & Tsang (2000) from the counter RNG, ``(n_runs, n)`` -> ``(n_runs, n)``.

    ``proposals`` candidates per draw; the first accepted one is kept (acceptance >= 0.95 per candidate,
    so 16 candidates all fail with probability < 1e-20; the fallback is the proposal centre ``d``).
    Shapes below 1 use ``Gamma(a) = Gamma(a + 1) U^{1/a}``.
    """
    n = shape_parameter.shape[-1]
    boosted = shape_parameter + (shape_parameter < 1).to(shape_parameter.dtype)
    d = boosted - 1.0 / 3.0
    c = 1.0 / torch.sqrt(9.0 * d)
    z = rng.normal(f"{stream}-z", counter, (n, proposals))
    u = rng.uniform(f"{stream}-u", counter, (n, proposals))
    v = (1.0 + c[..., None] * z) ** 3
    safe_v = v.clamp_min(1e-300)
    accepted = (v > 0) & (
        torch.log(u) < 0.5 * z.square() + d[..., None] - d[..., None] * safe_v + d[..., None] * torch.log(safe_v)
    )
    first = torch.where(
        accepted, torch.arange(proposals, 0, -1, device=v.device), torch.zeros_like(z, dtype=torch.int64)
    ).argmax(-1, keepdim=True)
    draw = torch.where(accepted.any(-1), d * v.gather(-1, first).squeeze(-1), d)
    boost = rng.uniform(f"{stream}-boost", counter, (n,)) ** (1.0 / shape_parameter)
    return torch.where(shape_parameter < 1, draw * boost, draw)


@register_policy("beta_thompson_enhanced")
class BetaThompsonEnhanced(AdaptiveNeighborMixin, NeighborPolicy):
    """Beta-Thompson with LNUCB-TA App. B's enhancements, its own Beta-TS core (not classic.py's):

        theta~_a ~ Beta(prior_alpha + S_a, prior_beta + F_a),   m_a = its mean,
        score_a = f_{a,k_a}(x_a) + m_a + w_a (theta~_a - m_a),

    ``S_a += r``, ``F_a += 1 - r`` with ``r`` clipped to ``[0, 1]``, ``w_a`` from
    :func:`attention_weights` (the exploration — the sample's deviation from the mean — weighted by
    the attention score), ``f`` from Alg. 2. Beta draws are ``G_1 / (G_1 + G_2)``, gammas from
    :func:`gamma_draws` (streams ``"beta-ts-a"``/``"beta-ts-b"`` at counter ``t``).
    """

    config_class = BetaThompsonEnhancedConfig

    def __init__(self, config: BetaThompsonEnhancedConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        self.register_buffer("successes", torch.zeros(env.n_runs, env.n_arms, dtype=torch.float64))

    def scores(self, contexts: torch.Tensor, t: int) -> torch.Tensor:
        c = self.config
        successes = self.successes
        failures = self.history.counts.to(torch.float64) - successes
        a = c.prior_alpha + successes
        b = c.prior_beta + failures
        g_a = gamma_draws(self.rng, "beta-ts-a", t, a, c.gamma_proposals)
        g_b = gamma_draws(self.rng, "beta-ts-b", t, b, c.gamma_proposals)
        sample = g_a / (g_a + g_b)
        mean = a / (a + b)
        adjustment, _ = self.knn_adjustment(contexts)
        return adjustment + mean + attention_weights(self.history.counts, c.gamma) * (sample - mean)

    def select(self, observation: Observation) -> torch.Tensor:
        return self.tie_break(self.scores(observation.contexts, observation.t), observation.t)

    def learn(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        runs = torch.arange(self.n_runs, device=arms.device)
        self.successes[runs, arms] += rewards.to(torch.float64).clamp(0.0, 1.0)
        super().learn(observation, arms, rewards)


@register_policy("eps_greedy_enhanced")
class EpsGreedyEnhanced(AdaptiveNeighborMixin, NeighborPolicy):
    """eps-greedy with LNUCB-TA App. B's enhancements, its own core (not classic.py's):

    with probability ``epsilon`` (uniform ``u_t < epsilon``, stream ``"eps-explore"``) pull an arm drawn
    from the attention distribution ``softmax_a(-gamma N_a)`` (eq. 116: arm ``a`` is explored at rate
    ``epsilon * attention_a``; ``gamma = 0`` is uniform exploration), else
    ``argmax_a Ybar_a + f_{a,k_a}(x_a)`` (empirical mean, 0 for unpulled arms, plus the Alg. 2 adjustment).
    """

    config_class = EpsGreedyEnhancedConfig
    per_run_hyperparameters = ("epsilon",)

    def scores(self, contexts: torch.Tensor) -> torch.Tensor:
        adjustment, _ = self.knn_adjustment(contexts)
        return self.history.means() + adjustment

    def select(self, observation: Observation) -> torch.Tensor:
        t = observation.t
        greedy = self.tie_break(self.scores(observation.contexts), t)
        attention = attention_weights(self.history.counts, self.config.gamma) / self.n_arms  # (n_runs, n_arms)
        draw = self.rng.uniform("eps-arm", t)[:, None]
        explored = (attention.cumsum(-1) < draw).sum(-1).clamp_max(self.n_arms - 1)
        coin = self.rng.uniform("eps-explore", t)
        explore = coin < self.hyperparameter("epsilon", coin)
        return torch.where(explore, explored, greedy)


@register_policy("lin_thompson_enhanced")
class LinThompsonEnhanced(AdaptiveNeighborMixin, LinearNeighborPolicy):
    """LinThompson with LNUCB-TA App. B's enhancements, its own LinTS core (not linear.py's):

        score_a = x_a^T mu_a + f_{a,k_a}(x_a) + v w_a sqrt(x_a^T Sigma_a^{-1} x_a) xi_a,   xi ~ N(0, I)

    (stream ``"lin-ts"`` at counter ``t``). With disjoint arms ``x_a^T mu~_a`` for
    ``mu~_a ~ N(mu_a, v^2 Sigma_a^{-1})`` has exactly the law ``x_a^T mu_a + v sqrt(x_a^T Sigma_a^{-1} x_a) xi_a``,
    independently over arms, so the scalar form is the LinTS sample without a matrix square root.
    """

    config_class = LinThompsonEnhancedConfig
    per_run_hyperparameters = ("v",)

    def scores(self, contexts: torch.Tensor, t: int) -> torch.Tensor:
        linear, width = self.linear_posterior(contexts)
        adjustment, _ = self.knn_adjustment(contexts)
        noise = self.rng.normal("lin-ts", t, (self.n_arms,))
        return (
            linear
            + adjustment
            + self.hyperparameter("v", width)
            * attention_weights(self.history.counts, self.config.gamma)
            * width
            * noise
        )

    def select(self, observation: Observation) -> torch.Tensor:
        return self.tie_break(self.scores(observation.contexts, observation.t), observation.t)
