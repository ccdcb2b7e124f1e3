"""HARE-Sim: the synthetic environment with an exact oracle (paper, sec:experiments, "Environments").

Items lie in ``n_clusters`` Gaussian clusters on the unit sphere; ``n_users`` users have
true states ``u*_i``; oracle projections ``W*`` define the true item score

    s*_n(x, u) = <W*_Qx x + W*_Qu u, W*_K e_n> / sqrt(d_k)

and the mean reward ``mu_t(n) = g(scale * s*_n(x_t, u*_{i_t}))`` with link ``g`` identity
or logistic; rewards add ``sigma``-Gaussian noise. The ``nonlinear`` variant adds an
item-query interaction ``gamma * (x^T B_n x)`` that no model linear in the context
can represent. The instance (pool, users, ``W*``) is fixed by ``instance_seed``;
queries, active users and noise are drawn per run from the run keys.

Synthesize mode (paper, sec:method, "Synthesize mode and decoder"): a policy may answer with a point ``z`` of the item
space instead of an item. Its mean reward extends the item reward from the pool to the
whole space through the target direction ``target(x, u) = W*_K^T (W*_Qx x + W*_Qu u) / sqrt(d_k)``:

    mu_t(z) = g(scale * <z, target(x_t, u*_{i_t})>),

so ``mu_t(e_n)`` equals the item reward of the linear variant exactly (the nonlinear
interaction is defined per item only and is left out of ``mu_t(z)``). For ``z`` a convex
combination of pool items (HARE's identity values) the best value is the best item's, and
synthesis regret is ``max_n mu_t(e_n) - mu_t(z)`` with the linear-variant item rewards.

The ``between`` variant rewards an output that no single pool item explains. With ``a_t = argmax_n s*_n(x_t, u*)``
the best item and ``b_t = argmax_{n : c(n) != c(a_t)} s*_n(x_t, u*)`` the best item of another cluster (``c``: the
pool's clusters, ``self.pool.clusters``), the round's target is their midpoint

    t_t = (e_{a_t} + e_{b_t}) / 2,

and every output ``z`` of the item space, a pool item ``e_n`` included, has the mean reward

    mu_t(z) = g(scale * (1 - ||z - t_t||^2 / 2)).

Items are rewarded by the same formula (select mode, the warm start's logs, :meth:`SyntheticBandit.mean_rewards`):
``mu_t(e_n)``. The best output is ``z = t_t``, of value ``g(scale)``; it is a convex combination of two pool items
(reachable by HARE's identity values), and the synthesis regret ``g(scale) - mu_t(z) >= 0`` is exact, zero at
``z = t_t`` only. The best pool item misses it by ``||e_{a_t} - t_t||^2 / 2 = (1 - <e_{a_t}, e_{b_t}>) / 4`` inside
``g``, so select mode's best item is not the best output. Needs ``n_clusters >= 2``.

The logged-data sampler draws ``M`` interactions of the uniform logging policy (query, user
and item uniform, reward with noise; :class:`hare.envs.shared_context.SharedContextBandit`) from
its own keys, for fitting projections offline.

Arm features for context-only baselines are ``[x_t, onehot(i_t)]`` shared by all arms,
which makes the linear variant exactly realisable by disjoint-arm linear models.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from hare.envs.base import EnvironmentShape, ItemPool
from hare.envs.registry import register_environment
from hare.envs.shared_context import SharedContextBandit
from hare.random import CounterRNG, run_keys
from hare.typed import TypedFields

VARIANTS = ("linear", "nonlinear", "between")
"""The reward models of HARE-Sim (module docstring)."""


@dataclass(frozen=True)
class SyntheticConfig(TypedFields):
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
        if self.variant not in VARIANTS:
            raise ValueError(f"SyntheticConfig.variant: must be one of {list(VARIANTS)} (got {self.variant!r})")
        if self.variant == "between" and self.n_clusters < 2:
            raise ValueError(
                f"SyntheticConfig.n_clusters: the 'between' variant needs >= 2 clusters (got {self.n_clusters})"
            )


@dataclass(frozen=True)
class OracleProjections:
    """``W*``: query (context) ``(d_k, query_dim)``, query (user) ``(d_k, user_dim)``, key ``(d_k, item_dim)``."""

    query_context: torch.Tensor
    query_user: torch.Tensor
    key: torch.Tensor


@register_environment("synthetic")
class SyntheticBandit(SharedContextBandit):
    """``n_runs`` runs of HARE-Sim over ``horizon`` rounds; its ``params`` are a :class:`SyntheticConfig`."""

    config_class = SyntheticConfig
    serves_logs = True
    has_oracle = True

    def __init__(
        self, config: SyntheticConfig, n_runs: int, horizon: int, keys: torch.Tensor, device: str | torch.device = "cpu"
    ):
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

    @classmethod
    def mistake_cost(cls, entry: dict[str, Any], random_mean: float | None) -> float | None:
        """The mean gap between the best arm and another, ``random_mean / T * K / (K - 1)`` with ``K = n_items``
        arms (Random's expected regret per round is ``(K - 1) / K`` times that gap); ``None`` without Random's tuning
        runs."""
        if random_mean is None or not math.isfinite(random_mean):
            return None
        n_arms = cls.make_config(entry.get("params")).n_items
        return float(random_mean) / int(entry["horizon"]) * n_arms / (n_arms - 1)

    @classmethod
    def memory_shape(cls, entry: dict[str, Any]) -> EnvironmentShape:
        """``n_items`` arms of ``query_dim + n_users`` features and ``n_clusters`` clusters, no rows; shared: the pool
        and the nonlinear interaction matrices, float64."""
        c = cls.make_config(entry.get("params"))
        return EnvironmentShape(
            c.n_items,
            c.query_dim + c.n_users,
            int(entry["horizon"]),
            0,
            c.n_clusters,
            8 * c.n_items * (c.item_dim + c.query_dim**2),
        )

    def _build_instance(self) -> None:
        c = self.config
        inst = CounterRNG(run_keys(c.instance_seed, [0], "hare-sim-instance").to(self.device))

        def gaussian(stream: str, *shape: int) -> torch.Tensor:
            return inst.normal(stream, 0, shape)[0]

        centres = F.normalize(gaussian("centres", c.n_clusters, c.item_dim), dim=-1)
        clusters = torch.arange(c.n_items, device=self.device) % c.n_clusters
        items = F.normalize(
            centres[clusters] + c.cluster_spread * gaussian("items", c.n_items, c.item_dim) / math.sqrt(c.item_dim),
            dim=-1,
        )
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

    def true_scores(self, queries: torch.Tensor, user_states: torch.Tensor) -> torch.Tensor:
        """``s*_n`` for queries ``(n_runs, query_dim)`` and user states ``(n_runs, user_dim)``:
        ``(n_runs, n_items)``."""
        w = self.oracle
        q = queries @ w.query_context.T + user_states @ w.query_user.T  # (n_runs, d_k)
        keys = self.pool.embeddings @ w.key.T  # (n_items, d_k)
        return q @ keys.T / math.sqrt(self.config.key_dim)

    def mean_rewards(self, queries: torch.Tensor, users: torch.Tensor) -> torch.Tensor:
        """``mu_t(n)``, ``(n_runs, n_items)``."""
        c = self.config
        if c.variant == "between":
            items = self.pool.embeddings
            gaps = (items[None, :, :] - self.between_targets(queries, users)[:, None, :]).square().sum(-1)
            return self._link(c.reward_scale * (1.0 - gaps / 2.0))
        score = c.reward_scale * self.true_scores(queries, self.users[users])
        if c.variant == "nonlinear":
            score = score + c.interaction * torch.einsum("bi,nij,bj->bn", queries, self.interaction_matrices, queries)
        return torch.sigmoid(score) if c.link == "logistic" else score

    def user_states(self, users: torch.Tensor) -> torch.Tensor:
        """True states ``u*`` of ``users`` ``(...)`` int64 -> ``(..., user_dim)`` (for ``user_state='oracle'``)."""
        return self.users[users]

    def synthesis_targets(self, queries: torch.Tensor, users: torch.Tensor) -> torch.Tensor:
        """``target(x, u*) = W*_K^T (W*_Qx x + W*_Qu u*) / sqrt(d_k)``: ``(n_runs, item_dim)``."""
        w = self.oracle
        q = queries @ w.query_context.T + self.users[users] @ w.query_user.T  # (n_runs, d_k)
        return q @ w.key / math.sqrt(self.config.key_dim)

    def between_targets(self, queries: torch.Tensor, users: torch.Tensor) -> torch.Tensor:
        """The ``between`` variant's targets ``t = (e_a + e_b) / 2`` (module docstring) for queries ``(B, query_dim)``
        and users ``(B,)``: ``(B, item_dim)``; ``a`` the best item by ``s*``, ``b`` the best item of another
        cluster (first index on ties)."""
        scores = self.true_scores(queries, self.users[users])  # (B, N)
        best = scores.argmax(1)
        clusters = self.pool.clusters
        other = torch.where(clusters[None, :] != clusters[best][:, None], scores, -torch.inf).argmax(1)
        items = self.pool.embeddings
        return (items[best] + items[other]) / 2.0

    def _link(self, score: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(score) if self.config.link == "logistic" else score

    def synthesis_mean_rewards(self, z: torch.Tensor, queries: torch.Tensor, users: torch.Tensor) -> torch.Tensor:
        """``mu_t(z)`` for outputs ``z`` ``(n_runs, item_dim)``: ``(n_runs,)``; ``g(scale <z, target>)``, or with the
        ``between`` variant ``g(scale (1 - ||z - t||^2 / 2))``."""
        z = z.to(queries.dtype)
        if self.config.variant == "between":
            gap = (z - self.between_targets(queries, users)).square().sum(-1)
            return self._link(self.config.reward_scale * (1.0 - gap / 2.0))
        score = self.config.reward_scale * (z * self.synthesis_targets(queries, users)).sum(-1)
        return torch.sigmoid(score) if self.config.link == "logistic" else score

    def synthesis_outcome(self, t: int, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Realised reward, mean reward and pseudo-regret ``(n_runs,)`` each of outputs ``z`` at round ``t``.

        The regret is against the best pool item under the linear-variant item rewards; with the ``between``
        variant, against the best output ``z = t``: ``g(scale) - mu_t(z)``.
        """
        x = self.queries(t)
        users = self.active_users(t)
        mean = self.synthesis_mean_rewards(z, x, users)
        if self.config.variant == "between":
            best = self._link(torch.full_like(mean, self.config.reward_scale))
        else:
            best_score = (
                self.config.reward_scale * (self.synthesis_targets(x, users) @ self.pool.embeddings.T).max(1).values
            )
            best = torch.sigmoid(best_score) if self.config.link == "logistic" else best_score
        reward = mean + self.config.noise_sigma * self.rng.normal("synthesis-noise", t)
        return reward, mean, (best - mean).clamp_min(0.0)

    def logged_queries(self, rng: CounterRNG, n_samples: int) -> torch.Tensor:
        """Unit-norm logged queries ``(n_sets, n_samples, query_dim)``."""
        return F.normalize(rng.normal("logged-query", 0, (n_samples, self.config.query_dim)), dim=-1)

    def logged_means(self, queries: torch.Tensor, users: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        """``mu(n)`` of the logged items ``(M,)`` of one set."""
        return self.mean_rewards(queries, users).gather(1, items[:, None]).squeeze(1)


def linear_parameters(env: SyntheticBandit) -> torch.Tensor:
    """The linear variant's exact reward model (identity link): per-arm parameters ``(n_arms, query_dim + n_users)``
    such that ``mu_t(n) = <theta_n, [x_t, e_{i_t}]>``."""
    if env.config.variant != "linear" or env.config.link != "identity":
        raise ValueError("closed-form parameters exist only for the linear variant with identity link")
    w = env.oracle
    item_keys = env.pool.embeddings @ w.key.T  # (n_arms, d_k)
    scale = env.config.reward_scale / math.sqrt(env.config.key_dim)
    context_part = scale * item_keys @ w.query_context  # (n_arms, query_dim)
    user_part = scale * item_keys @ w.query_user @ env.users.T  # (n_arms, n_users)
    return torch.cat([context_part, user_part], dim=1)
