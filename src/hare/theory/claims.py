"""The claims register: every quantitative claim of the paper, decided on a 95% interval.

``paper/claims.yaml`` lists claims. Each names its result files (``inputs``), the measured
quantity, how its uncertainty is computed, and the threshold it is compared with::

    - key: hare_beats_linucb_mushroom_classification
      section: this paper, Table classification
      statement: HARE has lower total regret than LinUCB on Mushroom (paired over runs).
      inputs: {a: results/runs/classification/mushroom/hare.npz, b: results/runs/classification/mushroom/linucb.npz}
      per_run: a.total_regret - b.total_regret
      compare: "<"
      threshold: 0

Uncertainty, exactly one of:

``per_run: <expr>``
    a vector over runs, ``d_1 .. d_n``; measured ``mean(d)`` with the Student-t interval
    ``mean(d) +- t_{0.975, n-1} sd(d) / sqrt(n)``. A difference of two policies' arrays is the
    paired difference: the engine checks from the sidecars that every run-file input of the
    claim shares its environment draws (same experiment, environment, base seed, role, runs).
``bootstrap: <expr>``
    a statistic of the run files (e.g. a ratio of standard deviations over runs); measured on
    all runs, interval the 2.5 and 97.5 percentiles over :data:`N_BOOT` resamples of the run
    indices, drawn jointly for every run-file input (they are paired, as above).
``measured: <expr>`` with ``interval: [<low expr>, <high expr>]``
    a quantity whose interval the check that produced it computed (``ci_low``, ``ci_high``).
``measured: <expr>`` with ``exact: <reason>``
    a quantity without sampling uncertainty (a count, a closed form); the interval is the point.

Status, for ``compare`` in ``< <= > >=`` against ``threshold`` (:func:`hare.verdicts.decide`):

=============  ===========================================================================
PASS           the whole interval satisfies the comparison
FAIL           the whole interval violates it, or the measurement is undefined (NaN, null)
INCONCLUSIVE   the interval straddles the threshold
VACUOUS        the threshold is a bound (``trivial_bound: <expr>`` given) at or above the
               trivial bound ``T * Delta_max``: the bound says nothing, whatever is measured
NOT RUN        the running configuration produces none of the claim's run files
=============  ===========================================================================

A *family* stands for one claim per combination of its ``for_each`` values (``family: <name>`` groups
members, also of several entries, for the counts per status the paper prints). A value list is
either literal or a reference to the configurations, ``{config: <dotted path>, exclude: [...]}``:
a list (``experiments.classification.environments``) or a mapping whose keys are taken
(``experiments.classification.policies``), united over the running configuration and the
register's ``reference_configs`` (the default and paper configurations), in order of first
appearance; its path may use a variable bound before it (``experiments.{experiment}.environments``). A member whose run
files the running configuration does not produce is listed as
NOT RUN, never dropped: the smoke build shows what it skips. :func:`expand_claims` replaces
every ``{name}`` in the templated fields by each value of the Cartesian product of the lists
(first list outermost).

Expressions are evaluated by a whitelist evaluator over the loaded inputs (``.json`` as nested
mappings, ``.npz`` as arrays): arithmetic, attribute or item access, and :data:`FUNCTIONS`.
Nothing is ``eval``'d. A claim that fails is reported as FAIL with its numbers; it never stops
the build.

Length: one module because this docstring is the grammar of ``paper/claims.yaml`` and the module its one
implementation: register loading and family expansion, the whitelist evaluator, the four uncertainty kinds and
the status rules each implement a clause of it, and the Markdown and JSON writers print the status words
(:data:`STATUSES`) that :func:`hare.verdicts.decide` assigns (the TeX of the paper is rendered from the JSON by
:mod:`hare.report.register`); split, the grammar would be documented apart from most of its clauses.

Margins, p-values, the adjustment within families and run plans are :mod:`hare.verdicts`: a claim may
declare ``margin: <expr>`` (its equivalence margin delta), ``comparator_regret: <expr>`` (the comparator's mean total
regret on the tuning runs, of which delta is printed as a percentage) and ``power: [<expr>, <expr>]`` (per-run totals
of the two compared policies on the tuning runs, whose paired spread plans the run count). A comparison of policy
``a`` against ``b`` reads all three from the margins file of its experiment and dataset
(:mod:`hare.experiments.margins`, :data:`MARGIN_RULE`): ``margin: m.policies.b.margin``,
``comparator_regret: m.policies.b.mean``, ``power: [m.policies.a.totals, m.policies.b.totals]``.
"""

