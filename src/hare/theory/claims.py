"""The claims register: every quantitative claim of the paper, decided by result files.

``paper/claims.yaml`` lists claims::

    claims:
      - key: linucb_beats_random
        statement: LinUCB has lower mean total regret than Random on HARE-Sim.
        inputs: {linucb: results/runs/.../linucb.npz, random: results/runs/.../random.npz}
        measured: mean(linucb.total_regret)
        compare: "<"
        threshold: mean(random.total_regret)

A *family* stands for one claim per combination of its ``for_each`` values::

      - for_each: {baseline: [linucb, random], environment: [mushroom]}
        key: hare_beats_{baseline}_{environment}
        statement: HARE has lower mean total regret than {baseline} on {environment}.
        inputs:
          hare: results/runs/classification/{environment}/hare.npz
          other: results/runs/classification/{environment}/{baseline}.npz
        measured: mean(hare.total_regret)
        compare: "<"
        threshold: mean(other.total_regret)

:func:`expand_claims` replaces every ``{name}`` in ``key``, ``statement``, the ``inputs``
paths, ``measured`` and ``threshold`` by each value of the Cartesian product of the
``for_each`` lists (first list outermost), giving ``prod_k len(list_k)`` claims in the
family's place. A placeholder that names no ``for_each`` variable, or a ``for_each``
variable that the key does not use (its claims would share a key), is a
:class:`ClaimError` naming the family's key.

Expressions are evaluated by a small whitelist evaluator over the loaded inputs
(``.json`` as nested mappings, ``.npz`` as arrays): arithmetic, attribute or item
access, and the functions in :data:`FUNCTIONS`. Nothing is ``eval``'d. A claim that
fails is reported as FAIL with its numbers; it never stops the build.
"""

from __future__ import annotations

import ast
import itertools
import json
import math
import operator
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from hare.io import read_npz, write_text
from hare.report.latex import booktabs_longtable, escape, format_number, macro_name, macros

FUNCTIONS = {
    "mean": lambda x: float(np.mean(x)),
    "std": lambda x: float(np.std(x, ddof=1)),
    "min": lambda *x: float(np.min(x[0] if len(x) == 1 else x)),
    "max": lambda *x: float(np.max(x[0] if len(x) == 1 else x)),
    "abs": lambda x: np.abs(x),
    "sqrt": np.sqrt,
    "log": np.log,
    "len": len,
    "all": lambda x: bool(np.all(x)),
    "any": lambda x: bool(np.any(x)),
}
COMPARISONS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq}
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv, ast.Pow: operator.pow}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}


class ClaimError(ValueError):
    """A claim cannot be evaluated (missing file, bad expression); the message names the claim."""


@dataclass(frozen=True)
class ClaimResult:
    key: str
    statement: str
    measured: float
    compare: str
    threshold: float
    passed: bool
    sources: tuple[str, ...]
    not_run: bool = False

    @property
    def status(self) -> str:
        """``PASS``, ``FAIL``, or ``NOT RUN`` (the configuration produces no input the claim needs)."""
        return "NOT RUN" if self.not_run else "PASS" if self.passed else "FAIL"


def load_input(path: Path) -> Any:
    if not path.exists():
        raise FileNotFoundError(f"claim input {path} does not exist")
    if path.suffix == ".json":
        return json.loads(path.read_text())
    if path.suffix == ".npz":
        return read_npz(path)
    raise ValueError(f"claim input {path}: unsupported file type {path.suffix!r} (use .json or .npz)")


