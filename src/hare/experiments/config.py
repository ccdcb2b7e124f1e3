"""Loading and validating workflow configs (the same checks Snakemake runs before any job).

In order, each stopping at the first problem with one line naming the file or the key path at fault:

1. every file is read as UTF-8 YAML whose mappings repeat no key (:func:`hare.io.read_yaml`);
2. no number of any file is a NaN or an infinity (:func:`hare.io.first_nonfinite`, one walk over every section,
   before the schema and the dataclasses see a value);
3. a file with a top-level ``base:`` is an overlay, resolved onto its base (:func:`resolve_config_file`);
4. the schema (``config/schema.yaml``: types, ranges and the documented maxima of sizes such as ``n_runs`` and
   ``horizon``), then the policy registry and the cross-references (:func:`hare.experiments.grid.validate_config`);
5. for the whole config (``scope="all"``: ``hare validate-config``, ``hare jobs --table``), the pre-flight memory
   check: no experiment batch may need more memory than its device has (:func:`hare.experiments.memory.check_memory`).

Overlays. ``config/default.yaml`` is the one full config; ``smoke.yaml``, ``paper-core.yaml`` and ``paper.yaml`` state
only what differs from it: a top-level ``base: default.yaml`` (a path relative to the overlay's own folder; a base may
itself be an overlay) and the overrides, merged onto the resolved base by :func:`merge_overlay`:

* a mapping merges into the base's mapping key by key, recursively (a new key comes after the base's keys);
* a list or a scalar replaces the base's value whole (an experiment's ``environments``, a grid);
* ``null`` removes the key from the base (a policy, an environment, a table, a setting the overlay does not have);
  a ``null`` for a key the base lacks is refused. An overlay cannot set a value to ``null`` where its base has one.

A missing base, a cycle of bases or a ``base`` that is not a file name is refused in one line naming the overlay.
The resolved config has no ``base`` key. Snakemake reads the overlay file as written (its ``config`` keeps ``base``);
the workflow's rules read the resolved config from the job table (``hare jobs --table``, ``rules/common.smk``).
"""

from __future__ import annotations

import copy
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


def check_config(
    config: dict[str, Any], schema_path: Path = SCHEMA_PATH, scope: str = "all", memory: bool = False
) -> dict[str, Any]:
    """Validate ``config``: finite numbers, the schema, then the policy registry and cross-references (of ``scope``,
    :func:`hare.experiments.grid.validate_config`); with ``memory``, also the pre-flight memory estimate of every
    batch (:func:`hare.experiments.memory.check_memory`). Returns ``config``."""
    refuse_nonfinite_numbers(config)
    errors = schema_errors(config, schema_path)
    if errors:
        raise ConfigError("invalid config: " + "; ".join(errors[:5]))
    validate_config(config, scope)
    if scope != "experiments" and "pool_scaling" in config:
        from hare.experiments.studies.pool_scaling_settings import settings_from_config

        try:
            settings_from_config(config["pool_scaling"])
        except ValueError as error:
            raise ConfigError(str(error)) from error
    if memory:
        from hare.experiments.memory import check_memory

        check_memory(config)
    return config


BASE_KEY = "base"
"""The top-level key of an overlay: the path of the config it overrides, relative to the overlay's folder."""


def merge_overlay(base: dict[str, Any], overlay: dict[str, Any], where: str = "") -> dict[str, Any]:
    """``overlay`` merged onto ``base`` (neither is changed): mappings merge key by key, a list or a scalar replaces,
    ``null`` removes the base's key (module docstring). Raises :class:`ConfigError` ``<where><key path>: ...`` for a
    ``null`` whose key the base lacks."""
    merged = _unshared_copy(base)
    _merge_into(merged, overlay, where, ())
    return merged


def _unshared_copy(value: Any) -> Any:
    """A copy of nested mappings and lists in which no two places share an object. YAML anchors make the places that
    cite one anchor the same object (``classification_warm``'s policies are ``classification``'s), and
    :func:`copy.deepcopy` keeps that sharing, so an overlay that removes a key in one place would remove it in all."""
    if isinstance(value, dict):
        return {key: _unshared_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_unshared_copy(item) for item in value]
    return copy.deepcopy(value)


def _merge_into(merged: dict[str, Any], overlay: dict[str, Any], where: str, path: tuple[str, ...]) -> None:
    for key, value in overlay.items():
        if value is None:
            if key not in merged:
                raise ConfigError(
                    f"{where}{'.'.join(map(str, (*path, key)))}: null removes a key of the base config, which has none"
                )
            del merged[key]
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            _merge_into(merged[key], value, where, (*path, key))
        else:
            merged[key] = copy.deepcopy(value)


def _read_one_file(path: Path) -> dict[str, Any]:
    """One config file as written (an overlay keeps its ``base``), refused in one line naming the file when it is
    missing, not UTF-8 YAML, repeats a key, is not a mapping, or holds a NaN or an infinity (named by its key path)."""
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


def resolve_config_file(path: Path, _chain: tuple[Path, ...] = ()) -> dict[str, Any]:
    """The config ``path`` states: the file itself, or, for an overlay (a top-level ``base``), the overlay merged onto
    its resolved base (:func:`merge_overlay`), without the ``base`` key. Not validated (:func:`load_config` does).

    Raises :class:`ConfigError` in one line naming the overlay for a base that is not a file name, a missing base and
    a cycle of bases; in one line naming the file at fault, overlay or base, for its own problems
    (:func:`_read_one_file`)."""
    path = Path(path)
    loaded = _read_one_file(path)
    if BASE_KEY not in loaded:
        return loaded
    base_name = loaded.pop(BASE_KEY)
    if not isinstance(base_name, str) or not base_name.strip():
        raise ConfigError(
            f"{path}: base: must be the file name of the config this one overrides (relative to {path.parent}), "
            f"got {base_name!r}"
        )
    base_path = path.parent / base_name
    chain = (*_chain, path)
    if any(base_path.resolve() == seen.resolve() for seen in chain):
        raise ConfigError(
            f"{path}: base: {base_name} makes a cycle of bases: {' -> '.join(str(p) for p in (*chain, base_path))}"
        )
    if not base_path.is_file():
        raise ConfigError(f"{path}: base: {base_path} does not exist (a base is relative to the overlay's folder)")
    return merge_overlay(resolve_config_file(base_path, chain), loaded, f"{path}: ")


def load_config(
    paths: list[Path], schema_path: Path = SCHEMA_PATH, scope: str = "all", memory: bool | None = None
) -> dict[str, Any]:
    """Resolve each YAML file (an overlay onto its base, :func:`resolve_config_file`), merge them left to right
    (top-level keys of later files win) and validate the result (``scope``:
    :func:`hare.experiments.grid.validate_config`).
    ``memory`` (default: with ``scope="all"``, which is what ``hare validate-config`` and ``hare jobs`` read) adds the
    pre-flight memory check of :func:`check_config`."""
    config: dict[str, Any] = {}
    for path in paths:
        config.update(resolve_config_file(path))
    return check_config(config, schema_path, scope, memory=scope == "all" if memory is None else memory)
