"""Run one job: every seed of one (experiment, environment, policy point), batched.

The job writes ``<stem>.npz`` with

* ``rounds`` ``(n_checkpoints,)``: 1-based round counts at which curves are recorded;
* ``cumulative_regret``, ``cumulative_reward`` ``(n_runs, n_checkpoints)``;
* ``total_regret``, ``total_reward`` ``(n_runs,)``;
* a synthesize-mode job's (a policy that outputs ``z``: :func:`hare.policies.base.synthesizes`) ``novelty``
  ``(n_runs,)``: the share of its rounds whose output is novel (:func:`hare.experiments.simulation.simulate`); a
  select-mode job has no such array;
* the policy's own per-round series where it has any (:meth:`hare.policies.base.Policy.trajectories`, e.g.
  ``alpha_trajectory`` ``(n_runs, n_checkpoints, H)`` of a learned bonus weight), at the same rounds;

and ``<stem>.json`` with the job specification (its dict form, :meth:`hare.experiments.job_spec.JobSpec.as_dict`),
its hash, the git commit, package versions, device, wall time and peak memory. Both are written atomically, the
sidecar last, so a complete sidecar implies a complete result. A job first deletes its previous outputs and the
temporary files a killed attempt left behind, so an interrupted rerun never leaves an older result that looks
current.

Every round's contexts and queries must be finite: a NaN or Inf raises
:class:`NonFiniteInputError` naming the round and the environment instead of
propagating into the policy's state. The rounds are played by
:func:`hare.experiments.simulation.simulate` (re-exported here).

A job whose specification sets ``max_runs_per_simulation`` (an experiment's or a policy entry's key of the config,
:func:`hare.experiments.grid.expand_jobs`) plays its runs in chunks of at most that many (:func:`run_chunks`): the
environment is built once for all the runs, and each chunk's policy, built with the policy keys of its run indices,
plays the rows of those runs in every round (:class:`RunChunk`). Every random number of run ``r`` is a function of
its run index alone (:func:`hare.random.run_keys`); the environment draws every round for all the runs, as in the
whole play (HARE-Sim's means are matrix products whose last bit depends on the number of rows, so an environment of
the chunk's runs alone would differ in the last bit), and the policies' batched arithmetic treats each run apart
(tests/experiments/test_run_chunks.py), so the concatenated arrays equal the unchunked play's bit for bit (HARE in
synthesize mode to rounding: its attention scores are one product over the runs, and its output ``z`` carries their
last bit). Only the
policy's state, the memory that grows with the runs, is held one chunk at a time; the environment's side of a round
is computed once per chunk. The sidecar records ``chunks`` (``[[r0, r1], ...]``) and the wall time summed over them.
A job on logged data (``replay``) plays whole.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hare.envs.registry import environment_class
from hare.experiments.job_setup import (
    build_environment,
    deterministic_kernels,
    policy_keys,
    provenance,
    regime_record,
    resolve_device,
    warm_start_logs,
)
from hare.experiments.job_spec import JobSpec
from hare.experiments.job_store import JobStore, job_key
from hare.experiments.run_chunks import RunChunk, run_chunks, runs_per_simulation
from hare.experiments.selection import apply_selection, write_selection
from hare.experiments.simulation import NonFiniteInputError as NonFiniteInputError
from hare.experiments.simulation import SimulationOptions, simulate
from hare.io import file_sha256, remove_stale_temporaries, write_result
from hare.policies.base import build_grid_policy, build_policy, policy_class
from hare.source_digest import combined_digest, job_code

log = logging.getLogger(__name__)

ROUND_LOOP = (__name__,)
"""The module an experiment job enters (the batch, the round loop, the recording): with the job's policy and
environment, its closure is the code a job runs (:func:`job_record`)."""


def job_record(spec: JobSpec) -> dict[str, Any]:
    """The code a job runs, as its sidecar records it: ``{"digest", "modules": {module: digest}}``
    (:func:`hare.source_digest.job_code` of :data:`ROUND_LOOP`)."""
    modules = job_code(spec, ROUND_LOOP)
    return {"digest": combined_digest(modules), "modules": modules}


def run_job(
    spec: JobSpec,
    out: str | Path,
    dataset_path: str | Path | None = None,
    progress: bool | None = None,
    selected: str | Path | None = None,
) -> dict[str, Any]:
    """Run ``spec`` and write ``out`` (``.npz``) and its ``.json`` sidecar; returns the sidecar.

    A tuned job (a ``tuned_grid`` in its spec) takes its hyperparameters from ``selected``
    (:func:`hare.experiments.selection.apply_selection`).
    Jobs that replay logged data (an environment class with ``replays_logged_data``: kind ``replay``) go to
    :func:`hare.experiments.replay_job.run_replay_job`, which writes the replay arrays instead.
    """
    spec = apply_selection(spec, selected)
    if environment_class(spec.environment.kind).replays_logged_data:
        from hare.experiments.replay_job import run_replay_job

        return run_replay_job(spec, out, dataset_path, progress, job_record(spec))
    return run_simulations([spec], [out], dataset_path, progress)[0]


def run_simulations(
    specs: list[JobSpec],
    outs: list[str | Path],
    dataset_path: str | Path | None = None,
    progress: bool | None = None,
) -> list[dict[str, Any]]:
    """Play the jobs ``specs`` (points of one grid, :func:`simulation_groups`) as one simulation and write each
    job's ``.npz`` and sidecar to ``outs``; returns the sidecars.

    One job plays alone, as it always has. ``P > 1`` jobs play as one batch of ``P n`` runs
    (:func:`hare.policies.base.build_grid_policy`): run ``r`` of job ``i`` faces the environment draws of run ``r``
    and uses job ``i``'s policy keys, so each job's runs play the arms they play alone (regret equal up to the
    rounding of matrix products over more rows). Each job's sidecar records its share of the wall time and, under
    ``grid_simulation``, the jobs it played with and the whole simulation's wall time and run count.

    With ``max_runs_per_simulation`` (:func:`runs_per_simulation`) a job of more runs plays them in chunks
    (:func:`run_chunks`, :class:`RunChunk`; module docstring), with the arrays of the unchunked play; its sidecar
    records ``chunks`` and the wall time summed over them. A grid of more runs than that plays its points in groups
    that fit.
    """
    outs = [Path(out) for out in outs]
    for out in outs:
        if out.suffix != ".npz":
            raise ValueError(f"output must be a .npz path, got {out}")
    spec = specs[0]
    copies = len(specs)
    n = spec.n_runs
    limit = runs_per_simulation(spec)
    if copies > 1 and limit is not None and copies * n > limit:
        # A grid of more runs than the job may hold at once plays its points in smaller groups (as simulation_groups
        # forms them); every point's runs still play whole.
        size = max(1, limit // n)
        return [
            sidecar
            for j in range(0, copies, size)
            for sidecar in run_simulations(specs[j : j + size], outs[j : j + size], dataset_path, progress)
        ]
    for out in outs:
        for stale in (out.with_suffix(".json"), out):
            stale.unlink(missing_ok=True)
            remove_stale_temporaries(stale)
    device = resolve_device(spec.device)
    deterministic_kernels(device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    env = build_environment(spec, device, dataset_path, copies)
    logs = warm_start_logs(spec, env)
    interactive = sys.stderr.isatty() if progress is None else progress
    chunks = run_chunks(n, limit) if copies == 1 else [(0, n)]
    parts, wall = [], 0.0
    for r0, r1 in chunks:
        if copies == 1:
            whole = (r0, r1) == (0, n)
            played = env if whole else RunChunk(env, r0, r1)
            policy = build_policy(
                spec.policy, spec.params, played, policy_keys(spec) if whole else policy_keys(spec)[r0:r1]
            )
        else:
            played = env
            keys = torch.cat([policy_keys(s) for s in specs])
            policy = build_grid_policy(spec.policy, [s.params for s in specs], env, keys)
        policy = policy.to(device)
        if len(chunks) > 1:
            log.info("%s: runs %d-%d of %d", spec.label, r0, r1 - 1, n)
        series: dict[str, list[np.ndarray]] = {}

        def record_series(t: int, policy=policy, series=series) -> None:
            for key, value in policy.trajectories().items():
                series.setdefault(key, []).append(value.detach().cpu().numpy())

        start = time.perf_counter()
        part = simulate(
            played,
            policy,
            SimulationOptions(
                record_every=spec.record_every,
                progress=interactive,
                name=spec.environment.name,
                on_record=record_series,
            ),
            logs=logs,
        )
        wall += time.perf_counter() - start
        parts.append({**part, **{key: np.stack(values, axis=1) for key, values in series.items()}})
        del policy
    arrays = (
        parts[0]
        if len(parts) == 1
        else {
            key: parts[0][key] if key == "rounds" else np.concatenate([part[key] for part in parts]) for key in parts[0]
        }
    )
    sidecars = []
    for i, (job, out) in enumerate(zip(specs, outs, strict=True)):
        part = {key: value if key == "rounds" else value[i * n : (i + 1) * n] for key, value in arrays.items()}
        sidecar = {
            **provenance(job, env, device, wall / copies, job_record(job)),
            "n_runs": n,
            **regime_record(job, logs),
            "total_regret_mean": float(part["total_regret"].mean()),
        }
        if limit is not None:
            sidecar["chunks"] = [[r0, r1] for r0, r1 in chunks]
        if copies > 1:
            sidecar["grid_simulation"] = {
                "labels": [s.label for s in specs],
                "n_runs": env.n_runs,
                "wall_time_s": wall,
            }
        sidecars.append(write_result(out, part, sidecar))
        log.info(
            "%s: mean total regret %.2f over %d runs in %.1f s", out, sidecar["total_regret_mean"], n, wall / copies
        )
    return sidecars


MAX_GRID_RUNS = 64
"""Most runs one grid simulation holds (its memory grows with them); a larger grid plays in several."""


def simulation_groups(entries: list[dict[str, Any]]) -> list[list[int]]:
    """Indices of batch ``entries`` grouped into simulations, in the order of their first entry.

    ``entries``: run batch entries (:func:`run_batch`), each with its :class:`JobSpec` under ``job``. Tuning entries
    play together when their specifications differ only in the label and in hyperparameters their policy takes per
    run (:attr:`hare.policies.base.Policy.per_run_hyperparameters`) and none replays logged data: the points of one
    tuning grid. At most :data:`MAX_GRID_RUNS` runs share a simulation, and at most the jobs'
    ``max_runs_per_simulation`` when they set it (a job of more runs plays alone, in chunks: :func:`run_simulations`).
    Reported jobs always play alone, so their results and their wall times (the compute, scaling and sweep tables)
    are a job's own.
    """
    groups: dict[str, list[int]] = {}
    for i, entry in enumerate(entries):
        spec = entry["job"]
        if (
            spec.role != "tuning"
            or entry.get("selected")
            or environment_class(spec.environment.kind).replays_logged_data
        ):
            groups[f"alone-{i}"] = [i]
            continue
        per_run = set(policy_class(spec.policy).per_run_hyperparameters)
        shared = {key: value for key, value in spec.as_dict().items() if key not in ("label", "params")}
        shared["params"] = {key: value for key, value in spec.params.items() if key not in per_run}
        groups.setdefault(json.dumps(shared, sort_keys=True), []).append(i)
    chunks = []
    for members in groups.values():
        spec = entries[members[0]]["job"]
        size = max(1, min(MAX_GRID_RUNS, runs_per_simulation(spec) or MAX_GRID_RUNS) // spec.n_runs)
        chunks.extend(members[j : j + size] for j in range(0, len(members), size))
    return sorted(chunks, key=lambda chunk: chunk[0])


def _labels(entries: list[dict[str, Any]], group: list[int]) -> str:
    return ", ".join(str(entries[i]["out"]) for i in group)


def run_batch(
    entries: list[dict[str, Any]],
    dataset_path: str | Path | None = None,
    progress: bool | None = None,
    store: str | Path | None = None,
) -> list[dict[str, Any]]:
    """Run several jobs of one (experiment, environment) in this process.

    entries: ``[{"job": JobSpec, "out": path.npz, "selected": path.json | None, "tuning": [path.npz] (optional)}]``
    (:func:`hare.experiments.plan.batch_entries`).
    An entry with ``tuning`` runs first writes its ``selected`` file from them
    (:func:`hare.experiments.selection.write_selection`: the grid point of lowest mean total regret); its tuning
    runs are files on disk or the outputs of earlier entries of the batch (a batch of an experiment and an
    environment plays its tuning jobs first). Each job writes its own ``.npz`` and sidecar as :func:`run_job` does;
    the batch saves the interpreter and library start-up per job, and plays the points of a grid as one simulation
    (:func:`simulation_groups`, :func:`run_simulations`). Every entry is checked before the first job runs, so a
    bad entry, or a tuning run that is neither on disk nor played before it, fails the batch before any compute.
    ``store``: a :class:`hare.experiments.job_store.JobStore` folder; a job whose key (specification, code,
    dataset, selection, versions: :func:`hare.experiments.job_store.job_key`) it holds is restored byte for byte
    instead of played, and every played job is kept there; a grid with one changed point plays whole (its runs
    summed as a fresh build sums them) and its unchanged points keep their stored files. Returns the sidecars in
    the order of ``entries``.
    """
    earlier: set[str] = set()
    for i, entry in enumerate(entries):
        missing = sorted({"job", "out"} - set(entry))
        if missing:
            raise ValueError(f"batch entry {i}: missing {missing}")
        if Path(entry["out"]).suffix != ".npz":
            raise ValueError(
                f"batch entry {i} ({entry['job'].label!r}): output must be a .npz path, got {entry['out']}"
            )
        if entry.get("tuning") and not entry.get("selected"):
            raise ValueError(f"batch entry {i} ({entry['job'].label!r}): tuning runs given without a selection path")
        missing_runs = [
            path for path in entry.get("tuning") or [] if str(Path(path)) not in earlier and not Path(path).is_file()
        ]
        if missing_runs:
            raise FileNotFoundError(
                f"batch entry {i} ({entry['job'].label!r}): tuning run(s) neither on disk nor played "
                f"earlier in the batch: {', '.join(missing_runs)}"
            )
        earlier.add(str(Path(entry["out"])))
    sidecars: dict[int, dict[str, Any]] = {}
    jobs = JobStore(store) if store is not None else None
    dataset_sha256 = file_sha256(dataset_path) if jobs is not None and dataset_path is not None else None
    keys: dict[int, str] = {}
    n_restored = 0
    for group in simulation_groups(entries):
        for i in group:
            if entries[i].get("tuning"):
                selection = write_selection(entries[i]["tuning"], entries[i]["selected"])
                log.info("%s: selected %s (%s)", entries[i]["selected"], selection["label"], selection["criterion"])
        if jobs is not None:
            keys.update(
                {
                    i: job_key(
                        entries[i]["job"],
                        job_record(entries[i]["job"])["digest"],
                        dataset_sha256,
                        entries[i].get("selected"),
                    )
                    for i in group
                }
            )
            if all(jobs.holds(keys[i]) for i in group):  # nothing changed: restored, not played
                for i in group:
                    sidecars[i] = jobs.restore(keys[i], entries[i]["out"])
                n_restored += len(group)
                log.info("%s: restored from the store (specification and code unchanged)", _labels(entries, group))
                continue
        if len(group) == 1:
            entry = entries[group[0]]
            sidecars[group[0]] = run_job(entry["job"], entry["out"], dataset_path, progress, entry.get("selected"))
        else:  # the whole grid, as a fresh build plays it (a part of it would sum its runs in another order)
            written = run_simulations(
                [entries[i]["job"] for i in group], [entries[i]["out"] for i in group], dataset_path, progress
            )
            sidecars.update(zip(group, written, strict=True))
        if jobs is not None:
            for i in group:  # an unchanged point of a grid played for another keeps its stored file
                if (restored := jobs.restore(keys[i], entries[i]["out"])) is not None:
                    sidecars[i] = restored
                    n_restored += 1
                else:
                    jobs.save(keys[i], entries[i]["out"])
    if jobs is not None:
        log.info("%d job(s) played, %d restored from the store", len(entries) - n_restored, n_restored)
    return [sidecars[i] for i in range(len(entries))]


BATCH_CPU = re.compile(r"^batch (?P<batch>\S+): (?P<seconds>[0-9.]+) CPU-seconds", re.MULTILINE)
"""The last line of a batch's log (:func:`batch_cpu_line`), read back by
:func:`hare.experiments.studies.cost_check.measured_job_seconds`."""


def batch_cpu_line(batch: str) -> str:
    """``batch EXPERIMENT/ENVIRONMENT: S CPU-seconds (...)``: the user and system CPU time of this process and its
    children so far, its whole life (start, imports, set-up, plays, recording), as the cost model predicts a batch."""
    import resource

    seconds = sum(
        usage.ru_utime + usage.ru_stime
        for usage in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    )
    return f"batch {batch}: {seconds:.2f} CPU-seconds (user + system, the whole process)"
