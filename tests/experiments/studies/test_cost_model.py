"""The cost model (hare.experiments.studies.cost_model, with its cost_schedule, cost_measurement and
cost_prediction): the training schedule's count, the line, a planted cost table predicted by hand, the run-count
dependence, the grouping of jobs into plays, measured runs, and the refusal of bad arguments."""

from __future__ import annotations

import copy
import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from hare.cli import main
from hare.experiments.grid import expand_jobs
from hare.experiments.studies.cost_measurement import entry_key, measure_entry
from hare.experiments.studies.cost_model import run_cost_model
from hare.experiments.studies.cost_prediction import (
    cost_at,
    cost_line,
    play_seconds,
    predict,
    rounds_seconds,
    runs_line,
)
from hare.experiments.studies.cost_schedule import plays, trainings_in


def brute_force_trainings(first, last, dense, every, steps=1):
    return sum(1 for t in range(first, last) if steps > 0 and (t < dense or (t + 1) % every == 0))


@pytest.mark.parametrize("dense", [0, 1, 7, 2000])
@pytest.mark.parametrize("every", [1, 3, 100])
def test_the_training_count_is_the_schedule_counted_round_by_round(dense, every):
    for first, last in [(0, 0), (0, 1), (0, 10000), (1000, 11000), (1999, 2101), (2500, 2600), (5, 3)]:
        assert trainings_in(first, last, dense, every) == brute_force_trainings(first, last, dense, every)
    assert trainings_in(0, 10000, dense, every, train_steps=0) == 0


def test_the_paper_schedule_trains_2080_times_in_10000_rounds_and_10_more_after_a_warm_start_of_1000():
    """A warm start's logs are updates 0 .. M - 1, inside the dense phase: it moves the horizon 1,000 updates on."""
    assert trainings_in(0, 10000, 2000, 100) == 2080
    assert trainings_in(0, 11000, 2000, 100) == 2090


def test_the_line_recovers_a_cost_linear_in_the_round_and_one_that_saturates():
    t = np.arange(400)
    a, b = cost_line(list(2e-3 + 1e-6 * t), window=20)
    assert a == pytest.approx(2e-3, rel=1e-9) and b == pytest.approx(1e-6, rel=1e-9)
    a, b = cost_line(list(2e-3 + 1e-6 * np.minimum(t, 150)), window=10, cap=150)
    assert a == pytest.approx(2e-3, rel=1e-6) and b == pytest.approx(1e-6, rel=1e-6)
    assert cost_at([], (a, b), 10_000, window=10, cap=150) == (pytest.approx(2e-3 + 1e-6 * 150), False)


def test_a_constant_cost_has_no_slope_and_a_decreasing_one_is_not_extrapolated_downwards():
    assert cost_line([1e-3] * 200, window=20) == pytest.approx((1e-3, 0.0))
    assert cost_line(list(np.linspace(2e-3, 1e-3, 200)), window=20)[1] == 0.0


def test_costs_are_measured_where_played_and_on_the_line_beyond():
    seconds = [1.0] * 10 + [3.0] * 10
    assert cost_at(seconds, (0.5, 0.1), 20, window=10) == (3.0, True)
    assert cost_at(seconds, (0.5, 0.1), 31, window=10) == (pytest.approx(0.5 + 0.1 * 30), False)


def test_a_sum_of_rounds_takes_the_measured_rounds_then_the_line_up_to_its_cap():
    assert rounds_seconds([1.0, 2.0], (0.0, 0.0), 2) == 3.0
    assert rounds_seconds([1.0, 2.0], (10.0, 1.0), 4) == pytest.approx(1 + 2 + (10 + 2) + (10 + 3))
    assert rounds_seconds([1.0], (10.0, 1.0), 4, cap=2) == pytest.approx(1 + (10 + 1) + (10 + 2) + (10 + 2))


