"""Configuration -> jobs.

A job is one (experiment, environment, policy label, hyperparameter point) and runs
all of its seeds batched. Its specification is a :class:`hare.experiments.job_spec.JobSpec`, self-contained: the
CLI needs nothing else to run it, and its JSON (:meth:`~hare.experiments.job_spec.JobSpec.as_dict`) is what
Snakemake's digests read, so it reruns exactly the jobs whose specification changed.

Config shape (validated by the config boundary, :mod:`hare.experiments.settings`, before any job is expanded)::

    environments: {<env>: {kind: synthetic|classification, params: {...}, dataset: <name>,
                           preparation: project|reference|onehot|..., horizon: <int>}}
    experiments:  {<exp>: {environments: [<env>...], horizon: <int>, n_runs: <int>,
                           regime: cold|warm, n_logged: <int, warm only>,
                           policies: {<label>: {policy: <name>, params: {...}, grid: {<param>: [...]},
                                                fixed: "<reason>", environments: [<env>...]}}}}

``preparation`` (classification environments only, default ``project``) picks how the dataset
is prepared (:data:`hare.data.prepare.PROTOCOLS`); :func:`prepared_dataset` names the file.

``environments`` in a policy entry restricts it to some of the experiment's environments.
``max_runs_per_simulation`` (an experiment's, or a policy entry's, which wins; default none) plays a job's runs in
chunks of at most that many (:func:`hare.experiments.run.run_simulations`), with the results of one simulation; the
job specification carries it only when it is set.
``regime`` (default ``cold``) is the experiment's information regime (paper: sec:regimes): in
``warm`` every policy, tuning and reported runs alike, first learns from the same ``n_logged``
logged interactions of the environment; in ``cold`` no policy sees a log.

A policy entry with a ``grid`` expands to one job per point of the Cartesian
product, labelled ``<label>@<param>=<value>,...``.

A tuned experiment gives every tunable entry a grid of the same number of points, or a ``fixed: "<reason>"``
(:func:`hare.experiments.settings.experiments.check_tuning_budget`); the reason travels in its job specification and
the tables show it. An untuned experiment with ``plan: true`` (a sweep: every point reported) plays each reported job
again on the tuning seeds, for margins and run plans only (:func:`expand_jobs`).

This module expands jobs only; it reads a config the boundary has validated and checks nothing. A grid is read by
the boundary's :func:`hare.experiments.settings.policy_points`, the one reading of a grid its checks share.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hare.data.prepare import DEFAULT_PREPARATION
from hare.experiments.job_spec import EnvironmentSpec, JobSpec
from hare.experiments.settings import policy_points

__all__ = [
    "Job",
    "environment_spec",
    "expand_jobs",
    "prepared_dataset",
    "regime_of",
    "tuning_jobs_of",
]


@dataclass(frozen=True)
class Job:
    """One job and where its outputs go (relative to the results directory): its experiment, environment name and
    label, and its specification ``spec``, what a batch plays."""

    experiment: str
    environment: str
    label: str
    spec: JobSpec

    @property
    def role(self) -> str:
        return self.spec.role

    @property
    def stem(self) -> str:
        folder = "runs" if self.role == "report" else "tuning"
        return f"{folder}/{self.experiment}/{self.environment}/{self.label}"

    @property
    def selection(self) -> str | None:
        """Where the hyperparameters chosen on tuning runs are written, for a tuned report job."""
        if not self.spec.tuned:
            return None
        return f"selected/{self.experiment}/{self.environment}/{self.label}.json"


def environment_spec(config: dict[str, Any], name: str, horizon: int) -> EnvironmentSpec:
    """The job specification's ``environment`` of environment ``name``, the experiment's ``horizon`` where the
    environment sets none.

    ``preparation`` is carried only when it is not the default (``project``), so the
    specifications, and hence the results, of environments that do not declare one stay as
    they were; :func:`prepared_dataset` reads it back with the default.
    """
    env = config["environments"][name]
    preparation = env.get("preparation", DEFAULT_PREPARATION)
    return EnvironmentSpec(
        name=name,
        kind=env["kind"],
        params=env.get("params") or {},
        dataset=env.get("dataset"),
        horizon=int(env.get("horizon") or horizon),
        preparation=None if preparation == DEFAULT_PREPARATION else preparation,
    )


def prepared_dataset(environment: EnvironmentSpec) -> str | None:
    """Path, relative to the results folder, of the prepared dataset an environment reads; None without a dataset.

    ``data/prepared/<dataset>.npz`` for the project preparation, ``data/prepared_<preparation>/<dataset>.npz`` for
    any other (``prepared_reference``, ``prepared_onehot``, ...).
    """
    if not environment.dataset:
        return None
    preparation = environment.preparation or DEFAULT_PREPARATION
    folder = "prepared" if preparation == DEFAULT_PREPARATION else f"prepared_{preparation}"
    return f"data/{folder}/{environment.dataset}.npz"


def regime_of(exp: dict[str, Any]) -> dict[str, Any]:
    """``{"regime": ..., "n_logged": M}`` of an experiment entry (``M = 0`` in the cold regime)."""
    regime = exp.get("regime", "cold")
    return {"regime": regime, "n_logged": int(exp.get("n_logged", 0)) if regime == "warm" else 0}


def _job(
    config: dict[str, Any],
    experiment: str,
    env: EnvironmentSpec,
    label: str,
    policy: str,
    params: dict[str, Any],
    role: str,
    n_runs: int,
    entry: dict[str, Any] | None = None,
    tuned_grid: dict[str, list[Any]] | None = None,
    fixed: str | None = None,
) -> Job:
    # Only when set (the policy entry's value, else the experiment's): the jobs of other configs keep their digests.
    limit = (entry or {}).get(
        "max_runs_per_simulation", config["experiments"][experiment].get("max_runs_per_simulation")
    )
    regime = regime_of(config["experiments"][experiment])
    spec = JobSpec(
        experiment=experiment,
        environment=env,
        label=label,
        policy=policy,
        params=params,
        n_runs=int(n_runs),
        role=role,
        base_seed=int(config["base_seed"]),
        device=config.get("device", "cpu"),
        record_every=int(config.get("record_every", 10)),
        regime=regime["regime"],
        n_logged=regime["n_logged"],
        max_runs_per_simulation=None if limit is None else int(limit),
        tuned_grid=tuned_grid,
        fixed=fixed,
    )
    return Job(experiment, env.name, label, spec)


def expand_jobs(config: dict[str, Any]) -> list[Job]:
    """Every job of ``config``.

    In an experiment with ``tune: true`` a policy entry with a ``grid`` becomes one
    *tuning* job per grid point (``n_tuning_runs`` runs on seeds disjoint from the
    reported ones) and a single *report* job whose hyperparameters are the point with
    the lowest mean total regret on the tuning runs; an entry without a grid (Random, a
    fixed baseline) gets one reference tuning job on the same tuning seeds (its label has
    no ``@``), so margins and run plans (:mod:`hare.experiments.margins`) see every policy
    on the tuning runs. Without ``tune`` every grid point is a report job (sensitivity studies). With ``plan: true``
    (never beside ``tune``) every report job also gets a *tuning* job of the same label, ``n_tuning_runs`` runs on the
    tuning seeds: nothing is selected from them; they give the margins and run plans of the experiment's claims.
    """
    jobs = []
    for experiment, exp in config["experiments"].items():
        for env_name in exp["environments"]:
            env = environment_spec(config, env_name, exp["horizon"])
            for label, entry in exp["policies"].items():
                if env_name in entry.get("environments", exp["environments"]):
                    jobs += _entry_jobs(config, experiment, env, label, entry)
    return jobs


def _entry_jobs(
    config: dict[str, Any], experiment: str, env: EnvironmentSpec, label: str, entry: dict[str, Any]
) -> list[Job]:
    """The jobs of one policy entry of ``experiment`` on ``env`` (:func:`expand_jobs`): its tuning jobs first (every
    grid point of a tuned grid; an entry without a grid in a tuned experiment, or every point in a planned one, on
    the same tuning seeds, nothing selected from them), then its report jobs (one whose point the tuning runs choose,
    or one per point)."""
    exp = config["experiments"][experiment]
    tune, plan = bool(exp.get("tune", False)), bool(exp.get("plan", False))
    policy = entry.get("policy", label)
    points = policy_points(label, entry)

    def job(point_label: str, params: dict[str, Any], role: str, **extra: Any) -> Job:
        runs = exp["n_tuning_runs"] if role == "tuning" else exp["n_runs"]
        return _job(config, experiment, env, point_label, policy, params, role, runs, entry, **extra)

    tuning = [job(point_label, params, "tuning") for point_label, params in points] if tune or plan else []
    if tune and entry.get("grid"):
        grid = {key: list(entry["grid"][key]) for key in sorted(entry["grid"])}
        return tuning + [job(label, dict(entry.get("params") or {}), "report", tuned_grid=grid)]
    return tuning + [job(point_label, params, "report", fixed=entry.get("fixed")) for point_label, params in points]


def tuning_jobs_of(jobs: list[Job], report: Job) -> list[Job]:
    """The tuning jobs whose results choose ``report``'s hyperparameters."""
    prefix = report.label + "@"
    return [
        j
        for j in jobs
        if j.role == "tuning"
        and j.experiment == report.experiment
        and j.environment == report.environment
        and j.label.startswith(prefix)
    ]
