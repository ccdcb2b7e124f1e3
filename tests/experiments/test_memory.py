"""The pre-flight memory check (hare.experiments.memory): the estimate against its formula and a measured job, the
shipped configs pass, and a batch too large for its device is refused in one line naming the key."""

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from hare import cli
from hare.experiments.config import load_config, resolve_config_file
from hare.experiments.job_spec import EnvironmentSpec, JobSpec
from hare.experiments.plan import job_table

REPOSITORY = Path(__file__).resolve().parents[2]
SMOKE = REPOSITORY / "config" / "smoke.yaml"

GIB = 2**30


def _one_experiment(policies: dict, **experiment) -> dict:
    """The smoke config cut to one tuned synthetic experiment of ``policies`` (and the tables and theory reading it)."""
    config = resolve_config_file(SMOKE)
    config["experiments"] = {"synthetic": {**config["experiments"]["synthetic"], "policies": policies, **experiment}}
    config["tables"] = {name: table for name, table in config["tables"].items() if table["experiment"] == "synthetic"}
    return config


def _linucb_spec(n_runs: int, horizon: int = 20, **env) -> JobSpec:
    params = {"n_items": 200, "n_clusters": 4, "query_dim": 56, "n_users": 8, **env}
    return JobSpec.from_dict(
        {
            "experiment": "e",
            "label": "linucb",
            "policy": "linucb",
            "params": {},
            "n_runs": n_runs,
            "role": "report",
            "base_seed": 1,
            "device": "cpu",
            "record_every": 10,
            "regime": "cold",
            "n_logged": 0,
            "environment": {"name": "s", "kind": "synthetic", "params": params, "dataset": None, "horizon": horizon},
        }
    )


def test_the_estimate_is_linear_in_the_runs_and_counts_linucbs_covariances():
    from hare.experiments.memory import Simulation, simulation_memory
    from hare.model.covariance import ridge_bytes

    totals = [sum(simulation_memory(Simulation(_linucb_spec(n), n, n))) for n in (8, 16, 24)]
    assert totals[2] - totals[1] == totals[1] - totals[0]
    arms, dim = 200, 56 + 8
    per_run = (totals[1] - totals[0]) / 8
    state = ridge_bytes(arms, dim) + 8 * dim * dim + 16 * arms
    assert state < per_run < 1.2 * state, "the covariances dominate a LinUCB run of 200 arms of 64 features"


def test_the_estimate_grows_with_the_rounds_of_a_neighbour_history():
    from hare.experiments.memory import Simulation, simulation_memory

    def spec(horizon: int) -> JobSpec:
        return replace(_linucb_spec(4, horizon, n_items=4), policy="knn_ucb", label="knn_ucb")

    grows = [simulation_memory(Simulation(spec(horizon), 4, 4))[0] for horizon in (1000, 2000, 3000)]
    assert grows[2] - grows[1] == grows[1] - grows[0] > 4 * 1000 * 8 * (56 + 8)


MEASURE = """
import json, os, resource, sys
from hare.allocator import keep_freed_memory
keep_freed_memory()
import torch
torch.set_num_threads(1)
from dataclasses import replace
from hare.experiments.job_spec import JobSpec
from hare.experiments.run import run_job
spec, out = JobSpec.from_dict(json.loads(sys.argv[1])), sys.argv[2]
# A one-run warm-up first: the code pages of torch and its BLAS that the job touches become resident before the
# measurement (they are file-backed, shared, and the page cache decides how many of them are resident at start).
run_job(replace(spec, n_runs=1), out + ".warm.npz", progress=None)
before = int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
run_job(spec, out, progress=None)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before)
"""


@pytest.mark.skipif(
    not Path("/proc/self/statm").exists(), reason="reads the resident set of the process from /proc (Linux)"
)
def test_the_estimate_is_within_a_factor_of_three_of_a_measured_job(tmp_path):
    """One real job (LinUCB, 16 runs, 200 arms of 64 features: 200 MiB of covariances) in a fresh process: the peak
    resident memory it added after a one-run warm-up is within a factor of 3 of :func:`simulation_memory`."""
    import subprocess
    import sys

    from hare.experiments.memory import Simulation, simulation_memory

    spec = _linucb_spec(16)
    estimate = sum(simulation_memory(Simulation(spec, 16, 16)))
    result = subprocess.run(
        [sys.executable, "-c", MEASURE, json.dumps(spec.as_dict()), str(tmp_path / "linucb.npz")],
        capture_output=True,
        text=True,
        check=True,
    )
    measured = int(result.stdout.split()[-1])
    assert estimate / 3 < measured < 3 * estimate, (
        f"measured {measured / 2**20:.0f} MiB, estimated {estimate / 2**20:.0f} MiB"
    )


