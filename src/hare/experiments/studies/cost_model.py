"""Cost model of a configuration: seconds per round of every policy at B = 20 runs and rounds t = 1,000, 5,000 and
10,000, measured, and the predicted CPU time of every job of a configuration from them.

A benchmark, not a test. For every distinct (policy entry, environment) of a configuration's simulated jobs (the first
point of a grid: the tuned value does not change the work of a round) the policy plays the environment at ``n_runs``
runs, warm-started as its experiment's regime says, and the wall time of every round is recorded, until the horizon or a
time budget per entry: the environment's round, the input check, the policy's choice and update, the regret and reward
sums, as a job spends them (:func:`hare.experiments.simulation.simulate`). The cost at round ``t`` is the mean over the
``window`` rounds before it. Rounds past the budget are not measured: the model extends the per-round cost linearly in
``t``, a least-squares line through the measured rounds' windows (exact for the costs that are constant or grow linearly
with the history, an overestimate for those that saturate, the kernel dictionary and the neural training), and says so
per entry.

A job's predicted time is the sum of the modelled per-round costs over its warm start's ``M`` logs and its horizon
(an update per log, as a round; a policy that cannot play without the logs, HARE with learned projections, is
measured warm and its warm start timed); tuning
jobs of one grid play as one simulation (:func:`hare.experiments.run.simulation_groups`) and are predicted as one
job of the entry's cost. The prediction assumes the measured machine and one thread per job.
"""

from __future__ import annotations

import json
import logging
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hare.experiments.grid import Job, expand_jobs, prepared_dataset
from hare.experiments.job_setup import build_environment, policy_keys, resolve_device, warm_start_logs
from hare.experiments.simulation import RoundTimer, SimulationOptions, simulate
from hare.policies.base import build_policy, make_config, policy_class

log = logging.getLogger(__name__)

AT_ROUNDS = (1000, 5000, 10000)

MEASURED_LAST = ("kernel_ucb", "kernel_ts", "neural_ucb", "neural_ts", "bootstrap_nn")
"""Policies whose rounds take seconds at the paper's scale: measured after every other, so that an interrupted run
has the rest."""


def entry_key(job: Job) -> tuple[str, str]:
    """Jobs that share a per-round cost: (policy with its hyperparameters but those a grid point sets per run, as
    JSON; environment, as JSON). Experiments that run the same policy on the same environment share it, in either
    regime: a warm start of ``M`` logs feeds the policy's update ``M`` times, so the model counts it as ``M`` more
    rounds played before the first online one."""
    per_run = set(policy_class(job.spec["policy"]).per_run_hyperparameters)
    params = {key: value for key, value in job.spec["params"].items() if key not in per_run}
    environment = {key: value for key, value in job.spec["environment"].items() if key != "horizon"}
    return f"{job.spec['policy']} {json.dumps(params, sort_keys=True)}", json.dumps(environment, sort_keys=True)


def measured_entries(jobs: list[Job]) -> dict[tuple[str, str, str], Job]:
    """One representative job per :func:`entry_key`, the reported job where there is one; replay jobs left out."""
    entries: dict[tuple[str, str, str], Job] = {}
    for job in sorted(jobs, key=lambda j: (j.role != "report", j.stem)):
        if job.spec["environment"]["kind"] != "replay":
            entries.setdefault(entry_key(job), job)
    return entries


def measure_entry(
    job: Job,
    results: Path,
    n_runs: int,
    horizon: int,
    window: int,
    budget_s: float,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, Any]:
    """Per-round wall times of ``job``'s policy on its environment at ``n_runs`` runs, in the cold regime (see
    :func:`entry_key`), up to ``horizon`` rounds or
    ``budget_s`` seconds (but at least one round): ``{"warm_start_s", "round_seconds" (list), "rounds_played"}``.
    The rounds are a job's (:func:`hare.experiments.simulation.simulate`, timed by its
    :class:`~hare.experiments.simulation.RoundTimer`). A policy slower than ``budget_s / window`` a round is
    measured on its first rounds only, and its line is flat."""
    spec = {
        **job.spec,
        "n_runs": n_runs,
        "device": "cpu",
        "environment": {**job.spec["environment"], "horizon": horizon},
    }
    if not needs_warm_start(job):
        spec.update(regime="cold", n_logged=0)
    device = resolve_device("cpu")
    dataset = prepared_dataset(job.spec["environment"])
    path = results / dataset if dataset else None
    if path is not None and not path.exists():
        raise FileNotFoundError(f"{path} is missing: build it first (snakemake {path} --configfile <config>)")
    env = build_environment(spec, device, path)
    logs = warm_start_logs(spec, env)
    policy = build_policy(spec["policy"], spec["params"], env, policy_keys(spec))
    timer = RoundTimer(budget_s=budget_s, clock=clock)
    simulate(env, policy, SimulationOptions(progress=None, observer=timer, stop=timer.over_budget), logs=logs)
    warm, seconds = timer.warm_start_seconds, timer.round_seconds
    return {
        "warm_start_s": warm,
        "round_seconds": seconds,
        "rounds_played": len(seconds),
        "horizon": env.horizon,
        "regime": spec.get("regime", "cold"),
    }


