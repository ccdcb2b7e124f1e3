"""The pre-flight memory check: no experiment batch may need more memory than its device has.

Before any job starts, :func:`check_memory` (called by :func:`hare.experiments.config.load_config` for the whole
config: ``hare validate-config``, ``hare jobs``) estimates the peak memory of every batch of the job table
(:func:`batch_memory`, over the batches of :func:`hare.experiments.plan.batches`) and refuses, in one line naming the
key, a config whose batch needs more than its device has (:func:`memory_limit`).

A batch's peak is the process (:data:`PROCESS_BYTES`) plus its largest simulation; a simulation's bytes are the
environment's shared part, the policy state of its runs played at once and the recorded curves
(:func:`simulation_memory`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from hare.envs.base import EnvironmentShape
from hare.envs.registry import environment_class
from hare.experiments.grid import Job, expand_jobs
from hare.experiments.job_spec import EnvironmentSpec, JobSpec
from hare.experiments.plan import batches
from hare.experiments.settings import ConfigError

GIB = 2**30

PROCESS_BYTES = 256 * 2**20
"""The batch process before its first job: the interpreter, torch and the package (226 MiB measured on CPU)."""

RECORD_BYTES = 1600
"""Bytes per recorded round of a simulation whatever its runs: the recorded-round set and list, the two tensors cloned
into the curves (:func:`hare.experiments.simulation.simulate`). Measured: 1.6 kB per round, one run,
``record_every=1``."""

RECORD_RUN_BYTES = 80
"""Bytes per recorded round and run: the float64 curves of regret and reward, cloned, stacked, and copied into the
``.npz`` buffer (76 measured at 64 runs and 20,000 recorded rounds)."""


@dataclass(frozen=True)
class Simulation:
    """One simulation of a batch: ``env_runs`` runs of the environment (all the runs of its jobs), ``policy_runs`` of
    them played at once (fewer with ``max_runs_per_simulation``), of the job ``spec``."""

    spec: JobSpec
    env_runs: int
    policy_runs: int


def batch_simulations(jobs: list[Job]) -> list[Simulation]:
    """The simulations a batch plays, as :func:`hare.experiments.run.run_batch` forms them: the points of a tuning grid
    together (:func:`hare.experiments.run.simulation_groups`, in groups of at most ``max_runs_per_simulation`` runs),
    every other job alone, its runs in chunks of at most ``max_runs_per_simulation`` (a replay whole)."""
    from hare.experiments.run import run_chunks, runs_per_simulation, simulation_groups

    entries = [{"job": job.spec, "selected": job.selection} for job in jobs]
    simulations = []
    for group in simulation_groups(entries):
        spec = jobs[group[0]].spec
        n, limit = spec.n_runs, runs_per_simulation(spec)
        if len(group) > 1:
            size = len(group) if limit is None or len(group) * n <= limit else max(1, limit // n)
            simulations.extend(
                Simulation(spec, len(group[j : j + size]) * n, len(group[j : j + size]) * n)
                for j in range(0, len(group), size)
            )
        elif environment_class(spec.environment.kind).replays_logged_data:
            simulations.append(Simulation(spec, n, n))
        else:
            simulations.append(Simulation(spec, n, max(r1 - r0 for r0, r1 in run_chunks(n, limit))))
    return simulations


def environment_shape(environment: EnvironmentSpec) -> EnvironmentShape:
    """The :class:`~hare.envs.base.EnvironmentShape` of a job's environment, answered by its kind's class from the
    environment's dict form (:meth:`hare.envs.base.BanditEnvironment.memory_shape`: HARE-Sim's from its config, a
    dataset's from its :mod:`hare.data.registry` record, so that the estimate reads no file)."""
    return environment_class(environment.kind).memory_shape(environment.as_dict())


def policy_state_bytes(policy: str, config: Any, shape: EnvironmentShape, length: int) -> tuple[int, int]:
    """One run's state of ``policy`` (its validated hyperparameters ``config``) on an environment of ``shape``, as
    ``(bytes that grow with the rounds, the other bytes)``; ``length`` is its history capacity (rounds plus warm
    start). The policy's class answers (:meth:`hare.policies.base.Policy.memory_bytes`: per-arm counts and sums for
    every policy, and each family adds the state it holds, documented with its shapes on the class)."""
    from hare.policies.base import policy_class

    return policy_class(policy).memory_bytes(config, shape.arms, shape.dim, length, shape.clusters)


def policy_round_bytes(policy: str, config: Any, shape: EnvironmentShape, runs: int) -> int:
    """The temporaries of one round of ``policy`` (its hyperparameters ``config``) over ``runs`` runs beyond its
    state, as its class answers (:meth:`hare.policies.base.Policy.round_bytes`: a neural posterior's or the
    bootstrap's round, 0 for other policies)."""
    from hare.policies.base import policy_class

    return policy_class(policy).round_bytes(config, shape.arms, shape.dim, runs)


