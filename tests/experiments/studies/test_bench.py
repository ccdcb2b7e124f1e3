"""The benchmark: its ceiling and ratio arithmetic, its one-run pairing of timings, its tables and its config."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from hare.experiments.config import REPOSITORY, check_config, schema_errors
from hare.experiments.settings import ConfigError
from hare.experiments.studies.bench import bench_policies
from hare.experiments.studies.bench_linucb import (
    ceiling_entry,
    ceiling_fraction,
    linucb_speedups,
    linucb_traffic_floor,
    peer_ratio_entry,
    read_bandwidth_gbps,
)
from hare.experiments.studies.timing import t_summary

SETTING = {"dataset": "toy", "device": "cpu", "n_runs": 4, "horizon": 100, "dim": 10, "n_arms": 2}


def test_traffic_floor_counts_every_inverse_and_the_pulled_arms_state():
    assert linucb_traffic_floor(10, 2) == 8 * (2 + 3) * 100


def test_ceiling_fraction_is_streaming_time_over_measured_time():
    # 8 MB at 4 GB/s take 2 ms; a round measured at 8 ms reaches a quarter of the ceiling.
    assert ceiling_fraction(8e6, 4.0, 8e-3) == pytest.approx(0.25)
    assert ceiling_fraction(8e6, 4.0, 2e-3) == pytest.approx(1.0)


def test_ceiling_entry_pairs_each_linucb_timing_with_the_read_rate_of_the_same_repeat():
    timings = [{"rounds": 100, "seconds": 0.4, "read_gbps": 4.0}, {"rounds": 50, "seconds": 0.1, "read_gbps": 1.0}]
    entry = ceiling_entry(SETTING, timings)
    floor = 8 * 5 * 100
    assert entry["traffic_floor_bytes"] == floor and entry["bytes_per_round"] == 4 * floor
    expected = [4 * floor / 4.0e9 / 4e-3, 4 * floor / 1.0e9 / 2e-3]
    assert [row["fraction"] for row in entry["timings"]] == pytest.approx(expected)
    assert [row["linucb_seconds_per_round"] for row in entry["timings"]] == pytest.approx([4e-3, 2e-3])
    assert [row["ceiling_seconds_per_round"] for row in entry["timings"]] == pytest.approx(
        [4 * floor / 4.0e9, 4 * floor / 1.0e9]
    )
    assert entry["fraction"]["estimate"] == pytest.approx(math.sqrt(expected[0] * expected[1]))
    assert entry["fraction"]["n"] == 2


def test_t_summary_is_a_geometric_mean_with_a_t_interval_of_the_logs():
    summary = t_summary([1.0, 4.0], "m")
    half = stats.t.ppf(0.975, 1) * np.std(np.log([1.0, 4.0]), ddof=1) / math.sqrt(2)
    assert summary["estimate"] == pytest.approx(2.0)
    assert (summary["ci_low"], summary["ci_high"]) == pytest.approx((2.0 * math.exp(-half), 2.0 * math.exp(half)))
    assert (summary["level"], summary["n"], summary["method"]) == (0.95, 2, "m")
    single = t_summary([3.0], "m")
    assert single["estimate"] == pytest.approx(3.0) and (single["ci_low"], single["ci_high"], single["n"]) == (
        None,
        None,
        1,
    )


def test_peer_ratios_divide_timings_of_the_same_repeat():
    ours = [{"rounds": 100, "seconds": 1.0}, {"rounds": 100, "seconds": 2.0}]
    peers = [{"rounds_runs_per_second": 10.0, "version": "1"}, {"rounds_runs_per_second": 40.0, "version": "1"}]
    entry = peer_ratio_entry(SETTING, "obp", ours, peers)
    assert [pair["ratio"] for pair in entry["timings"]] == pytest.approx([400 / 10, 200 / 40])
    assert [pair["linucb_rounds_runs_per_second"] for pair in entry["timings"]] == pytest.approx([400.0, 200.0])
    assert entry["ratio"]["estimate"] == pytest.approx(math.sqrt(40 * 5))
    skipped = peer_ratio_entry(SETTING, "obp", ours, [{"skipped": "not installed"}] * 2)
    assert skipped["skipped"] == "not installed" and "ratio" not in skipped


def test_a_tiny_benchmark_records_both_timings_of_every_ratio():
    rng = np.random.default_rng(0)
    features, labels = rng.random((50, 6)), rng.integers(0, 3, 50)
    result = bench_policies(
        ["linucb", "random"],
        {"toy": (features, labels)},
        n_runs_list=(1, 2),
        horizon=20,
        max_seconds=5.0,
        comparison_repeats=3,
    )
    ceilings = {(row["dataset"], row["n_runs"]): row for row in result["linucb_ceiling"]}
    assert set(ceilings) == {("toy", 1), ("toy", 2)}
    for (_, n_runs), row in ceilings.items():
        assert (row["dim"], row["n_arms"], row["bytes_per_round"]) == (6, 3, n_runs * 8 * 6 * 36)
        assert len(row["timings"]) == 3 and row["fraction"]["n"] == 3
        for timing in row["timings"]:
            assert timing["fraction"] == pytest.approx(
                timing["ceiling_seconds_per_round"] / timing["linucb_seconds_per_round"]
            )
            assert timing["ceiling_seconds_per_round"] == pytest.approx(
                row["bytes_per_round"] / (timing["read_gbps"] * 1e9)
            )
    for row in result["peer_ratios"]:
        assert len(row["timings"]) == 3
        for pair in row["timings"]:
            assert pair["ratio"] == pytest.approx(
                pair["linucb_rounds_runs_per_second"] / pair["peer_rounds_runs_per_second"]
            )
    assert {(row["library"], row["n_runs"]) for row in result["peer_ratios"]} == {
        (lib, b) for lib in ("mabwiser", "obp") for b in (1, 2)
    }
    gains = {row["policy"]: row for row in result["batching_gains"] if row["dataset"] == "toy"}
    assert set(gains) == {"linucb", "random"}
    rates = {
        (row["policy"], row["n_runs"]): row["rounds_runs_per_second"]
        for row in result["policies"]
        if row["dataset"] == "toy"
    }
    assert gains["random"]["gain"] == pytest.approx(rates["random", 2] / rates["random", 1])
    assert [(row["n_runs"], row["bytes"]) for row in result["bandwidth"] if row["dataset"] == "toy"] == [
        (1, 8 * 3 * 36),
        (2, 8 * 2 * 3 * 36),
    ]
    assert result["environment"]["comparison_repeats"] == 3
    assert linucb_speedups(result, 2)["toy"]["speedup"] > 0


def test_comparison_datasets_time_only_linucb_and_the_peers():
    rng = np.random.default_rng(1)
    toy = (rng.random((40, 5)), rng.integers(0, 3, 40))
    wide = (rng.random((40, 9)), rng.integers(0, 4, 40))
    result = bench_policies(
        ["linucb", "random"],
        {"toy": toy},
        n_runs_list=(1, 2),
        horizon=10,
        max_seconds=5.0,
        comparison={"wide": wide},
        comparison_repeats=2,
    )
    timed = sorted((row["dataset"], row["policy"], row["n_runs"]) for row in result["policies"])
    assert timed == [
        ("toy", "linucb", 1),
        ("toy", "linucb", 2),
        ("toy", "random", 1),
        ("toy", "random", 2),
        ("wide", "linucb", 1),
        ("wide", "linucb", 2),
    ]
    assert {(row["dataset"], row["n_runs"]) for row in result["linucb_ceiling"]} == {
        (d, b) for d in ("toy", "wide") for b in (1, 2)
    }
    without_linucb = bench_policies(
        ["random"], {"toy": toy}, n_runs_list=(1,), horizon=5, max_seconds=5.0, comparison={"wide": wide}
    )
    assert {row["dataset"] for row in without_linucb["policies"] + without_linucb["references"]} == {"toy"}
    assert without_linucb["linucb_ceiling"] == [] and without_linucb["environment"]["comparison_repeats"] == 0
    with pytest.raises(ValueError, match="comparison_repeats"):
        bench_policies(["linucb"], {"toy": toy}, n_runs_list=(1,), horizon=5, comparison_repeats=0)


def test_read_bandwidth_is_a_positive_rate():
    assert read_bandwidth_gbps((4, 2, 16, 16), "cpu", repeats=3) > 0


def _config(name: str) -> dict:
    """The config ``name`` as the workflow reads it (an overlay resolved onto its base)."""
    from hare.experiments.config import resolve_config_file

    return resolve_config_file(Path(REPOSITORY, "config", f"{name}.yaml"))


@pytest.mark.parametrize("name", ["smoke", "default", "paper"])
def test_every_bench_config_is_valid(name):
    bench_errors = [error for error in schema_errors(_config(name)) if error.startswith("bench")]
    assert bench_errors == []


def test_default_bench_is_smaller_than_the_papers():
    default, paper = _config("default")["bench"], _config("paper")["bench"]
    assert default["horizon"] <= paper["horizon"] and default["max_seconds"] <= paper["max_seconds"]
    assert default["comparison_repeats"] >= 2 and default["neural_repeats"] >= 2


@pytest.mark.parametrize(
    ("key", "value"),
    [("comparison_repeats", 0), ("neural_repeats", 0), ("max_seconds", 0), ("batch_sizes", [0]), ("batch_sizes", [])],
)
def test_a_bad_bench_setting_is_named(key, value):
    config = _config("default")
    config["bench"] = {**config["bench"], key: value}
    with pytest.raises(ConfigError, match=rf"bench\.{key}"):
        check_config(config)