from __future__ import annotations

import ast
import csv
import fnmatch
import hashlib
import json
import math
import operator
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from hare import verdicts
from hare.experiments.config import resolve_config_file
from hare.experiments.margins import MARGIN_RULE
from hare.io import read_npz, read_yaml, write_json, write_text
from hare.statistics import clopper_pearson, upper_tail_mean
from hare.verdicts import COMPARISONS, decide

LEVEL = verdicts.LEVEL
N_BOOT = 4000
STATUSES = ("PASS", "FAIL", "EQUIVALENT", "INCONCLUSIVE", "VACUOUS", "NOT RUN")
ADJUSTMENT = (
    "Benjamini-Hochberg within each family, at 2.5% for each one-sided decision (PASS, FAIL, EQUIVALENT), "
    "i.e. 5% for the two directions together, the level of the unadjusted 95% intervals"
)
POWER_RULE = (
    "planned runs: the smallest n whose expected 95% half-width, from the tuning runs' paired spread, "
    "is at most delta / 2"
)
POWER_TARGET = 0.5
"""The planned half-width as a share of the margin: half of delta, so that a tie lands inside the margin and a
difference of delta outside zero."""
UNCERTAINTY_KINDS = ("per_run", "bootstrap", "interval", "exact")
PAIRING_FIELDS = ("experiment", "environment", "base_seed", "role", "n_runs", "regime", "n_logged")

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
}


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


class ClaimError(ValueError):
    """A claim cannot be evaluated (missing file, bad expression, unpaired runs); the message names the claim."""


@dataclass(frozen=True)
class ClaimResult:
    """One claim's verdict: the measured value, its interval ``[low, high]``, the threshold and the status."""

    key: str
    section: str
    statement: str
    measured: float
    low: float
    high: float
    compare: str
    threshold: float | tuple[float, float]
    status: str
    method: str
    sources: tuple[str, ...]
    trivial_bound: float | None = None
    family: str = ""
    margin: float | None = None
    p_values: dict[str, float] | None = None
    adjusted_status: str = ""
    p_value: float = math.nan
    p_adjusted: float = math.nan
    headline: bool = False
    binding: dict[str, str] | None = None
    claim_id: str = ""
    n_runs: int | None = None
    planned_runs: int | None = None
    sd: float = math.nan
    run_sd: float = math.nan
    note: str = ""
    label: str = ""
    comparator_regret: float | None = None

    @property
    def margin_share(self) -> float | None:
        """delta as a share of the comparator's mean total regret on the tuning runs (``None`` without either)."""
        if self.margin is None or self.comparator_regret is None or not self.comparator_regret > 0:
            return None
        return self.margin / self.comparator_regret

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2 if math.isfinite(self.low) and math.isfinite(self.high) else math.nan

    @property
    def passed(self) -> bool:
        return self.status == "PASS"

    @property
    def not_run(self) -> bool:
        return self.status == "NOT RUN"


