"""Replay evaluation of bandit policies on logged uniform-random data (Li et al. 2011).

Li, Chu, Langford & Wang (2011), "Unbiased offline evaluation of contextual-bandit-based
news article recommendation algorithms", Alg. 1 (the protocol of LNUCB-TA (Khosravi et al., 2025) §5.2, Table 3):
stream the logged events ``(x_i, a_i, r_i)``; at each event the policy picks an arm for
``x_i``; if it equals the logged ``a_i`` the event is *accepted*: the policy learns from
``(x_i, a_i, r_i)`` and ``r_i`` counts toward its reward; otherwise the event is discarded
and the policy's state is unchanged. When the logging policy is uniform over ``K`` arms,
the accepted events are distributed as ``T`` rounds of the policy run online, and
``cumulative reward / accepted`` is an unbiased estimate of its per-round reward.

Batched over runs. Each run streams the rows in its own random order (a counter-based
permutation per run key), so different runs accept different events. Policies have no
notion of a mask; :func:`masked_update` gives them one: it applies ``update`` to the whole
batch and then restores, through ``torch.where``, the per-run state of every run whose
event was rejected. The result equals running each run alone (tested). The loop is
:func:`hare.experiments.replay_job.run_replay`.

Arms and contexts (Open Bandit Dataset, ``hare.data.prepare.prepare_logged``): the arms
are the ``n_items`` items; the context of arm ``a`` for logged row ``i`` is
``concat(user_context_i, z_a)`` of size ``d_user + d_item``, where ``z`` are the item
features standardised column-wise over items (the raw item id and label-encoded
categories have arbitrary scale). The display position of the logged item is ignored:
every row is one round with ``n_items`` arms, and a round is accepted when the policy's
item equals the logged item, whatever slot it was shown in. The random campaign logs each
slot's item uniformly (``pscore = 1 / n_items``), which is what makes replay unbiased.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from hare.data.errors import DataFormatError
from hare.envs.base import BanditEnvironment, EnvironmentShape, ItemPool, Observation
from hare.envs.classification import dataset_shape
from hare.envs.registry import register_environment
from hare.random import CounterRNG
from hare.typed import TypedFields

LOGGED_FIELDS = ("contexts", "actions", "positions", "rewards", "pscores", "item_features")


@dataclass(frozen=True)
class LoggedData:
    """Logged bandit feedback of ``n`` events over ``n_actions`` arms.

    contexts: ``(n, d_user)`` float64 user contexts; actions: ``(n,)`` int64 logged arms;
    positions: ``(n,)`` int64 display slots; rewards: ``(n,)`` float64 (clicks);
    pscores: ``(n,)`` float64 logging propensities ``pi_b(a_i | x_i)``;
    item_features: ``(n_actions, d_item)`` float64.
    """

    contexts: torch.Tensor
    actions: torch.Tensor
    positions: torch.Tensor
    rewards: torch.Tensor
    pscores: torch.Tensor
    item_features: torch.Tensor

    @property
    def n_rows(self) -> int:
        return int(self.actions.shape[0])

    @property
    def n_actions(self) -> int:
        return int(self.item_features.shape[0])

    @property
    def dim(self) -> int:
        """Size of one arm's context, ``d_user + d_item``."""
        return int(self.contexts.shape[1] + self.item_features.shape[1])

    @classmethod
    def from_npz(cls, path: str | Path) -> LoggedData:
        """Load the arrays written by :func:`hare.data.prepare.prepare_logged`.

        Raises:
            DataFormatError: a field is missing or has the wrong shape; the message names
                the file and the field.
        """
        path = Path(path)
        with np.load(path, allow_pickle=False) as data:
            missing = [f for f in LOGGED_FIELDS if f not in data.files]
            if missing:
                raise DataFormatError(
                    f"{path}: prepared logged data lacks field(s) {missing}; expected {list(LOGGED_FIELDS)}"
                )
            arrays = {f: data[f] for f in LOGGED_FIELDS}
        n = arrays["actions"].shape[0]
        for field in ("contexts", "positions", "rewards", "pscores"):
            if arrays[field].shape[0] != n:
                raise DataFormatError(f"{path}: field {field!r} has {arrays[field].shape[0]} rows, 'actions' has {n}")
        n_actions = arrays["item_features"].shape[0]
        if n and (arrays["actions"].min() < 0 or arrays["actions"].max() >= n_actions):
            raise DataFormatError(f"{path}: field 'actions' must lie in 0..{n_actions - 1}")
        return cls(
            contexts=torch.from_numpy(arrays["contexts"]).to(torch.float64),
            actions=torch.from_numpy(arrays["actions"]).to(torch.int64),
            positions=torch.from_numpy(arrays["positions"]).to(torch.int64),
            rewards=torch.from_numpy(arrays["rewards"]).to(torch.float64),
            pscores=torch.from_numpy(arrays["pscores"]).to(torch.float64),
            item_features=torch.from_numpy(arrays["item_features"]).to(torch.float64),
        )

    def to(self, device: str | torch.device) -> LoggedData:
        return LoggedData(*(getattr(self, f).to(device) for f in LOGGED_FIELDS))

    def item_embeddings(self) -> torch.Tensor:
        """Item features standardised column-wise over items, ``(n_actions, d_item)``; constant columns become 0."""
        z = self.item_features
        std = z.std(dim=0, unbiased=False)
        return (z - z.mean(dim=0)) / torch.where(std > 0, std, torch.ones_like(std))

    def arm_contexts(self, rows: torch.Tensor) -> torch.Tensor:
        """Arm contexts of logged ``rows`` (any shape ``S``): ``(*S, n_actions, d_user + d_item)``.

        ``x_{i,a} = concat(user_context_i, z_a)`` with ``z`` from :meth:`item_embeddings`.
        """
        user = self.contexts[rows]  # (*S, d_user)
        items = self.item_embeddings()
        shape = (*rows.shape, self.n_actions)
        return torch.cat(
            [user[..., None, :].expand(*shape, user.shape[-1]), items.expand(*shape, items.shape[-1])], dim=-1
        )


