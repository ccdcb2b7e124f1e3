"""A job's runs played in chunks (``max_runs_per_simulation``) give the arrays of the unchunked play, bit for bit."""

import copy

import numpy as np
import pytest

from hare.experiments.config import check_config
from hare.experiments.grid import expand_jobs
from hare.experiments.job_spec import JobSpec
from hare.experiments.run import run_batch, run_chunks, run_job, run_simulations, simulation_groups
from hare.experiments.settings import ConfigError, validate_config
from hare.io import config_hash


def _synthetic_spec(policy, params, n_runs=5, horizon=30, **extra):
    """A job specification's dict form (cold unless ``extra`` says otherwise)."""
    return {
        "experiment": "chunks",
        "label": policy,
        "policy": policy,
        "params": params,
        "environment": {
            "name": "sim",
            "kind": "synthetic",
            "params": {"n_items": 12, "n_clusters": 3, "n_users": 2},
            "dataset": None,
            "horizon": horizon,
        },
        "n_runs": n_runs,
        "role": "report",
        "base_seed": 11,
        "device": "cpu",
        "record_every": 7,
        "regime": "cold",
        "n_logged": 0,
        **extra,
    }


def _play(spec, out):
    sidecar = run_job(JobSpec.from_dict(spec), out, progress=False)
    with np.load(out, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}, sidecar


def _assert_identical(whole, chunked):
    assert set(whole) == set(chunked)
    for key in whole:
        assert whole[key].dtype == chunked[key].dtype and np.array_equal(whole[key], chunked[key]), key


@pytest.mark.parametrize(
    ("policy", "params", "regime"),
    [
        ("linucb", {"alpha": 0.5}, {}),
        ("linucb", {"alpha": 0.5}, {"regime": "warm", "n_logged": 20}),
        ("lnucb_ta", {"alpha_0": 1.0}, {}),
        ("lnucb_ta", {"alpha_0": 1.0, "knn_weights": "distance", "global_mean": "all_rewards"}, {}),
        ("random", {}, {}),
        ("random", {"mode": "synthesize"}, {}),
    ],
)
def test_a_synthetic_job_in_chunks_equals_the_whole_play(tmp_path, policy, params, regime):
    whole, whole_sidecar = _play(_synthetic_spec(policy, params, **regime), tmp_path / "whole.npz")
    chunked, sidecar = _play(
        _synthetic_spec(policy, params, max_runs_per_simulation=2, **regime), tmp_path / "chunked.npz"
    )
    _assert_identical(whole, chunked)
    assert whole["total_regret"].shape == (5,) and len(set(whole["total_regret"].tolist())) > 1, (
        "the runs should differ"
    )
    assert sidecar["chunks"] == [[0, 2], [2, 4], [4, 5]] and "chunks" not in whole_sidecar
    assert (
        sidecar["n_runs"] == 5
        and sidecar["wall_time_s"] > 0
        and sidecar["total_regret_mean"] == whole_sidecar["total_regret_mean"]
    )
    assert sidecar["warm_start_digest"] == whole_sidecar["warm_start_digest"]


@pytest.fixture
def tiny_dataset(tmp_path):
    """A prepared classification dataset of 60 unit-norm rows, 6 features, 3 classes (project preparation)."""
    rng = np.random.default_rng(3)
    features = rng.normal(size=(60, 6))
    features /= np.linalg.norm(features, axis=1, keepdims=True)
    path = tmp_path / "tiny.npz"
    np.savez(path, features=features.astype(np.float32), labels=rng.integers(0, 3, 60))
    return path


