import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.experiments.job_setup import checkpoints
from hare.experiments.job_spec import JobSpec
from hare.experiments.run import run_batch, run_job, simulation_groups
from hare.experiments.simulation import SimulationOptions, simulate
from hare.policies import build_policy
from hare.random import run_keys


def _spec(policy="linucb", params=None, n_runs=3, horizon=60) -> JobSpec:
    return JobSpec.from_dict(
        {
            "experiment": "test",
            "label": policy,
            "policy": policy,
            "params": {"alpha": 1.0} if params is None else params,
            "environment": {
                "name": "sim",
                "kind": "synthetic",
                "params": {"n_items": 12, "n_clusters": 3, "n_users": 2},
                "dataset": None,
                "horizon": horizon,
            },
            "n_runs": n_runs,
            "role": "report",
            "base_seed": 5,
            "device": "cpu",
            "record_every": 7,
            "regime": "cold",
            "n_logged": 0,
        }
    )


@pytest.mark.parametrize(
    ("policy", "params"),
    [
        ("random", {}),
        ("linucb", {"alpha": 0.5}),
        ("hare", {"alpha": 0.5, "projections": "oracle"}),
        ("hare", {"projections": "random", "n_heads": 2}),
    ],
)
def test_batched_runs_equal_the_same_runs_one_by_one(policy, params):
    """B runs together give the B single runs (a differing arm would move the regret by far more than 1e-12)."""
    config = SyntheticConfig(n_items=12, n_clusters=3, n_users=2)
    env_keys, pol_keys = run_keys(0, range(3), "env"), run_keys(0, range(3), "pol")

    def play(index):
        env = SyntheticBandit(config, len(index), 50, env_keys[index])
        return simulate(env, build_policy(policy, params, env, pol_keys[index]), SimulationOptions(record_every=10))

    together = play([0, 1, 2])
    for run in range(3):
        alone = play([run])
        # Same arms in every round; matrix products may round the last bit differently with the batch size.
        np.testing.assert_allclose(
            together["cumulative_regret"][run], alone["cumulative_regret"][0], rtol=1e-12, atol=1e-12
        )


def test_checkpoints_include_the_horizon():
    np.testing.assert_array_equal(checkpoints(25, 10), [10, 20, 25])
    np.testing.assert_array_equal(checkpoints(20, 10), [10, 20])


def test_rerunning_a_job_gives_bit_identical_results(tmp_path):
    spec = _spec()
    run_job(spec, tmp_path / "a.npz", progress=False)
    run_job(spec, tmp_path / "b.npz", progress=False)
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    sidecar = json.loads((tmp_path / "a.json").read_text())
    assert sidecar["job"] == spec.as_dict() and sidecar["n_runs"] == 3 and sidecar["wall_time_s"] > 0
    assert {"git_commit", "versions", "device", "peak_memory", "job_hash"} <= set(sidecar)


def test_result_arrays_are_consistent(tmp_path):
    run_job(_spec(horizon=30), tmp_path / "r.npz", progress=False)
    with np.load(tmp_path / "r.npz", allow_pickle=False) as data:
        assert data["cumulative_regret"].shape == (3, len(data["rounds"]))
        np.testing.assert_allclose(data["cumulative_regret"][:, -1], data["total_regret"])
        assert np.all(np.diff(data["cumulative_regret"], axis=1) >= -1e-12)


def test_cli_run_writes_result_and_sidecar(tmp_path, repository):
    out = tmp_path / "cli.npz"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "hare",
            "run",
            "--job",
            json.dumps(_spec("random", {}).as_dict()),
            "--out",
            str(out),
            "--progress",
            "off",
        ],
        capture_output=True,
        text=True,
        cwd=repository,
    )
    assert result.returncode == 0, result.stderr
    assert out.exists() and out.with_suffix(".json").exists()
    assert "round 60/60" in result.stderr


