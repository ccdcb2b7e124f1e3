"""Margins and tuning totals from tuning runs: the closed form on planted files, and nothing read from reported runs."""

import math

import numpy as np
import pytest

from hare.experiments.grid import expand_jobs
from hare.experiments.margins import MARGIN_FRACTION, input_files, margins
from hare.io import write_json, write_npz


@pytest.fixture
def config():
    return {
        "base_seed": 7,
        "environments": {"mushroom": {"kind": "classification", "dataset": "mushroom"}},
        "experiments": {
            "regret": {
                "environments": ["mushroom"],
                "horizon": 100,
                "n_runs": 3,
                "n_tuning_runs": 4,
                "tune": True,
                "policies": {
                    "random": {},
                    "linucb": {"grid": {"alpha": [0.1, 1.0]}},
                    "hare": {"grid": {"alpha": [0.1, 1.0]}},
                },
            },
            "untuned": {
                "environments": ["mushroom"],
                "horizon": 100,
                "n_runs": 3,
                "n_tuning_runs": 2,
                "policies": {"linucb": {"grid": {"alpha": [0.1, 1.0]}}},
            },
        },
    }


def _plant(root, stem, totals, label):
    write_npz(root / f"results/{stem}.npz", total_regret=np.asarray(totals, dtype=float))
    write_json(root / f"results/{stem}.json", {"job": {"role": "tuning", "label": label, "params": {}}})


def test_margin_is_a_tenth_of_the_random_to_best_range_on_the_tuning_runs(config, tmp_path):
    planted = {
        "random": [100.0, 110.0, 90.0, 100.0],
        "linucb@alpha=0.1": [40.0, 44.0, 36.0, 40.0],
        "linucb@alpha=1.0": [60.0, 60.0, 60.0, 60.0],
        "hare@alpha=0.1": [50.0, 50.0, 50.0, 50.0],
        "hare@alpha=1.0": [30.0, 31.0, 29.0, 30.0],
    }
    for label, totals in planted.items():
        _plant(tmp_path, f"tuning/regret/mushroom/{label}", totals, label)
    for label in ("linucb", "hare"):
        from hare.experiments.selection import write_selection

        write_selection(
            [tmp_path / f"results/tuning/regret/mushroom/{label}@alpha={a}.npz" for a in (0.1, 1.0)],
            tmp_path / f"results/selected/regret/mushroom/{label}.json",
        )
    # a reported run that must not be read: margins come from tuning runs only
    write_npz(tmp_path / "results/runs/regret/mushroom/random.npz", total_regret=np.array([1e9]))
    entry = margins(config, tmp_path)["experiments"]["regret"]["mushroom"]
    assert entry["best"] == "hare" and entry["best_mean"] == pytest.approx(30.0)
    assert entry["margin"] == pytest.approx(MARGIN_FRACTION * (100.0 - 30.0))
    assert entry["policies"]["linucb"]["label"] == "linucb@alpha=0.1"
    assert entry["policies"]["hare"]["totals"] == [30.0, 31.0, 29.0, 30.0]
    assert "untuned" not in margins(config, tmp_path)["experiments"]
    assert all("results/runs/" not in path for path in input_files(config))


def test_no_margin_without_random(config, tmp_path):
    del config["experiments"]["regret"]["policies"]["random"]
    for label in ("linucb", "hare"):
        for a, total in ((0.1, 5.0), (1.0, 6.0)):
            _plant(tmp_path, f"tuning/regret/mushroom/{label}@alpha={a}", [total, total], f"{label}@alpha={a}")
        from hare.experiments.selection import write_selection

        write_selection(
            [tmp_path / f"results/tuning/regret/mushroom/{label}@alpha={a}.npz" for a in (0.1, 1.0)],
            tmp_path / f"results/selected/regret/mushroom/{label}.json",
        )
    entry = margins(config, tmp_path)["experiments"]["regret"]["mushroom"]
    assert entry["margin"] is None and entry["reference_mean"] is None and not math.isnan(entry["best_mean"])


def test_reference_tuning_runs_share_the_tuning_seeds(config):
    """Random's reference tuning job plays the tuning seeds of the grid points (same role, base seed and run count)."""
    jobs = [j for j in expand_jobs(config) if j.experiment == "regret" and j.role == "tuning"]
    reference = next(j for j in jobs if j.label == "random")
    point = next(j for j in jobs if j.label == "linucb@alpha=0.1")
    for field in ("base_seed", "role", "n_runs", "environment"):
        assert reference.spec[field] == point.spec[field]


def test_one_batch_file_and_a_batch_the_config_does_not_tune(config, tmp_path):
    from hare.experiments.margins import batch_input_files, batch_margins

    for label, totals in {
        "random": [9.0, 11.0, 10.0, 10.0],
        "linucb@alpha=0.1": [2.0] * 4,
        "linucb@alpha=1.0": [4.0] * 4,
        "hare@alpha=0.1": [3.0] * 4,
        "hare@alpha=1.0": [5.0] * 4,
    }.items():
        _plant(tmp_path, f"tuning/regret/mushroom/{label}", totals, label)
    from hare.experiments.selection import write_selection

    for label in ("linucb", "hare"):
        write_selection(
            [tmp_path / f"results/tuning/regret/mushroom/{label}@alpha={a}.npz" for a in (0.1, 1.0)],
            tmp_path / f"results/selected/regret/mushroom/{label}.json",
        )
    entry = batch_margins(config, "regret", "mushroom", tmp_path)
    assert entry["margin"] == pytest.approx(MARGIN_FRACTION * (10.0 - 2.0)) and entry["experiment"] == "regret"
    assert all("/regret/mushroom/" in path for path in batch_input_files(config, "regret", "mushroom"))
    assert batch_margins(config, "untuned", "mushroom", tmp_path)["margin"] is None
    with pytest.raises(ValueError, match="nope/mushroom"):
        batch_margins(config, "nope", "mushroom", tmp_path)