@pytest.mark.parametrize("name", ["default", "smoke", "paper-core", "paper"])
def test_no_shipped_config_is_refused_on_a_24_gib_machine(name, monkeypatch):
    """The estimates of the shipped configs' largest batches (default 0.4 GiB, smoke 0.3, paper-core 0.5, paper 4.1) are
    far
    from 24 GiB; paper.yaml (device cuda) is checked here as if it ran on a CPU machine of 24 GiB."""
    from hare.experiments import memory

    config = load_config([REPOSITORY / "config" / f"{name}.yaml"], memory=False)
    monkeypatch.setattr(memory, "memory_limit", lambda config: (24 * GIB, "this machine has"))
    estimates = memory.check_memory(config)
    assert len(estimates) == len(job_table(config)["batches"])
    assert max(estimate.peak_bytes for estimate in estimates) < 8 * GIB


def test_a_batch_too_long_for_the_machine_is_refused_in_one_line_naming_the_horizon(tmp_path, monkeypatch, capsys):
    from hare.experiments import memory

    config = _one_experiment(
        {"random": {}, "linucb": {"params": {"lam": 1.0}, "grid": {"alpha": [0.1, 1.0]}}}, horizon=100_000_000
    )
    config["record_every"] = 1
    path = tmp_path / "long.yaml"
    path.write_text(yaml.safe_dump(config))
    monkeypatch.setattr(memory, "memory_limit", lambda config: (24 * GIB, "this machine has"))
    for command in (["jobs", str(path), "--table"], ["validate-config", str(path)]):
        assert cli.main(command) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        [line] = captured.err.strip().splitlines()
        assert re.fullmatch(
            rf"hare {command[0]}: error: experiments\.synthetic\.horizon: 100000000 rounds × 4 runs needs about "
            r"\d+ GiB, "
            r"this machine has 24 GiB \(batch synthetic/synthetic_linear, .*\)",
            line,
        ), line


def test_too_many_runs_at_once_are_refused_naming_n_runs_and_max_runs_per_simulation_lifts_it(monkeypatch):
    """LinUCB on 1,000,000 arms holds 2 GiB of covariances per run: 20 runs at once do not fit 24 GiB, chunks of 2
    do."""
    from hare.experiments import memory
    from hare.experiments.config import check_config
    from hare.experiments.settings import ConfigError

    config = _one_experiment({"linucb": {"params": {"lam": 1.0}, "grid": {"alpha": [0.1, 1.0]}}}, n_runs=20)
    config["environments"]["synthetic_linear"]["params"]["n_items"] = 1_000_000
    monkeypatch.setattr(memory, "memory_limit", lambda config: (24 * GIB, "this machine has"))
    with pytest.raises(
        ConfigError,
        match=r"^experiments\.synthetic\.n_runs: 20 runs of linucb at once needs about \d+ GiB, "
        r"this machine has 24 GiB .*"
        r"set experiments\.synthetic\.max_runs_per_simulation to play fewer at once$",
    ):
        check_config(config, memory=True)
    config["experiments"]["synthetic"]["max_runs_per_simulation"] = 2
    check_config(config, memory=True)


def test_the_limit_is_the_configured_devices_and_a_missing_gpu_skips_the_check(monkeypatch):
    import os

    import torch

    from hare.experiments.memory import memory_limit

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert memory_limit({"device": "cuda"}) is None, (
        "a GPU config planned on a CPU machine: nothing honest to compare with"
    )
    assert memory_limit({"device": "cpu"}) == (
        os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"),
        "this machine has",
    )
    assert memory_limit({"device": "auto", "resources": {"experiment_batches": {"mem_mb": 1000}}}) == (
        1000 * 2**20,
        "resources.experiment_batches.mem_mb gives it",
    )


def test_the_environment_part_is_the_environment_class_answer():
    """The estimate asks the environment's class (hare.envs.registry): a dataset's shape is its record's (the horizon
    capped by the online rows), and a replay adds its greedy read of every logged event for each environment run."""
    from hare.data.registry import get_dataset
    from hare.envs.registry import environment_class
    from hare.experiments.memory import Simulation, environment_shape, simulation_memory

    environment = EnvironmentSpec(name="obd", kind="replay", params={}, dataset="open_bandit", horizon=10**6)
    replay = replace(_linucb_spec(4), environment=environment)
    shape = environment_shape(environment)
    assert shape == environment_class("replay").memory_shape(environment.as_dict())
    assert (shape.rows, shape.dim, shape.arms, shape.rounds) == (*get_dataset("open_bandit").shape, 10000)
    four, eight = (sum(simulation_memory(Simulation(replay, n, n))) for n in (4, 8))
    assert eight - four > 4 * shape.run_bytes > 0
