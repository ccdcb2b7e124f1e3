"""The config schema (``config/schema.yaml``): types, the documented maxima of sizes, the bounded names and the
physical range of every float, each declared once in the schema.

:func:`schema_errors` checks a whole config. :func:`point_errors` checks one point of a hyperparameter grid against
the schema's ``policy_params`` (a grid lists values the schema cannot reach by key: ``grid: {alpha: [...]}``), so a
grid's values have the same ranges as the params they stand for.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import jsonschema

from hare.data.registry import DATASETS
from hare.io import read_yaml

REPOSITORY = Path(__file__).resolve().parents[4]
SCHEMA_PATH = REPOSITORY / "config" / "schema.yaml"
SECTION = "section:"
"""Prefix of a validator's ``definition`` that names a top-level section (:func:`section_errors`), not a ``$defs``."""


def _validator(schema_path: Path, definition: str | None = None) -> jsonschema.Draft202012Validator:
    """The validator of the whole schema, or of one of its ``$defs`` (with the others in reach of its ``$ref``), read
    again when the file changes."""
    stat = schema_path.stat()
    return _cached_validator(schema_path, stat.st_mtime_ns, stat.st_size, definition)


@functools.cache
def _cached_validator(
    schema_path: Path, mtime_ns: int, size: int, definition: str | None
) -> jsonschema.Draft202012Validator:
    schema = read_yaml(schema_path)
    schema["$defs"]["dataset"] = {**schema["$defs"].get("dataset", {}), "enum": sorted(DATASETS)}
    schema["$defs"]["classification_dataset"] = {
        **schema["$defs"].get("classification_dataset", {}),
        "enum": sorted(name for name, spec in DATASETS.items() if spec.kind == "classification" and not spec.optional),
    }
    if definition is not None and definition.startswith(SECTION):
        # A top-level section: its schema is reached through a key no keyword reads (a root "properties" would also
        # apply to the section's own keys).
        sections = {"$defs": schema["$defs"], "top_level_sections": schema["properties"]}
        schema = {**sections, "$ref": f"#/top_level_sections/{definition.removeprefix(SECTION)}"}
    elif definition is not None:
        schema = {"$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}
    return jsonschema.Draft202012Validator(schema)


def _messages(validator: jsonschema.Draft202012Validator, value: Any, where: str = "") -> list[str]:
    errors = sorted(validator.iter_errors(value), key=jsonschema.exceptions.relevance)
    return [
        f"{'.'.join(filter(None, (where, *map(str, e.absolute_path)))) or '<top level>'}: {e.message}" for e in errors
    ]


def schema_errors(config: dict[str, Any], schema_path: Path = SCHEMA_PATH) -> list[str]:
    """Every schema violation as ``<key path>: <message>``, most relevant first."""
    return _messages(_validator(Path(schema_path)), config)


def point_errors(params: dict[str, Any], where: str, schema_path: Path = SCHEMA_PATH) -> list[str]:
    """Every violation of the schema's ``policy_params`` by one grid point's ``params``, as ``<where>.<key>: ...``."""
    return _messages(_validator(Path(schema_path), "policy_params"), params, where)


def value_errors(definition: str, value: Any, where: str, schema_path: Path = SCHEMA_PATH) -> list[str]:
    """Every violation of the schema's ``$defs/<definition>`` by ``value``, as ``<where>...: ...``."""
    return _messages(_validator(Path(schema_path), definition), value, where)


def section_errors(key: str, value: Any, schema_path: Path = SCHEMA_PATH) -> list[str]:
    """Every violation of the schema's top-level section ``key`` by ``value``, as ``<key>...: ...`` (a config of some
    sections only: one job's, :mod:`hare.experiments.job_boundary`)."""
    return _messages(_validator(Path(schema_path), f"{SECTION}{key}"), value, key)
