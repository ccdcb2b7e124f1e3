"""Nearest-neighbour bandit policies: kNN-UCB, kNN-KL-UCB, (Lin+kNN)-UCB, LNUCB-TA (Khosravi et al., 2025)
and the "enhanced" Beta-Thompson, eps-greedy and LinThompson of LNUCB-TA Appendix B.

Every policy keeps, per run, the context, arm and reward of every past round in preallocated
tensors (:class:`ArmHistory`), and searches them for all runs and arms at once: Euclidean
distances ``||x - y||`` (LNUCB-TA eq. 3 and Reeve et al. 2018 both use the metric of the context
space) from ``||x||^2 + ||y||^2 - 2 x.y`` in float64 over the filled prefix only, then each arm's ``k``
nearest by a per-arm selection (few arms) or ``k`` scatter-min passes over the history (more arms).

Notation: ``N_a`` pulls of arm ``a`` before round ``t``; ``r_{a,k}(x)`` distance from ``x`` to its
``k``-th nearest neighbour among them; ``f_{a,k}(x)`` mean reward of those ``k`` neighbours.

Length: one module, one algorithm family (the package keeps one module per family): every policy here scores
arms from the same :class:`ArmHistory` search in the notation above; LNUCB-TA and the three enhanced variants
of its Appendix B share the Alg. 2 adjustment (:class:`AdaptiveNeighborMixin`), and the linear ones the
per-arm ridge of :class:`LinearNeighborPolicy`. Split by paper, the history and the mixin would move to a
third module that only these import, while each policy class is already short.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, ClassVar

import torch
from torch import nn

from hare.envs.base import BanditEnvironment, LoggedRounds, Observation
from hare.model.covariance import RidgeState, shared_vector
from hare.policies.base import (
    Policy,
    PolicyConfig,
    kl_upper_bound,
    pulled_contexts,
    register_policy,
    temporal_attention_rate,
    upper_confidence_bound,
)
from hare.policies.linear import ROW_PRODUCTS_MIN_DIM, linear_means
from hare.random import CounterRNG
from hare.typed import at_least, nonnegative, one_of, positive, unit_interval

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


KL_BISECTIONS = 50
"""Halvings of kNN-KL-UCB's bisection (:func:`hare.policies.base.kl_upper_bound`): a bracket below ``2^-50``."""


K_ROUNDINGS = ("round", "floor")
"""How :func:`adaptive_k` makes ``k`` an integer: Alg. 2 line 5 as written (``round``) or LNUCB-TA's public code
(``floor``)."""


def adaptive_k(variances: torch.Tensor, theta_min: int, theta_max: int, rounding: str = "round") -> torch.Tensor:
    """LNUCB-TA Alg. 2 line 5: ``k = theta_min + (theta_max - theta_min) Var(z_a)``, rounded to the
    nearest integer (``rounding="round"``, :func:`torch.round`: halves to even, so 2.5 -> 2 and 3.5 -> 4) or,
    as LNUCB-TA's public code does, cut to its integer part (``"floor"``: 2.5 -> 2, 2.7 -> 2, 3.5 -> 3), then
    clipped to ``[theta_min, theta_max]`` (a variance above 1 would leave the range).
    ``(n_runs, n_arms)`` float -> int64."""
    if rounding not in K_ROUNDINGS:
        raise ValueError(f"rounding must be one of {K_ROUNDINGS}, not {rounding!r}")
    raw = theta_min + (theta_max - theta_min) * variances
    k = torch.floor(raw) if rounding == "floor" else torch.round(raw)
    return k.clamp(theta_min, theta_max).to(torch.int64)


