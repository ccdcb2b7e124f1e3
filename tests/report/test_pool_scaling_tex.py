"""The pool-scaling table and macros (hare.report.pool_scaling) from planted study data: rows per (N, rule) with the
per-item line, skipped cells shown by their prediction, the macros of the one-sentence answer, and every macro the
paper's subsection reads defined."""

from __future__ import annotations

import re
from pathlib import Path

from hare.report.pool_scaling import pool_scaling_macros, pool_scaling_rows, pool_scaling_table, pool_scaling_tex

REPOSITORY = Path(__file__).resolve().parents[2]
KINDS = ["full", "diagonal", "low_rank"]
RULES = ["fixed", "sqrt", "linear"]
CLUSTERS = {(1_000, "fixed"): 16, (1_000, "sqrt"): 32, (1_000, "linear"): 10}
CLUSTERS |= {(1_000_000, "fixed"): 16, (1_000_000, "sqrt"): 1_000, (1_000_000, "linear"): 10_000}
STATE = {"full": 800_000_000, "diagonal": 20_000_000, "low_rank": 100_000_000}


def cell(n: int, rule: str, kind: str) -> dict:
    """Select ``n / 1e5`` ms plus 0.01 per kind index, update ``0.1 + 0.1 * kind index`` ms; the full state at
    ``N = 10^6`` under the linear rule skipped (predicted 2.5e10 bytes)."""
    base = {"n_items": n, "rule": rule, "n_clusters": CLUSTERS[(n, rule)], "kind": kind}
    if n == 1_000_000 and rule == "linear" and kind == "full":
        return {**base, "status": "skipped", "predicted_bytes": 25_000_000_000, "reason": "over the cap"}
    i = KINDS.index(kind)
    state = STATE[kind] if n == 1_000_000 else STATE[kind] // 1000
    return {
        **base,
        "status": "measured",
        "predicted_bytes": state + 1_000_000,
        "select_ms": n / 1e5 + 0.01 * i,
        "update_ms": 0.1 + 0.1 * i,
        "state_bytes": state,
        "pool_bytes": 600_000,
        "round_bytes": 400_000,
        "peak_bytes": state + 1_000_000,
        "cuda_peak_bytes": None,
    }


def planted() -> dict:
    sizes = [1_000, 1_000_000]
    return {
        "device": "cpu",
        "settings": {
            "pool_sizes": sizes,
            "cluster_rules": RULES,
            "kinds": KINDS,
            "fixed_clusters": 16,
            "rank": 4,
            "n_heads": 2,
            "n_runs": 2,
            "key_dim": 16,
            "rounds": 20,
            "memory_cap_mb": 16384,
            "items_per_cluster": 100,
        },
        "cells": [cell(n, rule, kind) for n in sizes for rule in RULES for kind in KINDS],
        "per_item": [
            {
                "n_items": 1_000,
                "status": "measured",
                "select_ms": 0.5,
                "update_ms": 0.25,
                "closed_form_bytes": 8_192_000,
                "bytes": 17_600_000,
                "extrapolated": False,
            },
            {
                "n_items": 1_000_000,
                "status": "skipped",
                "closed_form_bytes": 8_192_000_000,
                "bytes": 17_600_000_000,
                "extrapolated": True,
            },
        ],
        "regret": {
            "horizon": 2000,
            "n_runs": 10,
            "kinds": {
                kind: {"estimate": 100.0 + 10 * i, "ci_low": 90.0, "ci_high": 110.0} for i, kind in enumerate(KINDS)
            },
            "difference_to_full": {
                "diagonal": {"estimate": 10.0, "ci_low": 2.5, "ci_high": 17.5, "level": 0.95},
                "low_rank": {"estimate": 20.0, "ci_low": -1.3, "ci_high": 41.3, "level": 0.95},
            },
        },
    }


