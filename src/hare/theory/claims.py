"""The claims register: every quantitative claim of the paper, decided by result files.

``paper/claims.yaml`` lists claims::

    claims:
      - key: linucb_beats_random
        statement: LinUCB has lower mean total regret than Random on HARE-Sim.
        inputs: {linucb: results/runs/.../linucb.npz, random: results/runs/.../random.npz}
        measured: mean(linucb.total_regret)
        compare: "<"
        threshold: mean(random.total_regret)

Expressions are evaluated by a small whitelist evaluator over the loaded inputs
(``.json`` as nested mappings, ``.npz`` as arrays): arithmetic, attribute or item
access, and the functions in :data:`FUNCTIONS`. Nothing is ``eval``'d. A claim that
fails is reported as FAIL with its numbers; it never stops the build.
"""

from __future__ import annotations

import ast
import json
import math
import operator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from hare.io import read_npz, write_text
from hare.report.latex import booktabs_table, escape, format_number, macro_name, macros

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


def evaluate_claim(claim: dict[str, Any], root: Path) -> ClaimResult:
    key = claim.get("key", "?")
    try:
        inputs = {name: root / path for name, path in (claim.get("inputs") or {}).items()}
        names = {name: load_input(path) for name, path in inputs.items()}
        compare = claim["compare"]
        if compare not in COMPARISONS:
            raise ValueError(f"compare must be one of {sorted(COMPARISONS)}, got {compare!r}")
        measured = float(evaluate_expression(claim["measured"], names))
        threshold = float(evaluate_expression(claim["threshold"], names))
    except (FileNotFoundError, KeyError, NameError, ValueError, TypeError, IndexError) as error:
        raise ClaimError(f"claim {key!r}: {error}") from error
    passed = bool(COMPARISONS[compare](measured, threshold)) and math.isfinite(measured)
    return ClaimResult(key, claim["statement"], measured, compare, threshold, passed, tuple(str(p) for p in (claim.get("inputs") or {}).values()))


def load_register(path: str | Path) -> list[dict[str, Any]]:
    register = yaml.safe_load(Path(path).read_text())
    claims = register.get("claims") if isinstance(register, dict) else None
    if not claims:
        raise ClaimError(f"{path}: no 'claims' list")
    keys = [c.get("key") for c in claims]
    duplicates = sorted({k for k in keys if keys.count(k) > 1})
    if duplicates:
        raise ClaimError(f"{path}: duplicate claim keys {duplicates}")
    return claims


def evaluate_register(path: str | Path, root: str | Path) -> list[ClaimResult]:
    return [evaluate_claim(claim, Path(root)) for claim in load_register(path)]


def claims_markdown(results: list[ClaimResult]) -> str:
    passed = sum(r.passed for r in results)
    lines = [f"# Claims: {passed}/{len(results)} PASS", "", "| claim | statement | measured | threshold | result | source |", "|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| `{r.key}` | {r.statement} | {r.measured:.6g} | {r.compare} {r.threshold:.6g} | {'PASS' if r.passed else '**FAIL**'} | {', '.join(f'`{s}`' for s in r.sources)} |")
    return "\n".join(lines) + "\n"


def claims_tex(results: list[ClaimResult]) -> str:
    """Macros ``\\claimStatus<Key>``, ``\\claimMeasured<Key>`` and the claims table ``\\claimsTable``."""
    values = {}
    rows = []
    for r in results:
        status = "PASS" if r.passed else r"\textbf{FAIL}"
        values[macro_name("claim", "status", r.key)] = status
        values[macro_name("claim", "measured", r.key)] = format_number(r.measured, 2)
        values[macro_name("claim", "threshold", r.key)] = format_number(r.threshold, 2)
        rows.append([rf"\texttt{{{escape(r.key)}}}", escape(r.statement), format_number(r.measured, 2), f"${escape(r.compare).replace('<', '<').replace('>', '>')}$ {format_number(r.threshold, 2)}", status])
    n_pass = sum(r.passed for r in results)
    values["claimsPassed"] = str(n_pass)
    values["claimsTotal"] = str(len(results))
    table = booktabs_table(
        ["Claim", "Statement", "Measured", "Threshold", "Result"], rows, "lp{0.42\\linewidth}rrl",
        f"Claims register: {n_pass} of {len(results)} claims pass. Each claim is decided by the result files named in \\texttt{{paper/claims.yaml}}.", "tab:claims",
    )
    return macros(values) + "\\newcommand{\\claimsTable}{%\n" + table + "}\n"


def write_claims(register: str | Path, root: str | Path, markdown_path: str | Path, tex_path: str | Path) -> list[ClaimResult]:
    results = evaluate_register(register, root)
    write_text(markdown_path, claims_markdown(results))
    write_text(tex_path, claims_tex(results))
    return results
