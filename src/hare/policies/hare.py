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
dominant cluster (select: ``j_t``; synthesize: the cluster with the largest attention mass in head
``h``) or the attention mass of every cluster (``attention_weighted``). The user posterior
regresses the reward on the feature that carries the user in the reward model
``r ~ mean_h <q_h, k_h(e)> / sqrt(d_k)``:

    phi(e) = mean_h W_Qu^{hT} W_K^h e / sqrt(d_k),   offset(x, e) = mean_h <W_Qx^h x, W_K^h e> / sqrt(d_k),

with ``e`` the pulled item (select) or ``z`` (synthesize), target ``r - offset``. With
``online_lr > 0`` the query projections (per run) take one SGD step on
``(r - offset - phi^T u)^2 / 2`` after each round; keys stay fixed so item keys (and ``theta0``)
are computed once. The online mean combines with it: ``q`` changes from round to round, and
``Sigma`` and ``b`` accumulate the ``q`` of the round in which each reward was observed (a ridge
fit on the queries as they were played; the projection step comes after the round's update).

Information (paper: the regimes): the constructor never reads the environment's logs.
``projections: learned`` means fitted on the logs HARE is warm-started with: the constructor
starts from the random projections of ``projection_seed``, and :meth:`HARE.warm_start` fits them
on the logs (memoised per fit inputs and settings), rebuilds the attention, and then feeds every
logged interaction through :meth:`HARE.update` like every other policy. ``pool: log_prototypes``
(classification, whose pool is one uninformative one-hot item per class) replaces the pool by
class prototypes of the logs in the warm start (:func:`log_prototypes`). Both need the warm
regime; ``check_regime('cold')`` rejects them, and selecting before the warm start is an error.

Alpha schedules: ``fixed`` (``alpha``), ``inverse_sqrt`` (``alpha / sqrt(t)``, ``t`` the 1-based
round), ``per_head`` (``alphas[h]``), ``lnucb_ta`` (LNUCB-TA (Khosravi et al., 2025), Algorithm 3, with clusters as
arms:
``alpha_j = alpha / (N_j + 1) * (kappa g + (1 - kappa) n_j)``, ``N_j`` pulls of cluster ``j``,
``n_j`` its mean reward (0 before its first pull), ``g`` the mean reward so far; clamped at 0,
since a bonus weight is non-negative), and two that learn ``alpha_h`` online from ``alpha`` with no tuning run
(paper, sec:learned-alpha; :mod:`hare.policies.alpha_learning`): ``meta_gradient`` (after each online round's update,
a step on ``log alpha_h`` of the surrogate of paper eq:alpha-surrogate, normalised by the running RMS of its
gradient) and ``exp3`` (per head, EXP3 over ``alpha_grid`` drawn each round, stream ``"alpha_grid"``, counter ``t``).
Both learn from the online rounds only: an update not preceded by a ``select`` of the same observation (a logged
interaction of the warm start) leaves them as they are. :meth:`HARE.trajectories` reports ``alpha_h`` (for
``exp3`` its mean under the draw probabilities, and the probabilities) for the run files' per-round series.

Length: one module because the policy's state (``Sigma``, ``b``, ``theta0``, the user posterior, the
projections) and its select, synthesize and update equations above are one algorithm, :class:`HARESynthesize`
is a mode of it, and RAG-cosine is the same attention's projections with the user term and the bonus dropped,
built, fitted on the logs and checked against the regime by the same :func:`build_projections`,
:func:`learned_projections` and ``check_projections_*``, so that the baseline cannot drift from HARE's
projections.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, ClassVar

import torch
import torch.nn.functional as F