def test_cuda_device_without_gpu_is_a_clear_error(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        run_job(replace(_spec(), device="cuda"), tmp_path / "x.npz")
    assert not list(tmp_path.iterdir())


def _grid_entries(tmp_path, policy, field, values, base_params, role="tuning"):
    entries = []
    for value in values:
        spec = replace(
            _spec(policy, {**base_params, field: value}, n_runs=2), label=f"{policy}@{field}={value}", role=role
        )
        entries.append({"job": spec, "out": str(tmp_path / f"{policy}@{field}={value}.npz"), "selected": None})
    return entries


@pytest.mark.parametrize(
    ("policy", "field", "values", "base"),
    [
        ("linucb", "alpha", [0.01, 0.1, 1.0], {}),
        ("lnucb_ta", "alpha_0", [0.1, 1.0, 10.0], {}),
        ("hare", "alpha", [0.01, 0.1, 1.0], {"projections": "random", "online_lr": 0.05}),
    ],
)
def test_a_grid_plays_as_one_simulation_with_each_points_results(tmp_path, policy, field, values, base):
    """run_batch plays the points of a grid as one batch of 3 x 2 runs; each point's file holds what the point gives
    alone (arms equal: a differing arm would move the regret by far more than 1e-12), its sidecar its own run count."""
    entries = _grid_entries(tmp_path, policy, field, values, base)
    assert simulation_groups(entries) == [[0, 1, 2]]
    sidecars = run_batch(entries, progress=False)
    for entry, sidecar in zip(entries, sidecars, strict=True):
        alone = tmp_path / ("alone-" + Path(entry["out"]).name)
        run_job(entry["job"], alone, progress=False)
        with np.load(entry["out"]) as grid_result, np.load(alone) as alone_result:
            assert (
                grid_result["cumulative_regret"].shape
                == alone_result["cumulative_regret"].shape
                == (2, len(alone_result["rounds"]))
            )
            for key in ("cumulative_regret", "cumulative_reward", "total_regret"):
                np.testing.assert_allclose(grid_result[key], alone_result[key], rtol=0, atol=1e-12)
        assert sidecar["n_runs"] == 2 and sidecar["job"] == entry["job"].as_dict()
        assert sidecar["grid_simulation"]["n_runs"] == 6 and len(sidecar["grid_simulation"]["labels"]) == 3
    reported = [json.loads(Path(e["out"]).with_suffix(".json").read_text())["total_regret_mean"] for e in entries]
    assert len(set(reported)) > 1, "the points should play differently"


def test_only_points_of_one_grid_play_together(tmp_path):
    """Different policies, a non-per-run difference (lam), a different run count or reported jobs (an untuned sweep,
    whose wall times are tabled) keep jobs apart."""
    grid = _grid_entries(tmp_path, "linucb", "alpha", [0.1, 1.0], {})
    other_lam = _grid_entries(tmp_path, "linucb", "alpha", [0.1], {"lam": 2.0})
    other_policy = _grid_entries(tmp_path, "lin_ts", "nu", [0.1, 1.0], {})
    fewer_runs = [{**grid[1], "job": replace(grid[1]["job"], n_runs=3)}]
    sweep = _grid_entries(tmp_path, "linucb", "alpha", [0.1, 1.0], {}, role="report")
    entries = grid + other_lam + other_policy + fewer_runs + sweep
    assert simulation_groups(entries) == [[0, 1], [2], [3, 4], [5], [6], [7]]


def test_a_grid_larger_than_the_run_cap_plays_in_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr("hare.experiments.run.MAX_GRID_RUNS", 4)
    entries = _grid_entries(tmp_path, "linucb", "alpha", [0.01, 0.1, 1.0, 10.0, 100.0], {})
    assert simulation_groups(entries) == [[0, 1], [2, 3], [4]]


def test_a_batch_selects_each_tuned_job_from_its_tuning_runs_before_playing_it(tmp_path):
    """A report entry with tuning runs: the batch writes its selection (the grid point of lowest mean total regret, as
    ``hare select`` chooses it) and plays the job with the selected value; a missing tuning run fails the batch before
    any selection or result is written."""
    from hare.experiments.selection import select_point

    tuning = _grid_entries(tmp_path, "linucb", "alpha", [0.01, 1.0, 100.0], {})
    run_batch(tuning, progress=False)
    runs = [entry["out"] for entry in tuning]
    report_spec = replace(_spec("linucb", {}, n_runs=2), tuned_grid={"alpha": [0.01, 1.0, 100.0]})
    selected = tmp_path / "selected.json"
    report = {"job": report_spec, "out": str(tmp_path / "report.npz"), "selected": str(selected), "tuning": runs}
    missing = {**report, "tuning": [*runs, str(tmp_path / "absent.npz")]}
    with pytest.raises(FileNotFoundError, match="absent.npz"):
        run_batch([missing], progress=False)
    assert not selected.exists() and not Path(report["out"]).exists()
    sidecar = run_batch([report], progress=False)[0]
    choice = json.loads(selected.read_text())
    assert choice == select_point(runs)
    means = {
        entry["job"].label: json.loads(Path(entry["out"]).with_suffix(".json").read_text())["total_regret_mean"]
        for entry in tuning
    }
    assert choice["label"] == min(means, key=means.get)
    assert (
        sidecar["job"]["params"]["alpha"] == choice["params"]["alpha"]
        and sidecar["job"]["selected_from"] == choice["label"]
    )


def _small_job(policy, params, variant="linear", link="identity", regime="cold", n_logged=0) -> JobSpec:
    spec = _spec(policy, params, n_runs=3, horizon=40).as_dict()
    spec["environment"]["params"] = {**spec["environment"]["params"], "variant": variant, "link": link}
    return JobSpec.from_dict({**spec, "regime": regime, "n_logged": n_logged})


RECORDED_SELECT_JOBS = {
    # Total regret and reward of small select-mode jobs as the code before synthesize-mode jobs wrote them.
    "random_linear": (
        _small_job("random", {}),
        [3.7588062997258187, 6.575972046211241, 5.908485992477111],
        [0.6155803652559872, -1.119900778317052, -2.032272890417263],
    ),
    "linucb_nonlinear": (
        _small_job("linucb", {"alpha": 0.5}, "nonlinear"),
        [7.22368351434344, 6.146613637065973, 7.670274238347407],
        [0.08450529103701301, 0.8732936324145143, -1.1933657220496563],
    ),
    "hare_linear": (
        _small_job("hare", {"alpha": 0.5, "projections": "random", "online_lr": 0.05}),
        [5.536289569004677, 5.196178112411647, 4.7443511889087135],
        [-0.7609988045111152, 0.33069057925008605, -0.4099264558364148],
    ),
    "hare_logistic": (
        _small_job("hare", {"alpha": 0.5, "projections": "oracle"}, "nonlinear", link="logistic"),
        [1.8263767552916923, 1.941070647826944, 1.8785375382196385],
        [20.08407534331845, 19.189803062226073, 19.42833405216236],
    ),
    "hare_warm": (
        _small_job("hare", {"alpha": 0.1, "projections": "learned", "fit_steps": 20}, regime="warm", n_logged=50),
        [2.153548541823097, 2.788634046166759, 2.452173901329576],
        [2.286817451241082, 2.1548250890631486, 1.1680440918289217],
    ),
}


@pytest.mark.parametrize("name", sorted(RECORDED_SELECT_JOBS))
def test_select_mode_jobs_write_what_they_wrote_before_synthesize_mode(tmp_path, name):
    """The recorded numbers (to 1e-9: another BLAS rounds the sums differently; a changed arm moves them far more),
    and the select-mode arrays only (no ``novelty``)."""
    spec, regret, reward = RECORDED_SELECT_JOBS[name]
    run_job(spec, tmp_path / "r.npz", progress=False)
    with np.load(tmp_path / "r.npz", allow_pickle=False) as data:
        assert sorted(data.files) == [
            "cumulative_regret",
            "cumulative_reward",
            "rounds",
            "total_regret",
            "total_reward",
        ]
        np.testing.assert_allclose(data["total_regret"], regret, rtol=0, atol=1e-9)
        np.testing.assert_allclose(data["total_reward"], reward, rtol=0, atol=1e-9)


@pytest.mark.parametrize(
    ("policy", "params", "regime"),
    [
        ("hare_synthesize", {"alpha": 0.1, "projections": "random", "credit": "attention_weighted"}, {}),
        (
            "hare_synthesize",
            {"alpha": 0.1, "projections": "learned", "fit_steps": 20},
            {"regime": "warm", "n_logged": 30},
        ),
        ("random", {"mode": "synthesize"}, {}),
    ],
)
def test_a_synthesize_job_writes_its_novelty_and_the_simulations_arrays(tmp_path, policy, params, regime):
    spec = JobSpec.from_dict({**_small_job(policy, params, "between").as_dict(), **regime})
    sidecar = run_job(spec, tmp_path / "s.npz", progress=False)
    with np.load(tmp_path / "s.npz", allow_pickle=False) as data:
        assert data["novelty"].shape == (3,) and ((0 <= data["novelty"]) & (data["novelty"] <= 1)).all()
        assert (data["total_regret"] >= 0).all()
        np.testing.assert_allclose(data["cumulative_regret"][:, -1], data["total_regret"])
        assert sidecar["total_regret_mean"] == pytest.approx(float(data["total_regret"].mean()))