@dataclass(frozen=True)
class ReplayRound:
    """Step ``t`` of every run: the logged event each run is shown.

    observation: contexts ``(n_runs, n_arms, dim)``, queries ``(n_runs, d_user)``;
    rows: ``(n_runs,)`` logged row index; logged_actions, logged_rewards: ``(n_runs,)``.
    """

    observation: Observation
    rows: torch.Tensor
    logged_actions: torch.Tensor
    logged_rewards: torch.Tensor

    def accepted(self, arms: torch.Tensor) -> torch.Tensor:
        """``(n_runs,)`` bool: the policy's arm equals the logged arm (Li et al. 2011, Alg. 1)."""
        return arms == self.logged_actions


@dataclass(frozen=True)
class ReplayParams(TypedFields):
    """The ``params`` of a replay environment: none."""


@register_environment("replay")
class ReplayBandit(BanditEnvironment):
    """``n_runs`` replays of one logged data set, each in its own random row order.

    ``horizon`` is the number of logged events each run streams (steps), not the number
    it accepts; about ``horizon / n_arms`` are accepted under uniform logging. The item
    pool is the set of items (standardised item features, L2-normalised; one cluster each).
    """

    config_class = ReplayParams
    needs_dataset = True
    dataset_noun = "logged dataset"
    has_reward_matrix = False
    replays_logged_data = True
    n_users = 1
    user_dim = 0

    def __init__(
        self, logged: LoggedData, n_runs: int, horizon: int, keys: torch.Tensor, device: str | torch.device = "cpu"
    ):
        if horizon > logged.n_rows:
            raise ValueError(f"horizon {horizon} exceeds the {logged.n_rows} logged rows")
        self.logged = logged.to(device)
        self.n_runs = n_runs
        self.n_arms = logged.n_actions
        self.dim = logged.dim
        self.query_dim = int(logged.contexts.shape[1])
        self.horizon = horizon
        self.order = CounterRNG(keys.to(device)).permutation("rows", logged.n_rows)[:, :horizon]  # (n_runs, horizon)
        embeddings = self.logged.item_embeddings()
        norms = embeddings.norm(dim=1, keepdim=True)
        self.pool = ItemPool(
            embeddings / torch.where(norms > 0, norms, torch.ones_like(norms)), torch.arange(self.n_arms, device=device)
        )

    @classmethod
    def from_npz(cls, path, n_runs: int, horizon: int | None, keys: torch.Tensor, device="cpu") -> ReplayBandit:
        logged = LoggedData.from_npz(path)
        return cls(logged, n_runs, min(horizon or logged.n_rows, logged.n_rows), keys, device)

    @classmethod
    def from_dataset(cls, entry: dict[str, Any], config: Any, path, n_runs: int, keys: torch.Tensor, device):
        """The entry's prepared logged dataset at ``path``."""
        return cls.from_npz(path, n_runs, entry["horizon"], keys, device)

    @classmethod
    def memory_shape(cls, entry: dict[str, Any]) -> EnvironmentShape:
        """:func:`hare.envs.classification.dataset_shape` of the logged dataset (events as rows, items as arms), and
        per run the greedy read of every logged event's arm contexts, ``8 rows A d``."""
        shape = dataset_shape(entry, 0)
        return EnvironmentShape(
            shape.arms,
            shape.dim,
            shape.rounds,
            shape.rows,
            shape.clusters,
            shape.shared_bytes,
            8 * shape.rows * shape.arms * shape.dim,
        )

    def mean_reward_all_rounds(self) -> torch.Tensor:
        """Refused: a logged event holds the reward of the logged arm only, so there is no whole reward matrix."""
        raise ValueError(
            "ReplayBandit has no whole reward matrix (each logged event holds the reward of the logged arm only), "
            "so LNUCB-TA's global_mean: all_rewards cannot run on it; use global_mean: rounds or arms"
        )

    def round(self, t: int) -> ReplayRound:
        rows = self.order[:, t]
        observation = Observation(t, self.logged.arm_contexts(rows), None, self.logged.contexts[rows])
        return ReplayRound(observation, rows, self.logged.actions[rows], self.logged.rewards[rows])


