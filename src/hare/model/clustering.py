"""Deterministic batched k-means (Lloyd 1982) for re-clustering a knowledge pool.

HARE keeps one covariance per cluster of the pool (paper, sec:method, "Objects": ``c(n)``).
The ablation over the number of clusters ``C`` re-clusters the pool: ``C = 1`` is a
single cluster, ``C = N`` gives every item its own covariance. Initialisation is
farthest-point traversal from the item nearest the pool mean (no randomness), so the
same pool always gives the same clusters. ``C = N`` is answered directly with item ``n``
in cluster ``n`` (what Lloyd's algorithm returns for distinct points, without its
``O(N^2)`` distance matrix).
"""

from __future__ import annotations

import torch


def farthest_point_init(points: torch.Tensor, n_clusters: int) -> torch.Tensor:
    """Indices of ``n_clusters`` initial centres, ``(*batch, n_clusters)`` int64.

    points: ``(*batch, n_points, dim)``. The first centre is the point nearest the mean;
    each next one is the point farthest (squared Euclidean) from the centres chosen so far.
    """
    mean = points.mean(dim=-2, keepdim=True)
    first = ((points - mean) ** 2).sum(-1).argmin(dim=-1)  # (*batch,)
    chosen = [first]
    nearest = ((points - points.gather(-2, _row_index(first, points))) ** 2).sum(-1)  # (*batch, n_points)
    for _ in range(1, n_clusters):
        nxt = nearest.argmax(dim=-1)
        chosen.append(nxt)
        distance = ((points - points.gather(-2, _row_index(nxt, points))) ** 2).sum(-1)
        nearest = torch.minimum(nearest, distance)
    return torch.stack(chosen, dim=-1)


def _row_index(index: torch.Tensor, points: torch.Tensor) -> torch.Tensor:
    """Gather index selecting row ``index`` of ``points``: ``(*batch,) -> (*batch, 1, dim)``."""
    return index[..., None, None].expand(*index.shape, 1, points.shape[-1])


def kmeans(points: torch.Tensor, n_clusters: int, n_iter: int = 50) -> tuple[torch.Tensor, torch.Tensor]:
    """Lloyd's k-means, batched over leading dimensions.

    points: ``(*batch, n_points, dim)``. Returns ``labels`` ``(*batch, n_points)`` int64 in
    ``0..n_clusters-1`` and ``centres`` ``(*batch, n_clusters, dim)``. Minimises
    ``sum_n ||p_n - c_{label(n)}||^2``; a cluster that empties keeps its previous centre.
    Ties in the assignment go to the lower centre index.
    """
    n_points = points.shape[-2]
    if not 1 <= n_clusters <= n_points:
        raise ValueError(f"n_clusters must be in 1..{n_points} (got {n_clusters})")
    if n_clusters == n_points:
        labels = torch.arange(n_points, device=points.device).expand(points.shape[:-1]).clone()
        return labels, points.clone()
    init = farthest_point_init(points, n_clusters)  # (*batch, C)
    centres = points.gather(-2, init[..., None].expand(*init.shape, points.shape[-1]))
    labels = torch.cdist(points, centres).argmin(dim=-1)
    for _ in range(n_iter):
        counts = torch.zeros(*labels.shape[:-1], n_clusters, dtype=points.dtype, device=points.device)
        counts.scatter_add_(-1, labels, torch.ones_like(labels, dtype=points.dtype))  # (*batch, C)
        sums = torch.zeros_like(centres).scatter_add_(
            -2, labels[..., None].expand_as(points), points
        )  # (*batch, C, dim)
        centres = torch.where(counts[..., None] > 0, sums / counts.clamp_min(1)[..., None], centres)
        new_labels = torch.cdist(points, centres).argmin(dim=-1)
        if torch.equal(new_labels, labels):
            break
        labels = new_labels
    return labels, centres