def test_rows_per_size_and_rule_then_the_per_item_line():
    rows = pool_scaling_rows(planted())
    assert len(rows) == 2 * (3 + 1) + 1 and rows[4] == []
    assert rows[0][:3] == ["1{,}000", "fixed", "16"]
    assert rows[1][:3] == ["1{,}000", r"$\sqrt{N}$", "32"]
    assert rows[0][3:6] == ["0.010", "0.020", "0.030"]  # select ms (two significant digits below 1)
    assert rows[0][6:9] == ["0.10", "0.20", "0.30"]  # update ms
    assert rows[0][9:12] == ["1.8", "1.0", "1.1"]  # peak MB: (state + 1e6) / 1e6
    assert rows[3] == ["1{,}000", "per item", "1{,}000", "0.50", "--", "--", "0.25", "--", "--", "17.6", "--", "--"]


def test_a_skipped_cell_shows_its_prediction_and_no_time():
    rows = pool_scaling_rows(planted())
    linear = rows[7]
    assert linear[:3] == ["1{,}000{,}000", "$N/100$", "10{,}000"]
    assert linear[3] == "--" and linear[6] == "--"
    assert linear[9] == r"25{,}000.0\textsuperscript{\dag}"
    assert rows[8][9] == "17{,}600.0*"  # the per-item line at 10^6, extrapolated


def test_table_header_groups_the_kinds_and_notes_the_marks():
    table = pool_scaling_table(planted())
    assert r"\multicolumn{3}{c}{select (ms)}" in table and r"\cmidrule(lr){10-12}" in table
    assert "full & diag. & low-rank & full & diag. & low-rank & full & diag. & low-rank" in table
    assert r"\label{tab:pool-scaling}" in table and "16{,}384 MB" in table and "extrapolated" in table


def test_macros_of_the_answer():
    values = pool_scaling_macros(planted())
    assert values["poolScalingSqrtN"] == "1{,}000{,}000"
    assert values["poolScalingLinearN"] == "1{,}000"  # the full state at 10^6 was skipped: not every kind measured
    assert values["poolScalingSqrtLowRankStateRatio"] == "0.125"
    assert values["poolScalingSqrtDiagonalStateRatio"] == "0.025"
    assert values["poolScalingSqrtLowRankSelect"] == "10.02" and values["poolScalingSqrtFullUpdate"] == "0.10"
    assert values["poolScalingSqrtFullMemory"] == "801.0"
    assert values["poolScalingLargestN"] == "1{,}000{,}000"
    assert values["poolScalingPerItemMemory"] == "17.6" and values["poolScalingPerItemStatus"] == "extrapolated"
    assert values["poolScalingRegretLowRankDiff"] == "20.0"
    assert values["poolScalingRegretLowRankDiffLow"] == "-1.3"
    assert values["poolScalingRegretDiagonalDiffHigh"] == "17.5" and values["poolScalingRegretFull"] == "100.0"
    assert values["poolScalingRegretHorizon"] == "2{,}000" and values["poolScalingRank"] == "4"
    assert values["poolScalingLevel"] == "95" and values["poolScalingItemsPerCluster"] == "100"


def test_the_tex_defines_the_macros_and_the_table_macro():
    tex = pool_scaling_tex(planted())
    assert tex.startswith("% Generated by hare.experiments.studies.pool_scaling")
    assert r"\newcommand{\poolScalingSqrtN}{1{,}000{,}000}" in tex
    assert tex.rstrip().endswith(r"\end{table}}") and r"\newcommand{\poolScalingTable}{%" in tex
    assert tex.count("{") == tex.count("}")


def test_every_macro_the_subsection_reads_is_defined():
    section = (REPOSITORY / "paper" / "sections" / "scale.tex").read_text()
    used = set(re.findall(r"\\(poolScaling[A-Za-z]+)", section))
    defined = set(pool_scaling_macros(planted())) | {"poolScalingTable"}
    assert used and used <= defined, sorted(used - defined)
