"""The RAG-cosine baseline (hare.policies.rag_cosine): its learned projections are HARE's fit on the warm start's
logs, and its config carries no log size."""

from dataclasses import fields

import torch

from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.policies import build_policy
from hare.policies.hare_projections import learned_projections
from hare.policies.rag_cosine import RAGCosineConfig
from hare.random import run_keys

SMALL = SyntheticConfig(n_items=24, n_clusters=4, n_users=3)


def environment(config, runs, horizon=40):
    return SyntheticBandit(config, len(runs), horizon, run_keys(0, runs, "env"))


def test_rag_cosine_fits_its_learned_projections_in_the_warm_start():
    env = environment(SMALL, [0, 1], horizon=5)
    logs = env.logged(150)
    rag = build_policy("rag_cosine", {"projections": "learned", "fit_steps": 20}, env, run_keys(0, [0, 1], "p"))
    rag.warm_start(logs)
    fitted, _ = learned_projections(logs, env.pool.embeddings, env.n_users, env.user_dim, 1, 8, 20, 0.03, 0)
    assert torch.equal(rag.query_to_item, torch.einsum("hke,hkd->ed", fitted.key, fitted.query_context))
    assert rag.select(env.round(0).observation).shape == (2,)


def test_rag_cosine_config_has_no_n_logged():
    assert "n_logged" not in {f.name for f in fields(RAGCosineConfig)}
