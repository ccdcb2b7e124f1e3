"""The job table of a configuration: what the workflow reads to build its graph (``hare jobs --table``).

The Snakefile imports nothing from this package. At parse time it runs ``hare jobs --table --config FILE...``
and reads the JSON this module builds, as a workflow reads a sample sheet; each experiment rule then calls
``hare run-batch --config FILE... --batch EXPERIMENT/ENVIRONMENT``, which expands the same config again
and runs that batch's jobs. The whole configuration is validated once, when the table is built
(:func:`hare.experiments.config.load_config`); a batch checks the sections it reads (``scope="experiments"``) and,
by the digest of its jobs, that they are the ones planned.

The table (all paths relative to the results folder)::

    {"config": the configuration,
     "optional_datasets": [the optional datasets (Covertype) its experiments use],
     "jobs": [{"stem", "folder", "experiment", "environment", "label", "role", "batch", "dataset",
               "dataset_name", "selection", "tuning"}],
     "batches": {"EXPERIMENT/ENVIRONMENT": {"jobs": [stem, ...], "dataset", "digest"}},
     "claims": [{"key", "inputs"}]}

Whether an optional dataset can be obtained is not decided here, at parse time, but by the workflow's checkpoint
rule ``skipped_datasets`` (``hare skipped-datasets``, :func:`availability_record`): a job, which may probe the
network; the workflow then leaves the jobs and tables of a skipped dataset out of what it builds.

``digest`` is the sha256 of the batch's job specifications (their dict forms,
:meth:`hare.experiments.job_spec.JobSpec.as_dict`): a rule's parameter, so a changed job reruns its batch, and what
``hare run-batch`` checks before it runs anything, so a batch never runs jobs other than the ones the workflow
planned.

Before any job starts, the pre-flight memory check (:func:`hare.experiments.memory.check_memory`) estimates the
peak memory of every batch this module forms (:func:`batches`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from hare.data.registry import DATASETS
from hare.experiments.grid import Job, expand_jobs, prepared_dataset, tuning_jobs_of
from hare.source_digest import job_plugins


def batch_of(job: Job) -> str:
    """``EXPERIMENT/ENVIRONMENT``: the jobs of one batch, tuning and reported, run in one process."""
    return f"{job.experiment}/{job.environment}"


def batch_digest(jobs: list[Job]) -> str:
    """sha256 of the job specifications of a batch (their dict forms' JSON), in the order of their stems."""
    specs = [job.spec.as_dict() for job in sorted(jobs, key=lambda job: job.stem)]
    return hashlib.sha256(json.dumps(specs, sort_keys=True).encode()).hexdigest()


def batches(jobs: list[Job]) -> dict[str, list[Job]]:
    """``{batch: [job, ...]}`` in sorted batch order; in a batch the tuning jobs come first (their runs choose the
    hyperparameters of the reported ones), each role in label order."""
    grouped: dict[str, list[Job]] = {}
    for job in jobs:
        grouped.setdefault(batch_of(job), []).append(job)
    return {name: sorted(grouped[name], key=lambda job: (job.role != "tuning", job.label)) for name in sorted(grouped)}


def batch_entries(
    config: dict[str, Any], batch: str, results: Path, digest: str | None = None
) -> tuple[list[dict[str, Any]], Path | None]:
    """The entries of :func:`hare.experiments.run.run_batch` for ``batch`` of ``config`` (``{"job": its JobSpec, "out",
    "selected", "tuning"}``), and its prepared dataset.

    A tuned report job's entry names its selection file (``selected``) and the tuning runs that choose it
    (``tuning``), which the same batch plays first: the batch writes the selection before it plays the job.

    Raises ValueError when the config has no such batch, or when ``digest`` is given and the config's jobs of the
    batch are not the ones it was computed from (the config files changed since the workflow was planned).
    """
    all_jobs = expand_jobs(config)
    planned = batches(all_jobs)
    if batch not in planned:
        raise ValueError(
            f"--batch {batch!r}: the config has no such batch (EXPERIMENT/ENVIRONMENT); it has {len(planned)}, "
            f"e.g. {next(iter(planned), 'none')!r}"
        )
    jobs = planned[batch]
    if digest is not None and batch_digest(jobs) != digest:
        raise ValueError(
            f"--batch {batch!r}: its jobs in the config differ from the ones the workflow planned (the config files "
            "changed since); rerun snakemake"
        )
    dataset = prepared_dataset(jobs[0].spec.environment)
    entries = [
        {
            "job": job.spec,
            "out": str(results / f"{job.stem}.npz"),
            "selected": str(results / job.selection) if job.selection else None,
            "tuning": [str(results / f"{tuning.stem}.npz") for tuning in tuning_jobs_of(all_jobs, job)]
            if job.selection
            else [],
        }
        for job in jobs
    ]
    return entries, results / dataset if dataset else None


def optional_datasets(config: dict[str, Any]) -> list[str]:
    """The optional datasets (:attr:`hare.data.registry.DatasetSpec.optional`) the experiments of ``config`` use."""
    environments = config.get("environments", {})
    used = {
        environments[name].get("dataset")
        for experiment in config["experiments"].values()
        for name in experiment["environments"]
    }
    return sorted(name for name in used if name in DATASETS and DATASETS[name].optional)


def availability_record(config: dict[str, Any], raw_root: Path = Path("results/data/raw")) -> dict[str, Any]:
    """What this build can run: ``{"skipped": [{"dataset", "reason"}], "stems": [job stems], "tables": [names]}``.

    The optional datasets that cannot be obtained (:func:`hare.data.availability.drop_unavailable_optional`, which
    may probe the network unless ``data.offline``) are left out with their environments, the experiments left
    with none and the tables that read those; ``stems`` and ``tables`` are what remains.
    """
    from hare.data.availability import drop_unavailable_optional

    available, skipped = drop_unavailable_optional(config, raw_root)
    return {
        "skipped": [{"dataset": status.dataset, "reason": status.reason} for status in skipped],
        "stems": sorted(job.stem for job in expand_jobs(available)),
        "tables": sorted(available.get("tables", {})),
    }


def job_table(config: dict[str, Any]) -> dict[str, Any]:
    """The job table of a validated ``config`` (module docstring) but its ``claims``, which the command line adds
    from the register (:func:`hare.theory.claims.register.load_register` over ``config``). Reads no file and no
    network."""
    jobs = expand_jobs(config)
    rows = []
    for job in jobs:
        environment = job.spec.environment
        rows.append(
            {
                "stem": job.stem,
                "folder": job.stem.split("/", 1)[0],
                "experiment": job.experiment,
                "environment": job.environment,
                "label": job.label,
                "role": job.role,
                "batch": batch_of(job),
                "dataset": prepared_dataset(environment),
                "dataset_name": environment.dataset,
                "selection": job.selection,
                "tuning": [tuning.stem for tuning in tuning_jobs_of(jobs, job)] if job.selection else [],
            }
        )
    table_batches = {
        name: {
            "jobs": [job.stem for job in members],
            "dataset": prepared_dataset(members[0].spec.environment),
            "digest": batch_digest(members),
            "plugins": [list(plugin) for plugin in sorted({p for job in members for p in job_plugins(job.spec)})],
        }
        for name, members in batches(jobs).items()
    }
    return {"config": config, "optional_datasets": optional_datasets(config), "jobs": rows, "batches": table_batches}
