"""HARE (paper, sec:method and alg:select; cluster rule eq:online-mean) and the RAG-cosine baseline.

Per round, for the active user ``i_t`` and query ``x_t``, in every head ``h``:

    q_h     = W_Qx^h x_t + W_Qu^h u_{i_t}                  (u: posterior mean, true u*, or dropped)
    s_{h,n} = <q_h, W_K^h e_n> / sqrt(d_k),   U_{h,j} = sqrt(q_h^T Sigma_{h,j}^{-1} q_h)
    A_h     = softmax(s_h + alpha_{h} U_{h,c(.)}),         z = concat_h(A_h V_h) W_O

* **select** (config ``hare``): cluster ``j_t = argmax_j mean_h(m_{h,j} + alpha_h U_{h,j})`` (the
  UCB rule :func:`~hare.policies.base.upper_confidence_bound`), then the item of ``j_t`` with the
  largest head-mean attention; its reward is observed. The mean ``m`` (``mean``):

  - ``online`` (paper, eq:online-mean): ``m_{h,j} = <theta_{h,j}, q_h>``,
    ``theta_{h,j} = Sigma_{h,j}^{-1}(lam theta0_{h,j} + b_{h,j})``, ``theta0_{h,j} = mean_{n in j}
    W_K^h e_n / sqrt(d_k)``, ``b_{h,j} = sum w_{h,j} q_h y``: LinUCB per cluster on the projected
    query, shrunk to the attention's own cluster score, with the same ``Sigma`` as the bonus;
  - ``frozen`` (ablation): ``m_{h,j} = mean_{n in j} s_{h,n} = <theta0_{h,j}, q_h>``.

  With no data both are equal. ``y`` is the reward on the link's scale: ``y = r`` for the identity
  link; for the logistic link the GLM working response around the prior logit
  ``s0_j = mean_h <theta0_{h,j}, q_h>`` (the reward model's logit is the head mean of the scores):
  ``y_j = s0_j + (r - sigmoid(s0_j)) / max(sigmoid'(s0_j), eps)``, ``eps =`` :data:`LOGISTIC_SLOPE_FLOOR`,
  i.e. one Newton (IRLS) step of the logistic likelihood from the prior, in the unweighted form
  that keeps one ``Sigma`` for the bonus and the estimate; the floor caps the correction at
  ``1/eps`` where the prior logit saturates (the role of GLM-UCB's ``kappa``).
* **synthesize** (config ``hare_synthesize``): the output is ``z``; the environment rewards
  ``z`` itself (:meth:`SyntheticBandit.synthesis_outcome`). ``b`` is kept up to date there too,
  but only select mode reads it.

Update: ``Sigma_{h,j} += w_{h,j} q_h q_h^T`` and ``b_{h,j} += w_{h,j} q_h y`` with ``w`` one-hot on the
dominant cluster (select: ``j_t``) or the attention mass of every cluster (``covariance_update:
attention_weighted``). In synthesize mode the output ``z`` is novel (no pool item), and the credit rule
(``credit``, :mod:`hare.policies.hare_credit`) decides which clusters the reward is credited to. The user posterior
regresses the reward on the feature that carries the user in the reward model
``r ~ mean_h <q_h, k_h(e)> / sqrt(d_k)``:

    phi(e) = mean_h W_Qu^{hT} W_K^h e / sqrt(d_k),   offset(x, e) = mean_h <W_Qx^h x, W_K^h e> / sqrt(d_k),

with ``e`` the pulled item (select) or ``z`` (synthesize), target ``r - offset``. With
``online_lr > 0`` the query projections (per run) take one SGD step on
``(r - offset - phi^T u)^2 / 2`` after each round; keys stay fixed so item keys (and ``theta0``)
are computed once. The online mean combines with it: ``q`` changes from round to round, and
``Sigma`` and ``b`` accumulate the ``q`` of the round in which each reward was observed (a ridge
fit on the queries as they were played; the projection step comes after the round's update).

Information (paper: the regimes): the constructor never reads the environment's logs; ``projections: learned`` and
``pool: log_prototypes`` are built from the logs HARE is warm-started with, in :meth:`HARE.warm_start`
(:mod:`hare.policies.hare_projections`), need the warm regime, and selecting before the warm start is an error.

Alpha schedules (``alpha_schedule``, paper eq:select and sec:learned-alpha): one strategy each, chosen once at
construction, in :mod:`hare.policies.alpha_schedules`. :meth:`HARE.trajectories` reports a learned ``alpha_h`` (for
``exp3`` its mean under the draw probabilities, and the probabilities) for the run files' per-round series.

The projections and the pool HARE starts from, and their fit on the warm start's logs, are in
:mod:`hare.policies.hare_projections` (shared with the RAG-cosine baseline, :mod:`hare.policies.rag_cosine`).

Length: one module because the policy's state (``Sigma``, ``b``, ``theta0``, the user posterior, the
projections) and its select, synthesize and update equations above are one algorithm, and :class:`HARESynthesize`
is a mode of it; the credit rules of synthesize mode are in :mod:`hare.policies.hare_credit`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, ClassVar

import torch
import torch.nn.functional as F

from hare.envs.base import BanditEnvironment, LoggedRounds, Observation
from hare.model.attention import AttentionOutput, UncertaintyAttention
from hare.model.covariance import ridge_bytes
from hare.model.covariance_approx import COVARIANCE_KINDS, covariance_bytes
from hare.model.projections import FitReport, Projections
from hare.model.user_state import UserPosterior
from hare.policies.alpha_schedules import ALPHA_SCHEDULES, build_alpha_schedule, check_alpha_settings
from hare.policies.base import MODES, Policy, PolicyConfig, register_policy, upper_confidence_bound
from hare.policies.hare_credit import CREDITS, SynthesisCredit, check_credit, synthesis_credit
from hare.policies.hare_projections import (
    PROJECTION_KINDS,
    WarmStartRequired,
    check_projections_environment,
    check_projections_regime,
    initial_pool,
    pool_from_logs,
    reward_link,
)
from hare.typed import at_least, each, nonnegative, one_of, positive, unit_interval

USER_STATES = ("posterior", "oracle", "off")
COVARIANCE_UPDATES = ("dominant", "attention_weighted")
MEANS = ("frozen", "online")
POOLS = ("environment", "log_prototypes")

LOGISTIC_SLOPE_FLOOR = 0.05
"""``eps`` of the logistic working response ``y = s0 + (r - sigmoid(s0)) / max(sigmoid'(s0), eps)``:
``sigmoid' >= eps`` for ``|s0| <= 2.9``, and the correction never exceeds ``1/eps = 20``."""

COLD_REGIME_ADVICE = "use projections: random with online learning (online_lr > 0, mean: online) in the cold regime"


@dataclass(frozen=True)
class HAREConfig(PolicyConfig):
    """HARE hyperparameters.

    mode: ``select`` or ``synthesize``.
    alpha: bonus weight ``alpha_0`` (0 gives attention-only); alpha_schedule: one of
    ``fixed | inverse_sqrt | per_head | lnucb_ta | meta_gradient | exp3``; alphas: per-head weights (``per_head``
    only, one per head); kappa: LNUCB-TA's global/local mix. Learned ``alpha_h`` (both start from ``alpha``):
    alpha_lr: the meta-gradient's step ``eta`` on ``log alpha_h`` in units of the gradient's running RMS (about
    ``eta`` e-folds per round; 0: ``alpha`` fixed, bit for bit); alpha_grid: EXP3's grid of bonus weights (``exp3``
    only); exp3_gamma: EXP3's exploration share ``gamma`` (also its learning rate).
    mean: the mean of the select-mode cluster index: ``online`` (ridge estimate
    ``theta_{h,j} = Sigma_{h,j}^{-1}(lam theta0_{h,j} + b_{h,j})`` learned from the observed rewards,
    shrunk to the attention's cluster score) or ``frozen`` (the attention's cluster score, the ablation).
    n_heads, key_dim: attention shape for random and learned projections (oracle projections
    take ``d_k`` from the environment and copy ``W*`` into every head).
    n_clusters: 0 keeps the environment's clusters; ``C >= 1`` re-clusters the pool by k-means
    (``C = 1`` one cluster, ``C = N`` one covariance per item).
    lam: ridge of the cluster covariances (and the prior weight of ``theta0``); refactor_every:
    rounds between Cholesky re-inversions.
    covariance_update: ``dominant`` or ``attention_weighted``.
    credit: synthesize mode's credit rule for the reward of a novel output ``z`` (module docstring):
    ``dominant | attention_weighted | nearest_item | gradient | none``; select mode credits the pulled item's
    cluster and takes only the default.
    covariance: the cluster covariance ``Sigma_{h,j}``: ``full`` (exact), ``diagonal`` (``lam I + diag(sum q q^T)``)
    or ``low_rank`` (a frequent-directions sketch of rank ``r =`` covariance_rank plus the exact diagonal; the bonus
    within a factor ``sqrt(1 + Delta / lam)`` of the exact one, :mod:`hare.model.covariance_approx`); every kind
    takes either covariance_update.
    projections: ``random | learned | oracle``; ``learned`` is fitted in :meth:`HARE.warm_start` on the
    logs of the warm start (warm regime only); projection_seed: seed of random init and fit;
    random_init_std: std of random projections (None: ``1 / sqrt(fan_in)``; 0.02 is the transformer init);
    fit_steps, fit_lr: the offline fit of learned projections; online_lr: SGD step size of online
    query-projection updates (0: frozen).
    pool: ``environment`` (the environment's item embeddings) or ``log_prototypes`` (warm regime
    only, one cluster per item: item ``a`` becomes the L2-normalised mean of the logged queries whose
    logged arm was ``a`` with reward > 0; see :func:`log_prototypes`).
    user_state: ``posterior`` (Bayesian estimate), ``oracle`` (true ``u*``, needs oracle
    projections), ``off`` ("HARE-nouser"); user_prior: prior variance; noise_sigma: reward
    noise assumed by the posterior.
    """

    tunable: ClassVar[tuple[str, ...]] = ("alpha",)

    mode: Annotated[str, one_of(MODES)] = "select"
    alpha: Annotated[float, nonnegative] = 1.0
    alpha_schedule: Annotated[str, one_of(ALPHA_SCHEDULES)] = "fixed"
    alphas: Annotated[tuple[float, ...] | None, each(nonnegative)] = None
    kappa: Annotated[float, unit_interval] = 0.5
    alpha_lr: Annotated[float, nonnegative] = 0.01
    alpha_grid: Annotated[tuple[float, ...] | None, each(nonnegative)] = None
    exp3_gamma: Annotated[float, unit_interval] = 0.044
    mean: Annotated[str, one_of(MEANS)] = "online"
    n_heads: Annotated[int, at_least(1)] = 1
    key_dim: Annotated[int, at_least(1)] = 8
    n_clusters: Annotated[int, nonnegative.noting("0: the environment's clusters")] = 0
    lam: Annotated[float, positive] = 1.0
    refactor_every: Annotated[int, at_least(1)] = 1000
    covariance_update: Annotated[str, one_of(COVARIANCE_UPDATES)] = "dominant"
    credit: Annotated[str, one_of(CREDITS)] = "dominant"
    covariance: Annotated[str, one_of(COVARIANCE_KINDS)] = "full"
    covariance_rank: Annotated[int, at_least(1)] = 8
    projections: Annotated[str, one_of(PROJECTION_KINDS)] = "oracle"
    projection_seed: int = 0
    random_init_std: Annotated[float | None, positive] = None
    fit_steps: Annotated[int, at_least(1)] = 600
    fit_lr: Annotated[float, positive] = 0.03
    online_lr: Annotated[float, nonnegative] = 0.0
    pool: Annotated[str, one_of(POOLS)] = "environment"
    user_state: Annotated[str, one_of(USER_STATES)] = "posterior"
    user_prior: Annotated[float, positive] = 1.0
    noise_sigma: Annotated[float, positive] = 0.1

    def __post_init__(self) -> None:
        if isinstance(self.alphas, list):
            object.__setattr__(self, "alphas", tuple(self.alphas))
        if isinstance(self.alpha_grid, list):
            object.__setattr__(self, "alpha_grid", tuple(self.alpha_grid))
        check_alpha_settings(self)
        self.require(
            self.pool != "log_prototypes" or self.projections != "oracle",
            "pool",
            "'log_prototypes' replaces the item embeddings, on which oracle projections W* are not defined",
        )
        self.require(
            self.pool != "log_prototypes" or self.n_clusters == 0,
            "pool",
            "'log_prototypes' gives every prototype its own cluster (leave n_clusters at 0)",
        )
        check_credit(self)
        self.require(
            self.user_state != "oracle" or self.projections == "oracle",
            "user_state",
            "'oracle' needs projections='oracle' (true u* live in the coordinates of W*)",
        )

    def check_environment(self, kind: str) -> None:
        super().check_environment(kind)
        check_projections_environment(self, kind)

    def check_regime(self, regime: str) -> None:
        check_projections_regime(self, regime, COLD_REGIME_ADVICE)
        if regime == "cold" and self.pool == "log_prototypes":
            raise ValueError(
                "HAREConfig.pool: 'log_prototypes' is built from the warm start's logs, which the cold regime "
                f"withholds; use pool: environment and {COLD_REGIME_ADVICE}"
            )


@register_policy("hare")
class HARE(SynthesisCredit, Policy):
    """HARE over the environment's item pool (arms are items); select or synthesize mode."""

    config_class = HAREConfig
    round_cost_grows = False
    per_run_hyperparameters = ("alpha",)

    def __init__(self, config: HAREConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        if env.pool is None:
            raise ValueError("HARE needs an environment with an item pool")
        self.link = reward_link(env)
        self.n_users, self.user_dim = env.n_users, env.user_dim
        self.needs_warm_start = config.projections == "learned" or config.pool == "log_prototypes"
        self.fit_report: FitReport | None = None
        items, clusters, projections = initial_pool(config, env)
        # The pool a learned fit needs (plain attribute, not state: the fit runs on the CPU).
        self._pool_items = (
            items.detach().cpu() if config.projections == "learned" and config.pool == "environment" else None
        )
        self._build(projections, items, clusters)
        self.user_mode = config.user_state if env.n_users >= 1 and env.user_dim > 0 else "off"
        if self.user_mode == "oracle" and not hasattr(env, "user_states"):
            raise ValueError("HAREConfig.user_state='oracle' needs an environment exposing true user states")
        self.env_user_states = getattr(env, "user_states", None)
        if self.user_mode == "posterior":
            self.user_posterior = UserPosterior(
                env.n_runs, env.n_users, env.user_dim, config.user_prior, config.noise_sigma
            )
        self._played: Observation | None = None
        self.alpha_schedule = build_alpha_schedule(config, self, env.n_runs, self.n_heads, self.run_keys.device)
        self.register_buffer("cluster_pulls", torch.zeros(env.n_runs, self.n_clusters, dtype=torch.float64))
        self.register_buffer("cluster_reward_sum", torch.zeros(env.n_runs, self.n_clusters, dtype=torch.float64))

    @classmethod
    def memory_bytes(cls, config: HAREConfig, arms: int, dim: int, length: int, clusters: int) -> tuple[int, int]:
        """:meth:`Policy.memory_bytes` plus the covariances of ``G = n_heads C`` groups over ``key_dim`` (``C``:
        ``n_clusters``, or the environment's ``clusters`` at 0): full, :func:`hare.model.covariance.ridge_bytes`;
        diagonal or low-rank, :func:`hare.model.covariance_approx.covariance_bytes`."""
        grows, fixed = super().memory_bytes(config, arms, dim, length, clusters)
        groups = config.n_heads * (config.n_clusters or clusters)
        if config.covariance == "full":
            return grows, fixed + ridge_bytes(groups, config.key_dim)
        return grows, fixed + covariance_bytes(config.covariance, groups, config.key_dim, config.covariance_rank)

    def _build(self, projections: Projections, items: torch.Tensor, clusters: torch.Tensor) -> None:
        """Attention, per-run query projections and cluster map from ``projections`` over ``items`` ``(N, d_e)``."""
        config = self.config
        self.projections = projections
        self.n_clusters = int(clusters.max()) + 1
        self.n_heads = projections.n_heads
        self.key_dim = projections.key_dim
        self.attention = UncertaintyAttention(
            projections.keys(items),
            projections.values(items),
            projections.output,
            clusters,
            self.n_runs,
            config.lam,
            config.refactor_every,
            self.n_clusters,
            config.covariance,
            config.covariance_rank,
        )
        self.register_buffer(
            "query_context", projections.query_context.expand(self.n_runs, -1, -1, -1).clone()
        )  # (B, H, d_k, d_x)
        self.register_buffer(
            "query_user", projections.query_user.expand(self.n_runs, -1, -1, -1).clone()
        )  # (B, H, d_k, d_u)
        credit = synthesis_credit(config) if config.mode == "synthesize" else "dominant"
        # The pool items (N, d_e) for the nearest-item rule; each head's output directions o_{h,n} = W_O^{hT} W_V^h e_n
        # as (d_out, H N) for the gradient rule (None otherwise: no state for the rules not in use).
        self.register_buffer("credit_items", items.to(torch.float64).clone() if credit == "nearest_item" else None)
        self.register_buffer("credit_outputs", self._item_outputs() if credit == "gradient" else None)
        self._cache: tuple[Observation, AttentionOutput] | None = None

    @property
    def clusters(self) -> torch.Tensor:
        """Cluster of every item, ``(N,)`` int64 (the attention's, on its device)."""
        return self.attention.clusters

    # -- warm start ---------------------------------------------------------------------------

    def warm_start(self, logs: LoggedRounds) -> None:
        """Learn from the warm start's ``M`` logged interactions before round 1.

        With ``pool: log_prototypes`` the pool becomes the prototypes of the logs; with
        ``projections: learned`` the projections are fitted on the logs (over that pool); the
        attention is rebuilt from them. Then every logged interaction goes through :meth:`update`
        in logged order (covariances, ``b``, user posterior), as for every policy.
        """
        if self.needs_warm_start:  # no update yet: attend refuses until the pool and projections exist
            self._fit_on_logs(logs)
        super().warm_start(logs)

    def _fit_on_logs(self, logs: LoggedRounds) -> None:
        """The pool and projections of the warm start (:func:`hare.policies.hare_projections.pool_from_logs`)."""
        device = self.run_keys.device
        projections, items, clusters, self.fit_report = pool_from_logs(
            self.config,
            logs,
            self.n_arms,
            self._pool_items,
            self.clusters.cpu(),
            self.projections,
            self.n_users,
            self.user_dim,
            self.link,
        )
        self._build(projections.to(device), items.to(device), clusters.to(device))
        self.needs_warm_start = False

    # -- posterior pieces -------------------------------------------------------------------

    def user_states(self, users: torch.Tensor | None) -> torch.Tensor | None:
        """User states the queries use, ``(n_runs, d_u)``, or None for HARE-nouser."""
        if users is None or self.user_mode == "off":
            return None
        if self.user_mode == "oracle":
            return self.env_user_states(users).to(torch.float64)
        return self.user_posterior.states(users)

    def queries(self, observation: Observation) -> torch.Tensor:
        """``q_h = W_Qx^h x + W_Qu^h u``, ``(n_runs, H, d_k)``."""
        q = torch.einsum("bhkd,bd->bhk", self.query_context, observation.queries.to(torch.float64))
        u = self.user_states(observation.users)
        if u is not None:
            q = q + torch.einsum("bhku,bu->bhk", self.query_user, u)
        return q

    def exploration_weights(self, t: int) -> torch.Tensor:
        """The bonus weights ``alpha_h`` of paper eq:select at round ``t`` under the config's ``alpha_schedule``
        (:mod:`hare.policies.alpha_schedules`), broadcastable to ``(n_runs, H, C)``."""
        return self.alpha_schedule.weights(self, t)

    def learn_alpha(self, observation: Observation, out: AttentionOutput, rewards: torch.Tensor) -> None:
        """A learned ``alpha_h``'s step after round ``observation.t``'s update (paper, eq:alpha-surrogate;
        :meth:`hare.policies.alpha_schedules.AlphaSchedule.learn`)."""
        self.alpha_schedule.learn(self, observation, out, rewards)

    def trajectories(self) -> dict[str, torch.Tensor]:
        """The per-round series of a learned ``alpha_h`` (:meth:`Policy.trajectories`): ``alpha_trajectory``
        ``(n_runs, H)`` (for ``exp3`` its mean under the draw probabilities) and, for ``exp3``,
        ``alpha_grid_probabilities`` ``(n_runs, H, K)``; nothing for the other schedules."""
        return self.alpha_schedule.trajectories()

    def attend(self, observation: Observation) -> AttentionOutput:
        """The attention pass of round ``observation.t`` (memoised until the matching update)."""
        if self.needs_warm_start:
            what = "projections: learned" if self.config.projections == "learned" else "pool: log_prototypes"
            raise WarmStartRequired(
                f"HARE with {what} is built from the warm start's logs: call warm_start(logs) before the first "
                f"round (in the cold regime there are no logs: {COLD_REGIME_ADVICE})"
            )
        if self._cache is not None and self._cache[0] is observation:
            return self._cache[1]
        out = self.attention(self.queries(observation), self.exploration_weights(observation.t))
        self._cache = (observation, out)
        return out

    # -- select mode ------------------------------------------------------------------------

    def cluster_means(self, out: AttentionOutput) -> torch.Tensor:
        """The mean of the cluster index per head, ``(n_runs, H, C)``: ``<theta_{h,j}, q_h>`` (``mean: online``)
        or ``mean_{n in j} s_{h,n}`` (``mean: frozen``)."""
        if self.config.mean == "online":
            return self.attention.online_scores(out.queries)
        return self.attention.cluster_scores(out.queries)

    def cluster_index(self, out: AttentionOutput, t: int) -> torch.Tensor:
        """``mean_h(m_{h,j} + alpha_h U_{h,j})``, ``(n_runs, C)``: the cluster index of paper eq:select, whose mean
        ``m_{h,j}`` is the online estimate of eq:online-mean (or the frozen cluster score, the ablation)."""
        return upper_confidence_bound(self.cluster_means(out), out.bonuses, self.exploration_weights(t)).mean(1)

    def select(self, observation: Observation) -> torch.Tensor:
        if self.config.mode != "select":
            raise RuntimeError("HARE in synthesize mode outputs z: call synthesize(), not select()")
        out = self.attend(observation)
        self._played = observation
        chosen = self.tie_break(self.cluster_index(out, observation.t), observation.t)
        in_cluster = self.clusters[None, :] == chosen[:, None]  # (n_runs, N)
        item_attention = torch.where(in_cluster, out.weights.mean(1), torch.full_like(out.weights[:, 0], -1.0))
        return self.tie_break(item_attention, observation.t + (1 << 40))

    def update(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        out = self.attend(observation)
        chosen = self.clusters[arms]
        dominant = chosen[:, None].expand(-1, self.n_heads)  # (n_runs, H)
        weights = (
            self.attention.cluster_mass(out.weights) if self.config.covariance_update == "attention_weighted" else None
        )
        self._learn(
            observation, out, dominant, weights, self.attention.keys[:, arms].transpose(0, 1), chosen, rewards
        )  # keys (n_runs, H, d_k)
        if self._played is observation and self.alpha_schedule.learns:
            self.learn_alpha(observation, out, rewards)
        self._played = None

    # -- synthesize mode --------------------------------------------------------------------

    def synthesize(self, observation: Observation) -> torch.Tensor:
        """``z = concat_h(A_h V_h) W_O``, ``(n_runs, d_out)``."""
        return self.attend(observation).synthesis

    def update_synthesis(self, observation: Observation, synthesis: torch.Tensor, rewards: torch.Tensor) -> None:
        """Learn from rewards ``(n_runs,)`` of outputs ``z`` ``(n_runs, d_e)`` (identity values: ``z`` is in item
        space); ``Sigma`` and ``b`` by the credit rule (:meth:`credited_clusters`)."""
        out = self.attend(observation)
        mass = self.attention.cluster_mass(out.weights)  # (n_runs, H, C)
        chosen, weights = self.credited_clusters(out, mass, synthesis)
        keys = (self.projections.key[None] * synthesis.to(torch.float64)[:, None, None, :]).sum(-1)  # (n_runs, H, d_k)
        self._learn(observation, out, chosen, weights, keys, mass.mean(1).argmax(-1), rewards)

    def link_responses(self, out: AttentionOutput, rewards: torch.Tensor) -> torch.Tensor:
        """``y``, the reward on the link's scale, broadcastable to ``(n_runs, H, C)`` (paper, eq:working-response).

        Identity link: ``r``. Logistic link: the working response around the prior logit of each
        cluster, ``s0_j = mean_h <theta0_{h,j}, q_h>``: ``y_j = s0_j + (r - sigmoid(s0_j)) / max(sigmoid'(s0_j), eps)``.
        """
        if self.link != "logistic":
            return rewards[:, None, None]
        prior = self.attention.cluster_scores(out.queries).mean(1)  # (n_runs, C)
        mu = torch.sigmoid(prior)
        slope = (mu * (1.0 - mu)).clamp_min(LOGISTIC_SLOPE_FLOOR)
        return (prior + (rewards[:, None] - mu) / slope)[:, None, :]

    def _learn(
        self,
        observation: Observation,
        out: AttentionOutput,
        chosen: torch.Tensor | None,
        weights: torch.Tensor | None,
        pulled_keys: torch.Tensor,
        reward_cluster: torch.Tensor,
        rewards: torch.Tensor,
    ) -> None:
        """Covariance and response (``Sigma``, ``b``), user-posterior, LNUCB-TA statistics and online projection
        updates.

        weights ``(n_runs, H, C)``: the weight ``w_{h,j}`` of every cluster; else chosen ``(n_runs, H)``: the one
        cluster of each head (weight 1, touching that cluster only); neither: ``Sigma`` and ``b`` stay.
        pulled_keys ``W_K^h e`` of what was played, ``(n_runs, H, d_k)``; reward_cluster ``(n_runs,)`` the cluster
        credited with the reward (LNUCB-TA statistics). ``Sigma`` and ``b`` take the round's query ``q`` (before
        this round's projection step).
        """
        rewards = rewards.to(torch.float64)
        if weights is not None:
            self.attention.update(out.queries, weights, self.link_responses(out, rewards))
        elif chosen is not None:
            self.attention.update_chosen(out.queries, chosen, self.link_responses(out, rewards))
        self.cluster_pulls += F.one_hot(reward_cluster, self.n_clusters).to(torch.float64)
        self.cluster_reward_sum += F.one_hot(reward_cluster, self.n_clusters).to(torch.float64) * rewards[:, None]
        scale = 1.0 / (self.n_heads * math.sqrt(self.key_dim))
        x = observation.queries.to(torch.float64)
        # Row-wise products and sums (no GEMM over the run dimension) keep runs bit-independent.
        offset = ((self.query_context * x[:, None, None, :]).sum(-1) * pulled_keys).sum((1, 2)) * scale  # (n_runs,)
        feature = (self.query_user * pulled_keys[..., None]).sum((1, 2)) * scale  # (n_runs, d_u)
        if self.user_mode == "posterior":
            self.user_posterior.update(observation.users, feature, rewards - offset)
        if self.config.online_lr > 0:
            u = self.user_states(observation.users)
            residual = rewards - offset - (feature * u).sum(-1) if u is not None else rewards - offset
            step = self.config.online_lr * scale * residual[:, None, None, None]
            self.query_context += step * pulled_keys[..., None] * x[:, None, None, :]
            if u is not None:
                self.query_user += step * pulled_keys[..., None] * u[:, None, None, :]
        self._cache = None


@dataclass(frozen=True)
class HARESynthesizeConfig(HAREConfig):
    """:class:`HAREConfig` with ``mode='synthesize'`` as default."""

    mode: str = "synthesize"


@register_policy("hare_synthesize")
class HARESynthesize(HARE):
    """HARE in synthesize mode: outputs ``z``; see :meth:`HARE.synthesize`."""

    config_class = HARESynthesizeConfig
    per_run_hyperparameters = ()
