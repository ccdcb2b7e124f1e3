"""Cost model of a configuration: the CPU time of its jobs predicted from the phases of their work, each measured and
counted as the job plays it.

A benchmark, not a test. Jobs that share a per-round cost share an *entry* (:func:`.cost_measurement.entry_key`:
the policy with its hyperparameters but those a grid point sets per run, and the environment but its horizon). One
representative job of every entry plays its environment on one thread at each run count ``B`` of ``runs`` (two by
default, so that the dependence on ``B`` is fitted, not assumed), until the horizon or ``budget_s`` seconds of play
(at least one round), timed phase by phase (:func:`.cost_measurement.measure_entry`). Every time is CPU seconds of
the measuring process (user and system, ``time.process_time``), the unit in which a build's cost is reported
(``/usr/bin/time``'s user + sys), so that other work on the machine slows the measurement without inflating it:

* ``setup(B)``: the prepared dataset read, the environment, the warm start's logs and the policy built;
* ``warm(B)``: the warm start, for a policy that cannot play without its logs (HARE with learned projections), which
  is measured in the warm regime; every other entry is measured cold and its ``M`` logged updates are counted as
  ``M`` rounds played before the first online one (an update per log; a round's choice is counted too, an
  overestimate);
* ``c(t, B)``: the CPU time of round ``t`` (0-based; drawing it through the regret and reward sums, as
  :func:`hare.experiments.simulation.simulate` spends it) without the policy's training;
* ``tau(B)``: one training of a policy on a training schedule (the neural policies: every update at ``t <
  dense_training_rounds``, then every ``train_every``-th; :func:`.cost_schedule.trainings_in`), timed apart from its
  round.

Rounds past the budget are modelled by a line ``c(t) = a + b min(t, cap)`` with ``b >= 0``, where ``cap`` is
``max_points`` for a policy whose dictionary saturates there (the kernel policies: the work of a round grows with the
points held, then stays flat under the sliding window), 0 for a policy whose round does not grow with the history
(its class's ``round_cost_grows`` false: the measured mean, carried flat) and infinite otherwise (kNN and LNUCB-TA's
growing history). A growing round is measured where it costs most: after the budgeted play, the history is fed up to
the last round the entry's jobs play (or ``cap``; the feeding stops after ``probe_budget_s`` seconds), update only
with uniform arms, and the ``window`` rounds there are timed in full (:func:`.cost_measurement.probe_late_rounds`);
the line then runs through the second half of the budgeted rounds and these late rounds
(:func:`.cost_prediction.cost_line`), so that the first rounds' transients (a neighbour search that widens as the
arms fill) are not carried over the horizon. Without a probe, the line is the least-squares line through the means
of the measured rounds' windows of ``window`` rounds.

A simulation of ``B`` runs playing updates ``[t0, t1)`` (``t0 = 0``, ``t1 = M + T``; for an entry measured warm
``t0 = M``) then costs, at a measured ``B``,

    S_B = setup(B) + warm(B) + sum_{t in [0, t1 - t0)} c(t, B) + N_train(t0, t1) tau(B),

the measured rounds counted as measured and the rest on the line. Across run counts, ``S(B)`` is the least-squares
line through the measured ``(B_i, S_{B_i})`` with a slope ``>= 0`` (with one run count: proportional,
``S(B) = S_{B_1} B / B_1``, an upper bound for a policy with a per-round cost shared by its runs), and never below
0. A job plays as the workflow plays it (:func:`.cost_schedule.plays`): a tuning grid as one simulation of ``P n``
runs for its ``P`` points (:func:`hare.experiments.run.simulation_groups`), a job with ``max_runs_per_simulation`` in
chunks of that many runs (:func:`hare.experiments.run.run_chunks`), every other job alone at its ``n`` runs. Each job
adds its recording (its sidecar's provenance and its result files written;
:func:`.cost_measurement.recording_seconds`) and each batch (``EXPERIMENT/ENVIRONMENT``, one process) the start of a
process that imports the package (:func:`.cost_measurement.startup_seconds`).

Every entry says how far it was measured (``coverage``): past its most expensive phase (a schedule's training and
the round without it both timed; a saturating cost measured at its cap; any other cost measured over its whole
play) or, where not, the check of its model against a longer held-out measurement: the model fitted on the first
half of its measured rounds predicts the whole measured play, and ``check`` gives the ratio of predicted to
measured seconds. Not modelled, listed with their reasons under ``unmodelled``: the jobs of an entry that could not
be measured (a prepared dataset this machine lacks, Covertype offline; an error building or playing it). A replay
of logged data (:func:`.cost_measurement.measure_replay_entry`) counts its steps as rounds (a logged event shown, the
choice accepted or not, the accepted runs updated) and adds its finish once a job (the final greedy policy's
off-policy estimates over the whole log). A periodic re-factorisation (``refactor_every``) is counted where the
measured rounds hold one and carried by the line otherwise. The prediction assumes the measured machine and one
thread per job.

The model in four modules, read against the formula above: the counts that multiply its phases (the training
schedule, the simulations and their run counts, :mod:`.cost_schedule`), an entry measured (:mod:`.cost_measurement`),
the prediction from the measured entries and the measured build it is compared with (:mod:`.cost_prediction`), and
here the measurement of a whole config (:func:`run_cost_model`).
"""

from __future__ import annotations

