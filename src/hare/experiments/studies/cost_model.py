"""Cost model of a configuration: the CPU time of its jobs predicted from the phases of their work, each measured and
counted as the job plays it.

A benchmark, not a test. Jobs that share a per-round cost share an *entry* (:func:`entry_key`: the policy with its
hyperparameters but those a grid point sets per run, and the environment but its horizon). One representative job
of every entry plays its environment on one thread at each run count ``B`` of ``runs`` (two by default, so that the
dependence on ``B`` is fitted, not assumed), until the horizon or ``budget_s`` seconds of play (at least one round),
timed phase by phase (:func:`measure_entry`). Every time is CPU seconds of the measuring process (user and system,
``time.process_time``), the unit in which a build's cost is reported (``/usr/bin/time``'s user + sys), so that other
work on the machine slows the measurement without inflating it:

* ``setup(B)``: the prepared dataset read, the environment, the warm start's logs and the policy built;
* ``warm(B)``: the warm start, for a policy that cannot play without its logs (HARE with learned projections), which
  is measured in the warm regime; every other entry is measured cold and its ``M`` logged updates are counted as
  ``M`` rounds played before the first online one (an update per log; a round's choice is counted too, an
  overestimate);
* ``c(t, B)``: the CPU time of round ``t`` (0-based; drawing it through the regret and reward sums, as
  :func:`hare.experiments.simulation.simulate` spends it) without the policy's training;
* ``tau(B)``: one training of a policy on a training schedule (the neural policies: every update at ``t <
  dense_training_rounds``, then every ``train_every``-th; :func:`trainings_in`), timed apart from its round.

Rounds past the budget are modelled by a least-squares line through the means of the measured rounds' windows of
``window`` rounds: ``c(t) = a + b min(t, cap)`` with ``b >= 0``, where ``cap`` is ``max_points`` for a policy whose
dictionary saturates there (the kernel policies: the work of a round grows with the points held, then stays flat
under the sliding window) and infinite otherwise (exact for a cost constant or linear in the history, kNN and
LNUCB-TA's growing history). A simulation of ``B`` runs playing updates ``[t0, t1)`` (``t0 = 0``, ``t1 = M + T``;
for an entry measured warm ``t0 = M``) then costs, at a measured ``B``,

    S_B = setup(B) + warm(B) + sum_{t in [0, t1 - t0)} c(t, B) + N_train(t0, t1) tau(B),

the measured rounds counted as measured and the rest on the line. Across run counts, ``S(B)`` is the least-squares
line through the measured ``(B_i, S_{B_i})`` with a slope ``>= 0`` (with one run count: proportional,
``S(B) = S_{B_1} B / B_1``, an upper bound for a policy with a per-round cost shared by its runs), and never below
0. A job plays as the workflow plays it (:func:`plays`): a tuning grid as one simulation of ``P n`` runs for its
``P`` points (:func:`hare.experiments.run.simulation_groups`), a job with ``max_runs_per_simulation`` in chunks of
that many runs (:func:`hare.experiments.run.run_chunks`), every other job alone at its ``n`` runs. Each job adds
its recording (its sidecar's provenance and its result files written; :func:`recording_seconds`) and each batch
(``EXPERIMENT/ENVIRONMENT``, one process) the start of a process that imports the package (:func:`startup_seconds`).

Every entry says how far it was measured (``coverage``): past its most expensive phase (a schedule's training and
the round without it both timed; a saturating cost measured at its cap; any other cost measured over its whole
play) or, where not, the check of its model against a longer held-out measurement: the model fitted on the first
half of its measured rounds predicts the whole measured play, and ``check`` gives the ratio of predicted to
measured seconds. Not modelled, listed with their reasons under ``unmodelled``: the jobs of an entry that could not
be measured (a prepared dataset this machine lacks, Covertype offline; an error building or playing it) and the
replays of logged data. A periodic re-factorisation (``refactor_every``) is counted where the measured rounds hold
one and carried by the line otherwise. The prediction assumes the measured machine and one thread per job.

Length: one module, one model: the phases it measures, the counts that multiply them (the training schedule, the
run counts, the chunks) and the prediction are read together against the formula above.
"""

