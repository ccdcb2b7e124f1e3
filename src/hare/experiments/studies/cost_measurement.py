"""Measuring one entry of the cost model (:mod:`hare.experiments.studies.cost_model`): which jobs share a per-round
cost, and the phases of one representative job's work timed as the job plays them.

* :func:`entry_key`, :func:`measured_entries`: the jobs that share a per-round cost (an *entry*) and the one job
  measured for each;
* :func:`measure_entry`: ``setup(B)``, ``warm(B)``, ``c(t, B)`` and ``tau(B)`` of the cost model's formula at one run
  count ``B``, in CPU seconds of this process (a training timed apart from its round by :class:`TrainingTimer`);
* :func:`probe_late_rounds`: the rounds of a growing cost timed where they cost most, at the end of the play;
* :func:`measure_replay_entry`: the same phases for a replay of logged data, whose steps the replay's feedback
  accepts or not, plus its finish (the final greedy policy's off-policy estimates);
* :func:`recording_seconds`, :func:`startup_seconds`: a job's recording and a batch process's start.
"""

from __future__ import annotations

import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hare.experiments.grid import Job, prepared_dataset
from hare.experiments.job_setup import (
    build_environment,
    checkpoints,
    policy_keys,
    provenance,
    regime_record,
    resolve_device,
    warm_start_logs,
)
from hare.experiments.job_spec import JobSpec
from hare.experiments.simulation import RoundTimer, SimulationOptions, simulate
from hare.experiments.studies.cost_schedule import schedule_of
from hare.io import write_result
from hare.policies.base import build_policy, make_config, policy_class

TRAINING_METHOD = "train_network"
"""The method of a policy on a training schedule that one training is (timed apart from its round)."""


def entry_key(job: Job) -> tuple[str, str]:
    """Jobs that share a per-round cost: (policy with its hyperparameters but those a grid point sets per run, as
    JSON; environment but its horizon, as JSON). Experiments that run the same policy on the same environment share
    it, in either regime: a warm start of ``M`` logs feeds the policy's update ``M`` times, counted as ``M`` rounds
    played before the first online one."""
    per_run = set(policy_class(job.spec.policy).per_run_hyperparameters)
    params = {key: value for key, value in job.spec.params.items() if key not in per_run}
    environment = {key: value for key, value in job.spec.environment.as_dict().items() if key != "horizon"}
    return f"{job.spec.policy} {json.dumps(params, sort_keys=True)}", json.dumps(environment, sort_keys=True)


def measured_entries(jobs: list[Job]) -> dict[tuple[str, str], Job]:
    """One representative job per :func:`entry_key`, the reported job where there is one."""
    entries: dict[tuple[str, str], Job] = {}
    for job in sorted(jobs, key=lambda j: (j.role != "report", j.stem)):
        entries.setdefault(entry_key(job), job)
    return entries


def needs_warm_start(job: Job) -> bool:
    """Whether the job's policy cannot play without the warm start's logs (HARE with learned projections)."""
    try:
        make_config(job.spec.policy, job.spec.params).check_regime("cold")
    except ValueError:
        return True
    return False


class TrainingTimer:
    """Wall times of every call of a policy's training method (:data:`TRAINING_METHOD`), wrapped on the instance,
    ``{round: seconds}`` by the round counter of the :class:`RoundTimer` beside it (``-1``: the warm start's, which
    its ``warm_start_seconds`` hold)."""

    def __init__(self, policy: Any, rounds: RoundTimer, clock: Callable[[], float]):
        method = getattr(policy, TRAINING_METHOD, None)
        if method is None:
            raise ValueError(f"{type(policy).__name__} has a training schedule but no {TRAINING_METHOD}() to time")
        self.seconds: dict[int, float] = {}

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = clock()
            try:
                return method(*args, **kwargs)
            finally:
                index = len(rounds.round_seconds) if not math.isnan(rounds.first_round_at) else -1
                self.seconds[index] = self.seconds.get(index, 0.0) + clock() - start

        setattr(policy, TRAINING_METHOD, timed)


class LateRounds(Sequence):
    """Rounds ``start .. stop - 1`` of ``env``, each drawn when the play reaches it (:func:`simulate`'s ``rounds``), so
    that a timed round includes its drawing as a played one does."""

    def __init__(self, env: Any, start: int, stop: int):
        self.env, self.start, self.stop = env, start, stop

    def __len__(self) -> int:
        return self.stop - self.start

    def __getitem__(self, i: int) -> Any:
        return self.env.round(self.start + i)