def mean_of_first_k(rewards: torch.Tensor, counts: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """LNUCB-TA eq. 3 / Alg. 2 line 7: ``f = (1/k) sum`` of the ``k`` nearest rewards where the arm has
    ``N_a >= k`` pulls, else 0 (the condition of Alg. 2 line 6). rewards ``(n_runs, n_arms, k_max)``
    nearest first; counts, k ``(n_runs, n_arms)`` -> ``(n_runs, n_arms)``."""
    cumulative = rewards.cumsum(-1)
    total = cumulative.gather(-1, (k - 1).clamp_min(0)[..., None]).squeeze(-1)
    return torch.where(counts >= k, total / k, torch.zeros_like(total))


def distance_weighted_mean_of_first_k(
    distances: torch.Tensor, rewards: torch.Tensor, counts: torch.Tensor, k: torch.Tensor
) -> torch.Tensor:
    """LNUCB-TA's public-code reading of Alg. 2 line 7 (``knn_weights="distance"``): distance-weighted kNN
    regression over the same ``k`` nearest neighbours as :func:`mean_of_first_k`,

        f = sum_i w_i r_i / sum_i w_i,   w_i = 1 / d_i   (i = 1..k),

    and, when some of the ``k`` lie at distance exactly 0, the mean reward of those exact matches (they take all
    the weight); 0 where ``N_a < k`` (Alg. 2 line 6 stays). distances ``(n_runs, n_arms, k_max)`` (``+inf`` past
    ``N_a``), rewards ``(n_runs, n_arms, k_max)``, nearest first; counts, k ``(n_runs, n_arms)`` -> ``(n_runs,
    n_arms)``."""
    within = torch.arange(distances.shape[-1], device=distances.device) < k[..., None]  # (n_runs, n_arms, k_max)
    exact = within & (distances == 0)
    n_exact = exact.sum(-1)
    exact_mean = torch.where(exact, rewards, 0.0).sum(-1) / n_exact.clamp_min(1)
    weights = torch.where(within & (distances > 0), distances.reciprocal(), 0.0)  # 1/inf = 0 past N_a
    total_weight = weights.sum(-1)
    weighted = (weights * rewards).sum(-1) / torch.where(total_weight > 0, total_weight, 1.0)
    f = torch.where(n_exact > 0, exact_mean, weighted)
    return torch.where(counts >= k, f, torch.zeros_like(f))


@dataclass(frozen=True)
class KNNUCBConfig(PolicyConfig):
    """kNN-UCB / kNN-KL-UCB (Reeve, Mellor & Brown 2018).

    theta: exploration constant in ``sqrt(theta log t / k)`` (the ``rho``/``c`` of LNUCB-TA Table 5);
    lipschitz: ``phi``, the weight of the neighbourhood radius; max_neighbors: largest ``k`` searched.
    Tunable: theta (LNUCB-TA Table 5 searches it for both kNN-UCB and kNN-KL-UCB).
    """

    tunable: ClassVar[tuple[str, ...]] = ("theta",)

    theta: Annotated[float, positive] = 1.0
    lipschitz: Annotated[float, nonnegative] = 1.0
    max_neighbors: Annotated[int, at_least(1)] = 50


class NeighborPolicy(Policy):
    """Holds the :class:`ArmHistory` (capacity: the horizon plus any warm start) and appends every pull to it."""

    def __init__(self, config: PolicyConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        self.history = ArmHistory(env.n_runs, env.n_arms, env.history_capacity, env.dim)

    def update(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        """:meth:`learn`, then the pull joins the history."""
        self.learn(observation, arms, rewards)
        self.history.append(arms, pulled_contexts(observation.contexts, arms), rewards)

    def learn(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        """What a pull teaches besides the history (a ridge model, counts, global sums); nothing here. It never
        reads the history, so a warm start may fill the history first (:meth:`warm_start`)."""

    def warm_start(self, logs: LoggedRounds) -> None:
        """The state of :meth:`Policy.warm_start` (every log through :meth:`update` in order), faster: the
        history takes the ``M`` logs at once (:meth:`ArmHistory.extend`, the state of ``M`` appends to the bit),
        then :meth:`learn` sees each log in order (skipped where it learns nothing)."""
        if int(self.history.size) or not len(logs):
            super().warm_start(logs)
            return
        self.history.extend(logs.arms, pulled_contexts(logs.contexts, logs.arms), logs.rewards)
        if type(self).learn is NeighborPolicy.learn:
            return
        for m in range(len(logs)):
            self.learn(*logs.step(m, self.n_runs))


@register_policy("knn_ucb")
class KNNUCB(NeighborPolicy):
    """k-NN UCB (Reeve, Mellor & Brown 2018, Alg. 1), at round ``t`` (1-based ``t+1`` here):

        U_{a,k} = sqrt(theta log t / k),
        k_a = argmin_{1 <= k <= min(N_a, max_neighbors)} U_{a,k} + phi r_{a,k}(x),
        I_a = f_{a,k_a}(x) + U_{a,k_a} + phi r_{a,k_a}(x),

    ``I_a = +inf`` for an unpulled arm. ``phi`` is a constant (``lipschitz``); Reeve et al. allow
    ``phi(t)`` and take a constant bound on the Lipschitz constant in their analysis. The cap
    ``max_neighbors`` bounds the search (LNUCB-TA App. B caps ``k`` the same way for fairness).
    """

    config_class = KNNUCBConfig
    per_run_hyperparameters = ("theta",)

    def neighbourhood(self, contexts: torch.Tensor, t: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Mean ``f_{a,k_a}``, level ``theta log t / k_a`` and radius term ``phi r_{a,k_a}``, each ``(n_runs,
        n_arms)``."""
        c = self.config
        distances, rewards = self.history.nearest(contexts, c.max_neighbors)
        k = torch.arange(1, c.max_neighbors + 1, device=distances.device, dtype=torch.float64)
        log_t = math.log(t + 1)
        uncertainty = torch.sqrt(self.hyperparameter("theta", distances) * log_t / k)  # (k_max,) or (n_runs, 1, k_max)
        objective = uncertainty + c.lipschitz * distances  # inf where k > N_a
        best = objective.argmin(-1, keepdim=True)  # (n_runs, n_arms, 1)
        means = (rewards.cumsum(-1) / k).gather(-1, best).squeeze(-1)
        best_k = (best.squeeze(-1) + 1).to(torch.float64)
        level = self.hyperparameter("theta", best_k) * log_t / best_k
        radius = c.lipschitz * distances.gather(-1, best).squeeze(-1)
        return means, level, radius

    def index(self, means: torch.Tensor, level: torch.Tensor, radius: torch.Tensor) -> torch.Tensor:
        return means + level.sqrt() + radius

    def scores(self, contexts: torch.Tensor, t: int) -> torch.Tensor:
        """Index of every arm, ``(n_runs, n_arms)``."""
        means, level, radius = self.neighbourhood(contexts, t)
        scores = self.index(means, level, radius)
        return torch.where(self.history.counts > 0, scores, torch.full_like(scores, math.inf))

    def select(self, observation: Observation) -> torch.Tensor:
        return self.tie_break(self.scores(observation.contexts, observation.t), observation.t)


@register_policy("knn_kl_ucb")
class KNNKLUCB(KNNUCB):
    """k-NN KL-UCB (Reeve et al. 2018, §5): same ``k_a`` as :class:`KNNUCB`, index

        I_a = sup{w in [0, 1] : k_a d(f_{a,k_a}, w) <= theta log t} + phi r_{a,k_a}(x)

    with the Bernoulli divergence ``d`` (rewards assumed in ``[0, 1]``; the mean is clipped to it).
    """

    def index(self, means: torch.Tensor, level: torch.Tensor, radius: torch.Tensor) -> torch.Tensor:
        return kl_upper_bound(means.clamp(0.0, 1.0), level, KL_BISECTIONS) + radius


@dataclass(frozen=True)
class LinKNNUCBConfig(PolicyConfig):
    """(Lin+kNN)-UCB: bonus weight ``alpha``, ridge ``lam``, fixed number of neighbours ``k``. Tunable: alpha (as
    LinUCB)."""

    tunable: ClassVar[tuple[str, ...]] = ("alpha",)

    alpha: Annotated[float, nonnegative] = 1.0
    lam: Annotated[float, positive] = 1.0
    k: Annotated[int, at_least(1)] = 5
    refactor_every: Annotated[int, at_least(1)] = 1000


class LinearNeighborPolicy(NeighborPolicy):
    """Adds a disjoint ridge model per arm (``ridge``, as LinUCB) to the history."""

    def __init__(self, config: PolicyConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        self.ridge = RidgeState(env.n_runs, (env.n_arms,), env.dim, config.lam, getattr(config, "refactor_every", 1000))

    def linear_posterior(self, contexts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``l_a = x_a^T mu_a`` and ``sqrt(x_a^T Sigma_a^{-1} x_a)``, each ``(n_runs, n_arms)``."""
        x = contexts.to(torch.float64)
        return (x * self.ridge.theta).sum(-1), self.ridge.quadratic_form(x).sqrt()

    def learn(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        self.ridge.update_selected(arms, pulled_contexts(observation.contexts, arms), rewards)
        super().learn(observation, arms, rewards)


@register_policy("lin_knn_ucb")
class LinKNNUCB(LinearNeighborPolicy):
    """The vanilla combination of LNUCB-TA Table 3: LNUCB-TA eq. 9 with a constant exploration rate
    and a fixed ``k``,

        UCB_a = x_a^T mu_a + f_{a,k}(x_a) + alpha sqrt(x_a^T Sigma_a^{-1} x_a),

    ``f_{a,k} = 0`` while ``N_a < k`` (as Alg. 2 line 6 for LNUCB-TA).
    """

    config_class = LinKNNUCBConfig
    per_run_hyperparameters = ("alpha",)

    def scores(self, contexts: torch.Tensor) -> torch.Tensor:
        linear, width = self.linear_posterior(contexts)
        _, rewards = self.history.nearest(contexts, self.config.k)
        k = torch.full_like(self.history.counts, self.config.k)
        return upper_confidence_bound(
            linear + mean_of_first_k(rewards, self.history.counts, k), width, self.hyperparameter("alpha", width)
        )

    def select(self, observation: Observation) -> torch.Tensor:
        return self.tie_break(self.scores(observation.contexts), observation.t)


GLOBAL_MEANS = ("rounds", "arms", "all_rewards")
"""``g`` of Alg. 3 line 3: the mean reward of the rounds played (``rounds``), of the per-arm means (``arms``, eq. 101),
or, as LNUCB-TA's public code, of the environment's whole reward matrix (``all_rewards``: information a bandit does not
have)."""

KNN_WEIGHTS = ("uniform", "distance")
"""``f_a`` of Alg. 2 line 7: the plain mean of the ``k_a`` nearest rewards (``uniform``) or, as the public code, their
``1/d``-weighted mean (``distance``)."""

THETA_INITS = ("zero", "uniform")
"""``theta_a`` before arm ``a``'s first update: the ridge estimate, 0 (``zero``, Alg. 1), or, as the public code, a draw
uniform in ``[-1, 1]^d`` (``uniform``)."""

PUBLIC_CODE_READING = {
    "knn_weights": "distance",
    "global_mean": "all_rewards",
    "k_rounding": "floor",
    "theta_init": "uniform",
}
"""The four switches at the values that read LNUCB-TA as its authors' public implementation does
(docs/lnucb_ta_reading.md)."""


def check_neighbor_range(config: PolicyConfig) -> None:
    """The adaptive ``k_a`` range of LNUCB-TA Alg. 2, ``theta_min <= k_a <= theta_max``: refuse ``theta_max <
    theta_min`` (``theta_min >= 1`` is the field's own bound)."""
    config.require(config.theta_max >= config.theta_min, "theta_max", "must be >= theta_min")


@dataclass(frozen=True)
class LNUCBTAConfig(PolicyConfig):
    """LNUCB-TA. alpha_0: initial exploration rate; kappa: global/local attention weight;
    theta_min, theta_max: range of the adaptive ``k``; lam: ridge regulariser; global_mean: ``g`` as
    the mean reward of all past rounds (``rounds``) or the mean of the per-arm means, eq. 101 (``arms``).
    Defaults are LNUCB-TA App. B (``kappa = 0.5``, ``theta_min = 1``, ``theta_max = 5``).
    Tunable: alpha_0 (LNUCB-TA Table 5 searches it; kappa and the k range keep App. B's values).

    Component switches of the LNUCB-TA §5.3 ablation (Figure 2), both on by default:
    attention: the temporal-attention exploration rate of Alg. 3 line 4 (eq. 4); off, every arm
    explores at the constant ``alpha_0``. adaptive_knn: the kNN reward adjustment ``f_a`` of Alg. 2
    (eq. 9's second term); off, ``f_a = 0``. Both off is LinUCB with ``alpha = alpha_0``.

    Reading switches: the defaults are Algorithms 1–3 as written; the other values are where the authors'
    public implementation reads them differently (:data:`PUBLIC_CODE_READING`, docs/lnucb_ta_reading.md).
    knn_weights (Alg. 2 line 7): ``uniform`` (default), ``f_a`` the plain mean of the ``k_a`` nearest rewards;
    ``distance``, their ``1/d``-weighted mean, exact matches taking all the weight.
    global_mean (Alg. 3 line 3): ``all_rewards``, ``g`` the mean of the environment's whole reward matrix,
    every arm and every round of the horizon, rounds to come included (``1/K`` in classification): information
    a bandit does not have, so config validation allows it only in the ``published`` experiment.
    k_rounding (Alg. 2 line 5): ``round`` (default) or ``floor``, the integer part of ``k``.
    theta_init (Alg. 1 lines 4 and 9): ``zero`` (default), ``l_a = x_a^T Sigma_a^{-1} b_a`` from the start; ``uniform``,
    ``l_a = x_a^T theta_a`` with ``theta_a`` uniform in ``[-1, 1]^d`` until arm ``a``'s first update."""

    tunable: ClassVar[tuple[str, ...]] = ("alpha_0",)

    alpha_0: Annotated[float, nonnegative] = 1.0
    kappa: Annotated[float, unit_interval] = 0.5
    theta_min: Annotated[int, at_least(1)] = 1
    theta_max: int = 5
    lam: Annotated[float, positive] = 1.0
    global_mean: Annotated[str, one_of(GLOBAL_MEANS)] = "rounds"
    refactor_every: Annotated[int, at_least(1)] = 1000
    attention: bool = True
    adaptive_knn: bool = True
    knn_weights: Annotated[str, one_of(KNN_WEIGHTS)] = "uniform"
    k_rounding: Annotated[str, one_of(K_ROUNDINGS)] = "round"
    theta_init: Annotated[str, one_of(THETA_INITS)] = "zero"

    def __post_init__(self) -> None:
        check_neighbor_range(self)

    def check_environment(self, kind: str) -> None:
        """``global_mean: all_rewards`` needs the whole reward matrix, which a replay environment (logged data: the
        reward of the logged arm only) does not have."""
        if self.global_mean == "all_rewards" and kind == "replay":
            raise ValueError(
                "LNUCBTAConfig.global_mean: 'all_rewards' needs the whole reward matrix, which a replay environment "
                "does not have (its logs hold the reward of the logged arm only)"
            )


THETA_INIT_STREAM = "lnucb-ta-theta-init"
"""The policy RNG stream of ``theta_init="uniform"``'s draw (counter 0)."""


class AdaptiveNeighborMixin:
    """LNUCB-TA Alg. 2 (adaptive ``k`` and the kNN reward adjustment) over the ``history`` buffer."""

    def knn_adjustment(self, contexts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(f_{a,k_a}(x_a), k_a)``, each ``(n_runs, n_arms)``, for contexts ``(n_runs, n_arms, dim)``, with ``k_a``
        from the arm's reward variance: ``k_a`` by the config's ``k_rounding``, ``f_a`` by its ``knn_weights``
        (LNUCB-TA's reading switches); a config without them (the enhanced variants) reads Alg. 2 as written."""
        c = self.config
        k = adaptive_k(self.history.variances(), c.theta_min, c.theta_max, getattr(c, "k_rounding", "round"))
        if getattr(c, "knn_weights", "uniform") == "uniform":
            _, rewards = self.history.nearest(contexts, c.theta_max)
            return mean_of_first_k(rewards, self.history.counts, k), k
        _, rewards, slots = self.history.nearest_pulls(contexts, c.theta_max)
        distances = self.history.direct_distances(contexts, slots)
        return distance_weighted_mean_of_first_k(distances, rewards, self.history.counts, k), k


@register_policy("lnucb_ta")
class LNUCBTA(AdaptiveNeighborMixin, LinearNeighborPolicy):
    """LNUCB-TA Algorithms 1–3, eq. 9, at round ``t``:

    * Alg. 1 line 4: ``l_a = x_a^T mu_a`` with the per-arm ridge estimate ``mu_a = Sigma_a^{-1} b_a``;
    * Alg. 2 lines 4–7: ``k_a = theta_min + (theta_max - theta_min) Var(z_a)`` (population variance of
      arm ``a``'s past rewards, 0 below two pulls; rounded and clipped to ``[theta_min, theta_max]``);
      ``f_a = (1/k_a) sum`` of the rewards of the ``k_a`` nearest past contexts of arm ``a`` when
      ``N_a >= k_a``, else 0;
    * Alg. 3 lines 3–4: ``n_a = (1/N_a) sum_{s<t} Y_s^a`` (0 while ``N_a = 0``),
      ``alpha_a = alpha_0 / (N_a + 1) * (kappa g + (1 - kappa) n_a)``;
    * eq. 9: ``UCB_a = l_a + f_a + alpha_a sqrt(x_a^T Sigma_a^{-1} x_a)``; Alg. 1 line 8: argmax.
    * Alg. 1 line 9: ridge, history, ``N_a`` and ``g`` updated with the pulled arm after the choice.

    ``g`` uses only rounds ``< t``: ``global_mean="rounds"`` (default) is ``sum_{s<t} r_s / t``
    (0 at ``t = 0``), the "global average of rewards" of Alg. 3; ``"arms"`` is eq. 101's
    ``(1/A) sum_a Ybar^a`` over the arms pulled so far. Buffers ``global_reward_sum``,
    ``global_rounds`` (float64 scalars).

    Ablation (LNUCB-TA §5.3): ``attention=False`` replaces ``alpha_a`` by ``alpha_0``;
    ``adaptive_knn=False`` sets ``f_a = 0`` (no neighbour search); with both off the index is
    LinUCB's ``x_a^T mu_a + alpha_0 sqrt(x_a^T Sigma_a^{-1} x_a)``.

    Public-code reading (:data:`PUBLIC_CODE_READING`; defaults: the algorithm as written, to the bit), one switch
    per place where the authors' implementation departs from Algorithms 1–3:

    * ``knn_weights="distance"`` (Alg. 2 line 7): ``f_a = sum_i r_i / d_i / sum_i 1 / d_i`` over the same ``k_a``
      neighbours, ``d_i = ||x_a - y_i||`` taken from the difference (:meth:`ArmHistory.direct_distances`, exactly 0
      for a repeated context); exact matches, if any, take all the weight (their mean reward). Still 0 while ``N_a <
    k_a``.
    * ``global_mean="all_rewards"`` (Alg. 3 line 3): ``g`` the mean of the environment's whole reward matrix, every
      arm and every round ``0..horizon-1``, rounds not yet played included
      (:meth:`hare.envs.base.BanditEnvironment.mean_reward_all_rounds`, read once at construction into the buffer
      ``global_constant`` ``(n_runs,)``; ``1/K`` in classification). A bandit has no such information: config
      validation allows it only in the ``published`` experiment.
    * ``k_rounding="floor"`` (Alg. 2 line 5): ``k_a`` the integer part instead of the nearest integer; clipping and the
      condition ``N_a >= k_a`` stay.
    * ``theta_init="uniform"`` (Alg. 1 line 4 before the first update of line 9): until arm ``a`` has been updated once,
      ``l_a = x_a^T theta_a`` with ``theta_a`` uniform in ``[-1, 1]^d``, drawn once per run and arm at construction
      (stream ``"lnucb-ta-theta-init"``, counter 0 of the run keys; buffer ``initial_theta`` ``(n_runs, n_arms, dim)``);
      the ridge estimate takes over from the arm's first update. The width term keeps ``Sigma_a^{-1} = I / lam``.
    """

    config_class = LNUCBTAConfig
    per_run_hyperparameters = ("alpha_0",)

    def __init__(self, config: LNUCBTAConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        self.selection: dict = {}
        self.register_buffer("global_reward_sum", torch.zeros(env.n_runs, dtype=torch.float64))
        self.register_buffer("global_rounds", torch.zeros((), dtype=torch.float64))
        constant = (
            env.mean_reward_all_rounds().to(device=keys.device, dtype=torch.float64)
            if config.global_mean == "all_rewards"
            else None
        )
        self.register_buffer("global_constant", constant)
        initial = (
            2.0 * self.rng.uniform(THETA_INIT_STREAM, 0, (env.n_arms, env.dim)) - 1.0
            if config.theta_init == "uniform"
            else None
        )
        self.register_buffer("initial_theta", initial)

    def global_attention(self) -> torch.Tensor:
        """``g`` of the coming round, ``(n_runs,)``: only rewards of earlier rounds enter, except under
        ``global_mean="all_rewards"`` (the constant mean of the whole reward matrix)."""
        if self.config.global_mean == "rounds":
            return self.global_reward_sum / self.global_rounds.clamp_min(1.0)
        if self.config.global_mean == "all_rewards":
            return self.global_constant
        pulled = (self.history.counts > 0).to(torch.float64)
        return (self.history.means() * pulled).sum(-1) / pulled.sum(-1).clamp_min(1.0)

    def exploration_rates(self) -> torch.Tensor:
        """``alpha_a`` of Alg. 3 line 4, ``(n_runs, n_arms)``; ``alpha_0`` everywhere without attention."""
        c = self.config
        local = self.history.means()
        alpha_0 = self.hyperparameter("alpha_0", local)
        if not c.attention:
            return torch.zeros_like(local) + alpha_0
        counts = self.history.counts.to(torch.float64)
        return temporal_attention_rate(alpha_0, counts, self.global_attention()[:, None], local, c.kappa)

    def reward_estimate(self, contexts: torch.Tensor, linear: torch.Tensor) -> torch.Tensor:
        """``l_a + f_a`` of eq. 9, ``(n_runs, n_arms)``; ``l_a`` alone without the adaptive kNN."""
        if not self.config.adaptive_knn:
            return linear
        adjustment, _ = self.knn_adjustment(contexts)
        return linear + adjustment

    def linear_terms(self, contexts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """``l_a = x_a^T mu_a``, ``w_a = sqrt(x_a^T Sigma_a^{-1} x_a)`` ``(n_runs, n_arms)`` and, from
        ``dim >= ROW_PRODUCTS_MIN_DIM`` on, ``v_a = Sigma_a^{-1} x_a`` ``(n_runs, n_arms, dim)`` (else ``None``):
        the kernels of :class:`hare.policies.linear.LinUCB`, so that with both switches off the index and
        the ridge updates are LinUCB's to the last bit."""
        x = contexts.to(torch.float64)
        if self.ridge.dim < ROW_PRODUCTS_MIN_DIM:
            return self.linear_estimate(x), self.ridge.quadratic_form(x).sqrt(), None
        products = self.ridge.row_products(x)
        return self.linear_estimate(x), linear_means(x, products).clamp_min(0.0).sqrt(), products

    def linear_estimate(self, x: torch.Tensor) -> torch.Tensor:
        """``l_a`` of Alg. 1 line 4, ``(n_runs, n_arms)`` for float64 contexts ``(n_runs, n_arms, dim)``: ``x_a^T
        mu_a``;
        under ``theta_init="uniform"``, ``x_a^T theta_a`` (the uniform draw) for the arms not yet updated."""
        linear = linear_means(x, self.ridge.theta)
        if self.initial_theta is None:
            return linear
        return torch.where(self.history.counts > 0, linear, linear_means(x, self.initial_theta))

    def scores_and_products(self, contexts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Eq. 9 for every arm ``(n_runs, n_arms)`` and the products of :meth:`linear_terms`."""
        linear, width, products = self.linear_terms(contexts)
        return upper_confidence_bound(self.reward_estimate(contexts, linear), width, self.exploration_rates()), products

    def scores(self, contexts: torch.Tensor) -> torch.Tensor:
        """Eq. 9 for every arm, ``(n_runs, n_arms)``."""
        return self.scores_and_products(contexts)[0]

    def select(self, observation: Observation) -> torch.Tensor:
        scores, products = self.scores_and_products(observation.contexts)
        self.selection = {"observation": observation, "products": products}
        return self.tie_break(scores, observation.t)

    def learn(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        """Alg. 1 line 9 (the history is appended by :meth:`NeighborPolicy.update`). The ridge step reuses the
        pulled arm's ``Sigma^{-1} x`` from :meth:`select` when it scored this same observation on the current state
        (as LinUCB does)."""
        selection, self.selection = self.selection, {}
        products = selection.get("products")
        a_inv_x = None
        if selection.get("observation") is observation and products is not None:
            a_inv_x = products.gather(1, arms[:, None, None].expand(-1, 1, products.shape[-1])).squeeze(1)
        self.ridge.update_selected(arms, pulled_contexts(observation.contexts, arms), rewards, a_inv_x)
        self.global_reward_sum += rewards.to(torch.float64)
        self.global_rounds += 1.0


def attention_weights(counts: torch.Tensor, gamma: float) -> torch.Tensor:
    """LNUCB-TA eq. 116 ``softmax_a(-gamma N_a)`` times ``n_arms``, so equal counts (or ``gamma = 0``)
    give weight 1 and the base policy is recovered. ``(n_runs, n_arms)``."""
    return counts.shape[-1] * torch.softmax(-gamma * counts.to(torch.float64), dim=-1)


@dataclass(frozen=True)
class EnhancedConfig(PolicyConfig):
    """Shared by the enhanced variants: adaptive-k range (LNUCB-TA Alg. 2) and attention scale ``gamma`` (eq. 116)."""

    theta_min: Annotated[int, at_least(1)] = 1
    theta_max: int = 5
    gamma: Annotated[float, nonnegative] = 0.1

    def __post_init__(self) -> None:
        check_neighbor_range(self)


@dataclass(frozen=True)
class BetaThompsonEnhancedConfig(EnhancedConfig):
    """Beta prior ``(prior_alpha, prior_beta)``; LNUCB-TA App. B best: (0.5, 0.5).
    Tunable: prior_alpha, prior_beta (as the base Beta-Thompson; gamma and the k range keep their values)."""

    tunable: ClassVar[tuple[str, ...]] = ("prior_alpha", "prior_beta")

    prior_alpha: Annotated[float, positive] = 1.0
    prior_beta: Annotated[float, positive] = 1.0
    gamma_proposals: Annotated[int, at_least(1)] = 16


@dataclass(frozen=True)
class EpsGreedyEnhancedConfig(EnhancedConfig):
    """Exploration probability ``epsilon``; LNUCB-TA App. B best: 0.25. Tunable: epsilon (as the base eps-greedy)."""

    tunable: ClassVar[tuple[str, ...]] = ("epsilon",)

    epsilon: Annotated[float, unit_interval] = 0.1


@dataclass(frozen=True)
class LinThompsonEnhancedConfig(EnhancedConfig):
    """Posterior scale ``v`` and ridge ``lam``; LNUCB-TA App. B best ``v = 2``. Tunable: v (as LinTS's nu)."""

    tunable: ClassVar[tuple[str, ...]] = ("v",)

    v: Annotated[float, nonnegative] = 1.0
    lam: Annotated[float, positive] = 1.0
    refactor_every: Annotated[int, at_least(1)] = 1000


def gamma_draws(
    rng: CounterRNG, stream: str, counter: int, shape_parameter: torch.Tensor, proposals: int
) -> torch.Tensor:
    """Gamma(shape, 1) draws by Marsaglia & Tsang (2000) from the counter RNG, ``(n_runs, n)`` -> ``(n_runs, n)``.

    ``proposals`` candidates per draw; the first accepted one is kept (acceptance >= 0.95 per candidate,
    so 16 candidates all fail with probability < 1e-20; the fallback is the proposal centre ``d``).
    Shapes below 1 use ``Gamma(a) = Gamma(a + 1) U^{1/a}``.
    """
    n = shape_parameter.shape[-1]
    boosted = shape_parameter + (shape_parameter < 1).to(shape_parameter.dtype)
    d = boosted - 1.0 / 3.0
    c = 1.0 / torch.sqrt(9.0 * d)
    z = rng.normal(f"{stream}-z", counter, (n, proposals))
    u = rng.uniform(f"{stream}-u", counter, (n, proposals))
    v = (1.0 + c[..., None] * z) ** 3
    safe_v = v.clamp_min(1e-300)
    accepted = (v > 0) & (
        torch.log(u) < 0.5 * z.square() + d[..., None] - d[..., None] * safe_v + d[..., None] * torch.log(safe_v)
    )
    first = torch.where(
        accepted, torch.arange(proposals, 0, -1, device=v.device), torch.zeros_like(z, dtype=torch.int64)
    ).argmax(-1, keepdim=True)
    draw = torch.where(accepted.any(-1), d * v.gather(-1, first).squeeze(-1), d)
    boost = rng.uniform(f"{stream}-boost", counter, (n,)) ** (1.0 / shape_parameter)
    return torch.where(shape_parameter < 1, draw * boost, draw)


@register_policy("beta_thompson_enhanced")
class BetaThompsonEnhanced(AdaptiveNeighborMixin, NeighborPolicy):
    """Beta-Thompson with LNUCB-TA App. B's enhancements, its own Beta-TS core (not classic.py's):

        theta~_a ~ Beta(prior_alpha + S_a, prior_beta + F_a),   m_a = its mean,
        score_a = f_{a,k_a}(x_a) + m_a + w_a (theta~_a - m_a),

    ``S_a += r``, ``F_a += 1 - r`` with ``r`` clipped to ``[0, 1]``, ``w_a`` from
    :func:`attention_weights` (the exploration — the sample's deviation from the mean — weighted by
    the attention score), ``f`` from Alg. 2. Beta draws are ``G_1 / (G_1 + G_2)``, gammas from
    :func:`gamma_draws` (streams ``"beta-ts-a"``/``"beta-ts-b"`` at counter ``t``).
    """

    config_class = BetaThompsonEnhancedConfig

    def __init__(self, config: BetaThompsonEnhancedConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        self.register_buffer("successes", torch.zeros(env.n_runs, env.n_arms, dtype=torch.float64))

    def scores(self, contexts: torch.Tensor, t: int) -> torch.Tensor:
        c = self.config
        successes = self.successes
        failures = self.history.counts.to(torch.float64) - successes
        a = c.prior_alpha + successes
        b = c.prior_beta + failures
        g_a = gamma_draws(self.rng, "beta-ts-a", t, a, c.gamma_proposals)
        g_b = gamma_draws(self.rng, "beta-ts-b", t, b, c.gamma_proposals)
        sample = g_a / (g_a + g_b)
        mean = a / (a + b)
        adjustment, _ = self.knn_adjustment(contexts)
        return adjustment + mean + attention_weights(self.history.counts, c.gamma) * (sample - mean)

    def select(self, observation: Observation) -> torch.Tensor:
        return self.tie_break(self.scores(observation.contexts, observation.t), observation.t)

    def learn(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        runs = torch.arange(self.n_runs, device=arms.device)
        self.successes[runs, arms] += rewards.to(torch.float64).clamp(0.0, 1.0)
        super().learn(observation, arms, rewards)


@register_policy("eps_greedy_enhanced")
class EpsGreedyEnhanced(AdaptiveNeighborMixin, NeighborPolicy):
    """eps-greedy with LNUCB-TA App. B's enhancements, its own core (not classic.py's):

    with probability ``epsilon`` (uniform ``u_t < epsilon``, stream ``"eps-explore"``) pull an arm drawn
    from the attention distribution ``softmax_a(-gamma N_a)`` (eq. 116: arm ``a`` is explored at rate
    ``epsilon * attention_a``; ``gamma = 0`` is uniform exploration), else
    ``argmax_a Ybar_a + f_{a,k_a}(x_a)`` (empirical mean, 0 for unpulled arms, plus the Alg. 2 adjustment).
    """

    config_class = EpsGreedyEnhancedConfig
    per_run_hyperparameters = ("epsilon",)

    def scores(self, contexts: torch.Tensor) -> torch.Tensor:
        adjustment, _ = self.knn_adjustment(contexts)
        return self.history.means() + adjustment

    def select(self, observation: Observation) -> torch.Tensor:
        t = observation.t
        greedy = self.tie_break(self.scores(observation.contexts), t)
        attention = attention_weights(self.history.counts, self.config.gamma) / self.n_arms  # (n_runs, n_arms)
        draw = self.rng.uniform("eps-arm", t)[:, None]
        explored = (attention.cumsum(-1) < draw).sum(-1).clamp_max(self.n_arms - 1)
        coin = self.rng.uniform("eps-explore", t)
        explore = coin < self.hyperparameter("epsilon", coin)
        return torch.where(explore, explored, greedy)


@register_policy("lin_thompson_enhanced")
class LinThompsonEnhanced(AdaptiveNeighborMixin, LinearNeighborPolicy):
    """LinThompson with LNUCB-TA App. B's enhancements, its own LinTS core (not linear.py's):

        score_a = x_a^T mu_a + f_{a,k_a}(x_a) + v w_a sqrt(x_a^T Sigma_a^{-1} x_a) xi_a,   xi ~ N(0, I)

    (stream ``"lin-ts"`` at counter ``t``). With disjoint arms ``x_a^T mu~_a`` for
    ``mu~_a ~ N(mu_a, v^2 Sigma_a^{-1})`` has exactly the law ``x_a^T mu_a + v sqrt(x_a^T Sigma_a^{-1} x_a) xi_a``,
    independently over arms, so the scalar form is the LinTS sample without a matrix square root.
    """

    config_class = LinThompsonEnhancedConfig
    per_run_hyperparameters = ("v",)

    def scores(self, contexts: torch.Tensor, t: int) -> torch.Tensor:
        linear, width = self.linear_posterior(contexts)
        adjustment, _ = self.knn_adjustment(contexts)
        noise = self.rng.normal("lin-ts", t, (self.n_arms,))
        return (
            linear
            + adjustment
            + self.hyperparameter("v", width)
            * attention_weights(self.history.counts, self.config.gamma)
            * width
            * noise
        )

    def select(self, observation: Observation) -> torch.Tensor:
        return self.tie_break(self.scores(observation.contexts, observation.t), observation.t)