from hare.envs.base import BanditEnvironment, LoggedRounds, Observation, tensor_digest
from hare.model.attention import AttentionOutput, UncertaintyAttention
from hare.model.clustering import kmeans
from hare.model.covariance_approx import COVARIANCE_KINDS
from hare.model.projections import FitReport, Projections, fit_projections, oracle_projections, random_projections
from hare.model.user_state import UserPosterior
from hare.policies.alpha_learning import (
    exp3_draw,
    exp3_probabilities,
    exp3_update,
    meta_gradient_step,
    surrogate_log_alpha_gradient,
    unit_rewards,
)
from hare.policies.base import Policy, PolicyConfig, register_policy, temporal_attention_rate, upper_confidence_bound
from hare.typed import at_least, each, nonnegative, one_of, positive, unit_interval

ALPHA_SCHEDULES = ("fixed", "inverse_sqrt", "per_head", "lnucb_ta", "meta_gradient", "exp3")
LEARNED_ALPHA_SCHEDULES = ("meta_gradient", "exp3")
PROJECTION_KINDS = ("random", "learned", "oracle")
USER_STATES = ("posterior", "oracle", "off")
COVARIANCE_UPDATES = ("dominant", "attention_weighted")
MODES = ("select", "synthesize")
MEANS = ("frozen", "online")
POOLS = ("environment", "log_prototypes")

LOGISTIC_SLOPE_FLOOR = 0.05
"""``eps`` of the logistic working response ``y = s0 + (r - sigmoid(s0)) / max(sigmoid'(s0), eps)``:
``sigmoid' >= eps`` for ``|s0| <= 2.9``, and the correction never exceeds ``1/eps = 20``."""

COLD_REGIME_ADVICE = "use projections: random with online learning (online_lr > 0, mean: online) in the cold regime"


def check_projections_environment(config: PolicyConfig, kind: str) -> None:
    """Oracle projections ``W*`` exist only where the environment has them (HARE-Sim)."""
    if config.projections == "oracle" and kind != "synthetic":
        raise ValueError(
            f"{type(config).__name__}.projections: 'oracle' exists only for synthetic environments, not {kind!r}"
        )


def check_projections_regime(config: PolicyConfig, regime: str, advice: str) -> None:
    """Learned projections are fitted on the warm start's logs, which the cold regime withholds."""
    if regime == "cold" and config.projections == "learned":
        raise ValueError(
            f"{type(config).__name__}.projections: 'learned' projections are fitted on the warm start's logs, which "
            f"the cold regime withholds; {advice}"
        )


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
        if self.alpha_schedule == "exp3":
            self.require(
                self.alpha_grid is not None and len(self.alpha_grid) >= 2,
                "alpha_grid",
                "exp3 needs a grid of at least two bonus weights",
            )
        else:
            self.require(self.alpha_grid is None, "alpha_grid", "only used by alpha_schedule='exp3'")
        self.require(
            self.alpha_schedule != "meta_gradient" or self.alpha > 0,
            "alpha",
            "meta_gradient steps on log alpha, which needs alpha > 0",
        )
        if self.alpha_schedule == "per_head":
            self.require(
                self.alphas is not None and len(self.alphas) == self.n_heads,
                "alphas",
                "per_head needs one alpha per head",
            )
        else:
            self.require(self.alphas is None, "alphas", "only used by alpha_schedule='per_head'")
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
        self.require(
            self.user_state != "oracle" or self.projections == "oracle",
            "user_state",
            "'oracle' needs projections='oracle' (true u* live in the coordinates of W*)",
        )

    def check_environment(self, kind: str) -> None:
        check_projections_environment(self, kind)

    def check_regime(self, regime: str) -> None:
        check_projections_regime(self, regime, COLD_REGIME_ADVICE)
        if regime == "cold" and self.pool == "log_prototypes":
            raise ValueError(
                "HAREConfig.pool: 'log_prototypes' is built from the warm start's logs, which the cold regime "
                f"withholds; use pool: environment and {COLD_REGIME_ADVICE}"
            )


# --------------------------------------------------------------------------
# Projections and pools from the warm start's logs
# --------------------------------------------------------------------------

