"""The claims a build decided, read for the README's blocks (:mod:`hare.report.readme`) from the build's own files.

``results/claims.json`` when the build wrote it (statuses, the family-adjusted verdicts, the headline claims and the
interval level; :func:`claims_from_json`), else the tables of ``results/claims.md`` (:func:`claims_from_markdown`,
columns found by their header). Either gives :class:`Claims`: one :class:`ClaimLine` per claim, in register order,
``value`` the measured number with its interval (``measured [low, high]``) and ``needed`` the comparison it must meet.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ClaimLine:
    """One claim as the summaries show it: ``value`` is ``measured [low, high]``, ``needed`` the comparison it must
    satisfy, ``adjusted`` the family-adjusted verdict (empty when the build has none)."""

    key: str
    status: str
    value: str
    needed: str
    adjusted: str = ""
    claim_id: str = ""
    headline: bool = False

    @property
    def verdict(self) -> str:
        """The published verdict: the adjusted one where the build made one, else the status."""
        return self.adjusted or self.status


@dataclass(frozen=True)
class Claims:
    """A build's claims, in register order, with the adjustment the build describes (empty when none)."""

    lines: tuple[ClaimLine, ...]
    level: float = 0.95
    adjustment: str = ""


def _number(value: float, digits: int = 3) -> str:
    return f"{value:.{digits}g}"


def _json_claim(entry: dict[str, Any]) -> ClaimLine:
    measured, low, high = entry.get("measured"), entry.get("low"), entry.get("high")
    if measured is None:
        value = "--"
    elif low is None or high is None:
        value = f"{_number(measured)} (exact)"
    else:
        value = f"{_number(measured)} [{_number(low)}, {_number(high)}]"
    threshold = entry.get("threshold")
    compare = str(entry.get("compare", ""))
    if isinstance(threshold, list | tuple):
        needed = f"{compare} [{_number(threshold[0], 4)}, {_number(threshold[1], 4)}]"
    elif threshold is None:
        needed = compare
    else:
        needed = f"{compare} {_number(threshold, 4)}"
    margin = entry.get("margin")
    if margin is not None and entry.get("status") == "EQUIVALENT":
        needed += f" (margin {_number(margin, 4)})"
    return ClaimLine(
        key=f"`{entry['key']}`",
        status=str(entry["status"]),
        value=value,
        needed=needed,
        adjusted=str(entry.get("adjusted_status") or ""),
        claim_id=str(entry.get("id") or ""),
        headline=bool(entry.get("headline")),
    )


def claims_from_json(path: Path) -> Claims:
    """``results/claims.json``: ``{"level", "adjustment", "claims": [{"id", "key", "headline", "status",
    "adjusted_status", "measured", "low", "high", "compare", "threshold", "margin", ...}]}``."""
    payload = json.loads(path.read_text())
    if not isinstance(payload, dict) or not isinstance(payload.get("claims"), list):
        raise ValueError(f"{path}: expected an object with a list 'claims'")
    try:
        lines = tuple(_json_claim(entry) for entry in payload["claims"])
    except (KeyError, TypeError, IndexError) as error:
        raise ValueError(f"{path}: a claim lacks {error}") from error
    return Claims(lines, float(payload.get("level", 0.95)), str(payload.get("adjustment") or ""))


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


ROLES = {
    "claim": ("claim", "key"),
    "status": ("status", "unadjusted"),
    "adjusted": ("adjusted",),
    "measured": ("measured",),
    "threshold": ("threshold", "needed"),
    "id": ("id",),
}
"""Each column :func:`claims_from_markdown` reads, by the prefixes its header may start with (``adjusted`` never
matches ``unadjusted``)."""


def claim_columns(cells: list[str]) -> dict[str, int] | None:
    """Column index per role of :data:`ROLES` for a table header row, or ``None`` when it is no claims table (no claim
    column, or neither a status nor an adjusted column)."""
    names = [c.strip("*").lower() for c in cells]
    columns = {
        role: next(i for i, name in enumerate(names) if name.startswith(prefixes))
        for role, prefixes in ROLES.items()
        if any(name.startswith(prefixes) for name in names)
    }
    return columns if "claim" in columns and ("status" in columns or "adjusted" in columns) else None


def claim_row(columns: dict[str, int], cells: list[str]) -> ClaimLine | None:
    """The claim of one table row, or ``None`` for a separator or an empty claim cell."""

    def cell(role: str) -> str:
        i = columns.get(role)
        return cells[i].strip("*") if i is not None and i < len(cells) else ""

    if set("".join(cells)) <= set("-: ") or not cell("claim"):
        return None
    adjusted = cell("adjusted").split(" (", 1)[0]  # the status word: "EQUIVALENT (a difference smaller than δ)"
    return ClaimLine(
        key=cell("claim"),
        status=cell("status") or adjusted,
        value=cell("measured"),
        needed=cell("threshold"),
        adjusted=adjusted,
        claim_id=cell("id"),
    )


def claims_from_markdown(path: Path) -> Claims:
    """The claims of every table of ``results/claims.md`` whose header names the claim (``claim`` or ``key``) and its
    status (``status`` or ``unadjusted``) or its ``adjusted`` verdict. Columns are found by their header, so added or
    reordered columns do not matter, and a claim listed in two tables (a headline section, the register) counts once."""
    found: dict[str, ClaimLine] = {}
    columns: dict[str, int] | None = None
    in_table = False
    for line in path.read_text().splitlines():
        if not line.lstrip().startswith("|"):
            in_table = False
            continue
        cells = _cells(line)
        if not in_table:
            in_table, columns = True, claim_columns(cells)
            continue
        claim = claim_row(columns, cells) if columns else None
        if claim is not None and claim.key not in found:
            found[claim.key] = claim
    if not found:
        raise ValueError(f"{path}: no table with a claim and a status column")
    return Claims(tuple(found.values()))


def load_claims(claims_md: Path) -> Claims:
    """The build's claims: ``claims.json`` beside ``claims_md`` when it exists, else ``claims_md`` itself."""
    claims_json = claims_md.with_name("claims.json")
    return claims_from_json(claims_json) if claims_json.is_file() else claims_from_markdown(claims_md)
