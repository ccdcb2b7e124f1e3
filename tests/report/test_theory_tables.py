"""The theory studies' LaTeX (hare.report.theory_tables), rendered from small hand-made results."""

from __future__ import annotations

import json

from hare.report.theory_tables import (
    GRID_BOUNDS,
    approx_budget_tex,
    grid_rows,
    heads_alpha_tex,
    oful_macros,
    write_approx_budget,
    write_oful,
)

FIT = {"estimate": -0.48, "ci_low": -0.61, "ci_high": -0.35, "level": 0.95, "n": 3}


def budget_result(fit=FIT):
    return {
        "horizon": 200,
        "budgets": [100, 400],
        "config": {"n_runs": 3},
        "exponent": fit,
        "r_approx": {"mean": [12.5, 6.25], "std": [1.0, None]},
        "epsilon_attn": {"values": [0.2, 0.1], "slope": -0.5},
        "arrays": {"r_approx": [[1.0]]},
        "wall_seconds": 1.0,
        "cpu_seconds": 1.0,
    }


def test_approx_budget_macros_and_rows():
    tex = approx_budget_tex(budget_result())
    assert "\\newcommand{\\approxBudgetExponentEstimate}{-0.48}\n" in tex
    assert "\\newcommand{\\approxBudgetEpsSlope}{-0.50}\n" in tex
    assert "100 & 12.5 $\\pm$ 1.0 & 0.2 \\\\" in tex and "400 & 6.2 & 0.1 \\\\" in tex
    assert "Exponent in $M$: -0.48 [-0.61, -0.35]" in tex and "\\label{tab:approx-budget}" in tex
    undefined = approx_budget_tex(budget_result(fit=None))
    assert "\\newcommand{\\approxBudgetExponentCiLow}{--}" in undefined and "undefined (non-positive mean)" in undefined


def test_approx_budget_json_leaves_out_arrays_and_timings(tmp_path):
    write_approx_budget(budget_result(), tmp_path / "a.json", tmp_path / "a.tex")
    assert set(json.loads((tmp_path / "a.json").read_text())) == set(budget_result()) - {
        "arrays",
        "wall_seconds",
        "cpu_seconds",
    }


def test_heads_alpha_table_has_a_row_per_head_and_a_row_of_exponents_in_h():
    result = {
        "horizon": 100,
        "heads": [1, 2],
        "alphas": [0.5, 1.0],
        "key_dim": 4,
        "config": {"n_runs": 2},
        "regret": {"mean": [[1.0, 2.0], [3.0, 4.0]], "std": [[0.5, None], [0.5, 0.5]]},
        "exponent_H": {"by_alpha": [FIT, None], "pooled": FIT},
        "exponent_g": {"by_H": [None, FIT], "pooled": None},
    }
    tex = heads_alpha_tex(result)
    assert "\\newcommand{\\headsAlphaExponentHeadsEstimate}{-0.48}\n" in tex
    assert "\\newcommand{\\headsAlphaExponentFactorEstimate}{--}\n" in tex
    assert "1 & 1.0 $\\pm$ 0.5 & 2.0 & -- \\\\" in tex
    assert "exp.\\ in $H$ & -0.48 [-0.61, -0.35] & -- &  \\\\" in tex


def test_grid_rows_take_the_primary_bound_of_each_term():
    rows = [
        {"term": term, "bound_key": key, "mean": 2.0, "std": None, "bound": 4.0, "ratio": 0.5, "holds": True}
        | {"vacuous": False}
        for term, key in GRID_BOUNDS.items()
    ]
    rows.append({**rows[0], "bound_key": "other", "ratio": 9.0})
    grid = {"cells": [{"n_clusters": 2, "key_dim": 4, "rows": rows, "exponents": {"approx": FIT}}]}
    table = grid_rows(grid)
    assert [row[2] for row in table] == [r"$R_{\mathrm{approx}}$", r"$R_{\mathrm{user}}$", r"$R_{\mathrm{explore}}$"]
    assert table[0] == ["2", "4", r"$R_{\mathrm{approx}}$", "2.0", "4.0", "0.5", "pass", "no", "-0.48 [-0.61, -0.35]"]
    assert table[1][-1] == "--"


def test_oful_macros_from_the_json_mapping(tmp_path):
    result = {
        "horizon": 1000,
        "measured_mean": [1.0, 123.45],
        "bound_at_horizon": 98765.4,
        "trivial_at_horizon": 2828.4,
        "ratio_at_horizon": 0.00125,
        "constants": {"d": 24, "delta": 0.05},
        "n_runs": 5,
        "holds": True,
        "vacuous_at_horizon": True,
        "premise": {"fraction_inside": {"estimate": 1.0}, "premise_holds": True},
    }
    assert oful_macros(result) == {
        "ofulHorizon": "1000",
        "ofulMeasured": "123.5",
        "ofulBound": "98{,}765",
        "ofulTrivial": "2{,}828",
        "ofulRatio": "0.00125",
        "ofulDim": "24",
        "ofulDelta": "0.05",
        "ofulNRuns": "5",
        "ofulHolds": "holds",
        "ofulVacuous": "vacuous",
        "ofulPremiseFraction": "1.000",
        "ofulPremiseHolds": "holds",
    }
    write_oful(result, tmp_path / "oful.json", tmp_path / "oful.tex")
    assert json.loads((tmp_path / "oful.json").read_text()) == result
    assert (tmp_path / "oful.tex").read_text().startswith("\\newcommand{\\ofulBound}{98{,}765}\n")