def planted(runs, setup, rounds, training=None, regime="cold", warm=0.0):
    return {
        "runs": runs,
        "setup_s": setup,
        "warm_start_s": warm,
        "round_seconds": rounds,
        "training_seconds": training or [],
        "rounds_played": len(rounds),
        "regime": regime,
    }


def test_a_planted_cost_table_gives_the_seconds_by_hand():
    """A neural entry: set-up 2 s, a round without training 0.01 s (flat), a training 0.5 s; schedule D = 3, E = 5.
    A cold job of T = 20 after M = 4 logs plays updates 0..23: trainings at t = 0, 1, 2, 4, 9, 14, 19 = 7."""
    measurement = planted(10, 2.0, [0.01] * 3, [0.5] * 3)
    seconds = play_seconds(measurement, (0.01, 0.0), n_logged=4, horizon=20, schedule=(3, 5, 1))
    assert brute_force_trainings(0, 24, 3, 5) == 7
    assert seconds == pytest.approx(2.0 + 24 * 0.01 + 7 * 0.5)
    warm = planted(10, 2.0, [0.01] * 3, [0.5] * 3, regime="warm", warm=4.0)
    assert play_seconds(warm, (0.01, 0.0), 4, 20, (3, 5, 1)) == pytest.approx(2.0 + 4.0 + 20 * 0.01 + 4 * 0.5)


def test_the_run_count_dependence_is_the_line_through_two_run_counts_and_proportional_with_one():
    at = runs_line([(5, 10.0), (20, 40.0)])
    assert at(5) == pytest.approx(10.0) and at(15) == pytest.approx(30.0) and at(40) == pytest.approx(80.0)
    shared = runs_line([(5, 12.0), (20, 15.0)])
    assert shared(10) == pytest.approx(13.0) and shared(1) == pytest.approx(11.2)
    assert runs_line([(5, 15.0), (20, 12.0)])(100) == pytest.approx(13.5)
    assert runs_line([(20, 4.0)])(15) == pytest.approx(3.0)


def test_a_prediction_prices_every_simulation_at_its_own_run_count(smoke_config):
    """Tuning grids of smoke's classification play as one simulation of their points' runs, reported jobs alone; a
    planted model of ``S(B) = 1 + 0.1 B T`` at every run count gives the total by hand."""
    jobs = [job for job in expand_jobs(smoke_config) if job.experiment == "classification"]
    simulations = plays(jobs)
    assert sum(len(members) for members, _ in simulations) == len(jobs)
    grids = [(members, counts) for members, counts in simulations if len(members) > 1]
    assert grids and all(counts == [len(members) * members[0].spec.n_runs] for members, counts in grids)
    line = {b: planted(b, 1.0, []) for b in (2, 8)}
    model = {
        entry_key(job): {"measurements": list(line.values()), "lines": [[0.1 * b, 0.0] for b in line]} for job in jobs
    }
    prediction = predict(jobs, model, recording_s=0.5, startup_s=3.0)
    rounds = {
        id(members[0]): members[0].spec.environment.horizon + members[0].spec.n_logged for members, _ in simulations
    }
    expected = sum(
        sum(1.0 + 0.1 * b * rounds[id(members[0])] for b in counts) + 0.5 * len(members)
        for members, counts in simulations
    )
    expected += 3.0 * len({(job.experiment, job.environment) for job in jobs})
    assert prediction["cpu_seconds"] == pytest.approx(expected)
    assert prediction["unmodelled"] == []


def test_a_job_with_a_run_limit_plays_in_chunks(smoke_config):
    config = copy.deepcopy(smoke_config)
    config["experiments"]["synthetic"].update(n_runs=5, max_runs_per_simulation=2)
    jobs = [job for job in expand_jobs(config) if job.experiment == "synthetic" and job.role == "report"]
    assert jobs and all(counts == [2, 2, 1] for _, counts in plays(jobs))


