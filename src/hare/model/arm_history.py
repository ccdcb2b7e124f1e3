"""The history a neighbour policy searches (model state, no decision rule): per run, the context, arm and reward of
every past pull in preallocated tensors, and each arm's ``k`` nearest past pulls to a query.

Distances are Euclidean, ``||x - y||`` (LNUCB-TA (Khosravi et al., 2025) eq. 3 and Reeve et al. 2018 both use the
metric of the context space), from ``||x||^2 + ||y||^2 - 2 x.y`` in float64 over the filled prefix only; each arm's
``k`` nearest are found by a per-arm selection (few arms) or ``k`` scatter-min passes over the history (more arms).
The policies that read it are in :mod:`hare.policies.neighbor_policy` and the modules of its families.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from hare.model.covariance import shared_vector

SELECTION_MAX_ARMS = 4
"""Up to this many arms a search selects each arm's neighbours in ``O(n_arms size)``; above it, ``k`` scatter-min
passes over the history find them in ``O(k size)``; the two agree slot for slot. Measured on CPU, one thread,
B = 20, k = 5, dim = 13, 30 calls, pulls drawn uniformly over the arms: at 5,000 pulls the selection takes 3.1,
3.9 and 4.2 ms at 2, 4 and 7 arms on continuous contexts (4.9, 4.7 and 4.5 ms for the scatter passes), and 3.7,
4.4 and 6.8 ms on contexts with three values per feature, where distances tie (4.7, 4.5 and 4.4 ms). Earlier, at
200 arms and 11,000 pulls, the scatter passes took 19 ms against 62 ms for the stable double sort they replaced."""


class ArmHistory(nn.Module):
    """Contexts and rewards of every pull, per run, in the order of the rounds.

    Every round appends one pull per run, so the pulls of all arms share one chronological
    buffer per run: ``contexts`` ``(n_runs, capacity, dim)``, ``squared_norms`` ``||y||^2``,
    ``rewards`` ``(n_runs, capacity)`` float64 and ``arms`` ``(n_runs, capacity)`` int64; ``size``
    (int64 scalar) pulls are stored. Per arm: ``counts`` ``(n_runs, n_arms)`` int64,
    ``reward_sums`` and ``reward_square_sums`` ``(n_runs, n_arms)`` float64. Up to :data:`SELECTION_MAX_ARMS`
    arms, ``foreign_pulls`` ``(n_runs, n_arms, capacity)`` float64 is 0 where slot ``s`` holds a pull of that arm
    and ``+inf`` elsewhere, so that one addition gives every arm's distances. A search costs
    ``O(n_runs size (dim + min(n_arms, k)))``.
    """

    def __init__(self, n_runs: int, n_arms: int, capacity: int, dim: int):
        super().__init__()
        self.register_buffer("contexts", torch.zeros(n_runs, capacity, dim, dtype=torch.float64))
        self.register_buffer("squared_norms", torch.zeros(n_runs, capacity, dtype=torch.float64))
        self.register_buffer("rewards", torch.zeros(n_runs, capacity, dtype=torch.float64))
        self.register_buffer("arms", torch.zeros(n_runs, capacity, dtype=torch.int64))
        self.register_buffer("size", torch.zeros((), dtype=torch.int64))
        self.register_buffer("counts", torch.zeros(n_runs, n_arms, dtype=torch.int64))
        self.register_buffer("reward_sums", torch.zeros(n_runs, n_arms, dtype=torch.float64))
        self.register_buffer("reward_square_sums", torch.zeros(n_runs, n_arms, dtype=torch.float64))
        foreign = (
            torch.full((n_runs, n_arms, capacity), math.inf, dtype=torch.float64)
            if n_arms <= SELECTION_MAX_ARMS
            else None
        )
        self.register_buffer("foreign_pulls", foreign)

    @property
    def capacity(self) -> int:
        return self.contexts.shape[1]

    def append(self, arms: torch.Tensor, contexts: torch.Tensor, rewards: torch.Tensor) -> None:
        """Store one pull per run: arms ``(n_runs,)``, contexts ``(n_runs, dim)``, rewards ``(n_runs,)``."""
        slot = int(self.size)
        if slot >= self.capacity:
            raise ValueError(f"arm history capacity {self.capacity} exceeded")
        runs = torch.arange(arms.shape[0], device=arms.device)
        rewards = rewards.to(torch.float64)
        contexts = contexts.to(torch.float64)
        self.contexts[:, slot] = contexts
        self.squared_norms[:, slot] = contexts.square().sum(-1)
        self.rewards[:, slot] = rewards
        self.arms[:, slot] = arms
        self.size += 1
        self.counts[runs, arms] += 1
        self.reward_sums[runs, arms] += rewards
        self.reward_square_sums[runs, arms] += rewards.square()
        if self.foreign_pulls is not None:
            self.foreign_pulls[runs, arms, slot] = 0.0

    def extend(self, arms: torch.Tensor, contexts: torch.Tensor, rewards: torch.Tensor) -> None:
        """Store ``M`` pulls that every run shares (a warm start's logs) at once: arms ``(M,)``, contexts
        ``(M, dim)``, rewards ``(M,)``. The state equals that of ``M`` calls of :meth:`append` to the bit: on an
        empty history the per-arm sums are accumulated in the order of the pulls (in double precision, as the
        appends add them); on a non-empty one the pulls go through :meth:`append` one by one."""
        m = int(arms.shape[0])
        slot = int(self.size)
        if slot + m > self.capacity:
            raise ValueError(f"arm history capacity {self.capacity} exceeded")
        if slot:
            n_runs = self.contexts.shape[0]
            for i in range(m):
                self.append(arms[i].expand(n_runs), contexts[i].expand(n_runs, -1), rewards[i].expand(n_runs))
            return
        rewards = rewards.to(torch.float64)
        contexts = contexts.to(torch.float64)
        self.contexts[:, :m] = contexts
        self.squared_norms[:, :m] = contexts.square().sum(-1)
        self.rewards[:, :m] = rewards
        self.arms[:, :m] = arms
        self.size += m
        n_arms = self.counts.shape[1]
        sums, square_sums = [0.0] * n_arms, [0.0] * n_arms
        for arm, reward in zip(arms.tolist(), rewards.tolist(), strict=True):
            sums[arm] += reward
            square_sums[arm] += reward * reward
        like = dict(dtype=torch.float64, device=self.reward_sums.device)
        self.counts += torch.bincount(arms, minlength=n_arms).to(self.counts.device)
        self.reward_sums += torch.tensor(sums, **like)
        self.reward_square_sums += torch.tensor(square_sums, **like)
        if self.foreign_pulls is not None:
            self.foreign_pulls[:, arms, torch.arange(m, device=arms.device)] = 0.0

    def means(self) -> torch.Tensor:
        """Mean reward of each arm, 0 for unpulled arms, ``(n_runs, n_arms)``."""
        return self.reward_sums / self.counts.clamp_min(1)

    def variances(self) -> torch.Tensor:
        """Population variance of each arm's rewards, 0 below two pulls, ``(n_runs, n_arms)``."""
        n = self.counts.clamp_min(1).to(torch.float64)
        mean = self.reward_sums / n
        return (self.reward_square_sums / n - mean.square()).clamp_min(0.0) * (self.counts >= 2)

    def nearest(self, contexts: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The ``k`` nearest past pulls of each arm to its context, nearest first.

        contexts: ``(n_runs, n_arms, dim)``. Returns distances ``(n_runs, n_arms, k)`` (``+inf`` past
        ``N_a``) and their rewards ``(n_runs, n_arms, k)`` (0 past ``N_a``): the first two outputs of
        :meth:`nearest_pulls`.
        """
        distances, rewards, _ = self.nearest_pulls(contexts, k)
        return distances, rewards

    def nearest_pulls(self, contexts: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """:meth:`nearest` with the slots of the pulls found: distances ``(n_runs, n_arms, k)``, rewards
        ``(n_runs, n_arms, k)`` and slots ``(n_runs, n_arms, k)`` int64 into the history (``size``: none).

        Each stored pull ``s`` (arm ``a_s``, context ``y_s``) is measured against the query of its own
        arm, ``||x_{a_s} - y_s||`` from ``||x||^2 + ||y||^2 - 2 x.y``; each arm's ``k`` nearest are found by
        a selection (up to :data:`SELECTION_MAX_ARMS` arms) or ``k`` scatter-min passes, which agree exactly;
        the ``k`` found are sorted stably by distance (equal distances: earlier pull first). Fewer than
        ``k`` pulls pad with ``+inf`` and 0.
        """
        n_runs, n_arms, _ = contexts.shape
        n = int(self.size)
        k_search = min(k, int(self.counts.max())) if n else 0
        x = contexts.to(torch.float64)
        stored, labels = self.contexts[:, :n], self.arms[:, :n]  # (n_runs, n, dim), (n_runs, n)
        shared = shared_vector(x, (n_arms,))
        if shared is not None:
            cross = torch.bmm(shared[:, None, :], stored.mT).squeeze(
                1
            )  # (n_runs, n); the row product is the faster CPU kernel
            query_norms = shared.square().sum(-1)[:, None]
        else:
            own = x.gather(1, labels[..., None].expand(-1, -1, x.shape[-1]))  # (n_runs, n, dim)
            cross = (own * stored).sum(-1)
            query_norms = x.square().sum(-1).gather(1, labels)
        distances = (query_norms + self.squared_norms[:, :n] - 2.0 * cross).clamp_min(0.0).sqrt()  # (n_runs, n)
        if not k_search:
            index = torch.zeros(n_runs, n_arms, 0, dtype=torch.int64, device=x.device)
        elif n_arms <= SELECTION_MAX_ARMS:
            index = self._nearest_by_selection(distances, labels, n_arms, k_search)
        else:
            index = self._nearest_by_scatter(distances, labels, n_arms, k_search)
        flat = index.flatten(1)
        none = flat == n  # slot n: no neighbour
        stored_slot = flat.clamp_max(max(n - 1, 0))
        nearest_distances = distances.gather(1, stored_slot).masked_fill_(none, math.inf).view(n_runs, n_arms, k_search)
        nearest_rewards = (
            self.rewards[:, :n].gather(1, stored_slot).masked_fill_(none, 0.0).view(n_runs, n_arms, k_search)
        )
        order = torch.sort(nearest_distances, dim=-1, stable=True).indices
        nearest_distances = nearest_distances.gather(-1, order)
        nearest_rewards = nearest_rewards.gather(-1, order)
        nearest_slots = index.gather(-1, order)
        if k_search < k:
            pad = (0, k - k_search)
            nearest_distances = torch.nn.functional.pad(nearest_distances, pad, value=math.inf)
            nearest_rewards = torch.nn.functional.pad(nearest_rewards, pad, value=0.0)
            nearest_slots = torch.nn.functional.pad(nearest_slots, pad, value=n)
        return nearest_distances, nearest_rewards, nearest_slots

    def direct_distances(self, contexts: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
        """``||x_a - y_s||`` computed from the difference, ``(n_runs, n_arms, k)`` float64 (``+inf`` at slot ``size``),
        for contexts ``(n_runs, n_arms, dim)`` and slots ``(n_runs, n_arms, k)`` from :meth:`nearest_pulls`.

        The search's ``sqrt(||x||^2 + ||y||^2 - 2 x.y)`` can leave about ``1e-8`` where ``x = y`` (the three terms
        round differently: in 10 to 25 % of repeated unit-norm contexts of 13 to 117 dimensions, measured); the
        difference is exactly 0 there, so a repeated context is an exact match. ``O(n_runs n_arms k dim)``."""
        n_runs, n_arms, k = slots.shape
        n = int(self.size)
        if not n or not k:
            return torch.full(slots.shape, math.inf, dtype=torch.float64, device=slots.device)
        dim = self.contexts.shape[-1]
        flat = slots.reshape(n_runs, n_arms * k).clamp_max(n - 1)
        stored = self.contexts[:, :n].gather(1, flat[..., None].expand(-1, -1, dim)).view(n_runs, n_arms, k, dim)
        distances = torch.linalg.vector_norm(contexts.to(torch.float64)[:, :, None, :] - stored, dim=-1)
        return distances.masked_fill(slots >= n, math.inf)

    def _nearest_by_selection(self, distances: torch.Tensor, labels: torch.Tensor, n_arms: int, k: int) -> torch.Tensor:
        """Slots ``(n_runs, n_arms, k)`` of each arm's ``k`` nearest pulls in the order of the rounds (slot ``size``:
        none), in ``O(n_arms size)``. Each arm's distances are ``d_s + foreign_s`` (``+inf`` on other arms' pulls).
        One ``topk`` takes ``k +`` :data:`TIE_MARGIN` candidates; when the last of them lies beyond ``d_k`` (or the arm
        has fewer than ``k`` pulls) they hold every pull within ``d_k``, and the choice among the candidates is
        :func:`earliest_at_kth`. Otherwise (more ties at ``d_k`` than the margin) the same choice runs over all
        pulls."""
        n_runs, n = distances.shape
        foreign = self.foreign_pulls
        if foreign is None:  # a history made for more arms than SELECTION_MAX_ARMS then was
            mine = labels[:, None, :] == torch.arange(n_arms, device=labels.device)[None, :, None]
            foreign = torch.where(mine, 0.0, math.inf).to(distances.dtype)
        per_arm = distances[:, None, :] + foreign[:, :, :n]  # (n_runs, n_arms, n)
        values, slots = per_arm.topk(min(n, k + TIE_MARGIN), dim=-1, largest=False)  # ascending
        kth = values[..., k - 1 : k]  # (n_runs, n_arms, 1); +inf: fewer than k pulls
        if values.shape[-1] < n and not bool(((values[..., -1:] > kth) | (kth == math.inf)).all()):
            values, slots = per_arm, torch.arange(n, device=labels.device).expand_as(per_arm)
        return earliest_at_kth(values, slots, kth, k, n)

    def _nearest_by_scatter(self, distances: torch.Tensor, labels: torch.Tensor, n_arms: int, k: int) -> torch.Tensor:
        """Slots ``(n_runs, n_arms, k)`` of each arm's ``k`` nearest pulls, nearest first (slot ``size``: none), in
        ``O(k size)`` whatever the number of arms: ``k`` times, each arm's nearest remaining distance by a scatter-min
        over the arms, its earliest pull at that distance by a scatter-min of the slots that attain it; that pull
        then leaves the search."""
        n_runs, n = distances.shape
        device = distances.device
        remaining = torch.cat(
            [distances, torch.full((n_runs, 1), math.inf, dtype=distances.dtype, device=device)], dim=1
        )
        padded_labels = torch.cat(
            [labels, torch.zeros(n_runs, 1, dtype=labels.dtype, device=device)], dim=1
        )  # slot n: no pull
        slots = torch.arange(n + 1, device=device).expand(n_runs, n + 1)
        no_distance = torch.full((n_runs, n_arms), math.inf, dtype=distances.dtype, device=device)
        no_slot = torch.full((n_runs, n_arms), n, dtype=torch.int64, device=device)
        found = []
        for _ in range(k):
            nearest = no_distance.scatter_reduce(1, padded_labels, remaining, "amin")  # (n_runs, n_arms)
            level = nearest.gather(1, padded_labels)  # (n_runs, n + 1): the nearest distance of each pull's arm
            attains = (remaining == level) & (level < math.inf)
            slot = no_slot.scatter_reduce(1, padded_labels, torch.where(attains, slots, n), "amin")  # (n_runs, n_arms)
            found.append(slot)
            remaining.scatter_(1, slot, math.inf)
        return torch.stack(found, dim=-1)


TIE_MARGIN = 8
"""Candidates beyond ``k`` that a neighbour search takes, so that pulls tied at the ``k``-th distance are among them."""


def earliest_at_kth(values: torch.Tensor, slots: torch.Tensor, kth: torch.Tensor, k: int, size: int) -> torch.Tensor:
    """The ``k`` slots with the smallest values, equal values taken in the order of the slots, sorted; ``size`` for
    none.

    values ``(..., m)`` (``+inf``: not a pull of this arm) with their slots ``(..., m)`` (int64), holding every value
    ``<= kth``; kth ``(..., 1)`` the ``k``-th smallest value. One integer ``topk`` over keys ``slot - size - 1`` below
    ``kth``, ``slot`` at it (finite only) and ``slot + size + 1`` beyond (read as ``size``). Returns ``(..., k)`` int64.
    """
    at_kth = values == torch.where(kth < math.inf, kth, -1.0)  # fewer than k pulls: all taken, none at d_k
    nearer = values < kth
    keys = torch.where(nearer, slots - (size + 1), torch.where(at_kth, slots, slots + (size + 1)))
    chosen = keys.topk(k, dim=-1, largest=False).values
    return torch.where(chosen < 0, chosen + (size + 1), chosen.clamp_max(size)).sort(dim=-1).values


def history_bytes(n_arms: int, dim: int, capacity: int) -> int:
    """Bytes of one run's :class:`ArmHistory` of ``capacity`` pulls, float64 and int64 (8 bytes each), with the
    search's temporaries: ``8 capacity (dim + 6)`` (contexts ``(capacity, dim)``; norms, rewards, arms, and the
    search's distances and slots, ``(capacity,)`` each), plus ``8 capacity n_arms`` of ``foreign_pulls``
    ``(n_arms, capacity)`` up to :data:`SELECTION_MAX_ARMS` arms."""
    return 8 * capacity * (dim + 6 + (n_arms if n_arms <= SELECTION_MAX_ARMS else 0))
