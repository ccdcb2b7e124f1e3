"""The projections and the item pool that HARE (:mod:`hare.policies.hare`) and the RAG-cosine baseline
(:mod:`hare.policies.rag_cosine`) start from: oracle, random or learned projections (:mod:`hare.model.projections`),
the learned ones fitted on the warm start's logs (memoised per fit inputs and settings), the pool's clusters, and the
class prototypes of the logs (``pool: log_prototypes``). One module for both policies, so that the baseline cannot
drift from HARE's projections; ``check_projections_*`` hold both to the same environment and regime rules.

Information (paper: the regimes): the constructor never reads the environment's logs.
``projections: learned`` means fitted on the logs HARE is warm-started with: the constructor
starts from the random projections of ``projection_seed``, and :meth:`hare.policies.hare.HARE.warm_start` fits them
on the logs (memoised per fit inputs and settings), rebuilds the attention, and then feeds every
logged interaction through :meth:`hare.policies.hare.HARE.update` like every other policy. ``pool: log_prototypes``
(classification, whose pool is one uninformative one-hot item per class) replaces the pool by
class prototypes of the logs in the warm start (:func:`log_prototypes`). Both need the warm
regime; ``check_regime('cold')`` rejects them, and selecting before the warm start is an error.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from hare.envs.base import BanditEnvironment, LoggedRounds, tensor_digest
from hare.envs.registry import environment_class
from hare.model.clustering import kmeans
from hare.model.projections import FitReport, Projections, fit_projections, oracle_projections, random_projections
from hare.policies.base import PolicyConfig

PROJECTION_KINDS = ("random", "learned", "oracle")


def check_projections_environment(config: PolicyConfig, kind: str) -> None:
    """Oracle projections ``W*`` exist only where the environment has them (HARE-Sim)."""
    if config.projections == "oracle" and not environment_class(kind).has_oracle:
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


def reward_link(env: BanditEnvironment) -> str:
    """The link of the environment's reward model (``identity`` unless its config names another), which a learned
    fit of the projections follows."""
    return getattr(getattr(env, "config", None), "link", "identity")


class WarmStartRequired(RuntimeError):
    """A policy whose projections or pool come from the warm start's logs was asked to act before its warm start."""


def initial_pool(config, env: BanditEnvironment) -> tuple[torch.Tensor, torch.Tensor, Projections]:
    """The pool ``items`` ``(N, d_e)`` float64, its ``clusters`` ``(N,)`` and the projections HARE starts from: the
    environment's pool (clustered by ``n_clusters``, :func:`pool_clusters`), or, under ``pool: log_prototypes``,
    placeholders of the final shapes (one cluster per item, ``d_e = query_dim``) that the warm start replaces
    (:func:`pool_from_logs`)."""
    device = env.pool.embeddings.device
    if config.pool == "log_prototypes":
        items = torch.zeros(env.n_arms, env.query_dim, dtype=torch.float64, device=device)
        return items, torch.arange(env.n_arms, device=device), build_projections(config, env, item_dim=env.query_dim)
    return env.pool.embeddings.to(torch.float64), pool_clusters(env, config.n_clusters), build_projections(config, env)


def pool_from_logs(
    config,
    logs: LoggedRounds,
    n_items: int,
    pool_items: torch.Tensor | None,
    clusters: torch.Tensor,
    projections: Projections,
    n_users: int,
    user_dim: int,
    link: str,
) -> tuple[Projections, torch.Tensor, torch.Tensor, FitReport | None]:
    """HARE's projections, pool ``(N, d_e)``, clusters ``(N,)`` and fit report after its warm start on ``logs``, on
    the CPU: with ``pool: log_prototypes`` the pool becomes the prototypes of the logs (:func:`log_prototypes`, one
    cluster per item), else it stays ``pool_items`` with its ``clusters``; with ``projections: learned`` the
    projections are fitted on the logs over that pool (:func:`learned_projections`), else they stay
    ``projections`` (no report). ``n_users`` users of ``user_dim`` features and the reward ``link`` are the
    environment's."""
    if config.pool == "log_prototypes":
        items, clusters = log_prototypes(logs, n_items), torch.arange(n_items)
    else:
        items = pool_items
    if config.projections != "learned":
        return projections, items, clusters, None
    fitted, report = learned_projections(
        logs,
        items,
        n_users,
        user_dim,
        config.n_heads,
        config.key_dim,
        config.fit_steps,
        config.fit_lr,
        config.projection_seed,
        link,
    )
    return fitted, items, clusters, report
