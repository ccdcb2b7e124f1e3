"""The neural and kernel bandits against their dense references (hare.experiments.studies.bench_baselines): the
record's structure on tiny sizes, the repeat cap, the copied kernel state, and the command's bad arguments."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from hare.cli import main
from hare.experiments.studies.bench_baselines import (
    KERNEL,
    NEURAL,
    BaselineSizes,
    SizeError,
    bench_baselines,
    build_pair,
    copied_state,
    feed,
    random_arms,
    run_bench_baselines,
)
from hare.experiments.studies.bench_harness import make_environment

TINY = BaselineSizes(
    n_runs=3, width=4, train_steps=2, batch_size=4, n_networks=2, max_points=6, history=5, rounds=2, repeats=3
)


def _dataset(n_rows: int = 60, dim: int = 5, n_arms: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.normal(size=(n_rows, dim)), np.arange(n_rows) % n_arms


def _npz(tmp_path, n_rows: int = 60):
    features, labels = _dataset(n_rows)
    path = tmp_path / "toy.npz"
    np.savez(path, features=features, labels=labels)
    return path


def test_every_policy_is_timed_against_its_reference_repeat_by_repeat():
    result = bench_baselines({"toy": _dataset()}, TINY)
    rows = {(row["policy"], row["measure"]): row for row in result["settings"]}
    expected = {(name, "round") for name in NEURAL + KERNEL} | {(name, "training") for name in NEURAL}
    assert set(rows) == expected
    for (name, measure), row in rows.items():
        assert "skipped" not in row, row
        assert row["reference"].startswith("Dense") and row["n_runs"] == 3 and row["dim"] == 5 and row["n_arms"] == 3
        assert len(row["timings"]) == 3
        for timing in row["timings"]:
            assert timing["ratio"] == pytest.approx(timing["reference_seconds"] / timing["registered_seconds"])
        assert row["speedup"]["n"] == 3 and row["speedup"]["ci_low"] <= row["speedup"]["estimate"]
        assert row["rounds"] == (2 if measure == "round" else 1)
        assert row["fill_rounds"] == (6 if name in KERNEL else 5)
    assert rows["neural_ucb", "round"]["params"]["exploration"] == "diagonal"
    assert rows["bootstrap_nn", "training"]["params"]["n_networks"] == 2
    assert rows["kernel_ts", "round"]["params"] == {"max_points": 6, "when_full": "window"}
    assert result["sizes"]["max_points"] == 6
    assert result["environment"]["threads"] == torch.get_num_threads() and result["environment"]["machine"]


def test_no_repeat_starts_after_the_settings_time_limit():
    sizes = BaselineSizes(**{**TINY.__dict__, "max_seconds": 1e-9})
    result = bench_baselines({"toy": _dataset()}, sizes, ("neural_ts", "kernel_ucb"))
    assert [len(row["timings"]) for row in result["settings"]] == [1, 1, 1]
    assert all(row["speedup"]["ci_low"] is None for row in result["settings"])


def test_a_filled_kernel_state_serves_its_sibling_as_feeding_would():
    env = make_environment(_dataset(), 2, 8, "cpu")
    rounds = [env.round(t) for t in range(8)]
    ucb, _ = build_pair("kernel_ucb", TINY, env, "cpu")
    ts_copied, _ = build_pair("kernel_ts", TINY, env, "cpu")
    ts_fed, _ = build_pair("kernel_ts", TINY, env, "cpu")
    arms = lambda t: random_arms(2, env.n_arms, t, "cpu")  # noqa: E731
    feed([ucb], rounds[:7], arms)
    feed([ts_fed], rounds[:7], arms)
    assert copied_state(ucb, ts_copied)
    assert torch.equal(ts_copied.select(rounds[7].observation), ts_fed.select(rounds[7].observation))
    for key, value in ts_fed.state_dict().items():
        assert torch.equal(ts_copied.state_dict()[key], value), key
    neural, _ = build_pair("neural_ucb", TINY, env, "cpu")
    assert not copied_state(neural, ts_copied)


def test_the_command_writes_the_record_and_the_table(tmp_path, capsys):
    out, tex = tmp_path / "bench" / "baselines.json", tmp_path / "table.tex"
    out.parent.mkdir()  # the command creates no folder
    argv = ["bench-baselines", "--out", str(out), "--tex", str(tex), "--dataset", f"toy={_npz(tmp_path)}"]
    argv += ["--runs", "2", "--width", "4", "--train-steps", "1", "--batch-size", "2", "--networks", "2"]
    argv += ["--max-points", "4", "--history", "3", "--rounds", "1", "--repeats", "2", "--policies", "bootstrap_nn"]
    argv += ["kernel_ts", "--threads", "1"]
    assert main(argv) == 0
    record = json.loads(out.read_text())
    assert [(row["policy"], row["measure"]) for row in record["settings"]] == [
        ("bootstrap_nn", "round"),
        ("bootstrap_nn", "training"),
        ("kernel_ts", "round"),
    ]
    assert record["sizes"]["n_runs"] == 2 and record["environment"]["process"]["wall_seconds"] > 0
    assert r"\newcommand{\benchBaselinesMaxPoints}{4}" in tex.read_text()


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (["--width", "3"], "--width"),
        (["--runs", "0"], "--runs"),
        (["--repeats", "0"], "--repeats"),
        (["--max-seconds", "0"], "--max-seconds"),
        (["--policies", "linucb"], "--policies"),
        (["--history", "100"], "dataset toy"),
    ],
)
def test_a_bad_argument_is_one_line_naming_it_and_nothing_is_written(tmp_path, capsys, arguments, named):
    out, tex = tmp_path / "baselines.json", tmp_path / "table.tex"
    argv = ["bench-baselines", "--out", str(out), "--tex", str(tex), "--dataset", f"toy={_npz(tmp_path)}", *arguments]
    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hare bench-baselines: error: ") and named in lines[0]
    assert not out.exists() and not tex.exists()


def test_a_missing_dataset_is_named(tmp_path, capsys):
    out = tmp_path / "baselines.json"
    assert main(["bench-baselines", "--out", str(out), "--dataset", f"toy={tmp_path / 'nope.npz'}"]) == 2
    assert f"argument --dataset: toy={tmp_path / 'nope.npz'}: does not exist" in capsys.readouterr().err
    assert not out.exists()
    assert main(["bench-baselines", "--out", str(out)]) == 2
    assert "--dataset" in capsys.readouterr().err and not out.exists()


def test_a_size_out_of_range_names_its_field():
    with pytest.raises(SizeError) as error:
        BaselineSizes(width=5)
    assert error.value.field == "width"


def test_run_writes_json_even_without_a_table(tmp_path):
    out = tmp_path / "b.json"
    run_bench_baselines(out=out, datasets={"toy": _npz(tmp_path)}, sizes=TINY, policies=("kernel_ucb",))
    assert json.loads(out.read_text())["settings"][0]["policy"] == "kernel_ucb"
