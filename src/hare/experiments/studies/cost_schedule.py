"""The counts of the cost model (:mod:`hare.experiments.studies.cost_model`): how often a job's policy trains, where
its per-round cost stops growing, and how the workflow groups its jobs into simulations.

* :func:`trainings_in`: the trainings of the neural schedule over a range of updates (``N_train(t0, t1)`` of the
  cost model's formula);
* :func:`schedule_of`, :func:`saturation_of`: a job's training schedule and the history size ``cap`` at which its
  round's work stops growing;
* :func:`plays`: the simulations of a list of jobs as the workflow plays them, each with the run count ``B`` of each
  play (a tuning grid of ``P`` points as ``P n`` runs, a job in its chunks, every other job at its ``n`` runs);
* :func:`replays_logged_data`: the jobs that replay logged data (measured with their finish, played whole).
"""

from __future__ import annotations

import math

from hare.envs.registry import environment_class
from hare.experiments.grid import Job
from hare.experiments.job_spec import JobSpec
from hare.experiments.plan import batches
from hare.experiments.run import simulation_groups
from hare.experiments.run_chunks import run_chunks, runs_per_simulation
from hare.policies.base import make_config, policy_class


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


def schedule_of(spec: JobSpec) -> tuple[int, int, int] | None:
    """``(dense_training_rounds, train_every, train_steps)`` of the job's policy, or None: no training schedule."""
    config = make_config(spec.policy, spec.params)
    fields = ("dense_training_rounds", "train_every", "train_steps")
    if not all(hasattr(config, name) for name in fields):
        return None
    return tuple(int(getattr(config, name)) for name in fields)


def saturation_of(spec: JobSpec) -> float:
    """The history size at which the job's per-round cost stops growing: 0 for a policy whose round does not grow
    with the rounds played (its class's ``round_cost_grows`` false: the line is the measured mean), ``max_points`` of a
    policy with a bounded dictionary, else infinity."""
    if not policy_class(spec.policy).round_cost_grows:
        return 0.0
    return float(getattr(make_config(spec.policy, spec.params), "max_points", math.inf))


def replays_logged_data(job: Job) -> bool:
    """Whether the job's environment replays logged data (its class's ``replays_logged_data``)."""
    return environment_class(job.spec.environment.kind).replays_logged_data


def plays(jobs: list[Job]) -> list[tuple[list[Job], list[int]]]:
    """The simulations of ``jobs`` as the workflow plays them, each ``(its jobs, the run count of each play)``: per
    batch (:func:`hare.experiments.plan.batches`), the groups of :func:`hare.experiments.run.simulation_groups` (a
    tuning grid's points together, ``P n`` runs), a job alone in the chunks of its ``max_runs_per_simulation``
    (:func:`hare.experiments.run.run_chunks`); a replay of logged data plays whole, alone at its ``n`` runs."""
    simulations = []
    for batch in batches(jobs).values():
        entries = [{"job": job.spec, "selected": job.selection} for job in batch]
        for group in simulation_groups(entries):
            members = [batch[i] for i in group]
            spec = members[0].spec
            if len(members) > 1:
                simulations.append((members, [len(members) * spec.n_runs]))
            elif replays_logged_data(members[0]):
                simulations.append((members, [spec.n_runs]))
            else:
                chunks = run_chunks(spec.n_runs, runs_per_simulation(spec))
                simulations.append((members, [r1 - r0 for r0, r1 in chunks]))
    return simulations
