"""The ``environments`` and ``experiments`` sections: what the schema cannot express.

References between the sections (an experiment's environments, a policy entry's restriction), every policy's
hyperparameters at every point of its grid (its config dataclass's own types and bounds, and the schema's ranges of
``policy_params`` for a grid's values), each environment's parameters by kind, the information regime, and the equal
tuning budget (:func:`check_tuning_budget`): in an experiment with ``tune: true`` every entry whose policy declares
tunable hyperparameters (``PolicyConfig.tunable``) has a ``grid`` over some or all of them and over nothing else, and
every such grid of the config has the same number of points. An entry may instead keep its set values with
``fixed: "<reason>"`` (never beside a grid). ``plan: true`` (tuning runs of every reported point, for margins and run
plans only) is refused beside ``tune: true`` and without ``n_tuning_runs``.

A job label (``<label>@<param>=<value>,...``, :func:`policy_points`) becomes a file name
(``runs/<experiment>/<environment>/<label>.npz``): it is at most :data:`MAX_LABEL_LENGTH` characters of
:data:`LABEL_PATTERN` (the names of the sections are bounded by the schema's ``name``).

:func:`policy_points` is the one reading of a policy entry's grid: the checks here build the policy config of every
point it yields, and :func:`hare.experiments.grid.expand_jobs` turns the same points into jobs.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from collections import Counter
from typing import Any

from hare.data.prepare import PROTOCOLS
from hare.data.registry import get_dataset
from hare.envs.registry import environment_class
from hare.experiments.settings.errors import ConfigError, dataclass_from
from hare.experiments.settings.schema import point_errors
from hare.policies.base import make_config, policy_class, policy_names
from hare.regimes import REGIMES

"""Environment kinds that hold logged interactions (a warm experiment runs only on these)."""

MAX_LABEL_LENGTH = 128
"""Most characters of a job label, a file name (the file system's limit is 255 bytes, less the suffix and the
temporary name of an atomic write)."""

LABEL_PATTERN = re.compile(r"[A-Za-z0-9_.,=@+-]+")
"""The characters of a job label: a name, ``@``, and ``<param>=<value>`` pairs separated by commas."""


def _point_label(label: str, point: dict[str, Any]) -> str:
    if not point:
        return label
    return label + "@" + ",".join(f"{key}={point[key]}" for key in sorted(point))


def policy_points(label: str, entry: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``[(job label, params)]`` of one policy entry, one per grid point."""
    base = dict(entry.get("params") or {})
    grid = entry.get("grid") or {}
    names = sorted(grid)
    points = [dict(zip(names, values, strict=True)) for values in itertools.product(*(grid[n] for n in names))] or [{}]
    return [(_point_label(label, point), {**base, **point}) for point in points]


def check_experiments(config: dict[str, Any]) -> None:
    """The ``environments`` and ``experiments`` sections of a config that passed the schema (module docstring);
    :class:`ConfigError` naming the key path at fault."""
    for name, env in config["environments"].items():
        if environment_class(env["kind"]).needs_dataset and not env.get("dataset"):
            raise ConfigError(f"environments.{name}.dataset: required for kind {env['kind']!r}")
        _check_preparation(name, env)
        _check_environment_params(name, env)
    known = set(policy_names())
    for experiment, exp in config["experiments"].items():
        where = f"experiments.{experiment}"
        for env_name in exp["environments"]:
            if env_name not in config["environments"]:
                raise ConfigError(
                    f"{where}.environments: unknown environment {env_name!r}; defined: {sorted(config['environments'])}"
                )
            rounds = played_rounds(config, experiment, env_name)
            record_every = config.get("record_every", 10)
            if record_every > rounds:
                raise ConfigError(
                    f"record_every: {record_every} exceeds the {rounds} rounds {where} plays on "
                    f"{env_name!r}: its regret curves would hold the last round only"
                )
        regime = exp.get("regime", "cold")
        _check_plan(exp, where)
        _check_regime(config, exp, where)
        _check_runs_per_simulation(exp, where)
        for label, entry in exp["policies"].items():
            _check_runs_per_simulation(entry, f"{where}.policies.{label}")
            name = entry.get("policy", label)
            if name not in known:
                raise ConfigError(
                    f"{where}.policies.{label}: unknown policy {name!r}; known policies: {', '.join(sorted(known))}"
                )
            restricted = entry.get("environments", exp["environments"])
            stray = sorted(set(restricted) - set(exp["environments"]))
            if stray:
                raise ConfigError(
                    f"{where}.policies.{label}.environments: {stray} are not environments of this experiment"
                )
            _check_grid_values(entry, f"{where}.policies.{label}")
            for job_label, params in policy_points(label, entry):
                _check_label(job_label, f"{where}.policies.{label}")
                try:
                    policy_config = make_config(name, params)
                    policy_config.check_regime(regime)
                    for env_name in restricted:
                        policy_config.check_environment(config["environments"][env_name]["kind"])
                except (ValueError, TypeError) as error:
                    raise ConfigError(f"{where}.policies.{label} ({job_label}): {error}") from error
            if experiment != PRIVILEGED_EXPERIMENT:
                _refuse_privileged_settings(entry, f"{where}.policies.{label}")
    check_tuning_budget(config)


