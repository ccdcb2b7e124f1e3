"""The one round loop: a batched policy plays rounds of an environment.

Every loop of the package in which a policy plays rounds goes through :func:`simulate`: the jobs
(:mod:`hare.experiments.run`), the replay of logged data (:mod:`hare.experiments.replay_job`), the regret
decomposition (:mod:`hare.theory.decomposition`), the cost model (:mod:`hare.experiments.studies.cost_model`) and the
benchmarks (:mod:`hare.experiments.studies.bench`, :mod:`hare.experiments.studies.bench_hare`,
:mod:`hare.experiments.studies.bench_neural`).
What a caller adds goes through its extension points: pre-built ``rounds``, a ``feedback`` rule, a
:class:`RoundObserver` (measurements; :class:`RoundTimer` for timings), a ``stop`` predicate (time budgets) and
``account=False`` (play only).

Round ``t`` (0-based), in order:

1. ``observer.round_started(t)``;
2. the round, ``env.round(t)`` or ``rounds[t]``; after a warm start of ``M`` logs its observation is shown as
   round ``M + t`` (paper, sec:regimes);
3. with ``account``: the check that its contexts and queries are finite (:class:`NonFiniteInputError`);
4. ``observer.selecting(t, round_, observation)``, ``arms = policy.select(observation)``,
   ``observer.selected(t, arms)``;
5. ``rewards, learners = feedback(round_, arms)`` (default :func:`pulled_rewards`);
6. with ``account``: the pseudo-regret and the rewards added to the runs' sums;
7. ``policy.update(observation, arms, rewards)``, or for the ``learners`` only
   (:func:`hare.envs.replay.masked_update`); ``observer.updated(t, arms, rewards)``;
8. at a recorded round: with ``account`` the curves, then ``on_record(t, policy)``;
9. ``observer.round_ended(t)``, the progress ticker, and ``stop(t)``: true ends the play after this round.

A policy in synthesize mode (``policy.synthesizes``, :func:`hare.policies.base.synthesizes`) outputs a point of the
item space instead of an arm; steps 4 to 7 are then

4. ``observer.selecting(t, round_, observation)``, ``z = policy.synthesize(observation)`` ``(n_runs, d)``,
   ``observer.selected(t, z)``;
5. ``rewards, means, regret = env.synthesis_outcome(t, z)``: the environment rewards ``z`` itself (online round
   ``t``, whatever the warm start's shift);
6. with ``account``: that pseudo-regret and the rewards added to the runs' sums, and the outputs that are novel
   counted (their nearest pool item has cosine below :data:`NOVELTY_THRESHOLD`,
   :func:`hare.envs.base.nearest_item_cosine`);
7. ``policy.update_synthesis(observation, z, rewards)``; ``observer.updated(t, z, rewards)``.

It takes no ``feedback`` (every run learns from the reward of its own ``z``), and the environment must have
``synthesis_outcome`` (the config boundary refuses others: :meth:`hare.policies.base.PolicyConfig.check_environment`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch

from hare.envs.base import BanditEnvironment, BanditRound, LoggedRounds, nearest_item_cosine
from hare.envs.replay import masked_update
from hare.experiments.job_setup import checkpoints, progress_ticker
from hare.novelty import NOVELTY_THRESHOLD

Feedback = Callable[[Any, torch.Tensor], tuple[torch.Tensor, torch.Tensor | None]]
"""``feedback(round_, arms)``: the rewards ``(n_runs,)`` the policy learns from, and the runs that learn from them
``(n_runs,)`` bool (``None``: every run)."""


class NonFiniteInputError(ValueError):
    """An environment produced a NaN or Inf context or query."""


def nonfinite_inputs(observation) -> torch.Tensor:
    """0-dim bool tensor on the observation's device: do its contexts or queries hold a NaN or Inf?"""
    bad = torch.zeros((), dtype=torch.bool, device=observation.contexts.device)
    for values in (observation.contexts, observation.queries):
        if values is not None and values.is_floating_point():
            bad = bad | ~torch.isfinite(values).all()
    return bad


