"""The claims register as LaTeX: the macros the paper's prose cites and the compact appendix table.

:func:`register_tex` renders a claims document (``results/claims.json``, written by ``hare claims``) into
``paper/generated/claims.tex``. It reads plain data only: a claim is a mapping with ``id``, ``key``, ``family``,
``headline``, ``statement``, ``binding``, ``measured``, ``low``, ``high``, ``compare``, ``threshold``, ``margin``,
``margin_share`` (delta over the comparator's mean total regret on the tuning runs), ``status`` (unadjusted) and
``adjusted_status``; numbers may be ``None`` (NOT RUN, exact claims, no margin).

Per claim key ``k`` it defines ``\\csname claimstatus@k\\endcsname`` (the adjusted status word), ``claimcode@k``
(its index in :data:`STATUSES`; ``\\claimverdict`` and ``\\asserts`` of paper/main.tex branch on it),
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

Length: one module because the macros, the appendix tables and the headline table are one rendering of one
document: they share its validation, number formats, status words and hypertargets, and every ``\\claimref`` of
the paper must land on a row one of them writes.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hare.io import write_text
from hare.report.latex import escape, format_number, longtable, macros

STATUSES = ("PASS", "FAIL", "EQUIVALENT", "INCONCLUSIVE", "VACUOUS", "NOT RUN")
"""Status words; a claim's ``claimcode@k`` is the index of its adjusted status here (PASS is 0)."""

COLUMNS = (
    ("Id", 0.06),
    ("Statement", 0.3),
    (r"Measured [interval]", 0.22),
    ("Test", 0.08),
    (r"$\delta$ (\%)", 0.09),
    ("Status", 0.125),
    ("Adjusted", 0.125),
)
"""Header and width (fraction of ``\\linewidth``, the column's padding included) of each column of the table of the
headline claims and the claims of no family."""

FAMILY_COLUMNS = (("Id", 0.055), ("Values", 0.19), (r"Measured [interval]", 0.145), ("Status", 0.11)) * 2
"""The family members' table: two claims side by side, each with its id, bound values, measured value and status (the
unadjusted one, then the adjusted one where the adjustment changed it); test and margin are given once per family."""
SHORT_STATUS = {
    "PASS": "pass",
    "FAIL": "fail",
    "EQUIVALENT": "equiv.",
    "INCONCLUSIVE": "inconcl.",
    "VACUOUS": "vacuous",
    "NOT RUN": "not run",
}

TABCOLSEP = "3pt"
SAFE_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")
"""Claim keys and family names become parts of control-sequence names: letters, digits, ``_``, ``.`` and ``-`` only."""
COMPARE_TEX = {"<": "$<$", ">": "$>$", "<=": r"$\le$", ">=": r"$\ge$", "==": "$=$", "!=": r"$\ne$"}


def column_spec(columns: Sequence[tuple[str, float]] = COLUMNS) -> str:
    """A longtable's column specification: ragged-right ``p`` columns whose widths, padding included, add up to
    the sum of the columns' fractions of ``\\linewidth`` (at most the line width)."""
    return "".join(
        rf">{{\raggedright\arraybackslash}}p{{\dimexpr{fraction:g}\linewidth-2\tabcolsep\relax}}"
        for _, fraction in columns
    )


def status_of(claim: Mapping[str, Any]) -> str:
    """The adjusted status (the unadjusted one where the document has no adjustment)."""
    return claim.get("adjusted_status") or claim["status"]


def status_macro(prefix: str, status: str) -> str:
    """``claims`` + ``NOT RUN`` -> ``claimsNotRun``."""
    return prefix + "".join(word.capitalize() for word in status.replace(" ", "_").split("_"))


