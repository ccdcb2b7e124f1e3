"""Per-arm kernel dictionaries: the exact inverse of ``K(X_a, X_a) + lam I`` for every (run, arm) block.

A point is a pair (context, arm) and two points interact only within an arm,

    k((x, a), (x', a')) = 1[a = a'] exp(-||x - x'||^2 / (2 bandwidth^2)),

so the Gram matrix of a run's dictionary is block diagonal by arm, and so is its inverse. The blocks are held
apart: block ``(b, a)`` holds the ``n_a`` points of arm ``a`` of run ``b`` and ``P_a = (K(X_a, X_a) + lam I)^{-1}``,
which costs ``sum_a n_a^2`` per run instead of ``(sum_a n_a)^2`` for the whole inverse.

Layout. Runs pull different arms, so block sizes are ragged; every block is padded to one ``capacity`` ``C``: the
largest block of any run, grown by :data:`GROWTH` (never beyond ``max_points``) when an addition finds its block full.
An empty slot has a zero row and column in ``P_a``, a zero target, and ``occupied`` false; the kernel row of a query
is zero there, so padding changes no posterior. Memory and work follow the points held, not ``max_points``.

Posterior. For a query ``z = (x, a)`` with ``k = K(X_a, x)`` (``k(z, z) = 1``) and targets ``y_a``,

    w = P_a k,    mu(z) = w^T y_a,    sigma^2(z) = 1 - w^T k.

Sliding window. The dictionary is a ring buffer over all arms: update ``m`` writes ring entry ``m mod max_points``,
recording where its point went (arm, slot); once ``max_points`` points are held, ``when_full = "window"`` removes the
point of ring entry ``m mod max_points``, the one added ``max_points`` updates earlier, before the new point enters
(the ring of :class:`hare.policies.kernel_dense.DenseKernelDictionary`, so the same point leaves); ``"stop"`` keeps
what it has.

Updates. Removing slot ``j`` of block ``b`` (``c = P_b e_j``) and appending the new point to a free slot ``j'`` of
block ``a`` (``k`` its kernel row, ``u`` its weights after the removal, ``s`` the Schur complement):

    P_b <- P_b - c c^T / c_jj                                   (removal: row and column j become zero)
    u = P_a k - 1[a = b] c (c^T k) / c_jj,  u_j' = 0,  s = 1 + lam - k^T u,  v = u - e_j'
    P_a <- P_a + v v^T / s                                      (addition: the block Schur complement)

With ``a = b`` (and ``j' = j``) the two form one rank-2 Woodbury step ``P_a <- P_a + [c v] diag(-1/c_jj, 1/s)
[c v]^T``; otherwise they are rank-1 steps on two blocks. Both ``c`` and ``P_a k`` are read off what the round
already holds: ``P_a k`` is the ``w`` that :meth:`KernelDictionary.posterior` computed for the pulled arm.

Deferred application. The rank-1 terms ``(arm g_m, vector v_m, scale d_m)`` are not written into the blocks each
update: up to :data:`PENDING_TERMS` of them wait in ``pending``, and the exact inverse of block ``a`` is

    P_a + sum_{m: g_m = a} d_m v_m v_m^T,

which the posterior reads at ``O(C R)`` per arm (``w += sum_m [g_m = a] d_m v_m (v_m^T k)``). When the list is full
all terms are folded into the blocks by one batched low-rank product (``P <- P + V^T diag(d 1[g = a]) V`` per block),
so the ``C^2`` blocks are read and written once per ``PENDING_TERMS / 2`` updates instead of every update.

Every ``refactor_every`` updates the blocks are recomputed from their points by Cholesky (and the pending terms
dropped), so rounding drift cannot accumulate.
"""

from __future__ import annotations

import math

import torch
from torch import nn

PENDING_TERMS = 32
"""Rank-1 terms that wait before being folded into the blocks (two per update once the window slides)."""

GROWTH = 1.125
"""Factor by which the block capacity and the ring grow when full (by at least :data:`MIN_GROWTH` slots): small, so
that a full dictionary's blocks are padded little beyond the largest block; a copy every ``C / 8`` additions costs
``8 / C`` of a round's reads."""

