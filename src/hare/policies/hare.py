"""HARE (HARE_SPEC, "One round"; seed 000 §2; seed 001 proof step 1) and the RAG-cosine baseline.

Per round, for the active user ``i_t`` and query ``x_t``, in every head ``h``:

    q_h     = W_Qx^h x_t + W_Qu^h u_{i_t}                  (u: posterior mean, true u*, or dropped)
    s_{h,n} = <q_h, W_K^h e_n> / sqrt(d_k),   U_{h,j} = sqrt(q_h^T Sigma_{h,j}^{-1} q_h)
    A_h     = softmax(s_h + alpha_{h} U_{h,c(.)}),         z = concat_h(A_h V_h) W_O

* **select** (config ``hare``): cluster ``j_t = argmax_j mean_h(mean_{n in j} s_{h,n} + alpha_h U_{h,j})``,
  then the item of ``j_t`` with the largest head-mean attention; its reward is observed.
* **synthesize** (config ``hare_synthesize``): the output is ``z``; the environment rewards
  ``z`` itself (:meth:`SyntheticBandit.synthesis_outcome`).

Update: ``Sigma_{h,j} += w_{h,j} q_h q_h^T`` with ``w`` one-hot on the dominant cluster (select:
``j_t``; synthesize: the cluster with the largest attention mass in head ``h``) or the attention
mass of every cluster (``attention_weighted``). The user posterior regresses the reward on the
feature that carries the user in the reward model ``r ~ mean_h <q_h, k_h(e)> / sqrt(d_k)``:

    phi(e) = mean_h W_Qu^{hT} W_K^h e / sqrt(d_k),   offset(x, e) = mean_h <W_Qx^h x, W_K^h e> / sqrt(d_k),

with ``e`` the pulled item (select) or ``z`` (synthesize), target ``r - offset``. With
``online_lr > 0`` the query projections (per run) take one SGD step on
``(r - offset - phi^T u)^2 / 2`` after each round; keys stay fixed so item keys are computed once.

Alpha schedules: ``fixed`` (``alpha``), ``inverse_sqrt`` (``alpha / sqrt(t)``, ``t`` the 1-based
round), ``per_head`` (``alphas[h]``), ``lnucb_ta`` (seed 002, Algorithm 3, with clusters as arms:
``alpha_j = alpha / (N_j + 1) * (kappa g + (1 - kappa) n_j)``, ``N_j`` pulls of cluster ``j``,
``n_j`` its mean reward (0 before its first pull), ``g`` the mean reward so far; clamped at 0,
since a bonus weight is non-negative).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from hare.envs.base import BanditEnvironment, Observation
from hare.model.attention import AttentionOutput, UncertaintyAttention
from hare.model.clustering import kmeans
from hare.model.projections import FitReport, Projections, fit_projections, oracle_projections, random_projections
from hare.model.user_state import UserPosterior
from hare.policies.base import Policy, PolicyConfig, register_policy
from hare.random import run_keys

ALPHA_SCHEDULES = ("fixed", "inverse_sqrt", "per_head", "lnucb_ta")
PROJECTION_KINDS = ("random", "learned", "oracle")
USER_STATES = ("posterior", "oracle", "off")
COVARIANCE_UPDATES = ("dominant", "attention_weighted")
MODES = ("select", "synthesize")


@dataclass(frozen=True)
class HAREConfig(PolicyConfig):
    """HARE hyperparameters.

    mode: ``select`` or ``synthesize``.
    alpha: bonus weight ``alpha_0`` (0 gives attention-only); alpha_schedule: one of
    ``fixed | inverse_sqrt | per_head | lnucb_ta``; alphas: per-head weights (``per_head``
    only, one per head); kappa: LNUCB-TA's global/local mix.
    n_heads, key_dim: attention shape for random and learned projections (oracle projections
    take ``d_k`` from the environment and copy ``W*`` into every head).
    n_clusters: 0 keeps the environment's clusters; ``C >= 1`` re-clusters the pool by k-means
    (``C = 1`` one cluster, ``C = N`` one covariance per item).
    lam: ridge of the cluster covariances; refactor_every: rounds between Cholesky re-inversions.
    covariance_update: ``dominant`` or ``attention_weighted``.
    projections: ``random | learned | oracle``; projection_seed: seed of random init and fit;
    random_init_std: std of random projections (None: ``1 / sqrt(fan_in)``; 0.02 is the transformer init);
    n_logged, fit_steps, fit_lr: offline fit of learned projections on the environment's
    uniform-logging data; online_lr: SGD step size of online query-projection updates (0: frozen).
    user_state: ``posterior`` (Bayesian estimate), ``oracle`` (true ``u*``, needs oracle
    projections), ``off`` ("HARE-nouser"); user_prior: prior variance; noise_sigma: reward
    noise assumed by the posterior.
    """

    mode: str = "select"
    alpha: float = 1.0
    alpha_schedule: str = "fixed"
    alphas: tuple[float, ...] | None = None
    kappa: float = 0.5
    n_heads: int = 1
    key_dim: int = 8
    n_clusters: int = 0
    lam: float = 1.0
    refactor_every: int = 1000
    covariance_update: str = "dominant"
    projections: str = "oracle"
    projection_seed: int = 0
    random_init_std: float | None = None
    n_logged: int = 2000
    fit_steps: int = 600
    fit_lr: float = 0.03
    online_lr: float = 0.0
    user_state: str = "posterior"
    user_prior: float = 1.0
    noise_sigma: float = 0.1

    def __post_init__(self) -> None:
        if isinstance(self.alphas, list):
            object.__setattr__(self, "alphas", tuple(self.alphas))
        self.require(self.mode in MODES, "mode", f"must be one of {MODES}")
        self.require(self.alpha >= 0, "alpha", "must be >= 0")
        self.require(self.alpha_schedule in ALPHA_SCHEDULES, "alpha_schedule", f"must be one of {ALPHA_SCHEDULES}")
        if self.alpha_schedule == "per_head":
            self.require(self.alphas is not None and len(self.alphas) == self.n_heads, "alphas", "per_head needs one alpha per head")
            self.require(all(a >= 0 for a in self.alphas), "alphas", "must all be >= 0")
        else:
            self.require(self.alphas is None, "alphas", "only used by alpha_schedule='per_head'")
        self.require(0 <= self.kappa <= 1, "kappa", "must be in [0, 1]")
        self.require(self.n_heads >= 1, "n_heads", "must be >= 1")
        self.require(self.key_dim >= 1, "key_dim", "must be >= 1")
        self.require(self.n_clusters >= 0, "n_clusters", "must be >= 0 (0: the environment's clusters)")
        self.require(self.lam > 0, "lam", "must be > 0")
        self.require(self.refactor_every >= 1, "refactor_every", "must be >= 1")
        self.require(self.covariance_update in COVARIANCE_UPDATES, "covariance_update", f"must be one of {COVARIANCE_UPDATES}")
        self.require(self.projections in PROJECTION_KINDS, "projections", f"must be one of {PROJECTION_KINDS}")
        self.require(self.random_init_std is None or self.random_init_std > 0, "random_init_std", "must be > 0 or None")
        self.require(self.n_logged >= 1, "n_logged", "must be >= 1")
        self.require(self.fit_steps >= 1, "fit_steps", "must be >= 1")
        self.require(self.fit_lr > 0, "fit_lr", "must be > 0")
        self.require(self.online_lr >= 0, "online_lr", "must be >= 0")
        self.require(self.user_state in USER_STATES, "user_state", f"must be one of {USER_STATES}")
        self.require(self.user_state != "oracle" or self.projections == "oracle", "user_state",
                     "'oracle' needs projections='oracle' (true u* live in the coordinates of W*)")
        self.require(self.user_prior > 0, "user_prior", "must be > 0")
        self.require(self.noise_sigma > 0, "noise_sigma", "must be > 0")

    def check_environment(self, kind: str) -> None:
        if self.projections == "oracle" and kind != "synthetic":
            raise ValueError(f"HAREConfig.projections: 'oracle' exists only for synthetic environments, not {kind!r}")


_FIT_CACHE: dict[tuple, tuple[Projections, FitReport]] = {}


def learned_projections(env: BanditEnvironment, n_heads: int, key_dim: int, n_logged: int, steps: int, lr: float,
                        seed: int) -> tuple[Projections, FitReport]:
    """Projections fitted on ``n_logged`` uniform-logging interactions of ``env`` (see :mod:`hare.model.projections`).

    The logged set is drawn from keys of ``(instance, seed)``, never from the run keys, so every
    run of a batch shares one fit. Fits are memoised per environment instance and settings.
    """
    sample = getattr(env, "sample_logged", None)
    if sample is None:
        raise ValueError("HAREConfig.projections='learned' needs an environment with a logged-data sampler")
    cache_key = (getattr(env, "config", id(env)), n_heads, key_dim, n_logged, steps, lr, seed)
    if cache_key not in _FIT_CACHE:
        logged = sample(n_logged, run_keys(seed, [0], "hare-logged"))
        logged = type(logged)(*(field.cpu() for field in (logged.queries, logged.users, logged.items, logged.rewards)))
        link = getattr(getattr(env, "config", None), "link", "identity")
        # The offline fit runs on the CPU whatever the device: it is small, and float64 fits are then device-independent.
        _FIT_CACHE[cache_key] = fit_projections(logged, env.pool.embeddings.cpu(), env.n_users, env.user_dim, n_heads, key_dim,
                                                steps=steps, lr=lr, seed=seed, link=link)
    return _FIT_CACHE[cache_key]


def build_projections(config, env: BanditEnvironment) -> Projections:
    """The projections a config asks for (``random``, ``learned`` or ``oracle``), on the pool's device."""
    device = env.pool.embeddings.device
    if config.projections == "oracle":
        return oracle_projections(env, config.n_heads).to(device)
    if config.projections == "learned":
        return learned_projections(env, config.n_heads, config.key_dim, config.n_logged, config.fit_steps, config.fit_lr,
                                   config.projection_seed)[0].to(device)
    return random_projections(config.n_heads, config.key_dim, env.query_dim, env.user_dim, env.pool.embeddings.shape[1],
                              seed=config.projection_seed, init_std=getattr(config, "random_init_std", None)).to(device)


