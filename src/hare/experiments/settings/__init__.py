"""The config boundary: YAML in, validated settings of every section out, every refusal one line with its key path.

In order, each stopping at the first problem (the entry point is :func:`hare.experiments.config.load_config`):

1. every file is read as UTF-8 YAML whose mappings repeat no key, nest at most 32 levels and spell floats as a user
   writes them (``1.0e308``, ``1e-3``), and no number of it is a NaN or an infinity; an overlay is resolved onto its
   base (:mod:`.reader`);
2. the schema (``config/schema.yaml``, :mod:`.schema`): types, the documented maxima of sizes, names that become file
   names (at most 64 characters of ``[a-z0-9_]``), and the physical range of every float, each declared once there;
3. the ``environments`` and ``experiments`` sections (:mod:`.experiments`): references between sections, every
   policy's config dataclass at every grid point (its own field types and bounds), the grid's values against the
   schema's ranges, job labels that fit a file name, the regime, the equal tuning budget;
4. with ``scope="all"``, the other sections (:mod:`.sections`), each read into its own frozen settings (the
   dataclasses of :mod:`hare.typed`: every field's type and declared bound, and the rules between fields): the
   ``theory`` sections (:mod:`.theory`, :mod:`.convergence`), ``personalization``, ``pool_scaling``, ``cost_growth``,
   ``tables`` (with their references) and ``paper``;
5. then, for the whole config, the entry point's resource check: no experiment batch may need more memory than its
   device has (:func:`hare.experiments.memory.check_memory`).

A command given one section (``hare decomposition --config-json ...``, ``hare pool-scaling``, ...) reads it through
the same checks: :func:`theory_section` for a ``theory`` section of :mod:`hare.theory`, :func:`study_settings` for a
study's section; each returns the section's typed settings, which the study takes.

Nothing after the boundary checks a config value again. The package sits below the rest of
:mod:`hare.experiments`: the job expansion (:mod:`hare.experiments.grid`) and the studies read their settings from
it, and it reads no module of theirs.
"""

from __future__ import annotations

from typing import Any

from hare.experiments.settings.errors import ConfigError
from hare.experiments.settings.experiments import check_experiments, policy_points
from hare.experiments.settings.sections import check_sections, study_settings, theory_section

__all__ = [
    "CONFIG_SCOPES",
    "ConfigError",
    "policy_points",
    "study_settings",
    "theory_section",
    "validate_config",
]

CONFIG_SCOPES = ("all", "experiments")
"""What :func:`validate_config` checks: the whole config, or only what an experiment batch reads (environments,
experiments and their tuning budget), which spares a batch process the checks of the theory sections and tables."""


def validate_config(config: dict[str, Any], scope: str = "all") -> None:
    """Checks the schema cannot express (steps 3 and 4 of the module docstring) on a config that passed the schema.

    scope: one of :data:`CONFIG_SCOPES`. The workflow validates the whole config once, when it reads the job table;
    an experiment batch (``hare run-batch``) checks the sections it reads and that its jobs are the planned ones.
    Raises :class:`ConfigError` naming the key path at fault.
    """
    if scope not in CONFIG_SCOPES:
        raise ValueError(f"scope must be one of {CONFIG_SCOPES}, not {scope!r}")
    check_experiments(config)
    if scope == "all":
        check_sections(config)
