"""The projections of HARE's cross-attention: random, learned offline, or oracle.

Per head ``h = 1..H`` (paper, eq:query to eq:softmax):

    q_h = W_Qx^h x + W_Qu^h u        (d_k)
    k_{h,n} = W_K^h e_n              (d_k)
    v_{h,n} = W_V^h e_n              (d_v)
    z = concat_h(A_h V_h) W_O        (d_out)

and the reward model every kind of projection shares (the feature that carries the user,
paper, sec:method, "User posterior"):

    r_hat_n(x, u) = g( mean_h <q_h, k_{h,n}> / sqrt(d_k) ).

* **random**: Gaussian entries, never trained (the failure mode of paper, sec:method,
  "Projections and information": near-uniform attention). Standard deviation ``1 / sqrt(fan_in)`` by default (the
variance-preserving
  scale, the most favourable choice for random projections); ``init_std`` fixes it instead
  (0.02 is the usual transformer initialisation, under which outputs are nearly identical
  across users, claim ``random_projections_near_identical``).
* **learned**: fitted offline on ``M`` logged interactions of a uniform logging policy by
  maximising the Gaussian likelihood of the logged rewards, i.e. minimising
  ``mean_m (r_m - r_hat_{n_m}(x_m, u_{i_m}))^2`` over ``W_Qx, W_Qu, W_K`` and a table of
  user states ``u_i`` (the logs carry user ids, not states) with full-batch Adam from a
  fixed Gaussian initialisation: deterministic. After the fit the user table is rescaled
  to unit mean norm (the inverse factor moves into ``W_Qu``) so the online user posterior's
  unit prior is on the right scale. ``epsilon_train`` is the final training loss.
* **oracle**: the environment's ``W*`` copied into every head; its query projections are
  multiplied by the environment's reward scale so that oracle scores are the true reward
  logits ``scale * s*_n`` (HARE-Sim only).

Values and output default to the identity (``W_V^h = I``, ``W_O = [I; ...; I] / H``), so
``z = mean_h A_h X`` is a convex combination of pool items: a point of the embedding space
on which the synthesize-mode reward is defined. ``value_init="random"`` gives Gaussian
``W_V, W_O`` instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from hare.model.adam import Adam
from hare.random import CounterRNG, run_keys


class Projections(nn.Module):
    """Multi-head projections, float64 buffers.

    query_context ``(H, d_k, d_x)``, query_user ``(H, d_k, d_u)``, key ``(H, d_k, d_e)``,
    value ``(H, d_v, d_e)``, output ``(H * d_v, d_out)``; ``link`` is ``identity`` or
    ``logistic`` (the ``g`` of the reward model).
    """

    def __init__(self, query_context, query_user, key, value, output, link: str = "identity", kind: str = "random"):
        super().__init__()
        for name, tensor in (
            ("query_context", query_context),
            ("query_user", query_user),
            ("key", key),
            ("value", value),
            ("output", output),
        ):
            self.register_buffer(name, tensor.to(torch.float64).contiguous())
        self.link = link
        self.kind = kind

    @property
    def n_heads(self) -> int:
        return self.key.shape[0]

    @property
    def key_dim(self) -> int:
        return self.key.shape[1]

    def queries(self, x: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
        """``q_h = W_Qx^h x + W_Qu^h u``: ``x (..., d_x)``, ``u (..., d_u)`` or None -> ``(..., H, d_k)``."""
        q = torch.einsum("hkd,...d->...hk", self.query_context, x.to(torch.float64))
        if u is not None:
            q = q + torch.einsum("hku,...u->...hk", self.query_user, u.to(torch.float64))
        return q

    def keys(self, items: torch.Tensor) -> torch.Tensor:
        """``W_K^h e_n``: items ``(N, d_e)`` -> ``(H, N, d_k)``."""
        return torch.einsum("hke,ne->hnk", self.key, items.to(torch.float64))

    def values(self, items: torch.Tensor) -> torch.Tensor:
        """``W_V^h e_n``: items ``(N, d_e)`` -> ``(H, N, d_v)``."""
        return torch.einsum("hve,ne->hnv", self.value, items.to(torch.float64))

    def attention(self, x: torch.Tensor, u: torch.Tensor | None, items: torch.Tensor) -> torch.Tensor:
        """Head-mean attention without bonus, ``mean_h softmax(s_h)``: ``(..., N)``."""
        q = self.queries(x, u)
        scores = torch.einsum("...hk,hnk->...hn", q, self.keys(items)) / math.sqrt(self.key_dim)
        return torch.softmax(scores, dim=-1).mean(dim=-2)

    def synthesis(self, x: torch.Tensor, u: torch.Tensor | None, items: torch.Tensor) -> torch.Tensor:
        """``z = concat_h(A_h V_h) W_O`` without bonus: ``(..., d_out)``."""
        q = self.queries(x, u)
        scores = torch.einsum("...hk,hnk->...hn", q, self.keys(items)) / math.sqrt(self.key_dim)
        heads = torch.einsum("...hn,hnv->...hv", torch.softmax(scores, dim=-1), self.values(items))
        return heads.flatten(-2) @ self.output


def _identity_values(n_heads: int, item_dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    eye = torch.eye(item_dim, dtype=torch.float64)
    return eye.expand(n_heads, item_dim, item_dim).clone(), eye.repeat(n_heads, 1) / n_heads


def random_projections(
    n_heads: int,
    key_dim: int,
    query_dim: int,
    user_dim: int,
    item_dim: int,
    seed: int = 0,
    value_init: str = "identity",
    value_dim: int | None = None,
    out_dim: int | None = None,
    link: str = "identity",
    init_std: float | None = None,
) -> Projections:
    """Gaussian projections drawn from ``seed``, std ``init_std`` or ``1 / sqrt(fan_in)``; never trained."""
    rng = CounterRNG(run_keys(seed, [0], "hare-random-projections"))

    def _gaussian(rng, stream, shape, fan_in):
        return rng.normal(stream, 0, shape)[0] * (init_std if init_std is not None else 1.0 / math.sqrt(fan_in))

    user_dim = max(user_dim, 1)
    w_qx = _gaussian(rng, "w-qx", (n_heads, key_dim, query_dim), query_dim)
    w_qu = _gaussian(rng, "w-qu", (n_heads, key_dim, user_dim), user_dim)
    w_k = _gaussian(rng, "w-k", (n_heads, key_dim, item_dim), item_dim)
    if value_init == "identity":
        w_v, w_o = _identity_values(n_heads, item_dim)
    elif value_init == "random":
        value_dim = value_dim or key_dim
        out_dim = out_dim or item_dim
        w_v = _gaussian(rng, "w-v", (n_heads, value_dim, item_dim), item_dim)
        w_o = _gaussian(rng, "w-o", (n_heads * value_dim, out_dim), n_heads * value_dim)
    else:
        raise ValueError(f"value_init must be 'identity' or 'random' (got {value_init!r})")
    return Projections(w_qx, w_qu, w_k, w_v, w_o, link=link, kind="random")


def oracle_projections(env, n_heads: int = 1) -> Projections:
    """``W*`` of HARE-Sim in every head, query projections times the reward scale (module docstring)."""
    oracle = getattr(env, "oracle", None)
    if oracle is None:
        raise ValueError("oracle projections need an environment with oracle projections W* (HARE-Sim only)")
    scale = env.config.reward_scale
    stack = lambda w: w.to(torch.float64)[None].expand(n_heads, *w.shape).clone()  # noqa: E731  (H, ...)
    item_dim = oracle.key.shape[1]
    w_v, w_o = _identity_values(n_heads, item_dim)
    return Projections(
        stack(oracle.query_context) * scale,
        stack(oracle.query_user) * scale,
        stack(oracle.key),
        w_v,
        w_o,
        link=env.config.link,
        kind="oracle",
    )


@dataclass(frozen=True)
class FitReport:
    """Outcome of the offline fit: ``epsilon_train`` (final mean squared error on the logs),
    the loss every 50 steps, and the fitted user table ``(n_users, d_u)``."""

    epsilon_train: float
    loss_history: tuple[float, ...]
    user_states: torch.Tensor


def _apply_link(logits: torch.Tensor, link: str) -> torch.Tensor:
    return torch.sigmoid(logits) if link == "logistic" else logits


def fit_projections(
    logged,
    items: torch.Tensor,
    n_users: int,
    user_dim: int,
    n_heads: int,
    key_dim: int,
    steps: int = 600,
    lr: float = 0.03,
    seed: int = 0,
    link: str = "identity",
) -> tuple[Projections, FitReport]:
    """Learned projections from logged interactions (module docstring).

    logged: anything with ``queries (M, d_x)``, ``users (M,)``, ``items (M,)``, ``rewards (M,)``
    (a leading set dimension of size 1 is dropped). items: the pool ``(N, d_e)``.
    Minimises ``mean_m (r_m - g(mean_h <W_Qx^h x_m + W_Qu^h u_{i_m}, W_K^h e_{n_m}> / sqrt(d_k)))^2``
    by full-batch Adam for ``steps`` steps.
    """
    x, users, arms, rewards = (getattr(logged, name) for name in ("queries", "users", "items", "rewards"))
    if x.dim() == 3:
        x, users, arms, rewards = x[0], users[0], arms[0], rewards[0]
    x, rewards = x.to(torch.float64), rewards.to(torch.float64)
    e = items.to(torch.float64)[arms]  # (M, d_e)
    user_dim = max(user_dim, 1)
    start = random_projections(n_heads, key_dim, x.shape[1], user_dim, items.shape[1], seed=seed, link=link)
    rng = CounterRNG(run_keys(seed, [0], "hare-fit-users"))
    params = {
        "query_context": start.query_context.clone().requires_grad_(True),
        "query_user": start.query_user.clone().requires_grad_(True),
        "key": start.key.clone().requires_grad_(True),
        "users": (rng.normal("users", 0, (n_users, user_dim))[0] / math.sqrt(user_dim)).requires_grad_(True),
    }
    optimiser = Adam(params.values(), lr=lr)
    scale = 1.0 / (n_heads * math.sqrt(key_dim))

    def loss_fn() -> torch.Tensor:
        q = torch.einsum("hkd,md->mhk", params["query_context"], x) + torch.einsum(
            "hku,mu->mhk", params["query_user"], params["users"][users]
        )
        logits = torch.einsum("mhk,hke,me->m", q, params["key"], e) * scale
        return ((rewards - _apply_link(logits, link)) ** 2).mean()

    history = []
    for step in range(steps):
        optimiser.zero_grad()
        loss = loss_fn()
        loss.backward()
        optimiser.step()
        if step % 50 == 0:
            history.append(float(loss.detach()))
    with torch.no_grad():
        final = float(loss_fn())
        user_norm = params["users"].norm(dim=1).mean().clamp_min(1e-12)
        user_states = params["users"] / user_norm
        w_v, w_o = _identity_values(n_heads, items.shape[1])
        projections = Projections(
            params["query_context"].detach(),
            params["query_user"].detach() * user_norm,
            params["key"].detach(),
            w_v,
            w_o,
            link=link,
            kind="learned",
        )
    history.append(final)
    return projections, FitReport(final, tuple(history), user_states.detach().clone())


def attention_error(
    learned: Projections,
    learned_users: torch.Tensor,
    oracle: Projections,
    true_users: torch.Tensor,
    queries: torch.Tensor,
    users: torch.Tensor,
    items: torch.Tensor,
) -> float:
    """``epsilon_attn = E ||a(W_hat) - a(W*)||_1`` over fresh ``queries (Q, d_x)`` with active ``users (Q,)``.

    ``a`` is the head-mean attention without bonus; ``W_hat`` is paired with its own user
    table ``learned_users (n_users, d_u)``, ``W*`` with the true states ``true_users``.
    """
    a_hat = learned.attention(queries, learned_users[users], items)
    a_star = oracle.attention(queries, true_users[users], items)
    return float((a_hat - a_star).abs().sum(-1).mean())
