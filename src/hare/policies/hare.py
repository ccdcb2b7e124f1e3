"""HARE in select mode (HARE_SPEC, "One round"; seed 000 §2, seed 001 proof step 1).

Per head ``h``: query ``q_h = W_Qx^h x_t + W_Qu^h u_hat_{i_t}``, scores
``s_{h,n} = <q_h, W_K^h e_n> / sqrt(d_k)``, cluster bonus
``U_{h,j} = sqrt(q_h^T Sigma_{h,j}^{-1} q_h)`` and attention
``A_h = softmax(s_h + alpha U_{h,c(.)})``. The policy picks the cluster

    j_t = argmax_j mean_h( mean_{n in j} s_{h,n} + alpha U_{h,j} )

then the item of ``j_t`` with the largest head-averaged attention, and updates
``Sigma_{h,j_t} += q_h q_h^T`` in every head. The user state is a Bayesian linear
regression of the reward on the feature through which the user enters the score,
``phi_n = mean_h W_Qu^{h T} W_K^h e_n / sqrt(d_k)``, with offset
``mean_h <W_Qx^h x, W_K^h e_n> / sqrt(d_k)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from hare.envs.base import BanditEnvironment, Observation
from hare.model.covariance import RidgeState
from hare.policies.base import Policy, PolicyConfig, register_policy, upper_confidence_bound
from hare.random import CounterRNG


@dataclass(frozen=True)
class HAREConfig(PolicyConfig):
    """HARE hyperparameters.

    alpha: bonus weight on the attention logits (0 gives attention-only);
    n_heads, key_dim: attention shape (oracle projections fix ``n_heads=1`` and the
    environment's key dimension); lam: ridge of the cluster covariances;
    projections: ``random`` or ``oracle``; user_state: estimate the user state
    (False drops the ``W_Qu`` term, "HARE-nouser"); user_prior: prior variance of
    the user state; noise_sigma: reward noise assumed by the user posterior.
    """

    alpha: float = 1.0
    n_heads: int = 1
    key_dim: int = 8
    lam: float = 1.0
    projections: str = "oracle"
    user_state: bool = True
    user_prior: float = 1.0
    noise_sigma: float = 0.1
    refactor_every: int = 1000

    def __post_init__(self) -> None:
        self.require(self.alpha >= 0, "alpha", "must be >= 0")
        self.require(self.n_heads >= 1, "n_heads", "must be >= 1")
        self.require(self.key_dim >= 1, "key_dim", "must be >= 1")
        self.require(self.lam > 0, "lam", "must be > 0")
        self.require(self.projections in ("random", "oracle"), "projections", "must be 'random' or 'oracle'")
        self.require(self.user_prior > 0, "user_prior", "must be > 0")
        self.require(self.noise_sigma > 0, "noise_sigma", "must be > 0")

    def check_environment(self, kind: str) -> None:
        if self.projections == "oracle" and kind != "synthetic":
            raise ValueError(f"HAREConfig.projections: 'oracle' exists only for synthetic environments, not {kind!r}")


@register_policy("hare")
class HARE(Policy):
    """HARE select mode over the environment's item pool (arms are items)."""

    config_class = HAREConfig

    def __init__(self, config: HAREConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        if env.pool is None:
            raise ValueError("HARE needs an environment with an item pool")
        pool = env.pool
        self.n_clusters = pool.n_clusters
        self.use_users = config.user_state and env.n_users > 1 and env.user_dim > 0
        w_qx, w_qu, w_k = self._projections(config, env)
        n_heads, key_dim = w_k.shape[0], w_k.shape[1]
        self.register_buffer("w_query_context", w_qx)  # (H, d_k, query_dim)
        self.register_buffer("w_query_user", w_qu)  # (H, d_k, user_dim)
        item_keys = torch.einsum("hke,ne->hnk", w_k, pool.embeddings.to(torch.float64))  # (H, N, d_k)
        self.register_buffer("item_keys", item_keys)
        membership = F.one_hot(pool.clusters, self.n_clusters).to(torch.float64)  # (N, C)
        self.register_buffer("cluster_mean", membership / membership.sum(0, keepdim=True))
        self.register_buffer("clusters", pool.clusters.clone())
        self.scale = 1.0 / math.sqrt(key_dim)
        self.covariance = RidgeState(env.n_runs, (n_heads, self.n_clusters), key_dim, config.lam, config.refactor_every)
        if self.use_users:
            user_feature = torch.einsum("hku,hnk->nu", w_qu, item_keys) * self.scale / n_heads  # (N, user_dim)
            self.register_buffer("user_feature", user_feature)
            ridge = config.noise_sigma**2 / config.user_prior
            self.user_posterior = RidgeState(env.n_runs, (env.n_users,), env.user_dim, ridge, config.refactor_every)

    @staticmethod
    def _projections(config: HAREConfig, env: BanditEnvironment) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        if config.projections == "oracle":
            oracle = getattr(env, "oracle", None)
            if oracle is None:
                raise ValueError("HAREConfig.projections='oracle' needs an environment with oracle projections (synthetic only)")
            return tuple(w.to(torch.float64)[None] for w in (oracle.query_context, oracle.query_user, oracle.key))
        rng = CounterRNG(torch.tensor([7], dtype=torch.int64))
        h, k = config.n_heads, config.key_dim
        item_dim = env.pool.embeddings.shape[1]
        user_dim = max(env.user_dim, 1)
        return (
            rng.normal("w-qx", 0, (h, k, env.query_dim))[0] / math.sqrt(env.query_dim),
            rng.normal("w-qu", 0, (h, k, user_dim))[0] / math.sqrt(user_dim),
            rng.normal("w-k", 0, (h, k, item_dim))[0] / math.sqrt(item_dim),
        )

    def user_states(self, users: torch.Tensor | None) -> torch.Tensor | None:
        """Posterior mean of the active users' states, ``(n_runs, user_dim)``."""
        if not self.use_users or users is None:
            return None
        runs = torch.arange(self.n_runs, device=users.device)
        return self.user_posterior.theta[runs, users]

    def queries(self, observation: Observation) -> torch.Tensor:
        """``q_h``, ``(n_runs, H, d_k)``."""
        x = observation.queries.to(torch.float64)
        q = torch.einsum("hkd,bd->bhk", self.w_query_context, x)
        u = self.user_states(observation.users)
        if u is not None:
            q = q + torch.einsum("hku,bu->bhk", self.w_query_user, u)
        return q

    def attention(self, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Scores ``(n_runs, H, N)``, cluster bonuses ``(n_runs, H, C)`` and attention ``(n_runs, H, N)``."""
        scores = torch.einsum("bhk,hnk->bhn", q, self.item_keys) * self.scale
        per_cluster = q[:, :, None, :].expand(-1, -1, self.n_clusters, -1)  # (n_runs, H, C, d_k)
        bonus = self.covariance.quadratic_form(per_cluster).sqrt()
        attention = torch.softmax(upper_confidence_bound(scores, bonus[:, :, self.clusters], self.config.alpha), dim=-1)
        return scores, bonus, attention

    def select(self, observation: Observation) -> torch.Tensor:
        q = self.queries(observation)
        scores, bonus, attention = self.attention(q)
        cluster_index = upper_confidence_bound(scores @ self.cluster_mean, bonus, self.config.alpha).mean(1)  # (n_runs, C)
        chosen = self.tie_break(cluster_index, observation.t)
        in_cluster = self.clusters[None, :] == chosen[:, None]  # (n_runs, N)
        item_attention = torch.where(in_cluster, attention.mean(1), torch.full_like(attention[:, 0], -1.0))
        return self.tie_break(item_attention, observation.t + (1 << 40))

    def update(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        q = self.queries(observation)
        chosen = self.clusters[arms]
        weight = F.one_hot(chosen, self.n_clusters).to(torch.float64)[:, None, :].expand(-1, q.shape[1], -1)
        per_cluster = q[:, :, None, :].expand(-1, -1, self.n_clusters, -1)
        self.covariance.update(per_cluster, torch.zeros_like(weight), weight)
        if self.use_users:
            x = observation.queries.to(torch.float64)
            offset = torch.einsum("hkd,bd,hnk->bn", self.w_query_context, x, self.item_keys).gather(1, arms[:, None]).squeeze(1)
            offset = offset * self.scale / self.item_keys.shape[0]
            self.user_posterior.update_selected(observation.users, self.user_feature[arms], rewards.to(torch.float64) - offset)
