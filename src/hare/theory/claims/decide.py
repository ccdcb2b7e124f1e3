"""Deciding the claims: each claim measured with its kind of uncertainty (a t interval over runs, a percentile
bootstrap over runs, an interval its check reported, or an exact value), its status decided on that interval
(:func:`hare.verdicts.decide`), its one-sided p-values, margin and planned run count, then the family-adjusted status
(Benjamini--Hochberg within each family, a decision taken only where the claim's interval supports it) and the
published form of the register (ids, headline marks, the claims its run counts cannot decide marked UNDECIDABLE AT
THIS SCALE, :mod:`hare.theory.claims.decidable`, and the reason of every INCONCLUSIVE one,
:mod:`hare.theory.claims.reasons`)."""

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
from hare.theory.claims.decidable import (
    Undecidable,
    counts_of_results,
    is_share_claim,
    margin_and_plan,
    mark_undecidable,
    run_counts,
    undecidable,
)
from hare.theory.claims.expressions import RUN_COUNT, as_number, evaluate_expression, load_input
from hare.theory.claims.reasons import explain
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
    if RUN_COUNT in paths:
        raise ClaimError(f"claim {key!r}: {RUN_COUNT!r} is the claim's run count; name the input otherwise")
    values = None
    draws = None
    run_count = None
    try:
        names = {name: load_input(root / path) for name, path in paths.items()}
        run_inputs = [name for name, path in paths.items() if path.endswith(".npz") and "total_reward" in names[name]]
        if run_inputs:
            run_count = min(len(names[name]["total_reward"]) for name in run_inputs)
            names[RUN_COUNT] = run_count
        if kind in ("per_run", "bootstrap") and len(run_inputs) > 1:
            check_paired(key, {paths[n]: load_input((root / paths[n]).with_suffix(".json")) for n in run_inputs})
        if compare == "within":
            if not isinstance(claim["threshold"], list) or len(claim["threshold"]) != 2:
                raise ValueError("compare 'within' needs threshold: [low, high]")
            threshold = tuple(as_number(evaluate_expression(e, names)) for e in claim["threshold"])
        else:
            threshold = as_number(evaluate_expression(claim["threshold"], names))
        margin, sd, planned, comparator = margin_and_plan(claim, names)
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
            if is_share_claim(claim) and run_count is not None:
                method = f"Clopper-Pearson (exact binomial) interval of a share of {run_count} runs"
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
    n_runs = int(values.size) if values is not None else run_count
    rule = claim.get("threshold")
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
        threshold_rule=rule if isinstance(rule, str) and RUN_COUNT in rule else "",
        uncertainty="share" if kind == "interval" and is_share_claim(claim) else kind,
        **common,
    )


def _decision_p(r: ClaimResult, status: str) -> float:
    return (r.p_values or {}).get(status, math.nan) if status in verdicts.DECISIONS else math.nan


def _tested_groups(results: Sequence[ClaimResult]) -> list[list[int]]:
    """Per family (a claim without a family is its own), the indices of the members the adjustment tests: those that
    ran to a decision or INCONCLUSIVE with p-values."""
    groups: dict[str, list[int]] = {}
    for i, r in enumerate(results):
        groups.setdefault(r.family or f"claim:{r.key}", []).append(i)
    return [
        [
            i
            for i in members
            if results[i].status in ("PASS", "FAIL", "EQUIVALENT", "INCONCLUSIVE")
            and any(math.isfinite(v) for v in (results[i].p_values or {}).values())
        ]
        for members in groups.values()
    ]


def interval_supports(r: ClaimResult, decision: str) -> bool:
    """The claim's own 95% interval satisfies ``decision``'s rule (:func:`hare.verdicts.decide`): PASS and FAIL on
    their side of the threshold, EQUIVALENT inside the margin. The adjustment only withholds decisions: a p-value read
    off an interval (the normal reading of an asymmetric exact interval of a share) cannot take one its interval does
    not support."""
    if decision == "EQUIVALENT":
        return verdicts.equivalent(r.low, r.high, float(r.threshold), r.margin)
    return decide(r.low, r.high, r.compare, r.threshold, r.measured) == decision


def adjust_families(results: Sequence[ClaimResult]) -> list[ClaimResult]:
    """Every result with its family-adjusted status: Benjamini--Hochberg within each family over the members that ran
    and have p-values, each decision's p-values adjusted at 2.5% (as :func:`hare.verdicts.adjusted_decisions`), PASS
    then FAIL then EQUIVALENT, a decision taken only where the claim's interval supports it
    (:func:`interval_supports`). Members without p-values (exact claims, bands, VACUOUS, NOT RUN, undefined
    measurements) keep their status; a claim without a family is its own family."""
    out = list(results)
    for tested in _tested_groups(out):
        adjusted = {
            d: verdicts.benjamini_hochberg([(out[i].p_values or {}).get(d, math.nan) for i in tested])
            for d in verdicts.DECISIONS
        }
        for j, i in enumerate(tested):
            r = out[i]
            taken = next(
                (
                    d
                    for d in verdicts.DECISIONS
                    if adjusted[d][j] < verdicts.ALPHA_ONE_SIDED and interval_supports(r, d)
                ),
                None,
            )
            defined = [adjusted[d][j] for d in verdicts.DECISIONS if math.isfinite(adjusted[d][j])]
            p_adjusted = float(adjusted[taken][j]) if taken else float(min(defined)) if defined else math.nan
            status = taken or "INCONCLUSIVE"
            if r.status == "FAIL" and not math.isfinite(r.measured):
                status = "FAIL"
            unadjusted_p = (
                _decision_p(r, r.status)
                if r.status in verdicts.DECISIONS
                else min((v for v in (r.p_values or {}).values() if math.isfinite(v)), default=math.nan)
            )
            out[i] = replace(r, adjusted_status=status, p_adjusted=p_adjusted, p_value=unadjusted_p)
    return out