def t_interval(values: Sequence[float] | np.ndarray, level: float = LEVEL) -> tuple[float, float, float]:
    """``(mean, low, high)``: the Student-t interval ``mean +- t_{(1+level)/2, n-1} s / sqrt(n)`` over ``values``
    ``(n,)``; NaN bounds with fewer than two values (no spread to estimate)."""
    x = np.asarray(values, dtype=float).reshape(-1)
    mean = float(x.mean()) if x.size else math.nan
    if x.size < 2 or not np.all(np.isfinite(x)):
        return mean, math.nan, math.nan
    half = float(stats.t.ppf((1 + level) / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    return mean, mean - half, mean + half


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


def _number(value: Any) -> float:
    """A quantity as a float; ``None`` (a quantity its check could not define) becomes NaN, and the claim fails."""
    return math.nan if value is None else float(value)


def _uncertainty_kind(claim: dict[str, Any]) -> str:
    kinds = [kind for kind in UNCERTAINTY_KINDS if kind in claim]
    if len(kinds) != 1:
        raise ClaimError(
            f"claim {claim.get('key', '?')!r}: give exactly one of {list(UNCERTAINTY_KINDS)}, got {kinds or 'none'}"
        )
    if kinds[0] in ("interval", "exact") and "measured" not in claim:
        raise ClaimError(f"claim {claim.get('key', '?')!r}: {kinds[0]!r} needs 'measured'")
    return kinds[0]


def check_paired(key: str, sidecars: dict[str, dict[str, Any]]) -> None:
    """Refuse a claim whose run files did not face the same environment draws: every sidecar must agree on
    :data:`PAIRING_FIELDS` (and a warm start on its digest)."""

    def signature(car: dict[str, Any]) -> dict[str, Any]:
        job = car.get("job", car)
        env = job.get("environment")
        return {
            **{f: job.get(f) for f in PAIRING_FIELDS if f != "environment"},
            "environment": env.get("name") if isinstance(env, dict) else env,
            "warm_start_digest": car.get("warm_start_digest"),
        }

    signatures = {path: signature(car) for path, car in sidecars.items()}
    first_path, first = next(iter(signatures.items()))
    for path, sig in signatures.items():
        differing = sorted(f for f in first if first[f] != sig[f])
        if differing:
            raise ClaimError(f"claim {key!r}: {path} and {first_path} are not paired runs (they differ in {differing})")


def _bootstrap(
    expression: str, names: dict[str, Any], run_inputs: list[str], seed: int
) -> tuple[float, float, float, np.ndarray]:
    """``(statistic on all runs, low, high, draws)``: the percentile interval of ``expression`` over :data:`N_BOOT`
    resamples of the run indices, the same indices for every run-file input ``run_inputs``; ``draws`` the finite
    resampled statistics (their one-sided shares are the claim's p-values)."""
    n_runs = {len(names[name]["total_reward"]) for name in run_inputs}
    if len(n_runs) != 1:
        raise ValueError(f"bootstrap inputs have different run counts {sorted(n_runs)}")
    (n,) = n_runs
    estimate = _number(evaluate_expression(expression, names))
    rng = np.random.default_rng(seed)
    draws = []
    for index in rng.integers(0, n, size=(N_BOOT, n)):
        resampled = dict(names)
        for name in run_inputs:
            resampled[name] = {
                field: (array[index] if np.ndim(array) >= 1 and len(array) == n else array)
                for field, array in names[name].items()
            }
        draws.append(_number(evaluate_expression(expression, resampled)))
    values = np.asarray(draws)
    values = values[np.isfinite(values)]
    if values.size < N_BOOT // 2:
        return estimate, math.nan, math.nan, values
    tail = 100 * (1 - LEVEL) / 2
    low, high = np.percentile(values, [tail, 100 - tail])
    return estimate, float(low), float(high), values


def _key_seed(key: str) -> int:
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "little")


def _margin_and_plan(
    claim: dict[str, Any], names: dict[str, Any]
) -> tuple[float | None, float, int | None, float | None]:
    """``(margin, sd of the tuning runs' paired differences, planned runs, comparator's mean tuning regret)`` of a
    claim that declares ``margin:``, ``power: [a, b]`` (each an expression for per-run totals on the tuning runs) and
    ``comparator_regret:``; NaN and None where not declared or where the margins file has no entry (an experiment the
    running configuration does not tune)."""
    try:
        margin = _number(evaluate_expression(claim["margin"], names)) if "margin" in claim else None
        power = [np.asarray(evaluate_expression(e, names), dtype=float).reshape(-1) for e in claim.get("power") or []]
        comparator = (
            _number(evaluate_expression(claim["comparator_regret"], names)) if "comparator_regret" in claim else None
        )
    except KeyError:
        # The running configuration does not tune this experiment (no tuning runs): no margin, no plan.
        return None, math.nan, None, None
    if margin is not None and not (math.isfinite(margin) and margin > 0):
        margin = None
    if comparator is not None and not math.isfinite(comparator):
        comparator = None
    sd, planned = math.nan, None
    if power:
        first, second = power
        if first.shape != second.shape:
            raise ValueError(f"power: the tuning runs differ in count ({first.size} and {second.size})")
        if first.size >= 2:
            sd = float(np.std(first - second, ddof=1))
        if margin is not None:
            planned = verdicts.planned_runs(sd, POWER_TARGET * margin)
    return margin, sd, planned, comparator


def evaluate_claim(claim: dict[str, Any], root: Path, not_run_inputs: frozenset[str] = frozenset()) -> ClaimResult:
    """One claim's :class:`ClaimResult` (module docstring), with its unadjusted status and one-sided p-values; the
    family's adjustment is :func:`adjust_families`. A claim reading any of ``not_run_inputs`` (run files the running
    configuration does not produce) is NOT RUN; any other missing input is an error."""
    key = claim.get("key", "?")
    paths = {name: str(path) for name, path in (claim.get("inputs") or {}).items()}
    compare = claim.get("compare")
    if compare not in COMPARISONS:
        raise ClaimError(f"claim {key!r}: compare must be one of {sorted(COMPARISONS)}, got {compare!r}")
    kind = _uncertainty_kind(claim)
    section = str(claim.get("section", ""))
    sources = tuple(paths.values())
    common = {
        "family": str(claim.get("family", "")),
        "binding": dict(claim.get("_binding") or {}),
        "label": str(claim.get("label", "")),
    }
    if not_run_inputs & set(sources):
        nan = math.nan
        return ClaimResult(
            key, section, claim["statement"], nan, nan, nan, compare, nan, "NOT RUN", kind, sources, None, **common
        )
    values = None
    draws = None
    try:
        names = {name: load_input(root / path) for name, path in paths.items()}
        run_inputs = [name for name, path in paths.items() if path.endswith(".npz") and "total_reward" in names[name]]
        if kind in ("per_run", "bootstrap") and len(run_inputs) > 1:
            check_paired(key, {paths[n]: load_input((root / paths[n]).with_suffix(".json")) for n in run_inputs})
        if compare == "within":
            if not isinstance(claim["threshold"], list) or len(claim["threshold"]) != 2:
                raise ValueError("compare 'within' needs threshold: [low, high]")
            threshold = tuple(_number(evaluate_expression(e, names)) for e in claim["threshold"])
        else:
            threshold = _number(evaluate_expression(claim["threshold"], names))
        margin, sd, planned, comparator = _margin_and_plan(claim, names)
        unmet = [
            pair
            for pair in claim.get("requires_equal") or []
            if _number(evaluate_expression(pair[0], names)) != _number(evaluate_expression(pair[1], names))
        ]
        if kind == "per_run":
            values = np.asarray(evaluate_expression(claim["per_run"], names), dtype=float).reshape(-1)
            measured, low, high = t_interval(values)
            method = f"t interval over {values.size} runs"
        elif kind == "bootstrap":
            measured, low, high, draws = _bootstrap(claim["bootstrap"], names, run_inputs, _key_seed(key))
            method = f"percentile bootstrap over runs ({N_BOOT} resamples)"
        elif kind == "interval":
            measured = _number(evaluate_expression(claim["measured"], names))
            low, high = (_number(evaluate_expression(e, names)) for e in claim["interval"])
            method = "interval of the check"
        else:
            measured = _number(evaluate_expression(claim["measured"], names))
            low = high = measured
            method = f"exact: {claim['exact']}"
        trivial = _number(evaluate_expression(claim["trivial_bound"], names)) if "trivial_bound" in claim else None
    except (FileNotFoundError, KeyError, NameError, ValueError, TypeError, IndexError) as error:
        raise ClaimError(f"claim {key!r}: {error}") from error
    if math.isnan(measured):
        low = high = math.nan
    p_values = {d: math.nan for d in verdicts.DECISIONS}
    if compare != "within" and not math.isnan(measured) and not isinstance(threshold, tuple):
        if values is not None:
            p_values = verdicts.t_p_values(values, compare, threshold, margin)
        elif draws is not None:
            p_values = verdicts.resample_p_values(draws, compare, threshold, margin)
        elif kind == "interval":
            p_values = verdicts.interval_p_values(measured, low, high, compare, threshold, margin)
    if unmet:
        method += "; not what the claim needs: " + "; ".join(f"{a} != {b}" for a, b in unmet)
        status = "NOT RUN"
    elif trivial is not None and threshold >= trivial:
        status = "VACUOUS"
    else:
        status = decide(low, high, compare, threshold, measured, margin)
    n_runs = int(values.size) if values is not None else None
    run_sd = float(np.std(values, ddof=1)) if values is not None and values.size >= 2 else math.nan
    return ClaimResult(
        key,
        section,
        claim["statement"],
        measured,
        low,
        high,
        compare,
        threshold,
        status,
        method,
        sources,
        trivial,
        margin=margin,
        p_values=p_values,
        adjusted_status=status,
        n_runs=n_runs,
        planned_runs=planned,
        sd=sd,
        run_sd=run_sd,
        comparator_regret=comparator,
        **common,
    )


def _decision_p(r: ClaimResult, status: str) -> float:
    return (r.p_values or {}).get(status, math.nan) if status in verdicts.DECISIONS else math.nan


def adjust_families(results: Sequence[ClaimResult]) -> list[ClaimResult]:
    """Every result with its family-adjusted status (:func:`hare.verdicts.adjusted_decisions`, Benjamini--Hochberg
    within each family over the members that ran and have p-values). Members without p-values (exact claims, bands,
    VACUOUS, NOT RUN, undefined measurements) keep their status; a claim without a family is its own family."""
    out = list(results)
    groups: dict[str, list[int]] = {}
    for i, r in enumerate(out):
        groups.setdefault(r.family or f"claim:{r.key}", []).append(i)
    for members in groups.values():
        tested = [
            i
            for i in members
            if out[i].status in ("PASS", "FAIL", "EQUIVALENT", "INCONCLUSIVE")
            and any(math.isfinite(v) for v in (out[i].p_values or {}).values())
        ]
        decisions = verdicts.adjusted_decisions([out[i].p_values for i in tested])
        for i, (taken, p_adjusted) in zip(tested, decisions, strict=True):
            r = out[i]
            adjusted = taken or "INCONCLUSIVE"
            if r.status == "FAIL" and not math.isfinite(r.measured):
                adjusted = "FAIL"
            unadjusted_p = (
                _decision_p(r, r.status)
                if r.status in verdicts.DECISIONS
                else min((v for v in (r.p_values or {}).values() if math.isfinite(v)), default=math.nan)
            )
            out[i] = replace(r, adjusted_status=adjusted, p_adjusted=p_adjusted, p_value=unadjusted_p)
    return out


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
        resolve_config_file(root / name) for name in register.get("reference_configs") or []
    ]  # overlays resolved onto their base


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


