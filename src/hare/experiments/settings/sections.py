"""The sections after the experiments: ``personalization``, ``theory``, ``tables``, ``paper``, ``pool_scaling`` and
``cost_growth``.

Each section is read into its own frozen settings (the dataclasses of :mod:`hare.experiments.settings`, here
:class:`TableSettings`, :class:`PaperSettings` and :class:`OfulSettings`: every field's type and declared bound, and
the rules between fields) and by the cross-references the schema cannot express (a table's experiment and policies,
the OFUL bound's LinUCB run). A refusal is a :class:`ConfigError` in one line that starts with the section's key path.
The settings' ``as_dict()`` is the section as written: the workflow's rules read ``tables``, ``paper`` and
``theory.oful`` from the resolved config of the job table (``hare jobs --table``) and pass their values to the
commands as arguments.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields
from typing import Annotated, Any

from hare.envs.registry import environment_class
from hare.envs.text import TextConfig
from hare.experiments.settings import convergence, cost_growth, pool_scaling
from hare.experiments.settings.errors import ConfigError, dataclass_from, reading
from hare.experiments.settings.personalization import PersonalizationConfig
from hare.experiments.settings.schema import REPOSITORY, section_errors
from hare.experiments.settings.theory import check_decomposition_grid
from hare.experiments.settings.theory_settings import THEORY_SETTINGS, TheorySettings, open_unit_interval
from hare.typed import TypedFields, at_least

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
        check_decomposition_grid(theory["decomposition_grid"])
    for name in THEORY_SETTINGS:
        if name in theory:
            _theory_settings(name, theory[name])
    if "oful" in theory:
        oful_settings(config, theory["oful"])
    tables_settings(config)
    if "paper" in config:
        paper_settings(config["paper"])
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


def theory_section(name: str, section: Any) -> TheorySettings:
    """The ``theory.<name>`` section (a key of :data:`~hare.experiments.settings.theory.THEORY_SETTINGS`) read into
    its settings (:class:`~hare.experiments.settings.theory.DecompositionSettings`, ...) as :func:`check_sections`
    reads it in a whole config; a :class:`ConfigError` in one line naming its key path otherwise.

    The theory commands (``hare decomposition``, ``decomposition-grid``, ``approx-budget``, ``heads-alpha``) read the
    section they are given through it; the studies of :mod:`hare.theory` take the settings it returns and check
    nothing again.
    """
    where = f"theory.{name}"
    if name not in THEORY_SETTINGS:
        raise ValueError(f"{where}: not a theory section checked here; known: {sorted(THEORY_SETTINGS)}")
    if not isinstance(section, dict):
        raise ConfigError(f"{where}: must be a mapping, got {type(section).__name__}")
    return _theory_settings(name, section)


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


def _theory_settings(name: str, section: dict[str, Any]) -> TheorySettings:
    """``theory.<name>`` read into its settings: the section's rules first, in the order of their messages (a
    ``ValueError`` naming the key inside the section, raised again as a :class:`ConfigError` naming the key path),
    then the settings built from it (each field's type and declared bound)."""
    settings = THEORY_SETTINGS[name]
    try:
        settings.check(section)
    except ConfigError:
        raise
    except ValueError as error:
        raise ConfigError(f"theory.{name}.{error}") from error
    return reading(settings.__name__, f"theory.{name}", lambda: settings.from_section(section))


def _section(config: dict[str, Any], path: str) -> Any:
    """The section at the dotted ``path`` of ``config``, or ``None`` where the config has none."""
    for key in path.split("."):
        if not isinstance(config, dict) or key not in config:
            return None
        config = config[key]
    return config


PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
"""A blank line: a paragraph break, which LaTeX refuses inside a caption (a caption takes one paragraph)."""


@dataclass(frozen=True)
class TableSettings(TypedFields):
    """One table of the ``tables`` section (the workflow's ``table`` rule, ``hare table``).

    experiment: the experiment whose report runs the table shows, ``all``, or a list of experiments (as written);
    kind: the table's kind (the schema's list); caption: its LaTeX caption, one paragraph; policies: the policy labels
    or policies it shows, in order (``None``: every one); published: the published table it restates
    (``paper/published/<name>.csv``, which exists; ``None``: none).
    """

    experiment: str | tuple[str, ...]
    kind: str
    caption: str
    policies: tuple[str, ...] | None = None
    published: str | None = None

    def __post_init__(self) -> None:
        for name in ("experiment", "policies"):
            if isinstance(getattr(self, name), list):
                object.__setattr__(self, name, tuple(getattr(self, name)))
        if PARAGRAPH_BREAK.search(self.caption):
            raise ValueError(
                "TableSettings.caption: holds a blank line (a paragraph break), which a LaTeX caption cannot take"
            )
        if self.published is not None and not (REPOSITORY / self.published).is_file():
            raise ValueError(f"TableSettings.published: {self.published} does not exist")

    @property
    def experiments(self) -> tuple[str, ...]:
        """The experiments named (``("all",)`` for every one)."""
        return self.experiment if isinstance(self.experiment, tuple) else (self.experiment,)

    def as_dict(self) -> dict[str, Any]:
        """The table as the section writes it."""
        written = {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}
        return {key: list(value) if isinstance(value, tuple) else value for key, value in written.items()}


@dataclass(frozen=True)
class PaperSettings(TypedFields):
    """The ``paper`` section (the workflow's ``paper`` rule, ``hare build-paper``).

    build_pdf: compile the PDF (False stops at the generated LaTeX inputs); max_pages: the most pages the PDF may
    have; max_body_pages: the page the body must end on at the latest (at most ``max_pages``).
    """

    build_pdf: bool
    max_pages: Annotated[int, at_least(1)]
    max_body_pages: Annotated[int, at_least(1)]

    def __post_init__(self) -> None:
        if self.max_body_pages > self.max_pages:
            raise ValueError(
                f"PaperSettings.max_body_pages: {self.max_body_pages} exceeds paper.max_pages ({self.max_pages}); the "
                "body is part of the PDF"
            )

    def as_dict(self) -> dict[str, Any]:
        """The section as written."""
        return asdict(self)


@dataclass(frozen=True)
class OfulSettings(TypedFields):
    """The ``theory.oful`` section (the workflow's ``check_oful`` rule, ``hare check-oful``): the LinUCB report run
    whose regret is checked against the OFUL bound.

    experiment: its experiment; environment: a synthetic environment of it (the bound needs the true parameters);
    policy: a LinUCB label of it; delta: the bound's failure probability.
    """

    experiment: str
    environment: str
    policy: str
    delta: Annotated[float, open_unit_interval]

    def as_dict(self) -> dict[str, Any]:
        """The section as written."""
        return asdict(self)


def tables_settings(config: dict[str, Any]) -> dict[str, TableSettings]:
    """The ``tables`` of ``config`` read into their settings (:class:`TableSettings`): each names experiments of the
    config (or ``all``), and policies that are labels or policies of them; its caption is one paragraph (LaTeX takes
    no blank line in a caption) and the published table it names exists."""
    read = {}
    for name, table in config.get("tables", {}).items():
        settings = read[name] = dataclass_from(TableSettings, table, f"tables.{name}")
        named = list(settings.experiments)
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
        unknown = [p for p in settings.policies or [] if p not in labels]
        if unknown:
            raise ConfigError(
                f"tables.{name}.policies: {unknown} are neither policy labels nor policies of experiment(s) "
                f"{', '.join(named)}; "
                f"they have: {', '.join(sorted(labels))}"
            )
    return read


def paper_settings(paper: dict[str, Any]) -> PaperSettings:
    """The ``paper`` section read into its settings: ``paper.max_body_pages``, the page the body must end on, is at
    most ``paper.max_pages``, the whole PDF's."""
    return dataclass_from(PaperSettings, paper, "paper")


def oful_settings(config: dict[str, Any], oful: dict[str, Any]) -> OfulSettings:
    """``theory.oful`` read into its settings; it names a LinUCB report run this config produces: experiment, one of
    its environments, a label."""
    settings = dataclass_from(OfulSettings, oful, "theory.oful")
    experiment = config["experiments"].get(settings.experiment)
    if experiment is None:
        raise ConfigError(
            f"theory.oful.experiment: unknown experiment {settings.experiment!r}; "
            f"defined: {sorted(config['experiments'])}"
        )
    if settings.environment not in experiment["environments"]:
        raise ConfigError(
            f"theory.oful.environment: {settings.environment!r} is not an environment of experiment "
            f"{settings.experiment!r} ({experiment['environments']})"
        )
    entry = experiment["policies"].get(settings.policy)
    if entry is None:
        raise ConfigError(
            f"theory.oful.policy: {settings.policy!r} is not a policy label of experiment {settings.experiment!r} "
            f"({sorted(experiment['policies'])})"
        )
    if entry.get("policy", settings.policy) != "linucb":
        raise ConfigError(
            f"theory.oful.policy: {settings.policy!r} must be a LinUCB entry (the OFUL bound is LinUCB's)"
        )
    if not environment_class(config["environments"][settings.environment]["kind"]).has_oracle:
        raise ConfigError(
            f"theory.oful.environment: {settings.environment!r} must be synthetic (the bound needs the true parameters)"
        )
    return settings
