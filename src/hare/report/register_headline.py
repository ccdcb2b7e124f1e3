"""``\\claimsHeadlineTable``: the body's table of the headline claims (readable names, measured value with its
interval, margin, reported and planned runs, verdict: an EQUIVALENT one whose interval excludes 0 as a difference
smaller than delta, an INCONCLUSIVE one with its reason), with a sentence per inconclusive or undecidable one on why
and how many runs would settle it."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from hare.report.claims_comparison import scale_differences
from hare.report.latex import escape
from hare.report.register_cells import (
    TABCOLSEP,
    adjusted_counts,
    binding_of,
    id_ranges,
    interval_tex,
    longtable_of,
    margin_tex,
    status_of,
    status_tex,
    verdict_tex,
)
from hare.verdicts import UNDECIDABLE

HEADLINE_COLUMNS = (
    ("Id", 0.05),
    ("Claim", 0.36),
    (r"Measured [95\% interval]", 0.2),
    (r"$\delta$ (\% of comparator)", 0.12),
    ("Runs", 0.08),
    ("Verdict", 0.19),
)
"""The body's table of the headline claims: runs are ``ran / planned`` (the power calculation on the tuning runs),
the verdict is the adjusted status (with the unadjusted one where the adjustment changed it)."""


def readable_statement(claim: Mapping[str, Any], text: str | None = None) -> str:
    """The statement (or ``text``) with every bound value a reader would not recognise (a config label) shown by its
    display name (:data:`hare.report.names.DISPLAY_NAMES`; an experiment name as words, ``classification_warm`` ->
    classification, warm), LaTeX-escaped."""
    return _readable(str(claim.get("statement", "")) if text is None else text, claim, regimes=False)


def readable_label(claim: Mapping[str, Any]) -> str:
    """The claim's short ``label`` for the headline table (its statement where it has none), with display names and
    a bound experiment shown as its regime (cold, warm)."""
    if not claim.get("label"):
        return readable_statement(claim)
    return _readable(str(claim["label"]), claim, regimes=True)


def _readable(text: str, claim: Mapping[str, Any], regimes: bool) -> str:
    from hare.report.names import DISPLAY_NAMES

    marks = {}
    binding = sorted(binding_of(claim).items(), key=lambda item: len(item[1]), reverse=True)
    for i, (name, value) in enumerate(binding):
        if regimes and name == "experiment":
            shown = "warm" if value.endswith("_warm") else "cold"
        else:
            shown = DISPLAY_NAMES.get(value, value.replace("_warm", ", warm").replace("_", " "))
        mark = f"\x00{i}\x00"
        text = re.sub(rf"(?<![A-Za-z0-9_]){re.escape(value)}(?![A-Za-z0-9_])", mark, text)
        marks[mark] = escape(shown)
    text = escape(text)
    for mark, shown in marks.items():
        text = text.replace(escape(mark), shown).replace(mark, shown)
    return text


def _runs_cell(claim: Mapping[str, Any]) -> str:
    ran, planned = claim.get("n_runs"), claim.get("planned_runs")
    if ran is None:
        return "--"
    return f"{ran}" + (f" / {planned}" if planned is not None else "")


def scale_paragraph(
    claims: Sequence[Mapping[str, Any]], readings: Mapping[str, Mapping[str, Any]], scale: Mapping[str, Any]
) -> str:
    """The paragraph under the headline table for the claims (dagger) whose verdict differs in the ``scale`` build:
    each with this build's verdict and interval and the other build's."""
    items = [
        f"{c['id']}: {status_tex(status_of(c))} {interval_tex(c)} here, "
        f"{status_tex(status_of(readings[c['key']]))} {interval_tex(readings[c['key']])} there"
        + (f" ({readings[c['key']]['n_runs']} runs)" if readings[c["key"]].get("n_runs") else "")
        for c in claims
    ]
    return (
        "\n\\par\\noindent$^{\\dagger}$\\emph{Verdict at the paper's scale.} "
        + escape(str(scale.get("description") or scale.get("label") or "the paper's scale"))
        + f" reads {len(items)} of these claims otherwise: "
        + "; ".join(items)
        + ".\\par"
    )


def headline_tex(claims: Sequence[Mapping[str, Any]], level: str, scale: Mapping[str, Any] | None = None) -> str:
    r"""``\claimsHeadlineTable``: the headline claims, one row each (:data:`HEADLINE_COLUMNS`), with their statements in
    readable names; the rows carry the claims' ``\hypertarget``s.

    ``scale``: another build's readings of the same claims (:func:`hare.report.claims_comparison.scale_reference`,
    the paper-core build at the paper's scale); a verdict that differs there is marked with a dagger and both
    readings are set out under the table (:func:`scale_paragraph`)."""
    headline = [c for c in claims if c.get("headline")]
    differing = {claim["key"]: reading for claim, reading in scale_differences(list(headline), scale or {})}
    body = []
    for c in (c for c in headline if status_of(c) != "NOT RUN"):
        before, after = c.get("status") or status_of(c), status_of(c)
        verdict = verdict_tex(c) + ("" if before == after else rf" (unadj.\ {status_tex(before)})")
        verdict += r"$^{\dagger}$" if c["key"] in differing else ""
        body.append(
            " & ".join(
                [
                    rf"\hypertarget{{claim.{c['id']}}}{{{c['id']}}}",
                    readable_label(c),
                    interval_tex(c),
                    margin_tex(c),
                    _runs_cell(c),
                    verdict,
                ]
            )
            + r" \\"
        )
    counts = adjusted_counts(headline)
    not_run = [c for c in headline if status_of(c) == "NOT RUN"]
    caption = (
        rf"The headline claims: {counts['PASS']} pass, {counts['FAIL']} fail, "
        rf"{counts['EQUIVALENT']} are equivalent and "
        rf"{counts['INCONCLUSIVE']} inconclusive after the adjustment for multiplicity within their families"
        + (rf", {counts[UNDECIDABLE]} undecidable at this scale" if counts[UNDECIDABLE] else "")
        + (rf", {counts['NOT RUN']} not run" if counts["NOT RUN"] else "")
        + ". "
        rf"Measured value with its {level}\% interval (a paired difference over runs: total regret, lower favours "
        r"the first policy named); $\delta$: the comparison's equivalence margin, in regret and as a percentage of the "
        r"comparator's mean total regret on the tuning runs; runs: reported / planned by "
        r"the power calculation on the tuning runs (half-width at most $\delta/2$)."
    )
    if not_run:
        caption += (
            rf" Not run in this configuration: {id_ranges([c['id'] for c in not_run])} "
            r"(datasets of the paper configuration)."
        )
    table = longtable_of(caption, "tab:headline", body, HEADLINE_COLUMNS) if body else ""
    table += "".join(rf"\hypertarget{{claim.{c['id']}}}{{}}" for c in not_run)
    open_claims = [c for c in headline if status_of(c) in ("INCONCLUSIVE", UNDECIDABLE)]
    if open_claims:
        undecided = "undecided" if any(status_of(c) == UNDECIDABLE for c in open_claims) else "inconclusive"
        table += (
            f"\n\\par\\noindent\\emph{{What would settle the {undecided} headline claims.}} "
            + "; ".join(
                f"{c['id']}: {escape(c.get('note') or 'no run count settles it without a margin')}" for c in open_claims
            )
            + ".\\par"
        )
    if differing:
        table += scale_paragraph([c for c in headline if c["key"] in differing], differing, scale or {})
    return (
        rf"\newcommand{{\claimsHeadlineTable}}{{{{\footnotesize\setlength{{\tabcolsep}}{{{TABCOLSEP}}}"
        rf"\setlength{{\LTcapwidth}}{{\linewidth}}" + "\n" + table + "\n}}\n"
    )
