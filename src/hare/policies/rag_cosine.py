"""The RAG-cosine baseline: the top-1 pool item by cosine to the query mapped into item space by HARE's own
projections (:mod:`hare.policies.hare_projections`), with the user term and the bonus dropped."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import torch
import torch.nn.functional as F

from hare.envs.base import BanditEnvironment, LoggedRounds, Observation
from hare.model.projections import Projections
from hare.policies.base import Policy, PolicyConfig, register_policy
from hare.policies.hare_projections import (
    PROJECTION_KINDS,
    WarmStartRequired,
    build_projections,
    check_projections_environment,
    check_projections_regime,
    learned_projections,
    reward_link,
)
from hare.typed import at_least, one_of, positive


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

    round_cost_grows = False

    config_class = RAGCosineConfig

    def __init__(self, config: RAGCosineConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        if env.pool is None:
            raise ValueError("rag_cosine needs an environment with an item pool")
        self.needs_warm_start = config.projections == "learned"
        self.link = reward_link(env)
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
