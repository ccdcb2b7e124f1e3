"""The decoder of synthesize mode, ``y = Decoder(z ⊕ u)`` (paper, sec:method, "Synthesize mode and decoder").

A small causal transformer language model over a word-level vocabulary built from the corpus,
trained in the pipeline (no pretrained weights). Conditioning is a learned prefix (soft prompt):

    [p_1; ...; p_P] = W_p (z ⊕ u) + b_p,      W_p: (P d_model, d_z + d_u)

and the model reads ``p_1..p_P, <bos>, y_1, ..., y_L`` under a causal mask, predicting
``y_1, ..., y_L, <eos>``; ``log p(y | z, u) = sum_l log p(y_l | y_<l, z, u)`` (with ``<eos>``).

Training (:func:`hare.model.run_decoders.train_run_decoders`): maximum likelihood of the pool's texts conditioned
on their own embeddings (``z = e_n``; ``u`` a given user state per text or zero), minibatch Adam, ``R`` runs at once.
Online (:func:`reward_weighted_step`): the reward-weighted likelihood

    L = -(1/B) sum_b r_b log p(y_b | z_b, u_b),

one SGD step per call. The columns of ``W_p`` that read ``u`` start at zero, so a decoder
pre-trained with ``u = 0`` is user-neutral until fine-tuning teaches it to use ``u``.

The unconditioned baseline (:func:`hare.model.run_decoders.train_run_decoders` with ``conditioned=False``) is the same
model trained with the same budget on the constant condition ``z ⊕ u = 0``: its prefix is the learned
constant ``b_p``, so it is a plain language model of the corpus with the conditioned decoder's exact
parameter count.

Independent runs: ``R`` decoders with their parameters stacked over a leading run dimension, trained, decoded and
fine-tuned together, are in :mod:`hare.model.run_decoders`.

Determinism: every parameter is drawn from the counter RNG of ``seed``
(:func:`init_parameters`), minibatches likewise, and sampled decoding takes its uniforms from
the caller (inverse-CDF sampling), so the same inputs give the same text. Dropout is off.
Training runs single-threaded (:func:`single_threaded`): for a model this small intra-op threads
only add contention, and one thread fixes the order of floating-point reductions.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch import nn

from hare.random import CounterRNG, run_keys
from hare.typed import TypedFields

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"


class WordTokenizer:
    """Lower-cased whitespace words; ids ``0..3`` are ``<pad> <bos> <eos> <unk>``, then words in sorted order."""

    def __init__(self, words: list[str]):
        self.vocabulary = [PAD, BOS, EOS, UNK] + sorted(set(words) - {PAD, BOS, EOS, UNK})
        self.index = {w: i for i, w in enumerate(self.vocabulary)}

    @classmethod
    def from_texts(cls, texts: list[str]) -> WordTokenizer:
        return cls([w for t in texts for w in t.lower().split()])

    def __len__(self) -> int:
        return len(self.vocabulary)

    def ids(self, text: str) -> list[int]:
        return [self.index.get(w, 3) for w in text.lower().split()]

    def batch(self, texts: list[str], max_len: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Inputs ``[<bos>, y_1..y_L]`` and targets ``[y_1..y_L, <eos>]``, ``(B, max_len + 1)`` int64,
        ``<pad>``-filled."""
        inputs = torch.zeros(len(texts), max_len + 1, dtype=torch.int64)
        targets = torch.zeros_like(inputs)
        for row, text in enumerate(texts):
            ids = self.ids(text)[:max_len]
            inputs[row, : len(ids) + 1] = torch.tensor([1] + ids)
            targets[row, : len(ids) + 1] = torch.tensor(ids + [2])
        return inputs, targets

    def decode(self, ids: list[int]) -> str:
        words = []
        for i in ids:
            if i == 2:
                break
            if i > 3:
                words.append(self.vocabulary[i])
        return " ".join(words)


