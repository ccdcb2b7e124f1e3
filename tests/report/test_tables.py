"""The results tables (hare.report.tables): the entry point by kind, and the tables that a summary row alone fills."""

from __future__ import annotations

import pytest

from hare.report.tables import RENDERERS, table_tex


def _row(policy: str, environment: str, mean: float, regime: str = "cold") -> dict:
    return {
        "experiment": "online",
        "environment": environment,
        "policy": policy,
        "policy_name": policy,
        "params": "{}",
        "n_runs": 2,
        "horizon": 100,
        "mean": mean,
        "std": 1.0,
        "std_over_mean_pct": 100.0 / mean,
        "mean_reward": 50.0,
        "regime": regime,
        "n_logged": 0 if regime == "cold" else 20,
        "choice": "none",
        "chosen": "{}",
        "ties": "[]",
        "fixed": "",
        "wall_time_s": 2.0,
        "peak_rss_mb": 100.0,
        "device": "cpu",
    }


def test_the_caption_is_escaped_and_ends_with_the_regime_sentence():
    tex = table_tex("regret", [_row("linucb", "mushroom", 10.0)], "Regret & 100% of runs_", "tab:x")
    assert r"\caption{Regret \& 100\% of runs\_ Regime: cold, no policy sees a logged interaction.}" in tex


def test_regret_table_bolds_the_best_mean_of_each_column():
    rows = [_row("linucb", "mushroom", 10.0), _row("random", "mushroom", 40.0)]
    tex = table_tex("regret", rows, "Regret.", "tab:x")
    assert r"LinUCB & -- & \textbf{10.0 $\pm$ 1.0 (10.0\%)}" in tex
    assert r"Random & -- & 40.0 $\pm$ 1.0 (2.5\%)" in tex


def test_regret_table_refuses_two_runs_in_one_cell():
    with pytest.raises(ValueError, match="two runs of 'linucb' on 'mushroom'"):
        table_tex("regret", [_row("linucb", "mushroom", 10.0)] * 2, "Regret.", "tab:x")


def test_mixed_regimes_get_a_regime_column():
    rows = [_row("linucb", "mushroom", 10.0), _row("linucb", "mushroom", 8.0, regime="warm")]
    tex = table_tex("sensitivity", rows, "Points.", "tab:x")
    assert "Regime & Environment & Policy" in tex and "the Regime column gives each row's" in tex


def test_compute_table_sums_wall_time():
    rows = [_row("linucb", "mushroom", 10.0), _row("random", "mushroom", 40.0)]
    tex = table_tex("compute", rows, "Compute.", "tab:x")
    assert r"online & cpu & 2 & 4.0 & 100 \\" in tex and r"\textbf{total} &  & 2 & 4.0 &  \\" in tex


def test_a_published_table_without_a_row_says_so():
    tex = table_tex("published", [], "Published.", "tab:x", "Regime: cold.")
    assert r"\caption{Published. Regime: cold.}" in tex and "no published counterpart in this configuration" in tex


def test_every_kind_but_published_and_reproduction_has_a_renderer():
    assert set(RENDERERS) == {"regret", "sensitivity", "scaling", "compute", "replay"}


def test_sensitivity_rows_keep_the_display_name_and_the_best_point_of_their_entry():
    """Two entries of one registered policy (``hare_heads@...``, ``hare_clusters@...``) stay apart: each row is named
    by its config label, and each entry has its own best point in bold."""
    rows = [
        _row("hare_heads@n_heads=1", "synthetic_linear", 5.0),
        _row("hare_heads@n_heads=2", "synthetic_linear", 7.0),
        _row("hare_clusters@n_clusters=1", "synthetic_linear", 9.0),
        _row("hare_clusters@n_clusters=6", "synthetic_linear", 8.0),
    ]
    tex = table_tex("sensitivity", rows, "Ablations.", "tab:ablations")
    lines = [line for line in tex.splitlines() if "HARE-Sim (linear) &" in line]
    assert [line.split(" & ")[1] for line in lines] == ["HARE, attention heads"] * 2 + ["HARE, clusters"] * 2
    assert ["textbf" in line for line in lines] == [True, False, False, True]