from __future__ import annotations

import json
import logging
import math
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hare.envs.registry import environment_class
from hare.experiments.grid import Job, expand_jobs, prepared_dataset
from hare.experiments.job_setup import (
    build_environment,
    checkpoints,
    policy_keys,
    provenance,
    regime_record,
    resolve_device,
    warm_start_logs,
)
from hare.experiments.plan import batches
from hare.experiments.run import run_chunks, runs_per_simulation, simulation_groups
from hare.experiments.simulation import RoundTimer, SimulationOptions, simulate
from hare.io import write_result
from hare.policies.base import build_policy, make_config, policy_class

log = logging.getLogger(__name__)

AT_ROUNDS = (1000, 5000, 10000)
RUNS = (5, 20)

MEASURED_LAST = ("kernel_ucb", "kernel_ts", "neural_ucb", "neural_ts", "bootstrap_nn")
"""Policies whose rounds take seconds at the paper's scale: measured after every other, so that an interrupted run
has the rest."""

TRAINING_METHOD = "train_network"
"""The method of a policy on a training schedule that one training is (timed apart from its round)."""


def trainings_in(first: int, last: int, dense_training_rounds: int, train_every: int, train_steps: int = 1) -> int:
    """Trainings of the neural schedule over the updates ``t`` in ``[first, last)`` (0-based; a warm start's ``M``
    logs are updates ``0 .. M - 1``): an update trains when ``t < D`` or ``(t + 1) mod E = 0`` (``D =
    dense_training_rounds``, ``E = train_every``), and never when ``train_steps = 0``:

        N = max(0, min(last, D) - first) + floor(last / E) - floor(max(first, D) / E)    (second term when last > D).

    Over ``[0, 10000)`` with ``D = 2000``, ``E = 100``: 2,000 + 80 = 2,080.
    """
    if train_steps == 0 or last <= first:
        return 0
    dense = max(0, min(last, dense_training_rounds) - first)
    start = max(first, dense_training_rounds)
    return dense + (last // train_every - start // train_every if last > start else 0)


def schedule_of(spec: dict[str, Any]) -> tuple[int, int, int] | None:
    """``(dense_training_rounds, train_every, train_steps)`` of the job's policy, or None: no training schedule."""
    config = make_config(spec["policy"], spec["params"])
    fields = ("dense_training_rounds", "train_every", "train_steps")
    if not all(hasattr(config, name) for name in fields):
        return None
    return tuple(int(getattr(config, name)) for name in fields)


def saturation_of(spec: dict[str, Any]) -> float:
    """The history size at which the job's per-round cost stops growing: ``max_points`` of a policy with a bounded
    dictionary, else infinity."""
    return float(getattr(make_config(spec["policy"], spec["params"]), "max_points", math.inf))


def entry_key(job: Job) -> tuple[str, str]:
    """Jobs that share a per-round cost: (policy with its hyperparameters but those a grid point sets per run, as
    JSON; environment but its horizon, as JSON). Experiments that run the same policy on the same environment share
    it, in either regime: a warm start of ``M`` logs feeds the policy's update ``M`` times, counted as ``M`` rounds
    played before the first online one."""
    per_run = set(policy_class(job.spec["policy"]).per_run_hyperparameters)
    params = {key: value for key, value in job.spec["params"].items() if key not in per_run}
    environment = {key: value for key, value in job.spec["environment"].items() if key != "horizon"}
    return f"{job.spec['policy']} {json.dumps(params, sort_keys=True)}", json.dumps(environment, sort_keys=True)


def measured_entries(jobs: list[Job]) -> dict[tuple[str, str], Job]:
    """One representative job per :func:`entry_key`, the reported job where there is one; replays left out."""
    entries: dict[tuple[str, str], Job] = {}
    for job in sorted(jobs, key=lambda j: (j.role != "report", j.stem)):
        if not replays_logged_data(job):
            entries.setdefault(entry_key(job), job)
    return entries


def replays_logged_data(job: Job) -> bool:
    """Whether the job's environment replays logged data (its class's ``replays_logged_data``): not modelled."""
    return environment_class(job.spec["environment"]["kind"]).replays_logged_data


def needs_warm_start(job: Job) -> bool:
    """Whether the job's policy cannot play without the warm start's logs (HARE with learned projections)."""
    try:
        make_config(job.spec["policy"], job.spec["params"]).check_regime("cold")
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


def measure_entry(
    job: Job,
    results: Path,
    n_runs: int,
    horizon: int,
    budget_s: float,
    clock: Callable[[], float] = time.process_time,
) -> dict[str, Any]:
    """The phases of ``job``'s work at ``n_runs`` runs (module docstring), its environment played up to ``horizon``
    rounds or ``budget_s`` seconds (at least one round), cold unless the policy needs its logs:
    ``{"runs", "setup_s", "warm_start_s", "round_seconds" (each round without its training), "training_seconds"
    (each training), "rounds_played", "regime"}``. A training's seconds are taken out of its round's."""
    spec = {
        **job.spec,
        "n_runs": n_runs,
        "device": "cpu",
        "environment": {**job.spec["environment"], "horizon": horizon},
    }
    if not needs_warm_start(job):
        spec.update(regime="cold", n_logged=0)
    dataset = prepared_dataset(job.spec["environment"])
    path = results / dataset if dataset else None
    if path is not None and not path.exists():
        raise FileNotFoundError(f"{path} is missing: build it first (snakemake {path} --configfile <config>)")
    start = clock()
    env = build_environment(spec, resolve_device("cpu"), path)
    logs = warm_start_logs(spec, env)
    policy = build_policy(spec["policy"], spec["params"], env, policy_keys(spec))
    setup = clock() - start
    timer = RoundTimer(budget_s=budget_s, clock=clock)
    training = TrainingTimer(policy, timer, clock) if schedule_of(spec) is not None else None
    simulate(env, policy, SimulationOptions(progress=None, observer=timer, stop=timer.over_budget), logs=logs)
    trained = training.seconds if training is not None else {}
    rounds = [seconds - trained.get(t, 0.0) for t, seconds in enumerate(timer.round_seconds)]
    return {
        "runs": n_runs,
        "setup_s": setup,
        "warm_start_s": timer.warm_start_seconds,
        "round_seconds": rounds,
        "training_seconds": [trained[t] for t in sorted(trained) if 0 <= t < len(rounds)],
        "rounds_played": len(rounds),
        "regime": spec.get("regime", "cold"),
    }


def cost_line(round_seconds: list[float], window: int, cap: float = math.inf) -> tuple[float, float]:
    """``(a, b)`` of the least-squares line ``c(t) = a + b min(t, cap)`` through the means of the measured rounds'
    windows (at their centres), ``b >= 0``; fewer than two windows: their mean, flat."""
    seconds = np.asarray(round_seconds, dtype=np.float64)
    if seconds.size < 2 * window:
        return float(seconds.mean()) if seconds.size else 0.0, 0.0
    starts = np.arange(0, seconds.size - window + 1, window)
    means = np.array([seconds[s : s + window].mean() for s in starts])
    centres = np.minimum(starts + (window - 1) / 2, cap)
    if np.ptp(centres) == 0:
        return float(means.mean()), 0.0
    slope, intercept = np.polyfit(centres, means, 1)
    if slope <= 0:
        return float(means.mean()), 0.0
    return float(intercept), float(slope)


def cost_at(round_seconds: list[float], line: tuple[float, float], t: int, window: int, cap: float = math.inf):
    """Seconds of round ``t`` (1-based) without training: the mean of the ``window`` measured rounds before it, or the
    line's value when those rounds were not played (``measured`` False)."""
    if t <= len(round_seconds):
        return float(np.mean(round_seconds[max(0, t - window) : t])), True
    return line[0] + line[1] * min(t - 1, cap), False


def rounds_seconds(round_seconds: list[float], line: tuple[float, float], n_rounds: int, cap: float = math.inf):
    """``sum_{t < n_rounds} c(t)``: the measured rounds as measured, the rest ``a + b min(t, cap)``."""
    measured = float(np.sum(round_seconds[:n_rounds]))
    rest = np.arange(len(round_seconds), n_rounds, dtype=np.float64)
    return measured + float(np.sum(line[0] + line[1] * np.minimum(rest, cap)))


def play_seconds(
    measurement: dict[str, Any],
    line: tuple[float, float],
    n_logged: int,
    horizon: int,
    schedule: tuple[int, int, int] | None,
    cap: float = math.inf,
) -> float:
    """``S_B`` of the module docstring: one simulation at the measurement's run count ``B`` playing a warm start of
    ``n_logged`` logs and ``horizon`` rounds."""
    warm = measurement["regime"] == "warm"
    first = n_logged if warm else 0
    last = n_logged + horizon
    training = float(np.mean(measurement["training_seconds"])) if measurement["training_seconds"] else 0.0
    trainings = trainings_in(first, last, *schedule) if schedule is not None else 0
    return (
        measurement["setup_s"]
        + (measurement["warm_start_s"] if warm else 0.0)
        + rounds_seconds(measurement["round_seconds"], line, last - first, cap)
        + trainings * training
    )


def runs_line(points: list[tuple[int, float]]) -> Callable[[int], float]:
    """``S(B)`` from the measured ``(B_i, S_{B_i})``: the least-squares line in ``B`` with slope ``>= 0``, never below
    0; one run count: ``S_{B_1} B / B_1``."""
    runs = np.array([b for b, _ in points], dtype=np.float64)
    seconds = np.array([s for _, s in points], dtype=np.float64)
    if np.unique(runs).size < 2:
        per_run = float(seconds.mean() / runs.mean())
        return lambda b: per_run * b
    slope = max(float(np.polyfit(runs, seconds, 1)[0]), 0.0)
    intercept = float(seconds.mean() - slope * runs.mean())
    return lambda b: max(intercept + slope * b, 0.0)


def plays(jobs: list[Job]) -> list[tuple[list[Job], list[int]]]:
    """The simulations of ``jobs`` as the workflow plays them, each ``(its jobs, the run count of each play)``: per
    batch (:func:`hare.experiments.plan.batches`), the groups of :func:`hare.experiments.run.simulation_groups` (a
    tuning grid's points together, ``P n`` runs), a job alone in the chunks of its ``max_runs_per_simulation``
    (:func:`hare.experiments.run.run_chunks`). Replays are left out (not modelled)."""
    simulations = []
    for batch in batches([job for job in jobs if not replays_logged_data(job)]).values():
        entries = [{"job": job.spec, "selected": job.selection} for job in batch]
        for group in simulation_groups(entries):
            members = [batch[i] for i in group]
            spec = members[0].spec
            if len(members) > 1:
                simulations.append((members, [len(members) * spec["n_runs"]]))
            else:
                chunks = run_chunks(spec["n_runs"], runs_per_simulation(spec))
                simulations.append((members, [r1 - r0 for r0, r1 in chunks]))
    return simulations


def predict(
    jobs: list[Job],
    model: dict[tuple[str, str], dict[str, Any]],
    recording_s: float = 0.0,
    startup_s: float = 0.0,
    not_measured: dict[tuple[str, str], str] | None = None,
) -> dict[str, Any]:
    """Predicted CPU seconds of ``jobs`` from the per-entry models ``{entry_key: {"measurements": [...], "lines":
    [...], "recording_s"}}``: every simulation of :func:`plays` at its run counts, plus each job's recording (its
    entry's, else ``recording_s``) and each batch's ``startup_s``; in total and per experiment. Jobs without a model
    are listed under ``unmodelled`` and counted by reason under ``unmodelled_reasons`` (``not_measured``: the reason
    of each entry that could not be measured)."""
    not_measured = not_measured or {}
    total, by_experiment, unmodelled, reasons = 0.0, {}, [], {}
    modelled_batches: dict[str, str] = {}

    def add(experiment: str, seconds: float) -> None:
        nonlocal total
        total += seconds
        by_experiment[experiment] = by_experiment.get(experiment, 0.0) + seconds

    for job in jobs:
        if replays_logged_data(job):
            unmodelled.append(job.stem)
            reasons["replay of logged data (not measured)"] = reasons.get("replay of logged data (not measured)", 0) + 1
    for members, run_counts in plays(jobs):
        job = members[0]
        key = entry_key(job)
        entry = model.get(key)
        if entry is None:
            unmodelled.extend(member.stem for member in members)
            reason = not_measured.get(key, "entry not measured")
            reasons[reason] = reasons.get(reason, 0) + len(members)
            continue
        n_logged, horizon = int(job.spec.get("n_logged", 0)), int(job.spec["environment"]["horizon"])
        schedule, cap = schedule_of(job.spec), saturation_of(job.spec)
        points = [
            (m["runs"], play_seconds(m, tuple(line), n_logged, horizon, schedule, cap))
            for m, line in zip(entry["measurements"], entry["lines"], strict=True)
        ]
        seconds_at = runs_line(points)
        seconds = sum(seconds_at(b) for b in run_counts) + len(members) * entry.get("recording_s", recording_s)
        modelled_batches[f"{job.experiment}/{job.environment}"] = job.experiment
        add(job.experiment, seconds)
    for experiment in modelled_batches.values():
        add(experiment, startup_s)
    return {
        "cpu_seconds": total,
        "cpu_hours": total / 3600,
        "by_experiment": by_experiment,
        "unmodelled": unmodelled,
        "unmodelled_reasons": reasons,
    }


def recording_seconds(job: Job, results: Path, clock: Callable[[], float] = time.process_time) -> float:
    """Seconds a job of ``job``'s shape spends recording: its sidecar's provenance (specification hash, commit,
    versions) and its ``.npz`` and sidecar written (:func:`hare.io.write_result`) with curves of its ``n_runs`` runs
    at its recorded rounds."""
    spec = job.spec
    n, horizon = spec["n_runs"], int(spec["environment"]["horizon"])
    recorded = checkpoints(horizon, spec.get("record_every") or horizon)
    arrays = {
        "rounds": recorded,
        "cumulative_regret": np.zeros((n, recorded.size)),
        "cumulative_reward": np.zeros((n, recorded.size)),
        "total_regret": np.zeros(n),
        "total_reward": np.zeros(n),
    }
    env_spec = {**spec, "environment": {**spec["environment"], "horizon": 1}, "regime": "cold", "n_logged": 0}
    dataset = prepared_dataset(spec["environment"])
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


def held_out_check(
    measurement: dict[str, Any], window: int, schedule: tuple[int, int, int] | None, cap: float
) -> dict[str, Any] | None:
    """The model fitted on the first half of the measured rounds (and trainings), predicting the whole measured play:
    ``{"fitted_rounds", "checked_rounds", "predicted_s", "measured_s", "ratio"}``; None with fewer than ``4 window``
    rounds."""
    n = measurement["rounds_played"]
    if n < 4 * window:
        return None
    half = n // 2
    rounds = measurement["round_seconds"][:half]
    offset = measurement.get("n_logged", 0) if measurement["regime"] == "warm" else 0
    trainings = measurement["training_seconds"][: trainings_in(offset, offset + half, *schedule)] if schedule else []
    fitted = {**measurement, "round_seconds": rounds, "training_seconds": trainings, "setup_s": 0.0}
    line = cost_line(rounds, window, cap)
    predicted = play_seconds({**fitted, "warm_start_s": 0.0}, line, offset, n, schedule, cap)
    measured = float(np.sum(measurement["round_seconds"]) + np.sum(measurement["training_seconds"]))
    return {
        "fitted_rounds": half,
        "checked_rounds": n,
        "predicted_s": predicted,
        "measured_s": measured,
        "ratio": predicted / measured if measured > 0 else math.nan,
    }


def coverage(measurement: dict[str, Any], schedule: tuple[int, int, int] | None, cap: float, rounds_needed: int) -> str:
    """How far the entry was measured (module docstring), from its measurement at the largest run count."""
    played = measurement["rounds_played"]
    if schedule is not None and schedule[2] > 0:
        if measurement["training_seconds"] and played:
            return "past its most expensive phase: the training and the round without it timed apart"
        return "held-out check: no training timed"
    if played >= min(cap, rounds_needed):
        return "past its most expensive phase: " + (
            "the dictionary full" if math.isfinite(cap) and cap <= rounds_needed else "its whole play"
        )
    return "held-out check: later rounds on the line"


def check_arguments(runs: tuple[int, ...], at: tuple[int, ...], window: int, budget_s: float) -> None:
    """Refuse a run count, a round, a window or a budget that cannot be measured, in one line naming it."""
    if not runs or any(isinstance(b, bool) or not isinstance(b, int) or b < 1 for b in runs):
        raise ValueError(f"runs: every run count must be an integer >= 1, got {list(runs)}")
    if any(isinstance(t, bool) or not isinstance(t, int) or t < 1 for t in at):
        raise ValueError(f"at: every round must be an integer >= 1, got {list(at)}")
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"window: must be an integer >= 1, got {window!r}")
    if not (isinstance(budget_s, (int, float)) and math.isfinite(budget_s) and budget_s > 0):
        raise ValueError(f"budget: must be a finite number of seconds > 0, got {budget_s!r}")