def pool_clusters(env: BanditEnvironment, n_clusters: int) -> torch.Tensor:
    """Cluster of every item ``(N,)``: the environment's (``n_clusters = 0``) or k-means with ``n_clusters``."""
    if n_clusters == 0:
        return env.pool.clusters.clone()
    if n_clusters > env.n_arms:
        raise ValueError(f"HAREConfig.n_clusters: {n_clusters} exceeds the pool size {env.n_arms}")
    return kmeans(env.pool.embeddings.to(torch.float64), n_clusters)[0]


@register_policy("hare")
class HARE(Policy):
    """HARE over the environment's item pool (arms are items); select or synthesize mode."""

    config_class = HAREConfig

    def __init__(self, config: HAREConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        if env.pool is None:
            raise ValueError("HARE needs an environment with an item pool")
        self.projections = build_projections(config, env)
        items = env.pool.embeddings.to(torch.float64)
        clusters = pool_clusters(env, config.n_clusters)
        self.n_clusters = int(clusters.max()) + 1
        self.n_heads = self.projections.n_heads
        self.key_dim = self.projections.key_dim
        self.attention = UncertaintyAttention(self.projections.keys(items), self.projections.values(items), self.projections.output,
                                              clusters, env.n_runs, config.lam, config.refactor_every, self.n_clusters)
        self.clusters = self.attention.clusters
        self.register_buffer("query_context", self.projections.query_context.expand(env.n_runs, -1, -1, -1).clone())  # (B, H, d_k, d_x)
        self.register_buffer("query_user", self.projections.query_user.expand(env.n_runs, -1, -1, -1).clone())  # (B, H, d_k, d_u)
        self.user_mode = config.user_state if env.n_users >= 1 and env.user_dim > 0 else "off"
        if self.user_mode == "oracle" and not hasattr(env, "user_states"):
            raise ValueError("HAREConfig.user_state='oracle' needs an environment exposing true user states")
        self.env_user_states = getattr(env, "user_states", None)
        if self.user_mode == "posterior":
            self.user_posterior = UserPosterior(env.n_runs, env.n_users, env.user_dim, config.user_prior, config.noise_sigma)
        if config.alpha_schedule == "per_head":
            self.register_buffer("head_alpha", torch.tensor(config.alphas, dtype=torch.float64))
        self.register_buffer("cluster_pulls", torch.zeros(env.n_runs, self.n_clusters, dtype=torch.float64))
        self.register_buffer("cluster_reward_sum", torch.zeros(env.n_runs, self.n_clusters, dtype=torch.float64))
        self._cache: tuple[Observation, AttentionOutput] | None = None

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

    def alpha(self, t: int) -> torch.Tensor:
        """Bonus weight broadcastable to ``(n_runs, H, C)``."""
        c = self.config
        if c.alpha_schedule == "fixed":
            return torch.tensor(c.alpha, dtype=torch.float64)
        if c.alpha_schedule == "inverse_sqrt":
            return torch.tensor(c.alpha / math.sqrt(t + 1), dtype=torch.float64)
        if c.alpha_schedule == "per_head":
            return self.head_alpha[:, None]  # (H, 1)
        pulls = self.cluster_pulls
        local = self.cluster_reward_sum / pulls.clamp_min(1.0)  # (n_runs, C)
        overall = self.cluster_reward_sum.sum(1, keepdim=True) / pulls.sum(1, keepdim=True).clamp_min(1.0)  # (n_runs, 1)
        factor = (c.alpha / (pulls + 1.0) * (c.kappa * overall + (1 - c.kappa) * local)).clamp_min(0.0)
        return factor[:, None, :]  # (n_runs, 1, C)

    def attend(self, observation: Observation) -> AttentionOutput:
        """The attention pass of round ``observation.t`` (memoised until the matching update)."""
        if self._cache is not None and self._cache[0] is observation:
            return self._cache[1]
        out = self.attention(self.queries(observation), self.alpha(observation.t))
        self._cache = (observation, out)
        return out

    # -- select mode ------------------------------------------------------------------------

    def cluster_index(self, out: AttentionOutput, t: int) -> torch.Tensor:
        """``mean_h(mean_{n in j} s_{h,n} + alpha_h U_{h,j})``, ``(n_runs, C)`` (seed 001 proof step 1)."""
        return (self.attention.cluster_scores(out.queries) + self.alpha(t) * out.bonuses).mean(1)

    def select(self, observation: Observation) -> torch.Tensor:
        if self.config.mode != "select":
            raise RuntimeError("HARE in synthesize mode outputs z: call synthesize(), not select()")
        out = self.attend(observation)
        chosen = self.tie_break(self.cluster_index(out, observation.t), observation.t)
        in_cluster = self.clusters[None, :] == chosen[:, None]  # (n_runs, N)
        item_attention = torch.where(in_cluster, out.weights.mean(1), torch.full_like(out.weights[:, 0], -1.0))
        return self.tie_break(item_attention, observation.t + (1 << 40))

    def update(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        out = self.attend(observation)
        chosen = self.clusters[arms]
        dominant = F.one_hot(chosen, self.n_clusters).to(torch.float64)[:, None, :].expand(-1, self.n_heads, -1)
        self._learn(observation, out, dominant, self.attention.keys[:, arms].transpose(0, 1), chosen, rewards)  # keys (n_runs, H, d_k)

    # -- synthesize mode --------------------------------------------------------------------

    def synthesize(self, observation: Observation) -> torch.Tensor:
        """``z = concat_h(A_h V_h) W_O``, ``(n_runs, d_out)``."""
        return self.attend(observation).synthesis

    def update_synthesis(self, observation: Observation, synthesis: torch.Tensor, rewards: torch.Tensor) -> None:
        """Learn from rewards ``(n_runs,)`` of outputs ``z`` ``(n_runs, d_e)`` (identity values: ``z`` is in item space)."""
        out = self.attend(observation)
        mass = self.attention.cluster_mass(out.weights)  # (n_runs, H, C)
        dominant = F.one_hot(mass.argmax(-1), self.n_clusters).to(torch.float64)
        keys = (self.projections.key[None] * synthesis.to(torch.float64)[:, None, None, :]).sum(-1)  # (n_runs, H, d_k)
        self._learn(observation, out, dominant, keys, mass.mean(1).argmax(-1), rewards)

    # -- shared learning step ---------------------------------------------------------------

    def _learn(self, observation: Observation, out: AttentionOutput, dominant: torch.Tensor, pulled_keys: torch.Tensor,
               reward_cluster: torch.Tensor, rewards: torch.Tensor) -> None:
        """Covariance, user-posterior, LNUCB-TA statistics and online projection updates.

        dominant ``(n_runs, H, C)``; pulled_keys ``W_K^h e`` of what was played, ``(n_runs, H, d_k)``;
        reward_cluster ``(n_runs,)`` the cluster credited with the reward (LNUCB-TA statistics).
        """
        weights = self.attention.cluster_mass(out.weights) if self.config.covariance_update == "attention_weighted" else dominant
        self.attention.update(out.queries, weights)
        rewards = rewards.to(torch.float64)
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


@dataclass(frozen=True)
class RAGCosineConfig(PolicyConfig):
    """RAG-cosine hyperparameters: the projections that map the query into item space
    (``random | learned | oracle``, as for HARE) and their settings."""

    projections: str = "oracle"
    n_heads: int = 1
    key_dim: int = 8
    projection_seed: int = 0
    n_logged: int = 2000
    fit_steps: int = 600
    fit_lr: float = 0.03

    def __post_init__(self) -> None:
        self.require(self.projections in PROJECTION_KINDS, "projections", f"must be one of {PROJECTION_KINDS}")
        self.require(self.n_heads >= 1, "n_heads", "must be >= 1")
        self.require(self.key_dim >= 1, "key_dim", "must be >= 1")


@register_policy("rag_cosine")
class RAGCosine(Policy):
    """Retrieval baseline: the top-1 pool item by cosine to the query mapped into item space.

    The query is mapped by the attention's own projections with the user term dropped,
    ``p(x) = mean_h W_K^{hT} W_Qx^h x`` (``d_e``), so ``<p(x), e_n>`` is the user-free attention
    score up to ``sqrt(d_k)``; the item is ``argmax_n cos(p(x), e_n)``. No user state, no
    exploration, nothing learned online.
    """

    config_class = RAGCosineConfig

    def __init__(self, config: RAGCosineConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        if env.pool is None:
            raise ValueError("rag_cosine needs an environment with an item pool")
        projections = build_projections(config, env)
        self.register_buffer("query_to_item", torch.einsum("hke,hkd->ed", projections.key, projections.query_context) / projections.n_heads)
        self.register_buffer("items", F.normalize(env.pool.embeddings.to(torch.float64), dim=-1))

    def select(self, observation: Observation) -> torch.Tensor:
        projected = F.normalize(observation.queries.to(torch.float64) @ self.query_to_item.T, dim=-1)  # (n_runs, d_e)
        return self.tie_break(projected @ self.items.T, observation.t)

    def update(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        """Nothing to learn."""
