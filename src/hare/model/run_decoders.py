"""``R`` independent decoders of synthesize mode (:class:`hare.model.decoder.Decoder`, one per run) with their
parameters stacked over a leading run dimension, trained by maximum likelihood, decoded and fine-tuned together by
:func:`run_forward` (batched matrix products over runs), each run with exactly the step its own loss gives;
:meth:`RunDecoders.run` returns run ``b`` as a plain :class:`~hare.model.decoder.Decoder`.

:func:`run_forward` re-implements :meth:`hare.model.decoder.Decoder.forward` on stacked parameters, reading them by
the names of ``Decoder``'s state dict, and shares the decoder's token loop (:func:`hare.model.decoder.decode_tokens`),
initialisation and tokenizer; the tests hold the two forms of the one architecture to the same logits, SGD steps and
texts, so they cannot drift apart unnoticed.
"""

from __future__ import annotations

import copy
import math

import torch
from torch.nn import functional as F

from hare.model.adam import Adam
from hare.model.decoder import Decoder, DecoderConfig, WordTokenizer, decode_tokens, single_threaded
from hare.random import CounterRNG, run_keys


def train_run_decoders(
    texts: list[str],
    embeddings: torch.Tensor,
    seeds: list[int],
    users: torch.Tensor | None = None,
    steps: int = 300,
    lr: float = 3e-3,
    batch_size: int = 32,
    user_dim: int | None = None,
    tokenizer: WordTokenizer | None = None,
    conditioned: bool | list[bool] = True,
    **shape,
) -> RunDecoders:
    """``R = len(seeds)`` decoders trained at once by maximum likelihood, run ``r`` as one :class:`Decoder` of
    ``seeds[r]`` trained alone would be (the test's single-decoder reference).

    Each run has its own initialisation (:func:`init_parameters` of ``seeds[r]``) and minibatch stream
    (``batch_size`` indices of ``texts`` per step from the counter RNG of ``seeds[r]``), and minimises

        L_r = -sum_{b,l} m_{r,b,l} log p_r(y_{r,b,l} | y_{r,b,<l}, c_{r,b}) / sum_{b,l} m_{r,b,l}

    by Adam at ``lr`` for ``steps`` steps. Adam acts elementwise and ``grad_{theta_r} sum_r L_r = grad L_r``
    (no parameter is shared), so one Adam over the stacked parameters is ``R`` independent Adams.

    conditioned: the condition ``c_{r,b}`` is ``e_n ⊕ u_n`` (``embeddings`` ``(N, d_z)``; ``users`` ``(N, d_u)`` or
    zeros of ``user_dim``). ``conditioned=False`` gives the unconditioned baseline: the same architecture,
    parameter count, initialisation, minibatches, steps and learning rate, with ``c = 0`` for every text,
    so the prefix is the learned constant ``b_p`` (``W_p`` receives no gradient). A list gives the choice
    per run (seeds may repeat, e.g. a conditioned and an unconditioned run of each seed trained together).
    """
    d_u = users.shape[1] if users is not None else (user_dim or 0)
    tokenizer = tokenizer or WordTokenizer.from_texts(texts)
    config = DecoderConfig(z_dim=embeddings.shape[1], user_dim=d_u, **shape)
    runs = RunDecoders.stack([Decoder(config, tokenizer, seed) for seed in seeds])
    all_inputs, all_targets = tokenizer.batch(texts, config.max_len)  # (N, L+1)
    u_all = users.to(torch.float32) if users is not None else torch.zeros(len(texts), d_u)
    conditions = torch.cat([embeddings.to(torch.float32), u_all], dim=-1)  # (N, d_z + d_u)
    flags = [conditioned] * len(seeds) if isinstance(conditioned, bool) else list(conditioned)
    if len(flags) != len(seeds):
        raise ValueError(f"conditioned: one flag per seed (got {len(flags)} for {len(seeds)} seeds)")
    keep = torch.tensor(flags, dtype=torch.float32)[:, None, None]  # (R, 1, 1)
    rng = CounterRNG(torch.cat([run_keys(seed, [0], "hare-decoder-batches") for seed in seeds]))
    params = {name: p.clone().requires_grad_(True) for name, p in runs.params.items()}
    optimiser = Adam(params.values(), lr=lr)
    with single_threaded(), torch.enable_grad():
        for step in range(steps):
            idx = rng.randint("batch", step, len(texts), (min(batch_size, len(texts)),))  # (R, B)
            logp, mask = _run_token_log_probs(params, config, all_inputs[idx], all_targets[idx], conditions[idx] * keep)
            loss = (-logp.sum((1, 2)) / mask.sum((1, 2))).sum()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    runs.params = {name: p.detach() for name, p in params.items()}
    return runs


