"""The benchmark tables and macros (hare.report.bench_tables), from planted benchmark results."""

from __future__ import annotations

import pytest

from hare.experiments.studies.bench_linucb import ceiling_entry, peer_ratio_entry
from hare.report.bench_tables import (
    bench_baselines_table_tex,
    bench_hare_table_tex,
    bench_neural_table_tex,
    bench_table_tex,
    format_bytes,
    format_summary,
    write_bench_tables,
)

SETTING = {"dataset": "toy", "device": "cpu", "n_runs": 4, "horizon": 100, "dim": 10, "n_arms": 2}


def _planted_results() -> dict:
    entry = ceiling_entry(SETTING, [{"rounds": 100, "seconds": 0.4, "read_gbps": 0.008}] * 2)
    peers = [
        peer_ratio_entry(SETTING, lib, [{"rounds": 100, "seconds": 0.4}] * 2, [{"rounds_runs_per_second": 100.0}] * 2)
        for lib in ("mabwiser", "obp")
    ]
    policies = [
        {"dataset": "toy", "policy": "random", "device": "cpu", "n_runs": b, "rounds_runs_per_second": r}
        for b, r in ((1, 10.0), (4, 30.0))
    ]
    gains = [
        {
            "dataset": "toy",
            "device": "cpu",
            "policy": "random",
            "n_runs_low": 1,
            "n_runs_high": 4,
            "rate_low": 10.0,
            "rate_high": 30.0,
            "gain": 3.0,
        }
    ]
    return {
        "environment": {"devices": {"cpu": "test cpu"}, "comparison_repeats": 2, "horizon": 100, "repeats": 1},
        "policies": policies,
        "references": [],
        "bandwidth": [],
        "linucb_ceiling": [entry],
        "peer_ratios": peers,
        "batching_gains": gains,
    }


def test_bench_table_reports_ratios_through_macros_and_no_claim():
    tex = bench_table_tex(_planted_results())
    # 16 kB per round read at 8 MB/s take 2 ms; the round takes 4 ms.
    assert r"\newcommand{\benchCeilingFractionMax}{0.50}" in tex
    assert r"\newcommand{\benchComparisonRepeats}{2}" in tex
    assert "toy & 4 & 10 & 2 & 16~kB & 0.50 [0.50, 0.50] & 10.0 [10.0, 10.0] & 10.0 [10.0, 10.0]" in tex
    assert "random & 3.0" in tex
    assert r"\claim" not in tex and "threshold" not in tex.lower()


def test_bench_hare_table_reports_latency_relative_to_the_first_case():
    cases = [
        {
            "n_items": n,
            "n_clusters": 16,
            "n_heads": 1,
            "key_dim": 8,
            "seconds_per_round": s,
            "state_bytes": 2**20,
            "device": "cpu",
        }
        for n, s in ((100, 0.002), (1000, 0.005))
    ]
    tex = bench_hare_table_tex({"cases": cases})
    assert "100 & 16 & 1 & 8 & 1.00 & 1.00" in tex and "1000 & 16 & 1 & 8 & 2.50 & 1.00" in tex


def test_only_the_named_peers_get_a_column():
    tex = bench_table_tex(_planted_results(), peers=("obp",))
    assert r"vs.\ OBP" in tex and "MABWiser" not in tex
    assert "toy & 4 & 10 & 2 & 16~kB & 0.50 [0.50, 0.50] & 10.0 [10.0, 10.0] \\\\" in tex


def _neural() -> dict:
    summary = {"estimate": 2.5, "ci_low": 2.0, "ci_high": 3.0}
    return {
        "ratios": {
            f"{kind}_{mode}_over_loop": summary for kind in ("select", "round") for mode in ("jacobian", "diagonal")
        },
        "settings": {"width": 20, "runs": 1, "rounds": 30, "arms": 10, "dim": 20, "device": "cpu", "repeats": 3},
        "n_parameters": 4020,
    }


def test_neural_table_reports_each_mode_over_the_loop_with_its_macros():
    tex = bench_neural_table_tex({"neural": _neural()})
    assert r"\newcommand{\benchNeuralSelectRatio}{2.5}" in tex and r"\newcommand{\benchNeuralRepeats}{3}" in tex
    assert "jacobian & 2.5 [2.0, 3.0] & 2.5 [2.0, 3.0]" in tex and "$p=4020$" in tex