def _settle_note(r: ClaimResult) -> str:
    """For an INCONCLUSIVE claim: how many runs would settle it at the observed mean and spread."""
    if r.adjusted_status != "INCONCLUSIVE" or not math.isfinite(r.run_sd) or isinstance(r.threshold, tuple):
        return ""
    needed = verdicts.runs_to_settle(r.measured, r.run_sd, float(r.threshold), r.margin)
    if needed is None:
        return "the mean sits at the threshold; no run count settles it without a margin"
    return f"about {needed} runs would settle it at the observed mean and spread ({r.n_runs} ran)"


def finish_register(results: Sequence[ClaimResult], patterns: Sequence[str] = ()) -> list[ClaimResult]:
    """The register's results in their published form: adjusted within families (:func:`adjust_families`), headline
    claims marked (``patterns``) and numbered first (C1, C2, ...; then every other claim in register order), and a
    note on each INCONCLUSIVE claim saying how many runs would settle it."""
    ids = claim_ids([r.key for r in results], patterns)
    finished = [replace(r, claim_id=ids[r.key][0], headline=ids[r.key][1]) for r in adjust_families(results)]
    return [replace(r, note=_settle_note(r)) for r in finished]


def claim_ids(keys: Sequence[str], patterns: Sequence[str]) -> dict[str, tuple[str, bool]]:
    """``{key: (id, headline)}`` of the register's keys in register order: the headline claims (a key matching one of
    ``patterns``) numbered first, C1, C2, ..., then every other claim. One claim evaluated alone (``make claim``) gets
    the id and headline mark it has in the whole register."""
    headline = {key: any(fnmatch.fnmatchcase(key, p) for p in patterns) for key in keys}
    order = [key for key in keys if headline[key]] + [key for key in keys if not headline[key]]
    return {key: (f"C{i}", headline[key]) for i, key in enumerate(order, start=1)}


