"""Configuration -> jobs.

A job is one (experiment, environment, policy label, hyperparameter point) and runs
all of its seeds batched. Its specification is a self-contained JSON-able dict: the
CLI needs nothing else to run it, and Snakemake reruns exactly the jobs whose
specification changed.

Config shape (validated first by ``config/schema.yaml``)::

    environments: {<env>: {kind: synthetic|classification, params: {...}, dataset: <name>, horizon: <int>}}
    experiments:  {<exp>: {environments: [<env>...], horizon: <int>, n_runs: <int>,
                           policies: {<label>: {policy: <name>, params: {...}, grid: {<param>: [...]},
                                                environments: [<env>...]}}}}

``environments`` in a policy entry restricts it to some of the experiment's environments.

A policy entry with a ``grid`` expands to one job per point of the Cartesian
product, labelled ``<label>@<param>=<value>,...``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from hare.policies.base import make_config, policy_names

RUN_ROLES = ("report", "tuning")


class ConfigError(ValueError):
    """A configuration value is invalid; the message names its key path."""


@dataclass(frozen=True)
class Job:
    """One job and where its outputs go (relative to the results directory)."""

    experiment: str
    environment: str
    label: str
    spec: dict[str, Any]

    @property
    def stem(self) -> str:
        return f"runs/{self.experiment}/{self.environment}/{self.label}"


def _point_label(label: str, point: dict[str, Any]) -> str:
    if not point:
        return label
    return label + "@" + ",".join(f"{key}={point[key]}" for key in sorted(point))


def policy_points(label: str, entry: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``[(job label, params)]`` of one policy entry, one per grid point."""
    base = dict(entry.get("params") or {})
    grid = entry.get("grid") or {}
    names = sorted(grid)
    points = [dict(zip(names, values)) for values in itertools.product(*(grid[n] for n in names))] or [{}]
    return [(_point_label(label, point), {**base, **point}) for point in points]


def environment_spec(config: dict[str, Any], name: str, horizon: int) -> dict[str, Any]:
    env = dict(config["environments"][name])
    return {"name": name, "kind": env["kind"], "params": env.get("params") or {}, "dataset": env.get("dataset"), "horizon": int(env.get("horizon") or horizon)}


def expand_jobs(config: dict[str, Any], role: str = "report") -> list[Job]:
    """Every job of ``config`` for runs of ``role`` (``report`` or ``tuning``; disjoint seeds)."""
    if role not in RUN_ROLES:
        raise ConfigError(f"role must be one of {RUN_ROLES}, got {role!r}")
    jobs = []
    for experiment, exp in config["experiments"].items():
        n_runs = int(exp["n_tuning_runs"] if role == "tuning" else exp["n_runs"])
        for env_name in exp["environments"]:
            env = environment_spec(config, env_name, exp["horizon"])
            for label, entry in exp["policies"].items():
                if env_name not in entry.get("environments", exp["environments"]):
                    continue
                for job_label, params in policy_points(label, entry):
                    spec = {
                        "experiment": experiment,
                        "environment": env,
                        "label": job_label,
                        "policy": entry.get("policy", label),
                        "params": params,
                        "n_runs": n_runs,
                        "role": role,
                        "base_seed": int(config["base_seed"]),
                        "device": config.get("device", "cpu"),
                        "record_every": int(config.get("record_every", 10)),
                    }
                    jobs.append(Job(experiment, env_name, job_label, spec))
    return jobs


def validate_config(config: dict[str, Any]) -> None:
    """Checks the schema cannot express: references between sections and every policy's hyperparameters.

    Raises :class:`ConfigError` naming the key path at fault.
    """
    known = set(policy_names())
    for experiment, exp in config["experiments"].items():
        where = f"experiments.{experiment}"
        for env_name in exp["environments"]:
            if env_name not in config["environments"]:
                raise ConfigError(f"{where}.environments: unknown environment {env_name!r}; defined: {sorted(config['environments'])}")
        for label, entry in exp["policies"].items():
            name = entry.get("policy", label)
            if name not in known:
                raise ConfigError(f"{where}.policies.{label}: unknown policy {name!r}; known policies: {', '.join(sorted(known))}")
            restricted = entry.get("environments", exp["environments"])
            stray = sorted(set(restricted) - set(exp["environments"]))
            if stray:
                raise ConfigError(f"{where}.policies.{label}.environments: {stray} are not environments of this experiment")
            for job_label, params in policy_points(label, entry):
                try:
                    policy_config = make_config(name, params)
                    for env_name in restricted:
                        policy_config.check_environment(config["environments"][env_name]["kind"])
                except (ValueError, TypeError) as error:
                    raise ConfigError(f"{where}.policies.{label} ({job_label}): {error}") from error
    for name, env in config["environments"].items():
        if env["kind"] == "classification" and not env.get("dataset"):
            raise ConfigError(f"environments.{name}.dataset: required for kind 'classification'")
