"""Two builds' claims registers side by side: does a verdict of one configuration hold in the other?

Each build writes its register as ``<results>/claims.json`` (:mod:`hare.report.register`): per claim its key, id,
headline flag, measured value with its 95% interval, runs, and status before and after the multiplicity adjustment.
:func:`compare_registers` pairs the claims of two registers by key and sorts each pair into one of

* ``agree``: both builds decided the claim (PASS, FAIL or EQUIVALENT after adjustment) and gave the same verdict;
* ``differ``: both decided it and the verdicts differ (each with its interval, the reason to read the pair);
* ``undecided``: at least one build ran it without deciding it (INCONCLUSIVE, UNDECIDABLE AT THIS SCALE or VACUOUS);
* ``not run``: at least one build produced none of the claim's run files (NOT RUN) or lacks the claim.

:func:`agreement_page` renders the comparison as the Markdown page ``docs/scale_agreement.md`` (the command, the date
and both builds' provenance on the page); ``hare compare-claims OLD NEW`` prints the summary and writes the page.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hare.report.register_cells import status_of as adjusted_status

DECIDED = ("PASS", "FAIL", "EQUIVALENT")
"""Adjusted statuses that decide a claim; INCONCLUSIVE, UNDECIDABLE AT THIS SCALE and VACUOUS leave it open, NOT RUN
leaves it unmeasured."""

OUTCOMES = ("agree", "differ", "undecided", "not run")


@dataclass(frozen=True)
class ClaimPair:
    """One claim in both builds: ``old`` and ``new`` are the register entries (``None`` where a build lacks it)."""

    key: str
    old: dict[str, Any] | None
    new: dict[str, Any] | None

    @property
    def outcome(self) -> str:
        """``agree``, ``differ``, ``undecided`` or ``not run`` (module docstring)."""
        statuses = [status_of(entry) for entry in (self.old, self.new)]
        if any(status in (None, "NOT RUN") for status in statuses):
            return "not run"
        if any(status not in DECIDED for status in statuses):
            return "undecided"
        return "agree" if statuses[0] == statuses[1] else "differ"

    @property
    def claim_id(self) -> str:
        return str((self.old or {}).get("id") or (self.new or {}).get("id") or "")


def status_of(entry: dict[str, Any] | None) -> str | None:
    """The adjusted status of a register entry (the verdict the register reports, :func:`.register_cells.status_of`),
    ``None`` without an entry."""
    return None if entry is None else adjusted_status(entry)


def load_register(results: Path) -> dict[str, Any]:
    """``<results>/claims.json``; a folder without one is refused, naming the file."""
    path = results / "claims.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no claims register (is {results} a finished build's results folder?)")
    register = json.loads(path.read_text())
    if not isinstance(register, dict) or not isinstance(register.get("claims"), list):
        raise ValueError(f"{path}: not a claims register (no list under 'claims')")
    return register


def compare_registers(old: dict[str, Any], new: dict[str, Any], headline_only: bool = True) -> list[ClaimPair]:
    """The claims of two registers paired by key, in the old register's order (then the new one's extra keys);
    with ``headline_only``, only the claims either build marks as headline."""
    old_by_key = {entry["key"]: entry for entry in old["claims"]}
    new_by_key = {entry["key"]: entry for entry in new["claims"]}
    keys = list(old_by_key) + [key for key in new_by_key if key not in old_by_key]
    pairs = [ClaimPair(key, old_by_key.get(key), new_by_key.get(key)) for key in keys]
    if headline_only:
        pairs = [p for p in pairs if (p.old or {}).get("headline") or (p.new or {}).get("headline")]
    return pairs


def counts(pairs: list[ClaimPair]) -> dict[str, int]:
    """How many pairs fall in each outcome, every outcome listed."""
    return {outcome: sum(pair.outcome == outcome for pair in pairs) for outcome in OUTCOMES}


def format_number(value: float) -> str:
    """Three significant figures, as the register prints them."""
    return f"{value:.3g}"


def reading(entry: dict[str, Any] | None) -> str:
    """``STATUS measured [low, high] (n runs)`` of one build's entry, or its status alone when it has no interval."""
    status = status_of(entry)
    if entry is None:
        return "absent"
    if entry.get("measured") is None or entry.get("low") is None:
        return str(status)
    interval = f"{format_number(entry['measured'])} [{format_number(entry['low'])}, {format_number(entry['high'])}]"
    runs = f", {entry['n_runs']} runs" if entry.get("n_runs") else ""
    margin = f", δ = {format_number(entry['margin'])}" if entry.get("margin") is not None else ""
    return f"{status} {interval}{runs}{margin}"