_FIT_CACHE: dict[tuple, tuple[Projections, FitReport]] = {}


def logged_interactions(logs: LoggedRounds):
    """The warm start's logs as the one logged set (leading dim 1, on the CPU) that :func:`fit_projections` expects:
    queries, users (zeros when the logs carry none), items = the logged arms, rewards."""
    from hare.envs.logged import LoggedInteractions

    if logs.queries is None:
        raise ValueError("learned projections and log prototypes need logged queries (the environment logs none)")
    queries = logs.queries.detach().cpu().to(torch.float64)
    users = (
        torch.zeros(len(logs), dtype=torch.int64) if logs.users is None else logs.users.detach().cpu().to(torch.int64)
    )
    return LoggedInteractions(
        queries[None],
        users[None],
        logs.arms.detach().cpu().to(torch.int64)[None],
        logs.rewards.detach().cpu().to(torch.float64)[None],
    )


def learned_projections(
    logs: LoggedRounds,
    items: torch.Tensor,
    n_users: int,
    user_dim: int,
    n_heads: int,
    key_dim: int,
    steps: int,
    lr: float,
    seed: int,
    link: str = "identity",
) -> tuple[Projections, FitReport]:
    """Projections fitted on the logged interactions ``logs`` over the pool ``items`` ``(N, d_e)``
    (see :mod:`hare.model.projections`), on the CPU, float64.

    Fits are memoised per (digest of the fit's inputs: logged queries, users, arms, rewards and the
    pool; the settings), so every policy and every run warm-started with the same logs shares one fit.
    """
    logged = logged_interactions(logs)
    items = items.detach().cpu().to(torch.float64)
    cache_key = (
        tensor_digest(logged.queries, logged.users, logged.items, logged.rewards, items),
        n_users,
        user_dim,
        n_heads,
        key_dim,
        steps,
        lr,
        seed,
        link,
    )
    if cache_key not in _FIT_CACHE:
        # The offline fit runs on the CPU whatever the device: it is small, and float64 fits are then
        # device-independent.
        _FIT_CACHE[cache_key] = fit_projections(
            logged, items, n_users, user_dim, n_heads, key_dim, steps=steps, lr=lr, seed=seed, link=link
        )
    return _FIT_CACHE[cache_key]


def log_prototypes(logs: LoggedRounds, n_items: int) -> torch.Tensor:
    """Class prototypes of the logs, ``(n_items, query_dim)`` float64, rows unit-norm.

    Item ``a`` is the L2-normalised mean of the logged queries whose logged arm was ``a`` and whose
    reward was > 0 (classification: the class mean of the rows logged with their own label). An item
    with no such row falls back to the normalised mean of all logged queries (it then carries no
    class information, and the online rounds learn about it through the covariance and the mean).
    """
    if logs.queries is None:
        raise ValueError("pool='log_prototypes' needs logged queries (the environment logs none)")
    x = logs.queries.to(torch.float64)
    positive = (logs.rewards > 0).to(torch.float64)
    membership = F.one_hot(logs.arms, n_items).to(torch.float64) * positive[:, None]  # (M, N)
    sums = membership.T @ x  # (N, d_x)
    counts = membership.sum(0)  # (N,)
    fallback = x.mean(0, keepdim=True).expand_as(sums)
    prototypes = torch.where(counts[:, None] > 0, sums / counts.clamp_min(1.0)[:, None], fallback)
    return F.normalize(prototypes, dim=-1)


def build_projections(config, env: BanditEnvironment, item_dim: int | None = None) -> Projections:
    """The projections a config starts from, on the pool's device: ``oracle``, or ``random`` of
    ``projection_seed`` for ``random`` and for ``learned`` (fitted later, in the warm start; the
    constructor reads no log). item_dim: the item dimension (default: the pool's)."""
    device = env.pool.embeddings.device
    if config.projections == "oracle":
        return oracle_projections(env, config.n_heads).to(device)
    item_dim = env.pool.embeddings.shape[1] if item_dim is None else item_dim
    return random_projections(
        config.n_heads,
        config.key_dim,
        env.query_dim,
        env.user_dim,
        item_dim,
        seed=config.projection_seed,
        init_std=getattr(config, "random_init_std", None),
    ).to(device)


