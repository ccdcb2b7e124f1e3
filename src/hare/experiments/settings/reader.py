"""Config files as the boundary reads them: YAML with the numbers a user writes, bounded nesting, and overlays.

:func:`read_config_file` reads one file with :class:`ConfigLoader`, the project's loader
(:class:`hare.io.UniqueKeyLoader`: safe YAML whose mappings repeat no key) with these changes:

* a float is any number with a point or an exponent, the exponent signed or not: ``1.0e308``, ``1e-3`` and ``2E5``
  are floats (PyYAML's YAML 1.1 resolver reads ``1.0e308`` and ``1e3`` as strings, which a schema then refuses with a
  message about types); integers, ``.inf`` and ``.nan`` read as before;
* a number written with more than :data:`MAX_DIGITS` digits is refused in one line with its length (not its digits;
  a 400-digit float would otherwise read as an infinity);
* nesting deeper than :data:`MAX_DEPTH` levels is refused in one line naming the file, line and column (a 5,000-deep
  list would otherwise end in Python's ``maximum recursion depth exceeded``);
* a file larger than :data:`MAX_BYTES`, or one that expands to more than :data:`MAX_NODES` values once its aliases
  are followed (a "billion laughs" file of nested aliases), is refused in one line, in time proportional to its
  distinct nodes, before anything walks the values.

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
import re
from pathlib import Path
from typing import Any

import yaml

from hare.experiments.settings.errors import ConfigError
from hare.io import UniqueKeyLoader, UnreadableYAMLError, read_yaml, refuse_nonfinite

MAX_BYTES = 1 << 20
"""Largest config file read (1 MiB; the configs of ``config/`` are below 40 KiB)."""

MAX_NODES = 100_000
"""Most values (mappings, lists and scalars) a config file may expand to with its aliases followed (the configs of
``config/`` expand to fewer than 3,000): a YAML alias bomb is refused before anything walks it."""

MAX_DEPTH = 32
"""Most levels of nested mappings and lists a config file may have (the configs of ``config/`` have at most 8)."""

FLOAT_PATTERN = re.compile(
    r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?(?:[0-9][0-9_]*)[eE][-+]?[0-9]+
    |[-+]?\.[0-9][0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.VERBOSE,
)
"""YAML 1.1's float with the exponent's sign optional, and an exponent without a point (``1e3``)."""

FLOAT_TAG = "tag:yaml.org,2002:float"


class ConfigLoader(UniqueKeyLoader):
    """:class:`hare.io.UniqueKeyLoader` that reads every exponent form as a float (:data:`FLOAT_PATTERN`) and refuses
    nesting deeper than :data:`MAX_DEPTH` (module docstring)."""

    yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != FLOAT_TAG]
        for first, resolvers in UniqueKeyLoader.yaml_implicit_resolvers.items()
    }

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        depth = getattr(self, "_depth", 0)
        if depth >= MAX_DEPTH and not self.check_event(yaml.ScalarEvent, yaml.AliasEvent):
            raise yaml.composer.ComposerError(
                None, None, f"nested deeper than {MAX_DEPTH} levels", self.peek_event().start_mark
            )
        self._depth = depth + 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth = depth

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        _refuse_long_number(node)
        return super().construct_yaml_int(node)

    def construct_yaml_float(self, node: yaml.ScalarNode) -> float:
        _refuse_long_number(node)
        return super().construct_yaml_float(node)

    def get_single_node(self) -> yaml.Node | None:
        node = super().get_single_node()
        if node is not None and expanded_size(node, MAX_NODES) > MAX_NODES:
            raise yaml.composer.ComposerError(
                None,
                None,
                f"expands to more than {MAX_NODES:,} values once its aliases are followed (an alias bomb?)",
                node.start_mark,
            )
        return node


MAX_DIGITS = 30
"""Most digits a number of a config may be written with (a float keeps 17 significant ones, a 64-bit integer has at
most 19): a longer one is a typo, refused in one line with its length rather than its digits."""


def _refuse_long_number(node: yaml.ScalarNode) -> None:
    digits = sum(character.isdigit() for character in node.value)
    if digits > MAX_DIGITS:
        raise yaml.constructor.ConstructorError(
            None,
            None,
            f"a number written with {digits} digits (at most {MAX_DIGITS}; no setting takes a number this long)",
            node.start_mark,
        )


def expanded_size(node: yaml.Node, limit: int) -> int:
    """How many nodes ``node`` holds with every alias followed (each place an anchor is cited counts its whole
    subtree), in time proportional to the distinct nodes and without recursion (a chain of aliases may be long):
    sizes are kept per node, and capped at ``limit + 1``."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(node, False)]
    while stack:
        current, expanded = stack.pop()
        if id(current) in sizes:
            continue
        children = _children(current)
        if not expanded:
            stack.append((current, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
            continue
        sizes[id(current)] = min(limit + 1, 1 + sum(sizes[id(child)] for child in children))
    return sizes[id(node)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


ConfigLoader.add_implicit_resolver(FLOAT_TAG, FLOAT_PATTERN, list("-+0123456789."))
ConfigLoader.add_constructor("tag:yaml.org,2002:int", ConfigLoader.construct_yaml_int)
ConfigLoader.add_constructor(FLOAT_TAG, ConfigLoader.construct_yaml_float)


def read_config_yaml(path: Path) -> Any:
    """The YAML document of ``path`` read with :class:`ConfigLoader`; :class:`ConfigError` in one line naming the file
    for a byte that is not UTF-8 (its offset and line), a syntax error, a duplicate key or too deep a nesting (line
    and column), the messages of :func:`hare.io.read_yaml`. A missing file stays a ``FileNotFoundError``."""
    if path.is_file() and path.stat().st_size > MAX_BYTES:
        raise ConfigError(f"{path}: {path.stat().st_size:,} bytes, more than a config file may hold ({MAX_BYTES:,})")
    try:
        return read_yaml(path, ConfigLoader)
    except UnreadableYAMLError as error:
        raise ConfigError(str(error)) from error.__cause__


def refuse_nonfinite_numbers(config: Any, where: str = "invalid config: ") -> None:
    """Raise :class:`ConfigError` ``<where><key path>: .inf is not a finite number`` for the first NaN or infinity
    anywhere in ``config``: one check for every float of every section, whatever its schema or dataclass says."""
    try:
        refuse_nonfinite(config, where)
    except ValueError as error:
        raise ConfigError(str(error)) from None


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


def read_one_file(path: Path) -> dict[str, Any]:
    """One config file as written (an overlay keeps its ``base``), refused in one line naming the file when it is
    missing, not UTF-8 YAML, repeats a key, nests too deep, is not a mapping, or holds a NaN or an infinity (named by
    its key path)."""
    if not path.exists():
        raise FileNotFoundError(f"config file {path} does not exist")
    if path.is_dir():
        raise ConfigError(f"{path}: is a folder, not a config file")
    loaded = read_config_yaml(path)
    if loaded is None:
        raise ConfigError(f"{path}: empty (a config is a YAML mapping of sections; config/default.yaml is a full one)")
    if not isinstance(loaded, dict):
        raise ConfigError(f"{path}: top level must be a mapping")
    refuse_nonfinite_numbers(loaded, f"{path}: ")
    return loaded


def resolve_config_file(path: Path, _chain: tuple[Path, ...] = ()) -> dict[str, Any]:
    """The config ``path`` states: the file itself, or, for an overlay (a top-level ``base``), the overlay merged onto
    its resolved base (:func:`merge_overlay`), without the ``base`` key. Not validated
    (:func:`hare.experiments.config.load_config` does).

    Raises :class:`ConfigError` in one line naming the overlay for a base that is not a file name, a missing base and
    a cycle of bases; in one line naming the file at fault, overlay or base, for its own problems
    (:func:`read_one_file`)."""
    path = Path(path)
    loaded = read_one_file(path)
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
    if base_path.is_dir():
        raise ConfigError(f"{path}: base: {base_path} is a folder, not a config file")
    if not base_path.is_file():
        raise ConfigError(f"{path}: base: {base_path} does not exist (a base is relative to the overlay's folder)")
    return merge_overlay(resolve_config_file(base_path, chain), loaded, f"{path}: ")
