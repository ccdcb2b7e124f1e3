"""The sections after the experiments: ``personalization``, ``theory``, ``tables``, ``pool_scaling`` and
``cost_growth``.

Each section is read by its own settings (the dataclasses of :mod:`hare.experiments.settings`: every field's type and
declared bound, and the rules between fields) and by the cross-references the schema cannot express (a table's
experiment and policies, the OFUL bound's LinUCB run). A refusal is a :class:`ConfigError` in one line that starts
with the section's key path.
"""

from __future__ import annotations

import re
from typing import Any

from hare.envs.registry import environment_class
from hare.envs.synthetic import SyntheticConfig
from hare.envs.text import TextConfig
from hare.experiments.settings import convergence, cost_growth, pool_scaling
from hare.experiments.settings.errors import ConfigError, dataclass_from, reading
from hare.experiments.settings.personalization import PersonalizationConfig
from hare.experiments.settings.schema import REPOSITORY, section_errors
from hare.experiments.settings.theory import check_approx_budget, check_heads_alpha, check_settings

THEORY_CHECKS = {
    "decomposition": lambda section: check_settings(section),
    "decomposition_grid": lambda section: check_settings(section, grid=True),
    "approx_budget": check_approx_budget,
    "heads_alpha": check_heads_alpha,
}
"""The ``theory`` sections checked by :mod:`hare.experiments.settings.theory`, whose messages name the key inside
the section."""

STUDY_SETTINGS = {
    convergence.WHERE: convergence.settings_from_config,
    pool_scaling.WHERE: pool_scaling.settings_from_config,
    cost_growth.WHERE: cost_growth.settings_from_config,
}
"""Key path of a study's section -> the reader of its settings (messages start with the key path)."""


def check_sections(config: dict[str, Any]) -> None:
    """Every section after ``environments`` and ``experiments`` that ``config`` has (module docstring)."""
    if "personalization" in config:
        personalization_settings(config["personalization"], schema=False)
    theory = config.get("theory", {})
    if "decomposition_grid" in theory:
        _check_decomposition_grid(theory["decomposition_grid"], "theory.decomposition_grid")
    for name in THEORY_CHECKS:
        if name in theory:
            _check_theory(name, theory[name])
    if "oful" in theory:
        _check_oful(config, theory["oful"])
    _check_tables(config)
    if "paper" in config:
        _check_paper(config["paper"])
    for path in STUDY_SETTINGS:
        section = _section(config, path)
        if section is not None:
            study_settings(path, section)


def personalization_settings(section: Any, schema: bool = True) -> PersonalizationConfig:
    """The ``personalization`` section read into its settings: the schema's maxima (``schema``; a whole config has
    passed them already), every field's type and bound (:class:`PersonalizationConfig`), the ``text``
    (:class:`~hare.envs.text.TextConfig`) and ``n_eval_queries`` within the text's query bank (the measurement reads
    the bank's first ``n_eval_queries``). ``hare personalization --config-json`` reads its section through it."""
    where = "personalization"
    if schema:
        errors = section_errors(where, section)
        if errors:
            raise ConfigError(errors[0])
    settings = dataclass_from(PersonalizationConfig, section, where)
    text = dataclass_from(TextConfig, settings.text or {}, f"{where}.text")
    if settings.n_eval_queries > text.n_queries:
        raise ConfigError(
            f"{where}.n_eval_queries: {settings.n_eval_queries} exceeds the {text.n_queries} queries of the text bank "
            f"({where}.text.n_queries); the measurement reads the bank's first n_eval_queries"
        )
    return settings


def theory_section(name: str, section: Any) -> dict[str, Any]:
    """The ``theory.<name>`` section (a key of :data:`THEORY_CHECKS`) checked as :func:`check_sections` checks it in
    a whole config, and returned as it is; a :class:`ConfigError` in one line naming its key path otherwise.

    The theory commands (``hare decomposition``, ``decomposition-grid``, ``approx-budget``, ``heads-alpha``) read the
    section they are given through it; the studies of :mod:`hare.theory` take the section it returns and check
    nothing again.
    """
    where = f"theory.{name}"
    if name not in THEORY_CHECKS:
        raise ValueError(f"{where}: not a theory section checked here; known: {sorted(THEORY_CHECKS)}")
    if not isinstance(section, dict):
        raise ConfigError(f"{where}: must be a mapping, got {type(section).__name__}")
    if name == "decomposition_grid":
        _check_decomposition_grid(section, where)
    _check_theory(name, section)
    return section


