"""Loading and validating workflow configs (the same checks Snakemake runs before any job)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import yaml

from hare.experiments.grid import ConfigError, validate_config

REPOSITORY = Path(__file__).resolve().parents[3]
SCHEMA_PATH = REPOSITORY / "config" / "schema.yaml"


def schema_errors(config: dict[str, Any], schema_path: Path = SCHEMA_PATH) -> list[str]:
    """Every schema violation as ``<key path>: <message>``, most relevant first."""
    schema = yaml.safe_load(schema_path.read_text())
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=jsonschema.exceptions.relevance)
    return [f"{'.'.join(map(str, e.absolute_path)) or '<top level>'}: {e.message}" for e in errors]


def check_config(config: dict[str, Any], schema_path: Path = SCHEMA_PATH, scope: str = "all") -> dict[str, Any]:
    """Validate ``config`` by schema, then by policy registry and cross-references (of ``scope``,
    :func:`hare.experiments.grid.validate_config`); return it."""
    errors = schema_errors(config, schema_path)
    if errors:
        raise ConfigError("invalid config: " + "; ".join(errors[:5]))
    validate_config(config, scope)
    return config


def load_config(paths: list[Path], schema_path: Path = SCHEMA_PATH, scope: str = "all") -> dict[str, Any]:
    """Merge YAML files left to right (top-level keys of later files win) and validate the result (``scope``:
    :func:`hare.experiments.grid.validate_config`)."""
    config: dict[str, Any] = {}
    for path in paths:
        if not path.exists():
            raise FileNotFoundError(f"config file {path} does not exist")
        try:
            loaded = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
            raise ConfigError(f"{path}: not valid YAML{where}: {getattr(error, 'problem', None) or error}") from error
        if not isinstance(loaded, dict):
            raise ConfigError(f"{path}: top level must be a mapping")
        config.update(loaded)
    return check_config(config, schema_path, scope)