def test_experiments_that_run_the_same_policy_on_the_same_environment_share_a_cost_but_not_a_simulation(smoke_config):
    jobs = expand_jobs(smoke_config)
    cold = [
        job
        for job in jobs
        if job.spec.policy == "linucb" and job.environment == "mushroom" and job.spec.regime == "cold"
    ]
    assert len({job.experiment for job in cold}) > 1 and len({entry_key(job) for job in cold}) == 1
    tuning = [job for job in cold if job.role == "tuning"]
    assert len(plays(tuning)) == len({(job.experiment, job.label.split("@")[0]) for job in tuning})


def neural_config(smoke_config):
    """Smoke's synthetic experiment with a small NeuralUCB of a short training schedule."""
    config = copy.deepcopy(smoke_config)
    params = {"width": 4, "train_steps": 2, "dense_training_rounds": 3, "train_every": 4, "exploration": "diagonal"}
    config["experiments"] = {
        "synthetic": {**config["experiments"]["synthetic"], "policies": {"neural_ucb": {"params": params}}}
    }
    return config


def test_a_neural_entry_times_each_training_apart_from_its_round(smoke_config, tmp_path):
    job = next(job for job in expand_jobs(neural_config(smoke_config)) if job.role == "report")
    measured = measure_entry(job, tmp_path, n_runs=2, horizon=12, budget_s=math.inf)
    assert measured["rounds_played"] == 12 and len(measured["training_seconds"]) == brute_force_trainings(0, 12, 3, 4)
    assert all(seconds > 0 for seconds in measured["round_seconds"] + measured["training_seconds"])
    assert measured["setup_s"] > 0


def test_a_measured_run_reports_every_entry_with_its_coverage(smoke_config, tmp_path):
    result = run_cost_model(
        smoke_config, tmp_path, runs=(1, 3), at=(10, 30), window=5, budget_s=0.2, only=["synthetic"]
    )
    labels = {row["label"] for row in result["entries"]}
    assert labels == set(smoke_config["experiments"]["synthetic"]["policies"])
    for row in result["entries"]:
        assert set(row["cost_at"]) == {"10", "30"} and all(cost > 0 for cost in row["cost_at"].values())
        assert row["measured_at"]["10"] == (row["rounds_played"] >= 10)
        assert [m["runs"] for m in row["measurements"]] == [1, 3] and row["recording_s"] > 0
        assert row["coverage"].startswith(("past its most expensive phase", "held-out check"))
        if row["coverage"].startswith("held-out check"):
            assert any(m["check"] is not None for m in row["measurements"]) or row["rounds_played"] < 20
    assert result["startup_s"] > 0
    assert result["prediction"]["cpu_seconds"] > 0 and result["prediction"]["unmodelled"] == []


def test_a_neural_run_is_measured_past_its_training_phase(smoke_config, tmp_path):
    result = run_cost_model(neural_config(smoke_config), tmp_path, runs=(2,), at=(5,), window=2, budget_s=0.5)
    (row,) = result["entries"]
    assert row["coverage"].startswith("past its most expensive phase")
    assert row["measurements"][0]["trainings"] >= 1 and row["measurements"][0]["training_s"] > 0


def test_an_entry_without_its_prepared_dataset_is_listed_with_its_reason(smoke_config, tmp_path):
    result = run_cost_model(
        smoke_config, tmp_path, runs=(2,), at=(5,), window=2, budget_s=0.05, only=["classification"]
    )
    assert result["entries"] == [] and result["not_measured"]
    assert all("mushroom.npz is missing" in row["reason"] for row in result["not_measured"])
    jobs = [j for j in expand_jobs(smoke_config) if j.experiment == "classification"]
    assert len(result["prediction"]["unmodelled"]) == len(jobs)
    assert result["prediction"]["unmodelled_reasons"] == {"prepared dataset missing": len(jobs)}