def played_rounds(config: dict[str, Any], experiment: str, env_name: str) -> int:
    """The rounds experiment ``experiment`` plays on environment ``env_name``: its horizon (the environment's own, else
    the experiment's), cut to the online rows of a dataset (:meth:`~hare.envs.base.BanditEnvironment.memory_shape`,
    from the dataset's record: no file is read)."""
    env = config["environments"][env_name]
    horizon = int(env.get("horizon") or config["experiments"][experiment]["horizon"])
    if not env.get("dataset"):
        return horizon
    shape = environment_class(env["kind"]).memory_shape({**env, "name": env_name, "horizon": horizon})
    return min(horizon, shape.rounds)


def full_pass_notes(config: dict[str, Any]) -> list[str]:
    """One line per (experiment, environment) whose horizon exceeds its dataset's online rows: such a job plays one
    full pass over the rows (a shuffled pass per run), fewer rounds than the horizon says."""
    notes = []
    for experiment, exp in config["experiments"].items():
        for env_name in exp["environments"]:
            env = config["environments"][env_name]
            horizon = int(env.get("horizon") or exp["horizon"])
            rounds = played_rounds(config, experiment, env_name)
            if rounds < horizon:
                notes.append(
                    f"experiments.{experiment}: horizon {horizon} on {env_name!r} exceeds the {rounds} online rows of "
                    f"dataset {env['dataset']!r}; it plays one full pass, {rounds} rounds"
                )
    return notes


def _check_grid_values(entry: dict[str, Any], where: str) -> None:
    """Every value of a grid within the schema's range of the hyperparameter it sets (``policy_params``)."""
    for key, values in (entry.get("grid") or {}).items():
        for index, value in enumerate(values):
            errors = point_errors({key: value}, f"{where}.grid")
            if errors:
                path, _, message = errors[0].partition(": ")
                raise ConfigError(f"{path}[{index}]: {message}")


def _check_label(job_label: str, where: str) -> None:
    """A job label is a file name: at most :data:`MAX_LABEL_LENGTH` characters of :data:`LABEL_PATTERN`."""
    if len(job_label) > MAX_LABEL_LENGTH:
        raise ConfigError(
            f"{where}.grid: the job label {job_label[:40]}... has {len(job_label)} characters; a job label names its "
            f"result files, at most {MAX_LABEL_LENGTH}"
        )
    if not LABEL_PATTERN.fullmatch(job_label):
        raise ConfigError(
            f"{where}.grid: the job label {job_label!r} names its result files: letters, digits and _.,=@+- only"
        )


PRIVILEGED_EXPERIMENT = "published"
"""The one experiment (the reproduction of LNUCB-TA's Table 2) whose policies may read information a bandit does not
have."""

PRIVILEGED_SETTINGS = {
    ("global_mean", "all_rewards"): "reads the whole reward matrix, information a bandit does not have"
}
"""``(hyperparameter, value)`` -> why it is refused outside :data:`PRIVILEGED_EXPERIMENT` (LNUCB-TA's public-code
reading)."""