def summary_line(pairs: list[ClaimPair], old_label: str, new_label: str) -> str:
    """One line: how many claims both builds decided, how many of those agree, and the rest."""
    n = counts(pairs)
    both = n["agree"] + n["differ"]
    return (
        f"{len(pairs)} claims: {both} decided in both {old_label} and {new_label}, {n['agree']} agree, "
        f"{n['differ']} differ; {n['undecided']} undecided in at least one; {n['not run']} not run in at least one"
    )


def agreement_page(
    pairs: list[ClaimPair],
    old_label: str,
    new_label: str,
    provenance: list[str],
) -> str:
    """The Markdown page: what was compared (``provenance``: lines naming the command, the date and both builds),
    the summary, each differing claim with both intervals, then every claim with both readings."""
    lines = [
        f"# Claims of the {old_label} against the {new_label}",
        "",
        "Written by `hare compare-claims` from two finished builds' claims registers (`results/claims.json`); do not",
        "edit by hand. A claim is *decided* when its adjusted status is PASS, FAIL or EQUIVALENT; each reading is",
        "`status measured [95% interval], runs, δ` as the register reports it.",
        "",
        *[f"- {line}" for line in provenance],
        "",
        "## Summary",
        "",
        summary_line(pairs, old_label, new_label) + ".",
        "",
        f"## Claims whose verdict differs ({counts(pairs)['differ']})",
        "",
    ]
    differing = [pair for pair in pairs if pair.outcome == "differ"]
    lines += table(differing, old_label, new_label) if differing else ["None.", ""]
    for outcome, title in (("undecided", "Claims undecided in at least one build"), ("agree", "Claims that agree")):
        chosen = [pair for pair in pairs if pair.outcome == outcome]
        lines += [f"## {title} ({len(chosen)})", ""]
        lines += table(chosen, old_label, new_label) if chosen else ["None.", ""]
    missing = [pair for pair in pairs if pair.outcome == "not run"]
    lines += [f"## Claims not run in at least one build ({len(missing)})", ""]
    lines += [", ".join(f"{pair.claim_id} `{pair.key}`" for pair in missing) + "." if missing else "None.", ""]
    return "\n".join(lines)


READING_FIELDS = ("id", "adjusted_status", "status", "measured", "low", "high", "n_runs", "margin")
"""What :func:`scale_reference` keeps of each claim of the second build."""


def scale_reference(pairs: list[ClaimPair], new_label: str, description: str) -> dict[str, Any]:
    """The second build's readings of the compared claims, for another build's paper to set beside its own verdicts
    (``paper/scale_agreement.json``, read by ``hare claims --scale-reference``): ``{"label", "description",
    "claims": {key: {id, adjusted_status, status, measured, low, high, n_runs, margin}}}``."""
    return {
        "label": new_label,
        "description": description,
        "claims": {
            pair.key: {field: pair.new.get(field) for field in READING_FIELDS}
            for pair in pairs
            if pair.new is not None and status_of(pair.new) != "NOT RUN"
        },
    }


def scale_differences(claims: list[dict[str, Any]], reference: dict[str, Any]) -> list[tuple[dict, dict]]:
    """``(claim, reading)`` for each headline claim of this build that ran here and whose verdict differs from the
    reference build's reading of it (:func:`scale_reference`), in the claims' order."""
    readings = reference.get("claims", {})
    return [
        (claim, readings[claim["key"]])
        for claim in claims
        if claim.get("headline")
        and claim["key"] in readings
        and status_of(claim) != "NOT RUN"
        and status_of(claim) != status_of(readings[claim["key"]])
    ]


def table(pairs: list[ClaimPair], old_label: str, new_label: str) -> list[str]:
    """A Markdown table of ``pairs``: id, key, both readings."""
    rows = [f"| id | claim | {old_label} | {new_label} |", "|---|---|---|---|"]
    rows += [f"| {p.claim_id} | `{p.key}` | {reading(p.old)} | {reading(p.new)} |" for p in pairs]
    return [*rows, ""]