def pool_clusters(env: BanditEnvironment, n_clusters: int) -> torch.Tensor:
    """Cluster of every item ``(N,)``: the environment's (``n_clusters = 0``) or k-means with ``n_clusters``."""
    if n_clusters == 0:
        return env.pool.clusters.clone()
    if n_clusters > env.n_arms:
        raise ValueError(f"HAREConfig.n_clusters: {n_clusters} exceeds the pool size {env.n_arms}")
    return kmeans(env.pool.embeddings.to(torch.float64), n_clusters)[0]


def _link(env: BanditEnvironment) -> str:
    return getattr(getattr(env, "config", None), "link", "identity")


class WarmStartRequired(RuntimeError):
    """A policy whose projections or pool come from the warm start's logs was asked to act before its warm start."""


@register_policy("hare")
class HARE(Policy):
    """HARE over the environment's item pool (arms are items); select or synthesize mode."""

    config_class = HAREConfig
    per_run_hyperparameters = ("alpha",)

    def __init__(self, config: HAREConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        if env.pool is None:
            raise ValueError("HARE needs an environment with an item pool")
        self.link = _link(env)
        self.n_users, self.user_dim = env.n_users, env.user_dim
        self.needs_warm_start = config.projections == "learned" or config.pool == "log_prototypes"
        self.fit_report: FitReport | None = None
        if config.pool == "log_prototypes":
            # Placeholders of the final shapes (one cluster per item, item_dim = query_dim); the warm start builds the
            # pool.
            items = torch.zeros(env.n_arms, env.query_dim, dtype=torch.float64, device=env.pool.embeddings.device)
            clusters = torch.arange(env.n_arms, device=env.pool.embeddings.device)
            projections = build_projections(config, env, item_dim=env.query_dim)
        else:
            items = env.pool.embeddings.to(torch.float64)
            clusters = pool_clusters(env, config.n_clusters)
            projections = build_projections(config, env)
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
        if config.alpha_schedule == "per_head":
            self.register_buffer("head_alpha", torch.tensor(config.alphas, dtype=torch.float64))
        self._init_learned_alpha(env.n_runs)
        self.register_buffer("cluster_pulls", torch.zeros(env.n_runs, self.n_clusters, dtype=torch.float64))
        self.register_buffer("cluster_reward_sum", torch.zeros(env.n_runs, self.n_clusters, dtype=torch.float64))

    def _init_learned_alpha(self, n_runs: int) -> None:
        """State of a learned ``alpha_h`` (module docstring): ``learned_alpha`` ``(n_runs, H)`` from ``alpha`` and the
        running mean square of its gradient (``meta_gradient``), or EXP3's log-weights ``(n_runs, H, K)`` over
        ``alpha_grid`` and the observed reward range per run (``exp3``)."""
        config, device = self.config, self.run_keys.device
        self._played: Observation | None = None
        if config.alpha_schedule == "meta_gradient":
            like = torch.zeros(n_runs, 1, dtype=torch.float64, device=device)
            start = torch.as_tensor(self.hyperparameter("alpha", like), dtype=torch.float64, device=device)
            self.register_buffer("learned_alpha", start.expand(n_runs, self.n_heads).clone())
            self.register_buffer("alpha_gradient_square", torch.zeros(n_runs, self.n_heads, dtype=torch.float64))
            self.register_buffer("alpha_steps", torch.zeros((), dtype=torch.float64))
        elif config.alpha_schedule == "exp3":
            grid = torch.tensor(config.alpha_grid, dtype=torch.float64, device=device)
            self.register_buffer("alpha_grid_values", grid)
            self.register_buffer(
                "exp3_log_weights", torch.zeros(n_runs, self.n_heads, grid.numel(), dtype=torch.float64)
            )
            self.register_buffer("reward_low", torch.full((n_runs,), math.inf, dtype=torch.float64))
            self.register_buffer("reward_high", torch.full((n_runs,), -math.inf, dtype=torch.float64))

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
        if (
            self.needs_warm_start
        ):  # no update can have happened yet: attend refuses until the pool and projections exist
            self._fit_on_logs(logs)
        super().warm_start(logs)

    def _fit_on_logs(self, logs: LoggedRounds) -> None:
        config = self.config
        device = self.run_keys.device
        if config.pool == "log_prototypes":
            items = log_prototypes(logs, self.n_arms)
            clusters = torch.arange(self.n_arms)
        else:
            items = self._pool_items
            clusters = self.clusters.cpu()
        projections = self.projections
        if config.projections == "learned":
            projections, self.fit_report = learned_projections(
                logs,
                items,
                self.n_users,
                self.user_dim,
                config.n_heads,
                config.key_dim,
                config.fit_steps,
                config.fit_lr,
                config.projection_seed,
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
        """The bonus weights ``alpha_h`` of paper eq:select at round ``t`` under the config's ``alpha_schedule``,
        broadcastable to
        ``(n_runs, H, C)``."""
        c = self.config
        pulls = self.cluster_pulls  # (n_runs, C)
        if c.alpha_schedule in ("fixed", "inverse_sqrt"):
            alpha = torch.as_tensor(
                self.hyperparameter("alpha", pulls[:, None, :]), dtype=torch.float64, device=pulls.device
            )  # () or (n_runs, 1, 1)
            return alpha if c.alpha_schedule == "fixed" else alpha / math.sqrt(t + 1)
        if c.alpha_schedule == "per_head":
            return self.head_alpha[:, None]  # (H, 1)
        if c.alpha_schedule == "meta_gradient":
            return self.learned_alpha[:, :, None]  # (n_runs, H, 1)
        if c.alpha_schedule == "exp3":
            _, drawn = self._exp3_draw(t)
            return self.alpha_grid_values[drawn][:, :, None]  # (n_runs, H, 1)
        local = self.cluster_reward_sum / pulls.clamp_min(1.0)  # (n_runs, C)
        overall = self.cluster_reward_sum.sum(1, keepdim=True) / pulls.sum(1, keepdim=True).clamp_min(
            1.0
        )  # (n_runs, 1)
        factor = temporal_attention_rate(self.hyperparameter("alpha", pulls), pulls, overall, local, c.kappa).clamp_min(
            0.0
        )
        return factor[:, None, :]  # (n_runs, 1, C)

    def _exp3_draw(self, t: int) -> tuple[torch.Tensor, torch.Tensor]:
        """EXP3's probabilities ``(n_runs, H, K)`` and the grid point each head draws at round ``t`` ``(n_runs, H)``
        (the same draw every time it is asked within a round: the weights change only in the update)."""
        probabilities = exp3_probabilities(self.exp3_log_weights, self.config.exp3_gamma)
        return probabilities, exp3_draw(probabilities, self.rng.uniform("alpha_grid", t, (self.n_heads,)))

    def learn_alpha(self, observation: Observation, out: AttentionOutput, rewards: torch.Tensor) -> None:
        """The learned ``alpha_h``'s step after round ``observation.t``'s update (module docstring; paper,
        eq:alpha-surrogate). ``meta_gradient``: ``g_h = dJ/dlog alpha_h`` with the critic ``m`` after the update, then
        ``alpha_h <- alpha_h exp(eta g_h / sqrt(mean_s g_{h,s}^2))``; ``exp3``: the drawn grid point's weight, with the
        reward rescaled to [0, 1] by the run's observed range."""
        schedule = self.config.alpha_schedule
        if schedule == "meta_gradient":
            gradient = surrogate_log_alpha_gradient(
                out.weights, out.bonuses, self.clusters, self.learned_alpha, self.cluster_means(out)
            )  # (n_runs, H)
            self.alpha_steps += 1.0
            self.alpha_gradient_square += (gradient.square() - self.alpha_gradient_square) / self.alpha_steps
            rms = self.alpha_gradient_square.sqrt()
            normalised = torch.where(rms > 0, gradient / torch.where(rms > 0, rms, 1.0), torch.zeros_like(gradient))
            self.learned_alpha = meta_gradient_step(self.learned_alpha, normalised, self.config.alpha_lr)
        elif schedule == "exp3":
            rewards = rewards.to(torch.float64)
            self.reward_low = torch.minimum(self.reward_low, rewards)
            self.reward_high = torch.maximum(self.reward_high, rewards)
            probabilities, drawn = self._exp3_draw(observation.t)
            self.exp3_log_weights = exp3_update(
                self.exp3_log_weights,
                probabilities,
                drawn,
                unit_rewards(rewards, self.reward_low, self.reward_high),
                self.config.exp3_gamma,
            )

    def trajectories(self) -> dict[str, torch.Tensor]:
        """The per-round series of a learned ``alpha_h`` (:meth:`Policy.trajectories`): ``alpha_trajectory``
        ``(n_runs, H)`` (for ``exp3`` its mean under the draw probabilities) and, for ``exp3``,
        ``alpha_grid_probabilities`` ``(n_runs, H, K)``; nothing for the other schedules."""
        schedule = self.config.alpha_schedule
        if schedule == "meta_gradient":
            return {"alpha_trajectory": self.learned_alpha.clone()}
        if schedule == "exp3":
            probabilities = exp3_probabilities(self.exp3_log_weights, self.config.exp3_gamma)
            return {
                "alpha_trajectory": (probabilities * self.alpha_grid_values).sum(-1),
                "alpha_grid_probabilities": probabilities,
            }
        return {}

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
        self._learn(
            observation, out, dominant, self.attention.keys[:, arms].transpose(0, 1), chosen, rewards
        )  # keys (n_runs, H, d_k)
        if self._played is observation and self.config.alpha_schedule in LEARNED_ALPHA_SCHEDULES:
            self.learn_alpha(observation, out, rewards)
        self._played = None

    # -- synthesize mode --------------------------------------------------------------------

    def synthesize(self, observation: Observation) -> torch.Tensor:
        """``z = concat_h(A_h V_h) W_O``, ``(n_runs, d_out)``."""
        return self.attend(observation).synthesis

    def update_synthesis(self, observation: Observation, synthesis: torch.Tensor, rewards: torch.Tensor) -> None:
        """Learn from rewards ``(n_runs,)`` of outputs ``z`` ``(n_runs, d_e)`` (identity values: ``z`` is in item
        space)."""
        out = self.attend(observation)
        mass = self.attention.cluster_mass(out.weights)  # (n_runs, H, C)
        dominant = mass.argmax(-1)  # (n_runs, H)
        keys = (self.projections.key[None] * synthesis.to(torch.float64)[:, None, None, :]).sum(-1)  # (n_runs, H, d_k)
        self._learn(observation, out, dominant, keys, mass.mean(1).argmax(-1), rewards)

    # -- shared learning step ---------------------------------------------------------------

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
        dominant: torch.Tensor,
        pulled_keys: torch.Tensor,
        reward_cluster: torch.Tensor,
        rewards: torch.Tensor,
    ) -> None:
        """Covariance and response (``Sigma``, ``b``), user-posterior, LNUCB-TA statistics and online projection
        updates.

        dominant ``(n_runs, H)``: the cluster index of each head; pulled_keys ``W_K^h e`` of what was played,
        ``(n_runs, H, d_k)``; reward_cluster ``(n_runs,)`` the cluster credited with the reward (LNUCB-TA statistics).
        ``Sigma`` and ``b`` take the round's query ``q`` (before this round's projection step).
        """
        rewards = rewards.to(torch.float64)
        if self.config.covariance_update == "attention_weighted":
            self.attention.update(
                out.queries, self.attention.cluster_mass(out.weights), self.link_responses(out, rewards)
            )
        else:
            self.attention.update_chosen(out.queries, dominant, self.link_responses(out, rewards))
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


@dataclass(frozen=True)
class RAGCosineConfig(PolicyConfig):
    """RAG-cosine hyperparameters: the projections that map the query into item space
    (``random | learned | oracle``, as for HARE; ``learned`` is fitted in the warm start, warm
    regime only) and their settings."""

    projections: Annotated[str, one_of(PROJECTION_KINDS)] = "oracle"
    n_heads: Annotated[int, at_least(1)] = 1
    key_dim: Annotated[int, at_least(1)] = 8
    projection_seed: int = 0
    fit_steps: Annotated[int, at_least(1)] = 600
    fit_lr: Annotated[float, positive] = 0.03

    def check_environment(self, kind: str) -> None:
        check_projections_environment(self, kind)

    def check_regime(self, regime: str) -> None:
        check_projections_regime(self, regime, "use projections: random in the cold regime")


@register_policy("rag_cosine")
class RAGCosine(Policy):
    """Retrieval baseline: the top-1 pool item by cosine to the query mapped into item space.

    The query is mapped by the attention's own projections with the user term dropped,
    ``p(x) = mean_h W_K^{hT} W_Qx^h x`` (``d_e``), so ``<p(x), e_n>`` is the user-free attention
    score up to ``sqrt(d_k)``; the item is ``argmax_n cos(p(x), e_n)``. No user state, no
    exploration, nothing learned online. Learned projections are fitted in :meth:`warm_start`.
    """

    config_class = RAGCosineConfig

    def __init__(self, config: RAGCosineConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        if env.pool is None:
            raise ValueError("rag_cosine needs an environment with an item pool")
        self.needs_warm_start = config.projections == "learned"
        self.link = _link(env)
        self.n_users, self.user_dim = env.n_users, env.user_dim
        self._pool_items = env.pool.embeddings.detach().cpu().to(torch.float64) if self.needs_warm_start else None
        projections = build_projections(config, env)
        self.register_buffer("query_to_item", self._mapping(projections))
        self.register_buffer("items", F.normalize(env.pool.embeddings.to(torch.float64), dim=-1))

    @staticmethod
    def _mapping(projections: Projections) -> torch.Tensor:
        return torch.einsum("hke,hkd->ed", projections.key, projections.query_context) / projections.n_heads

    def warm_start(self, logs: LoggedRounds) -> None:
        """Fit learned projections on the logs (as HARE does), then the logged rounds (nothing to learn from them)."""
        if self.needs_warm_start:
            c = self.config
            projections, _ = learned_projections(
                logs,
                self._pool_items,
                self.n_users,
                self.user_dim,
                c.n_heads,
                c.key_dim,
                c.fit_steps,
                c.fit_lr,
                c.projection_seed,
                self.link,
            )
            self.query_to_item = self._mapping(projections).to(self.run_keys.device)
            self.needs_warm_start = False
        super().warm_start(logs)

    def select(self, observation: Observation) -> torch.Tensor:
        if self.needs_warm_start:
            raise WarmStartRequired(
                "rag_cosine with projections: learned is fitted on the warm start's logs: call warm_start(logs) "
                "before the first round (in the cold regime use projections: random)"
            )
        projected = F.normalize(observation.queries.to(torch.float64) @ self.query_to_item.T, dim=-1)  # (n_runs, d_e)
        return self.tie_break(projected @ self.items.T, observation.t)

    def update(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        """Nothing to learn."""