def study_settings(path: str, section: Any) -> Any:
    """The settings of the study section at key path ``path`` (a key of :data:`STUDY_SETTINGS`: a
    :class:`~hare.experiments.settings.convergence.ConvergenceSettings`,
    :class:`~hare.experiments.settings.pool_scaling.PoolScalingSettings` or
    :class:`~hare.experiments.settings.cost_growth.CostGrowthSettings`), read as :func:`check_sections` reads it in a
    whole config; a :class:`ConfigError` in one line that starts with the key path otherwise.

    The study commands (``hare convergence``, ``pool-scaling``, ``cost-growth``) read the section they are given
    through it, and the studies take the settings it returns.
    """
    if path not in STUDY_SETTINGS:
        raise ValueError(f"{path}: not a study section read here; known: {sorted(STUDY_SETTINGS)}")
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: must be a mapping, got {type(section).__name__}")
    read = STUDY_SETTINGS[path]
    return reading(path, path, lambda: read(section))


def _check_theory(name: str, section: dict[str, Any]) -> None:
    """:data:`THEORY_CHECKS` of ``theory.<name>``, its ``ValueError`` (naming the key inside the section) raised again
    as a :class:`ConfigError` naming the key path."""
    try:
        THEORY_CHECKS[name](section)
    except ValueError as error:
        raise ConfigError(f"theory.{name}.{error}") from error


def _section(config: dict[str, Any], path: str) -> Any:
    """The section at the dotted ``path`` of ``config``, or ``None`` where the config has none."""
    for key in path.split("."):
        if not isinstance(config, dict) or key not in config:
            return None
        config = config[key]
    return config


PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
"""A blank line: a paragraph break, which LaTeX refuses inside a caption (a caption takes one paragraph)."""


def _check_tables(config: dict[str, Any]) -> None:
    """Each table names experiments of the config (or ``all``), and policies that are labels or policies of them; its
    caption is one paragraph (LaTeX takes no blank line in a caption) and the published table it names exists."""
    for name, table in config.get("tables", {}).items():
        if PARAGRAPH_BREAK.search(table["caption"]):
            raise ConfigError(
                f"tables.{name}.caption: holds a blank line (a paragraph break), which a LaTeX caption cannot take"
            )
        published = table.get("published")
        if published is not None and not (REPOSITORY / published).is_file():
            raise ConfigError(f"tables.{name}.published: {published} does not exist")
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


def _check_paper(paper: dict[str, Any]) -> None:
    """``paper.max_body_pages``, the page the body must end on, is at most ``paper.max_pages``, the whole PDF's."""
    if paper["max_body_pages"] > paper["max_pages"]:
        raise ConfigError(
            f"paper.max_body_pages: {paper['max_body_pages']} exceeds paper.max_pages ({paper['max_pages']}); the body "
            "is part of the PDF"
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
    if not environment_class(config["environments"][oful["environment"]]["kind"]).has_oracle:
        raise ConfigError(
            f"theory.oful.environment: {oful['environment']!r} must be synthetic (the bound needs the true parameters)"
        )


def _check_decomposition_grid(grid: dict[str, Any], where: str) -> None:
    """Every ``(C, d_k)`` cell of the grid must be a valid HARE-Sim instance (``C <= n_items``)."""
    base = dataclass_from(SyntheticConfig, grid.get("env_params", {}), f"{where}.env_params")
    for key in ("n_clusters", "key_dims"):
        if not grid.get(key) or any(not isinstance(v, int) or v < 1 for v in grid[key]):
            raise ConfigError(f"{where}.{key}: must be a non-empty list of positive integers (got {grid.get(key)!r})")
    too_many = [c for c in grid["n_clusters"] if c > base.n_items]
    if too_many:
        raise ConfigError(f"{where}.n_clusters: {too_many} exceed the {base.n_items} items of env_params.n_items")
