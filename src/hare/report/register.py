"""The claims register as LaTeX: the macros the paper's prose cites and the compact appendix table.

:func:`register_tex` renders a claims document (``results/claims.json``, written by ``hare claims``) into
``paper/generated/claims.tex``. It reads plain data only: a claim is a mapping with ``id``, ``key``, ``family``,
``headline``, ``statement``, ``binding``, ``measured``, ``low``, ``high``, ``compare``, ``threshold``, ``margin``,
``margin_share`` (delta over the comparator's mean total regret on the tuning runs), ``status`` (unadjusted) and
``adjusted_status``; numbers may be ``None`` (NOT RUN, exact claims, no margin).

Per claim key ``k`` it defines ``\\csname claimstatus@k\\endcsname`` (the adjusted status word, an EQUIVALENT one
whose interval excludes the threshold qualified as a difference smaller than delta), ``claimcode@k``
(its index in :data:`hare.verdicts.STATUSES`; ``\\claimverdict`` and ``\\asserts`` of paper/main.tex branch on it),
``claiminterval@k`` (measured [low, high]), ``claimid@k`` (the short id, e.g. C17) and ``claimunadjusted@k``; per
family ``f`` and status ``S`` ``claimfamily@f@S`` and ``claimfamily@f@total``; the totals (``\\claimsTotal``,
``\\claimsPassed``, one macro per status, the same for the headline claims, ``\\claimsLevel``,
``\\claimsAdjustment``, ``\\claimsMarginRule``: the margin rule, a noun phrase); and ``\\claimsTable``.

The table puts the headline claims first, in a table of their own with their statements; then every other claim
that ran, grouped by family. Within a family, claims whose statements differ only in their bound values
(``binding``) share one statement line, in which the values are placeholders, and each row names only its values.
NOT RUN claims are listed by id, per family. Every row's id carries ``\\hypertarget{claim.<id>}`` for ``\\claimref``.
``\\claimsHeadlineTable`` is the body's table of the headline claims (readable names, margin, reported and planned
runs, verdict) with a sentence per inconclusive one on how many runs would settle it.

The cells and the validation are :mod:`hare.report.register_cells`, the family rows
:mod:`hare.report.register_families`, the headline table :mod:`hare.report.register_headline`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from hare.io import write_text
from hare.report.latex import escape, macros
from hare.report.register_cells import (
    FAMILY_COLUMNS,
    TABCOLSEP,
    adjusted_counts,
    breakable,
    check_document,
    comparison_tex,
    interval_tex,
    longtable_of,
    margin_tex,
    status_macro,
    status_of,
    status_tex,
    verdict_tex,
    verdict_word,
)
from hare.report.register_families import drawn_families, family_body, not_run_tex
from hare.report.register_headline import headline_tex
from hare.verdicts import STATUSES


def claim_macros(claims: Sequence[Mapping[str, Any]]) -> list[str]:
    """The per-claim and per-family ``\\csname`` definitions."""
    lines = []
    for claim in claims:
        key, status = claim["key"], status_of(claim)
        lines += [
            rf"\expandafter\def\csname claimstatus@{key}\endcsname{{{verdict_word(claim)}}}",
            rf"\expandafter\def\csname claimcode@{key}\endcsname{{{STATUSES.index(status)}}}",
            rf"\expandafter\def\csname claiminterval@{key}\endcsname{{{interval_tex(claim)}}}",
            rf"\expandafter\def\csname claimid@{key}\endcsname{{{claim['id']}}}",
            rf"\expandafter\def\csname claimunadjusted@{key}\endcsname{{{claim.get('status') or status}}}",
        ]
    for family in dict.fromkeys(c["family"] for c in claims if c.get("family")):
        members = [c for c in claims if c.get("family") == family]
        for status, n in adjusted_counts(members).items():
            lines.append(rf"\expandafter\def\csname claimfamily@{family}@{status}\endcsname{{{n}}}")
        lines.append(rf"\expandafter\def\csname claimfamily@{family}@total\endcsname{{{len(members)}}}")
    return lines


def total_macros(document: Mapping[str, Any], claims: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    counts = adjusted_counts(claims)
    headline = [c for c in claims if c.get("headline")]
    head_counts = adjusted_counts(headline)
    values = {
        "claimsTotal": str(len(claims)),
        "claimsPassed": str(counts["PASS"]),
        "claimsHeadlineTotal": str(len(headline)),
        "claimsHeadlinePassed": str(head_counts["PASS"]),
        "claimsLevel": f"{100 * float(document.get('level', 0.95)):g}\\%",
        "claimsAdjustment": escape(document.get("adjustment") or "no adjustment for multiplicity"),
        "claimsMarginRule": escape(document.get("margin_rule") or "not stated"),
    }
    values.update({status_macro("claims", s): str(n) for s, n in counts.items()})
    values.update({status_macro("claimsHeadline", s): str(n) for s, n in head_counts.items()})
    return values


def _row(claim: Mapping[str, Any], statement: str) -> str:
    cells = [
        rf"\hypertarget{{claim.{claim['id']}}}{{{claim['id']}}}",
        statement,
        interval_tex(claim),
        comparison_tex(claim),
        margin_tex(claim),
        status_tex(claim.get("status") or status_of(claim)),
        verdict_tex(claim),
    ]
    return " & ".join(cells) + r" \\"


def register_tex(document: Mapping[str, Any], scale: Mapping[str, Any] | None = None) -> str:
    """Everything ``paper/generated/claims.tex`` defines, from a claims document (see the module docstring);
    ``scale``: another build's readings of the headline claims, set beside them (:func:`headline_tex`)."""
    claims = check_document(document)
    level = f"{100 * float(document.get('level', 0.95)):g}"
    single = [c for c in claims if not c.get("headline") and not c.get("family") and status_of(c) != "NOT RUN"]
    members = [c for c in claims if not c.get("headline") and c.get("family") and status_of(c) != "NOT RUN"]
    not_run = [c for c in claims if not c.get("headline") and status_of(c) == "NOT RUN"]
    legend = (
        rf"Measured value and its {level}\% interval; \emph{{Test}}: the comparison the interval is decided "
        r"against; $\delta$: the claim's equivalence margin, with its percentage of the comparator's mean total "
        r"regret on the tuning runs (EQUIVALENT when the interval lies inside $\pm\delta$); \emph{Status} before "
        r"and \emph{Adjusted} after the adjustment for multiplicity "
        r"within each family (\claimsAdjustment), with an inconclusive claim's reason and the runs that would decide "
        r"one undecidable at this scale (no outcome at its run count could). An equivalent claim whose interval "
        r"excludes the threshold differs from it, by less than $\delta$."
    )
    tables = []
    first = single
    if first:
        body = [_row(c, breakable(c.get("statement", ""))) for c in single]
        tables.append(
            longtable_of(
                r"The claims of no family that are not headline claims (those are in Table~\ref{tab:headline}). "
                + legend,
                "tab:claims",
                body,
            )
        )
    if members:
        tables.append(
            longtable_of(
                f"The members of the families that ran ({len(members)} claims), two a row; "
                r"a family drawn as a claims matrix has one line that points to its figure. "
                r"Within a family, a statement line names the bound values in angle brackets and each member "
                r"gives its values; the status is the unadjusted one, then ($\to$) the adjusted one where the "
                r"adjustment changed it; diff.\,${<}\,\delta$: an equivalent claim whose interval excludes the "
                r"threshold (a difference smaller than $\delta$); an inconclusive claim's reason: runs (too few), "
                r"edge (effect at the margin's edge), spread (larger than planned); undecid.\ ($n$): no outcome at "
                r"its run count could decide it, $n$ runs would. Full statements, inputs and methods are in "
                r"\texttt{results/claims.md}.",
                "tab:claims-all" if first else "tab:claims",
                family_body(members, drawn_families(claims)),
                FAMILY_COLUMNS,
            )
        )
    table = (
        rf"{{\scriptsize\setlength{{\tabcolsep}}{{{TABCOLSEP}}}\setlength{{\LTcapwidth}}{{\linewidth}}"
        + "\n"
        + "\n".join(tables)
        + "\n"
        + not_run_tex(not_run)
        + "}"
    )
    return (
        "% Generated from results/claims.json by hare.report.register; do not edit.\n"
        + macros(total_macros(document, claims))
        + "\n".join(claim_macros(claims))
        + "\n\\newcommand{\\claimsTable}{%\n"
        + table
        + "%\n}\n"
        + headline_tex(claims, level, scale)
    )


def write_register_tex(
    path: str | os.PathLike, document: Mapping[str, Any], scale: Mapping[str, Any] | None = None
) -> None:
    """Write :func:`register_tex` of ``document`` (and ``scale``) to ``path`` (``paper/generated/claims.tex``),
    atomically."""
    write_text(path, register_tex(document, scale))
