"""Configuration -> jobs.

A job is one (experiment, environment, policy label, hyperparameter point) and runs
all of its seeds batched. Its specification is a self-contained JSON-able dict: the
CLI needs nothing else to run it, and Snakemake reruns exactly the jobs whose
specification changed.

Config shape (validated first by ``config/schema.yaml``)::

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

Equal tuning budget (:func:`_check_tuning_budget`): in an experiment with ``tune: true`` every
entry whose policy declares tunable hyperparameters (``PolicyConfig.tunable``) has a ``grid``
over some or all of them and over nothing else, and every such grid of the config has the same
number of points. An entry may instead keep its set values with ``fixed: "<reason>"`` (never
beside a grid); the reason travels in its job specification and the tables show it.

Length: one module because validation and expansion are two readings of the one config shape above:
:func:`validate_config` builds the policy config of every point :func:`policy_points` yields, under the
environment restriction and the regime that :func:`expand_jobs` applies to the same points, and the
equal-budget rule constrains exactly the grids :func:`expand_jobs` turns into tuning jobs; apart, a change to
the shape could reach one reading and not the other.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

from hare.data.prepare import DEFAULT_PREPARATION, PROTOCOLS, preparation_of
from hare.experiments.theory_settings import check_approx_budget, check_heads_alpha, check_settings
from hare.policies.base import make_config, policy_class, policy_names


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
    def role(self) -> str:
        return self.spec["role"]

    @property
    def stem(self) -> str:
        folder = "runs" if self.role == "report" else "tuning"
        return f"{folder}/{self.experiment}/{self.environment}/{self.label}"

    @property
    def selection(self) -> str | None:
        """Where the hyperparameters chosen on tuning runs are written, for a tuned report job."""
        if "tuned_grid" not in self.spec:
            return None
        return f"selected/{self.experiment}/{self.environment}/{self.label}.json"


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


def environment_spec(config: dict[str, Any], name: str, horizon: int) -> dict[str, Any]:
    """The job specification's ``environment`` entry of environment ``name``.

    ``preparation`` is carried only when it is not the default (``project``), so the
    specifications, and hence the results, of environments that do not declare one stay as
    they were; :func:`preparation_of` reads it back with the default.
    """
    env = dict(config["environments"][name])
    spec = {
        "name": name,
        "kind": env["kind"],
        "params": env.get("params") or {},
        "dataset": env.get("dataset"),
        "horizon": int(env.get("horizon") or horizon),
    }
    if env.get("preparation", DEFAULT_PREPARATION) != DEFAULT_PREPARATION:
        spec["preparation"] = env["preparation"]
    return spec


def prepared_dataset(environment: dict[str, Any]) -> str | None:
    """Path, relative to the results folder, of the prepared dataset an environment reads; None without a dataset.

    ``data/prepared/<dataset>.npz`` for the project preparation, ``data/prepared_<preparation>/<dataset>.npz`` for
    any other (``prepared_reference``, ``prepared_onehot``, ...).
    """
    if not environment.get("dataset"):
        return None
    preparation = preparation_of(environment)
    folder = "prepared" if preparation == DEFAULT_PREPARATION else f"prepared_{preparation}"
    return f"data/{folder}/{environment['dataset']}.npz"


def regime_of(exp: dict[str, Any]) -> dict[str, Any]:
    """``{"regime": ..., "n_logged": M}`` of an experiment entry (``M = 0`` in the cold regime)."""
    regime = exp.get("regime", "cold")
    return {"regime": regime, "n_logged": int(exp.get("n_logged", 0)) if regime == "warm" else 0}


LOGGED_KINDS = ("synthetic", "classification")


def _job(
    config: dict[str, Any],
    experiment: str,
    env: dict[str, Any],
    label: str,
    policy: str,
    params: dict[str, Any],
    role: str,
    n_runs: int,
    entry: dict[str, Any] | None = None,
) -> Job:
    spec = {
        "experiment": experiment,
        "environment": env,
        "label": label,
        "policy": policy,
        "params": params,
        "n_runs": int(n_runs),
        "role": role,
        "base_seed": int(config["base_seed"]),
        "device": config.get("device", "cpu"),
        "record_every": int(config.get("record_every", 10)),
        **regime_of(config["experiments"][experiment]),
    }
    # Only when set (the policy entry's value, else the experiment's): the jobs of other configs keep their digests.
    limit = (entry or {}).get(
        "max_runs_per_simulation", config["experiments"][experiment].get("max_runs_per_simulation")
    )
    if limit is not None:
        spec["max_runs_per_simulation"] = int(limit)
    return Job(experiment, env["name"], label, spec)


def expand_jobs(config: dict[str, Any]) -> list[Job]:
    """Every job of ``config``.

    In an experiment with ``tune: true`` a policy entry with a ``grid`` becomes one
    *tuning* job per grid point (``n_tuning_runs`` runs on seeds disjoint from the
    reported ones) and a single *report* job whose hyperparameters are the point with
    the lowest mean total regret on the tuning runs; an entry without a grid (Random, a
    fixed baseline) gets one reference tuning job on the same tuning seeds (its label has
    no ``@``), so margins and run plans (:mod:`hare.experiments.margins`) see every policy
    on the tuning runs. Without ``tune`` every grid point is a report job (sensitivity studies).
    """
    jobs = []
    for experiment, exp in config["experiments"].items():
        tune = bool(exp.get("tune", False))
        for env_name in exp["environments"]:
            env = environment_spec(config, env_name, exp["horizon"])
            for label, entry in exp["policies"].items():
                if env_name not in entry.get("environments", exp["environments"]):
                    continue
                policy = entry.get("policy", label)
                points = policy_points(label, entry)
                if tune and entry.get("grid"):
                    jobs.extend(
                        _job(
                            config, experiment, env, point_label, policy, params, "tuning", exp["n_tuning_runs"], entry
                        )
                        for point_label, params in points
                    )
                    report = _job(
                        config,
                        experiment,
                        env,
                        label,
                        policy,
                        dict(entry.get("params") or {}),
                        "report",
                        exp["n_runs"],
                        entry,
                    )
                    report.spec["tuned_grid"] = {key: list(entry["grid"][key]) for key in sorted(entry["grid"])}
                    jobs.append(report)
                else:
                    if tune:
                        # Reference tuning runs of an entry without a grid (Random, a fixed baseline): the margins and
                        # run plans of hare.experiments.margins compare every policy on the same tuning seeds.
                        jobs.extend(
                            _job(
                                config,
                                experiment,
                                env,
                                point_label,
                                policy,
                                params,
                                "tuning",
                                exp["n_tuning_runs"],
                                entry,
                            )
                            for point_label, params in points
                        )
                    untuned = [
                        _job(config, experiment, env, point_label, policy, params, "report", exp["n_runs"], entry)
                        for point_label, params in points
                    ]
                    for job in untuned if "fixed" in entry else ():
                        job.spec["fixed"] = entry["fixed"]
                    jobs.extend(untuned)
    return jobs


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


CONFIG_SCOPES = ("all", "experiments")
"""What :func:`validate_config` checks: the whole config, or only what an experiment batch reads (environments,
experiments and their tuning budget), which spares a batch process the checks of the theory sections and tables."""


def validate_config(config: dict[str, Any], scope: str = "all") -> None:
    """Checks the schema cannot express: references between sections and every policy's hyperparameters.

    scope: one of :data:`CONFIG_SCOPES`. The workflow validates the whole config once, when it reads the job table;
    an experiment batch (``hare run-batch``) checks the sections it reads and that its jobs are the planned ones.
    Raises :class:`ConfigError` naming the key path at fault.
    """
    if scope not in CONFIG_SCOPES:
        raise ValueError(f"scope must be one of {CONFIG_SCOPES}, not {scope!r}")
    for name, env in config["environments"].items():
        if env["kind"] in ("classification", "replay") and not env.get("dataset"):
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
        regime = exp.get("regime", "cold")
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
            for job_label, params in policy_points(label, entry):
                try:
                    policy_config = make_config(name, params)
                    policy_config.check_regime(regime)
                    for env_name in restricted:
                        policy_config.check_environment(config["environments"][env_name]["kind"])
                except (ValueError, TypeError) as error:
                    raise ConfigError(f"{where}.policies.{label} ({job_label}): {error}") from error
            if experiment != PRIVILEGED_EXPERIMENT:
                _refuse_privileged_settings(entry, f"{where}.policies.{label}")
    _check_tuning_budget(config)
    if scope == "experiments":
        return
    if "personalization" in config:
        from hare.envs.text import TextConfig
        from hare.experiments.studies.personalization import PersonalizationConfig

        settings = _dataclass_from(PersonalizationConfig, config["personalization"], "personalization")
        _dataclass_from(TextConfig, settings.text or {}, "personalization.text")
    for name in ("decomposition", "decomposition_grid"):
        if name in config.get("theory", {}):
            if name == "decomposition_grid":
                _check_decomposition_grid(config["theory"][name], f"theory.{name}")
            try:
                check_settings(config["theory"][name], grid=name == "decomposition_grid")
            except ValueError as error:
                raise ConfigError(f"theory.{name}.{error}") from error
    for name, check in (("approx_budget", check_approx_budget), ("heads_alpha", check_heads_alpha)):
        if name in config.get("theory", {}):
            try:
                check(config["theory"][name])
            except ValueError as error:
                raise ConfigError(f"theory.{name}.{error}") from error
    if "convergence" in config.get("theory", {}):
        from hare.experiments.studies.convergence import settings_from_config

        try:
            settings_from_config(config["theory"]["convergence"])
        except ValueError as error:
            raise ConfigError(str(error)) from error
    if "oful" in config.get("theory", {}):
        _check_oful(config, config["theory"]["oful"])
    for name, table in config.get("tables", {}).items():
        named = table["experiment"] if isinstance(table["experiment"], list) else [table["experiment"]]
        for experiment in named:
            if experiment != "all" and experiment not in config["experiments"]:
                raise ConfigError(
                    f"tables.{name}.experiment: unknown experiment {experiment!r}; "
                    f"defined: {sorted(config['experiments'])}"
                )
        entries = [
            (label, entry)
            for experiment, exp in config["experiments"].items()
            if "all" in named or experiment in named
            for label, entry in exp["policies"].items()
        ]
        labels = {label for label, _ in entries} | {entry.get("policy", label) for label, entry in entries}
        unknown = [p for p in table.get("policies") or [] if p not in labels]
        if unknown:
            raise ConfigError(
                f"tables.{name}.policies: {unknown} are neither policy labels nor policies of experiment(s) "
                f"{', '.join(named)}; "
                f"they have: {', '.join(sorted(labels))}"
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


def _check_oful(config: dict[str, Any], oful: dict[str, Any]) -> None:
    """``theory.oful`` names a LinUCB report run this config produces: experiment, one of its environments, a label."""
    experiment = config["experiments"].get(oful["experiment"])
    if experiment is None:
        raise ConfigError(
            f"theory.oful.experiment: unknown experiment {oful['experiment']!r}; "
            f"defined: {sorted(config['experiments'])}"
        )
    if oful["environment"] not in experiment["environments"]:
        raise ConfigError(
            f"theory.oful.environment: {oful['environment']!r} is not an environment of experiment "
            f"{oful['experiment']!r} ({experiment['environments']})"
        )
    entry = experiment["policies"].get(oful["policy"])
    if entry is None:
        raise ConfigError(
            f"theory.oful.policy: {oful['policy']!r} is not a policy label of experiment {oful['experiment']!r} "
            f"({sorted(experiment['policies'])})"
        )
    if entry.get("policy", oful["policy"]) != "linucb":
        raise ConfigError(f"theory.oful.policy: {oful['policy']!r} must be a LinUCB entry (the OFUL bound is LinUCB's)")
    if config["environments"][oful["environment"]]["kind"] != "synthetic":
        raise ConfigError(
            f"theory.oful.environment: {oful['environment']!r} must be synthetic (the bound needs the true parameters)"
        )


CLASSIFICATION_PARAMS = ("logged_rows",)
"""Parameters of a classification environment (:meth:`hare.envs.classification.ClassificationBandit.from_npz`)."""


def _check_environment_params(name: str, env: dict[str, Any]) -> None:
    """``environments.<name>.params`` by kind: HARE-Sim's are a typed :class:`SyntheticConfig`, a classification
    environment takes ``logged_rows`` (an integer >= 0), a replay environment none."""
    where = f"environments.{name}.params"
    params = env.get("params") or {}
    if env["kind"] == "synthetic":
        from hare.envs.synthetic import SyntheticConfig

        _dataclass_from(SyntheticConfig, params, where)
        return
    known = CLASSIFICATION_PARAMS if env["kind"] == "classification" else ()
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}: unknown setting of a {env['kind']} environment; known: {list(known)}")
    rows = params.get("logged_rows", 0)
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 0:
        raise ConfigError(f"{where}.logged_rows: must be an integer >= 0 (got {rows!r})")


def _check_preparation(name: str, env: dict[str, Any]) -> None:
    """``environments.<name>.preparation``, if given, is a known protocol on a classification environment."""
    if "preparation" not in env:
        return
    where = f"environments.{name}.preparation"
    if env["preparation"] not in PROTOCOLS:
        raise ConfigError(f"{where}: unknown preparation {env['preparation']!r}; valid: {', '.join(PROTOCOLS)}")
    if env["kind"] != "classification":
        raise ConfigError(f"{where}: only a classification environment has a preparation (kind is {env['kind']!r})")


def _check_tuning_budget(config: dict[str, Any]) -> None:
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


def _check_regime(config: dict[str, Any], exp: dict[str, Any], where: str) -> None:
    """A warm experiment names ``n_logged >= 1`` and runs only on environments that log (and hold that many rows)."""
    regime = exp.get("regime", "cold")
    if regime not in ("cold", "warm"):
        raise ConfigError(f"{where}.regime: must be 'cold' or 'warm' (got {regime!r})")
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
        if env["kind"] not in LOGGED_KINDS:
            raise ConfigError(
                f"{where}.regime: 'warm' needs logged interactions, which environment {env_name!r} "
                f"(kind {env['kind']!r}) does not have"
            )
        rows = (env.get("params") or {}).get("logged_rows", 0)
        if env["kind"] == "classification" and n_logged > rows:
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


def _check_decomposition_grid(grid: dict[str, Any], where: str) -> None:
    """Every ``(C, d_k)`` cell of the grid must be a valid HARE-Sim instance (``C <= n_items``)."""
    from hare.envs.synthetic import SyntheticConfig

    base = _dataclass_from(SyntheticConfig, grid.get("env_params", {}), f"{where}.env_params")
    for key in ("n_clusters", "key_dims"):
        if not grid.get(key) or any(not isinstance(v, int) or v < 1 for v in grid[key]):
            raise ConfigError(f"{where}.{key}: must be a non-empty list of positive integers (got {grid.get(key)!r})")
    too_many = [c for c in grid["n_clusters"] if c > base.n_items]
    if too_many:
        raise ConfigError(f"{where}.n_clusters: {too_many} exceed the {base.n_items} items of env_params.n_items")


def _dataclass_from(cls: type, values: Any, where: str) -> Any:
    """``cls(**values)`` with errors that name the key path (``where.<field>``)."""
    import dataclasses
    import re

    if not isinstance(values, dict):
        raise ConfigError(f"{where}: must be a mapping, got {type(values).__name__}")
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}: unknown setting; known: {sorted(known)}")
    try:
        return cls(**values)
    except (TypeError, ValueError) as error:
        match = re.match(rf"(?:{cls.__name__}|{re.escape(where)})\.(\w+): (.*)", str(error))
        if match:
            raise ConfigError(f"{where}.{match.group(1)}: {match.group(2)}") from error
        raise ConfigError(f"{where}: {error}") from error