def run_state(policy: nn.Module) -> dict[str, torch.Tensor]:
    """The per-run state of ``policy``: every buffer and parameter whose leading dim is ``n_runs``.

    Tensors without that leading dimension (0-d step counters such as ``RidgeState.n_updates``,
    which only schedule exact re-inversions) are shared by the runs and not part of it.
    """
    n_runs = policy.n_runs
    state = dict(policy.named_buffers())
    state.update(policy.named_parameters())
    return {name: t for name, t in state.items() if t.dim() > 0 and t.shape[0] == n_runs}


def masked_update(
    policy: nn.Module, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor, mask: torch.Tensor
) -> None:
    """``policy.update`` for the runs where ``mask`` ``(n_runs,)`` is true only.

    With ``S`` the per-run state (:func:`run_state`) before the call and ``S'`` after
    ``policy.update(observation, arms, rewards)`` on the whole batch, every tensor becomes
    ``where(mask[b], S'[b], S[b])`` run by run. Runs are independent in every policy (the
    batching convention), so run ``b``'s state equals that of ``b`` run alone with updates on
    its accepted events only. Requirements: the policy keeps its state in buffers or parameters
    updated in place or reassigned with the same shape (the library's convention; optimiser
    moments or Python attributes are not restored); shared 0-d counters advance on every
    step with at least one accepted run, so a refactorisation schedule they drive may differ
    from the solo run's by rounding only. ``rewards`` of rejected runs are ignored.
    """
    if bool(mask.all()):
        policy.update(observation, arms, rewards)
        return
    if not bool(mask.any()):
        return
    before = {name: t.detach().clone() for name, t in run_state(policy).items()}
    policy.update(observation, arms, rewards)
    after = run_state(policy)
    with torch.no_grad():
        for name, old in before.items():
            new = after.get(name)
            if new is None or new.shape != old.shape:
                raise RuntimeError(
                    f"{type(policy).__name__}.update changed the shape of {name!r}; "
                    f"masked updates need fixed-shape per-run state"
                )
            keep = mask.reshape(-1, *(1,) * (old.dim() - 1))  # (n_runs, 1, ...)
            new.copy_(torch.where(keep, new, old))
