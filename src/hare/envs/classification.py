"""Classification datasets as K-armed contextual bandits (Riquelme et al. 2018; NeuralTS protocol).

Each run visits the rows of the dataset in its own random order. At round ``t`` the
context of every arm is the row's feature vector (unit norm); the reward of arm ``a``
is 1 if ``a`` is the row's class and 0 otherwise, so mean and realised rewards
coincide and the pseudo-regret counts wrong arms. The disjoint encoding ``x ⊗ e_a``
of the protocol is what disjoint-arm linear models do implicitly (one ``theta_a`` per
arm); :func:`disjoint_encoding` builds it for models that need a single input vector.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import torch
import torch.nn.functional as F

from hare.data.encoding import preparation_of
from hare.data.registry import get_dataset
from hare.envs.base import (
    WARM_START_STREAM,
    BanditEnvironment,
    BanditRound,
    EnvironmentShape,
    ItemPool,
    LoggedRounds,
    Observation,
)
from hare.envs.logged import LoggedInteractions
from hare.envs.registry import register_environment
from hare.random import CounterRNG, run_keys
from hare.typed import TypedFields, at_least


def disjoint_encoding(contexts: torch.Tensor) -> torch.Tensor:
    """``(n_runs, n_arms, dim) -> (n_runs, n_arms, n_arms * dim)`` with arm ``a``'s block at ``a * dim``."""
    n_runs, n_arms, dim = contexts.shape
    eye = torch.eye(n_arms, dtype=contexts.dtype, device=contexts.device)
    return (eye[None, :, :, None] * contexts[:, :, None, :]).reshape(n_runs, n_arms, n_arms * dim)


_PREPARED: dict[tuple[str, int, int], tuple[torch.Tensor, torch.Tensor]] = {}


def _prepared_arrays(path) -> tuple[torch.Tensor, torch.Tensor]:
    """``features`` ``(n_rows, dim)`` and ``labels`` ``(n_rows,)`` of a prepared ``.npz``, read once per process while
    the file keeps its size and modification time (the jobs of a batch share one dataset; nothing writes to them)."""
    stat = os.stat(path)
    key = (os.path.realpath(path), stat.st_mtime_ns, stat.st_size)
    if key not in _PREPARED:
        with np.load(path, allow_pickle=False) as data:
            _PREPARED.clear()
            _PREPARED[key] = (torch.from_numpy(data["features"]), torch.from_numpy(data["labels"]))
    return _PREPARED[key]


@dataclass(frozen=True)
class ClassificationParams(TypedFields):
    """The ``params`` of a classification environment: ``logged_rows``, the rows set aside as its logged part
    (:class:`ClassificationBandit`)."""

    logged_rows: Annotated[int, at_least(0)] = 0


def check_preparation(env: dict[str, Any], dataset_path: str | Path) -> None:
    """The prepared dataset at ``dataset_path`` was made with the environment's ``preparation``.

    A reference-protocol file carries a ``protocol`` member (``"reference"``); a project-protocol
    file has none. A mismatch (e.g. the project file given to a ``preparation: reference``
    environment) is a ValueError naming the environment, the file and both protocols.
    """
    with np.load(dataset_path, allow_pickle=False) as data:
        found = str(data["protocol"]) if "protocol" in data.files else "project"
    wanted = preparation_of(env)
    if found != wanted:
        raise ValueError(
            f"environment {env['name']!r} declares preparation {wanted!r}, "
            f"but {dataset_path} was prepared with {found!r}"
        )


def dataset_shape(entry: dict[str, Any], logged_rows: int) -> EnvironmentShape:
    """The :class:`EnvironmentShape` of an environment over the entry's prepared ``dataset`` (its record's
    :attr:`hare.data.registry.DatasetSpec.shape`, the largest of its preparations, so no file is read): its horizon
    capped by the online rows (``rows - logged_rows``), one cluster per arm; shared: the features, float32 cached
    and float64."""
    rows, dim, arms = get_dataset(entry["dataset"]).shape
    online = rows - logged_rows
    return EnvironmentShape(arms, dim, max(0, min(int(entry["horizon"]), online)), rows, arms, 12 * rows * dim)