def status_counts(claims: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    counts = dict.fromkeys(STATUSES, 0)
    for claim in claims:
        counts[status_of(claim)] += 1
    return counts


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _digits(*values: Any) -> int:
    """Decimals for about three significant digits of the largest magnitude among ``values`` (0 to 3)."""
    scale = max((abs(v) for v in values if _finite(v)), default=0.0)
    if scale == 0:
        return 2
    return int(min(3, max(0, 2 - math.floor(math.log10(scale)))))


def number(value: Any, digits: int | None = None) -> str:
    """A number for the register, ``--`` when missing or not finite."""
    if not _finite(value):
        return "--"
    return format_number(float(value), _digits(value) if digits is None else digits)


def margin_tex(claim: Mapping[str, Any]) -> str:
    """``8.83 (10\\%)``: delta in regret and as a percentage of the comparator's mean total regret on the tuning
    runs; delta alone where it is not a share of a regret (a margin on a share of runs); ``--`` without a margin."""
    margin, share = claim.get("margin"), claim.get("margin_share")
    if not _finite(margin):
        return "--"
    if not _finite(share):
        return number(margin)
    return rf"{number(margin)} ({format_number(100 * float(share), 0)}\%)"


def interval_tex(claim: Mapping[str, Any]) -> str:
    """``measured [low, high]``, ``measured`` alone for an exact claim, ``--`` when nothing was measured."""
    measured, low, high = claim.get("measured"), claim.get("low"), claim.get("high")
    if not _finite(measured):
        return "--"
    digits = _digits(measured, low, high)
    if not (_finite(low) and _finite(high)):
        return number(measured, digits)
    return f"{number(measured, digits)} [{number(low, digits)}, {number(high, digits)}]"


def comparison_tex(claim: Mapping[str, Any]) -> str:
    """The comparison the interval must pass: ``$<$ 0``, ``within [a, b]``."""
    compare, threshold = claim.get("compare"), claim.get("threshold")
    if isinstance(threshold, (list, tuple)):
        low, high = threshold
        digits = _digits(low, high)
        return f"within [{_bound(low, digits)}, {_bound(high, digits)}]"
    if compare is None:
        return "--"
    return f"{COMPARE_TEX.get(compare, escape(compare))} {_bound(threshold) if threshold is not None else '--'}"


def _bound(value: Any, digits: int | None = None) -> str:
    """A threshold: whole numbers without decimals (``0``, not ``0.00``)."""
    if _finite(value) and float(value).is_integer() and abs(value) < 1e5:
        return format_number(float(value), 0)
    return number(value, digits)


def status_tex(status: str) -> str:
    return rf"\textsc{{{status.lower()}}}"


def _check(document: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    claims = list(document["claims"])
    seen_keys, seen_ids = set(), set()
    for claim in claims:
        key = claim.get("key")
        if not isinstance(key, str) or not SAFE_NAME.match(key):
            raise ValueError(f"claim key {key!r}: only letters, digits, '_', '.' and '-' may name a claim")
        for field in ("status", "adjusted_status"):
            if claim.get(field) is not None and claim[field] not in STATUSES:
                raise ValueError(f"claim {key}: {field} {claim[field]!r} is not one of {', '.join(STATUSES)}")
        if claim.get("status") is None and claim.get("adjusted_status") is None:
            raise ValueError(f"claim {key}: no status")
        family = claim.get("family")
        if family and not SAFE_NAME.match(family):
            raise ValueError(
                f"claim {key}: family {family!r}: only letters, digits, '_', '.' and '-' may name a family"
            )
        if not isinstance(claim.get("id"), str) or not re.match(r"^[A-Za-z0-9]+$", claim["id"]):
            raise ValueError(f"claim {key}: id {claim.get('id')!r} must be letters and digits (e.g. C17)")
        if key in seen_keys or claim["id"] in seen_ids:
            raise ValueError(f"claim {key} ({claim['id']}): duplicate key or id")
        seen_keys.add(key)
        seen_ids.add(claim["id"])
    return claims


def claim_macros(claims: Sequence[Mapping[str, Any]]) -> list[str]:
    """The per-claim and per-family ``\\csname`` definitions."""
    lines = []
    for claim in claims:
        key, status = claim["key"], status_of(claim)
        lines += [
            rf"\expandafter\def\csname claimstatus@{key}\endcsname{{{status}}}",
            rf"\expandafter\def\csname claimcode@{key}\endcsname{{{STATUSES.index(status)}}}",
            rf"\expandafter\def\csname claiminterval@{key}\endcsname{{{interval_tex(claim)}}}",
            rf"\expandafter\def\csname claimid@{key}\endcsname{{{claim['id']}}}",
            rf"\expandafter\def\csname claimunadjusted@{key}\endcsname{{{claim.get('status') or status}}}",
        ]
    for family in dict.fromkeys(c["family"] for c in claims if c.get("family")):
        members = [c for c in claims if c.get("family") == family]
        for status, n in status_counts(members).items():
            lines.append(rf"\expandafter\def\csname claimfamily@{family}@{status}\endcsname{{{n}}}")
        lines.append(rf"\expandafter\def\csname claimfamily@{family}@total\endcsname{{{len(members)}}}")
    return lines


def total_macros(document: Mapping[str, Any], claims: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    counts = status_counts(claims)
    headline = [c for c in claims if c.get("headline")]
    head_counts = status_counts(headline)
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


def _binding(claim: Mapping[str, Any]) -> dict[str, str]:
    return {str(name): str(value) for name, value in (claim.get("binding") or {}).items()}


def template(claim: Mapping[str, Any]) -> str:
    """The claim's statement, LaTeX-escaped, with every bound value (``binding``) replaced by its name in angle
    brackets, longest value first and on word boundaries: the statement its family's rows share."""
    text = str(claim.get("statement", ""))
    binding = _binding(claim)
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


def _row(claim: Mapping[str, Any], statement: str) -> str:
    cells = [
        rf"\hypertarget{{claim.{claim['id']}}}{{{claim['id']}}}",
        statement,
        interval_tex(claim),
        comparison_tex(claim),
        margin_tex(claim),
        status_tex(claim.get("status") or status_of(claim)),
        status_tex(status_of(claim)),
    ]
    return " & ".join(cells) + r" \\"


def _full_row(text: str, columns: Sequence[tuple[str, float]] = COLUMNS) -> str:
    width = sum(f for _, f in columns)
    return (
        rf"\multicolumn{{{len(columns)}}}"
        r"{@{}>{\raggedright\arraybackslash}"
        rf"p{{{width:g}\linewidth}}@{{}}}}{{{text}}} \\"
    )


def _longtable(caption: str, label: str, body: list[str], columns: Sequence[tuple[str, float]] = COLUMNS) -> str:
    return longtable([name for name, _ in columns], body, column_spec(columns), caption, label)


def _counts_text(claims: Sequence[Mapping[str, Any]]) -> str:
    counts = status_counts(claims)
    return ", ".join(f"{n} {status_tex(s)}" for s, n in counts.items() if n)


def id_ranges(ids: Sequence[str]) -> str:
    """``C3, C4, C5, C9`` -> ``C3--C5, C9`` (ids with a common prefix and consecutive numbers)."""
    parsed = []
    for text in ids:
        match = re.match(r"^(\D*)(\d+)$", text)
        parsed.append((match.group(1), int(match.group(2))) if match else (text, None))
    parts, i = [], 0
    while i < len(parsed):
        prefix, n = parsed[i]
        j = i
        while n is not None and j + 1 < len(parsed) and parsed[j + 1] == (prefix, parsed[j][1] + 1):
            j += 1
        parts.append(ids[i] if j == i else f"{ids[i]}--{ids[j]}")
        i = j + 1
    return ", ".join(parts)


def _text(text: str) -> str:
    """Escaped text that may break after an underscore (identifiers in statements and bound values)."""
    return escape(text).replace(r"\_", r"\_\allowbreak{}")


def _member_cells(claim: Mapping[str, Any], values: str) -> list[str]:
    before, after = claim.get("status") or status_of(claim), status_of(claim)
    status = rf"\textsc{{{SHORT_STATUS[before]}}}" + (
        "" if before == after else rf" $\to$ \textsc{{{SHORT_STATUS[after]}}}"
    )
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
                _full_row(
                    rf"\textbf{{{escape(family)}}}{targets} ({len(members)} that ran: {_counts_text(members)}"
                    rf"{'; ' + shared if shared else ''}): every member is a cell of {figure}; ids "
                    rf"{id_ranges([c['id'] for c in members])}.",
                    FAMILY_COLUMNS,
                )
            )
            continue
        body.append(
            _full_row(
                rf"\textbf{{{escape(family)}}} ({len(members)} that ran: "
                rf"{_counts_text(members)}{'; ' + shared if shared else ''})",
                FAMILY_COLUMNS,
            )
        )
        groups: dict[str, list[Mapping[str, Any]]] = {}
        for claim in members:
            groups.setdefault(template(claim), []).append(claim)
        for text, group in groups.items():
            bound = all(_binding(c) for c in group)
            if bound:
                body.append(_full_row(r"\quad " + text, FAMILY_COLUMNS))
            cells = [
                _member_cells(
                    c, ", ".join(_text(v) for v in _binding(c).values()) if bound else _text(c.get("statement", ""))
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
    binding = sorted(_binding(claim).items(), key=lambda item: len(item[1]), reverse=True)
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


def headline_tex(claims: Sequence[Mapping[str, Any]], level: str) -> str:
    r"""``\claimsHeadlineTable``: the headline claims, one row each (:data:`HEADLINE_COLUMNS`), with their statements in
    readable names; the rows carry the claims' ``\hypertarget``s."""
    headline = [c for c in claims if c.get("headline")]
    body = []
    for c in (c for c in headline if status_of(c) != "NOT RUN"):
        before, after = c.get("status") or status_of(c), status_of(c)
        verdict = status_tex(after) + ("" if before == after else rf" (unadj.\ {status_tex(before)})")
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
    counts = status_counts(headline)
    not_run = [c for c in headline if status_of(c) == "NOT RUN"]
    caption = (
        rf"The headline claims: {counts['PASS']} pass, {counts['FAIL']} fail, "
        rf"{counts['EQUIVALENT']} are equivalent and "
        rf"{counts['INCONCLUSIVE']} inconclusive after the adjustment for multiplicity within their families"
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
    table = _longtable(caption, "tab:headline", body, HEADLINE_COLUMNS) if body else ""
    table += "".join(rf"\hypertarget{{claim.{c['id']}}}{{}}" for c in not_run)
    open_claims = [c for c in headline if status_of(c) == "INCONCLUSIVE"]
    if open_claims:
        table += (
            "\n\\par\\noindent\\emph{What would settle the inconclusive headline claims.} "
            + "; ".join(
                f"{c['id']}: {escape(c.get('note') or 'no run count settles it without a margin')}" for c in open_claims
            )
            + ".\\par"
        )
    return (
        rf"\newcommand{{\claimsHeadlineTable}}{{{{\footnotesize\setlength{{\tabcolsep}}{{{TABCOLSEP}}}"
        rf"\setlength{{\LTcapwidth}}{{\linewidth}}" + "\n" + table + "\n}}\n"
    )


def register_tex(document: Mapping[str, Any]) -> str:
    """Everything ``paper/generated/claims.tex`` defines, from a claims document (see the module docstring)."""
    claims = _check(document)
    level = f"{100 * float(document.get('level', 0.95)):g}"
    single = [c for c in claims if not c.get("headline") and not c.get("family") and status_of(c) != "NOT RUN"]
    members = [c for c in claims if not c.get("headline") and c.get("family") and status_of(c) != "NOT RUN"]
    not_run = [c for c in claims if not c.get("headline") and status_of(c) == "NOT RUN"]
    legend = (
        rf"Measured value and its {level}\% interval; \emph{{Test}}: the comparison the interval is decided "
        r"against; $\delta$: the claim's equivalence margin, with its percentage of the comparator's mean total "
        r"regret on the tuning runs (EQUIVALENT when the interval lies inside $\pm\delta$); \emph{Status} before "
        r"and \emph{Adjusted} after the adjustment for multiplicity "
        r"within each family (\claimsAdjustment)."
    )
    tables = []
    first = single
    if first:
        body = [_row(c, _text(c.get("statement", ""))) for c in single]
        tables.append(
            _longtable(
                r"The claims of no family that are not headline claims (those are in Table~\ref{tab:headline}). "
                + legend,
                "tab:claims",
                body,
            )
        )
    if members:
        tables.append(
            _longtable(
                f"The members of the families that ran ({len(members)} claims), two a row; "
                r"a family drawn as a claims matrix has one line that points to its figure. "
                r"Within a family, a statement line names the bound values in angle brackets and each member "
                r"gives its values; the status is the unadjusted one, then ($\to$) the adjusted one where the "
                r"adjustment changed it. Full statements, inputs and methods are in \texttt{results/claims.md}.",
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
        + headline_tex(claims, level)
    )


def write_register_tex(path: str | os.PathLike, document: Mapping[str, Any]) -> None:
    """Write :func:`register_tex` of ``document`` to ``path`` (``paper/generated/claims.tex``), atomically."""
    write_text(path, register_tex(document))
