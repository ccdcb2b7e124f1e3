"""The family members' rows of the register's appendix table (:data:`hare.report.register_cells.FAMILY_COLUMNS`): per
family a line with its counts, test and margin, a statement line for every distinct :func:`template` (the statement
with its bound values as placeholders), then the members two a row; a family drawn as a claims matrix gets one line
pointing to its figure; the NOT RUN claims listed by id."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from hare.report.latex import escape
from hare.report.register_cells import (
    FAMILY_COLUMNS,
    SHORT_STATUS,
    adjusted_counts,
    binding_of,
    breakable,
    comparison_tex,
    full_row,
    id_ranges,
    interval_tex,
    margin_tex,
    status_of,
    status_tex,
    verdict_tex,
)


def template(claim: Mapping[str, Any]) -> str:
    """The claim's statement, LaTeX-escaped, with every bound value (``binding``) replaced by its name in angle
    brackets, longest value first and on word boundaries: the statement its family's rows share."""
    text = str(claim.get("statement", ""))
    binding = binding_of(claim)
    marks = {}
    for i, (name, value) in enumerate(sorted(binding.items(), key=lambda item: -len(item[1]))):
        if value:
            mark = f"\x00{i}\x00"
            text, n = re.subn(rf"(?<![\w.]){re.escape(value)}(?![\w]|\.\d)", mark, text)
            if n:
                marks[mark] = rf"\textit{{$\langle${escape(name)}$\rangle$}}"
    text = escape(text)
    for mark, tex in marks.items():
        text = text.replace(mark, tex)
    return text


def counts_text(claims: Sequence[Mapping[str, Any]]) -> str:
    counts = adjusted_counts(claims)
    return ", ".join(f"{n} {status_tex(s)}" for s, n in counts.items() if n)


def _member_cells(claim: Mapping[str, Any], values: str) -> list[str]:
    before, after = claim.get("status") or status_of(claim), status_of(claim)
    status = verdict_tex(claim, after, short=True)
    if before != after:
        status = rf"\textsc{{{SHORT_STATUS[before]}}} $\to$ " + status
    return [rf"\hypertarget{{claim.{claim['id']}}}{{{claim['id']}}}", values, interval_tex(claim), status]


def _shared(members: Sequence[Mapping[str, Any]]) -> str:
    """The family's test and margin, when every member has the same (else each member's statement says it)."""
    tests = {comparison_tex(c) for c in members}
    margins = {margin_tex(c) for c in members}
    parts = [f"test {tests.pop()}"] if len(tests) == 1 else []
    if len(margins) == 1:
        parts.append(rf"$\delta$ {margins.pop()}")
    return "; ".join(parts)


MATRIX_MIN_MEMBERS = 12
"""Families with more members than this (all members, NOT RUN and headline ones included) are drawn as claims
matrices (notebooks/claims_matrix.py, parameter ``min_members``); the register gives them one line each and points
to the figure instead of a row per member."""


def drawn_families(claims: Sequence[Mapping[str, Any]]) -> set[str]:
    sizes: dict[str, int] = {}
    for claim in claims:
        if claim.get("family"):
            sizes[claim["family"]] = sizes.get(claim["family"], 0) + 1
    return {family for family, n in sizes.items() if n > MATRIX_MIN_MEMBERS}


def family_body(claims: Sequence[Mapping[str, Any]], drawn: set[str] = frozenset()) -> list[str]:
    """Rows of the family members that ran (:data:`FAMILY_COLUMNS`, two claims a row), by family: a family line (name,
    counts, test and margin), a shared statement line for every distinct :func:`template`, then the members, each
    naming its bound values (its statement where it has none)."""
    body: list[str] = []
    for family in dict.fromkeys(c["family"] for c in claims if c.get("family")):
        members = [c for c in claims if c.get("family") == family]
        if body:
            body.append(r"\midrule")
        shared = _shared(members)
        if family in drawn:
            figure = (
                r"Figure~\ref{fig:claims-matrix}"
                if family == "hare_vs_baselines"
                else r"Figure~\ref{fig:claims-matrix-families}"
            )
            targets = "".join(rf"\hypertarget{{claim.{c['id']}}}{{}}" for c in members)
            body.append(
                full_row(
                    rf"\textbf{{{escape(family)}}}{targets} ({len(members)} that ran: {counts_text(members)}"
                    rf"{'; ' + shared if shared else ''}): every member is a cell of {figure}; ids "
                    rf"{id_ranges([c['id'] for c in members])}.",
                    FAMILY_COLUMNS,
                )
            )
            continue
        body.append(
            full_row(
                rf"\textbf{{{escape(family)}}} ({len(members)} that ran: "
                rf"{counts_text(members)}{'; ' + shared if shared else ''})",
                FAMILY_COLUMNS,
            )
        )
        groups: dict[str, list[Mapping[str, Any]]] = {}
        for claim in members:
            groups.setdefault(template(claim), []).append(claim)
        for text, group in groups.items():
            bound = all(binding_of(c) for c in group)
            if bound:
                body.append(full_row(r"\quad " + text, FAMILY_COLUMNS))
            cells = [
                _member_cells(
                    c,
                    ", ".join(breakable(v) for v in binding_of(c).values())
                    if bound
                    else breakable(c.get("statement", "")),
                )
                for c in group
            ]
            for i in range(0, len(cells), 2):
                pair = cells[i] + (cells[i + 1] if i + 1 < len(cells) else [""] * 4)
                body.append(" & ".join(pair) + r" \\")
    return body


def not_run_tex(claims: Sequence[Mapping[str, Any]]) -> str:
    """The NOT RUN claims (not headline ones, which their table lists): a count and the ids per family, each id an
    empty ``\\hypertarget`` so that ``\\claimref`` links land here."""
    if not claims:
        return ""
    targets = "".join(rf"\hypertarget{{claim.{c['id']}}}{{}}" for c in claims)
    families = list(dict.fromkeys(c.get("family") or "" for c in claims))
    parts = []
    for family in families:
        ids = [c["id"] for c in claims if (c.get("family") or "") == family]
        parts.append(rf"{escape(family) if family else 'no family'} ({len(ids)}: {id_ranges(ids)})")
    return (
        rf"\paragraph{{NOT RUN in this configuration.}}{targets} The configuration produces none of the inputs of "
        rf"these {len(claims)} claims (statements in \texttt{{results/claims.md}}): " + "; ".join(parts) + ".\n"
    )
