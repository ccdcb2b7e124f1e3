"""The policy benchmark: its speedup and bandwidth-ceiling arithmetic, its table, and one tiny real run."""

from __future__ import annotations

import numpy as np
import pytest

from hare.experiments.bench import bench_policies, bench_table_tex, linucb_speedups, linucb_traffic_floor, read_bandwidth_gbps


def _results(read_gbps: float | None) -> dict:
    policies = [
        {"dataset": "toy", "policy": "linucb", "device": "cpu", "n_runs": 1, "dim": 10, "n_arms": 2, "rounds_runs_per_second": 1000.0},
        {"dataset": "toy", "policy": "linucb", "device": "cpu", "n_runs": 20, "dim": 10, "n_arms": 2, "rounds_runs_per_second": 8000.0},
    ]
    references = [
        {"dataset": "toy", "library": "mabwiser", "rounds_runs_per_second": 100.0},
        {"dataset": "toy", "library": "obp", "rounds_runs_per_second": 400.0},
    ]
    bandwidth = [] if read_gbps is None else [{"dataset": "toy", "device": "cpu", "n_runs": 20, "bytes": 32000, "read_gbps": read_gbps}]
    return {"environment": {"devices": {"cpu": "test cpu"}, "comparison_repeats": 5}, "policies": policies, "references": references, "bandwidth": bandwidth}


def test_traffic_floor_counts_every_inverse_and_the_pulled_arms_state():
    assert linucb_traffic_floor(10, 2) == 8 * (2 + 3) * 100


def test_speedup_is_over_the_fastest_peer_and_the_ceiling_over_the_floor():
    row = linucb_speedups(_results(read_gbps=4.0), n_runs=20)["toy"]
    assert row["peer"] == "obp" and row["speedup"] == pytest.approx(20.0)
    assert row["ceiling_rate"] == pytest.approx(4.0e9 / 4000)
    assert row["ceiling_speedup"] == pytest.approx(4.0e9 / 4000 / 400.0)


def test_without_a_bandwidth_entry_there_is_no_ceiling():
    assert "ceiling_speedup" not in linucb_speedups(_results(read_gbps=None), n_runs=20)["toy"]


def test_table_notes_state_speedup_and_ceiling():
    tex = bench_table_tex(_results(read_gbps=4.0))
    assert r"toy: 20.0$\times$ OBP LinUCB (bandwidth ceiling 2500$\times$)" in tex
    assert "8(K{+}3)d^2" in tex
    assert "medians of 5 timings taken in turn" in tex


def test_read_bandwidth_is_a_positive_rate():
    assert read_bandwidth_gbps((4, 2, 16, 16), "cpu", repeats=3) > 0


def test_a_tiny_benchmark_records_dimensions_and_bandwidth():
    rng = np.random.default_rng(0)
    features, labels = rng.random((50, 6)), rng.integers(0, 3, 50)
    result = bench_policies(["linucb", "random"], {"toy": (features, labels)}, n_runs_list=(1, 2), horizon=20, max_seconds=5.0)
    rows = [row for row in result["policies"] if row["policy"] == "linucb"]
    assert [(row["n_runs"], row["dim"], row["n_arms"]) for row in rows] == [(1, 6, 3), (2, 6, 3)]
    assert all(row["rounds"] == 20 and row["rounds_runs_per_second"] > 0 for row in result["policies"])
    assert [(row["dataset"], row["n_runs"], row["bytes"]) for row in result["bandwidth"]] == [("toy", 2, 8 * 2 * 3 * 6 * 6)]
    assert {row["library"] for row in result["references"]} == {"mabwiser", "obp"}


def test_comparison_datasets_time_only_linucb_and_the_peers():
    rng = np.random.default_rng(1)
    toy = (rng.random((40, 5)), rng.integers(0, 3, 40))
    wide = (rng.random((40, 9)), rng.integers(0, 4, 40))
    result = bench_policies(["linucb", "random"], {"toy": toy}, n_runs_list=(1, 2), horizon=10, max_seconds=5.0, comparison={"wide": wide})
    timed = sorted((row["dataset"], row["policy"], row["n_runs"]) for row in result["policies"])
    assert timed == [("toy", "linucb", 1), ("toy", "linucb", 2), ("toy", "random", 1), ("toy", "random", 2), ("wide", "linucb", 1), ("wide", "linucb", 2)]
    assert {(row["dataset"], row["library"]) for row in result["references"]} == {(d, lib) for d in ("toy", "wide") for lib in ("mabwiser", "obp")}
    assert [(row["dataset"], row["bytes"]) for row in result["bandwidth"]] == [("toy", 8 * 2 * 3 * 5 * 5), ("wide", 8 * 2 * 4 * 9 * 9)]
    assert set(linucb_speedups(result, 2)) == {"toy", "wide"}
    assert "On wide only LinUCB and the peers are timed." in bench_table_tex(result)
    without_linucb = bench_policies(["random"], {"toy": toy}, n_runs_list=(1,), horizon=5, max_seconds=5.0, comparison={"wide": wide})
    assert {row["dataset"] for row in without_linucb["policies"] + without_linucb["references"]} == {"toy"}
    assert (result["environment"]["comparison_repeats"], without_linucb["environment"]["comparison_repeats"]) == (5, 1)