def evaluate_expression(expression: str | float | int, names: dict[str, Any]) -> Any:
    """Evaluate a whitelisted expression over ``names``."""
    if isinstance(expression, (int, float)):
        return expression
    tree = ast.parse(str(expression), mode="eval")

    def visit(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return visit(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str)):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in names:
                raise NameError(f"unknown name {node.id!r} in {expression!r}; inputs: {sorted(names)}")
            return names[node.id]
        if isinstance(node, ast.Attribute):
            return visit(node.value)[node.attr]
        if isinstance(node, ast.Subscript):
            return visit(node.value)[visit(node.slice)]
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return _BINARY[type(node.op)](visit(node.left), visit(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](visit(node.operand))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS and not node.keywords:
            return FUNCTIONS[node.func.id](*(visit(a) for a in node.args))
        raise ValueError(f"unsupported expression element {ast.dump(node)[:60]} in {expression!r}")

    return visit(tree)


def _number(value: Any) -> float:
    """A measured quantity as a float; ``None`` (a quantity the check could not define, e.g. the growth
    exponent of a curve that is not positive) becomes NaN, and a claim on it fails."""
    return math.nan if value is None else float(value)


def evaluate_claim(claim: dict[str, Any], root: Path, not_run_inputs: frozenset[str] = frozenset()) -> ClaimResult:
    """One claim's result. A claim reading any of ``not_run_inputs`` (inputs the running configuration
    does not produce) is ``NOT RUN``: listed, never dropped; any other missing input is an error."""
    key = claim.get("key", "?")
    paths = tuple(str(p) for p in (claim.get("inputs") or {}).values())
    if not_run_inputs & set(paths):
        return ClaimResult(key, claim["statement"], math.nan, claim.get("compare", "?"), math.nan, False, paths, not_run=True)
    try:
        inputs = {name: root / path for name, path in (claim.get("inputs") or {}).items()}
        names = {name: load_input(path) for name, path in inputs.items()}
        compare = claim["compare"]
        if compare not in COMPARISONS:
            raise ValueError(f"compare must be one of {sorted(COMPARISONS)}, got {compare!r}")
        measured = _number(evaluate_expression(claim["measured"], names))
        threshold = _number(evaluate_expression(claim["threshold"], names))
    except (FileNotFoundError, KeyError, NameError, ValueError, TypeError, IndexError) as error:
        raise ClaimError(f"claim {key!r}: {error}") from error
    passed = bool(COMPARISONS[compare](measured, threshold)) and math.isfinite(measured)
    return ClaimResult(key, claim["statement"], measured, compare, threshold, passed, tuple(str(p) for p in (claim.get("inputs") or {}).values()))


_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_TEMPLATED = ("key", "statement", "measured", "threshold")


def _placeholders(claim: dict[str, Any]) -> set[str]:
    texts = [claim.get(field) for field in _TEMPLATED] + list((claim.get("inputs") or {}).values())
    return {name for text in texts if isinstance(text, str) for name in _PLACEHOLDER.findall(text)}


def _fill(value: Any, binding: dict[str, str]) -> Any:
    return _PLACEHOLDER.sub(lambda m: binding[m.group(1)], value) if isinstance(value, str) else value


def expand_family(claim: dict[str, Any]) -> list[dict[str, Any]]:
    """The claims of one family (module docstring); a claim without ``for_each`` is returned as is."""
    if "for_each" not in claim:
        return [claim]
    key = claim.get("key", "?")
    variables = claim["for_each"]
    if not isinstance(variables, dict) or not variables or any(not isinstance(v, list) or not v for v in variables.values()):
        raise ClaimError(f"claim {key!r}: for_each must map each placeholder to a non-empty list, got {variables!r}")
    unknown = sorted(_placeholders(claim) - set(variables))
    if unknown:
        raise ClaimError(f"claim {key!r}: unknown placeholder(s) {unknown}; for_each defines {sorted(variables)}")
    unused = sorted(set(variables) - set(_PLACEHOLDER.findall(str(key))))
    if unused:
        raise ClaimError(f"claim {key!r}: for_each variable(s) {unused} do not appear in the key")
    names = list(variables)
    expanded = []
    for values in itertools.product(*(variables[name] for name in names)):
        binding = {name: str(value) for name, value in zip(names, values, strict=True)}
        member = {field: _fill(value, binding) for field, value in claim.items() if field != "for_each"}
        member["inputs"] = {name: _fill(path, binding) for name, path in (claim.get("inputs") or {}).items()}
        expanded.append(member)
    return expanded


def expand_claims(claims: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every family replaced by its members, in register order."""
    return [member for claim in claims for member in expand_family(claim)]


def load_register(path: str | Path) -> list[dict[str, Any]]:
    """The register's claims, families expanded; duplicate keys are a :class:`ClaimError`."""
    register = yaml.safe_load(Path(path).read_text())
    claims = register.get("claims") if isinstance(register, dict) else None
    if not claims:
        raise ClaimError(f"{path}: no 'claims' list")
    claims = expand_claims(claims)
    keys = [c.get("key") for c in claims]
    duplicates = sorted({k for k in keys if keys.count(k) > 1})
    if duplicates:
        raise ClaimError(f"{path}: duplicate claim keys {duplicates}")
    return claims


def evaluate_register(path: str | Path, root: str | Path, not_run_inputs: frozenset[str] = frozenset()) -> list[ClaimResult]:
    return [evaluate_claim(claim, Path(root), frozenset(not_run_inputs)) for claim in load_register(path)]


def claims_markdown(results: list[ClaimResult]) -> str:
    passed = sum(r.passed for r in results)
    not_run = sum(r.not_run for r in results)
    lines = [f"# Claims: {passed}/{len(results)} PASS", ""]
    if not_run:
        lines += [f"{not_run} claim(s) NOT RUN: this configuration produces none of their inputs.", ""]
    lines += ["| claim | statement | measured | threshold | result | source |", "|---|---|---|---|---|---|"]
    for r in results:
        measured, threshold = ("--", r.compare) if r.not_run else (f"{r.measured:.6g}", f"{r.compare} {r.threshold:.6g}")
        result = {"PASS": "PASS", "FAIL": "**FAIL**", "NOT RUN": "NOT RUN"}[r.status]
        lines.append(f"| `{r.key}` | {r.statement} | {measured} | {threshold} | {result} | {', '.join(f'`{s}`' for s in r.sources)} |")
    return "\n".join(lines) + "\n"


def _breakable_key(key: str) -> str:
    """``\\texttt`` of a claim key that may break after each underscore (long keys in a narrow column)."""
    return r"\texttt{" + escape(key).replace(r"\_", r"\_\allowbreak{}") + "}"


def claims_tex(results: list[ClaimResult]) -> str:
    """Macros ``\\claimStatus<Key>``, ``\\claimMeasured<Key>`` and the claims table ``\\claimsTable``."""
    values = {}
    rows = []
    for r in results:
        status = {"PASS": "PASS", "FAIL": r"\textbf{FAIL}", "NOT RUN": "NOT RUN"}[r.status]
        values[macro_name("claim", "status", r.key)] = status
        values[macro_name("claim", "measured", r.key)] = format_number(r.measured, 2)
        values[macro_name("claim", "threshold", r.key)] = format_number(r.threshold, 2)
        rows.append([_breakable_key(r.key), escape(r.statement), format_number(r.measured, 2), f"${escape(r.compare).replace('<', '<').replace('>', '>')}$ {format_number(r.threshold, 2)}", status])
    n_pass = sum(r.passed for r in results)
    values["claimsPassed"] = str(n_pass)
    values["claimsTotal"] = str(len(results))
    table = booktabs_longtable(
        ["Claim", "Statement", "Measured", "Threshold", "Result"], rows, "p{0.25\\linewidth}p{0.36\\linewidth}rrl",
        f"Claims register: {n_pass} of {len(results)} claims pass. Each claim is decided by the result files named in \\texttt{{paper/claims.yaml}}.", "tab:claims",
    )
    return macros(values) + "\\newcommand{\\claimsTable}{%\n" + table + "}\n"


def write_claims(register: str | Path, root: str | Path, markdown_path: str | Path, tex_path: str | Path,
                 not_run_inputs: frozenset[str] = frozenset()) -> list[ClaimResult]:
    results = evaluate_register(register, root, not_run_inputs)
    write_text(markdown_path, claims_markdown(results))
    write_text(tex_path, claims_tex(results))
    return results