@register_environment("classification")
class ClassificationBandit(BanditEnvironment):
    """``n_runs`` shuffled passes over a labelled dataset.

    features: ``(n_rows, dim)``; labels: ``(n_rows,)`` int64 in ``0..n_classes-1``.
    The item pool is the set of classes (one-hot embeddings, one cluster each).

    ``logged_rows > 0`` sets aside that many rows (a fixed random subset, the same for
    every run and every policy) as the logged part of the dataset: :meth:`sample_logged`
    serves them with uniformly random arms, and the online runs never see them.
    """

    config_class = ClassificationParams
    needs_dataset = True
    has_preparation = True
    serves_logs = True

    def __init__(
        self,
        features: torch.Tensor,
        labels: torch.Tensor,
        n_runs: int,
        horizon: int,
        keys: torch.Tensor,
        device: str | torch.device = "cpu",
        logged_rows: int = 0,
    ):
        n_rows = features.shape[0]
        if not 0 <= logged_rows < n_rows:
            raise ValueError(f"logged_rows must be in [0, {n_rows}), got {logged_rows}")
        if horizon > n_rows - logged_rows:
            raise ValueError(
                f"horizon {horizon} exceeds the {n_rows - logged_rows} online rows of the dataset "
                f"({logged_rows} set aside as logged)"
            )
        self.features = features.to(device=device, dtype=torch.float64)
        self.labels = labels.to(device=device, dtype=torch.int64)
        self.n_runs = n_runs
        self.n_arms = int(self.labels.max()) + 1
        self.dim = features.shape[1]
        self.query_dim = self.dim
        self.horizon = horizon
        split = CounterRNG(run_keys(0, [0], "classification-logged-split").to(device)).permutation("split", n_rows)[0]
        self.logged_rows = split[:logged_rows]
        online = split[logged_rows:]
        self.order = online[
            CounterRNG(keys.to(device)).permutation("rows", online.numel())[:, :horizon]
        ]  # (n_runs, horizon)
        self.pool = ItemPool(
            torch.eye(self.n_arms, dtype=torch.float64, device=device), torch.arange(self.n_arms, device=device)
        )

    @classmethod
    def from_npz(
        cls, path, n_runs: int, horizon: int | None, keys: torch.Tensor, device="cpu", logged_rows: int = 0
    ) -> ClassificationBandit:
        features, labels = _prepared_arrays(path)
        return cls(
            features,
            labels,
            n_runs,
            min(horizon or features.shape[0], features.shape[0] - logged_rows),
            keys,
            device,
            logged_rows,
        )

    @classmethod
    def from_dataset(cls, entry: dict[str, Any], config: Any, path, n_runs: int, keys: torch.Tensor, device):
        """The entry's prepared dataset at ``path`` (checked to be of its ``preparation``: :func:`check_preparation`),
        ``config.logged_rows`` set aside."""
        check_preparation(entry, path)
        return cls.from_npz(path, n_runs, entry["horizon"], keys, device, logged_rows=config.logged_rows)

    @classmethod
    def mistake_cost(cls, entry: dict[str, Any], random_mean: float | None) -> float:
        """1: rewards are 0 or 1 with one correct arm, so one mistake costs one unit of regret."""
        return 1.0

    @classmethod
    def logged_capacity(cls, config: ClassificationParams) -> int:
        """The rows set aside (``logged_rows``): a warm start serves at most that many."""
        return config.logged_rows

    @classmethod
    def memory_shape(cls, entry: dict[str, Any]) -> EnvironmentShape:
        """:func:`dataset_shape` with the entry's ``logged_rows`` set aside."""
        return dataset_shape(entry, int((entry.get("params") or {}).get("logged_rows", 0)))

    def sample_logged(self, n_samples: int, keys: torch.Tensor) -> LoggedInteractions:
        """``n_samples`` of the set-aside rows with uniformly random arms, per key ``(n_sets,)``: ``(n_sets, M, ...)``
        fields."""
        self.check_log_access()
        if n_samples > self.logged_rows.numel():
            raise ValueError(
                f"{n_samples} logged interactions requested but only {self.logged_rows.numel()} rows are set aside "
                "(environment params.logged_rows)"
            )
        rng = CounterRNG(keys.to(self.features.device))
        rows = self.logged_rows[rng.permutation("logged-rows", self.logged_rows.numel())[:, :n_samples]]  # (n_sets, M)
        arms = rng.randint("logged-arm", 0, self.n_arms, (n_samples,))
        rewards = (self.labels[rows] == arms).to(torch.float64)
        return LoggedInteractions(self.features[rows], torch.zeros_like(rows), arms, rewards)

    def logged(self, n_logged: int) -> LoggedRounds:
        """``n_logged`` set-aside rows with uniformly random arms (see :meth:`BanditEnvironment.logged`)."""
        logs = self.sample_logged(n_logged, run_keys(0, [0], WARM_START_STREAM).to(self.features.device))
        x = logs.queries[0]  # (M, dim)
        return self.served_warm_start(
            LoggedRounds(x[:, None, :].expand(-1, self.n_arms, -1), None, x, logs.items[0], logs.rewards[0])
        )

    def mean_reward_all_rounds(self) -> torch.Tensor:
        """:meth:`BanditEnvironment.mean_reward_all_rounds`: every round rewards exactly one of the ``K`` arms (the
        row's class) with 1, so the whole reward matrix has mean ``1/K`` in every run, whatever the rows,
        ``(n_runs,)``."""
        return torch.full((self.n_runs,), 1.0 / self.n_arms, dtype=torch.float64, device=self.features.device)

    def round(self, t: int) -> BanditRound:
        rows = self.order[:, t]
        x = self.features[rows]  # (n_runs, dim)
        contexts = x[:, None, :].expand(self.n_runs, self.n_arms, self.dim)
        mean = F.one_hot(self.labels[rows], self.n_arms).to(torch.float64)
        return BanditRound(Observation(t, contexts, None, x), mean, mean)
