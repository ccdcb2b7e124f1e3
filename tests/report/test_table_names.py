"""Sensitivity tables name each row by its config label, so entries of one registered policy stay apart."""

from hare.experiments.aggregate import sensitivity_table_tex


def _row(label: str, mean: float) -> dict:
    return {
        "experiment": "ablations",
        "environment": "synthetic_linear",
        "policy": label,
        "policy_name": "hare",
        "params": "{}",
        "n_runs": 2,
        "horizon": 60,
        "mean": mean,
        "std": 0.5,
        "mean_reward": 30.0,
        "regime": "cold",
        "n_logged": 0,
        "ties": "[]",
    }


def test_each_entry_keeps_its_display_name_and_its_own_best_point():
    rows = [
        _row("hare_heads@n_heads=1", 5.0),
        _row("hare_heads@n_heads=2", 7.0),
        _row("hare_clusters@n_clusters=1", 9.0),
        _row("hare_clusters@n_clusters=6", 8.0),
    ]
    tex = sensitivity_table_tex(rows, "Ablations.", "tab:ablations")
    lines = [line for line in tex.splitlines() if "HARE-Sim (linear) &" in line]
    assert [line.split(" & ")[1] for line in lines] == ["HARE, attention heads"] * 2 + ["HARE, clusters"] * 2
    assert ["textbf" in line for line in lines] == [True, False, False, True]