MIN_GROWTH = 16
"""Fewest slots a growth adds."""

INITIAL_CAPACITY = 16
"""Block capacity and ring length of a new dictionary (or ``max_points`` if smaller)."""


def rbf_kernel(x: torch.Tensor, y: torch.Tensor, bandwidth: float) -> torch.Tensor:
    """``exp(-||x_i - y_j||^2 / (2 bandwidth^2))`` for ``x (..., n, dim)``, ``y (..., m, dim)``: ``(..., n, m)``."""
    squared = (x * x).sum(-1)[..., :, None] + (y * y).sum(-1)[..., None, :] - 2.0 * x @ y.mT
    return torch.exp(-squared.clamp_min(0.0) / (2.0 * bandwidth**2))


def block_state_bytes(n_arms: int, dim: int, capacity: int, max_points: int) -> int:
    """Bytes of one run's :class:`KernelDictionary` at block capacity ``capacity``: the blocks ``8 A C^2``, their
    points, norms, targets and occupancy ``A C (8 dim + 17)``, the pending terms ``R (8 C + 16)`` and the ring
    ``16 max_points``."""
    blocks = 8 * n_arms * capacity**2
    return blocks + n_arms * capacity * (8 * dim + 17) + PENDING_TERMS * (8 * capacity + 16) + 16 * max_points


def peak_bytes(n_arms: int, dim: int, max_points: int, length: int) -> int:
    """Peak bytes of one run's :class:`KernelDictionary` fed ``length`` points, arms pulled evenly.

    ``n = min(max_points, length)`` points are held in blocks of capacity ``C = min(n, GROWTH n / A + MIN_GROWTH)``
    (the largest block and the growth past it), with two more ``8 A C^2`` while a refactorisation holds the Gram
    blocks and their Cholesky factors beside the inverse. A run that gives every point to one arm needs ``C = n``: up
    to ``A`` times more.
    """
    held = min(max_points, length)
    capacity = min(held, math.ceil(GROWTH * held / n_arms) + MIN_GROWTH)
    return block_state_bytes(n_arms, dim, capacity, max_points) + 16 * n_arms * capacity**2


def grown(size: int, needed: int, limit: int) -> int:
    """The next size of a buffer of ``size`` that must hold ``needed``: ``GROWTH`` times larger (at least ``MIN_GROWTH``
    more), at most ``limit``."""
    return min(limit, max(needed, math.ceil(size * GROWTH), size + MIN_GROWTH))