def needs_warm_start(job: Job) -> bool:
    """Whether the job's policy cannot play without the warm start's logs (HARE with learned projections)."""
    try:
        make_config(job.spec["policy"], job.spec["params"]).check_regime("cold")
    except ValueError:
        return True
    return False


def cost_line(round_seconds: list[float], window: int) -> tuple[float, float]:
    """``(a, b)`` of the least-squares line ``c(t) = a + b t`` through the window means of the measured rounds."""
    seconds = np.asarray(round_seconds, dtype=np.float64)
    if seconds.size < 2 * window:
        return float(seconds.mean()) if seconds.size else 0.0, 0.0
    starts = np.arange(0, seconds.size - window + 1, window)
    means = np.array([seconds[s : s + window].mean() for s in starts])
    centres = starts + (window - 1) / 2
    slope, intercept = np.polyfit(centres, means, 1)
    return float(intercept), max(float(slope), 0.0)


def cost_at(round_seconds: list[float], line: tuple[float, float], t: int, window: int) -> tuple[float, bool]:
    """Seconds per round at round ``t`` (1-based): the mean of the ``window`` measured rounds before it, or the
    line's value when those rounds were not played (``measured`` False)."""
    if t <= len(round_seconds):
        return float(np.mean(round_seconds[max(0, t - window) : t])), True
    return line[0] + line[1] * (t - 1), False


def predicted_seconds(round_seconds: list[float], line: tuple[float, float], horizon: int) -> float:
    """The sum of per-round costs over ``horizon`` rounds: measured rounds as measured, the rest on the line."""
    measured = float(np.sum(round_seconds[:horizon]))
    rest = np.arange(len(round_seconds), horizon, dtype=np.float64)
    return measured + float(np.sum(line[0] + line[1] * rest))


def simulations(jobs: list[Job]) -> list[list[Job]]:
    """Jobs grouped as they play: the tuning points of one entry as one simulation, every other job alone."""
    groups: dict[Any, list[Job]] = {}
    for job in jobs:
        if job.spec["environment"]["kind"] == "replay":
            continue
        key = (job.experiment, job.label.split("@", 1)[0], job.environment) if job.role == "tuning" else job.stem
        groups.setdefault(key, []).append(job)
    return list(groups.values())


def predict(jobs: list[Job], model: dict[tuple[str, str, str], dict[str, Any]]) -> dict[str, Any]:
    """Predicted CPU seconds of ``jobs`` from per-entry models ``{entry_key: {"round_seconds", "line"}}``: the modelled
    cost of the ``M + T`` rounds of each simulation (``M`` logs of a warm start, ``T`` online rounds), in total and per
    experiment; entries without a model are listed under ``unmodelled``."""
    total, by_experiment, unmodelled = 0.0, {}, []
    for group in simulations(jobs):
        job = group[0]
        entry = model.get(entry_key(job))
        if entry is None:
            unmodelled.append(job.stem)
            continue
        horizon = int(job.spec["environment"]["horizon"])
        if entry.get("regime", "cold") == "warm":
            seconds = entry["warm_start_s"] + predicted_seconds(entry["round_seconds"], tuple(entry["line"]), horizon)
        else:
            seconds = predicted_seconds(
                entry["round_seconds"], tuple(entry["line"]), horizon + int(job.spec.get("n_logged", 0))
            )
        total += seconds
        by_experiment[job.experiment] = by_experiment.get(job.experiment, 0.0) + seconds
    return {"cpu_seconds": total, "cpu_hours": total / 3600, "by_experiment": by_experiment, "unmodelled": unmodelled}


