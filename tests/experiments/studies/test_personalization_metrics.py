"""The personalization metrics (hare.experiments.studies.personalization_metrics): cross-user similarity of HARE's
output and
RAG-cosine's, the t interval over runs, attention entropy and its windows, pairwise cosine and novelty by hand."""

import json
import math

import pytest
import torch

from hare.envs.text import TextBandit, TextConfig
from hare.experiments.studies.personalization import SEED_INIT_STD
from hare.experiments.studies.personalization_metrics import (
    attention_entropy,
    first_minus_last,
    mean_interval,
    novelty,
    pairwise_cosine,
    rag_outputs,
    run_similarities,
    user_outputs,
    window_means,
)
from hare.model.projections import random_projections
from hare.policies.hare_projections import learned_projections
from hare.random import run_keys

TEXT = {"n_topics": 4, "items_per_topic": 20, "n_queries": 10, "n_users": 3}


@pytest.fixture(scope="module")
def env():
    return TextBandit(TextConfig(**TEXT), 1, 5, run_keys(0, [0], "personalization-test"))


def test_random_projections_are_user_blind_learned_ones_are_not(env):
    items, queries = env.pool.embeddings, env.query_bank
    random = random_projections(2, 8, env.query_dim, env.user_dim, items.shape[1], seed=0)
    learned, fit = learned_projections(env.logged(1000), items, env.n_users, env.user_dim, 2, 8, 200, 0.03, 0)
    sim_random = pairwise_cosine(user_outputs(random, env.users, queries, items))
    sim_learned = pairwise_cosine(user_outputs(learned, fit.user_states, queries, items))
    # Measured: random 0.99993 (near-uniform attention, z close to the pool mean), learned 0.964.
    assert sim_random > 0.999
    assert sim_learned < sim_random - 0.02
    assert pairwise_cosine(rag_outputs(learned, queries, items, env.n_users)) == pytest.approx(1.0)


def test_similarity_of_identical_users_is_one(env):
    items, queries = env.pool.embeddings, env.query_bank
    random = [
        random_projections(2, 8, env.query_dim, env.user_dim, items.shape[1], seed=s, init_std=SEED_INIT_STD)
        for s in (0, 1)
    ]
    learned, fit = learned_projections(env.logged(300), items, env.n_users, env.user_dim, 2, 8, 30, 0.03, 0)
    same = env.users[:1].expand(3, -1)
    assert run_similarities(
        random + [learned], [same, same, fit.user_states[:1].expand(4, -1)], queries, items
    ).tolist() == pytest.approx([1.0, 1.0, 1.0], abs=1e-12)
    distinct = run_similarities([learned], [fit.user_states], queries, items)
    assert float(distinct[0]) == pytest.approx(pairwise_cosine(user_outputs(learned, fit.user_states, queries, items)))
    assert float(distinct[0]) < 1 - 1e-3


def test_mean_interval_is_the_t_interval_over_runs():
    got = mean_interval(torch.tensor([1.0, 2.0, 6.0]))
    half = 4.302652729911275 * math.sqrt(7.0) / math.sqrt(3)  # t_{0.975, 2} s / sqrt(n), s^2 = (4 + 1 + 9) / 2
    assert got["estimate"] == pytest.approx(3.0)
    assert (got["ci_low"], got["ci_high"]) == pytest.approx((3.0 - half, 3.0 + half))
    assert (got["level"], got["n"], got["method"], got["per_run"]) == (0.95, 3, "t over runs", [1.0, 2.0, 6.0])
    single = mean_interval(torch.tensor([2.5]))
    assert single["estimate"] == 2.5 and single["ci_low"] is None and single["ci_high"] is None
    undefined = mean_interval(torch.tensor([1.0, float("nan")]))
    assert undefined["estimate"] is None and undefined["per_run"] == [1.0, None]
    json.dumps(undefined, allow_nan=False)


def test_first_minus_last_per_run():
    values = torch.tensor(
        [[1.0, 0.0], [3.0, 0.0], [5.0, 1.0], [7.0, 2.0], [9.0, 4.0]]
    )  # (T=5, R=2), windows of 2: last holds round 4
    assert first_minus_last(values, 2).tolist() == pytest.approx([2.0 - 9.0, 0.0 - 4.0])
    assert first_minus_last(values[:, :1], 2)[0] == pytest.approx(
        window_means(values[:, 0], 2)[0] - window_means(values[:, 0], 2)[-1]
    )


def test_attention_entropy_equals_brute_force():
    gen = torch.Generator().manual_seed(0)
    weights = torch.softmax(torch.randn(4, 3, 2, 9, generator=gen, dtype=torch.float64), -1)
    weights[0, 0, :, 3] = 0.0  # a zero weight in every head: 0 log 0 = 0
    weights[0, 0] /= weights[0, 0].sum(-1, keepdim=True)
    got = attention_entropy(weights)
    for idx in torch.cartesian_prod(torch.arange(4), torch.arange(3)):
        b, t = int(idx[0]), int(idx[1])
        a = [sum(float(weights[b, t, h, n]) for h in range(2)) / 2 for n in range(9)]
        expected = -sum(p * math.log(p) for p in a if p > 0)
        assert float(got[b, t]) == pytest.approx(expected, abs=1e-12)
    assert window_means(torch.arange(5.0), 2) == [0.5, 2.5, 4.0]


def test_pairwise_cosine_and_novelty_by_hand():
    o = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]])
    assert pairwise_cosine(o) == pytest.approx((0.0 + 2**-0.5 + 2**-0.5) / 3)
    assert pairwise_cosine(torch.zeros(1, 2, 3)) == 1.0
    pool = torch.eye(2)
    assert novelty(torch.tensor([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]]), pool, 0.9) == pytest.approx(1 / 3)
