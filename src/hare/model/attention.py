"""Uncertainty-augmented multi-head cross-attention (paper, eq:query to eq:softmax).

Per head ``h``, for queries ``q_h`` over a pool of ``N`` items in ``C`` clusters:

    s_{h,n} = <q_h, k_{h,n}> / sqrt(d_k)
    U_{h,j} = sqrt(q_h^T Sigma_{h,j}^{-1} q_h),   Sigma_{h,j} = lam I + sum q q^T routed to j
    A_h     = softmax_n( s_{h,n} + alpha_{h,c(n)} U_{h,c(n)} )
    z       = concat_h(A_h V_h) W_O

``alpha`` may differ per head and per cluster (``alpha_h`` of paper, eq:softmax; a per-cluster
factor for the LNUCB-TA schedule). The bonus of every cluster is one batched quadratic form
against the ``(n_runs, H, C)`` covariance state: cost ``O(H C d_k^2)`` per query, no loop over
items or clusters.

The mean the bonus explores around (paper, eq:online-mean): every ``(h, j)`` also keeps
``b_{h,j} = sum w_{h,j} q_h y`` (the ``response`` of the same :class:`RidgeState`, so the same
``Sigma`` and maintained inverse serve the bonus and the estimate), and

    theta0_{h,j} = mean_{n in j} k_{h,n} / sqrt(d_k)         (<q_h, theta0_{h,j}> = mean_{n in j} s_{h,n})
    theta_{h,j}  = Sigma_{h,j}^{-1} (lam theta0_{h,j} + b_{h,j})

is the ridge estimate shrunk to the attention's own cluster score. With no data
``theta = theta0``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from hare.model.covariance import RidgeState
from hare.model.covariance_approx import DiagonalRidgeState, LowRankRidgeState, make_cluster_covariance


@dataclass(frozen=True)
class AttentionOutput:
    """One attention pass; ``*Q`` is an optional batch of queries per run.

    synthesis: ``z``, ``(n_runs, *Q, d_out)``.
    weights: ``A_h``, ``(n_runs, *Q, H, N)``; each row sums to one.
    scores: ``s_{h,n}``, ``(n_runs, *Q, H, N)``.
    bonuses: ``U_{h,j}``, ``(n_runs, *Q, H, C)``.
    queries: ``q_h``, ``(n_runs, *Q, H, d_k)``.
    """

    synthesis: torch.Tensor
    weights: torch.Tensor
    scores: torch.Tensor
    bonuses: torch.Tensor
    queries: torch.Tensor


class UncertaintyAttention(nn.Module):
    """Cross-attention from user-conditioned queries to a clustered pool, with cluster covariances.

    keys ``(H, N, d_k)``, values ``(H, N, d_v)``, output ``(H * d_v, d_out)``, clusters ``(N,)``
    int64 in ``0..C-1``. Holds ``covariance``: the ridge state of group shape ``(H, C)`` over ``d_k`` for
    ``n_runs`` runs that :func:`~hare.model.covariance_approx.make_cluster_covariance` builds for
    ``covariance_kind``: ``full`` (:class:`RidgeState`, ``Sigma`` exact), ``diagonal`` or ``low_rank`` (of
    ``covariance_rank``; its ``Sigma`` and the bound on the bonus in :mod:`hare.model.covariance_approx`).
    """

    def __init__(
        self,
        keys: torch.Tensor,
        values: torch.Tensor,
        output: torch.Tensor,
        clusters: torch.Tensor,
        n_runs: int,
        lam: float = 1.0,
        refactor_every: int = 1000,
        n_clusters: int | None = None,
        covariance_kind: str = "full",
        covariance_rank: int = 8,
    ):
        super().__init__()
        self.n_heads, self.n_items, self.key_dim = keys.shape
        self.n_clusters = int(n_clusters if n_clusters is not None else int(clusters.max()) + 1)
        self.register_buffer("keys", keys.to(torch.float64).contiguous())
        self.register_buffer("values", values.to(torch.float64).contiguous())
        self.register_buffer("output", output.to(torch.float64).contiguous())
        self.register_buffer("clusters", clusters.to(torch.int64).clone())
        sizes = torch.bincount(self.clusters, minlength=self.n_clusters).to(torch.float64)
        if (sizes == 0).any():
            raise ValueError("every cluster needs at least one item")
        self.register_buffer("cluster_sizes", sizes)
        mean_keys = torch.zeros(
            self.n_heads, self.n_clusters, self.key_dim, dtype=torch.float64, device=self.keys.device
        )
        mean_keys.index_add_(1, self.clusters, self.keys)
        self.register_buffer("cluster_mean_keys", mean_keys / sizes[None, :, None])  # (H, C, d_k)
        self.scale = 1.0 / math.sqrt(self.key_dim)
        self.covariance: RidgeState | DiagonalRidgeState | LowRankRidgeState = make_cluster_covariance(
            covariance_kind, n_runs, (self.n_heads, self.n_clusters), self.key_dim, lam, refactor_every, covariance_rank
        ).to(self.keys.device)  # HARE rebuilds it after a fit

    def bonuses(self, queries: torch.Tensor) -> torch.Tensor:
        """``U_{h,j} = sqrt(q_h^T Sigma_{h,j}^{-1} q_h)`` (paper, eq:scores) for every cluster: ``(n_runs, *Q, H, d_k)
        -> (n_runs, *Q, H, C)``."""
        return self.covariance.quadratic_form(queries.unsqueeze(-2)).sqrt()  # queries as (n_runs, *Q, H, 1, d_k)

    def cluster_scores(self, queries: torch.Tensor) -> torch.Tensor:
        """``mean_{n in j} s_{h,n} = <q_h, mean_{n in j} k_{h,n}> / sqrt(d_k)`` with ``s_{h,n}`` of paper eq:scores:
        ``(n_runs, *Q, H, C)``."""
        return torch.einsum("...hk,hck->...hc", queries.to(torch.float64), self.cluster_mean_keys) * self.scale

    def prior_parameters(self) -> torch.Tensor:
        """``theta0_{h,j} = mean_{n in j} k_{h,n} / sqrt(d_k)``, ``(H, C, d_k)``: the cluster score as a linear function
        of ``q_h``."""
        return self.cluster_mean_keys * self.scale

    def cluster_estimates(self) -> torch.Tensor:
        """``theta_{h,j} = Sigma_{h,j}^{-1} (lam theta0_{h,j} + b_{h,j})``, ``(n_runs, H, C, d_k)``.

        One product per (run, head, cluster) with the state's ``Sigma^{-1}`` (``row_products``; for the full state
        the maintained symmetric inverse, taken in row form ``(lam theta0 + b)^T Sigma^{-1}`` with the run as a
        batch dimension, no GEMM across runs).
        """
        covariance = self.covariance
        target = covariance.response + self.prior_parameters() * covariance.lam  # (n_runs, H, C, d_k)
        return covariance.row_products(target)

    def online_scores(self, queries: torch.Tensor) -> torch.Tensor:
        """``<theta_{h,j}, q_h>`` for every cluster: ``(n_runs, H, d_k) -> (n_runs, H, C)`` (row-wise products)."""
        return (self.cluster_estimates() * queries.to(torch.float64)[:, :, None, :]).sum(-1)

    def cluster_mass(self, weights: torch.Tensor) -> torch.Tensor:
        """Attention mass of every cluster ``sum_{n in j} A_{h,n}``: ``(..., H, N) -> (..., H, C)``."""
        mass = torch.zeros(*weights.shape[:-1], self.n_clusters, dtype=weights.dtype, device=weights.device)
        return mass.index_add_(-1, self.clusters, weights)

    def forward(self, queries: torch.Tensor, alpha: float | torch.Tensor = 0.0) -> AttentionOutput:
        """Attend from ``queries`` ``(n_runs, *Q, H, d_k)``.

        alpha: scalar, or a tensor broadcastable to the bonuses ``(n_runs, *Q, H, C)`` (per-head
        ``alpha_h`` as shape ``(H, 1)``; per-run and per-cluster factors likewise).
        """
        q = queries.to(torch.float64)
        scores = torch.einsum("...hk,hnk->...hn", q, self.keys) * self.scale
        bonuses = self.bonuses(q)
        cluster_bonus = alpha * bonuses  # (n_runs, *Q, H, C)
        logits = scores + cluster_bonus.index_select(-1, self.clusters)
        weights = torch.softmax(logits, dim=-1)
        heads = torch.einsum("...hn,hnv->...hv", weights, self.values)  # (n_runs, *Q, H, d_v)
        synthesis = heads.flatten(-2) @ self.output
        return AttentionOutput(synthesis, weights, scores, bonuses, q)

    def update(
        self, queries: torch.Tensor, cluster_weights: torch.Tensor, responses: torch.Tensor | None = None
    ) -> None:
        """``Sigma_{h,j} += w_{h,j} q_h q_h^T`` and ``b_{h,j} += w_{h,j} q_h y`` for every head and cluster at once
        (paper, sec:method, "Covariance update").

        queries ``(n_runs, H, d_k)``; cluster_weights ``(n_runs, H, C)``: one-hot on the dominant
        cluster, or the attention mass of every cluster; responses ``y`` broadcastable to
        ``(n_runs, H, C)`` (the reward on the link's scale; None: 0, the covariance alone).
        """
        per_cluster = queries[:, :, None, :].expand(-1, -1, self.n_clusters, -1)  # (n_runs, H, C, d_k)
        weights = cluster_weights.to(torch.float64)
        y = torch.zeros_like(weights) if responses is None else responses.to(torch.float64).expand_as(weights)
        self.covariance.update(per_cluster, y, weights)

    def update_chosen(self, queries: torch.Tensor, chosen: torch.Tensor, responses: torch.Tensor | None = None) -> None:
        """:meth:`update` with one-hot weights on the cluster ``j_h`` of each head, touching that cluster only
        (:meth:`RidgeState.update_chosen`): ``Sigma_{h,j_h} += q_h q_h^T``, ``b_{h,j_h} += q_h y_{h,j_h}``, and the
        state equals :meth:`update`'s element for element.

        queries ``(n_runs, H, d_k)``; chosen ``(n_runs, H)`` cluster indices; responses broadcastable to
        ``(n_runs, H, C)`` (None: 0).
        """
        n_runs = queries.shape[0]
        index = chosen + self.n_clusters * torch.arange(self.n_heads, device=chosen.device)  # (n_runs, H)
        if responses is None:
            y = torch.zeros(n_runs, self.n_heads, dtype=torch.float64, device=queries.device)
        else:
            full = responses.to(torch.float64).expand(n_runs, self.n_heads, self.n_clusters)
            y = full.gather(-1, chosen[..., None]).squeeze(-1)  # (n_runs, H)
        self.covariance.update_chosen(index, queries, y)
