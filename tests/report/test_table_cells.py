"""The caption and cell pieces the results tables share (hare.report.table_cells)."""

from __future__ import annotations

import json

from hare.report.table_cells import (
    TIE_MARK,
    choice_cell,
    fixed_marks,
    hyperparameter_note,
    regime_sentence,
    spread,
    value_text,
    with_regime,
)


def test_regime_sentence_with_two_log_sizes():
    rows = [{"regime": "warm", "n_logged": 250}, {"regime": "warm", "n_logged": 1000}]
    assert regime_sentence(rows) == (
        "Regimes: warm (every policy of a row first learns from the same $M$ logged interactions, "
        "$M =$ $250$ or $1000$); the Regime column gives each row's."
    )


def test_regime_sentence_of_one_regime():
    assert regime_sentence([{"regime": "cold", "n_logged": 0}]) == (
        "Regime: cold, no policy sees a logged interaction."
    )
    assert "same $M = 50$ logged" in regime_sentence([{"regime": "warm", "n_logged": 50}])


def test_a_regime_column_only_when_the_rows_mix_regimes():
    cold, warm = {"regime": "cold", "n_logged": 0}, {"regime": "warm", "n_logged": 9}
    assert with_regime([cold], ["Policy"], "l", [["a"]]) == (["Policy"], "l", [["a"]])
    assert with_regime([cold, warm], ["Policy"], "l", [["a"], ["b"]]) == (
        ["Regime", "Policy"],
        "ll",
        [["cold", "a"], ["warm", "b"]],
    )


def _row(choice: str, chosen: dict, fixed: str = "", ties: list | None = None) -> dict:
    return {
        "choice": choice,
        "chosen": json.dumps(chosen),
        "fixed": fixed,
        "ties": json.dumps(ties or []),
        "tuned_grid": json.dumps({"alpha": [0.1, 1.0]}),
    }


def test_choice_cell_lists_values_per_dataset_only_where_they_differ():
    marks = fixed_marks([_row("fixed", {"lam": 1}, fixed="as published")])
    text, per_dataset = choice_cell([_row("tuned", {"alpha": 0.1}), _row("tuned", {"alpha": 1.0}), None], marks)
    assert text == r"$\alpha$=0.1/1/--" and per_dataset
    text, per_dataset = choice_cell([_row("fixed", {"lam": 1}, fixed="as published")], marks)
    assert text == r"$\lambda$=1 (fixed$^{a}$)" and not per_dataset


def test_hyperparameter_note_names_the_grid_the_marks_and_the_ties():
    rows = [_row("tuned", {"alpha": 0.1}, ties=["a", "b"]), _row("fixed", {"lam": 1}, fixed="as_published")]
    note = hyperparameter_note(rows)
    assert "searched the same 2 grid points" in note and r"$^{a}$ as\_published" in note
    assert note.count(TIE_MARK) == 1 and note.endswith(".")
    assert hyperparameter_note([_row("none", {})]) == ""


def test_values_and_spreads():
    assert [value_text(v) for v in (True, 0.01, 1e-05, 10, "a_b")] == ["true", "0.01", "1e-05", "10", r"a\_b"]
    row = {"mean": 12.0, "std": 1.5, "std_over_mean_pct": 12.5}
    assert spread(row, with_pct=True) == r"12.0 $\pm$ 1.5 (12.5\%)"
