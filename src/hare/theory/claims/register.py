"""Loading the claims register: ``paper/claims.yaml`` read, every family expanded into its members over the
running and the reference configurations (the grammar in :mod:`hare.theory.claims`), the run files the claims read
and those the running configuration does not produce (their claims are NOT RUN), the headline patterns and the ids
(C1, C2, ...) the claims carry."""

from __future__ import annotations

import copy
import fnmatch
import functools
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from hare.experiments.config import resolve_config_file
from hare.io import read_yaml
from hare.theory.claims.result import ClaimError

_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_TEMPLATED = (
    "key",
    "label",
    "section",
    "statement",
    "measured",
    "threshold",
    "trivial_bound",
    "per_run",
    "bootstrap",
    "exact",
    "margin",
    "comparator_regret",
)


def _placeholders(claim: dict[str, Any]) -> set[str]:
    nested = [claim.get("threshold")] if isinstance(claim.get("threshold"), list) else []
    nested += [pair for pair in claim.get("requires_equal") or []]
    texts = (
        [claim.get(field) for field in _TEMPLATED]
        + list((claim.get("inputs") or {}).values())
        + list(claim.get("interval") or [])
        + list(claim.get("power") or [])
        + [text for group in nested for text in group]
    )
    return {name for text in texts if isinstance(text, str) for name in _PLACEHOLDER.findall(text)}


def _fill(value: Any, binding: dict[str, str]) -> Any:
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: binding[m.group(1)], value)
    if isinstance(value, list):
        return [_fill(v, binding) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, binding) for k, v in value.items()}
    return value


def config_values(reference: dict[str, Any], configs: Sequence[dict[str, Any]], where: str) -> list[str]:
    """The values a ``{config: path, exclude: [...]}`` reference names, united over ``configs`` in order of first
    appearance: a list's items or a mapping's keys at the dotted ``path``."""
    paths = reference.get("config")
    paths = [paths] if isinstance(paths, str) else paths
    if (
        not isinstance(paths, list)
        or not all(isinstance(p, str) for p in paths)
        or set(reference) - {"config", "exclude"}
    ):
        raise ClaimError(
            f"{where}: a config reference is {{config: <dotted path or list of them>, exclude: [...]}}, got "
            f"{reference!r}"
        )
    values: list[str] = []
    for config in configs:
        for path in paths:
            node: Any = config
            for part in path.split("."):
                node = node.get(part) if isinstance(node, dict) else None
            for value in list(node) if isinstance(node, (list, dict)) else []:
                if str(value) not in values:
                    values.append(str(value))
    exclude = {str(v) for v in reference.get("exclude") or []}
    values = [v for v in values if v not in exclude]
    if not values:
        raise ClaimError(f"{where}: {paths} name nothing in any configuration")
    return values


