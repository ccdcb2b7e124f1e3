"""The whitelist evaluator of the register's expressions (``per_run``, ``bootstrap``, ``measured``, ``threshold``, ...)
over the loaded inputs: ``.json`` as nested mappings, ``.npz`` as arrays (``(n_runs, ...)``), ``.csv`` as a list of
rows. Arithmetic, attribute or item access and the functions of :data:`FUNCTIONS`; nothing is ``eval``'d."""

from __future__ import annotations

import ast
import csv
import functools
import json
import math
import operator
from pathlib import Path
from typing import Any

import numpy as np

from hare.io import read_npz
from hare.statistics import clopper_pearson, upper_tail_mean

FUNCTIONS = {
    "mean": lambda x: float(np.mean(x)),
    "std": lambda x: float(np.std(x, ddof=1)),
    "min": lambda *x: float(np.min(x[0] if len(x) == 1 else x)),
    "max": lambda *x: float(np.max(x[0] if len(x) == 1 else x)),
    "abs": lambda x: np.abs(x),
    "sqrt": np.sqrt,
    "log": np.log,
    "len": len,
    "lookup": lambda rows, *pairs: _lookup(rows, *pairs),
    "share_above": lambda x, level: float(np.mean(np.asarray(x, dtype=float) > float(level))),
    "share_above_low": lambda x, level: _share_interval(x, level)[0],
    "share_above_high": lambda x, level: _share_interval(x, level)[1],
    "cvar": lambda x, level: upper_tail_mean(x, float(level)),
    "zero_event_bound": lambda n: zero_event_bound(n),
}
RUN_COUNT = "n_runs"
"""The name an expression reads the claim's run count by: the length of its run files (paired, so all alike), or,
before anything runs, the ``n_runs`` its configuration gives (:mod:`hare.theory.claims.decidable`). A threshold that
reads only it is fixed before any reported run is seen."""


def zero_event_bound(n: Any) -> float:
    """The smallest share ``n`` runs can establish: the exact 95% (Clopper-Pearson) upper bound of a share when none of
    the ``n`` runs counts, ``1 - 0.025^(1/n)``; computed as ``share_above_high`` computes it, so that a threshold set
    to it is met exactly by zero events."""
    return _zero_event_bound(int(n))


@functools.lru_cache(maxsize=4096)
def _zero_event_bound(n: int) -> float:
    return clopper_pearson(0, n)[1]


def _share_interval(x: Any, level: Any) -> tuple[float, float]:
    """The 95% Clopper-Pearson interval (:func:`hare.statistics.clopper_pearson`) of the share of the values of ``x``
    (n,) above ``level``: the count above it is binomial over the n independent runs."""
    values = np.asarray(x, dtype=float).reshape(-1)
    return clopper_pearson(int(np.sum(values > float(level))), values.size)


def _lookup(rows: list[dict[str, str]], *pairs: str) -> float:
    """``lookup(table, column, value, ..., field)``: the number in ``field`` of the one CSV row whose columns equal the
    given values, e.g. ``lookup(pub, "policy", "linucb", "environment", "adult", "mean")``."""
    if len(pairs) % 2 != 1:
        raise ValueError("lookup takes (table, column, value, ..., field)")
    criteria, field = dict(zip(pairs[:-1:2], pairs[1:-1:2], strict=True)), pairs[-1]
    matches = [row for row in rows if all(row.get(k) == v for k, v in criteria.items())]
    if len(matches) != 1:
        raise KeyError(f"lookup {criteria}: {len(matches)} rows match (need exactly one)")
    return float(matches[0][field])


def _divide(a: Any, b: Any) -> Any:
    """``a / b`` with IEEE semantics (x / 0 is inf or NaN, never an exception): a resample whose spread is zero
    gives an undefined ratio, dropped from the bootstrap, not a crash."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.true_divide(a, b)


_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: _divide,
    ast.Pow: operator.pow,
}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}


def load_input(path: Path) -> Any:
    if not path.exists():
        raise FileNotFoundError(f"claim input {path} does not exist")
    if path.suffix == ".json":
        return json.loads(path.read_text())
    if path.suffix == ".npz":
        return read_npz(path)
    if path.suffix == ".csv":
        with open(path, newline="") as handle:
            return list(csv.DictReader(handle))
    raise ValueError(f"claim input {path}: unsupported file type {path.suffix!r} (use .json, .npz or .csv)")


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
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in FUNCTIONS
            and not node.keywords
        ):
            return FUNCTIONS[node.func.id](*(visit(a) for a in node.args))
        raise ValueError(f"unsupported expression element {ast.dump(node)[:60]} in {expression!r}")

    return visit(tree)


def as_number(value: Any) -> float:
    """A quantity as a float; ``None`` (a quantity its check could not define) becomes NaN, and the claim fails."""
    return math.nan if value is None else float(value)