def probe_late_rounds(
    env: Any,
    policy: Any,
    first: int,
    last: int,
    window: int,
    clock: Callable[[], float] = time.process_time,
    budget_s: float = math.inf,
) -> dict[str, Any]:
    """The ``window`` rounds before round ``last`` (1-based) of a play that stopped after ``first`` rounds, timed.

    Rounds ``first .. last - window - 1`` (0-based) are fed untimed, update only: each run pulls an arm drawn
    uniformly (a fixed generator), so the policy's history grows by one pull per run and round as in the play, at
    the cost of an update and no choice; the feeding stops early once it has taken ``budget_s`` seconds of
    ``clock`` (an update that costs tens of milliseconds, LNUCB-TA's ridge at 784 features), and the probe is then
    the ``window`` rounds after the last round fed. Those rounds are played by :func:`simulate` (drawn, chosen,
    rewarded, updated, the regret summed) and timed with ``clock``. For a policy whose round grows with its history
    (kNN, LNUCB-TA's neighbours, a kernel dictionary), these are its most expensive rounds that the budgeted play
    does not reach.

    Returns ``{"last": the round the probe ends at, "fed_rounds", "round_seconds": [window floats]}``.
    """
    generator = torch.Generator().manual_seed(0)
    start_timed = max(first, last - window)
    began = clock()
    for t in range(first, start_timed):
        if clock() - began > budget_s:
            start_timed = t
            break
        bandit_round = env.round(t)
        arms = torch.randint(env.n_arms, (env.n_runs,), generator=generator).to(bandit_round.rewards.device)
        policy.update(bandit_round.observation, arms, bandit_round.reward(arms))
    stop = min(start_timed + window, env.horizon)
    timer = RoundTimer(clock=clock)
    simulate(env, policy, SimulationOptions(rounds=LateRounds(env, start_timed, stop), progress=None, observer=timer))
    return {"last": stop, "fed_rounds": start_timed - first, "round_seconds": list(timer.round_seconds)}


def built_play(spec: JobSpec, results: Path, clock: Callable[[], float]) -> tuple[Any, Any, Any, float]:
    """``(env, logs, policy, setup_s)`` of a job ``spec`` on CPU: its prepared dataset read from ``results`` (refused in
    one line, naming the file, where it is missing), the environment, the warm start's logs and the policy built, and
    the ``clock`` seconds that took (``setup(B)`` of the cost model)."""
    dataset = prepared_dataset(spec.environment)
    path = results / dataset if dataset else None
    if path is not None and not path.exists():
        raise FileNotFoundError(f"{path} is missing: build it first (snakemake {path} --configfile <config>)")
    start = clock()
    env = build_environment(spec, resolve_device("cpu"), path)
    logs = warm_start_logs(spec, env)
    policy = build_policy(spec.policy, spec.params, env, policy_keys(spec))
    return env, logs, policy, clock() - start


def measure_entry(
    job: Job,
    results: Path,
    n_runs: int,
    horizon: int,
    budget_s: float,
    clock: Callable[[], float] = time.process_time,
    probe_at: int = 0,
    window: int = 20,
    probe_budget_s: float = math.inf,
) -> dict[str, Any]:
    """The phases of ``job``'s work at ``n_runs`` runs (:mod:`.cost_model`), its environment played up to ``horizon``
    rounds or ``budget_s`` seconds (at least one round), cold unless the policy needs its logs:
    ``{"runs", "setup_s", "warm_start_s", "round_seconds" (each round without its training), "training_seconds"
    (each training), "rounds_played", "regime", "probe"}``. A training's seconds are taken out of its round's.

    ``probe_at``: where the play stopped more than ``window`` rounds before round ``probe_at`` (capped by the rounds
    the environment holds) in the cold regime, the ``window`` rounds before it are timed by
    :func:`probe_late_rounds` (``probe``, its feeding limited to ``probe_budget_s``; None otherwise)."""
    spec = replace(job.spec, n_runs=n_runs, device="cpu", environment=replace(job.spec.environment, horizon=horizon))
    if not needs_warm_start(job):
        spec = replace(spec, regime="cold", n_logged=0)
    env, logs, policy, setup = built_play(spec, results, clock)
    timer = RoundTimer(budget_s=budget_s, clock=clock)
    training = TrainingTimer(policy, timer, clock) if schedule_of(spec) is not None else None
    simulate(env, policy, SimulationOptions(progress=None, observer=timer, stop=timer.over_budget), logs=logs)
    trained = training.seconds if training is not None else {}
    rounds = [seconds - trained.get(t, 0.0) for t, seconds in enumerate(timer.round_seconds)]
    last = min(probe_at, env.horizon)
    cold = spec.regime == "cold"
    probe = None
    if cold and last > len(rounds) + window:
        probe = probe_late_rounds(env, policy, len(rounds), last, window, clock, probe_budget_s)
    return {
        "runs": n_runs,
        "setup_s": setup,
        "warm_start_s": timer.warm_start_seconds,
        "round_seconds": rounds,
        "training_seconds": [trained[t] for t in sorted(trained) if 0 <= t < len(rounds)],
        "rounds_played": len(rounds),
        "regime": spec.regime,
        "probe": probe,
    }


