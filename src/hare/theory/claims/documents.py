"""Writing the claims: ``results/claims.md`` (the counts, the rules, the headline claims, then every claim with its
interval, test, margin, statuses and run counts) and ``results/claims.json`` (:func:`claims_document`, which
:mod:`hare.report.register` renders as the paper's TeX)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from hare.experiments.margins import MARGIN_RULE
from hare.io import write_json, write_text
from hare.theory.claims.decide import ADJUSTMENT, LEVEL, POWER_RULE, evaluate_register
from hare.theory.claims.result import ClaimResult
from hare.verdicts import EQUIVALENT_DIFFERENCE, status_counts


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
        "verdict": r.verdict,
        "reason": r.reason,
        "runs_needed": r.runs_needed,
        "threshold_rule": r.threshold_rule,
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
    """Claims per family-adjusted status (the unadjusted one where there is no adjustment), every status word."""
    return status_counts(r.adjusted_status or r.status for r in results)


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
    its unadjusted and family-adjusted status (its verdict, :attr:`ClaimResult.verdict`), margin, planned and achieved
    run count, half-width and note (why an INCONCLUSIVE claim is, what would decide an UNDECIDABLE one)."""
    counts, adjusted = status_counts(r.status for r in results), adjusted_counts(results)
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
        shown = status if status in ("PASS", "NOT RUN") else f"**{r.verdict}**"
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
        "INCONCLUSIVE when it straddles the threshold and leaves the margin, with its reason (too few runs, effect at "
        "the margin's edge, spread larger than planned) and about the runs that would settle it after its family's "
        "adjustment; UNDECIDABLE AT THIS SCALE when no outcome at the run count this configuration gives could decide "
        "it (a share whose exact bound with no run counted misses its threshold, a comparison given fewer runs than "
        "its tuning runs plan) and its runs did not decide it anyway, with the runs that would; VACUOUS when the "
        "threshold is a bound at or above the trivial bound T * Delta_max, NOT RUN when this configuration produces "
        "none of the claim's run files.",
        "",
        f"{EQUIVALENT_DIFFERENCE}: the verdict EQUIVALENT of a claim whose interval excludes the threshold (0 for a "
        "difference): after the adjustment the runs establish a difference, smaller than the margin δ, not the "
        "absence of one.",
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