import logging
import math
import platform
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hare.experiments.grid import Job, expand_jobs
from hare.experiments.studies.cost_measurement import (
    entry_key,
    measure_entry,
    measure_replay_entry,
    measured_entries,
    needs_warm_start,
    recording_seconds,
    startup_seconds,
)
from hare.experiments.studies.cost_prediction import (
    cost_at,
    cost_line,
    coverage,
    entry_models,
    held_out_check,
    played_rounds,
    predict,
)
from hare.experiments.studies.cost_schedule import replays_logged_data, saturation_of, schedule_of

log = logging.getLogger(__name__)

AT_ROUNDS = (1000, 5000, 10000)
RUNS = (5, 20)

MEASURED_LAST = ("kernel_ucb", "kernel_ts", "neural_ucb", "neural_ts", "bootstrap_nn")
"""Policies whose rounds take seconds at the paper's scale: measured after every other, so that an interrupted run
has the rest."""


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


def updates_played(job: Job) -> int:
    """The updates a job's policy receives: the rounds its environment plays (:func:`.cost_prediction.played_rounds`,
    the horizon capped by a dataset's online rows), after its ``n_logged`` warm-start logs where the entry is measured
    cold (every policy but HARE with learned projections, measured warm)."""
    return played_rounds(job) + (0 if needs_warm_start(job) else int(job.spec.n_logged))


def run_cost_model(
    config: dict[str, Any],
    results: Path,
    runs: tuple[int, ...] = RUNS,
    at: tuple[int, ...] = AT_ROUNDS,
    window: int = 20,
    budget_s: float = 20.0,
    only: list[str] | None = None,
    on_entry: Callable[[dict[str, Any]], None] | None = None,
    earlier: dict[str, Any] | None = None,
    probe_budget_s: float = 10.0,
    also: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Measure every entry of ``config`` (or the experiments in ``only``) at each run count of ``runs`` and predict its
    jobs' CPU time (module docstring). ``also``: other configs (those the command predicts from this model) whose
    entries that ``config`` lacks are measured too, so that their predictions leave no job without a model.

    Returns ``{"machine", "runs", "at", "window", "budget_s", "startup_s", "entries": [{experiment, label,
    environment, policy, regime, coverage, cost_at: {t: s}, measured_at: {t: bool} (at the largest run count),
    measurements: [{runs, rounds_played, setup_s, warm_start_s, trainings, training_s, line, check}],
    recording_s}], "not_measured": [{entry, reason}], "prediction", "model"}``. An entry whose prepared dataset is
    missing (an optional dataset this machine cannot fetch) or that cannot be built or played on this machine (a
    memory budget it exceeds) is not measured, and its jobs are listed as unmodelled with the reason. ``on_entry``
    receives the result so far after every entry (the command line writes it, so an interrupted run keeps what it
    measured). ``earlier``: an earlier output at the same ``runs``, ``window`` and ``budget_s`` (an interrupted run,
    or one from a version that left some entries out) whose measured entries are kept and not measured again.
    """
    check_arguments(tuple(runs), tuple(at), window, budget_s)
    torch.set_num_threads(1)
    runs = tuple(sorted(set(runs)))
    jobs = [job for job in expand_jobs(config) if only is None or job.experiment in only]
    measured_jobs = jobs + [
        job for other in also or [] for job in expand_jobs(other) if only is None or job.experiment in only
    ]
    horizon = max(at) + 1
    model, rows, not_measured, reasons = {}, [], [], {}
    if earlier is not None:
        settings = {"runs": list(runs), "window": window, "budget_s": budget_s}
        differing = [
            f"{name} {earlier.get(name)!r} (here {value!r})"
            for name, value in settings.items()
            if earlier.get(name) != value
        ]
        if differing:
            raise ValueError(f"earlier: measured at other settings: {', '.join(differing)}")
        model = entry_models(earlier)
        rows = list(earlier["entries"])
    startup = startup_seconds() if earlier is None else earlier["startup_s"]

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
    for job in measured_jobs:
        longest[entry_key(job)] = max(longest.get(entry_key(job), 0), updates_played(job))
    entries = measured_entries(measured_jobs)
    for key, job in sorted(entries.items(), key=lambda item: item[1].spec.policy in MEASURED_LAST):
        if key in model:
            continue
        name = f"{job.experiment}/{job.label}/{job.environment}"
        try:
            if replays_logged_data(job):
                measurements = [measure_replay_entry(job, results, b, budget_s) for b in runs]
            else:
                probe_at = int(min(longest[key], saturation_of(job.spec)))
                measurements = [
                    measure_entry(
                        job,
                        results,
                        b,
                        max(horizon, probe_at),
                        budget_s,
                        probe_at=probe_at,
                        window=window,
                        probe_budget_s=probe_budget_s,
                    )
                    for b in runs
                ]
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
            m["n_logged"] = int(job.spec.n_logged)
        lines = [list(cost_line(m["round_seconds"], window, cap, m["probe"])) for m in measurements]
        model[key] = {"measurements": measurements, "lines": lines, "recording_s": recording}
        top, top_line = measurements[-1], tuple(lines[-1])
        costs = {t: cost_at(top["round_seconds"], top_line, t, window, cap) for t in at}
        rows.append(
            {
                "experiment": job.experiment,
                "label": job.label.split("@", 1)[0],
                "environment": job.environment,
                "policy": job.spec.policy,
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
                        "probe": (
                            None
                            if m["probe"] is None
                            else {"last": m["probe"]["last"], "seconds": float(np.mean(m["probe"]["round_seconds"]))}
                        ),
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