def test_a_policy_that_needs_the_logs_is_measured_warm_and_the_others_cold(smoke_config, tmp_path):
    result = run_cost_model(
        smoke_config, tmp_path, runs=(2,), at=(5,), window=2, budget_s=0.05, only=["synthetic_warm"]
    )
    regimes = {row["label"]: row["regime"] for row in result["entries"]}
    learned = [
        label
        for label, entry in smoke_config["experiments"]["synthetic_warm"]["policies"].items()
        if (entry.get("params") or {}).get("projections") == "learned"
    ]
    assert learned and all(regimes[label] == "warm" for label in learned)
    assert {label for label, regime in regimes.items() if regime == "cold"} == set(regimes) - set(learned)


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (["--runs", "-1"], "--runs"),
        (["--runs", "0", "20"], "--runs"),
        (["--budget", "nan"], "--budget"),
        (["--budget", "0"], "--budget"),
        (["--window", "0"], "--window"),
        (["--at", "0"], "--at"),
    ],
)
def test_bad_arguments_are_refused_in_one_line_naming_them_before_any_work(arguments, named, tmp_path, capsys):
    out = tmp_path / "cost.json"
    status = main(["cost-model", "config/smoke.yaml", "--out", str(out), *arguments])
    error = capsys.readouterr().err.strip()
    assert status == 2 and len(error.splitlines()) == 1 and named in error and not out.exists()


def test_startup_seconds_counts_the_child_process_cpu_time():
    """The process start is counted from the child's resource usage: positive (an import of torch costs CPU time)
    and bounded."""
    from hare.experiments.studies.cost_measurement import startup_seconds

    assert 0.0 < startup_seconds() < 30.0


def test_a_job_is_priced_at_the_rounds_its_environment_plays_not_its_nominal_horizon():
    """Mushroom has 8,124 rows; with 1,000 set aside for logs a horizon of 10,000 plays 7,124 rounds (the measured
    paper-core sidecars say 7,124), and HARE-Sim plays its whole horizon."""
    from pathlib import Path

    from hare.experiments.config import load_config
    from hare.experiments.studies.cost_prediction import played_rounds

    jobs = {
        (job.experiment, job.environment): job
        for job in expand_jobs(load_config([Path("config/paper-core.yaml")]))
        if job.role == "report"
    }
    assert int(jobs["classification", "mushroom"].spec.environment.horizon) == 10000
    assert played_rounds(jobs["classification", "mushroom"]) == 7124
    assert played_rounds(jobs["synthetic", "synthetic_linear"]) == 10000


def test_a_round_that_does_not_grow_with_history_is_carried_flat_and_one_that_does_on_its_line():
    """A family whose state has a fixed size (LinUCB, HARE, the networks) carries its measured rounds' mean over the
    horizon (cap 0), whatever slope noise gives the first rounds; LNUCB-TA reads its history (no cap) and a kernel
    dictionary grows until ``max_points``."""
    from hare.experiments.job_spec import EnvironmentSpec, JobSpec
    from hare.experiments.studies.cost_prediction import flat_line, rounds_seconds
    from hare.experiments.studies.cost_schedule import saturation_of

    def job(policy: str, params: dict) -> JobSpec:
        environment = EnvironmentSpec(name="sim", kind="synthetic", params={}, dataset=None, horizon=10)
        fixed = dict(n_runs=1, role="report", base_seed=0, device="cpu", record_every=1, regime="cold", n_logged=0)
        return JobSpec(experiment="e", environment=environment, label=policy, policy=policy, params=params, **fixed)

    assert saturation_of(job("linucb", {})) == 0.0
    assert saturation_of(job("hare", {})) == 0.0
    assert saturation_of(job("neural_ucb", {})) == 0.0
    assert saturation_of(job("lnucb_ta", {})) == math.inf
    assert saturation_of(job("kernel_ucb", {"max_points": 300})) == 300.0
    rising = [0.001 + 1e-6 * t for t in range(200)]  # a slope a fitted line would carry over 10,000 rounds
    line = flat_line({"round_seconds": rising}, (0.5, 1.0))
    assert line == (pytest.approx(sum(rising) / 200), 0.0)
    assert rounds_seconds(rising, line, 10_000, cap=0.0) == pytest.approx(sum(rising) + 9_800 * line[0])
    assert flat_line({"round_seconds": []}, (0.5, 1.0)) == (0.5, 0.0)


