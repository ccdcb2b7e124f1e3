"""The synthesize-mode decoder: batched training, the unconditioned baseline's budget, deterministic decoding, reward
weighting."""

import copy

import pytest
import torch

from hare.envs.text import TextBandit, TextConfig
from hare.model.adam import Adam
from hare.model.decoder import Decoder, DecoderConfig, WordTokenizer, perplexity, reward_weighted_step, single_threaded
from hare.model.run_decoders import RunDecoders, run_forward, run_perplexity, train_run_decoders
from hare.random import CounterRNG, run_keys

TINY = dict(d_model=32, n_layers=1, n_heads=2, prefix_len=2)


def train_decoder(
    texts: list[str],
    embeddings: torch.Tensor,
    users: torch.Tensor | None = None,
    steps: int = 300,
    lr: float = 3e-3,
    seed: int = 0,
    batch_size: int = 32,
    user_dim: int | None = None,
    tokenizer: WordTokenizer | None = None,
    **shape,
) -> Decoder:
    """The single-decoder reference of :func:`train_run_decoders`: one :class:`Decoder` fitted alone by maximum
    likelihood of ``texts`` given their ``embeddings`` ``(N, d_z)``.

    users: ``(N, d_u)`` user state per text, or None for ``u = 0`` (``user_dim`` zeros, default 0).
    ``steps`` minibatches of ``batch_size`` drawn from the counter RNG of ``seed``, Adam at ``lr``;
    ``shape`` overrides :class:`DecoderConfig` fields. The tokenizer defaults to the words of ``texts``.
    """
    d_u = users.shape[1] if users is not None else (user_dim or 0)
    tokenizer = tokenizer or WordTokenizer.from_texts(texts)
    decoder = Decoder(DecoderConfig(z_dim=embeddings.shape[1], user_dim=d_u, **shape), tokenizer, seed)
    rng = CounterRNG(run_keys(seed, [0], "hare-decoder-batches"))
    optimiser = Adam(decoder.parameters(), lr=lr)
    with single_threaded():
        for step in range(steps):
            idx = rng.randint("batch", step, len(texts), (min(batch_size, len(texts)),))[0]
            u = users[idx] if users is not None else None
            logp, mask = decoder.token_log_probs([texts[i] for i in idx], embeddings[idx], u)
            loss = -logp.sum() / mask.sum()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    return decoder.eval()


@pytest.fixture(scope="module")
def trained():
    env = TextBandit(
        TextConfig(n_topics=4, items_per_topic=30, n_queries=8, n_users=3), 1, 5, run_keys(0, [0], "decoder-test")
    )
    e = env.pool.embeddings.to(torch.float32)
    held_out = [n for n in range(len(env.texts)) if n % 5 == 0]
    train = [n for n in range(len(env.texts)) if n % 5]
    decoder = train_decoder(
        [env.texts[n] for n in train],
        e[train],
        steps=150,
        lr=3e-3,
        seed=0,
        user_dim=env.user_dim,
        tokenizer=WordTokenizer.from_texts(env.texts),
        **TINY,
    )
    return env, decoder, e, held_out


def test_batched_training_equals_train_decoder(trained):
    env, _, e, held_out = trained
    train = [n for n in range(len(env.texts)) if n % 5]
    texts, tokenizer = [env.texts[n] for n in train], WordTokenizer.from_texts(env.texts)
    runs = train_run_decoders(texts, e[train], [0, 1], steps=40, user_dim=env.user_dim, tokenizer=tokenizer, **TINY)
    single = train_decoder(texts, e[train], steps=40, seed=1, user_dim=env.user_dim, tokenizer=tokenizer, **TINY)
    held = [env.texts[n] for n in held_out]
    condition = torch.cat([e[held_out], torch.zeros(len(held_out), env.user_dim)], -1)
    got = run_perplexity(runs, held, condition)
    assert float(got[1]) == pytest.approx(perplexity(single, held, e[held_out]), rel=1e-3)
    assert abs(float(got[0]) - float(got[1])) > 1e-2  # the seeds give different runs


def test_unconditioned_baseline_has_the_same_parameters_and_budget(trained):
    env, _, e, _ = trained
    train = [n for n in range(len(env.texts)) if n % 5]
    texts, tokenizer = [env.texts[n] for n in train], WordTokenizer.from_texts(env.texts)
    init = Decoder(DecoderConfig(z_dim=e.shape[1], user_dim=env.user_dim, **TINY), tokenizer, 3)
    both = train_run_decoders(
        texts, e[train], [3, 3], steps=30, user_dim=env.user_dim, tokenizer=tokenizer, conditioned=[True, False], **TINY
    )
    conditioned, baseline = both.select([0]), both.select([1])
    assert (
        sum(p.numel() for p in conditioned.params.values())
        == sum(p.numel() for p in baseline.params.values())
        == sum(p.numel() for p in init.parameters())
    )
    assert torch.equal(
        baseline.params["prefix.weight"][0], init.prefix.weight
    )  # a constant input: W_p gets no gradient
    assert not torch.allclose(conditioned.params["prefix.weight"][0], init.prefix.weight)
    assert not torch.allclose(baseline.params["head.weight"][0], init.head.weight)
    # With a condition that is 0 anyway, the two differ in nothing but the flag: same initialisation,
    # minibatches, steps and learning rate give the same parameters.
    zero = train_run_decoders(
        texts,
        torch.zeros_like(e[train]),
        [3, 3],
        steps=30,
        user_dim=env.user_dim,
        tokenizer=tokenizer,
        conditioned=[True, False],
        **TINY,
    )
    for name, p in zero.params.items():
        assert torch.allclose(p[0], p[1], atol=1e-6), name
    with pytest.raises(ValueError, match="conditioned"):
        train_run_decoders(texts, e[train], [0, 1], steps=1, tokenizer=tokenizer, conditioned=[True], **TINY)


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


