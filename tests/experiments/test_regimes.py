"""Information regimes as an experiment axis (paper: sec:regimes): config, job specs, sidecars, batches."""

import copy
import json

import pytest
import yaml

import hare.experiments.run as run_module
from hare.experiments.grid import expand_jobs
from hare.experiments.job_spec import JobSpec
from hare.experiments.run import run_batch, run_job
from hare.experiments.settings import ConfigError, validate_config


def _spec(policy="linucb", params=None, regime="cold", n_logged=0, label=None) -> JobSpec:
    return JobSpec.from_dict(
        {
            "experiment": "test",
            "label": label or policy,
            "policy": policy,
            "params": {"alpha": 1.0} if params is None else params,
            "environment": {
                "name": "sim",
                "kind": "synthetic",
                "params": {"n_items": 12, "n_clusters": 3, "n_users": 2},
                "dataset": None,
                "horizon": 40,
            },
            "n_runs": 2,
            "role": "report",
            "base_seed": 5,
            "device": "cpu",
            "record_every": 10,
            "regime": regime,
            "n_logged": n_logged,
        }
    )


def _config(regime="warm", n_logged=50, env_kind="synthetic", logged_rows=100):
    env = {"kind": env_kind, "params": {"n_items": 12, "n_clusters": 3}}
    if env_kind == "classification":
        env = {"kind": "classification", "dataset": "mushroom", "params": {"logged_rows": logged_rows}}
    if env_kind == "replay":
        env = {"kind": "replay", "dataset": "open_bandit"}
    experiment = {
        "environments": ["e"],
        "horizon": 30,
        "n_runs": 2,
        "n_tuning_runs": 2,
        "regime": regime,
        "policies": {"linucb": {"params": {"alpha": 1.0}}, "lin_ts": {"params": {"nu": 0.1}}},
    }
    if n_logged is not None:
        experiment["n_logged"] = n_logged
    return {"base_seed": 1, "environments": {"e": env}, "experiments": {"x": experiment}, "tables": {}}


def test_every_job_carries_its_experiments_regime():
    jobs = expand_jobs(_config())
    assert {(j.spec.regime, j.spec.n_logged) for j in jobs} == {("warm", 50)}
    cold = _config(regime="cold", n_logged=None)
    assert {(j.spec.regime, j.spec.n_logged) for j in expand_jobs(cold)} == {("cold", 0)}


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (_config(n_logged=None), "experiments.x.n_logged: a warm experiment needs"),
        (_config(n_logged=0), "experiments.x.n_logged: a warm experiment needs"),
        (_config(regime="cold", n_logged=10), "experiments.x.n_logged: only a warm experiment"),
        (_config(regime="tepid"), "experiments.x.regime: must be one of cold, warm"),
        (_config(env_kind="replay"), "experiments.x.regime: 'warm' needs logged interactions"),
        (
            _config(env_kind="classification", n_logged=500, logged_rows=100),
            "exceeds the 100 rows environment 'e' sets aside",
        ),
    ],
)
def test_bad_regimes_are_config_errors_naming_the_key(config, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        validate_config(config)


def test_the_shipped_configs_run_both_regimes_for_the_main_tables():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    default = yaml.safe_load((root / "config" / "default.yaml").read_text())
    regimes = {name: exp.get("regime", "cold") for name, exp in default["experiments"].items()}
    for base in ("classification", "synthetic"):
        assert regimes[base] == "cold" and regimes[f"{base}_warm"] == "warm"
        assert default["experiments"][base]["environments"] == default["experiments"][f"{base}_warm"]["environments"]
        assert default["tables"][f"{base}_warm"]["experiment"] == f"{base}_warm"


def test_warm_jobs_of_every_policy_record_the_same_warm_start(tmp_path):
    sidecars = [
        run_job(_spec(p, params, "warm", 25), tmp_path / f"{p}.npz", progress=False)
        for p, params in (("linucb", {"alpha": 1.0}), ("lin_ts", {"nu": 0.1}), ("eps_greedy", {"epsilon": 0.1}))
    ]
    assert {(s["regime"], s["n_logged"]) for s in sidecars} == {("warm", 25)}
    digests = {s["warm_start_digest"] for s in sidecars}
    assert len(digests) == 1 and None not in digests
    on_disk = json.loads((tmp_path / "linucb.json").read_text())
    assert on_disk["warm_start_digest"] == sidecars[0]["warm_start_digest"]


def test_the_warm_start_changes_the_result_and_cold_jobs_record_none(tmp_path):
    cold = run_job(_spec(), tmp_path / "cold.npz", progress=False)
    warm = run_job(_spec(regime="warm", n_logged=200), tmp_path / "warm.npz", progress=False)
    assert cold["regime"] == "cold" and cold["n_logged"] == 0 and cold["warm_start_digest"] is None
    assert warm["total_regret_mean"] < cold["total_regret_mean"], (
        "200 logged rounds should help LinUCB on a 12-arm linear instance"
    )


def test_in_the_cold_regime_hare_never_reads_the_logs(tmp_path, monkeypatch):
    built = []
    original = run_module.build_environment

    def spy(spec, device, dataset_path=None, copies=1):
        env = original(spec, device, dataset_path, copies)
        built.append(env)
        return env

    monkeypatch.setattr(run_module, "build_environment", spy)
    run_job(
        _spec("hare", {"projections": "random", "alpha": 0.1, "online_lr": 0.05}), tmp_path / "hare.npz", progress=False
    )
    assert built and built[0].logs_allowed is False and built[0].logged_reads == 0


def test_a_batch_writes_what_separate_jobs_write(tmp_path):
    specs = [
        _spec("linucb", {"alpha": 0.5}, "warm", 20),
        _spec("lin_ts", {"nu": 0.1}, "warm", 20),
        _spec("random", {}, "warm", 20),
    ]
    for spec in specs:
        run_job(copy.deepcopy(spec), tmp_path / f"alone-{spec.label}.npz", progress=False)
    run_batch(
        [{"job": spec, "out": str(tmp_path / f"batch-{spec.label}.npz"), "selected": None} for spec in specs],
        progress=False,
    )
    for spec in specs:
        assert (tmp_path / f"alone-{spec.label}.npz").read_bytes() == (
            tmp_path / f"batch-{spec.label}.npz"
        ).read_bytes()


def test_a_bad_batch_entry_fails_before_any_job_runs(tmp_path):
    entries = [
        {"job": _spec(), "out": str(tmp_path / "a.npz")},
        {"job": _spec("lin_ts", {"nu": 0.1}), "out": str(tmp_path / "b.txt")},
    ]
    with pytest.raises(ValueError, match="batch entry 1 \\('lin_ts'\\): output must be a .npz path"):
        run_batch(entries, progress=False)
    assert not list(tmp_path.iterdir())