@pytest.mark.parametrize(
    ("policy", "params"), [("linucb", {"alpha": 0.1}), ("lnucb_ta", {"alpha_0": 0.1}), ("lin_ts", {"nu": 0.1})]
)
def test_a_classification_job_in_chunks_equals_the_whole_play(tmp_path, tiny_dataset, policy, params):
    environment = {"name": "tiny", "kind": "classification", "params": {}, "dataset": "tiny", "horizon": 30}
    spec = {**_synthetic_spec(policy, params), "environment": environment}
    run_job(JobSpec.from_dict(spec), tmp_path / "whole.npz", tiny_dataset, progress=False)
    chunked = run_job(
        JobSpec.from_dict({**spec, "max_runs_per_simulation": 2}),
        tmp_path / "chunked.npz",
        tiny_dataset,
        progress=False,
    )
    with np.load(tmp_path / "whole.npz") as a, np.load(tmp_path / "chunked.npz") as b:
        _assert_identical({k: a[k] for k in a.files}, {k: b[k] for k in b.files})
    assert chunked["chunks"] == [[0, 2], [2, 4], [4, 5]]


def test_a_limit_at_or_above_the_run_count_plays_one_chunk(tmp_path):
    whole, _ = _play(_synthetic_spec("linucb", {"alpha": 0.5}), tmp_path / "whole.npz")
    one, sidecar = _play(_synthetic_spec("linucb", {"alpha": 0.5}, max_runs_per_simulation=9), tmp_path / "one.npz")
    _assert_identical(whole, one)
    assert sidecar["chunks"] == [[0, 5]]


def test_run_chunks():
    assert run_chunks(20, 7) == [(0, 7), (7, 14), (14, 20)]
    assert (
        run_chunks(20, None) == [(0, 20)]
        and run_chunks(3, 10) == [(0, 3)]
        and run_chunks(3, 1) == [(0, 1), (1, 2), (2, 3)]
    )


def _grid_entries(tmp_path, limit, n_runs=2):
    entries = []
    for alpha in (0.01, 0.1, 1.0):
        spec = {
            **_synthetic_spec("linucb", {"alpha": alpha}, n_runs=n_runs),
            "label": f"linucb@alpha={alpha}",
            "role": "tuning",
        }
        if limit is not None:
            spec["max_runs_per_simulation"] = limit
        entries.append(
            {"job": JobSpec.from_dict(spec), "out": str(tmp_path / f"{spec['label']}.npz"), "selected": None}
        )
    return entries


def test_a_grid_simulation_holds_at_most_the_limit(tmp_path):
    assert simulation_groups(_grid_entries(tmp_path, None)) == [[0, 1, 2]]
    assert simulation_groups(_grid_entries(tmp_path, 4)) == [[0, 1], [2]]
    assert simulation_groups(_grid_entries(tmp_path, 1)) == [[0], [1], [2]]


def test_a_grid_larger_than_the_limit_plays_in_groups_that_fit(tmp_path):
    """Called with a grid of 3 x 2 runs and a limit of 4, run_simulations plays two points together and the third
    alone, as simulation_groups would have grouped them; run_batch with a chunked report job plays it in chunks."""
    entries = _grid_entries(tmp_path, 4)
    sidecars = run_simulations([e["job"] for e in entries], [e["out"] for e in entries], progress=False)
    assert [s.get("grid_simulation", {}).get("labels") for s in sidecars] == [
        [e["job"].label for e in entries[:2]]
    ] * 2 + [None]
    assert all(s["n_runs"] == 2 and s["chunks"] == [[0, 2]] for s in sidecars)
    report = {
        "job": JobSpec.from_dict(_synthetic_spec("linucb", {"alpha": 0.5}, max_runs_per_simulation=2)),
        "out": str(tmp_path / "report.npz"),
        "selected": None,
    }
    (sidecar,) = run_batch([report], progress=False)
    assert sidecar["chunks"] == [[0, 2], [2, 4], [4, 5]]


