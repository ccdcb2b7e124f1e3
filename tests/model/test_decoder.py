"""The synthesize-mode decoder: conditioning helps, decoding is deterministic, reward weighting moves likelihood."""

import copy

import pytest
import torch

from hare.envs.text import TextBandit, TextConfig
from hare.model.decoder import WordTokenizer, perplexity, reward_weighted_step, train_decoder, unconditioned_perplexity
from hare.random import CounterRNG, run_keys

TINY = dict(d_model=32, n_layers=1, n_heads=2, prefix_len=2)


@pytest.fixture(scope="module")
def trained():
    env = TextBandit(TextConfig(n_topics=4, items_per_topic=30, n_queries=8, n_users=3), 1, 5, run_keys(0, [0], "decoder-test"))
    e = env.pool.embeddings.to(torch.float32)
    held_out = [n for n in range(len(env.texts)) if n % 5 == 0]
    train = [n for n in range(len(env.texts)) if n % 5]
    decoder = train_decoder([env.texts[n] for n in train], e[train], steps=150, lr=3e-3, seed=0, user_dim=env.user_dim,
                            tokenizer=WordTokenizer.from_texts(env.texts), **TINY)
    return env, decoder, e, held_out


def test_conditioning_lowers_held_out_perplexity(trained):
    env, decoder, e, held_out = trained
    texts = [env.texts[n] for n in held_out]
    conditioned = perplexity(decoder, texts, e[held_out])
    unconditioned = unconditioned_perplexity(decoder, texts)
    # Measured (hashing encoder, 96 training texts, 150 steps): 28.3 conditioned, 123.0 unconditioned
    # (training-set perplexity 1.08: the tiny model memorises, the prefix still carries the words).
    assert conditioned < 0.4 * unconditioned
    assert conditioned < 40


def test_generation_is_deterministic(trained):
    env, decoder, e, _ = trained
    z, u = e[:4], env.users[torch.tensor([0, 1, 2, 0])]
    uniforms = CounterRNG(run_keys(0, [0], "decode")).uniform("u", 0, (4, 17))[0]
    assert decoder.generate(z, u) == decoder.generate(z, u)
    first = decoder.generate(z, u, sample=True, uniforms=uniforms)
    assert first == decoder.generate(z, u, sample=True, uniforms=uniforms.clone())
    other = CounterRNG(run_keys(1, [0], "decode")).uniform("u", 0, (4, 17))[0]
    assert first != decoder.generate(z, u, sample=True, uniforms=other)
    assert all(isinstance(t, str) and t for t in first)


def test_sampling_needs_uniforms(trained):
    _, decoder, e, _ = trained
    with pytest.raises(ValueError):
        decoder.generate(e[:2], sample=True)


def test_reward_weighted_step_moves_likelihood_toward_rewarded_outputs(trained):
    env, decoder, e, held_out = trained
    wins, pairs = 0, 8
    for k in range(pairs):
        a, b, c = held_out[k], held_out[k + pairs], held_out[k + 2 * pairs]
        texts = [env.texts[a], env.texts[b]]
        z = e[[c, c]]
        u = env.users[torch.tensor([k % 3, k % 3])]
        model = copy.deepcopy(decoder)
        before = model.log_likelihood(texts, z, u).detach()
        for _ in range(3):
            reward_weighted_step(model, texts, z, u, torch.tensor([1.0, 0.0]), lr=0.02)
        delta = model.log_likelihood(texts, z, u).detach() - before
        wins += int(delta[0] > 0 and delta[0] > delta[1])
    assert wins >= 7