def _run_token_log_probs(
    params: dict[str, torch.Tensor],
    config: DecoderConfig,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    condition: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Masked ``log p_r(y_{r,b,l} | y_<l, c_{r,b})`` and the mask of real tokens, both ``(R, B, L+1)``;
    inputs and targets ``(R, B, L+1)`` int64, condition ``(R, B, d_z + d_u)``."""
    logits = run_forward(params, config, inputs, condition)
    logp = torch.log_softmax(logits, dim=-1).gather(-1, targets[..., None]).squeeze(-1)
    mask = (targets != 0).to(logp.dtype)
    return logp * mask, mask


@torch.no_grad()
def run_perplexity(runs: RunDecoders, texts: list[str], condition: torch.Tensor) -> torch.Tensor:
    """Per-run ``exp(-sum log p_r / number of predicted tokens)`` over the same ``texts`` (words and ``<eos>``).

    condition: ``z ⊕ u`` ``(B, d_z + d_u)`` shared by the runs, or ``(R, B, d_z + d_u)``. Returns ``(R,)`` float64.
    """
    inputs, targets = runs.tokenizer.batch(texts, runs.config.max_len)
    shape = (runs.n_runs, *inputs.shape)
    condition = condition.to(torch.float32).expand(runs.n_runs, *condition.shape[-2:])
    with single_threaded():
        logp, mask = _run_token_log_probs(
            runs.params, runs.config, inputs.expand(shape), targets.expand(shape), condition
        )
    return torch.exp(-logp.sum((1, 2)).to(torch.float64) / mask.sum((1, 2)).to(torch.float64))


def _run_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """``x_r W_r^T + b_r`` per run: x ``(R, ..., in)``, weight ``(R, out, in)``, bias ``(R, out)`` -> ``(R, ...,
    out)``."""
    shape = x.shape
    out = torch.baddbmm(bias[:, None], x.reshape(shape[0], -1, shape[-1]), weight.transpose(1, 2))
    return out.reshape(*shape[:-1], weight.shape[1])


def _run_layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """Layer norm over the last dimension (eps 1e-5) with per-run gain and bias ``(R, d)``; x ``(R, ..., d)``."""
    view = (x.shape[0],) + (1,) * (x.dim() - 2) + (x.shape[-1],)
    return F.layer_norm(x, x.shape[-1:], None, None, 1e-5) * weight.view(view) + bias.view(view)


def run_forward(
    params: dict[str, torch.Tensor], config: DecoderConfig, tokens: torch.Tensor, condition: torch.Tensor
) -> torch.Tensor:
    """:meth:`Decoder.forward` of ``R`` decoders at once, written out on stacked parameters.

    params: ``(R, *shape)`` for every name of ``Decoder.state_dict()``; tokens ``(R, B, L)`` int64;
    condition ``z ⊕ u`` ``(R, B, d_z + d_u)`` -> logits ``(R, B, L, V)``, run ``r`` computed with its own
    parameters only (batched matrix products over the run dimension). Each layer is the pre-norm block of
    ``nn.TransformerEncoderLayer`` (ReLU, dropout 0, layer-norm eps 1e-5):

        h <- h + W_O softmax(Q K^T / sqrt(d_h) + M) V,    [Q, K, V] = LN_1(h) W_in^T + b_in, split into heads,
        h <- h + W_2 relu(W_1 LN_2(h) + b_1) + b_2,

    with ``M`` the causal mask (``-inf`` above the diagonal) over ``p_1..p_P, <bos>, y_1, ...``.
    """
    c = config
    runs, n, d, heads = tokens.shape[0], tokens.shape[1], c.d_model, c.n_heads
    prefix = _run_linear(condition, params["prefix.weight"], params["prefix.bias"]).reshape(runs, n, c.prefix_len, d)
    embedded = params["embed.weight"][torch.arange(runs)[:, None, None], tokens]  # (R, B, L, d)
    h = torch.cat([prefix, embedded], dim=2)
    length = h.shape[2]
    h = h + params["position"][:, None, :length]
    mask = torch.full((length, length), -math.inf).triu(1)
    for i in range(c.n_layers):
        p = {name[len(f"layers.{i}.") :]: value for name, value in params.items() if name.startswith(f"layers.{i}.")}
        x = _run_layer_norm(h, p["norm1.weight"], p["norm1.bias"])
        qkv = _run_linear(x, p["self_attn.in_proj_weight"], p["self_attn.in_proj_bias"])
        q, k, v = qkv.reshape(runs, n, length, 3, heads, d // heads).permute(3, 0, 1, 4, 2, 5)  # each (R, B, H, L, d_h)
        attention = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d // heads) + mask, dim=-1) @ v
        attention = attention.transpose(2, 3).reshape(runs, n, length, d)
        h = h + _run_linear(attention, p["self_attn.out_proj.weight"], p["self_attn.out_proj.bias"])
        x = _run_layer_norm(h, p["norm2.weight"], p["norm2.bias"])
        h = h + _run_linear(
            F.relu(_run_linear(x, p["linear1.weight"], p["linear1.bias"])), p["linear2.weight"], p["linear2.bias"]
        )
    h = _run_layer_norm(h[:, :, c.prefix_len :], params["norm.weight"], params["norm.bias"])
    return _run_linear(h, params["head.weight"], params["head.bias"])


class RunDecoders:
    """``R`` independent decoders (one per run) with their parameters stacked over a leading run dimension.

    ``params[name]`` is ``(R, *shape)`` for every parameter ``name`` of :class:`Decoder`; the logits of all
    runs come from one :func:`run_forward`. Nothing is shared between runs but the tokenizer and the shape.
    """

    def __init__(self, decoder: Decoder, n_runs: int):
        """``n_runs`` copies of ``decoder``'s parameters."""
        self.config, self.tokenizer = decoder.config, decoder.tokenizer
        self._template = decoder
        self.params = {
            name: p.detach().clone()[None].repeat(n_runs, *([1] * p.dim())) for name, p in decoder.named_parameters()
        }
        self.n_runs = n_runs

    @classmethod
    def stack(cls, decoders: list[Decoder]) -> RunDecoders:
        """The decoders of a list (same shape and tokenizer), run ``r`` = ``decoders[r]``."""
        runs = cls(decoders[0], len(decoders))
        runs.params = {
            name: torch.stack([dict(d.named_parameters())[name].detach() for d in decoders]).clone()
            for name in runs.params
        }
        return runs

    def select(self, runs: list[int]) -> RunDecoders:
        """The runs ``runs`` (in that order) as a new :class:`RunDecoders`; parameters copied."""
        chosen = copy.copy(self)
        chosen.params = {name: p[runs].clone() for name, p in self.params.items()}
        chosen.n_runs = len(runs)
        return chosen

    def run(self, b: int) -> Decoder:
        """Run ``b`` as a plain :class:`Decoder` (eval mode; parameters copied)."""
        decoder = copy.deepcopy(self._template)
        decoder.load_state_dict({name: p[b] for name, p in self.params.items()})
        return decoder.eval()

    def logits(self, params: dict[str, torch.Tensor], tokens: torch.Tensor, condition: torch.Tensor) -> torch.Tensor:
        """Per-run logits: params ``(R, ...)``, tokens ``(R, B, L)``, condition ``(R, B, d_z + d_u)`` -> ``(R, B, L,
        V)``."""
        return run_forward(params, self.config, tokens, condition)

    def log_likelihood(
        self,
        texts: list[list[str]],
        z: torch.Tensor,
        u: torch.Tensor | None = None,
        params: dict[str, torch.Tensor] | None = None,
    ) -> torch.Tensor:
        """``log p_r(y_{r,b} | z_{r,b}, u_{r,b})`` ``(R, B)`` for ``texts`` (R lists of B), z ``(R, B, d_z)``, u ``(R,
        B, d_u)``."""
        n_runs, batch = len(texts), len(texts[0])
        inputs, targets = self.tokenizer.batch([t for run in texts for t in run], self.config.max_len)
        inputs, targets = inputs.view(n_runs, batch, -1), targets.view(n_runs, batch, -1)
        logits = self.logits(self.params if params is None else params, inputs, self._template.condition(z, u))
        logp = torch.log_softmax(logits, dim=-1).gather(-1, targets[..., None]).squeeze(-1)
        return (logp * (targets != 0).to(logp.dtype)).sum(-1)

    def reward_weighted_step(
        self, texts: list[list[str]], z: torch.Tensor, u: torch.Tensor | None, rewards: torch.Tensor, lr: float = 1e-3
    ) -> torch.Tensor:
        """One SGD step per run on its own ``L_r = -(1/B) sum_b r_{r,b} log p_r(y_{r,b} | z_{r,b}, u_{r,b})``.

        texts: R lists of B; z ``(R, B, d_z)``; u ``(R, B, d_u)`` or None; rewards ``(R, B)``. The gradient
        of ``sum_r L_r`` with respect to run ``r``'s parameters is ``grad L_r`` (no parameter is shared),
        so ``theta_r <- theta_r - lr grad L_r`` for every run, as :func:`reward_weighted_step` on each.
        Returns ``L_r`` before the step, ``(R,)``.
        """
        params = {name: p.detach().requires_grad_(True) for name, p in self.params.items()}
        with torch.enable_grad():
            loss = -(rewards.to(torch.float32) * self.log_likelihood(texts, z, u, params)).mean(-1)
            grads = torch.autograd.grad(loss.sum(), list(params.values()))
        self.params = {name: (p - lr * g).detach() for (name, p), g in zip(params.items(), grads, strict=True)}
        return loss.detach()

    @torch.no_grad()
    def generate(
        self,
        z: torch.Tensor,
        u: torch.Tensor | None = None,
        uniforms: torch.Tensor | None = None,
        temperature: float = 1.0,
    ) -> list[str]:
        """One text per run for conditions z ``(R, d_z)``, u ``(R, d_u)``: run ``r`` decodes ``z_r ⊕ u_r``,
        sampled by inverse CDF from ``uniforms`` ``(R, max_len + 1)`` at ``temperature`` (greedy when None),
        as :meth:`Decoder.generate` of run ``r`` on ``z[r:r+1]``, ``u[r:r+1]``, ``uniforms[r:r+1]``."""
        c = self.config
        if uniforms is not None and uniforms.shape[-1] < c.max_len + 1:
            raise ValueError("sampled decoding needs uniforms of shape (R, max_len + 1)")
        condition = self._template.condition(z, u)[:, None]  # (R, 1, d)
        return decode_tokens(
            lambda tokens: self.logits(self.params, tokens[:, None], condition)[:, 0, -1],
            z.shape[0],
            c.max_len,
            uniforms,
            temperature,
            self.tokenizer,
        )