class KernelDictionary(nn.Module):
    """Per-run, per-arm kernel dictionaries and the exact inverse of every block (module docstring).

    Buffers (``B`` runs, ``A`` arms, capacity ``C``, ``R = PENDING_TERMS``, ring length ``L <= max_points``):
    ``points`` ``(B, A, C, dim)``, ``norms`` (squared) and ``targets`` ``(B, A, C)`` float64, ``occupied``
    ``(B, A, C)`` bool, ``inverse`` ``(B, A, C, C)`` float64 (the folded ``P_a``), ``pending`` ``(B, R, C)`` float64,
    ``pending_arms`` ``(B, R)`` int64, ``pending_scales`` ``(B, R)`` float64, ``ring_arms`` and ``ring_slots``
    ``(B, L)`` int64, and the counters ``n_updates`` and ``n_pending``. Every run adds one point per update, so the
    ring entry and the number of pending terms are the same for every run; the arm and slot differ.
    """

    def __init__(
        self,
        n_runs: int,
        n_arms: int,
        dim: int,
        max_points: int,
        bandwidth: float,
        lam: float,
        when_full: str,
        refactor_every: int,
    ):
        super().__init__()
        self.n_runs, self.n_arms, self.dim = n_runs, n_arms, dim
        self.max_points = max_points
        self.bandwidth = bandwidth
        self.lam = lam
        self.when_full = when_full
        self.refactor_every = refactor_every
        capacity = min(max_points, INITIAL_CAPACITY)
        f64 = torch.float64
        self.register_buffer("points", torch.zeros(n_runs, n_arms, capacity, dim, dtype=f64))
        self.register_buffer("norms", torch.zeros(n_runs, n_arms, capacity, dtype=f64))
        self.register_buffer("targets", torch.zeros(n_runs, n_arms, capacity, dtype=f64))
        self.register_buffer("occupied", torch.zeros(n_runs, n_arms, capacity, dtype=torch.bool))
        self.register_buffer("inverse", torch.zeros(n_runs, n_arms, capacity, capacity, dtype=f64))
        self.register_buffer("pending", torch.zeros(n_runs, PENDING_TERMS, capacity, dtype=f64))
        self.register_buffer("pending_arms", torch.zeros(n_runs, PENDING_TERMS, dtype=torch.int64))
        self.register_buffer("pending_scales", torch.zeros(n_runs, PENDING_TERMS, dtype=f64))
        self.register_buffer("ring_arms", torch.zeros(n_runs, capacity, dtype=torch.int64))
        self.register_buffer("ring_slots", torch.zeros(n_runs, capacity, dtype=torch.int64))
        self.register_buffer("n_updates", torch.zeros((), dtype=torch.int64))
        self.register_buffer("n_pending", torch.zeros((), dtype=torch.int64))
        self._rows: tuple | None = None

    @property
    def capacity(self) -> int:
        """Slots per block, ``C``."""
        return self.inverse.shape[-1]

    def kernel_rows(self, contexts: torch.Tensor) -> torch.Tensor:
        """``K(X_a, x_a)`` of every arm's query ``x_a``, contexts ``(B, A, dim)``: ``(B, A, C)``, zero at empty
        slots."""
        x = contexts.to(torch.float64)
        cross = torch.matmul(self.points, x[..., None]).squeeze(-1)
        squared = (x * x).sum(-1)[..., None] + self.norms - 2.0 * cross
        return torch.exp(-squared.clamp_min(0.0) / (2.0 * self.bandwidth**2)) * self.occupied

    def weights(self, k: torch.Tensor) -> torch.Tensor:
        """``w = P_a k`` with the exact inverse (folded blocks plus pending terms) of each row's arm: kernel rows ``k``
        ``(B, A, C)`` -> ``(B, A, C)``."""
        w = torch.matmul(k[..., None, :], self.inverse).squeeze(-2)
        r = int(self.n_pending)
        if r:
            terms = self.pending[:, :r]
            arms = torch.arange(self.n_arms, device=k.device)
            scales = self.pending_scales[:, None, :r] * (self.pending_arms[:, None, :r] == arms[None, :, None])
            w = w + torch.matmul(torch.matmul(k, terms.mT) * scales, terms)
        return w

    def posterior(self, contexts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean and standard deviation of every arm, each ``(B, A)``; contexts ``(B, A, dim)``.

        The kernel rows and weights are kept for an :meth:`add` of the same contexts before the next change.
        """
        k = self.kernel_rows(contexts)
        w = self.weights(k)
        self._rows = (contexts, contexts._version, int(self.n_updates), k, w)
        mean = (w * self.targets).sum(-1)
        variance = (1.0 - (w * k).sum(-1)).clamp_min(0.0)
        return mean, variance.sqrt()

    def _cached_rows(self, source: torch.Tensor | None, arms: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor] | None:
        """The pulled arms' kernel rows and weights ``(B, C)`` from the last :meth:`posterior`, when it read
        ``source`` unchanged and the dictionary has not changed since; else ``None``."""
        cached = self._rows
        if cached is None or source is None or cached[0] is not source:
            return None
        if cached[1] != source._version or cached[2] != int(self.n_updates):
            return None
        index = arms[:, None, None].expand(-1, 1, cached[3].shape[-1])
        return cached[3].gather(1, index).squeeze(1), cached[4].gather(1, index).squeeze(1)

    def add(
        self,
        contexts: torch.Tensor,
        arms: torch.Tensor,
        rewards: torch.Tensor,
        source: torch.Tensor | None = None,
    ) -> None:
        """Append one point per run: contexts ``(B, dim)``, arms and rewards ``(B,)``; ``source`` ``(B, A, dim)``:
        the contexts the pulled ones were read from, whose kernel rows a preceding :meth:`posterior` may hold."""
        count = int(self.n_updates)
        full = count >= self.max_points
        if full and self.when_full == "stop":
            return
        x = contexts.to(torch.float64)
        rows = self._cached_rows(source, arms)
        self._rows = None
        if rows is None:
            k_all = self.kernel_rows(x[:, None, :].expand(-1, self.n_arms, -1))
            index = arms[:, None, None].expand(-1, 1, k_all.shape[-1])
            rows = k_all.gather(1, index).squeeze(1), self.weights(k_all).gather(1, index).squeeze(1)
        k, w = rows
        runs = torch.arange(self.n_runs, device=x.device)
        entry = count % self.max_points
        removal = None
        if full:
            removal = self._remove(runs, arms, k, w, entry)
            w = removal[2]
        needed = int(self.occupied[runs, arms].sum(-1).max()) + 1
        if needed > self.capacity:
            self._grow_blocks(grown(self.capacity, needed, self.max_points))
            pad = self.capacity - k.shape[-1]
            k, w = nn.functional.pad(k, (0, pad)), nn.functional.pad(w, (0, pad))
            if removal is not None:
                removal = (removal[0], (nn.functional.pad(removal[1][0], (0, pad)), removal[1][1]), w)
        block_occupied = self.occupied[runs, arms]
        free = (~block_occupied).to(torch.uint8).argmax(-1)
        at_free = torch.arange(self.capacity, device=x.device) == free[:, None]
        k = k * block_occupied
        u = w.masked_fill(at_free, 0.0)
        schur = 1.0 + self.lam - (k * u).sum(-1)
        if removal is not None:
            self._push(removal[0], removal[1][0], removal[1][1])
        self._push(arms, u.masked_fill(at_free, -1.0), 1.0 / schur)
        self.points[runs, arms, free] = x
        self.norms[runs, arms, free] = (x * x).sum(-1)
        self.targets[runs, arms, free] = rewards.to(torch.float64)
        self.occupied[runs, arms, free] = True
        if entry >= self.ring_arms.shape[1]:
            self._grow_ring(grown(self.ring_arms.shape[1], entry + 1, self.max_points))
        self.ring_arms[:, entry] = arms
        self.ring_slots[:, entry] = free
        self.n_updates += 1
        if int(self.n_updates) % self.refactor_every == 0:
            self.refactorise()
        elif int(self.n_pending) + 2 > PENDING_TERMS:
            self.fold()

    def _remove(
        self, runs: torch.Tensor, arms: torch.Tensor, k: torch.Tensor, w: torch.Tensor, entry: int
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor], torch.Tensor]:
        """Take out the point of ring ``entry`` of every run: returns its block ``b`` ``(B,)``, the removal term
        ``(c, -1 / c_jj)`` and the pulled arm's weights after the removal, ``P_a k - 1[a = b] c (c^T k) / c_jj``."""
        block, slot = self.ring_arms[:, entry], self.ring_slots[:, entry]
        column = self.inverse[runs, block, slot]
        r = int(self.n_pending)
        if r:
            terms = self.pending[:, :r]
            at_slot = terms.gather(2, slot[:, None, None].expand(-1, r, 1)).squeeze(-1)
            scales = self.pending_scales[:, :r] * (self.pending_arms[:, :r] == block[:, None]) * at_slot
            column = column + torch.matmul(scales[:, None, :], terms).squeeze(1)
        pivot = column.gather(1, slot[:, None]).squeeze(1)
        same = (block == arms).to(torch.float64)
        w = w - column * (same * (column * k).sum(-1) / pivot)[:, None]
        self.occupied[runs, block, slot] = False
        self.targets[runs, block, slot] = 0.0
        return block, (column, -1.0 / pivot), w

    def _push(self, arms: torch.Tensor, vectors: torch.Tensor, scales: torch.Tensor) -> None:
        """Queue the rank-1 term ``scales v v^T`` on block ``arms`` of every run: ``(B,)``, ``(B, C)``, ``(B,)``."""
        r = int(self.n_pending)
        self.pending[:, r] = vectors
        self.pending_arms[:, r] = arms
        self.pending_scales[:, r] = scales
        self.n_pending += 1

    def fold(self) -> None:
        """Write the pending terms into the blocks, ``P_a <- P_a + sum_{m: g_m = a} d_m v_m v_m^T``, as one batched
        ``(C, R) @ (R, C)`` product per block."""
        r = int(self.n_pending)
        if not r:
            return
        terms = self.pending[:, None, :r].expand(-1, self.n_arms, -1, -1)
        arms = torch.arange(self.n_arms, device=terms.device)
        scales = self.pending_scales[:, None, :r] * (self.pending_arms[:, None, :r] == arms[None, :, None])
        flat = self.inverse.view(-1, self.capacity, self.capacity)
        left = (terms * scales[..., None]).reshape(-1, r, self.capacity).mT
        flat.baddbmm_(left, terms.reshape(-1, r, self.capacity))
        self.n_pending.zero_()

    def block_inverse(self) -> torch.Tensor:
        """The exact inverses ``(B, A, C, C)``: the folded blocks plus the pending terms (a copy)."""
        r = int(self.n_pending)
        if not r:
            return self.inverse.clone()
        terms = self.pending[:, None, :r]
        arms = torch.arange(self.n_arms, device=terms.device)
        scales = self.pending_scales[:, None, :r] * (self.pending_arms[:, None, :r] == arms[None, :, None])
        return self.inverse + (terms * scales[..., None]).mT @ terms

    def gram(self) -> torch.Tensor:
        """``K(X_a, X_a) + lam I`` per block on occupied slots, identity elsewhere: ``(B, A, C, C)``."""
        gram = torch.matmul(self.points, self.points.mT).mul_(-2.0)
        gram.add_(self.norms[..., :, None]).add_(self.norms[..., None, :]).clamp_min_(0.0)
        gram.mul_(-1.0 / (2.0 * self.bandwidth**2)).exp_()
        gram.mul_(self.occupied[..., :, None] & self.occupied[..., None, :])
        gram.diagonal(dim1=-2, dim2=-1).add_(torch.where(self.occupied, self.lam, 1.0))
        return gram

    def refactorise(self) -> None:
        """Recompute every block's ``(K(X_a, X_a) + lam I)^{-1}`` by Cholesky (zero on empty slots) and drop the
        pending terms."""
        factor = torch.linalg.cholesky(self.gram())
        inverse = torch.cholesky_inverse(factor)
        del factor
        inverse.mul_(self.occupied[..., :, None] & self.occupied[..., None, :])
        self.inverse = inverse
        self.n_pending.zero_()

    def _grow_blocks(self, capacity: int) -> None:
        """Pad every block to ``capacity`` slots (empty ones: zero rows and columns)."""
        old = self.capacity

        def padded(tensor: torch.Tensor, dims: tuple[int, ...]) -> torch.Tensor:
            shape = list(tensor.shape)
            for d in dims:
                shape[d] = capacity
            out = tensor.new_zeros(shape)
            out[tuple(slice(0, old) if d in dims else slice(None) for d in range(tensor.dim()))] = tensor
            return out

        self.inverse = padded(self.inverse, (2, 3))
        self.points = padded(self.points, (2,))
        self.norms = padded(self.norms, (2,))
        self.targets = padded(self.targets, (2,))
        self.occupied = padded(self.occupied, (2,))
        self.pending = padded(self.pending, (2,))

    def _grow_ring(self, length: int) -> None:
        """Lengthen the ring to ``length`` entries."""
        extra = length - self.ring_arms.shape[1]
        self.ring_arms = nn.functional.pad(self.ring_arms, (0, extra))
        self.ring_slots = nn.functional.pad(self.ring_slots, (0, extra))