def test_an_earlier_measurement_predicts_without_measuring(tmp_path, capsys):
    """``--model``: the entries of an earlier run, this version's prediction; an empty model measures nothing and
    leaves every job unmodelled, named."""
    earlier = tmp_path / "earlier.json"
    earlier.write_text(json.dumps({"model": {}, "startup_s": 1.0, "not_measured": [], "predictions": {"stale": {}}}))
    out = tmp_path / "cost.json"
    assert main(["cost-model", "config/smoke.yaml", "--model", str(earlier), "--out", str(out)]) == 0
    written = json.loads(out.read_text())
    assert written["prediction"]["cpu_seconds"] == 0.0 and written["prediction"]["unmodelled"]
    assert "predictions" not in written and "predicted 0.00 CPU-hours" in capsys.readouterr().out


def test_a_probed_line_runs_through_the_late_rounds_not_the_first_rounds_transient():
    """A round whose cost climbs fast over its first rounds (a neighbour search widening as the arms fill) and then
    grows slowly with the history: the least-squares line over the first rounds carries the steep start over the
    horizon; the probed line goes through the second half of the measured rounds and the probe's rounds."""
    measured = [1e-3 + 2e-5 * min(t, 100) + 1e-7 * t for t in range(200)]  # steep up to t = 100, then 1e-7 a round
    steep = cost_line(measured, window=20)
    assert steep[1] > 1e-5
    last, window = 5000, 20
    late = [1e-3 + 2e-5 * 100 + 1e-7 * t for t in range(last - window, last)]
    a, b = cost_line(measured, window=20, probe={"last": last, "round_seconds": late})
    early_at, early = (100 + 199) / 2, float(np.mean(measured[100:]))
    late_at = last - (window + 1) / 2
    assert b == pytest.approx((np.mean(late) - early) / (late_at - early_at), rel=1e-12)
    assert a + b * early_at == pytest.approx(early, rel=1e-12)
    assert b == pytest.approx(1e-7, rel=1e-6)  # the slow growth, exactly: both points lie on the same line
    assert cost_line(measured, window=20, probe={"last": last, "round_seconds": [1e-4] * window})[1] == 0.0


def test_a_growing_entry_is_probed_at_the_last_round_its_jobs_play(smoke_config, tmp_path):
    """LNUCB-TA's history grows by one pull per run and round through the probe's fed rounds, and the probe times
    the ``window`` rounds before the last round; a policy whose round does not grow is not probed."""
    from hare.experiments.job_setup import build_environment, policy_keys, resolve_device
    from hare.experiments.studies.cost_measurement import probe_late_rounds
    from hare.policies.base import build_policy

    config = copy.deepcopy(smoke_config)
    job = next(j for j in expand_jobs(config) if j.experiment == "synthetic" and j.role == "report")
    spec = replace(
        job.spec,
        policy="lnucb_ta",
        params={},
        n_runs=2,
        regime="cold",
        n_logged=0,
        environment=replace(job.spec.environment, horizon=60),
    )
    env = build_environment(spec, resolve_device("cpu"), None)
    policy = build_policy("lnucb_ta", {}, env, policy_keys(spec))
    probe = probe_late_rounds(env, policy, first=0, last=60, window=5)
    assert probe["last"] == 60 and probe["fed_rounds"] == 55 and len(probe["round_seconds"]) == 5
    assert int(policy.history.size) == 60 and all(s > 0 for s in probe["round_seconds"])
    # a feeding budget: the clock ticks one second a read, so two rounds are fed, then the 5 after them timed
    ticks = iter(range(10**6))
    policy = build_policy("lnucb_ta", {}, env, policy_keys(spec))
    probe = probe_late_rounds(env, policy, first=0, last=60, window=5, clock=lambda: float(next(ticks)), budget_s=2.5)
    assert probe["fed_rounds"] == 2 and probe["last"] == 7 and int(policy.history.size) == 7

    synthetic = config["experiments"]["synthetic"]
    config["experiments"] = {
        "synthetic": {**synthetic, "policies": {"linucb": {"params": {}}, "lnucb_ta": {"params": {}}}}
    }
    result = run_cost_model(config, tmp_path, runs=(2,), at=(40,), window=5, budget_s=1e-9, only=["synthetic"])
    rows = {row["policy"]: row for row in result["entries"]}
    assert set(rows) == {"linucb", "lnucb_ta"}
    probed = rows["lnucb_ta"]["measurements"][0]["probe"]
    last = int(synthetic["horizon"])  # the last round its jobs play, beyond the rounds reported (40)
    assert probed is not None and probed["last"] == last > 41 and probed["seconds"] > 0
    assert rows["lnucb_ta"]["coverage"] == f"past its most expensive phase: its rounds before round {last} probed"
    assert rows["linucb"]["measurements"][0]["probe"] is None


