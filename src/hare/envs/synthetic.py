"""HARE-Sim: the synthetic environment with an exact oracle (HARE_SPEC, "The synthetic environment").

Items lie in ``n_clusters`` Gaussian clusters on the unit sphere; ``n_users`` users have
true states ``u*_i``; oracle projections ``W*`` define the true item score

    s*_n(x, u) = <W*_Qx x + W*_Qu u, W*_K e_n> / sqrt(d_k)

and the mean reward ``mu_t(n) = g(scale * s*_n(x_t, u*_{i_t}))`` with link ``g`` identity
or logistic; rewards add ``sigma``-Gaussian noise. The ``nonlinear`` variant adds an
item-query interaction ``gamma * (x^T B_n x)`` that no model linear in the context
can represent. The instance (pool, users, ``W*``) is fixed by ``instance_seed``;
queries, active users and noise are drawn per run from the run keys.

Arm features for context-only baselines are ``[x_t, onehot(i_t)]`` shared by all arms,
which makes the linear variant exactly realisable by disjoint-arm linear models.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from hare.envs.base import BanditEnvironment, BanditRound, ItemPool, Observation
from hare.random import CounterRNG, run_keys


@dataclass(frozen=True)
class SyntheticConfig:
    """Dimensions and noise of HARE-Sim; validated on construction."""

    n_items: int = 60
    n_clusters: int = 6
    item_dim: int = 16
    query_dim: int = 8
    user_dim: int = 4
    key_dim: int = 8
    n_users: int = 5
    cluster_spread: float = 0.25
    reward_scale: float = 1.0
    noise_sigma: float = 0.1
    link: str = "identity"
    variant: str = "linear"
    interaction: float = 0.5
    instance_seed: int = 0

    def __post_init__(self) -> None:
        for name in ("n_items", "n_clusters", "item_dim", "query_dim", "user_dim", "key_dim", "n_users"):
            if getattr(self, name) < 1:
                raise ValueError(f"SyntheticConfig.{name}: must be >= 1 (got {getattr(self, name)})")
        if self.n_clusters > self.n_items:
            raise ValueError(f"SyntheticConfig.n_clusters: {self.n_clusters} exceeds n_items {self.n_items}")
        if self.noise_sigma < 0:
            raise ValueError(f"SyntheticConfig.noise_sigma: must be >= 0 (got {self.noise_sigma})")
        if self.link not in ("identity", "logistic"):
            raise ValueError(f"SyntheticConfig.link: must be 'identity' or 'logistic' (got {self.link!r})")
        if self.variant not in ("linear", "nonlinear"):
            raise ValueError(f"SyntheticConfig.variant: must be 'linear' or 'nonlinear' (got {self.variant!r})")


@dataclass(frozen=True)
class OracleProjections:
    """``W*``: query (context) ``(d_k, query_dim)``, query (user) ``(d_k, user_dim)``, key ``(d_k, item_dim)``."""

    query_context: torch.Tensor
    query_user: torch.Tensor
    key: torch.Tensor


class SyntheticBandit(BanditEnvironment):
    """``n_runs`` runs of HARE-Sim over ``horizon`` rounds."""

    def __init__(self, config: SyntheticConfig, n_runs: int, horizon: int, keys: torch.Tensor, device: str | torch.device = "cpu"):
        self.config = config
        self.n_runs = n_runs
        self.horizon = horizon
        self.n_arms = config.n_items
        self.n_users = config.n_users
        self.dim = config.query_dim + config.n_users
        self.query_dim = config.query_dim
        self.user_dim = config.user_dim
        self.device = torch.device(device)
        self._build_instance()
        self.rng = CounterRNG(keys.to(self.device))

    def _build_instance(self) -> None:
        c = self.config
        inst = CounterRNG(run_keys(c.instance_seed, [0], "hare-sim-instance").to(self.device))

        def gaussian(stream: str, *shape: int) -> torch.Tensor:
            return inst.normal(stream, 0, shape)[0]

        centres = F.normalize(gaussian("centres", c.n_clusters, c.item_dim), dim=-1)
        clusters = torch.arange(c.n_items, device=self.device) % c.n_clusters
        items = F.normalize(centres[clusters] + c.cluster_spread * gaussian("items", c.n_items, c.item_dim) / math.sqrt(c.item_dim), dim=-1)
        self.pool = ItemPool(items, clusters)
        self.users = F.normalize(gaussian("users", c.n_users, c.user_dim), dim=-1)  # (n_users, user_dim)
        self.oracle = OracleProjections(
            gaussian("w-qx", c.key_dim, c.query_dim) / math.sqrt(c.query_dim),
            gaussian("w-qu", c.key_dim, c.user_dim) / math.sqrt(c.user_dim),
            gaussian("w-k", c.key_dim, c.item_dim) / math.sqrt(c.item_dim),
        )
        self.interaction_matrices = gaussian("interaction", c.n_items, c.query_dim, c.query_dim) / c.query_dim

    def queries(self, t: int) -> torch.Tensor:
        """Unit-norm queries ``x_t``, ``(n_runs, query_dim)``."""
        return F.normalize(self.rng.normal("query", t, (self.config.query_dim,)), dim=-1)

    def active_users(self, t: int) -> torch.Tensor:
        """Active user ``i_t`` of every run, ``(n_runs,)`` int64."""
        return self.rng.randint("user", t, self.config.n_users)

    def true_scores(self, queries: torch.Tensor, user_states: torch.Tensor) -> torch.Tensor:
        """``s*_n`` for queries ``(n_runs, query_dim)`` and user states ``(n_runs, user_dim)``: ``(n_runs, n_items)``."""
        w = self.oracle
        q = queries @ w.query_context.T + user_states @ w.query_user.T  # (n_runs, d_k)
        keys = self.pool.embeddings @ w.key.T  # (n_items, d_k)
        return q @ keys.T / math.sqrt(self.config.key_dim)

    def mean_rewards(self, queries: torch.Tensor, users: torch.Tensor) -> torch.Tensor:
        """``mu_t(n)``, ``(n_runs, n_items)``."""
        c = self.config
        score = c.reward_scale * self.true_scores(queries, self.users[users])
        if c.variant == "nonlinear":
            score = score + c.interaction * torch.einsum("bi,nij,bj->bn", queries, self.interaction_matrices, queries)
        return torch.sigmoid(score) if c.link == "logistic" else score

    def round(self, t: int) -> BanditRound:
        x = self.queries(t)
        users = self.active_users(t)
        mean = self.mean_rewards(x, users)
        rewards = mean + self.config.noise_sigma * self.rng.normal("noise", t, (self.n_arms,))
        contexts = torch.cat([x, F.one_hot(users, self.n_users).to(x.dtype)], dim=1)
        return BanditRound(Observation(t, contexts[:, None, :].expand(self.n_runs, self.n_arms, self.dim), users, x), mean, rewards)