def run_cost_model(
    config: dict[str, Any],
    results: Path,
    runs: tuple[int, ...] = RUNS,
    at: tuple[int, ...] = AT_ROUNDS,
    window: int = 20,
    budget_s: float = 20.0,
    only: list[str] | None = None,
    on_entry: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Measure every entry of ``config`` (or the experiments in ``only``) at each run count of ``runs`` and predict its
    jobs' CPU time (module docstring).

    Returns ``{"machine", "runs", "at", "window", "budget_s", "startup_s", "entries": [{experiment, label,
    environment, policy, regime, coverage, cost_at: {t: s}, measured_at: {t: bool} (at the largest run count),
    measurements: [{runs, rounds_played, setup_s, warm_start_s, trainings, training_s, line, check}],
    recording_s}], "not_measured": [{entry, reason}], "prediction", "model"}``. An entry whose prepared dataset is
    missing (an optional dataset this machine cannot fetch) or that cannot be built or played on this machine (a
    memory budget it exceeds) is not measured, and its jobs are listed as unmodelled with the reason. ``on_entry``
    receives the result so far after every entry (the command line writes it, so an interrupted run keeps what it
    measured).
    """
    check_arguments(tuple(runs), tuple(at), window, budget_s)
    torch.set_num_threads(1)
    runs = tuple(sorted(set(runs)))
    jobs = [job for job in expand_jobs(config) if only is None or job.experiment in only]
    horizon = max(at) + 1
    model, rows, not_measured, reasons = {}, [], [], {}
    startup = startup_seconds()

    def result() -> dict[str, Any]:
        return {
            "machine": {
                "platform": platform.platform(),
                "processor": platform.processor() or platform.machine(),
                "torch": torch.__version__,
                "threads": 1,
            },
            "runs": list(runs),
            "at": list(at),
            "window": window,
            "budget_s": budget_s,
            "startup_s": startup,
            "entries": rows,
            "not_measured": not_measured,
            "prediction": predict(jobs, model, startup_s=startup, not_measured=reasons),
            "model": {"\t".join(key): value for key, value in model.items()},
        }

    longest: dict[tuple[str, str], int] = {}
    for job in jobs:
        needed = int(job.spec["environment"]["horizon"]) + (0 if needs_warm_start(job) else job.spec.get("n_logged", 0))
        longest[entry_key(job)] = max(longest.get(entry_key(job), 0), needed)
    for key, job in sorted(measured_entries(jobs).items(), key=lambda item: item[1].spec["policy"] in MEASURED_LAST):
        name = f"{job.experiment}/{job.label}/{job.environment}"
        try:
            measurements = [measure_entry(job, results, b, horizon, budget_s) for b in runs]
            recording = recording_seconds(job, results)
        except (FileNotFoundError, ValueError, RuntimeError, MemoryError) as error:
            reason = str(error).split("\n", 1)[0]
            not_measured.append({"entry": name, "reason": reason})
            reasons[key] = (
                "prepared dataset missing" if isinstance(error, FileNotFoundError) else f"not measured: {reason}"
            )
            continue
        schedule, cap = schedule_of(job.spec), saturation_of(job.spec)
        for m in measurements:
            m["n_logged"] = int(job.spec.get("n_logged", 0))
        lines = [list(cost_line(m["round_seconds"], window, cap)) for m in measurements]
        model[key] = {"measurements": measurements, "lines": lines, "recording_s": recording}
        top, top_line = measurements[-1], tuple(lines[-1])
        costs = {t: cost_at(top["round_seconds"], top_line, t, window, cap) for t in at}
        rows.append(
            {
                "experiment": job.experiment,
                "label": job.label.split("@", 1)[0],
                "environment": job.environment,
                "policy": job.spec["policy"],
                "regime": top["regime"],
                "coverage": coverage(top, schedule, cap, longest[key]),
                "cost_at": {str(t): c for t, (c, _) in costs.items()},
                "measured_at": {str(t): m for t, (_, m) in costs.items()},
                "rounds_played": top["rounds_played"],
                "recording_s": recording,
                "measurements": [
                    {
                        "runs": m["runs"],
                        "rounds_played": m["rounds_played"],
                        "setup_s": m["setup_s"],
                        "warm_start_s": m["warm_start_s"],
                        "trainings": len(m["training_seconds"]),
                        "training_s": float(np.mean(m["training_seconds"])) if m["training_seconds"] else None,
                        "line": line,
                        "check": held_out_check(m, window, schedule, cap),
                    }
                    for m, line in zip(measurements, lines, strict=True)
                ],
            }
        )
        summary = ", ".join(f"t={t}: {c * 1e3:.2f} ms{'' if m else ' (line)'}" for t, (c, m) in costs.items())
        log.info(
            "%s: %d rounds at B=%d, %s; %s", name, top["rounds_played"], top["runs"], summary, rows[-1]["coverage"]
        )
        if on_entry is not None:
            on_entry(result())
    return result()


def predict_config(config: dict[str, Any], cost_model: dict[str, Any], only: list[str] | None = None) -> dict[str, Any]:
    """The prediction of :func:`predict` for another config from a saved cost model (its ``model`` and
    ``startup_s``)."""
    model = {tuple(key.split("\t")): value for key, value in cost_model["model"].items()}
    jobs = [job for job in expand_jobs(config) if only is None or job.experiment in only]
    return predict(jobs, model, startup_s=cost_model.get("startup_s", 0.0))


def measured_job_seconds(results: Path, experiments: list[str] | None = None) -> dict[str, float]:
    """CPU seconds (user and system) a finished build's experiment batches took, per experiment: the ``cpu_time``
    column of each batch's Snakemake benchmark file (``logs/experiments/<experiment>/<environment>.benchmark.tsv``:
    the whole batch process, its start, set-up, plays and recording, as the model predicts it). A build without
    benchmark files (older than them) falls back to its sidecars' ``wall_time_s`` (the plays only; a grid simulation
    counted once, from its ``grid_simulation``)."""
    benchmarks = sorted((results / "logs" / "experiments").glob("*/*.benchmark.tsv"))
    if benchmarks:
        totals: dict[str, float] = {}
        for path in benchmarks:
            experiment = path.parent.name
            if experiments is not None and experiment not in experiments:
                continue
            header, *rows = (line.split("\t") for line in path.read_text().splitlines() if line.strip())
            column = header.index("cpu_time")
            totals[experiment] = totals.get(experiment, 0.0) + sum(float(row[column]) for row in rows)
        return totals
    totals = {}
    seen = set()
    for sidecar in sorted(results.glob("*/*/*/*.json")):
        if sidecar.parts[-4] not in ("runs", "tuning"):
            continue
        data = json.loads(sidecar.read_text())
        job = data.get("job") or {}
        experiment = job.get("experiment")
        if experiment is None or (experiments is not None and experiment not in experiments):
            continue
        grid = data.get("grid_simulation")
        if grid is not None:
            key = (experiment, job["environment"]["name"], tuple(grid["labels"]))
            if key in seen:
                continue
            seen.add(key)
            seconds = grid["wall_time_s"]
        else:
            seconds = data.get("wall_time_s", 0.0)
        totals[experiment] = totals.get(experiment, 0.0) + seconds
    return totals