def _distinct_runs(env, e, n_runs=3):
    """Per-run texts (R lists of 4), z ``(R, 4, d_z)``, u ``(R, 4, d_u)`` and rewards ``(R, 4)``, all different across
    runs."""
    texts = [[env.texts[(7 * r + 3 * b) % len(env.texts)] for b in range(4)] for r in range(n_runs)]
    z = torch.stack([e[[(5 * r + b) % len(env.texts) for b in range(4)]] for r in range(n_runs)])  # (R, 4, d_z)
    u = env.users[torch.arange(4 * n_runs) % env.n_users].view(n_runs, 4, -1).to(torch.float32)
    rewards = torch.linspace(-1.0, 1.0, 4 * n_runs).view(n_runs, 4)
    return texts, z, u, rewards


def test_run_forward_equals_each_decoder():
    tokenizer = WordTokenizer([f"w{i}" for i in range(20)])
    config = DecoderConfig(z_dim=5, user_dim=3, **{**TINY, "n_layers": 2})
    decoders = [Decoder(config, tokenizer, seed) for seed in range(3)]
    with torch.no_grad():
        for d in decoders:  # non-zero biases and u-columns, so every parameter matters
            for p in d.parameters():
                p.add_(0.05 * torch.sin(torch.arange(p.numel(), dtype=torch.float32).view(p.shape)))
    runs = RunDecoders.stack(decoders)
    tokens = torch.randint(0, len(tokenizer), (3, 2, 6), generator=torch.Generator().manual_seed(0))
    z, u = torch.randn(3, 2, 5), torch.randn(3, 2, 3)
    with torch.no_grad():
        got = run_forward(runs.params, runs.config, tokens, torch.cat([z, u], -1))
        for r, d in enumerate(decoders):
            assert torch.allclose(got[r], d.eval()(tokens[r], z[r], u[r]), atol=1e-5)


def test_batched_generation_equals_each_run(trained):
    env, decoder, e, _ = trained
    texts, z, u, rewards = _distinct_runs(env, e)
    decoders = [copy.deepcopy(decoder) for _ in range(3)]
    for r, d in enumerate(decoders):
        for _ in range(r + 1):
            reward_weighted_step(d, texts[r], z[r], u[r], rewards[r], lr=0.05)
    runs = RunDecoders.stack(decoders)
    z0, u0 = z[:, 0], u[:, 0]
    uniforms = CounterRNG(run_keys(0, [0], "decode")).uniform("u", 0, (3, 17))[0]
    for temperature in (1.0, 2.0):
        looped = [
            d.generate(
                z0[r : r + 1], u0[r : r + 1], sample=True, uniforms=uniforms[r : r + 1], temperature=temperature
            )[0]
            for r, d in enumerate(decoders)
        ]
        assert runs.generate(z0, u0, uniforms, temperature) == looped
    assert runs.generate(z0, u0) == [d.generate(z0[r : r + 1], u0[r : r + 1])[0] for r, d in enumerate(decoders)]
    with pytest.raises(ValueError):
        runs.generate(z0, u0, uniforms[:, :5])


def test_batched_reward_weighted_step_equals_each_run(trained):
    env, decoder, e, _ = trained
    texts, z, u, rewards = _distinct_runs(env, e)
    runs = RunDecoders(decoder, 3)
    decoders = [copy.deepcopy(decoder) for _ in range(3)]
    for step in range(2):
        losses = runs.reward_weighted_step(texts, z, u, rewards * (step + 1), lr=0.05)
        looped = [
            reward_weighted_step(d, texts[r], z[r], u[r], rewards[r] * (step + 1), lr=0.05)
            for r, d in enumerate(decoders)
        ]
        assert torch.allclose(losses, torch.tensor(looped), atol=1e-5)
    for r, d in enumerate(decoders):
        for name, p in d.named_parameters():
            assert torch.allclose(runs.params[name][r], p, atol=1e-6), name
    assert not torch.allclose(
        runs.params["prefix.weight"][0], runs.params["prefix.weight"][1]
    )  # the runs did move apart
    for r, d in enumerate(decoders):
        extracted = runs.run(r)
        assert isinstance(extracted, Decoder) and not extracted.training
        assert all(torch.equal(extracted.state_dict()[name], runs.params[name][r]) for name in runs.params)
        assert torch.allclose(
            extracted.log_likelihood(texts[r], z[r], u[r]), d.log_likelihood(texts[r], z[r], u[r]), atol=1e-5
        )
        assert extracted.generate(z[r], u[r]) == d.generate(z[r], u[r])