def settle_levels(results: Sequence[ClaimResult]) -> dict[int, dict[str, float]]:
    """``{index: {decision: one-sided level}}``: the level at which the family's Benjamini--Hochberg adjustment would
    take each decision for a member it did not take it for, the family's other decisions unchanged:
    ``2.5% (R_d + 1) / m_d`` with ``R_d`` the members taking ``d`` and ``m_d`` those with a ``d`` p-value
    (:mod:`hare.theory.claims.reasons`). Members outside the adjustment are absent (the unadjusted 2.5% applies)."""
    alpha = verdicts.ALPHA_ONE_SIDED
    levels: dict[int, dict[str, float]] = {}
    for tested in _tested_groups(results):
        for decision in verdicts.DECISIONS:
            p = [(results[i].p_values or {}).get(decision, math.nan) for i in tested]
            adjusted = verdicts.benjamini_hochberg(p)
            m = int(np.isfinite(adjusted).sum())
            rejected = adjusted < alpha
            for j, i in enumerate(tested):
                others = int(rejected.sum()) - int(rejected[j])
                levels.setdefault(i, {})[decision] = alpha * (others + 1) / m if m else alpha
    return levels


def _threshold_at(r: ClaimResult):
    """``n -> threshold at n runs`` of a claim whose threshold reads the run count (``threshold_rule``)."""
    if not r.threshold_rule:
        return None

    def at(n: int) -> float:
        return as_number(evaluate_expression(r.threshold_rule, {RUN_COUNT: int(n)}))

    return at


def explain_inconclusive(results: Sequence[ClaimResult]) -> list[ClaimResult]:
    """Every INCONCLUSIVE claim (after the adjustment) with its reason, its note and the runs that would settle it
    after its family's adjustment (:func:`hare.theory.claims.reasons.explain`); the others as they are."""
    levels = settle_levels(results)
    out = []
    for i, r in enumerate(results):
        if (r.adjusted_status or r.status) != "INCONCLUSIVE":
            out.append(r)
            continue
        reason, note, needed = explain(r, levels.get(i, {}), _threshold_at(r))
        out.append(replace(r, reason=reason, note=note, runs_needed=needed))
    return out


def finish_register(
    results: Sequence[ClaimResult], patterns: Sequence[str] = (), found: Iterable[Undecidable] = ()
) -> list[ClaimResult]:
    """The register's results in their published form: adjusted within families (:func:`adjust_families`), headline
    claims marked (``patterns``) and numbered first (C1, C2, ...; then every other claim in register order), the
    claims no outcome at their run count could decide marked UNDECIDABLE AT THIS SCALE where their runs did not
    decide them anyway (``found``, :func:`hare.theory.claims.decidable.mark_undecidable`), and every INCONCLUSIVE claim
    with the reason it is (:func:`explain_inconclusive`)."""
    ids = claim_ids([r.key for r in results], patterns)
    finished = [replace(r, claim_id=ids[r.key][0], headline=ids[r.key][1]) for r in adjust_families(results)]
    return explain_inconclusive(mark_undecidable(finished, found))


def evaluate_register(
    path: str | Path,
    root: str | Path,
    not_run_inputs: frozenset[str] = frozenset(),
    configs: Iterable[dict[str, Any]] = (),
    keys: Sequence[str] | None = None,
) -> list[ClaimResult]:
    """Every claim of the register, evaluated and finished (:func:`finish_register`); the claims the running
    ``configs`` cannot decide at the run counts they give (:func:`hare.theory.claims.decidable.undecidable`, with the
    margins files under ``root``; without ``configs``, at the run counts of the run files read) are marked. With
    ``keys``, only those claims, unadjusted: their family's other members are not evaluated, so ``adjusted_status``
    is left empty."""
    configs = list(configs)
    claims = load_register(path, configs)
    if keys is not None:
        known = {c["key"] for c in claims}
        unknown = sorted(set(keys) - known)
        if unknown:
            raise ClaimError(f"unknown claim key(s) {unknown}; `hare claims --list` prints every key")
        ids = claim_ids([c["key"] for c in claims], headline_patterns(path))
        chosen = [c for c in claims if c["key"] in set(keys)]
        results = [
            replace(
                evaluate_claim(claim, Path(root), frozenset(not_run_inputs)),
                adjusted_status="",
                claim_id=ids[claim["key"]][0],
                headline=ids[claim["key"]][1],
            )
            for claim in chosen
        ]
        counts = run_counts(configs) if configs else counts_of_results(results)
        return explain_inconclusive(mark_undecidable(results, undecidable(chosen, counts, root)))
    results = [evaluate_claim(claim, Path(root), frozenset(not_run_inputs)) for claim in claims]
    counts = run_counts(configs) if configs else counts_of_results(results)
    return finish_register(results, headline_patterns(path), undecidable(claims, counts, root))