def evaluate_register(
    path: str | Path,
    root: str | Path,
    not_run_inputs: frozenset[str] = frozenset(),
    configs: Iterable[dict[str, Any]] = (),
    keys: Sequence[str] | None = None,
) -> list[ClaimResult]:
    """Every claim of the register, evaluated and finished (:func:`finish_register`). With ``keys``, only those claims,
    unadjusted: their family's other members are not evaluated, so ``adjusted_status`` is left empty."""
    claims = load_register(path, configs)
    if keys is not None:
        known = {c["key"] for c in claims}
        unknown = sorted(set(keys) - known)
        if unknown:
            raise ClaimError(f"unknown claim key(s) {unknown}; `hare claims --list` prints every key")
        ids = claim_ids([c["key"] for c in claims], headline_patterns(path))
        chosen = [c for c in claims if c["key"] in set(keys)]
        return [
            replace(
                evaluate_claim(claim, Path(root), frozenset(not_run_inputs)),
                adjusted_status="",
                claim_id=ids[claim["key"]][0],
                headline=ids[claim["key"]][1],
            )
            for claim in chosen
        ]
    results = [evaluate_claim(claim, Path(root), frozenset(not_run_inputs)) for claim in claims]
    return finish_register(results, headline_patterns(path))


def format_threshold(r: ClaimResult, digits: int = 4, number=None) -> str:
    """``<compare> <threshold>``, or ``within [low, high]`` for a band."""
    number = number or (lambda v: f"{v:.{digits}g}")
    if isinstance(r.threshold, tuple):
        return f"{r.compare} [{number(r.threshold[0])}, {number(r.threshold[1])}]"
    return f"{r.compare} {number(r.threshold)}"


