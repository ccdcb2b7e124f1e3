"""Loading and validating workflow configs (the same checks Snakemake runs before any job).

In order, each stopping at the first problem with one line naming the file or the key path at fault:

1. every file is read as UTF-8 YAML whose mappings repeat no key (:func:`hare.io.read_yaml`);
2. no number of any file is a NaN or an infinity (:func:`hare.io.first_nonfinite`, one walk over every section,
   before the schema and the dataclasses see a value);
3. the schema (``config/schema.yaml``: types, ranges and the documented maxima of sizes such as ``n_runs`` and
   ``horizon``), then the policy registry and the cross-references (:func:`hare.experiments.grid.validate_config`);
4. for the whole config (``scope="all"``: ``hare validate-config``, ``hare jobs --table``), the pre-flight memory
   check: no experiment batch may need more memory than its device has (:func:`hare.experiments.plan.check_memory`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema

from hare.experiments.grid import ConfigError, validate_config
from hare.io import UnreadableYAMLError, read_yaml, refuse_nonfinite

REPOSITORY = Path(__file__).resolve().parents[3]
SCHEMA_PATH = REPOSITORY / "config" / "schema.yaml"


def schema_errors(config: dict[str, Any], schema_path: Path = SCHEMA_PATH) -> list[str]:
    """Every schema violation as ``<key path>: <message>``, most relevant first."""
    schema = read_yaml(schema_path)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=jsonschema.exceptions.relevance)
    return [f"{'.'.join(map(str, e.absolute_path)) or '<top level>'}: {e.message}" for e in errors]


def refuse_nonfinite_numbers(config: Any, where: str = "invalid config: ") -> None:
    """Raise :class:`ConfigError` ``<where><key path>: .inf is not a finite number`` for the first NaN or infinity
    anywhere in ``config``: one check for every float of every section, whatever its schema or dataclass says."""
    try:
        refuse_nonfinite(config, where)
    except ValueError as error:
        raise ConfigError(str(error)) from None


def check_config(config: dict[str, Any], schema_path: Path = SCHEMA_PATH, scope: str = "all", memory: bool = False) -> dict[str, Any]:
    """Validate ``config``: finite numbers, the schema, then the policy registry and cross-references (of ``scope``,
    :func:`hare.experiments.grid.validate_config`); with ``memory``, also the pre-flight memory estimate of every
    batch (:func:`hare.experiments.plan.check_memory`). Returns ``config``."""
    refuse_nonfinite_numbers(config)
    errors = schema_errors(config, schema_path)
    if errors:
        raise ConfigError("invalid config: " + "; ".join(errors[:5]))
    validate_config(config, scope)
    if memory:
        from hare.experiments.plan import check_memory

        check_memory(config)
    return config


def read_config_file(path: Path) -> dict[str, Any]:
    """One config file as a mapping, refused in one line naming the file when it is missing, not UTF-8 YAML, repeats a
    key, is not a mapping, or holds a NaN or an infinity (named by its key path)."""
    if not path.exists():
        raise FileNotFoundError(f"config file {path} does not exist")
    try:
        loaded = read_yaml(path)
    except UnreadableYAMLError as error:
        raise ConfigError(str(error)) from error
    loaded = {} if loaded is None else loaded
    if not isinstance(loaded, dict):
        raise ConfigError(f"{path}: top level must be a mapping")
    refuse_nonfinite_numbers(loaded, f"{path}: ")
    return loaded


def load_config(paths: list[Path], schema_path: Path = SCHEMA_PATH, scope: str = "all", memory: bool | None = None) -> dict[str, Any]:
    """Merge YAML files left to right (top-level keys of later files win) and validate the result (``scope``:
    :func:`hare.experiments.grid.validate_config`). ``memory`` (default: with ``scope="all"``, which is what
    ``hare validate-config`` and ``hare jobs`` read) adds the pre-flight memory check of :func:`check_config`."""
    config: dict[str, Any] = {}
    for path in paths:
        config.update(read_config_file(path))
    return check_config(config, schema_path, scope, memory=scope == "all" if memory is None else memory)