def test_a_growing_entry_is_probed_at_the_rounds_its_dataset_plays_not_its_nominal_horizon():
    """The probe's target (the last update an entry's jobs play): Mushroom's 8,124 rows less 1,000 logs play 7,124
    rounds of a horizon of 10,000, and a warm job's 1,000 logs come first (8,124 updates); a simulator plays its
    horizon."""
    from hare.experiments.config import resolve_config_file
    from hare.experiments.studies.cost_model import updates_played

    jobs = expand_jobs(resolve_config_file(Path(__file__).resolve().parents[3] / "config" / "paper.yaml"))

    def first(experiment, environment):
        return next(j for j in jobs if (j.experiment, j.environment, j.role) == (experiment, environment, "report"))

    assert updates_played(first("classification", "mushroom")) == 7124
    assert updates_played(first("classification_warm", "mushroom")) == 8124
    assert updates_played(first("synthetic", "synthetic_linear")) == 10000
    assert updates_played(first("synthetic_warm", "synthetic_linear")) == 11000


def write_logged(path, n=400, n_actions=5, d_user=3, d_item=2):
    """A prepared logged data set (the fields of ``hare.envs.replay.LOGGED_FIELDS``) of uniform-random logs."""
    rng = np.random.default_rng(0)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(
        path,
        contexts=rng.normal(size=(n, d_user)),
        actions=rng.integers(0, n_actions, n),
        positions=np.zeros(n, dtype=np.int64),
        rewards=(rng.random(n) < 0.3).astype(np.float64),
        pscores=np.full(n, 1.0 / n_actions),
        item_features=rng.normal(size=(n_actions, d_item)),
    )


def test_a_replay_is_measured_step_by_step_with_its_finish_and_priced_whole(smoke_config, tmp_path):
    """A replay of logged data is an entry like any other: its steps timed as rounds, its finish (the greedy policy's
    off-policy estimates) once a job; every replay job is priced, alone at its runs, none left unmodelled."""
    from hare.experiments.grid import prepared_dataset
    from hare.experiments.studies.cost_measurement import measure_replay_entry

    job = next(j for j in expand_jobs(smoke_config) if j.experiment == "replay" and j.role == "report")
    write_logged(tmp_path / prepared_dataset(job.spec.environment))
    measured = measure_replay_entry(job, tmp_path, n_runs=3, budget_s=math.inf)
    assert measured["rounds_played"] == int(job.spec.environment.horizon) == len(measured["round_seconds"])
    assert measured["finish_s"] > 0 and measured["setup_s"] > 0 and measured["training_seconds"] == []
    line = cost_line(measured["round_seconds"], window=5)
    assert play_seconds(measured, line, 0, 100, None) == pytest.approx(
        measured["setup_s"] + sum(measured["round_seconds"]) + measured["finish_s"]
    )
    result = run_cost_model(smoke_config, tmp_path, runs=(2,), at=(20,), window=5, budget_s=0.05, only=["replay"])
    jobs = [j for j in expand_jobs(smoke_config) if j.experiment == "replay"]
    assert result["not_measured"] == [] and result["prediction"]["unmodelled"] == []
    assert {row["policy"] for row in result["entries"]} == {j.spec.policy for j in jobs}
    assert all(entry["measurements"][0]["finish_s"] > 0 for entry in result["model"].values())
    assert [runs for _, runs in plays(jobs)] == [[2]] * len(jobs)