def format_interval(r: ClaimResult, digits: int = 3) -> str:
    if r.not_run or math.isnan(r.measured):
        return "--"
    if r.method.startswith("exact"):
        return f"{r.measured:.{digits}g} (exact)"
    return f"{r.measured:.{digits}g} [{r.low:.{digits}g}, {r.high:.{digits}g}]"


def status_counts(results: Sequence[ClaimResult]) -> dict[str, int]:
    return {status: sum(r.status == status for r in results) for status in STATUSES}


def _json_number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def claim_entry(r: ClaimResult) -> dict[str, Any]:
    """One claim as plain data (the ``claims`` list of :func:`claims_document`); undefined numbers are ``None``."""
    threshold = [_json_number(t) for t in r.threshold] if isinstance(r.threshold, tuple) else _json_number(r.threshold)
    return {
        "id": r.claim_id,
        "key": r.key,
        "family": r.family,
        "headline": r.headline,
        "section": r.section,
        "statement": r.statement,
        "label": r.label,
        "binding": dict(r.binding or {}),
        "measured": _json_number(r.measured),
        "low": _json_number(r.low),
        "high": _json_number(r.high),
        "compare": r.compare,
        "threshold": threshold,
        "margin": _json_number(r.margin),
        "comparator_regret": _json_number(r.comparator_regret),
        "margin_share": _json_number(r.margin_share),
        "status": r.status,
        "adjusted_status": r.adjusted_status or r.status,
        "p_value": _json_number(r.p_value),
        "p_adjusted": _json_number(r.p_adjusted),
        "method": r.method,
        "sources": list(r.sources),
        "n_runs": r.n_runs,
        "planned_runs": r.planned_runs,
        "half_width": _json_number(r.half_width),
        "tuning_sd": _json_number(r.sd),
        "note": r.note,
    }


def claims_document(results: Sequence[ClaimResult]) -> dict[str, Any]:
    """``results/claims.json``: ``{"level", "adjustment", "margin_rule", "power_rule", "claims": [...]}`` with one
    :func:`claim_entry` per claim, in register order; :func:`hare.report.register.register_tex` renders it."""
    return {
        "level": LEVEL,
        "adjustment": ADJUSTMENT,
        "margin_rule": MARGIN_RULE,
        "power_rule": POWER_RULE,
        "claims": [claim_entry(r) for r in results],
    }


def adjusted_counts(results: Sequence[ClaimResult]) -> dict[str, int]:
    return {status: sum((r.adjusted_status or r.status) == status for r in results) for status in STATUSES}


def margin_text(r: ClaimResult) -> str:
    """``8.83 (10% of 88.3)``: delta in regret and as a share of the comparator's mean tuning regret; delta alone
    without a comparator (a margin on a share of runs), empty without a margin."""
    if r.margin is None:
        return ""
    share = r.margin_share
    if share is None:
        return f"{r.margin:.3g}"
    return f"{r.margin:.3g} ({share:.0%} of {r.comparator_regret:.3g})"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|")


