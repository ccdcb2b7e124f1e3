"""Number macros of the paper from run files: simulated runs (regret, its spread, runs above half the horizon)
and replay runs (which have no regret) side by side."""

from __future__ import annotations

import numpy as np
import pytest

from hare.data.fetch import fetch_dataset
from hare.data.prepare import prepare_dataset
from hare.experiments.job_spec import EnvironmentSpec, JobSpec
from hare.experiments.run import run_job
from hare.experiments.tables.paper_macros import paper_macros
from hare.io import read_npz


@pytest.fixture(scope="module")
def open_bandit_sample(tmp_path_factory):
    root = tmp_path_factory.mktemp("obd")
    fetch_dataset("open_bandit", root / "raw", offline=True)
    prepare_dataset("open_bandit", root / "raw", root / "prepared.npz")
    return root / "prepared.npz"


def _spec(name, kind, horizon, **environment) -> JobSpec:
    environment = {"params": {}, "dataset": None, **environment}
    return JobSpec(
        experiment="exp",
        environment=EnvironmentSpec(name=name, kind=kind, horizon=horizon, **environment),
        label="linucb",
        policy="linucb",
        params={"alpha": 1.0},
        n_runs=3,
        role="report",
        base_seed=0,
        device="cpu",
        record_every=10,
        regime="cold",
        n_logged=0,
    )


def test_macros_of_simulated_and_replay_runs(tmp_path, open_bandit_sample):
    simulated = tmp_path / "sim.npz"
    run_job(
        _spec("sim", "synthetic", 40, params={"n_items": 6, "n_clusters": 2, "n_users": 2}, dataset=None),
        simulated,
        progress=False,
    )
    replay = tmp_path / "replay.npz"
    run_job(_spec("obd", "replay", 60, dataset="open_bandit"), replay, open_bandit_sample, progress=False)
    text = paper_macros([simulated, replay])
    above = int(np.sum(read_npz(simulated)["total_regret"] > 20))
    assert f"\\newcommand{{\\nRunsAboveHalfExpSimLinucb}}{{{above}}}" in text
    assert "nRunsAboveHalfExpObd" not in text