def test_write_bench_tables_writes_the_neural_table_only_when_measured(tmp_path):
    results = _planted_results()
    write_bench_tables(results, "cpu", tmp_path / "bench.tex", tmp_path / "neural.tex")
    assert (tmp_path / "bench.tex").read_text() == bench_table_tex(results, "cpu")
    assert not (tmp_path / "neural.tex").exists()
    write_bench_tables(results | {"neural": _neural()}, "cpu", None, tmp_path / "neural.tex")
    assert (tmp_path / "neural.tex").read_text() == bench_neural_table_tex({"neural": _neural()})


@pytest.mark.parametrize(
    ("summary", "text"),
    [
        (None, "--"),
        ({"estimate": None}, "--"),
        ({"estimate": 1.234}, "1.23"),
        ({"estimate": 1.234, "ci_low": 1.0, "ci_high": 1.5}, "1.23 [1.00, 1.50]"),
    ],
)
def test_format_summary(summary, text):
    assert format_summary(summary) == text


def test_format_bytes_in_powers_of_ten():
    assert [format_bytes(n) for n in (12, 16_000, 2.5e6, 3e9)] == ["12~B", "16~kB", "2.5~MB", "3~GB"]


def _planted_baselines() -> dict:
    def entry(policy, family, measure, dataset, reference, registered, rounds=1):
        return {
            "dataset": dataset,
            "policy": policy,
            "family": family,
            "measure": measure,
            "rounds": rounds,
            "reference_seconds": reference,
            "registered_seconds": registered,
            "speedup": {"estimate": reference / registered, "ci_low": 1.5, "ci_high": 2.5},
        }

    settings = [
        entry("neural_ucb", "neural", "round", "adult", 0.02, 0.01, rounds=2),
        entry("neural_ucb", "neural", "training", "adult", 3.0, 1.0),
        entry("neural_ucb", "neural", "training", "mnist", 1200.0, 100.0),
        {"dataset": "mnist", "policy": "neural_ucb", "measure": "round", "skipped": "MemoryError: out of memory"},
        entry("kernel_ts", "kernel", "round", "adult", 0.5, 0.25, rounds=2),
        entry("kernel_ts", "kernel", "round", "mnist", 0.8, 0.1, rounds=2),
    ]
    sizes = {"n_runs": 20, "width": 100, "train_steps": 100, "batch_size": 50, "n_networks": 10}
    sizes |= {"max_points": 2000, "history": 100, "rounds": 2, "repeats": 3, "max_seconds": None, "warmup": True}
    return {"environment": {"device": "cpu", "machine": "Test CPU", "threads": 1}, "sizes": sizes, "settings": settings}


def test_baselines_table_gives_dense_seconds_per_unit_and_speedups():
    tex = bench_baselines_table_tex(_planted_baselines())
    assert "Policy & Timed & Adult: dense (s) & speed-up & MNIST: dense (s) & speed-up" in tex
    assert "NeuralUCB & training & 3 & 3.00 [1.50, 2.50] & 1200 & 12.00 [1.50, 2.50]" in tex
    assert "NeuralUCB & round & 0.01 & 2.00 [1.50, 2.50] & -- & --" in tex  # per round; MNIST skipped
    assert "KernelTS & round & 0.25 & 2.00 [1.50, 2.50] & 0.4 & 8.00 [1.50, 2.50]" in tex
    assert tex.index("NeuralUCB & training") < tex.index("NeuralUCB & round") < tex.index("KernelTS & round")
    assert "KernelTS & training" not in tex
    for name, value in [
        ("NeuralTrainingMin", "3.00"),
        ("NeuralTrainingMax", "12.00"),
        ("NeuralRoundMin", "2.00"),
        ("NeuralRoundMax", "2.00"),
        ("KernelRoundMin", "2.00"),
        ("KernelRoundMax", "8.00"),
        ("MaxPoints", "2000"),
        ("Runs", "20"),
        ("Threads", "1"),
    ]:
        assert rf"\newcommand{{\benchBaselines{name}}}{{{value}}}" in tex
    caption = tex[tex.index(r"\caption{") : tex.index(r"\label{")]
    assert "2000" not in caption and r"\benchBaselinesMaxPoints{}" in caption and "Test CPU" in caption
    assert r"\resizebox" in tex


def test_baselines_macros_say_not_run_when_no_setting_was_timed():
    results = _planted_baselines()
    results["settings"] = [row for row in results["settings"] if row.get("family") != "kernel"]
    tex = bench_baselines_table_tex(results)
    assert r"\newcommand{\benchBaselinesKernelRoundMin}{--}" in tex
    assert "KernelTS" not in tex
