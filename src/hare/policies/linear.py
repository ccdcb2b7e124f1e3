"""Linear contextual bandits with disjoint arms: LinUCB, LinTS and LinThompsonUCB.

Every arm ``a`` of every run keeps a ridge posterior (:class:`RidgeState`)
``A_a = lam I + sum x x^T``, ``b_a = sum r x``, ``theta_a = A_a^{-1} b_a``; the policies differ
only in the rule that scores it.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

import torch

from hare.envs.base import BanditEnvironment, Observation
from hare.model.covariance import ROW_PRODUCTS_MIN_DIM, RidgeState, linear_means, ridge_bytes
from hare.policies.base import (
    Policy,
    PolicyConfig,
    pulled_contexts,
    register_policy,
    upper_confidence_bound,
)
from hare.typed import at_least, nonnegative, one_of, positive


class DisjointRidgePolicy(Policy):
    """A ridge posterior per arm (:class:`RidgeState`, groups ``(n_arms,)``) and the confidence width
    ``w_a = sqrt(x_a^T A_a^{-1} x_a)`` its scoring rules share.

    From ``dim >= ROW_PRODUCTS_MIN_DIM`` on, the width comes through ``v_a = A_a^{-1} x_a`` of every arm
    (``w_a^2 = x_a^T v_a``); :meth:`select` keeps them and :meth:`update` reuses the pulled arm's
    ``v`` in its Sherman–Morrison step instead of reading that arm's inverse again.
    """

    round_cost_grows = False

    def __init__(self, config, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        self.ridge = RidgeState(env.n_runs, (env.n_arms,), env.dim, config.lam, config.refactor_every)
        self.selection: dict[str, Any] = {}

    @classmethod
    def memory_bytes(cls, config: Any, arms: int, dim: int, length: int, clusters: int) -> tuple[int, int]:
        """:meth:`Policy.memory_bytes` plus ``ridge``, one :class:`RidgeState` group per arm
        (:func:`hare.model.covariance.ridge_bytes`), and the ``(dim, dim)`` float64 rank-one scratch of an update."""
        grows, fixed = super().memory_bytes(config, arms, dim, length, clusters)
        return grows, fixed + ridge_bytes(arms, dim) + 8 * dim * dim

    def widths_and_products(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``w_a`` ``(n_runs, n_arms)`` for contexts ``x`` ``(n_runs, n_arms, dim)`` float64 and, from
        ``dim >= ROW_PRODUCTS_MIN_DIM`` on, ``v_a`` ``(n_runs, n_arms, dim)``; below it ``None`` and the
        width from :meth:`RidgeState.quadratic_form`, which is faster for small matrices."""
        if self.ridge.dim < ROW_PRODUCTS_MIN_DIM:
            return self.ridge.quadratic_form(x).sqrt(), None
        products = self.ridge.row_products(x)
        return linear_means(x, products).clamp_min(0.0).sqrt(), products

    def keep_products(self, observation: Observation, products: torch.Tensor | None) -> None:
        """Remember the products of the state :meth:`update` will change, for that observation only."""
        self.selection.update(observation=observation, products=products)

    def update(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        """Sherman–Morrison update of the pulled arms; ``A^{-1} x`` comes from :meth:`select` when it
        scored this same observation on the current state."""
        a_inv_x = None
        products = self.selection.pop("products", None)
        if self.selection.pop("observation", None) is observation and products is not None:
            a_inv_x = products.gather(1, arms[:, None, None].expand(-1, 1, products.shape[-1])).squeeze(1)
        self.ridge.update_selected(arms, pulled_contexts(observation.contexts, arms), rewards, a_inv_x)


@dataclass(frozen=True)
class LinUCBConfig(PolicyConfig):
    """LinUCB hyperparameters.

    alpha: bonus weight; lam: ridge regulariser; refactor_every: rounds between
    exact re-inversions of the covariance. Tunable: alpha (lam = 1 as in LNUCB-TA (Khosravi et al., 2025) §5.1).
    """

    tunable: ClassVar[tuple[str, ...]] = ("alpha",)

    alpha: Annotated[float, nonnegative] = 1.0
    lam: Annotated[float, positive] = 1.0
    refactor_every: Annotated[int, at_least(1)] = 1000


@register_policy("linucb")
class LinUCB(DisjointRidgePolicy):
    """LinUCB with disjoint arms (Li et al. 2010, Alg. 1; OFUL bound: paper, eq:oful).

    Per arm ``a``: ``A_a = lam I + sum x x^T``, ``b_a = sum r x``, ``theta_a = A_a^{-1} b_a``;
    select ``argmax_a x_a^T theta_a + alpha sqrt(x_a^T A_a^{-1} x_a)`` with contexts
    ``(n_runs, n_arms, dim)``.
    """

    config_class = LinUCBConfig
    per_run_hyperparameters = ("alpha",)

    def scores(self, contexts: torch.Tensor) -> torch.Tensor:
        """UCB index of every arm, ``(n_runs, n_arms)``."""
        return self.scores_and_products(contexts)[0]

    def scores_and_products(self, contexts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """UCB index ``(n_runs, n_arms)`` and the products of :meth:`widths_and_products`."""
        x = contexts.to(torch.float64)
        width, products = self.widths_and_products(x)
        return upper_confidence_bound(
            linear_means(x, self.ridge.theta), width, self.hyperparameter("alpha", width)
        ), products

    def select(self, observation: Observation) -> torch.Tensor:
        scores, products = self.scores_and_products(observation.contexts)
        self.keep_products(observation, products)
        return self.tie_break(scores, observation.t)


SAMPLING_MODES = ("score", "parameter")
"""How the Thompson policies draw ``x_a^T theta_a`` for ``theta_a ~ N(theta_hat_a, nu^2 A_a^{-1})``:
``"score"`` draws the projection itself, ``x_a^T theta_hat_a + nu sqrt(x_a^T A_a^{-1} x_a) z_a``, one normal
per arm at ``O(dim^2)``; ``"parameter"`` draws the whole ``theta_a`` through a Cholesky factor of ``A_a``
at ``O(dim^3)`` per arm and round (Agrawal & Goyal's Algorithm 1 literally). The arms' posteriors are
independent, so the two give the same law of the scores, hence of the pulled arms; they consume
different random numbers."""


@dataclass(frozen=True)
class LinTSConfig(PolicyConfig):
    """LinTS hyperparameters.

    nu: posterior scale ``v`` (LNUCB-TA §5.1 grid {1, 0.1, 0.01}; Table 5 grid {0.1, ..., 10});
    lam: ridge regulariser (1 in LNUCB-TA §5.1); refactor_every: rounds between exact re-inversions;
    sampling: one of :data:`SAMPLING_MODES`. Tunable: nu (lam = 1 as in LNUCB-TA §5.1).
    """

    tunable: ClassVar[tuple[str, ...]] = ("nu",)

    nu: Annotated[float, nonnegative] = 0.1
    lam: Annotated[float, positive] = 1.0
    refactor_every: Annotated[int, at_least(1)] = 1000
    sampling: Annotated[str, one_of(SAMPLING_MODES)] = "score"


class LinearPosterior(DisjointRidgePolicy):
    """Per-arm ridge posterior and the Gaussian draw of ``x_a^T theta_a``, ``theta_a ~ N(theta_hat_a, nu^2
    A_a^{-1})``."""

    def sampled_means(self, observation: Observation) -> tuple[torch.Tensor, torch.Tensor]:
        """``x_a^T theta_a`` for one posterior draw per arm and the width ``w_a = sqrt(x_a^T A_a^{-1} x_a)``,
        both ``(n_runs, n_arms)``, for the observation's contexts ``x`` ``(n_runs, n_arms, dim)``; keeps the
        products for :meth:`update`.

        ``"score"`` mode: ``x_a^T theta_hat_a + nu w_a z_a`` with ``z ~ N(0, I_K)`` (stream
        ``"lin-ts-score"``, counter ``t``); ``"parameter"`` mode: ``x_a^T`` :meth:`sample_theta`.
        """
        x, t = observation.contexts.to(torch.float64), observation.t
        width, products = self.widths_and_products(x)
        self.keep_products(observation, products)
        if self.config.sampling == "parameter":
            return (x * self.sample_theta(t)).sum(-1), width
        z = self.rng.normal("lin-ts-score", t, (self.n_arms,))  # (n_runs, n_arms)
        return linear_means(x, self.ridge.theta) + self.hyperparameter("nu", width) * width * z, width

    def sample_theta(self, t: int) -> torch.Tensor:
        """One posterior sample per arm, ``(n_runs, n_arms, dim)`` float64.

        With ``A_a = L_a L_a^T`` (Cholesky) and ``z ~ N(0, I)`` from the run keys,
        ``theta_a = theta_hat_a + nu L_a^{-T} z`` has covariance ``nu^2 (L_a L_a^T)^{-1} = nu^2 A_a^{-1}``.
        """
        z = self.rng.normal("lin-ts-theta", t, (self.n_arms, self.dim))  # (n_runs, n_arms, dim)
        cholesky = torch.linalg.cholesky(self.ridge.precision)
        spread = torch.linalg.solve_triangular(cholesky.mT, z[..., None], upper=True).squeeze(-1)
        return self.ridge.theta + self.hyperparameter("nu", spread) * spread

    @abstractmethod
    def scores(self, observation: Observation) -> torch.Tensor:
        """Sampled score of every arm, ``(n_runs, n_arms)``, from :meth:`sampled_means`."""

    def select(self, observation: Observation) -> torch.Tensor:
        return self.tie_break(self.scores(observation), observation.t)


@register_policy("lin_ts")
class LinTS(LinearPosterior):
    """Linear Thompson sampling with disjoint arms (Agrawal & Goyal 2013, Alg. 1).

    Each round draws ``theta_a ~ N(theta_hat_a, nu^2 A_a^{-1})`` for every arm (independently:
    the arms share no parameter) and pulls ``argmax_a x_a^T theta_a``; contexts
    ``(n_runs, n_arms, dim)``. By default only the projection ``x_a^T theta_a`` is drawn (same law,
    ``O(dim^2)`` instead of a Cholesky factor per arm and round; see :data:`SAMPLING_MODES`). Agrawal & Goyal's
    theoretical scale is
    ``v = R sqrt(24 d log(1/delta) / epsilon)``; here ``v = nu`` is tuned, as in LNUCB-TA §5.1.
    """

    config_class = LinTSConfig
    per_run_hyperparameters = ("nu",)

    def scores(self, observation: Observation) -> torch.Tensor:
        """Sampled reward of every arm, ``(n_runs, n_arms)``."""
        return self.sampled_means(observation)[0]


@dataclass(frozen=True)
class LinThompsonUCBConfig(PolicyConfig):
    """LinThompsonUCB hyperparameters.

    alpha: UCB bonus weight; nu: posterior sampling scale; lam: ridge regulariser;
    refactor_every: rounds between exact re-inversions; sampling: one of :data:`SAMPLING_MODES`.
    Tunable: alpha (the UCB bonus; nu stays at its set value, so the budget is one hyperparameter as LinUCB's).
    """

    tunable: ClassVar[tuple[str, ...]] = ("alpha",)

    alpha: Annotated[float, nonnegative] = 1.0
    nu: Annotated[float, nonnegative] = 0.1
    lam: Annotated[float, positive] = 1.0
    refactor_every: Annotated[int, at_least(1)] = 1000
    sampling: Annotated[str, one_of(SAMPLING_MODES)] = "score"


@register_policy("lin_thompson_ucb")
class LinThompsonUCB(LinearPosterior):
    """LinThompsonUCB: a Thompson sample scored with a UCB bonus (LNUCB-TA Table 1, after Zhang 2019).

    LNUCB-TA only describes it as combining "linear estimation with TS's probabilistic
    approach and UCB confidence intervals" (citing Zhang 2019, arXiv:1911.10728, an ensemble of
    the two rules for influence maximisation). We implement the additive combination

        theta_a ~ N(theta_hat_a, nu^2 A_a^{-1}),
        a_t = argmax_a  x_a^T theta_a + alpha sqrt(x_a^T A_a^{-1} x_a),

    which is LinTS at ``alpha = 0`` and LinUCB at ``nu = 0``.
    """

    config_class = LinThompsonUCBConfig
    per_run_hyperparameters = ("alpha",)

    def scores(self, observation: Observation) -> torch.Tensor:
        """Sampled reward plus bonus for every arm, ``(n_runs, n_arms)``."""
        sampled_mean, width = self.sampled_means(observation)
        return upper_confidence_bound(sampled_mean, width, self.hyperparameter("alpha", width))
