"""Deciding the claims: each claim measured with its kind of uncertainty (a t interval over runs, a percentile
bootstrap over runs, an interval its check reported, or an exact value), its status decided on that interval
(:func:`hare.verdicts.decide`), its one-sided p-values, margin and planned run count, then the family-adjusted status
(Benjamini--Hochberg within each family) and the published form of the register (ids, headline marks, notes)."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from hare import verdicts
from hare.statistics import t_interval
from hare.theory.claims.expressions import as_number, evaluate_expression, load_input
from hare.theory.claims.register import claim_ids, headline_patterns, load_register
from hare.theory.claims.result import ClaimError, ClaimResult
from hare.verdicts import COMPARISONS, decide

LEVEL = verdicts.LEVEL
N_BOOT = 4000
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
    estimate = as_number(evaluate_expression(expression, names))
    rng = np.random.default_rng(seed)
    draws = []
    for index in rng.integers(0, n, size=(N_BOOT, n)):
        resampled = dict(names)
        for name in run_inputs:
            resampled[name] = {
                field: (array[index] if np.ndim(array) >= 1 and len(array) == n else array)
                for field, array in names[name].items()
            }
        draws.append(as_number(evaluate_expression(expression, resampled)))
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
        margin = as_number(evaluate_expression(claim["margin"], names)) if "margin" in claim else None
        power = [np.asarray(evaluate_expression(e, names), dtype=float).reshape(-1) for e in claim.get("power") or []]
        comparator = (
            as_number(evaluate_expression(claim["comparator_regret"], names)) if "comparator_regret" in claim else None
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
            threshold = tuple(as_number(evaluate_expression(e, names)) for e in claim["threshold"])
        else:
            threshold = as_number(evaluate_expression(claim["threshold"], names))
        margin, sd, planned, comparator = _margin_and_plan(claim, names)
        unmet = [
            pair
            for pair in claim.get("requires_equal") or []
            if as_number(evaluate_expression(pair[0], names)) != as_number(evaluate_expression(pair[1], names))
        ]
        if kind == "per_run":
            values = np.asarray(evaluate_expression(claim["per_run"], names), dtype=float).reshape(-1)
            interval = t_interval(values, LEVEL)
            measured = as_number(interval["estimate"])
            low, high = as_number(interval["ci_low"]), as_number(interval["ci_high"])
            method = f"t interval over {values.size} runs"
        elif kind == "bootstrap":
            measured, low, high, draws = _bootstrap(claim["bootstrap"], names, run_inputs, _key_seed(key))
            method = f"percentile bootstrap over runs ({N_BOOT} resamples)"
        elif kind == "interval":
            measured = as_number(evaluate_expression(claim["measured"], names))
            low, high = (as_number(evaluate_expression(e, names)) for e in claim["interval"])
            method = "interval of the check"
        else:
            measured = as_number(evaluate_expression(claim["measured"], names))
            low = high = measured
            method = f"exact: {claim['exact']}"
        trivial = as_number(evaluate_expression(claim["trivial_bound"], names)) if "trivial_bound" in claim else None
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
