"""hare.notation: the glossary's config fields, code identifiers and symbols are real.

Every config key path of :data:`hare.notation.GLOSSARY` exists in ``config/schema.yaml`` (walked through
``properties``, ``*`` through a mapping's ``additionalProperties``, ``$ref`` followed) and is set by the resolved
default config; every code identifier ``module:qualified.name`` imports and resolves (an attribute, a dataclass
field or an annotated class attribute; ``name[key]`` an entry of a mapping); every symbol is unique. The checkers
are shown to fail on a planted wrong field and a planted wrong identifier.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from pathlib import Path
from typing import Any

import pytest

from hare.experiments.config import resolve_config_file
from hare.io import read_yaml
from hare.notation import GLOSSARY, GlossaryEntry

REPOSITORY = Path(__file__).resolve().parents[1]
SCHEMA = read_yaml(REPOSITORY / "config" / "schema.yaml")
DEFAULT = resolve_config_file(REPOSITORY / "config" / "default.yaml")

ANY_NAME = "*"
PARAMS = "experiments.*.policies.*.params"
GRID = "experiments.*.policies.*.grid"
ITEM = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:\[(?P<key>[^\]]+)\])?$")


def _follow(node: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """``node`` with its ``$ref`` (``#/$defs/...``) resolved, repeatedly."""
    while isinstance(node, dict) and "$ref" in node:
        parts = node["$ref"].removeprefix("#/").split("/")
        node = schema
        for part in parts:
            node = node[part]
    return node


def schema_error(path: str, schema: dict[str, Any] = SCHEMA) -> str | None:
    """Why the key path ``path`` is not in ``schema``, or ``None`` where it is. A named key must be one of the
    node's ``properties``; ``*`` needs the node's ``additionalProperties`` to be a schema (a mapping of free names)."""
    node = _follow(schema, schema)
    for depth, key in enumerate(path.split(".")):
        where = ".".join(path.split(".")[:depth]) or "the top level"
        if key == ANY_NAME:
            child = node.get("additionalProperties")
            if not isinstance(child, dict):
                return f"{path}: {where} is not a mapping of free names"
        else:
            child = node.get("properties", {}).get(key)
            if child is None:
                return f"{path}: no key {key!r} under {where} in the schema"
        node = _follow(child, schema)
    return None


def config_values(path: str, config: dict[str, Any] = DEFAULT) -> list[Any]:
    """Every value the config sets at the key path ``path`` (``*``: every name of that mapping). A policy's
    ``params.<name>`` is also set by a ``grid.<name>`` (each grid point is that hyperparameter's value)."""
    found = []
    for variant in dict.fromkeys((path, path.replace(f"{PARAMS}.", f"{GRID}.", 1))):
        nodes = [config]
        for key in variant.split("."):
            nodes = [
                value
                for node in nodes
                if isinstance(node, dict)
                for value in (node.values() if key == ANY_NAME else [node[key]] if key in node else [])
            ]
        found += nodes
    return found


def code_error(identifier: str) -> str | None:
    """Why ``module:qualified.name`` does not resolve, or ``None`` where it does: the module imports, and each
    part of the name is an attribute, a dataclass field or an annotated attribute (of the class or a base) of the
    object before it; ``name[key]`` is the entry ``key`` of the mapping ``name``."""
    module_name, colon, qualified = identifier.partition(":")
    if not colon or not module_name.startswith("hare") or not qualified:
        return f"{identifier}: not of the form hare.module:qualified.name"
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as error:
        return f"{identifier}: {error}"
    for part in qualified.split("."):
        match = ITEM.match(part)
        if match is None:
            return f"{identifier}: {part!r} is not a name"
        name, key = match.group("name"), match.group("key")
        if hasattr(target, name):
            target = getattr(target, name)
        elif isinstance(target, type) and (
            name in {f.name for f in dataclasses.fields(target)}
            if dataclasses.is_dataclass(target)
            else any(name in getattr(base, "__annotations__", {}) for base in target.__mro__)
        ):
            target = None  # a field has no value on the class; nothing may follow it
        else:
            return f"{identifier}: {name!r} not found"
        if key is not None:
            if not isinstance(target, dict) or key not in target:
                return f"{identifier}: no entry {key!r} in {name!r}"
            target = target[key]
    return None


def config_errors(entry: GlossaryEntry) -> list[str]:
    """Every config key path of ``entry`` that is not in the schema or not set by the default config."""
    errors = [error for path in entry.config if (error := schema_error(path))]
    return errors + [f"{path}: not set by config/default.yaml" for path in entry.config if not config_values(path)]


def entry_errors(entry: GlossaryEntry) -> list[str]:
    """Every config path or code identifier of ``entry`` that is not real."""
    return config_errors(entry) + [error for identifier in entry.code if (error := code_error(identifier))]


def test_every_config_field_is_in_the_schema_and_the_default():
    assert [error for entry in GLOSSARY for error in config_errors(entry)] == []


@pytest.mark.parametrize("entry", GLOSSARY, ids=[entry.symbol for entry in GLOSSARY])
def test_every_code_identifier_resolves(entry):
    assert entry.code, f"{entry.symbol}: no code identifier"
    assert [error for identifier in entry.code if (error := code_error(identifier))] == []


def test_every_symbol_is_unique_and_complete():
    symbols = [entry.symbol for entry in GLOSSARY]
    assert sorted(s for s in set(symbols) if symbols.count(s) > 1) == []
    assert all(entry.meaning and entry.symbol for entry in GLOSSARY)
    assert all(isinstance(field, tuple) for entry in GLOSSARY for field in (entry.config, entry.code, entry.results))
    assert all(": " in result for entry in GLOSSARY for result in entry.results)


def test_the_glossary_covers_the_papers_core_symbols():
    """The symbols issue 29 names: sizes, HARE's hyperparameters, the decomposition, the OFUL radius, LNUCB-TA."""
    symbols = {entry.symbol for entry in GLOSSARY}
    for symbol in ("d", "K", "T", "B", "M", "d_k", "C", "H", "\\lambda", "\\alpha", "\\alpha_h", "\\Sigma_{h,j}"):
        assert symbol in symbols
    for symbol in ("A_h", "\\hat u_i, S_i", "U_{h,j}", "R(T)", "R_{\\text{approx}}", "R_{\\text{user}}"):
        assert symbol in symbols
    for symbol in ("R_{\\text{explore}}", "\\epsilon_{\\text{attn}}", "L_f", "\\delta", "\\beta_t(\\delta)"):
        assert symbol in symbols
    for symbol in ("\\alpha_0", "\\kappa", "\\theta_{\\min}, \\theta_{\\max}", "k_a", "f_a", "g"):
        assert symbol in symbols


def test_a_planted_wrong_config_field_fails():
    assert schema_error("experiments.*.horizon") is None
    assert schema_error("experiments.*.policies.*.params.alpha") is None
    assert "no key 'horizn'" in schema_error("experiments.*.horizn")
    assert "no key 'key_dim'" in schema_error("experiments.*.policies.*.params.key_dim")
    assert "not a mapping of free names" in schema_error("theory.*.horizon")
    assert config_values("theory.oful.delta") == [0.05]
    assert config_values("theory.decomposition.delta") == []
    assert config_values("experiments.*.policies.*.params.nu")  # set by grids only
    assert config_values("experiments.*.policies.*.params.nuu") == []
    planted = GlossaryEntry("x", "planted", ("theory.oful.delta", "theory.oful.deltaa"), ("hare.io:write_text",))
    assert entry_errors(planted) == [
        "theory.oful.deltaa: no key 'deltaa' under theory.oful in the schema",
        "theory.oful.deltaa: not set by config/default.yaml",
    ]


def test_a_planted_wrong_code_identifier_fails():
    assert code_error("hare.io:write_text") is None
    assert code_error("hare.policies.hare:HAREConfig.key_dim") is None
    assert code_error("hare.envs.base:BanditEnvironment.n_arms") is None  # annotated, no class value
    assert code_error("hare.theory.bounds:SYMBOLS[K]") is None
    assert "'key_dims' not found" in code_error("hare.policies.hare:HAREConfig.key_dims")
    assert "No module named" in code_error("hare.policies.haree:HAREConfig")
    assert "no entry 'Q'" in code_error("hare.theory.bounds:SYMBOLS[Q]")
    assert "not of the form" in code_error("hare.io.write_text")
    assert "not found" in code_error("hare.envs.base:BanditEnvironment.n_arms.real")
    planted = GlossaryEntry("x", "planted", ("theory.oful.delta",), ("hare.io:write_text", "hare.io:write_txt"))
    assert entry_errors(planted) == ["hare.io:write_txt: 'write_txt' not found"]