def _refuse_privileged_settings(entry: dict[str, Any], where: str) -> None:
    """A policy entry outside :data:`PRIVILEGED_EXPERIMENT` sets none of :data:`PRIVILEGED_SETTINGS`, in its params or
    its grid."""
    for (key, value), reason in PRIVILEGED_SETTINGS.items():
        for section, found in (
            ("params", (entry.get("params") or {}).get(key) == value),
            ("grid", value in ((entry.get("grid") or {}).get(key) or ())),
        ):
            if found:
                raise ConfigError(
                    f"{where}.{section}.{key}: {value!r} {reason}; "
                    f"it is allowed only in the {PRIVILEGED_EXPERIMENT} experiment"
                )


def _check_environment_params(name: str, env: dict[str, Any]) -> None:
    """``environments.<name>.params``: the typed config of the entry's kind (its class's ``config_class``, e.g.
    HARE-Sim's :class:`~hare.envs.synthetic.SyntheticConfig`, a classification environment's ``logged_rows >= 0``, a
    replay environment's none), refused with the key path at fault."""
    where, params = f"environments.{name}.params", env.get("params") or {}
    cls = environment_class(env["kind"])
    known = [field.name for field in dataclasses.fields(cls.config_class)]
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}: unknown setting of a {env['kind']} environment; known: {known}")
    settings = dataclass_from(cls.config_class, params, where)
    logged_rows = getattr(settings, "logged_rows", 0)
    shape = get_dataset(env["dataset"]).shape if env.get("dataset") else None
    if shape is not None and logged_rows:
        rows = shape.rows
        if logged_rows >= rows:
            raise ConfigError(
                f"{where}.logged_rows: {logged_rows} leaves none of the {rows} rows of dataset {env['dataset']!r} "
                f"online (must be below {rows})"
            )


def _check_preparation(name: str, env: dict[str, Any]) -> None:
    """``environments.<name>.preparation``, if given, is a known protocol on a classification environment."""
    if "preparation" not in env:
        return
    where = f"environments.{name}.preparation"
    if env["preparation"] not in PROTOCOLS:
        raise ConfigError(f"{where}: unknown preparation {env['preparation']!r}; valid: {', '.join(PROTOCOLS)}")
    if not environment_class(env["kind"]).has_preparation:
        raise ConfigError(f"{where}: only a classification environment has a preparation (kind is {env['kind']!r})")


def check_tuning_budget(config: dict[str, Any]) -> None:
    """Equal, declared tuning: in every experiment with ``tune: true``, each entry whose policy has a
    non-empty ``tunable`` has a grid over a non-empty subset of it (nothing else) or a ``fixed`` reason,
    and all these grids of the config have the same number of points. ``fixed`` never sits beside a grid.
    """
    sizes: dict[str, int] = {}
    for experiment, exp in config["experiments"].items():
        tune = bool(exp.get("tune", False))
        for label, entry in exp["policies"].items():
            where = f"experiments.{experiment}.policies.{label}"
            name = entry.get("policy", label)
            grid = entry.get("grid") or {}
            shadowed = sorted(set(grid) & set(entry.get("params") or {}))
            if shadowed:
                raise ConfigError(
                    f"{where}.params: {shadowed} {'is' if len(shadowed) == 1 else 'are'} also in the grid, which "
                    "overrides params; set each hyperparameter in one of them"
                )
            if "fixed" in entry:
                if grid:
                    raise ConfigError(
                        f"{where}.fixed: an entry with a grid is tuned, not fixed; drop the grid or the fixed reason"
                    )
                if not isinstance(entry["fixed"], str) or not entry["fixed"].strip():
                    raise ConfigError(
                        f"{where}.fixed: must be a non-empty reason why the entry is not tuned (got {entry['fixed']!r})"
                    )
            if not tune:
                continue
            tunable = tuple(policy_class(name).config_class.tunable)
            if not grid:
                if tunable and "fixed" not in entry:
                    raise ConfigError(
                        f"{where}.grid: required in a tuned experiment (tune: true): policy {name!r} tunes "
                        f"{list(tunable)}; give a grid over them (or some of them) with as many points as the config's "
                        'other tuned grids, or opt out with fixed: "<reason>"'
                    )
                continue
            outside = sorted(set(grid) - set(tunable))
            if outside:
                raise ConfigError(
                    f"{where}.grid: {outside} {'is' if len(outside) == 1 else 'are'} not tunable for policy {name!r} "
                    f"(its tunable hyperparameters: {list(tunable) or 'none'}); "
                    f"set {'it' if len(outside) == 1 else 'them'} in params instead"
                )
            sizes[f"{where}.grid"] = math.prod(len(values) for values in grid.values())
    counts = Counter(sizes.values())
    if len(counts) > 1:
        order = list(sizes.values())
        common = max(counts, key=lambda size: (counts[size], -order.index(size)))
        odd = next(path for path, size in sizes.items() if size != common)
        agree = [path for path, size in sizes.items() if size == common]
        others = agree[0] + (f" and {len(agree) - 1} other tuned grid(s)" if len(agree) > 1 else "")
        raise ConfigError(
            f"{odd}: {sizes[odd]} points, but {others} {'have' if len(agree) > 1 else 'has'} {common}; "
            f"every tuned grid of a config must have the same number of points (equal tuning budget)"
        )