def _plan_cell(r: ClaimResult) -> str:
    if r.planned_runs is None:
        return ""
    return f"{r.planned_runs} / {r.n_runs if r.n_runs is not None else '--'}"


def _headline_summary(counts: dict[str, int], n_headline: int) -> str:
    """``Headline claims: 13/45 PASS, 15 FAIL, ...``; ``No headline claim among these.`` when there is none."""
    if n_headline == 0:
        return "No headline claim among these."
    others = [f"{n} {status}" for status, n in counts.items() if n and status != "PASS"]
    return f"Headline claims: {counts['PASS']}/{n_headline} PASS" + "".join(f", {o}" for o in others) + "."


def claims_markdown(results: Sequence[ClaimResult]) -> str:
    """``results/claims.md``: the counts, the rules, the headline claims, then every claim (register order), each with
    its unadjusted and family-adjusted status, margin, planned and achieved run count and half-width."""
    counts, adjusted = status_counts(results), adjusted_counts(results)
    headline = [r for r in results if r.headline]
    head = adjusted_counts(headline)
    summary = ", ".join(f"{n} {status}" for status, n in adjusted.items() if n)
    header = [
        "| id | claim | statement | measured [95% interval] | test | margin δ (% of comparator) | unadjusted | "
        "adjusted | runs planned / ran | half-width | note |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    def row(r: ClaimResult) -> str:
        threshold = (
            r.compare
            if r.not_run
            else format_threshold(r) + (f" (trivial {r.trivial_bound:.4g})" if r.trivial_bound is not None else "")
        )
        status = r.adjusted_status or r.status
        shown = status if status in ("PASS", "NOT RUN") else f"**{status}**"
        margin = margin_text(r)
        half = f"{r.half_width:.3g}" if math.isfinite(r.half_width) else ""
        return (
            f"| {r.claim_id} | `{r.key}` | {_cell(r.statement)} | {format_interval(r)} | {threshold} | {margin} | "
            f"{r.status} | "
            f"{shown} | {_plan_cell(r)} | {half} | {_cell(r.note)} |"
        )

    lines = [
        f"# Claims: {adjusted['PASS']}/{len(results)} PASS after adjustment",
        "",
        f"{summary} (unadjusted: " + ", ".join(f"{n} {s}" for s, n in counts.items() if n) + ").",
        "",
        _headline_summary(head, len(headline)),
        "",
        "Each claim is decided on the 95% interval of its measured quantity: PASS when the whole interval satisfies "
        "the comparison, "
        "FAIL when none of it does, EQUIVALENT when it does neither but lies inside the margin (threshold - δ, "
        "threshold + δ), "
        "INCONCLUSIVE when it straddles the threshold and leaves the margin (too few runs), VACUOUS when the threshold "
        "is a bound "
        "at or above the trivial bound T * Delta_max, NOT RUN when this configuration produces none of the claim's run "
        "files.",
        "",
        f"Adjustment: {ADJUSTMENT}.",
        "",
        f"Margins: δ is {MARGIN_RULE}.",
        "",
        f"Run counts: {POWER_RULE}.",
        "",
        "## Headline claims",
        "",
        *header,
        *(row(r) for r in headline),
        "",
        "## Every claim",
        "",
        *header,
        *(row(r) for r in results),
        "",
        "## Methods and inputs",
        "",
        "| id | claim | section | method | source |",
        "|---|---|---|---|---|",
        *(
            f"| {r.claim_id} | `{r.key}` | {_cell(r.section)} | {r.method} | "
            + ", ".join(f"`{s}`" for s in r.sources)
            + " |"
            for r in results
        ),
    ]
    return "\n".join(lines) + "\n"


def write_claims(
    register: str | Path,
    root: str | Path,
    markdown_path: str | Path,
    json_path: str | Path | None = None,
    not_run_inputs: frozenset[str] = frozenset(),
    configs: Iterable[dict[str, Any]] = (),
    keys: Sequence[str] | None = None,
) -> list[ClaimResult]:
    """Evaluate the register and write ``results/claims.md`` and (the whole register only) ``results/claims.json``."""
    results = evaluate_register(register, root, not_run_inputs, configs, keys)
    write_text(markdown_path, claims_markdown(results))
    if json_path is not None:
        write_json(json_path, claims_document(results))
    return results