class TimedTally(RoundTimer):
    """A :class:`RoundTimer` that also keeps a replay's accounts (:class:`hare.experiments.replay_job.ReplayTally`,
    whose feedback needs them), as the replay job keeps them."""

    def __init__(self, tally: Any, budget_s: float, clock: Callable[[], float]):
        super().__init__(budget_s=budget_s, clock=clock)
        self.tally = tally

    def updated(self, t: int, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        self.tally.updated(t, arms, rewards)
        super().updated(t, arms, rewards)


def measure_replay_entry(
    job: Job, results: Path, n_runs: int, budget_s: float, clock: Callable[[], float] = time.process_time
) -> dict[str, Any]:
    """The phases of a replay job's work at ``n_runs`` runs, as :func:`measure_entry` gives them (``round_seconds``:
    each step, a logged event shown, the policy's choice, accepted or not, and the accepted runs' update), over its
    horizon or ``budget_s`` seconds, and ``finish_s``: the final greedy policy chosen for every logged event and its
    off-policy estimates (:func:`hare.experiments.replay_job.greedy_arms`, ``off_policy_estimates``), once a job."""
    from hare.experiments.replay_job import ReplayTally, greedy_arms, off_policy_estimates

    env, _, policy, setup = built_play(replace(job.spec, n_runs=n_runs, device="cpu"), results, clock)
    tally = ReplayTally(env.n_runs, env.horizon, None, torch.device("cpu"))
    timer = TimedTally(tally, budget_s, clock)
    options = SimulationOptions(
        progress=None, observer=timer, stop=timer.over_budget, feedback=tally.feedback, account=False
    )
    simulate(env, policy, options)
    start = clock()
    arms, _ = greedy_arms(policy, env.logged)
    off_policy_estimates(arms, env.logged)
    finish = clock() - start
    return {
        "runs": n_runs,
        "setup_s": setup,
        "warm_start_s": 0.0,
        "round_seconds": list(timer.round_seconds),
        "training_seconds": [],
        "rounds_played": len(timer.round_seconds),
        "regime": "cold",
        "probe": None,
        "finish_s": finish,
    }


def recording_seconds(job: Job, results: Path, clock: Callable[[], float] = time.process_time) -> float:
    """Seconds a job of ``job``'s shape spends recording: its sidecar's provenance (specification hash, commit,
    versions) and its ``.npz`` and sidecar written (:func:`hare.io.write_result`) with curves of its ``n_runs`` runs
    at its recorded rounds."""
    spec = job.spec
    n, horizon = spec.n_runs, int(spec.environment.horizon)
    recorded = checkpoints(horizon, spec.record_every or horizon)
    arrays = {
        "rounds": recorded,
        "cumulative_regret": np.zeros((n, recorded.size)),
        "cumulative_reward": np.zeros((n, recorded.size)),
        "total_regret": np.zeros(n),
        "total_reward": np.zeros(n),
    }
    env_spec = replace(spec, environment=replace(spec.environment, horizon=1), regime="cold", n_logged=0)
    dataset = prepared_dataset(spec.environment)
    env = build_environment(env_spec, resolve_device("cpu"), results / dataset if dataset else None)
    with tempfile.TemporaryDirectory() as folder:
        start = clock()
        sidecar = {**provenance(spec, env, torch.device("cpu"), 0.0), **regime_record(spec, None)}
        write_result(Path(folder) / "job.npz", arrays, sidecar)
        return clock() - start


def startup_seconds() -> float:
    """CPU seconds (user and system) a batch's process takes to start and import the package's job runner
    (``python -c "import hare.experiments.run"``), the interpreter this one."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", "import hare.experiments.run"], check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
