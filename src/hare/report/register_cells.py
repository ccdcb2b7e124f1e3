"""The cells and layout pieces of the claims register's LaTeX (:mod:`hare.report.register`): numbers with about three
significant digits, ``measured [low, high]`` intervals, the comparison a claim is decided against, its margin and
status words, the ragged-right longtable columns, id ranges, and the validation of a claims document (keys and family
names that become parts of control-sequence names, known status words, unique ids)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hare.report.latex import escape, format_number, longtable
from hare.verdicts import STATUSES, UNDECIDABLE, excludes_threshold, status_counts

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
    UNDECIDABLE: "undecid.",
    "VACUOUS": "vacuous",
    "NOT RUN": "not run",
}
SHORT_REASON = {"too few runs": "runs", "effect at the margin's edge": "edge", "spread larger than planned": "spread"}
"""The reason an INCONCLUSIVE member is (:data:`hare.verdicts.REASONS`) in one word, beside its short status."""

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


def adjusted_counts(claims: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Claims per adjusted status (:func:`status_of`), every word of :data:`hare.verdicts.STATUSES` in its order."""
    return status_counts(status_of(claim) for claim in claims)


def is_finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def digits_for(*values: Any) -> int:
    """Decimals for about three significant digits of the largest magnitude among ``values`` (0 to 3)."""
    scale = max((abs(v) for v in values if is_finite(v)), default=0.0)
    if scale == 0:
        return 2
    return int(min(3, max(0, 2 - math.floor(math.log10(scale)))))


def number(value: Any, digits: int | None = None) -> str:
    """A number for the register, ``--`` when missing or not finite."""
    if not is_finite(value):
        return "--"
    return format_number(float(value), digits_for(value) if digits is None else digits)


def margin_tex(claim: Mapping[str, Any]) -> str:
    """``8.83 (10\\%)``: delta in regret and as a percentage of the comparator's mean total regret on the tuning
    runs; delta alone where it is not a share of a regret (a margin on a share of runs); ``--`` without a margin."""
    margin, share = claim.get("margin"), claim.get("margin_share")
    if not is_finite(margin):
        return "--"
    if not is_finite(share):
        return number(margin)
    return rf"{number(margin)} ({format_number(100 * float(share), 0)}\%)"


def interval_tex(claim: Mapping[str, Any]) -> str:
    """``measured [low, high]``, ``measured`` alone for an exact claim, ``--`` when nothing was measured."""
    measured, low, high = claim.get("measured"), claim.get("low"), claim.get("high")
    if not is_finite(measured):
        return "--"
    digits = digits_for(measured, low, high)
    if not (is_finite(low) and is_finite(high)):
        return number(measured, digits)
    return f"{number(measured, digits)} [{number(low, digits)}, {number(high, digits)}]"


def comparison_tex(claim: Mapping[str, Any]) -> str:
    """The comparison the interval must pass: ``$<$ 0``, ``within [a, b]``."""
    compare, threshold = claim.get("compare"), claim.get("threshold")
    if isinstance(threshold, (list, tuple)):
        low, high = threshold
        digits = digits_for(low, high)
        return f"within [{_bound(low, digits)}, {_bound(high, digits)}]"
    if compare is None:
        return "--"
    return f"{COMPARE_TEX.get(compare, escape(compare))} {_bound(threshold) if threshold is not None else '--'}"


def _bound(value: Any, digits: int | None = None) -> str:
    """A threshold: whole numbers without decimals (``0``, not ``0.00``)."""
    if is_finite(value) and float(value).is_integer() and abs(value) < 1e5:
        return format_number(float(value), 0)
    return number(value, digits)


def status_tex(status: str) -> str:
    return rf"\textsc{{{status.lower()}}}"


def differs_within_margin(claim: Mapping[str, Any], status: str | None = None) -> bool:
    """An EQUIVALENT verdict (``status``, else the adjusted one) whose interval excludes the threshold: a difference
    the runs establish, smaller than delta (:func:`hare.verdicts.verdict_text`)."""
    low, high, threshold = claim.get("low"), claim.get("high"), claim.get("threshold")
    return (
        (status or status_of(claim)) == "EQUIVALENT"
        and all(is_finite(v) for v in (low, high, threshold))
        and excludes_threshold(float(low), float(high), float(threshold))
    )


def verdict_word(claim: Mapping[str, Any]) -> str:
    """The adjusted status word, qualified where it is a difference within the margin (:func:`differs_within_margin`):
    what ``\\claimref`` prints."""
    status = status_of(claim)
    return status + (r" (a difference smaller than $\delta$)" if differs_within_margin(claim, status) else "")


def verdict_tex(claim: Mapping[str, Any], status: str | None = None, short: bool = False) -> str:
    """A status word of ``claim`` (its adjusted one unless ``status``) as the tables print it: an EQUIVALENT verdict
    whose interval excludes the threshold qualified as a difference smaller than delta
    (:func:`hare.verdicts.verdict_text`), an INCONCLUSIVE one with its reason, an UNDECIDABLE one with the runs that
    would decide it; ``short``: the family table's words (:data:`SHORT_STATUS`, :data:`SHORT_REASON`)."""
    status = status or status_of(claim)
    text = rf"\textsc{{{SHORT_STATUS[status] if short else status.lower()}}}"
    if differs_within_margin(claim, status):
        text += r" (diff.\,${<}\,\delta$)" if short else r" (a difference smaller than $\delta$)"
    reason = claim.get("reason")
    if status == "INCONCLUSIVE" and status == status_of(claim) and reason in SHORT_REASON:
        text += f" ({SHORT_REASON[reason]})" if short else f" ({escape(reason)})"
    needed = claim.get("runs_needed")
    if status == UNDECIDABLE and isinstance(needed, int):
        text += f" ({needed})" if short else f" ({needed} runs would decide it)"
    return text


def check_document(document: Mapping[str, Any]) -> list[Mapping[str, Any]]:
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


def binding_of(claim: Mapping[str, Any]) -> dict[str, str]:
    return {str(name): str(value) for name, value in (claim.get("binding") or {}).items()}


def full_row(text: str, columns: Sequence[tuple[str, float]] = COLUMNS) -> str:
    width = sum(f for _, f in columns)
    return (
        rf"\multicolumn{{{len(columns)}}}"
        r"{@{}>{\raggedright\arraybackslash}"
        rf"p{{{width:g}\linewidth}}@{{}}}}{{{text}}} \\"
    )


def longtable_of(caption: str, label: str, body: list[str], columns: Sequence[tuple[str, float]] = COLUMNS) -> str:
    return longtable([name for name, _ in columns], body, column_spec(columns), caption, label)


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


def breakable(text: str) -> str:
    """Escaped text that may break after an underscore (identifiers in statements and bound values)."""
    return escape(text).replace(r"\_", r"\_\allowbreak{}")