def _raise_nonfinite(environment: str, t: int) -> None:
    raise NonFiniteInputError(
        f"environment {environment!r}: round {t + 1} has non-finite contexts or queries (NaN or Inf)"
    )


def pulled_rewards(round_: BanditRound, arms: torch.Tensor) -> tuple[torch.Tensor, None]:
    """The default feedback: the realised rewards of the pulled ``arms`` ``(n_runs,)``; every run learns."""
    return round_.reward(arms), None


class RoundObserver:
    """The hooks :func:`simulate` calls at fixed points of a play (module docstring); here each does nothing.

    An observer measures: it must not change the policy's state.
    """

    def warm_starting(self) -> None:
        """Before the warm start (only with logs)."""

    def warm_started(self) -> None:
        """After the warm start (only with logs)."""

    def round_started(self, t: int) -> None:
        """Before round ``t`` is drawn."""

    def selecting(self, t: int, round_: Any, observation: Any) -> None:
        """Before ``select``; ``observation`` is what the policy is shown."""

    def selected(self, t: int, arms: torch.Tensor) -> None:
        """After ``select``: ``arms`` ``(n_runs,)`` (in synthesize mode the outputs ``z`` ``(n_runs, d)``)."""

    def updated(self, t: int, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        """After the update; ``rewards`` ``(n_runs,)`` are those the feedback returned (in synthesize mode ``arms`` are
        the outputs ``z`` and ``rewards`` the environment's rewards of them)."""

    def round_ended(self, t: int) -> None:
        """After round ``t``'s recording."""


class RoundTimer(RoundObserver):
    """Wall-clock seconds of a play, the device synchronised before every clock read on CUDA (each interval
    then holds its own kernels).

    Per round ``t``: ``round_seconds[t]``, the whole round (drawing it through the recording);
    ``policy_seconds[t]``, from ``select`` through the update (with the feedback, and with ``account`` the sums,
    between them); with ``split``, also ``select_seconds[t]`` and ``update_seconds[t]``, the two parts of
    ``policy_seconds[t]`` (one more synchronisation, between them). ``warm_start_seconds``: the warm start
    (0 without logs). :meth:`over_budget` is a ``stop`` for :func:`simulate`.
    """

    def __init__(
        self,
        device: torch.device | str = "cpu",
        split: bool = False,
        budget_s: float = math.inf,
        clock: Callable[[], float] = time.perf_counter,
    ):
        self.device, self.split, self.budget_s, self.clock = torch.device(device), split, budget_s, clock
        self.round_seconds: list[float] = []
        self.policy_seconds: list[float] = []
        self.select_seconds: list[float] = []
        self.update_seconds: list[float] = []
        self.warm_start_seconds = 0.0
        self.first_round_at = math.nan

    def now(self) -> float:
        """The clock, read after the device's queued work has finished."""
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        return self.clock()

    def warm_starting(self) -> None:
        self._warm_start = self.now()

    def warm_started(self) -> None:
        self.warm_start_seconds = self.now() - self._warm_start

    def round_started(self, t: int) -> None:
        self._round = self.now()
        if math.isnan(self.first_round_at):
            self.first_round_at = self._round

    def selecting(self, t: int, round_: Any, observation: Any) -> None:
        self._select = self.now()

    def selected(self, t: int, arms: torch.Tensor) -> None:
        if self.split:
            self._selected = self.now()
            self.select_seconds.append(self._selected - self._select)

    def updated(self, t: int, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        end = self.now()
        self.policy_seconds.append(end - self._select)
        if self.split:
            self.update_seconds.append(end - self._selected)

    def round_ended(self, t: int) -> None:
        self.round_seconds.append(self.now() - self._round)

    def over_budget(self, t: int) -> bool:
        """Whether more than ``budget_s`` seconds have passed since the first round started."""
        return self.clock() - self.first_round_at > self.budget_s


def prebuilt_rounds(env: BanditEnvironment) -> list[BanditRound]:
    """``[env.round(t) for t < env.horizon]``, for several policies to play the same rounds
    through ``simulate(..., rounds=...)`` without drawing them again. A round is a pure function of the run keys and
    ``t`` (counter-based randomness) and holds only tensors no policy writes to, so each policy plays exactly what
    it would play on ``env.round(t)``. For the synthetic environments, whose rounds hold ``(n_runs, n_arms)`` means
    and rewards; not for a replay, whose rounds depend on the policy's choices."""
    return [env.round(t) for t in range(env.horizon)]


@dataclass(frozen=True)
class SimulationOptions:
    """How :func:`simulate` plays and records; every field has the default of a plain job.

    * ``record_every``: record every ``record_every`` rounds and the last
      (:func:`hare.experiments.job_setup.checkpoints`; ``None``: the last only); or ``record_at``: the 1-based
      rounds to record (not both);
    * ``on_record(t, policy)``: called after the update of every recorded round ``t`` (0-based), for measurements
      of the policy's state along the way; it must not change that state;
    * ``rounds``: pre-built rounds played instead of ``env.round(t)`` (:func:`prebuilt_rounds`); ``horizon``: the
      number of rounds to play (default: all available);
    * ``feedback`` (step 5), ``observer`` (its hooks) and ``stop`` (step 9): those of the module docstring;
    * ``account``: a job's sums, curves and input checks (``False``: play only);
    * ``progress``: a tqdm bar (True), a log line every tenth of the rounds (False), nothing (None);
    * ``name``: the environment's name in error messages (default: its class name).
    """

    record_every: int | None = None
    record_at: Sequence[int] | None = None
    on_record: Callable[[int, Any], None] | None = None
    rounds: Sequence[Any] | None = None
    horizon: int | None = None
    feedback: Feedback = pulled_rewards
    observer: RoundObserver | None = None
    stop: Callable[[int], bool] | None = None
    account: bool = True
    progress: bool | None = False
    name: str | None = None


def simulate(
    env: BanditEnvironment,
    policy,
    options: SimulationOptions = SimulationOptions(),
    logs: LoggedRounds | None = None,
) -> dict[str, np.ndarray]:
    """Play ``options.horizon`` rounds (default ``env.horizon``, or ``len(options.rounds)``) of ``env`` with
    ``policy``; the round of the module docstring, with the options of :class:`SimulationOptions`.

    With ``account`` (a job), returns the arrays of the result file (:mod:`hare.experiments.run`), with ``C`` the
    recorded rounds played:

    * ``rounds`` ``(C,)``: 1-based round counts at which the curves are recorded;
    * ``cumulative_regret``, ``cumulative_reward`` ``(n_runs, C)``: sums of ``max_a mu(a) - mu(arm)`` and of the
      rewards over the rounds so far;
    * ``total_regret``, ``total_reward`` ``(n_runs,)``: the sums over every round played;
    * in synthesize mode only, ``novelty`` ``(n_runs,)``: the share of the rounds played whose output is novel
      (module docstring).

    Without ``account`` (play only: no input check, no sums, no curves), returns ``{"rounds_played": ()}``.

    ``logs`` (the warm regime): the policy first learns from them (:meth:`Policy.warm_start`), and online round
    ``t`` is shown to it as round ``M + t``, as if it had played the ``M`` logged rounds itself; regret and reward
    count the online rounds only.

    On CPU the inputs are checked every round before the policy sees them; on a GPU the first bad round is
    tracked on the device and checked at every recorded round and at the end, so the check adds no host
    synchronisation per round.
    """
    record_every, record_at, on_record = options.record_every, options.record_at, options.on_record
    rounds, horizon, feedback, stop, account = (
        options.rounds,
        options.horizon,
        options.feedback,
        options.stop,
        options.account,
    )
    observer, progress = options.observer, options.progress
    name = options.name or type(env).__name__
    available = env.horizon if rounds is None else len(rounds)
    n_rounds = available if horizon is None else horizon
    if not 0 <= n_rounds <= available:
        raise ValueError(f"horizon must lie in 0..{available}, got {n_rounds}")
    if record_at is not None and record_every is not None:
        raise ValueError("give record_every or record_at, not both")
    if record_at is not None:
        recorded = np.array(sorted({int(r) for r in record_at}), dtype=np.int64)
        if recorded.size and not 1 <= recorded[0] <= recorded[-1] <= n_rounds:
            raise ValueError(f"record_at must lie in 1..{n_rounds}, got {record_at}")
    else:
        recorded = checkpoints(n_rounds, record_every or n_rounds) if n_rounds else np.zeros(0, dtype=np.int64)
    record = set((recorded - 1).tolist())
    observer = RoundObserver() if observer is None else observer
    device = policy.run_keys.device
    synthesize = getattr(policy, "synthesizes", False)
    if synthesize:
        if not callable(getattr(env, "synthesis_outcome", None)):
            raise ValueError(f"environment {name!r} does not reward synthesized outputs (no synthesis_outcome)")
        if feedback is not pulled_rewards:
            raise ValueError("a synthesize-mode policy learns from the reward of its own output: give no feedback")
    if account:
        regret = torch.zeros(env.n_runs, dtype=torch.float64, device=device)
        novel = torch.zeros_like(regret) if synthesize else None
        reward = torch.zeros_like(regret)
        first_bad = torch.full((), -1, dtype=torch.int64, device=device)
        regret_curve, reward_curve = [], []
    offset = 0
    if logs is not None:
        observer.warm_starting()
        policy.warm_start(logs)
        observer.warm_started()
        offset = len(logs)
    tick = None if progress is None else progress_ticker(n_rounds, progress)
    played = 0
    for t in range(n_rounds):
        observer.round_started(t)
        round_ = env.round(t) if rounds is None else rounds[t]
        observation = replace(round_.observation, t=t + offset) if offset else round_.observation
        if account:
            if device.type == "cpu":
                if nonfinite_inputs(observation):
                    _raise_nonfinite(name, t)
            else:
                first_bad = torch.where((first_bad < 0) & nonfinite_inputs(observation), t, first_bad)
        observer.selecting(t, round_, observation)
        if synthesize:
            arms = policy.synthesize(observation)  # the outputs z (n_runs, d)
            observer.selected(t, arms)
            rewards, _, round_regret = env.synthesis_outcome(t, arms)
            if account:
                regret += round_regret
                reward += rewards
                novel += nearest_item_cosine(arms, env.pool.embeddings) < NOVELTY_THRESHOLD
            policy.update_synthesis(observation, arms, rewards)
        else:
            arms = policy.select(observation)
            observer.selected(t, arms)
            rewards, learners = feedback(round_, arms)
            if account:
                regret += round_.regret(arms)
                reward += rewards
            if learners is None:
                policy.update(observation, arms, rewards)
            else:
                masked_update(policy, observation, arms, rewards, learners)
        observer.updated(t, arms, rewards)
        played = t + 1
        if t in record:
            if account:
                if device.type != "cpu" and first_bad >= 0:
                    _raise_nonfinite(name, int(first_bad))
                regret_curve.append(regret.clone())
                reward_curve.append(reward.clone())
            if on_record is not None:
                on_record(t, policy)
        observer.round_ended(t)
        if tick is not None:
            tick(t)
        if stop is not None and stop(t):
            break
    if not account:
        return {"rounds_played": np.asarray(played, dtype=np.int64)}
    if device.type != "cpu" and first_bad >= 0:
        _raise_nonfinite(name, int(first_bad))
    empty = torch.zeros(env.n_runs, 0, dtype=torch.float64)
    arrays = {
        "rounds": recorded[recorded <= played].astype(np.int64),
        "cumulative_regret": (torch.stack(regret_curve, 1) if regret_curve else empty).cpu().numpy(),
        "cumulative_reward": (torch.stack(reward_curve, 1) if reward_curve else empty).cpu().numpy(),
        "total_regret": regret.cpu().numpy(),
        "total_reward": reward.cpu().numpy(),
    }
    if synthesize:
        arrays["novelty"] = (novel / max(played, 1)).cpu().numpy()
    return arrays
