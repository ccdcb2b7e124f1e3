"""Personalization metrics of synthesize mode (paper, sec:method, "Synthesize mode and decoder"; fig:personalization).

* **divergence**: mean pairwise cosine similarity of outputs across users for the same query,

      sim = mean_x mean_{i < i'} cos(o(x, u_i), o(x, u_i')),

  with ``o`` the attention output ``z`` or the embedding of the decoded text, for random
  projections (with the true ``u*``), learned projections (with their fitted user table) and
  RAG-cosine (user-free retrieval, so ``sim = 1`` by construction). Lower is more personal.
  ``divergence_*`` are the numbers of the run of ``seed``.
* **cross-user similarity of z over runs** (about 0.99999 with random projections, markedly less
  with learned ones: claims ``random_projections_near_identical`` and ``learned_projections_personalise``): ``sim`` of
``z`` per run ``r`` for random projections at std 0.02 (the usual
  transformer initialisation, drawn from seed ``seed + r``) with the true ``u*``, and for learned
  projections fitted from initialisation seed ``seed + r`` on the warm-start logs with their fitted
  user table; the paired difference learned − random per run.
* **attention entropy**: ``H_t = -sum_n a_{t,n} log a_{t,n}`` of the head-averaged attention
  ``a_t = mean_h A_{h,t}`` of round ``t`` (``0 log 0 = 0``), averaged over runs and over windows of rounds;
  ``first_minus_last`` per run, then over runs.
* **novelty**: fraction of decoded outputs whose nearest pool item has cosine below ``threshold``.
* **perplexity**: held-out pool texts. Per run ``r`` two decoders of the same architecture and parameter
  count are trained with the same budget (initialisation and minibatches of seed ``seed + r``, steps,
  batch, learning rate, texts): the conditioned decoder reads each text's own embedding, the
  unconditioned baseline reads the constant ``z ⊕ u = 0`` in training and evaluation
  (:func:`~hare.model.run_decoders.train_run_decoders`). Reported: both perplexities per run and the paired
  difference conditioned − unconditioned. ``conditioned_at_zero_condition`` is the conditioned decoder
  fed ``z = 0, u = 0`` (an input it never saw in training), kept for reference only.

Every quantity reported over runs is ``{estimate, ci_low, ci_high, level, n, method, per_run}``: the
mean over the ``n_runs`` runs with the t interval of level 0.95 (``null`` bounds for a single run).

:func:`personalization_report` runs the deterministic experiment on HARE-Text: the environment's
first ``n_logged`` logged interactions (uniform logging, :meth:`TextBandit.logged`) are the warm
start; learned projections are fitted on them (the same memoised fit the warm-started policy makes);
the decoders are pre-trained on 80 % of the pool (``n mod 5 != 0``; the rest held out); then
``hare_synthesize`` with learned projections is warm-started on the same logs
(:meth:`HARE.warm_start`: the fit, then every logged interaction through its update) and plays
``horizon`` online rounds (shown as rounds ``M + t``) in which every run decodes ``z_t ⊕ u_t``
(``u_t`` the posterior mean of the active user) with its own pre-trained conditioned decoder by
sampling with uniforms from the run's counter RNG, the environment rewards the text
(:meth:`TextBandit.text_outcome`), HARE learns from that reward, and every ``finetune_every`` rounds
the run's decoder takes one reward-weighted step on the texts of those rounds. Results go to JSON atomically.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, replace

import torch

from hare.envs.text import TextBandit, TextConfig, encode
from hare.experiments.settings.personalization import PersonalizationConfig
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
from hare.io import write_json
from hare.model.decoder import Decoder, WordTokenizer, single_threaded
from hare.model.projections import random_projections
from hare.model.run_decoders import RunDecoders, run_perplexity, train_run_decoders
from hare.random import CounterRNG, run_keys

SEED_INIT_STD = 0.02
"""Std of the random projections whose cross-user similarity is about 0.99999 (the usual transformer initialisation)."""

DECODER_BATCH = 32
"""Minibatch size of the pre-training of both decoders (conditioned and unconditioned baseline)."""


def decoder_baseline(
    train_texts: list[str],
    train_z: torch.Tensor,
    held_texts: list[str],
    held_z: torch.Tensor,
    seeds: list[int],
    user_dim: int,
    tokenizer: WordTokenizer,
    steps: int,
    lr: float,
    shape: dict,
    batch_size: int = 32,
) -> tuple[dict, RunDecoders]:
    """Held-out perplexities of the conditioned decoders and of the unconditioned baseline, one of each per seed.

    Both are trained together by :func:`train_run_decoders` with the same seeds, texts ``train_texts`` (conditions
    ``train_z``
    ``(N, d_z)``, ``u = 0``), steps, batch size and learning rate; the baseline has ``conditioned=False``. Evaluation on
    ``held_texts`` with conditions ``held_z ⊕ 0`` (conditioned) and ``0`` (baseline). Returns the per-run
    numbers ``(R,)`` (and the parameter counts) and the conditioned decoders.
    """
    both = train_run_decoders(
        train_texts,
        train_z,
        seeds + seeds,
        steps=steps,
        lr=lr,
        batch_size=batch_size,
        user_dim=user_dim,
        tokenizer=tokenizer,
        conditioned=[True] * len(seeds) + [False] * len(seeds),
        **shape,
    )
    conditioned, baseline = both.select(list(range(len(seeds)))), both.select(list(range(len(seeds), 2 * len(seeds))))
    held_c = torch.cat([held_z.to(torch.float32), torch.zeros(len(held_texts), user_dim)], dim=-1)
    train_c = torch.cat([train_z.to(torch.float32), torch.zeros(len(train_texts), user_dim)], dim=-1)
    per_run = {
        "conditioned": run_perplexity(conditioned, held_texts, held_c),
        "unconditioned": run_perplexity(baseline, held_texts, torch.zeros_like(held_c)),
        "conditioned_at_zero_condition": run_perplexity(conditioned, held_texts, torch.zeros_like(held_c)),
        "train_conditioned": run_perplexity(conditioned, train_texts, train_c),
        "train_unconditioned": run_perplexity(baseline, train_texts, torch.zeros_like(train_c)),
    }
    per_run["conditioned_minus_unconditioned"] = per_run["conditioned"] - per_run["unconditioned"]
    counts = {
        "n_parameters_conditioned": sum(p[0].numel() for p in conditioned.params.values()),
        "n_parameters_unconditioned": sum(p[0].numel() for p in baseline.params.values()),
    }
    return {**per_run, **counts}, conditioned


def _decode(decoder: Decoder, z: torch.Tensor, u: torch.Tensor) -> list[str]:
    with single_threaded():
        return decoder.generate(z.to(torch.float32), u.to(torch.float32))


def personalization_report(config: PersonalizationConfig, out_json: str | None = None) -> dict:
    """Run the experiment of the module docstring and return (and write to ``out_json``) its numbers."""
    from hare.policies.hare import HARESynthesize, HARESynthesizeConfig
    from hare.policies.hare_projections import learned_projections

    c = config
    text_config = TextConfig(**c.text)
    env = TextBandit(text_config, c.n_runs, c.horizon, run_keys(c.seed, list(range(c.n_runs)), "hare-personalization"))
    items = env.pool.embeddings
    started = time.perf_counter()
    encode(env.texts, text_config.encoder, text_config.hash_dim)
    encoder_seconds_per_1000 = (time.perf_counter() - started) / len(env.texts) * 1000

    random_proj = random_projections(
        c.n_heads, c.key_dim, env.query_dim, env.user_dim, items.shape[1], seed=c.seed, init_std=c.random_init_std
    )
    logs = env.logged(c.n_logged)
    link = getattr(env.config, "link", "identity")
    learned, fit = learned_projections(
        logs, items, env.n_users, env.user_dim, c.n_heads, c.key_dim, c.fit_steps, c.fit_lr, c.seed, link
    )
    queries = env.query_bank[: c.n_eval_queries]
    outputs = {
        "random": user_outputs(random_proj, env.users, queries, items),
        "learned": user_outputs(learned, fit.user_states, queries, items),
        "rag_cosine": rag_outputs(learned, queries, items, env.n_users),
    }
    users_for = {"random": env.users, "learned": fit.user_states, "rag_cosine": fit.user_states}

    seeds = [c.seed + r for r in range(c.n_runs)]
    random_runs = [
        random_projections(
            c.n_heads, c.key_dim, env.query_dim, env.user_dim, items.shape[1], seed=s, init_std=SEED_INIT_STD
        )
        for s in seeds
    ]
    learned_runs = [
        learned_projections(
            logs, items, env.n_users, env.user_dim, c.n_heads, c.key_dim, c.fit_steps, c.fit_lr, s, link
        )
        for s in seeds
    ]
    sim_random = run_similarities(random_runs, [env.users] * c.n_runs, queries, items)
    sim_learned = run_similarities(
        [p for p, _ in learned_runs], [f.user_states for _, f in learned_runs], queries, items
    )

    held_out = [n for n in range(env.n_arms) if n % 5 == 0]
    train = [n for n in range(env.n_arms) if n % 5]
    e32 = items.to(torch.float32)
    held_texts = [env.texts[n] for n in held_out]
    ppl_runs, decoders = decoder_baseline(
        [env.texts[n] for n in train],
        e32[train],
        held_texts,
        e32[held_out],
        seeds,
        env.user_dim,
        WordTokenizer.from_texts(env.texts),
        c.pretrain_steps,
        c.pretrain_lr,
        c.decoder,
        batch_size=DECODER_BATCH,
    )
    decoder = decoders.run(0)
    ppl = {
        key: mean_interval(ppl_runs[key])
        for key in (
            "conditioned",
            "unconditioned",
            "conditioned_minus_unconditioned",
            "conditioned_at_zero_condition",
            "train_conditioned",
            "train_unconditioned",
        )
    }
    ppl["baseline"] = {
        "unconditioned": "separately trained decoder, same architecture, initialisation seed, minibatches, steps, "
        "batch and learning rate as the conditioned one, condition z ⊕ u = 0 in training and evaluation",
        "conditioned_at_zero_condition": "the conditioned decoder fed z = 0, u = 0 (an input it never saw in "
        "training); reference only",
        "n_parameters_conditioned": ppl_runs["n_parameters_conditioned"],
        "n_parameters_unconditioned": ppl_runs["n_parameters_unconditioned"],
        "steps": c.pretrain_steps,
        "lr": c.pretrain_lr,
        "batch_size": DECODER_BATCH,
        "seeds": seeds,
    }
    ppl.update({"n_held_out": len(held_out), "n_train": len(train)})

    text_divergence, decoded_embeddings = {}, []
    for kind, z in outputs.items():
        q, u_count = z.shape[:2]
        states = users_for[kind][None].expand(q, -1, -1).reshape(q * u_count, -1)
        texts = _decode(decoder, z.reshape(q * u_count, -1), states)
        emb = env.encode(texts).reshape(q, u_count, -1)
        text_divergence[kind] = pairwise_cosine(emb)
        decoded_embeddings.append(emb.reshape(q * u_count, -1))

    online = _online(env, decoders, c, HARESynthesize, HARESynthesizeConfig, logs)
    entropy_windows = window_means(online["entropy"], c.entropy_window)
    query = 0
    example_users = torch.arange(env.n_users)
    z_example = user_outputs(learned, fit.user_states, env.query_bank[query : query + 1], items)[0]  # (U, d)
    report = {
        "config": asdict(c),
        "environment": {
            "kind": "text",
            "n_items": env.n_arms,
            "n_topics": text_config.n_topics,
            "embedding_dim": env.query_dim,
            "encoder": text_config.encoder,
            "encoder_seconds_per_1000_sentences": encoder_seconds_per_1000,
            "corpus": "generated (topic vocabularies and templates; hare.envs.text)",
        },
        "fit_epsilon_train": fit.epsilon_train,
        "divergence_z": {kind: pairwise_cosine(z) for kind, z in outputs.items()},
        "divergence_text": text_divergence,
        "similarity_z": {
            "random_002": mean_interval(sim_random),
            "learned": mean_interval(sim_learned),
            "learned_minus_random": mean_interval(sim_learned - sim_random),
            "random_init_std": SEED_INIT_STD,
            "seeds": seeds,
        },
        "perplexity": ppl,
        "novelty": {
            "threshold": c.novelty_threshold,
            "pretrained_greedy": novelty(torch.cat(decoded_embeddings), items, c.novelty_threshold),
            "online_sampled": novelty(online["embeddings"], items, c.novelty_threshold),
        },
        "attention_entropy": {
            "window": c.entropy_window,
            "by_window": entropy_windows,
            "max": math.log(env.n_arms),
            "first_minus_last": mean_interval(first_minus_last(online["entropy"], c.entropy_window)),
        },
        "online": {
            "text_mean_reward_by_window": window_means(online["text_mean"], c.entropy_window),
            "z_mean_reward_by_window": window_means(online["z_mean"], c.entropy_window),
            "text_regret_total_per_run": online["text_regret"].sum(0).tolist(),
            "finetune_loss_first_last": [online["losses"][0], online["losses"][-1]] if online["losses"] else [],
        },
        "examples": {
            "query": env.query_texts[query],
            "user_topic_weights": [[round(float(w), 4) for w in env.users[i]] for i in example_users],
            "pretrained": _decode(decoder, z_example, fit.user_states),
            "finetuned_run0": _decode(online["decoders"].run(0), z_example, fit.user_states),
        },
    }
    if out_json is not None:
        write_json(out_json, report)
    return report


def _online(env: TextBandit, decoders: RunDecoders, c: PersonalizationConfig, policy_class, config_class, logs) -> dict:
    """HARE synthesize mode warm-started on ``logs``, then ``horizon`` online rounds (shown as ``M + t``) with
    decoding by each run's pre-trained decoder of ``decoders``, text rewards and reward-weighted fine-tuning.
    ``entropy`` is ``(T, R)``."""
    policy_config = config_class(
        projections="learned",
        n_heads=c.n_heads,
        key_dim=c.key_dim,
        alpha=c.alpha,
        fit_steps=c.fit_steps,
        fit_lr=c.fit_lr,
        projection_seed=c.seed,
    )
    policy = policy_class(policy_config, env, run_keys(c.seed, list(range(c.n_runs)), "hare-personalization-policy"))
    policy.warm_start(logs)
    offset = len(logs)
    rng = CounterRNG(run_keys(c.seed, list(range(c.n_runs)), "hare-personalization-decode"))
    max_len = decoders.config.max_len
    entropy, text_mean, z_mean, text_regret, embeddings, losses = [], [], [], [], [], []
    buffer: list[tuple] = []
    for t in range(c.horizon):
        observation = replace(env.round(t).observation, t=offset + t)
        out = policy.attend(observation)
        entropy.append(attention_entropy(out.weights))
        z = policy.synthesize(observation)
        u = policy.user_states(observation.users)
        u = torch.zeros(c.n_runs, env.user_dim, dtype=torch.float64) if u is None else u
        uniforms = rng.uniform("decode", t, (max_len + 1,))
        with single_threaded():
            texts = decoders.generate(z.float(), u.float(), uniforms=uniforms, temperature=c.temperature)
        reward, mean, regret = env.text_outcome(t, texts)
        z_mean.append(env.synthesis_outcome(t, z)[1])
        text_mean.append(mean)
        text_regret.append(regret)
        embeddings.append(env.encode(texts))
        policy.update_synthesis(observation, z, reward)
        buffer.append((texts, z.float(), u.float(), reward.float()))
        if len(buffer) == c.finetune_every:
            batch_texts = [
                list(run) for run in zip(*(entry[0] for entry in buffer), strict=True)
            ]  # R lists of finetune_every
            z_b, u_b, r_b = (
                torch.stack([entry[k] for entry in buffer], dim=1) for k in (1, 2, 3)
            )  # (R, finetune_every, ...)
            with single_threaded():
                losses.extend(decoders.reward_weighted_step(batch_texts, z_b, u_b, r_b, lr=c.finetune_lr).tolist())
            buffer = []
    return {
        "entropy": torch.stack(entropy),
        "text_mean": torch.stack(text_mean),
        "z_mean": torch.stack(z_mean),
        "text_regret": torch.stack(text_regret),
        "embeddings": torch.cat(embeddings),
        "losses": losses,
        "decoders": decoders,
    }
