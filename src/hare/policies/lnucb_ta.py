"""LNUCB-TA (Khosravi et al., 2025, Algorithms 1-3, eq. 9) and (Lin+kNN)-UCB, the vanilla combination of its
Table 3: a per-arm ridge estimate plus the kNN reward adjustment, with LNUCB-TA's temporal-attention exploration rate
or a constant one (notation of :mod:`hare.policies.neighbor_policy`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar

import torch

from hare.envs.base import BanditEnvironment, Observation
from hare.envs.registry import environment_class
from hare.model.covariance import ROW_PRODUCTS_MIN_DIM, linear_means
from hare.policies.adaptive_knn import K_ROUNDINGS, AdaptiveNeighborMixin, check_neighbor_range, mean_of_first_k
from hare.policies.base import (
    PolicyConfig,
    pulled_contexts,
    register_policy,
    temporal_attention_rate,
    upper_confidence_bound,
)
from hare.policies.neighbor_policy import LinearNeighborPolicy
from hare.typed import at_least, nonnegative, one_of, positive, unit_interval


@dataclass(frozen=True)
class LinKNNUCBConfig(PolicyConfig):
    """(Lin+kNN)-UCB: bonus weight ``alpha``, ridge ``lam``, fixed number of neighbours ``k``. Tunable: alpha (as
    LinUCB)."""

    tunable: ClassVar[tuple[str, ...]] = ("alpha",)

    alpha: Annotated[float, nonnegative] = 1.0
    lam: Annotated[float, positive] = 1.0
    k: Annotated[int, at_least(1)] = 5
    refactor_every: Annotated[int, at_least(1)] = 1000


@register_policy("lin_knn_ucb")
class LinKNNUCB(LinearNeighborPolicy):
    """The vanilla combination of LNUCB-TA Table 3: LNUCB-TA eq. 9 with a constant exploration rate
    and a fixed ``k``,

        UCB_a = x_a^T mu_a + f_{a,k}(x_a) + alpha sqrt(x_a^T Sigma_a^{-1} x_a),

    ``f_{a,k} = 0`` while ``N_a < k`` (as Alg. 2 line 6 for LNUCB-TA).
    """

    config_class = LinKNNUCBConfig
    per_run_hyperparameters = ("alpha",)

    def scores(self, contexts: torch.Tensor) -> torch.Tensor:
        linear, width = self.linear_posterior(contexts)
        _, rewards = self.history.nearest(contexts, self.config.k)
        k = torch.full_like(self.history.counts, self.config.k)
        return upper_confidence_bound(
            linear + mean_of_first_k(rewards, self.history.counts, k), width, self.hyperparameter("alpha", width)
        )

    def select(self, observation: Observation) -> torch.Tensor:
        return self.tie_break(self.scores(observation.contexts), observation.t)


GLOBAL_MEANS = ("rounds", "arms", "all_rewards")
"""``g`` of Alg. 3 line 3: the mean reward of the rounds played (``rounds``), of the per-arm means (``arms``, eq. 101),
or, as LNUCB-TA's public code, of the environment's whole reward matrix (``all_rewards``: information a bandit does not
have)."""

KNN_WEIGHTS = ("uniform", "distance")
"""``f_a`` of Alg. 2 line 7: the plain mean of the ``k_a`` nearest rewards (``uniform``) or, as the public code, their
``1/d``-weighted mean (``distance``)."""

THETA_INITS = ("zero", "uniform")
"""``theta_a`` before arm ``a``'s first update: the ridge estimate, 0 (``zero``, Alg. 1), or, as the public code, a draw
uniform in ``[-1, 1]^d`` (``uniform``)."""

PUBLIC_CODE_READING = {
    "knn_weights": "distance",
    "global_mean": "all_rewards",
    "k_rounding": "floor",
    "theta_init": "uniform",
}
"""The four switches at the values that read LNUCB-TA as its authors' public implementation does
(docs/lnucb_ta_reading.md)."""


@dataclass(frozen=True)
class LNUCBTAConfig(PolicyConfig):
    """LNUCB-TA. alpha_0: initial exploration rate; kappa: global/local attention weight;
    theta_min, theta_max: range of the adaptive ``k``; lam: ridge regulariser; global_mean: ``g`` as
    the mean reward of all past rounds (``rounds``) or the mean of the per-arm means, eq. 101 (``arms``).
    Defaults are LNUCB-TA App. B (``kappa = 0.5``, ``theta_min = 1``, ``theta_max = 5``).
    Tunable: alpha_0 (LNUCB-TA Table 5 searches it; kappa and the k range keep App. B's values).

    Component switches of the LNUCB-TA §5.3 ablation (Figure 2), both on by default:
    attention: the temporal-attention exploration rate of Alg. 3 line 4 (eq. 4); off, every arm
    explores at the constant ``alpha_0``. adaptive_knn: the kNN reward adjustment ``f_a`` of Alg. 2
    (eq. 9's second term); off, ``f_a = 0``. Both off is LinUCB with ``alpha = alpha_0``.

    Reading switches: the defaults are Algorithms 1–3 as written; the other values are where the authors'
    public implementation reads them differently (:data:`PUBLIC_CODE_READING`, docs/lnucb_ta_reading.md).
    knn_weights (Alg. 2 line 7): ``uniform`` (default), ``f_a`` the plain mean of the ``k_a`` nearest rewards;
    ``distance``, their ``1/d``-weighted mean, exact matches taking all the weight.
    global_mean (Alg. 3 line 3): ``all_rewards``, ``g`` the mean of the environment's whole reward matrix,
    every arm and every round of the horizon, rounds to come included (``1/K`` in classification): information
    a bandit does not have, so config validation allows it only in the ``published`` experiment.
    k_rounding (Alg. 2 line 5): ``round`` (default) or ``floor``, the integer part of ``k``.
    theta_init (Alg. 1 lines 4 and 9): ``zero`` (default), ``l_a = x_a^T Sigma_a^{-1} b_a`` from the start; ``uniform``,
    ``l_a = x_a^T theta_a`` with ``theta_a`` uniform in ``[-1, 1]^d`` until arm ``a``'s first update."""

    tunable: ClassVar[tuple[str, ...]] = ("alpha_0",)

    alpha_0: Annotated[float, nonnegative] = 1.0
    kappa: Annotated[float, unit_interval] = 0.5
    theta_min: Annotated[int, at_least(1)] = 1
    theta_max: int = 5
    lam: Annotated[float, positive] = 1.0
    global_mean: Annotated[str, one_of(GLOBAL_MEANS)] = "rounds"
    refactor_every: Annotated[int, at_least(1)] = 1000
    attention: bool = True
    adaptive_knn: bool = True
    knn_weights: Annotated[str, one_of(KNN_WEIGHTS)] = "uniform"
    k_rounding: Annotated[str, one_of(K_ROUNDINGS)] = "round"
    theta_init: Annotated[str, one_of(THETA_INITS)] = "zero"

    def __post_init__(self) -> None:
        check_neighbor_range(self)

    def check_environment(self, kind: str) -> None:
        """``global_mean: all_rewards`` needs the whole reward matrix, which a replay environment (logged data: the
        reward of the logged arm only) does not have."""
        if self.global_mean == "all_rewards" and not environment_class(kind).has_reward_matrix:
            raise ValueError(
                "LNUCBTAConfig.global_mean: 'all_rewards' needs the whole reward matrix, which a replay environment "
                "does not have (its logs hold the reward of the logged arm only)"
            )


THETA_INIT_STREAM = "lnucb-ta-theta-init"
"""The policy RNG stream of ``theta_init="uniform"``'s draw (counter 0)."""


@register_policy("lnucb_ta")
class LNUCBTA(AdaptiveNeighborMixin, LinearNeighborPolicy):
    """LNUCB-TA Algorithms 1–3, eq. 9, at round ``t``:

    * Alg. 1 line 4: ``l_a = x_a^T mu_a`` with the per-arm ridge estimate ``mu_a = Sigma_a^{-1} b_a``;
    * Alg. 2 lines 4–7: ``k_a = theta_min + (theta_max - theta_min) Var(z_a)`` (population variance of
      arm ``a``'s past rewards, 0 below two pulls; rounded and clipped to ``[theta_min, theta_max]``);
      ``f_a = (1/k_a) sum`` of the rewards of the ``k_a`` nearest past contexts of arm ``a`` when
      ``N_a >= k_a``, else 0;
    * Alg. 3 lines 3–4: ``n_a = (1/N_a) sum_{s<t} Y_s^a`` (0 while ``N_a = 0``),
      ``alpha_a = alpha_0 / (N_a + 1) * (kappa g + (1 - kappa) n_a)``;
    * eq. 9: ``UCB_a = l_a + f_a + alpha_a sqrt(x_a^T Sigma_a^{-1} x_a)``; Alg. 1 line 8: argmax.
    * Alg. 1 line 9: ridge, history, ``N_a`` and ``g`` updated with the pulled arm after the choice.

    ``g`` uses only rounds ``< t``: ``global_mean="rounds"`` (default) is ``sum_{s<t} r_s / t``
    (0 at ``t = 0``), the "global average of rewards" of Alg. 3; ``"arms"`` is eq. 101's
    ``(1/A) sum_a Ybar^a`` over the arms pulled so far. Buffers ``global_reward_sum``,
    ``global_rounds`` (float64 scalars).

    Ablation (LNUCB-TA §5.3): ``attention=False`` replaces ``alpha_a`` by ``alpha_0``;
    ``adaptive_knn=False`` sets ``f_a = 0`` (no neighbour search); with both off the index is
    LinUCB's ``x_a^T mu_a + alpha_0 sqrt(x_a^T Sigma_a^{-1} x_a)``.

    Public-code reading (:data:`PUBLIC_CODE_READING`; defaults: the algorithm as written, to the bit), one switch
    per place where the authors' implementation departs from Algorithms 1–3:

    * ``knn_weights="distance"`` (Alg. 2 line 7): ``f_a = sum_i r_i / d_i / sum_i 1 / d_i`` over the same ``k_a``
      neighbours, ``d_i = ||x_a - y_i||`` taken from the difference
      (:meth:`~hare.model.arm_history.ArmHistory.direct_distances`, exactly 0 for a repeated context); exact matches,
      if any, take all the weight (their mean reward). Still 0 while ``N_a < k_a``.
    * ``global_mean="all_rewards"`` (Alg. 3 line 3): ``g`` the mean of the environment's whole reward matrix, every
      arm and every round ``0..horizon-1``, rounds not yet played included
      (:meth:`hare.envs.base.BanditEnvironment.mean_reward_all_rounds`, read once at construction into the buffer
      ``global_constant`` ``(n_runs,)``; ``1/K`` in classification). A bandit has no such information: config
      validation allows it only in the ``published`` experiment.
    * ``k_rounding="floor"`` (Alg. 2 line 5): ``k_a`` the integer part instead of the nearest integer; clipping and the
      condition ``N_a >= k_a`` stay.
    * ``theta_init="uniform"`` (Alg. 1 line 4 before the first update of line 9): until arm ``a`` has been updated once,
      ``l_a = x_a^T theta_a`` with ``theta_a`` uniform in ``[-1, 1]^d``, drawn once per run and arm at construction
      (stream ``"lnucb-ta-theta-init"``, counter 0 of the run keys; buffer ``initial_theta`` ``(n_runs, n_arms, dim)``);
      the ridge estimate takes over from the arm's first update. The width term keeps ``Sigma_a^{-1} = I / lam``.
    """

    config_class = LNUCBTAConfig
    per_run_hyperparameters = ("alpha_0",)

    def __init__(self, config: LNUCBTAConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        self.selection: dict = {}
        self.register_buffer("global_reward_sum", torch.zeros(env.n_runs, dtype=torch.float64))
        self.register_buffer("global_rounds", torch.zeros((), dtype=torch.float64))
        constant = (
            env.mean_reward_all_rounds().to(device=keys.device, dtype=torch.float64)
            if config.global_mean == "all_rewards"
            else None
        )
        self.register_buffer("global_constant", constant)
        initial = (
            2.0 * self.rng.uniform(THETA_INIT_STREAM, 0, (env.n_arms, env.dim)) - 1.0
            if config.theta_init == "uniform"
            else None
        )
        self.register_buffer("initial_theta", initial)

    def global_attention(self) -> torch.Tensor:
        """``g`` of the coming round, ``(n_runs,)``: only rewards of earlier rounds enter, except under
        ``global_mean="all_rewards"`` (the constant mean of the whole reward matrix)."""
        if self.config.global_mean == "rounds":
            return self.global_reward_sum / self.global_rounds.clamp_min(1.0)
        if self.config.global_mean == "all_rewards":
            return self.global_constant
        pulled = (self.history.counts > 0).to(torch.float64)
        return (self.history.means() * pulled).sum(-1) / pulled.sum(-1).clamp_min(1.0)

    def exploration_rates(self) -> torch.Tensor:
        """``alpha_a`` of Alg. 3 line 4, ``(n_runs, n_arms)``; ``alpha_0`` everywhere without attention."""
        c = self.config
        local = self.history.means()
        alpha_0 = self.hyperparameter("alpha_0", local)
        if not c.attention:
            return torch.zeros_like(local) + alpha_0
        counts = self.history.counts.to(torch.float64)
        return temporal_attention_rate(alpha_0, counts, self.global_attention()[:, None], local, c.kappa)

    def reward_estimate(self, contexts: torch.Tensor, linear: torch.Tensor) -> torch.Tensor:
        """``l_a + f_a`` of eq. 9, ``(n_runs, n_arms)``; ``l_a`` alone without the adaptive kNN."""
        if not self.config.adaptive_knn:
            return linear
        adjustment, _ = self.knn_adjustment(contexts)
        return linear + adjustment

    def linear_terms(self, contexts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """``l_a = x_a^T mu_a``, ``w_a = sqrt(x_a^T Sigma_a^{-1} x_a)`` ``(n_runs, n_arms)`` and, from
        ``dim >= ROW_PRODUCTS_MIN_DIM`` on, ``v_a = Sigma_a^{-1} x_a`` ``(n_runs, n_arms, dim)`` (else ``None``):
        the kernels of :class:`hare.policies.linear.LinUCB`, so that with both switches off the index and
        the ridge updates are LinUCB's to the last bit."""
        x = contexts.to(torch.float64)
        if self.ridge.dim < ROW_PRODUCTS_MIN_DIM:
            return self.linear_estimate(x), self.ridge.quadratic_form(x).sqrt(), None
        products = self.ridge.row_products(x)
        return self.linear_estimate(x), linear_means(x, products).clamp_min(0.0).sqrt(), products

    def linear_estimate(self, x: torch.Tensor) -> torch.Tensor:
        """``l_a`` of Alg. 1 line 4, ``(n_runs, n_arms)`` for float64 contexts ``(n_runs, n_arms, dim)``: ``x_a^T
        mu_a``;
        under ``theta_init="uniform"``, ``x_a^T theta_a`` (the uniform draw) for the arms not yet updated."""
        linear = linear_means(x, self.ridge.theta)
        if self.initial_theta is None:
            return linear
        return torch.where(self.history.counts > 0, linear, linear_means(x, self.initial_theta))

    def scores_and_products(self, contexts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Eq. 9 for every arm ``(n_runs, n_arms)`` and the products of :meth:`linear_terms`."""
        linear, width, products = self.linear_terms(contexts)
        return upper_confidence_bound(self.reward_estimate(contexts, linear), width, self.exploration_rates()), products

    def scores(self, contexts: torch.Tensor) -> torch.Tensor:
        """Eq. 9 for every arm, ``(n_runs, n_arms)``."""
        return self.scores_and_products(contexts)[0]

    def select(self, observation: Observation) -> torch.Tensor:
        scores, products = self.scores_and_products(observation.contexts)
        self.selection = {"observation": observation, "products": products}
        return self.tie_break(scores, observation.t)

    def learn(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        """Alg. 1 line 9 (the history is appended by :meth:`~hare.policies.neighbor_policy.NeighborPolicy.update`).
        The ridge step reuses the pulled arm's ``Sigma^{-1} x`` from :meth:`select` when it scored this same observation
        on the current state (as LinUCB does)."""
        selection, self.selection = self.selection, {}
        products = selection.get("products")
        a_inv_x = None
        if selection.get("observation") is observation and products is not None:
            a_inv_x = products.gather(1, arms[:, None, None].expand(-1, 1, products.shape[-1])).squeeze(1)
        self.ridge.update_selected(arms, pulled_contexts(observation.contexts, arms), rewards, a_inv_x)
        self.global_reward_sum += rewards.to(torch.float64)
        self.global_rounds += 1.0
