"""The typed bandit problem every environment returns.

A round carries what the policy may see (:class:`Observation`) and what only the
evaluator may see: the mean reward of every arm, so pseudo-regret is exact, and the
realised reward of every arm (full information), so the reward of whichever arm the
policy pulls is fixed before it chooses (Riquelme et al. 2018's reward matrix).
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class Observation:
    """What a policy sees at round ``t``.

    contexts: ``(n_runs, n_arms, dim)`` arm features. Environments whose arms share
        one context (classification) pass an expanded view, not a copy.
    users: ``(n_runs,)`` int64 index of the active user, or ``None``.
    queries: ``(n_runs, query_dim)`` the raw query for policies that attend over an
        item pool (HARE, retrieval), or ``None``.
    """

    t: int
    contexts: torch.Tensor
    users: torch.Tensor | None = None
    queries: torch.Tensor | None = None


@dataclass(frozen=True)
class BanditRound:
    """One round for ``n_runs`` runs.

    mean_rewards: ``(n_runs, n_arms)`` expected reward of every arm.
    rewards: ``(n_runs, n_arms)`` realised reward of every arm.
    """

    observation: Observation
    mean_rewards: torch.Tensor
    rewards: torch.Tensor

    @property
    def optimal_arms(self) -> torch.Tensor:
        """``(n_runs,)`` arm with the largest mean reward."""
        return self.mean_rewards.argmax(dim=1)

    def regret(self, arms: torch.Tensor) -> torch.Tensor:
        """Pseudo-regret ``max_a mu(a) - mu(arms)``, ``(n_runs,)``."""
        chosen = self.mean_rewards.gather(1, arms[:, None]).squeeze(1)
        return self.mean_rewards.max(dim=1).values - chosen

    def reward(self, arms: torch.Tensor) -> torch.Tensor:
        """Realised reward of the pulled arms, ``(n_runs,)``."""
        return self.rewards.gather(1, arms[:, None]).squeeze(1)


@dataclass(frozen=True)
class ItemPool:
    """A knowledge pool whose items are the arms.

    embeddings: ``(n_arms, item_dim)`` rows of unit norm.
    clusters: ``(n_arms,)`` int64 cluster of each item, values in ``0..n_clusters-1``.
    """

    embeddings: torch.Tensor
    clusters: torch.Tensor

    @property
    def n_clusters(self) -> int:
        return int(self.clusters.max()) + 1


def nearest_item_cosine(outputs: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
    """The cosine similarity of each output ``(..., d)`` to its nearest pool item of ``items`` ``(N, d)``, ``(...)``
    float64: ``max_n cos(o, e_n)`` (a zero output has cosine 0 with every item). An output is *novel* when this is
    below a threshold (:func:`hare.experiments.studies.personalization_metrics.novelty`, the synthesize-mode jobs'
    ``novelty``, :func:`hare.experiments.simulation.simulate`)."""
    cosines = F.normalize(outputs.to(torch.float64), dim=-1) @ F.normalize(items.to(torch.float64), dim=-1).T
    return cosines.max(-1).values


@dataclass(frozen=True)
class LoggedRounds:
    """``M`` logged interactions, the same for every run: what a warm start feeds a policy (paper: sec:regimes).

    contexts ``(M, n_arms, dim)`` (arms that share a context may be an expanded view), users ``(M,)``
    int64 or ``None``, queries ``(M, query_dim)`` or ``None``, arms ``(M,)`` int64 (the logging
    policy's choices), rewards ``(M,)`` the realised rewards of those arms.
    """

    contexts: torch.Tensor
    users: torch.Tensor | None
    queries: torch.Tensor | None
    arms: torch.Tensor
    rewards: torch.Tensor

    def __len__(self) -> int:
        return int(self.arms.shape[0])

    def step(self, m: int, n_runs: int) -> tuple[Observation, torch.Tensor, torch.Tensor]:
        """Logged interaction ``m`` as round ``t = m`` of ``n_runs`` runs: (observation, arms ``(n_runs,)``, rewards
        ``(n_runs,)``)."""
        contexts = self.contexts[m].expand(n_runs, *self.contexts.shape[1:])
        users = None if self.users is None else self.users[m].expand(n_runs)
        queries = None if self.queries is None else self.queries[m].expand(n_runs, -1)
        return Observation(m, contexts, users, queries), self.arms[m].expand(n_runs), self.rewards[m].expand(n_runs)

    def digest(self) -> str:
        """:func:`tensor_digest` of every field: equal digests mean identical logs."""
        return tensor_digest(self.contexts, self.users, self.queries, self.arms, self.rewards)


def tensor_digest(*tensors: torch.Tensor | None) -> str:
    """sha256 (first 16 hex digits) of the shapes and values of ``tensors`` in order (``None`` counts as absent)."""
    h = hashlib.sha256()
    for tensor in tensors:
        if tensor is None:
            h.update(b"none")
            continue
        h.update(str(tuple(tensor.shape)).encode())
        h.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


class LoggedDataUnavailable(RuntimeError):
    """A policy or experiment asked for logged interactions that its regime withholds (cold) or its environment
    lacks."""


WARM_START_STREAM = "warm-start-logs"


@dataclass(frozen=True)
class EnvironmentShape:
    """What the pre-flight memory estimate (:mod:`hare.experiments.memory`) needs of a job's environment, answered by
    its class (:meth:`BanditEnvironment.memory_shape`) without building it: ``arms`` of ``dim`` features, ``rounds``
    played, the dataset's ``rows`` (0 without a dataset), the item ``clusters``, the ``shared_bytes`` held once whatever
    the runs, and the ``run_bytes`` each environment run adds beyond what every environment holds per run (a replay's
    greedy read of every logged event)."""

    arms: int
    dim: int
    rounds: int
    rows: int
    clusters: int
    shared_bytes: int
    run_bytes: int = 0


class BanditEnvironment(ABC):
    """``n_runs`` independent runs of one bandit problem, ``horizon`` rounds each.

    Information regime (paper: sec:regimes): with ``logs_allowed`` false (the cold regime) every
    read of the environment's logged interactions raises :class:`LoggedDataUnavailable`;
    ``logged_reads`` counts the reads that were served.
    """

    kind: ClassVar[str] = ""
    """The environment kind it is registered under (:func:`hare.envs.registry.register_environment`), the ``kind`` of
    a config's ``environments`` entry."""
    config_class: ClassVar[type]
    """The typed dataclass of its ``params`` (:meth:`make_config`)."""
    needs_dataset: ClassVar[bool] = False
    """Whether an entry names a prepared dataset (``dataset``) and a job reads its file (``--dataset``)."""
    dataset_noun: ClassVar[str] = "dataset"
    """What a kind that :attr:`needs_dataset` reads, in the error that asks for it."""
    has_preparation: ClassVar[bool] = False
    """Whether an entry may name a ``preparation`` of its dataset (:data:`hare.data.encoding.PROTOCOLS`)."""
    serves_logs: ClassVar[bool] = False
    """Whether :meth:`logged` serves a warm start (the warm regime); at most :meth:`logged_capacity` interactions."""
    has_oracle: ClassVar[bool] = False
    """Whether the instance exposes its true parameters (HARE-Sim's ``W*``: oracle projections, the OFUL check)."""
    has_reward_matrix: ClassVar[bool] = True
    """Whether every round holds the reward of every arm (:meth:`mean_reward_all_rounds` can answer); a replay of
    logged events holds the logged arm's only."""
    replays_logged_data: ClassVar[bool] = False
    """Whether its rounds replay logged events (Li et al. 2011): a job plays its runs as one replay
    (:mod:`hare.experiments.replay_job`), never in a grid simulation, and the cost model leaves it out."""

    n_runs: int
    n_arms: int
    dim: int
    horizon: int
    query_dim: int
    n_users: int = 1
    user_dim: int = 0
    pool: ItemPool | None = None
    logs_allowed: bool = True
    logged_reads: int = 0
    warm_rounds: int = 0

    @classmethod
    def make_config(cls, params: dict[str, Any] | None) -> Any:
        """The typed, validated ``params`` of an entry (:attr:`config_class`); a key it does not know is a ValueError
        naming the kind, the key and the known ones, a bad value the config class's own error."""
        params = params or {}
        known = [f.name for f in fields(cls.config_class)]
        unknown = sorted(set(params) - set(known))
        if unknown:
            raise ValueError(f"{unknown[0]}: unknown setting of a {cls.kind} environment; known: {known}")
        return cls.config_class(**params)

    @classmethod
    def logged_capacity(cls, config: Any) -> int | None:
        """The most logged interactions :meth:`logged` can serve under ``config`` (:meth:`make_config`); ``None``
        without a bound, 0 where :attr:`serves_logs` is false."""
        return None if cls.serves_logs else 0

    @classmethod
    def from_entry(
        cls,
        entry: dict[str, Any],
        n_runs: int,
        keys: torch.Tensor,
        device="cpu",
        dataset_path: str | Path | None = None,
    ) -> BanditEnvironment:
        """The environment of a job specification's ``environment`` entry (``name``, ``kind``, ``params``,
        ``dataset``, ``horizon``, ``preparation``), ``n_runs`` runs drawing from ``keys`` ``(n_runs,)``: built from its
        typed ``params`` (:meth:`make_config`) and horizon, or, for a kind that :attr:`needs_dataset`, from the
        prepared file at ``dataset_path`` (:meth:`from_dataset`; without one, a ValueError naming the environment)."""
        config = cls.make_config(entry.get("params"))
        if not cls.needs_dataset:
            return cls(config, n_runs, entry["horizon"], keys, device)
        if dataset_path is None:
            raise ValueError(f"environment {entry['name']!r} needs its prepared {cls.dataset_noun} (--dataset)")
        return cls.from_dataset(entry, config, dataset_path, n_runs, keys, device)

    @classmethod
    def from_dataset(cls, entry: dict[str, Any], config: Any, path, n_runs: int, keys: torch.Tensor, device):
        """The environment of ``entry`` (typed ``config``) over the prepared file at ``path``; a kind that
        :attr:`needs_dataset` implements it."""
        raise NotImplementedError(f"{cls.__name__} reads no dataset")

    @classmethod
    def mistake_cost(cls, entry: dict[str, Any], random_mean: float | None) -> float | None:
        """The cost of one mistake in the whole horizon of ``entry`` (``kind``, ``horizon``, ``params``), the floor
        of an equivalence margin (:func:`hare.experiments.margins.resolution`), given Random's mean total regret on
        the tuning runs (``None`` without them); ``None`` where the kind has no such resolution."""
        return None

    @classmethod
    def memory_shape(cls, entry: dict[str, Any]) -> EnvironmentShape:
        """The :class:`EnvironmentShape` of an ``environment`` entry (as :meth:`from_entry` takes), from its config
        alone: no file is read and nothing is built. A registered kind implements it."""
        raise NotImplementedError(f"{cls.__name__} has no memory estimate")

    @property
    def history_capacity(self) -> int:
        """Interactions a policy can be fed: the horizon plus the largest warm start served (``warm_rounds``).
        Policies that store every pull size their history by it."""
        return self.horizon + self.warm_rounds

    @abstractmethod
    def round(self, t: int) -> BanditRound:
        """The round ``t`` (0-based) of every run."""

    def check_log_access(self) -> None:
        """Count a read of logged interactions, or raise :class:`LoggedDataUnavailable` in the cold regime."""
        if not self.logs_allowed:
            raise LoggedDataUnavailable(
                f"{type(self).__name__}: the cold regime withholds logged interactions from every policy"
            )
        self.logged_reads += 1

    def served_warm_start(self, logs: LoggedRounds) -> LoggedRounds:
        """Record that ``logs`` may be fed before round 1 (policies built afterwards size their histories for it)."""
        self.warm_rounds = max(self.warm_rounds, len(logs))
        return logs

    def logged(self, n_logged: int) -> LoggedRounds:
        """The environment's first ``n_logged`` logged interactions (uniform logging policy), identical for
        every run and every policy: the warm start of the warm regime. Drawn from keys of the environment
        instance and :data:`WARM_START_STREAM`, never from run keys."""
        raise LoggedDataUnavailable(f"{type(self).__name__} has no logged interactions for a warm start")

    def mean_reward_all_rounds(self) -> torch.Tensor:
        """The mean of each run's whole reward matrix, ``(n_runs,)`` float64: the reward :meth:`round` gives every
        arm at every round ``0..horizon-1`` (realised rewards; in classification they equal the means), rounds not
        yet played included. No bandit has this information (it holds the rewards of the arms not pulled and of the
        rounds to come); LNUCB-TA's public-code reading reads it as its global mean (``global_mean: all_rewards``).

        Environments that can compute it override this method; the others raise ``ValueError`` naming themselves."""
        raise ValueError(
            f"{type(self).__name__} does not expose the mean of its whole reward matrix "
            "(LNUCB-TA's global_mean: all_rewards); use global_mean: rounds or arms"
        )


def mean_of_round_rewards(env: BanditEnvironment) -> torch.Tensor:
    """:meth:`BanditEnvironment.mean_reward_all_rounds` of an environment whose :meth:`~BanditEnvironment.round`
    returns a :class:`BanditRound` and draws every round from counters (so a round can be asked for twice): the
    realised rewards ``(n_runs, n_arms)`` of rounds ``0..horizon-1`` summed over arms and rounds, divided by
    ``horizon n_arms``. One pass over the horizon (the cost of the environment's side of one simulation), ``(n_runs,)``
    float64."""
    total = torch.zeros(env.n_runs, dtype=torch.float64)
    for t in range(env.horizon):
        rewards = env.round(t).rewards
        total = total.to(rewards.device) + rewards.to(torch.float64).sum(-1)
    return total / (env.horizon * env.n_arms)