@pytest.mark.parametrize("bad", [0, -1, "x", True])
def test_a_job_with_a_bad_limit_is_refused_at_the_boundary(bad):
    """``hare run --job`` reads a job through :func:`hare.experiments.job_boundary.parse_job`; the round loop takes
    the limit as the boundary passed it."""
    from hare.experiments.job_boundary import parse_job
    from hare.experiments.settings import ConfigError

    with pytest.raises(ConfigError, match=r"^job.max_runs_per_simulation: "):
        parse_job(_synthetic_spec("random", {}, max_runs_per_simulation=bad))


def _config(smoke_config):
    """The smoke config with only its ``published`` table (the one these tests need), so that a table kind another
    change introduces cannot add its own schema error to the messages checked here."""
    config = copy.deepcopy(smoke_config)
    config["tables"] = {"published": config["tables"]["published"]}
    return config


@pytest.mark.parametrize("bad", [0, -1, "x"])
@pytest.mark.parametrize("where", ["experiment", "policy"])
def test_a_bad_limit_in_the_config_is_refused_in_one_line(smoke_config, bad, where):
    config = _config(smoke_config)
    experiment = config["experiments"]["published"]
    (experiment if where == "experiment" else experiment["policies"]["linucb"])["max_runs_per_simulation"] = bad
    path = "experiments.published." + ("" if where == "experiment" else "policies.linucb.") + "max_runs_per_simulation"
    for check in (check_config, validate_config):  # the schema, and the check of a config that skipped it
        with pytest.raises(ConfigError) as error:
            check(config)
        message = str(error.value)
        assert path in message and message.count("max_runs_per_simulation") == 1 and "\n" not in message, message


def test_the_limit_reaches_only_the_jobs_of_its_config(smoke_config):
    before = {job.stem: config_hash(job.spec.as_dict()) for job in expand_jobs(smoke_config)}
    assert not any("max_runs_per_simulation" in job.spec.as_dict() for job in expand_jobs(smoke_config))
    config = _config(smoke_config)
    config["experiments"]["published"]["max_runs_per_simulation"] = 3
    config["experiments"]["published"]["policies"]["linucb"]["max_runs_per_simulation"] = 2
    check_config(config)
    after = expand_jobs(config)
    assert {job.stem: config_hash(job.spec.as_dict()) for job in after if job.experiment != "published"} == {
        stem: h for stem, h in before.items() if not stem.split("/")[1] == "published"
    }
    limits = {
        job.label.split("@")[0]: job.spec.max_runs_per_simulation for job in after if job.experiment == "published"
    }
    assert limits["linucb"] == 2 and all(limit == 3 for label, limit in limits.items() if label != "linucb")


@pytest.mark.parametrize(
    ("params", "regime"),
    [
        ({"alpha": 0.1, "projections": "random", "credit": "gradient"}, {}),
        ({"alpha": 0.1, "projections": "learned", "fit_steps": 20}, {"regime": "warm", "n_logged": 20}),
    ],
)
def test_a_synthesize_job_in_chunks_equals_the_whole_play_up_to_rounding(tmp_path, params, regime):
    """HARE's attention scores are one product over the runs, whose last bit depends on their number: the outputs
    ``z`` of a chunk differ from the whole play's by rounding (select mode's arms do not move), so the arrays agree
    to 1e-12 (a run that played other outputs would differ far more) and the novelty exactly."""
    whole, _ = _play(_synthetic_spec("hare_synthesize", params, **regime), tmp_path / "whole.npz")
    chunked, sidecar = _play(
        _synthetic_spec("hare_synthesize", params, max_runs_per_simulation=2, **regime), tmp_path / "chunked.npz"
    )
    assert set(whole) == set(chunked) and "novelty" in whole and sidecar["chunks"] == [[0, 2], [2, 4], [4, 5]]
    for key in ("cumulative_regret", "cumulative_reward", "total_regret", "total_reward"):
        np.testing.assert_allclose(whole[key], chunked[key], rtol=1e-12, atol=1e-12, err_msg=key)
    np.testing.assert_array_equal(whole["novelty"], chunked["novelty"])