def run_cost_model(
    config: dict[str, Any],
    results: Path,
    n_runs: int = 20,
    at: tuple[int, ...] = AT_ROUNDS,
    window: int = 20,
    budget_s: float = 20.0,
    only: list[str] | None = None,
    on_entry: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Measure every entry of ``config`` (or the experiments in ``only``) and predict its jobs' CPU time.

    Returns ``{"machine", "n_runs", "at", "entries": [{experiment, label, environment, policy, regime, cost_at: {t: s},
    measured_at: {t: bool}, rounds_played, warm_start_s, line}], "not_measured": [{entry, reason}], "prediction",
    "model"}``;
    an entry whose prepared dataset is missing (an optional dataset this machine cannot fetch) is not measured, and
    its jobs are listed as unmodelled in the prediction; so is one that cannot be built or played on this machine
    (a memory budget it exceeds), with its error. ``on_entry`` receives the result so far after every entry (the
    command line writes it, so an interrupted run keeps what it measured).
    """
    torch.set_num_threads(1)
    jobs = [job for job in expand_jobs(config) if only is None or job.experiment in only]
    horizon = max(at) + 1
    model, rows, not_measured = {}, [], []

    def result() -> dict[str, Any]:
        return {
            "machine": {
                "platform": platform.platform(),
                "processor": platform.processor() or platform.machine(),
                "torch": torch.__version__,
                "threads": 1,
            },
            "n_runs": n_runs,
            "at": list(at),
            "window": window,
            "budget_s": budget_s,
            "entries": rows,
            "not_measured": not_measured,
            "prediction": predict(jobs, model),
            "model": {
                "\t".join(key): {
                    "round_seconds": value["round_seconds"],
                    "line": list(value["line"]),
                    "warm_start_s": value["warm_start_s"],
                    "regime": value["regime"],
                }
                for key, value in model.items()
            },
        }

    for key, job in sorted(measured_entries(jobs).items(), key=lambda item: item[1].spec["policy"] in MEASURED_LAST):
        try:
            measured = measure_entry(job, results, n_runs, horizon, window, budget_s)
        except (FileNotFoundError, ValueError, RuntimeError, MemoryError) as error:
            not_measured.append({"entry": f"{job.experiment}/{job.label}/{job.environment}", "reason": str(error)})
            continue
        line = cost_line(measured["round_seconds"], window)
        model[key] = {**measured, "line": line}
        costs = {t: cost_at(measured["round_seconds"], line, t, window) for t in at}
        rows.append(
            {
                "experiment": job.experiment,
                "label": job.label.split("@", 1)[0],
                "environment": job.environment,
                "policy": job.spec["policy"],
                "regime": measured["regime"],
                "cost_at": {str(t): c for t, (c, _) in costs.items()},
                "measured_at": {str(t): m for t, (_, m) in costs.items()},
                "rounds_played": measured["rounds_played"],
                "warm_start_s": measured["warm_start_s"],
                "line": list(line),
            }
        )
        summary = ", ".join(f"t={t}: {c * 1e3:.2f} ms{'' if m else ' (line)'}" for t, (c, m) in costs.items())
        log.info(
            "%s/%s/%s: %d rounds, %s", job.experiment, job.label, job.environment, measured["rounds_played"], summary
        )
        if on_entry is not None:
            on_entry(result())
    return result()


def predict_config(config: dict[str, Any], cost_model: dict[str, Any], only: list[str] | None = None) -> dict[str, Any]:
    """The prediction of :func:`predict` for another config from a saved cost model (its ``model`` member)."""
    model = {tuple(key.split("\t")): value for key, value in cost_model["model"].items()}
    jobs = [job for job in expand_jobs(config) if only is None or job.experiment in only]
    return predict(jobs, model)


def measured_job_seconds(results: Path, experiments: list[str] | None = None) -> dict[str, float]:
    """CPU seconds a finished build's jobs took, per experiment, from the sidecars' ``wall_time_s`` (a grid simulation
    counted once, from its ``grid_simulation``)."""
    totals: dict[str, float] = {}
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
