"""The cost model (hare.experiments.studies.cost_model): its line, its sums, its grouping of jobs, and a measured
run."""

from __future__ import annotations

import numpy as np
import pytest

from hare.experiments.grid import expand_jobs
from hare.experiments.studies.cost_model import (
    cost_at,
    cost_line,
    entry_key,
    predict,
    predicted_seconds,
    run_cost_model,
    simulations,
)


def test_the_line_recovers_a_cost_linear_in_the_round():
    t = np.arange(400)
    a, b = cost_line(list(2e-3 + 1e-6 * t), window=20)
    assert a == pytest.approx(2e-3, rel=1e-9) and b == pytest.approx(1e-6, rel=1e-9)


def test_a_constant_cost_has_no_slope_and_a_decreasing_one_is_not_extrapolated_downwards():
    assert cost_line([1e-3] * 200, window=20) == pytest.approx((1e-3, 0.0))
    assert cost_line(list(np.linspace(2e-3, 1e-3, 200)), window=20)[1] == 0.0


def test_costs_are_measured_where_played_and_on_the_line_beyond():
    seconds = [1.0] * 10 + [3.0] * 10
    assert cost_at(seconds, (0.5, 0.1), 20, window=10) == (3.0, True)
    assert cost_at(seconds, (0.5, 0.1), 31, window=10) == (pytest.approx(0.5 + 0.1 * 30), False)


def test_a_prediction_sums_the_measured_rounds_then_the_line():
    assert predicted_seconds([1.0, 2.0], (0.0, 0.0), 2) == 3.0
    assert predicted_seconds([1.0, 2.0], (10.0, 1.0), 4) == pytest.approx(1 + 2 + (10 + 2) + (10 + 3))


def test_tuning_points_of_an_entry_play_as_one_simulation(smoke_config):
    jobs = [job for job in expand_jobs(smoke_config) if job.experiment == "classification"]
    groups = simulations(jobs)
    tuning = [g for g in groups if g[0].role == "tuning"]
    assert all(len({entry_key(job) for job in group}) == 1 for group in groups)
    assert sum(len(g) for g in groups) == len(jobs) and len(tuning) < sum(1 for job in jobs if job.role == "tuning")
    model = {entry_key(job): {"round_seconds": [], "line": (1e-3, 0.0), "warm_start_s": 0.0} for job in jobs}
    prediction = predict(jobs, model)
    assert prediction["cpu_seconds"] == pytest.approx(sum(1e-3 * g[0].spec["environment"]["horizon"] for g in groups))
    assert prediction["unmodelled"] == []


def test_a_measured_run_reports_every_entry_of_the_experiment(smoke_config, tmp_path):
    result = run_cost_model(smoke_config, tmp_path, n_runs=3, at=(10, 30), window=5, budget_s=0.2, only=["synthetic"])
    labels = {row["label"] for row in result["entries"]}
    assert labels == set(smoke_config["experiments"]["synthetic"]["policies"])
    for row in result["entries"]:
        assert set(row["cost_at"]) == {"10", "30"} and all(cost > 0 for cost in row["cost_at"].values())
        assert row["measured_at"]["10"] == (row["rounds_played"] >= 10)
    assert result["prediction"]["cpu_seconds"] > 0 and result["prediction"]["unmodelled"] == []


def test_an_entry_without_its_prepared_dataset_is_listed_not_measured(smoke_config, tmp_path):
    result = run_cost_model(smoke_config, tmp_path, n_runs=2, at=(5,), window=2, budget_s=0.05, only=["classification"])
    assert result["entries"] == [] and result["not_measured"]
    assert all("mushroom.npz is missing" in row["reason"] for row in result["not_measured"])
    assert len(result["prediction"]["unmodelled"]) == len(
        simulations([j for j in expand_jobs(smoke_config) if j.experiment == "classification"])
    )


def test_experiments_that_run_the_same_policy_on_the_same_environment_share_a_cost_but_not_a_simulation(smoke_config):
    jobs = expand_jobs(smoke_config)
    cold = [
        job
        for job in jobs
        if job.spec["policy"] == "linucb" and job.environment == "mushroom" and job.spec.get("regime", "cold") == "cold"
    ]
    assert len({job.experiment for job in cold}) > 1 and len({entry_key(job) for job in cold}) == 1
    tuning = [job for job in cold if job.role == "tuning"]
    assert len(simulations(tuning)) == len({(job.experiment, job.label.split("@")[0]) for job in tuning})


def test_a_policy_that_needs_the_logs_is_measured_warm_and_the_others_cold(smoke_config, tmp_path):
    result = run_cost_model(smoke_config, tmp_path, n_runs=2, at=(5,), window=2, budget_s=0.05, only=["synthetic_warm"])
    regimes = {row["label"]: row["regime"] for row in result["entries"]}
    learned = [
        label
        for label, entry in smoke_config["experiments"]["synthetic_warm"]["policies"].items()
        if (entry.get("params") or {}).get("projections") == "learned"
    ]
    assert learned and all(regimes[label] == "warm" for label in learned)
    assert {label for label, regime in regimes.items() if regime == "cold"} == set(regimes) - set(learned)