def expand_family(claim: dict[str, Any], configs: Sequence[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    """The claims of one family (module docstring); a claim without ``for_each`` is returned as is."""
    if "for_each" not in claim:
        return [claim]
    key = claim.get("key", "?")
    variables = claim["for_each"]
    if not isinstance(variables, dict) or not variables:
        raise ClaimError(
            f"claim {key!r}: for_each must map each placeholder to a list or a config reference, got {variables!r}"
        )
    for name, values in variables.items():
        if not (isinstance(values, dict) or (isinstance(values, list) and values)):
            raise ClaimError(
                f"claim {key!r}: for_each.{name} must be a non-empty list or a config reference, got {values!r}"
            )
    unknown = sorted(_placeholders(claim) - set(variables))
    if unknown:
        raise ClaimError(f"claim {key!r}: unknown placeholder(s) {unknown}; for_each defines {sorted(variables)}")
    unused = sorted(set(variables) - set(_PLACEHOLDER.findall(str(key))))
    if unused:
        raise ClaimError(f"claim {key!r}: for_each variable(s) {unused} do not appear in the key")
    expanded = []
    for binding in _bindings(list(variables.items()), {}, configs, key):
        expanded.append(
            {
                **{field: _fill(value, binding) for field, value in claim.items() if field != "for_each"},
                "_binding": dict(binding),
            }
        )
    return expanded


def _bindings(
    variables: list[tuple[str, Any]], bound: dict[str, str], configs: Sequence[dict[str, Any]], key: str
) -> Iterable[dict[str, str]]:
    """Every binding of ``variables`` (first outermost). A config reference may use variables bound before it, e.g.
    ``{config: "experiments.{experiment}.environments"}`` after ``experiment``."""
    if not variables:
        yield dict(bound)
        return
    (name, values), rest = variables[0], variables[1:]
    if isinstance(values, dict):
        texts = [v for v in values.values() for v in (v if isinstance(v, list) else [v]) if isinstance(v, str)]
        unbound = sorted({p for text in texts for p in _PLACEHOLDER.findall(text)} - set(bound))
        if unbound:
            raise ClaimError(
                f"claim {key!r}, for_each.{name}: the config reference uses {unbound}, not bound before it"
            )
        values = config_values(_fill(values, bound), configs, f"claim {key!r}, for_each.{name}")
    for value in values:
        yield from _bindings(rest, {**bound, name: str(value)}, configs, key)


def expand_claims(claims: list[dict[str, Any]], configs: Sequence[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    """Every family replaced by its members, in register order."""
    return [member for claim in claims for member in expand_family(claim, configs)]


def reference_configs(register_path: str | Path) -> list[dict[str, Any]]:
    """The configurations the register's ``reference_configs`` names (paths relative to the repository root,
    the register's parent's parent)."""
    path = Path(register_path)
    register = read_yaml(path) or {}
    root = path.resolve().parent.parent
    return [
        copy.deepcopy(_resolved(root / name, _stamp(root / name))) for name in register.get("reference_configs") or []
    ]  # overlays resolved onto their base


def _stamp(path: Path) -> tuple[tuple[str, int, int], ...]:
    """What identifies a version of a configuration for the cache: modification time and size of the file and of every
    YAML file beside it (the base an overlay resolves onto is one of them)."""
    stamps = []
    for file in sorted({path, *path.parent.glob("*.yaml")}):
        try:
            stat = file.stat()
        except OSError:
            continue
        stamps.append((str(file), stat.st_mtime_ns, stat.st_size))
    return tuple(stamps)


@functools.lru_cache(maxsize=16)
def _resolved(path: Path, stamp: tuple[tuple[str, int, int], ...]) -> dict[str, Any]:
    """A reference configuration resolved, once per version of it and of the files beside it (``stamp``):
    ``hare validate-config`` and ``hare claims`` expand the register over the same ones."""
    return resolve_config_file(path)


def load_register(path: str | Path, configs: Iterable[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    """The register's claims, families expanded over ``configs`` (the running configuration) and the register's
    reference configurations; duplicate keys are a :class:`ClaimError`."""
    register = read_yaml(path)
    claims = register.get("claims") if isinstance(register, dict) else None
    if not claims:
        raise ClaimError(f"{path}: no 'claims' list")
    claims = expand_claims(claims, [*configs, *reference_configs(path)])
    keys = [c.get("key") for c in claims]
    duplicates = sorted({k for k in keys if keys.count(k) > 1})
    if duplicates:
        raise ClaimError(f"{path}: duplicate claim keys {duplicates}")
    return claims


def run_inputs_of(claims: Iterable[dict[str, Any]]) -> set[str]:
    """Every run file (``results/runs/...``, a ``.npz`` or its ``.json`` sidecar) the claims read."""
    return {p for claim in claims for p in (claim.get("inputs") or {}).values() if str(p).startswith("results/runs/")}


def run_result(path: str) -> str:
    """The ``.npz`` a run file belongs to: itself, or the result its ``.json`` sidecar describes."""
    return str(Path(path).with_suffix(".npz"))


def load_configs(paths: Sequence[str | Path]) -> list[dict[str, Any]]:
    """The running configuration as the workflow sees it: merged, validated, optional datasets this build cannot
    obtain left out (one mapping in a list)."""
    from hare.data.availability import drop_unavailable_optional
    from hare.experiments.config import load_config

    available, _ = drop_unavailable_optional(load_config([Path(p) for p in paths]))
    return [available]


def produced_runs(config: dict[str, Any]) -> set[str]:
    """The report run files ``results/runs/...npz`` the configuration produces."""
    from hare.experiments.grid import expand_jobs

    return {f"results/{job.stem}.npz" for job in expand_jobs(config) if job.role == "report"}


def not_produced(register: str | Path, configs: Sequence[dict[str, Any]]) -> frozenset[str]:
    """Run files the register reads that none of ``configs`` produces: the claims reading them are NOT RUN."""
    produced = set().union(*(produced_runs(c) for c in configs)) if configs else set()
    return frozenset(p for p in run_inputs_of(load_register(register, configs)) if run_result(p) not in produced)


def headline_patterns(path: str | Path) -> list[str]:
    """The register's ``headline:`` list: shell patterns (``fnmatch``) of the keys the abstract and introduction
    rest on."""
    register = read_yaml(path) or {}
    patterns = register.get("headline") or []
    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
        raise ClaimError(f"{path}: headline must be a list of key patterns, got {patterns!r}")
    return patterns


def claim_ids(keys: Sequence[str], patterns: Sequence[str]) -> dict[str, tuple[str, bool]]:
    """``{key: (id, headline)}`` of the register's keys in register order: the headline claims (a key matching one of
    ``patterns``) numbered first, C1, C2, ..., then every other claim. One claim evaluated alone (``make claim``) gets
    the id and headline mark it has in the whole register."""
    headline = {key: any(fnmatch.fnmatchcase(key, p) for p in patterns) for key in keys}
    order = [key for key in keys if headline[key]] + [key for key in keys if not headline[key]]
    return {key: (f"C{i}", headline[key]) for i, key in enumerate(order, start=1)}
