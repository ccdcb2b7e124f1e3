"""One job at the boundary: ``hare run --job`` reads a job specification through the checks a config passes.

A job specification is what :func:`hare.experiments.grid.expand_jobs` makes of a config. :func:`parse_job` turns a
given specification back into the config of that one job (:func:`job_config`: its environment, an experiment with one
policy entry, the tuned grid as that entry's grid), checks it as the config boundary checks a config (the schema's
sections and :func:`hare.experiments.settings.experiments.check_experiments`: every range, every policy's and
environment's typed settings, the regime, the devices), expands it, and requires the job it expands to to equal the
given specification key for key, and returns it as the typed :class:`hare.experiments.job_spec.JobSpec` the round loop
reads. A specification no config makes (a missing or unknown key, a value a check refuses,
a horizon of 10^9, ``n_runs: -3``, ``alpha: 1e308``) is refused in one line naming ``job.<key>`` before anything runs.
"""

from __future__ import annotations

from typing import Any

from hare.experiments.config import check_devices
from hare.experiments.grid import expand_jobs
from hare.experiments.job_spec import ENVIRONMENT_KEYS, JOB_KEYS, JobSpec
from hare.experiments.settings import ConfigError
from hare.experiments.settings.experiments import LABEL_PATTERN, MAX_LABEL_LENGTH, check_experiments
from hare.experiments.settings.reader import refuse_nonfinite_numbers
from hare.experiments.settings.schema import section_errors

REQUIRED_KEYS = JOB_KEYS[: JOB_KEYS.index("n_logged") + 1]
"""The keys of every job specification (:func:`hare.experiments.grid._job`), :data:`JOB_KEYS`' first ones."""

OPTIONAL_KEYS = JOB_KEYS[len(REQUIRED_KEYS) : JOB_KEYS.index("fixed") + 1]
"""The keys a config's job carries only when the config sets them; the selection's keys (``selected_from``,
``selection_ties``) are added after the boundary, so a given job may not carry them."""

ROLES = ("tuning", "report")


def _require_mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: must be a JSON object (got {type(value).__name__})")
    return value


def _check_keys(spec: dict[str, Any]) -> None:
    missing = [key for key in REQUIRED_KEYS if key not in spec]
    if missing:
        raise ConfigError(f"job.{missing[0]}: missing (a job specification has {', '.join(REQUIRED_KEYS)})")
    unknown = sorted(set(spec) - set(REQUIRED_KEYS) - set(OPTIONAL_KEYS))
    if unknown:
        raise ConfigError(f"job.{unknown[0]}: not a key of a job specification")
    env = _require_mapping(spec["environment"], "job.environment")
    for key in ("name", "kind", "horizon"):
        if key not in env:
            raise ConfigError(f"job.environment.{key}: missing")
    unknown = sorted(set(env) - set(ENVIRONMENT_KEYS))
    if unknown:
        raise ConfigError(f"job.environment.{unknown[0]}: not a key of a job's environment")
    if spec["role"] not in ROLES:
        raise ConfigError(f"job.role: must be one of {', '.join(ROLES)} (got {spec['role']!r})")
    for key in ("label", "experiment", "policy"):
        if not isinstance(spec[key], str):
            raise ConfigError(f"job.{key}: must be a string (got {spec[key]!r})")
    label = spec["label"]
    if len(label) > MAX_LABEL_LENGTH or not LABEL_PATTERN.fullmatch(label):
        raise ConfigError(
            f"job.label: {label[:40]!r} names the job's result files: at most {MAX_LABEL_LENGTH} characters of "
            "letters, digits and _.,=@+-"
        )


def job_config(spec: dict[str, Any]) -> dict[str, Any]:
    """The config of the one job ``spec`` (keys checked): the sections a config boundary reads for it."""
    env = spec["environment"]
    entry: dict[str, Any] = {"policy": spec["policy"], "params": spec["params"]}
    for key in ("max_runs_per_simulation", "fixed"):
        if key in spec:
            entry[key] = spec[key]
    experiment: dict[str, Any] = {
        "environments": [env["name"]],
        "horizon": env["horizon"],
        "n_runs": spec["n_runs"],
        "n_tuning_runs": spec["n_runs"],
        "regime": spec["regime"],
        "policies": {_entry_label(spec): entry},
    }
    if "tuned_grid" in spec:
        entry["grid"] = spec["tuned_grid"]
        experiment["tune"] = True
    if spec["regime"] == "warm" or spec["n_logged"] != 0:
        experiment["n_logged"] = spec["n_logged"]
    environment = {key: env[key] for key in ("kind", "dataset", "params", "preparation") if env.get(key) is not None}
    environment["horizon"] = env["horizon"]
    return {
        "device": spec["device"],
        "base_seed": spec["base_seed"],
        "record_every": spec["record_every"],
        "environments": {env["name"]: environment},
        "experiments": {spec["experiment"]: experiment},
    }


def _entry_label(spec: dict[str, Any]) -> str:
    """The policy entry's label of a job: its label before ``@`` (a grid point's label is ``<entry>@<point>``)."""
    return spec["label"].split("@", 1)[0]


def _job_key(message: str, spec: dict[str, Any]) -> str:
    """A refusal of the one-job config, its key path read as the job's (``experiments.<e>.policies.<p>.params.x`` as
    ``job.params.x``)."""
    env = spec["environment"]["name"]
    where = f"experiments.{spec['experiment']}"
    entry = f"{where}.policies.{_entry_label(spec)}"
    if message.startswith(f"{entry}: unknown policy"):
        return "job.policy" + message[len(entry) :]
    for prefix, job_prefix in (
        (f"{entry}.grid", "job.tuned_grid"),
        (f"{where}.policies.{_entry_label(spec)}", "job"),
        (f"{where}.horizon", "job.environment.horizon"),
        (f"{where}.policies", "job.label"),
        (where, "job"),
        (f"environments.{env}", "job.environment"),
        ("experiments", "job.experiment"),
        ("environments", "job.environment.name"),
    ):
        for lead in ("", "invalid config: "):
            if message.startswith(lead + prefix):
                return job_prefix + message[len(lead + prefix) :]
    return f"job: {message}" if not message.startswith(("device", "base_seed", "record_every")) else f"job.{message}"


def parse_job(spec: Any) -> JobSpec:
    """``spec`` (a job specification's JSON, read) checked as the one-job config it stands for (module docstring) and
    returned as the :class:`JobSpec` of its values as given; a :class:`ConfigError` in one line naming ``job.<key>``
    otherwise."""
    spec = _require_mapping(spec, "job")
    refuse_nonfinite_numbers(spec, "job.")
    _check_keys(spec)
    config = job_config(spec)
    try:
        for key, value in config.items():
            errors = section_errors(key, value)
            if errors:
                raise ConfigError(errors[0])
        check_experiments(config)
        check_devices(config)
    except ConfigError as error:
        raise ConfigError(_job_key(str(error), spec)) from None
    expected = _expanded(config, spec)
    for key in sorted(set(spec) | set(expected)):
        if key not in ("label", "role") and spec.get(key) != expected.get(key):
            raise ConfigError(
                f"job.{key}: {spec.get(key)!r} is not what a config makes of this job ({expected.get(key)!r})"
            )
    return JobSpec.from_dict(spec)


def _expanded(config: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """The specification the one-job config expands to, as a dict: its report job when the job is tuned, its one job
    otherwise."""
    jobs = expand_jobs(config)
    if "tuned_grid" in spec:
        return next(job.spec for job in jobs if job.role == "report").as_dict()
    (job,) = jobs
    return job.spec.as_dict()