def _check_plan(exp: dict[str, Any], where: str) -> None:
    """``plan: true`` (tuning runs of every reported point, for margins and run plans only) is for an untuned
    experiment, and needs ``n_tuning_runs``: a tuned one has its tuning runs already."""
    if not exp.get("plan"):
        return
    if exp.get("tune"):
        raise ConfigError(
            f"{where}.plan: a tuned experiment (tune: true) has tuning runs for its margins already; plan is for an "
            "untuned one (every point reported): drop plan or tune"
        )
    if not isinstance(exp.get("n_tuning_runs"), int) or isinstance(exp.get("n_tuning_runs"), bool):
        raise ConfigError(
            f"{where}.n_tuning_runs: plan: true plays every reported job on n_tuning_runs tuning seeds; give how many"
        )


def _check_regime(config: dict[str, Any], exp: dict[str, Any], where: str) -> None:
    """A warm experiment names ``n_logged >= 1`` and runs only on environments that log (and hold that many rows)."""
    regime = exp.get("regime", "cold")
    if regime not in REGIMES:
        raise ConfigError(f"{where}.regime: must be one of {', '.join(REGIMES)} (got {regime!r})")
    if regime == "cold":
        if "n_logged" in exp:
            raise ConfigError(f"{where}.n_logged: only a warm experiment has logged interactions (regime is 'cold')")
        return
    n_logged = exp.get("n_logged")
    if not isinstance(n_logged, int) or isinstance(n_logged, bool) or n_logged < 1:
        raise ConfigError(
            f"{where}.n_logged: a warm experiment needs an integer number of logged interactions >= 1 "
            f"(got {n_logged!r})"
        )
    for env_name in exp["environments"]:
        env = config["environments"][env_name]
        cls = environment_class(env["kind"])
        if not cls.serves_logs:
            raise ConfigError(
                f"{where}.regime: 'warm' needs logged interactions, which environment {env_name!r} "
                f"(kind {env['kind']!r}) does not have"
            )
        rows = cls.logged_capacity(cls.make_config(env.get("params")))
        if rows is not None and n_logged > rows:
            raise ConfigError(
                f"{where}.n_logged: {n_logged} exceeds the {rows} rows environment {env_name!r} sets aside "
                f"(environments.{env_name}.params.logged_rows)"
            )


def _check_runs_per_simulation(entry: dict[str, Any], where: str) -> None:
    """``max_runs_per_simulation`` of an experiment or a policy entry, if set, is an integer >= 1 (runs played at
    once)."""
    limit = entry.get("max_runs_per_simulation")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ConfigError(
            f"{where}.max_runs_per_simulation: must be an integer >= 1, the most runs one simulation holds "
            f"(got {limit!r})"
        )