@dataclass(frozen=True)
class DecoderConfig(TypedFields):
    """Shape of the decoder: ``z_dim``, ``user_dim``, ``d_model``, ``n_layers``, ``n_heads``, ``prefix_len`` (P),
    ``max_len`` (longest text in words), ``ff_mult`` (feed-forward width over ``d_model``)."""

    z_dim: int
    user_dim: int = 0
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    prefix_len: int = 4
    max_len: int = 16
    ff_mult: int = 2


class Decoder(nn.Module):
    """Prefix-conditioned causal transformer LM (module docstring); float32."""

    def __init__(self, config: DecoderConfig, tokenizer: WordTokenizer, seed: int = 0):
        super().__init__()
        self.config = config
        self.tokenizer = tokenizer
        c = config
        self.prefix = nn.Linear(c.z_dim + c.user_dim, c.prefix_len * c.d_model)
        self.embed = nn.Embedding(len(tokenizer), c.d_model)
        self.position = nn.Parameter(torch.zeros(c.prefix_len + c.max_len + 2, c.d_model))
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(
                c.d_model, c.n_heads, c.ff_mult * c.d_model, dropout=0.0, batch_first=True, norm_first=True
            )
            for _ in range(c.n_layers)
        )
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, len(tokenizer))
        init_parameters(self, seed)
        with torch.no_grad():
            self.prefix.weight[:, c.z_dim :] = 0.0

    def condition(self, z: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
        """``z ⊕ u``: z ``(..., d_z)``, u ``(..., d_u)`` or None (zeros) -> ``(..., d_z + d_u)`` float32."""
        z = z.to(torch.float32)
        if u is None:
            u = torch.zeros(*z.shape[:-1], self.config.user_dim)
        return torch.cat([z, u.to(torch.float32)], dim=-1)

    def forward(self, tokens: torch.Tensor, z: torch.Tensor, u: torch.Tensor | None = None) -> torch.Tensor:
        """Next-token logits ``(B, L, V)`` after each of ``tokens`` ``(B, L)`` given the prefix of ``z ⊕ u``."""
        c = self.config
        prefix = self.prefix(self.condition(z, u)).view(-1, c.prefix_len, c.d_model)
        h = torch.cat([prefix, self.embed(tokens)], dim=1)
        h = h + self.position[: h.shape[1]]
        mask = nn.Transformer.generate_square_subsequent_mask(h.shape[1])
        for layer in self.layers:
            h = layer(h, src_mask=mask, is_causal=True)
        return self.head(self.norm(h[:, c.prefix_len :]))

    def token_log_probs(
        self, texts: list[str], z: torch.Tensor, u: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-token ``log p(y_l | y_<l, z, u)`` ``(B, L+1)`` and the mask of real tokens ``(B, L+1)``."""
        inputs, targets = self.tokenizer.batch(texts, self.config.max_len)
        logp = torch.log_softmax(self(inputs, z, u), dim=-1).gather(-1, targets[..., None]).squeeze(-1)
        mask = (targets != 0).to(logp.dtype)
        return logp * mask, mask

    def log_likelihood(self, texts: list[str], z: torch.Tensor, u: torch.Tensor | None = None) -> torch.Tensor:
        """``log p(y_b | z_b, u_b)`` summed over words and ``<eos>``, ``(B,)``."""
        return self.token_log_probs(texts, z, u)[0].sum(-1)

    @torch.no_grad()
    def generate(
        self,
        z: torch.Tensor,
        u: torch.Tensor | None = None,
        max_len: int | None = None,
        sample: bool = False,
        uniforms: torch.Tensor | None = None,
        temperature: float = 1.0,
    ) -> list[str]:
        """Texts for conditions ``z`` ``(B, d_z)``, ``u`` ``(B, d_u)``: greedy, or sampled by inverse CDF from
        ``uniforms`` ``(B, max_len + 1)`` in (0, 1) at ``temperature``. ``<pad> <bos> <unk>`` are never emitted."""
        max_len = min(max_len or self.config.max_len, self.config.max_len)
        if sample and (uniforms is None or uniforms.shape[-1] < max_len + 1):
            raise ValueError("sampled decoding needs uniforms of shape (B, max_len + 1)")
        return decode_tokens(
            lambda tokens: self(tokens, z, u)[:, -1],
            z.shape[0],
            max_len,
            uniforms if sample else None,
            temperature,
            self.tokenizer,
        )


def decode_tokens(
    next_logits, batch: int, max_len: int, uniforms: torch.Tensor | None, temperature: float, tokenizer: WordTokenizer
) -> list[str]:
    """The token loop of both decoders: ``batch`` texts from ``<bos>``, at most ``max_len`` words then ``<eos>``.

    ``next_logits(tokens (batch, L)) -> (batch, V)`` gives the logits after the last token; the next token
    is drawn by inverse CDF from ``uniforms`` ``(batch, max_len + 1)`` at ``temperature``, or greedily when
    ``uniforms`` is None. ``<pad> <bos> <unk>`` are never emitted; a finished row pads with ``<pad>``.
    """
    tokens = torch.full((batch, 1), 1, dtype=torch.int64)
    done = torch.zeros(batch, dtype=torch.bool)
    banned = torch.tensor([0, 1, 3])
    for step in range(max_len + 1):
        logits = next_logits(tokens).to(torch.float64)
        logits[:, banned] = -math.inf
        if step == max_len:
            nxt = torch.full_like(done, 2, dtype=torch.int64)
        elif uniforms is not None:
            cdf = torch.softmax(logits / temperature, -1).cumsum(-1)
            nxt = torch.searchsorted(cdf, uniforms[:, step : step + 1].to(torch.float64) * cdf[:, -1:]).squeeze(-1)
            nxt = nxt.clamp(max=logits.shape[-1] - 1)
        else:
            nxt = logits.argmax(-1)
        nxt = torch.where(done, torch.zeros_like(nxt), nxt)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == 2
        if bool(done.all()):
            break
    return [tokenizer.decode(row[1:].tolist()) for row in tokens]


@contextlib.contextmanager
def single_threaded() -> Iterator[None]:
    """Run the block with one intra-op thread; restores the previous setting."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def init_parameters(module: nn.Module, seed: int) -> None:
    """Deterministic initialisation from the counter RNG: matrices ``N(0, 1/fan_in)``, embeddings
    ``N(0, 0.1^2)``, biases and positions 0, layer-norm gains 1."""
    rng = CounterRNG(run_keys(seed, [0], "hare-decoder-init"))
    with torch.no_grad():
        for name, param in sorted(module.named_parameters()):
            if "norm" in name:
                param.fill_(1.0 if name.endswith("weight") else 0.0)
            elif name == "position" or name.endswith("bias"):
                param.zero_()
            elif name.startswith("embed"):
                param.copy_(0.1 * rng.normal(name, 0, tuple(param.shape))[0])
            else:
                param.copy_(rng.normal(name, 0, tuple(param.shape))[0] / math.sqrt(param.shape[-1]))


def reward_weighted_step(
    decoder: Decoder, texts: list[str], z: torch.Tensor, u: torch.Tensor | None, rewards: torch.Tensor, lr: float = 1e-3
) -> float:
    """One SGD step on ``L = -(1/B) sum_b r_b log p(y_b | z_b, u_b)``; returns ``L`` before the step."""
    loss = -(rewards.to(torch.float32) * decoder.log_likelihood(texts, z, u)).mean()
    decoder.zero_grad()
    loss.backward()
    with torch.no_grad():
        for param in decoder.parameters():
            if param.grad is not None:
                param -= lr * param.grad
    return float(loss.detach())


@torch.no_grad()
def perplexity(decoder: Decoder, texts: list[str], z: torch.Tensor, u: torch.Tensor | None = None) -> float:
    """``exp(-sum log p / number of predicted tokens)`` over ``texts`` (words and ``<eos>``)."""
    logp, mask = decoder.token_log_probs(texts, z, u)
    return math.exp(-float(logp.sum()) / float(mask.sum()))
