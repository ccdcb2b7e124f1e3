"""The caption and cell pieces every results table shares, rendered from the summary rows of the run files.

A row is a dict of :func:`hare.experiments.tables.aggregate.summarise_run` (the CSV's columns): ``regime`` and
``n_logged``
give the information regime, ``choice``, ``chosen``, ``tuned_grid``, ``ties`` and ``fixed`` how its
hyperparameters were set, ``mean`` and ``std`` the total pseudo-regret over its ``n_runs`` runs (ddof = 1).
"""

from __future__ import annotations

import json
import math

from hare.report.latex import format_number
from hare.report.names import (
    PARAMETER_VALUES,
    parameter_symbol,
    parameter_text,
    parameter_value,
    parameters_text,
    with_symbols,
)

SPREAD_NOTE = "mean $\\pm$ standard deviation over $n$ independent runs (ddof $=1$)"
TIE_MARK = r"$^\dagger$"


def value_text(value) -> str:
    """A hyperparameter value for a table cell: numbers in their shortest form (0.01, 1e-05, 10)
    (:func:`hare.report.names.parameter_value`)."""
    return parameter_value(value)


def params_text(row: dict) -> str:
    """A row's params (JSON) as the paper writes them (:func:`hare.report.names.parameters_text`: symbols, the
    variants' names), with :data:`TIE_MARK` when its selection tied."""
    return parameters_text(json.loads(row["params"])) + (TIE_MARK if tied(row) else "")


def tied(row: dict) -> bool:
    """Did the tuning runs of this row's selection tie between several points?"""
    return len(json.loads(row.get("ties") or "[]")) > 1


def regimes(rows: list[dict]) -> list[tuple[str, int]]:
    """The distinct ``(regime, n_logged)`` of ``rows``, sorted."""
    return sorted({(r["regime"], r["n_logged"]) for r in rows})


def regime_sentence(rows: list[dict]) -> str:
    """The sentence a table's caption ends with: the information regime(s) of its runs."""
    found = regimes(rows)
    warm = [m for regime, m in found if regime == "warm"]
    cold = any(regime == "cold" for regime, _ in found)
    if len(found) == 1:
        if cold:
            return "Regime: cold, no policy sees a logged interaction."
        return f"Regime: warm, every policy first learns from the same $M = {warm[0]}$ logged interactions."
    parts = ["cold (no policy sees a logged interaction)"] if cold else []
    if len(warm) == 1:
        parts.append(f"warm (every policy first learns from the same $M = {warm[0]}$ logged interactions)")
    else:
        sizes = ", ".join(f"${m}$" for m in warm[:-1]) + f" or ${warm[-1]}$"
        parts.append(f"warm (every policy of a row first learns from the same $M$ logged interactions, $M =$ {sizes})")
    return f"Regimes: {' and '.join(parts)}; the Regime column gives each row's."


def regime_cell(regime: str, n_logged: int, rows: list[dict]) -> str:
    """A Regime cell: the regime, with ``M`` when the warm rows of the table learn from logs of several sizes."""
    several_m = len({m for reg, m in regimes(rows) if reg == "warm"}) > 1
    return f"warm ($M={n_logged}$)" if regime == "warm" and several_m else regime


def with_regime(
    rows: list[dict], header: list[str], align: str, body: list[list[str]]
) -> tuple[list[str], str, list[list[str]]]:
    """A Regime column in front when the rows (one per body line) come from more than one regime."""
    if len(regimes(rows)) < 2:
        return header, align, body
    return (
        ["Regime", *header],
        "l" + align,
        [[regime_cell(r["regime"], r["n_logged"], rows), *line] for r, line in zip(rows, body, strict=True)],
    )


def fixed_marks(rows: list[dict]) -> dict[str, str]:
    """A superscript letter per distinct ``fixed`` reason, in row order."""
    reasons = list(dict.fromkeys(r["fixed"] for r in rows if r.get("choice") == "fixed"))
    return {reason: "abcdefghijklmnopqrstuvwxyz"[i % 26] * (1 + i // 26) for i, reason in enumerate(reasons)}


def choice_cell(cells: list[dict | None], marks: dict[str, str]) -> tuple[str, bool]:
    """The hyperparameter values of one table row: one value where every dataset agrees, else one per dataset (in
    column order).

    Returns the cell's LaTeX and whether some value is listed per dataset.
    """
    present = [r for r in cells if r is not None]
    values = [json.loads(r["chosen"]) if r is not None else None for r in cells]
    names = list(dict.fromkeys(name for v in values if v is not None for name in v))
    parts = []
    per_dataset = False
    for name in names:
        per = [value_text(v[name]) if v is not None and name in v else "--" for v in values]
        distinct = {text for text, r in zip(per, cells, strict=True) if r is not None}
        per_dataset = per_dataset or len(distinct) > 1
        raw = {json.dumps(v[name]) for v, r in zip(values, cells, strict=True) if r is not None and v and name in v}
        if len(raw) == 1 and (name in PARAMETER_VALUES or len(distinct) == 1):
            parts.append(parameter_text(name, json.loads(next(iter(raw)))))
        else:
            parts.append(f"{parameter_symbol(name)}={'/'.join(per)}")
    text = ", ".join(parts) or "--"
    choices = {r["choice"] for r in present}
    if "fixed" in choices:
        reason = next(r["fixed"] for r in present if r["choice"] == "fixed")
        text += f" (fixed$^{{{marks[reason]}}}$)"
    elif "set" in choices:
        text += " (set)"
    return text, per_dataset


def hyperparameter_note(rows: list[dict], per_dataset: bool = False) -> str:
    """What the Hyperparameters column's values, marks and daggers mean (only the parts the rows use)."""
    notes = []
    choices = {r["choice"] for r in rows}
    if "tuned" in choices:
        sizes = sorted(
            {math.prod(len(v) for v in json.loads(r["tuned_grid"]).values()) for r in rows if r["choice"] == "tuned"}
        )
        budget = (
            f"every tuned policy searched the same {sizes[0]} grid points"
            if len(sizes) == 1
            else f"grids of {', '.join(map(str, sizes[:-1]))} and {sizes[-1]} points"
        )
        notes.append(
            "Hyperparameters: the values chosen on tuning runs with disjoint seeds (lowest mean total regret; "
            f"{budget})" + ("; values separated by / are per dataset, in column order" if per_dataset else "")
        )
    elif per_dataset:
        notes.append("Hyperparameters separated by / are per dataset, in column order")
    marks = fixed_marks(rows)
    if marks:
        notes.append(
            "fixed: not tuned, kept at the configured value ("
            + "; ".join(f"$^{{{mark}}}$ {with_symbols(reason)}" for reason, mark in marks.items())
            + ")"
        )
    if "set" in choices:
        notes.append("set: not tuned in this experiment, the configured value")
    if any(tied(r) for r in rows):
        notes.append(
            f"{TIE_MARK}: grid points tied on the tuning runs; the first in sorted label order was taken "
            "(the CSV lists the tied points)"
        )
    return "; ".join(notes) + ("." if notes else "")


def spread(row: dict, with_pct: bool) -> str:
    """``mean $\\pm$ std`` of a row's total regret, with ``(std/mean %)`` when ``with_pct``."""
    text = f"{format_number(row['mean'])} $\\pm$ {format_number(row['std'])}"
    return text + (f" ({format_number(row['std_over_mean_pct'])}\\%)" if with_pct else "")