def test_a_resumed_measurement_keeps_the_earlier_entries_and_measures_the_rest(smoke_config, tmp_path, capsys):
    """``--resume``: entries of the earlier output are kept as measured (not measured again); the rest are measured;
    other settings or ``--model`` with it are refused in one line."""
    config = copy.deepcopy(smoke_config)
    synthetic = config["experiments"]["synthetic"]
    config["experiments"] = {"synthetic": {**synthetic, "policies": {"linucb": {"params": {}}, "random": {}}}}
    first = copy.deepcopy(config)
    first["experiments"]["synthetic"]["policies"] = {"linucb": {"params": {}}}
    earlier = run_cost_model(first, tmp_path, runs=(2,), at=(10,), window=5, budget_s=0.05)
    resumed = run_cost_model(config, tmp_path, runs=(2,), at=(10,), window=5, budget_s=0.05, earlier=earlier)
    assert {row["policy"] for row in resumed["entries"]} == {"linucb", "random"}
    kept = next(row for row in resumed["entries"] if row["policy"] == "linucb")
    assert kept == earlier["entries"][0] and resumed["startup_s"] == earlier["startup_s"]
    with pytest.raises(ValueError, match=r"earlier: measured at other settings: budget_s 0\.05 \(here 0\.1\)"):
        run_cost_model(config, tmp_path, runs=(2,), at=(10,), window=5, budget_s=0.1, earlier=earlier)
    path = tmp_path / "earlier.json"
    path.write_text(json.dumps(earlier))
    code = main(
        [
            "cost-model",
            "config/smoke.yaml",
            "--out",
            str(tmp_path / "o.json"),
            "--model",
            str(path),
            "--resume",
            str(path),
        ]
    )
    assert code == 2 and "--resume: give --model" in capsys.readouterr().err


def test_the_entries_of_a_predicted_config_that_this_one_lacks_are_measured_too(smoke_config, tmp_path):
    """``also`` (the configs of ``--predict``): their entries that the config lacks are measured, those it has are
    not measured twice, and the config's own prediction counts its own jobs only."""
    from hare.experiments.studies.cost_prediction import predict_config

    config = copy.deepcopy(smoke_config)
    synthetic = config["experiments"]["synthetic"]
    config["experiments"] = {"synthetic": {**synthetic, "policies": {"linucb": {"params": {}}}}}
    other = copy.deepcopy(config)
    other["experiments"]["synthetic"]["policies"] = {"linucb": {"params": {}}, "random": {}}
    alone = run_cost_model(config, tmp_path, runs=(2,), at=(10,), window=5, budget_s=0.05)
    assert predict_config(other, alone)["unmodelled"]
    both = run_cost_model(config, tmp_path, runs=(2,), at=(10,), window=5, budget_s=0.05, also=[other])
    assert sorted(row["policy"] for row in both["entries"]) == ["linucb", "random"]
    assert predict_config(other, both)["unmodelled"] == []
    prediction = both["prediction"]
    assert prediction["by_policy"].keys() == {"linucb"} and prediction["unmodelled"] == []
    # per batch: every play, recording and start; per policy: all but the batches' starts
    assert sum(prediction["by_batch"].values()) == pytest.approx(prediction["cpu_seconds"])
    starts = both["startup_s"] * len(prediction["by_batch"])
    assert sum(prediction["by_policy"].values()) == pytest.approx(prediction["cpu_seconds"] - starts)
