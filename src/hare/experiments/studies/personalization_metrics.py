"""The metrics of the personalization check (:mod:`hare.experiments.studies.personalization`), each a function of
tensors:

* cross-user similarity ``sim = mean_x mean_{i < i'} cos(o(x, u_i), o(x, u_i'))`` of outputs ``o`` ``(Q, U, d)``
  (:func:`pairwise_cosine`), of HARE's attention output ``z`` (:func:`user_outputs`), of RAG-cosine's retrieved item
  (:func:`rag_outputs`), per run (:func:`run_similarities`);
* attention entropy ``H = -sum_n a_n log a_n`` of the head-averaged attention ``a = mean_h A_h`` (``0 log 0 = 0``,
  :func:`attention_entropy`), its means over windows of rounds (:func:`window_means`) and the first window's mean
  minus the last's (:func:`first_minus_last`);
* novelty: the fraction of outputs whose nearest pool item has cosine below a threshold (:func:`novelty`);
* the mean over runs with its t interval, ``mean ± t_{(1+level)/2, R-1} s / sqrt(R)`` (:func:`mean_interval`).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from scipy import stats

from hare.envs.base import nearest_item_cosine
from hare.model.projections import Projections


def pairwise_cosine(outputs: torch.Tensor) -> float:
    """``mean_x mean_{i<i'} cos(o_{x,i}, o_{x,i'})`` for outputs ``(Q, U, d)``, ``U >= 2``.

    Two zero outputs (e.g. decoded texts made of template words only, which the hashing
    encoder maps to 0) count as identical (cosine 1); a zero and a non-zero output as cosine 0.
    """
    o = F.normalize(outputs.to(torch.float64), dim=-1)
    empty = outputs.to(torch.float64).norm(dim=-1) == 0  # (Q, U)
    cosine = torch.where(empty[:, :, None] & empty[:, None, :], 1.0, o @ o.transpose(1, 2))
    pairs = torch.triu_indices(o.shape[1], o.shape[1], offset=1)
    return float(cosine[:, pairs[0], pairs[1]].mean())


def user_outputs(
    projections: Projections, user_states: torch.Tensor, queries: torch.Tensor, items: torch.Tensor
) -> torch.Tensor:
    """``z(x_q, u_i)`` without bonus for every query ``(Q, d_x)`` and user ``(U, d_u)``: ``(Q, U, d_e)``."""
    x = queries[:, None, :].expand(-1, user_states.shape[0], -1)
    u = user_states[None].expand(queries.shape[0], -1, -1)
    return projections.synthesis(x, u, items)


def rag_outputs(projections: Projections, queries: torch.Tensor, items: torch.Tensor, n_users: int) -> torch.Tensor:
    """RAG-cosine's retrieved item ``argmax_n cos(mean_h W_K^{hT} W_Qx^h x, e_n)`` for every user: ``(Q, U, d_e)``."""
    mapping = torch.einsum("hke,hkd->ed", projections.key, projections.query_context) / projections.n_heads
    chosen = (
        F.normalize(queries.to(torch.float64) @ mapping.T, dim=-1) @ F.normalize(items.to(torch.float64), dim=-1).T
    ).argmax(-1)
    return items.to(torch.float64)[chosen][:, None, :].expand(-1, n_users, -1)


def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
    """Entropy of the head-averaged attention: weights ``(..., H, N)`` -> ``(...)``, ``0 log 0 = 0``."""
    a = weights.mean(-2)
    return -torch.where(a > 0, a * torch.log(a), torch.zeros_like(a)).sum(-1)


def window_means(values: torch.Tensor, window: int) -> list[float]:
    """Means of ``values`` ``(T, ...)`` over consecutive windows of ``window`` rounds (last one may be shorter)."""
    return [float(values[s : s + window].mean()) for s in range(0, values.shape[0], window)]


def novelty(outputs: torch.Tensor, pool: torch.Tensor, threshold: float) -> float:
    """Fraction of outputs ``(M, d)`` whose nearest pool item ``(N, d)`` has cosine below ``threshold``
    (:func:`hare.envs.base.nearest_item_cosine`)."""
    return float((nearest_item_cosine(outputs, pool) < threshold).to(torch.float64).mean())


def mean_interval(values: torch.Tensor, level: float = 0.95) -> dict:
    """Mean of per-run ``values`` ``(R,)`` with the t interval ``mean ± t_{(1+level)/2, R-1} s / sqrt(R)``.

    ``s`` is the sample standard deviation over runs; bounds are ``None`` when ``R < 2``.
    Non-finite values make every field ``None`` but ``per_run``.
    """
    v = values.detach().to(torch.float64).flatten()
    n = int(v.numel())
    per_run = [float(x) if math.isfinite(float(x)) else None for x in v]
    out = {
        "estimate": None,
        "ci_low": None,
        "ci_high": None,
        "level": level,
        "n": n,
        "method": "t over runs",
        "per_run": per_run,
    }
    if n == 0 or not bool(torch.isfinite(v).all()):
        return out
    out["estimate"] = float(v.mean())
    if n >= 2:
        half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * float(v.std(unbiased=True)) / math.sqrt(n)
        out["ci_low"], out["ci_high"] = out["estimate"] - half, out["estimate"] + half
    return out


def run_similarities(
    projections: list[Projections], user_states: list[torch.Tensor], queries: torch.Tensor, items: torch.Tensor
) -> torch.Tensor:
    """Cross-user similarity ``sim`` of ``z`` (:func:`pairwise_cosine` of :func:`user_outputs`) per run: one projection
    and user table ``(U, d_u)`` per run -> ``(R,)``."""
    return torch.tensor(
        [pairwise_cosine(user_outputs(p, u, queries, items)) for p, u in zip(projections, user_states, strict=True)],
        dtype=torch.float64,
    )


def first_minus_last(values: torch.Tensor, window: int) -> torch.Tensor:
    """Mean of the first window minus mean of the last window (as :func:`window_means`) per run: ``(T, R)`` ->
    ``(R,)``."""
    last = ((values.shape[0] - 1) // window) * window
    return values[:window].mean(0) - values[last:].mean(0)