def simulation_memory(simulation: Simulation) -> tuple[int, int]:
    """Estimated peak bytes of one simulation (the process not included), as ``(bytes that grow with the rounds, the
    rest)``. With ``N`` environment runs, ``R`` of them played at once, ``T`` rounds (a dataset's capped by its rows),
    ``M`` logged interactions, ``C = T / record_every + 2`` recorded rounds, ``A`` arms of ``d`` features::

        grows = C (RECORD_BYTES + RECORD_RUN_BYTES N) + 8 N T + R grows(policy, T + M)    curves, row order, history
        rest  = shared + 24 N rows + 64 N A                        the environment (the rows' permutation, a round)
              + R fixed(policy) + 32 R A d                         the policy's state, a round's products
              + the policy's round (a neural posterior's)          :func:`policy_round_bytes`
              + N run_bytes                              each run's own (a replay's greedy read: 8 rows A d)

    with ``grows(policy, length)`` and ``fixed(policy)`` of :func:`policy_state_bytes`. It counts what dominates
    (arrays that scale with the runs, the rounds, the arms and the features), not the allocator's slack or small
    temporaries; :func:`batch_memory` adds :data:`PROCESS_BYTES`.
    """
    from hare.policies.base import make_config

    spec, n, r = simulation.spec, simulation.env_runs, simulation.policy_runs
    shape, config = environment_shape(spec.environment), make_config(spec.policy, spec.params)
    grows, fixed = policy_state_bytes(spec.policy, config, shape, shape.rounds + int(spec.n_logged))
    recorded = shape.rounds // max(1, int(spec.record_every or 1)) + 2
    horizon_bytes = recorded * (RECORD_BYTES + RECORD_RUN_BYTES * n) + 8 * n * shape.rounds + r * grows
    rest = shape.shared_bytes + 24 * n * shape.rows + 64 * n * shape.arms + r * fixed + 32 * r * shape.arms * shape.dim
    rest += n * shape.run_bytes
    return horizon_bytes, rest + policy_round_bytes(spec.policy, config, shape, r)


@dataclass(frozen=True)
class BatchMemory:
    """The estimated peak of one batch: ``peak_bytes`` (:data:`PROCESS_BYTES` plus its largest simulation), that
    simulation, and the share of its bytes that grows with the rounds (``horizon_bytes``)."""

    batch: str
    peak_bytes: int
    horizon_bytes: int
    simulation: Simulation


def batch_memory(config: dict[str, Any]) -> list[BatchMemory]:
    """The estimated peak memory of every batch of a validated ``config`` (:func:`simulation_memory` of each of its
    simulations, :func:`batch_simulations`): a batch plays its simulations one after the other in one process, so its
    peak is the process plus its largest simulation. Batches run side by side (``snakemake --cores``) add up; this
    is the least any one of them needs."""
    estimates = []
    for name, jobs in batches(expand_jobs(config)).items():
        sized = [(simulation_memory(simulation), simulation) for simulation in batch_simulations(jobs)]
        (horizon, rest), simulation = max(sized, key=lambda item: sum(item[0]))
        estimates.append(BatchMemory(name, PROCESS_BYTES + horizon + rest, horizon, simulation))
    return estimates


def memory_limit(config: dict[str, Any]) -> tuple[int, str] | None:
    """``(bytes, what)`` a batch of ``config`` may use, or ``None`` when this machine cannot tell.

    On CPU (``device: cpu``, or ``auto`` without CUDA here): ``resources.experiment_batches.mem_mb`` when the config
    gives the batches that much (a cluster's slots), else this machine's physical memory. On CUDA (``cuda``, or
    ``auto`` with CUDA here): the memory of the GPU here, when there is one; with none (planning a GPU config on a CPU
    machine) there is nothing honest to compare with, and the check is skipped.
    """
    device = config.get("device", "cpu")
    if device in ("cuda", "auto"):
        import torch

        if torch.cuda.is_available():
            return torch.cuda.get_device_properties(0).total_memory, f"its GPU ({torch.cuda.get_device_name(0)}) has"
        if device == "cuda":
            return None
    mem_mb = (config.get("resources") or {}).get("experiment_batches", {}).get("mem_mb")
    if isinstance(mem_mb, int) and not isinstance(mem_mb, bool):
        return mem_mb * 2**20, "resources.experiment_batches.mem_mb gives it"
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"), "this machine has"


def memory_refusal(config: dict[str, Any], estimate: BatchMemory, limit: int, what: str) -> str:
    """The one line refusing a batch whose estimate exceeds ``limit``, naming the key that drives it: the horizon (or
    the warm start) when the bytes that grow with the rounds are the larger part, else the runs played at once
    (``n_tuning_runs`` for the points of a tuning grid played together, else ``n_runs``)."""
    spec, simulation = estimate.simulation.spec, estimate.simulation
    experiment, environment = spec.experiment, spec.environment.name
    needs = (
        f"needs about {estimate.peak_bytes / GIB:,.0f} GiB, {what} {limit / GIB:,.0f} GiB "
        f"(batch {estimate.batch}, {spec.label})"
    )
    if 2 * estimate.horizon_bytes < estimate.peak_bytes - PROCESS_BYTES:
        runs = "n_tuning_runs" if spec.role == "tuning" else "n_runs"
        return (
            f"experiments.{experiment}.{runs}: {simulation.policy_runs} runs of {spec.policy} at once {needs}; "
            f"set experiments.{experiment}.max_runs_per_simulation to play fewer at once"
        )
    if spec.n_logged > spec.environment.horizon:
        return (
            f"experiments.{experiment}.n_logged: {spec.n_logged} logged interactions × {simulation.env_runs} runs "
            f"{needs}"
        )
    where = (
        f"environments.{environment}"
        if config["environments"][environment].get("horizon")
        else f"experiments.{experiment}"
    )
    return f"{where}.horizon: {spec.environment.horizon} rounds × {simulation.env_runs} runs {needs}"


def check_memory(config: dict[str, Any]) -> list[BatchMemory]:
    """Refuse, with :class:`ConfigError` in one line naming the key (:func:`memory_refusal`), a validated ``config``
    whose largest batch is estimated (:func:`batch_memory`) to need more memory than :func:`memory_limit`; return the
    estimates."""
    estimates = batch_memory(config)
    limit = memory_limit(config)
    largest = max(estimates, key=lambda estimate: estimate.peak_bytes, default=None)
    if limit is not None and largest is not None and largest.peak_bytes > limit[0]:
        raise ConfigError(memory_refusal(config, largest, *limit))
    return estimates
