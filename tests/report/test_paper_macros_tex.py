"""The paper's number macros (hare.report.paper_macros), from planted summary rows."""

from __future__ import annotations

from hare.report.paper_macros import paper_macros, write_paper_macros

ROW = {
    "experiment": "online",
    "environment": "mushroom",
    "policy": "lin_ucb",
    "mean": 1234.56,
    "std": 7.0,
    "runs_above_half": 1,
    "n_runs": 20,
    "horizon": 10000,
    "regime": "warm",
    "n_logged": 2500,
}


def test_macros_of_a_row_and_the_versions():
    tex = paper_macros([ROW], {"torch": "2.1_cpu"})
    assert r"\newcommand{\regretOnlineMushroomLinUcb}{1{,}234.6}" in tex
    assert r"\newcommand{\regretStdOnlineMushroomLinUcb}{7.0}" in tex
    assert r"\newcommand{\nRunsAboveHalfOnlineMushroomLinUcb}{1}" in tex
    assert r"\newcommand{\horizonOnlineMushroom}{10{,}000}" in tex and r"\newcommand{\nLoggedOnline}{2{,}500}" in tex
    assert r"\newcommand{\regimeOnline}{warm}" in tex and r"\newcommand{\versionTorch}{2.1\_cpu}" in tex


def test_a_replay_row_has_no_count_above_half(tmp_path):
    row = {key: value for key, value in ROW.items() if key != "runs_above_half"}
    write_paper_macros(tmp_path / "m.tex", [row], {})
    assert "AboveHalf" not in (tmp_path / "m.tex").read_text()
