"""The measured side of the cost model (hare.experiments.studies.cost_check): a finished build's CPU seconds per batch
and per experiment from its logs, benchmark files or sidecars, and the prediction set beside it batch by batch."""

from __future__ import annotations

import json

import pytest

from hare.cli import main
from hare.experiments.grid import expand_jobs
from hare.experiments.studies.cost_check import (
    check_against_measured,
    check_table,
    measured_batch_seconds,
    measured_job_seconds,
)
from hare.experiments.studies.cost_measurement import entry_key
from hare.experiments.studies.cost_model import run_cost_model
from hare.experiments.studies.cost_prediction import predict


def test_measured_job_seconds_sums_each_batch_benchmark_cpu_time(tmp_path):
    """The measured side of the check: the ``cpu_time`` column of the batches' Snakemake benchmark files, summed per
    experiment, the other columns and the ``--experiments`` filter respected."""
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    batches = [("published", "adult", 12.5), ("published", "magic", 7.25), ("synthetic", "x", 3.0)]
    for experiment, environment, cpu in batches:
        folder = tmp_path / "logs" / "experiments" / experiment
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{environment}.benchmark.tsv").write_text(header + f"99.0\t0:01:39\t1\t1\t1\t1\t0\t0\t50\t{cpu}\n")
    assert measured_job_seconds(tmp_path) == {"published": 19.75, "synthetic": 3.0}
    assert measured_job_seconds(tmp_path, ["synthetic"]) == {"synthetic": 3.0}
    # the batch's own count at its end (the last line of its log) before Snakemake's last sample
    from hare.experiments.run import batch_cpu_line

    line = batch_cpu_line("published/adult")
    seconds = float(line.split(": ")[1].split()[0])
    assert seconds > 0 and line.startswith("batch published/adult: ")
    (tmp_path / "logs" / "experiments" / "published" / "adult.log").write_text(f"progress\n{line}\n")
    (tmp_path / "logs" / "experiments" / "replay" / "open_bandit.log").parent.mkdir()
    (tmp_path / "logs" / "experiments" / "replay" / "open_bandit.log").write_text("batch replay/open_bandit: 4.5 CPU-s")
    assert measured_job_seconds(tmp_path) == {"published": pytest.approx(seconds + 7.25), "synthetic": 3.0}


def test_a_build_whose_logs_hold_no_cpu_line_and_no_benchmark_files_is_read_from_its_sidecars(tmp_path):
    """An older build: batch logs without the CPU line, no Snakemake benchmark files; its sidecars' job time is read
    (a grid simulation once), not an empty measurement."""
    folder = tmp_path / "logs" / "experiments" / "synthetic"
    folder.mkdir(parents=True)
    (folder / "x.log").write_text("round 10/10\n")
    job = {"experiment": "synthetic", "environment": {"name": "x"}}
    runs = tmp_path / "runs" / "synthetic" / "x"
    runs.mkdir(parents=True)
    (runs / "linucb.json").write_text(json.dumps({"job": job, "wall_time_s": 4.0}))
    grid = {"labels": ["a", "b"], "wall_time_s": 6.0}
    tuning = tmp_path / "tuning" / "synthetic" / "x"
    tuning.mkdir(parents=True)
    for label in grid["labels"]:
        (tuning / f"{label}.json").write_text(json.dumps({"job": job, "grid_simulation": grid, "wall_time_s": 6.0}))
    assert measured_job_seconds(tmp_path) == {"synthetic": 10.0}


def test_the_check_against_a_measured_build_predicts_each_measured_and_modelled_batch_alone(
    smoke_config, tmp_path, capsys
):
    """``check_against_measured``: a batch measured and modelled is predicted alone (``predict`` on its jobs, its start
    once) beside its measured seconds; a batch not measured, or with a job without a model, is left out with its
    reason; the CLI prints the table from a saved model."""

    only = ["synthetic", "hare_ablations"]
    result = run_cost_model(
        smoke_config, tmp_path, runs=(2,), at=(5,), window=2, budget_s=0.05, only=only, probe_budget_s=0.05
    )
    batches: dict[str, list] = {}
    for job in expand_jobs(smoke_config):
        if job.experiment in only:
            batches.setdefault(f"{job.experiment}/{job.environment}", []).append(job)
    names = sorted(batches)
    assert len(names) >= 2
    build = tmp_path / "build"
    for i, name in enumerate(names[:-1]):  # the last batch not measured
        log = build / "logs" / "experiments" / f"{name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(f"round 1/1\nbatch {name}: {10.0 * (i + 1)} CPU-seconds\n")
    measured = measured_batch_seconds(build)
    assert measured == {name: (10.0 * (i + 1), "log") for i, name in enumerate(names[:-1])}
    check = check_against_measured(smoke_config, result, measured, only)
    model = {tuple(key.split("\t")): value for key, value in result["model"].items()}
    expected = sum(predict(batches[name], model, startup_s=result["startup_s"])["cpu_seconds"] for name in names[:-1])
    assert check["predicted_s"] == pytest.approx(expected) and expected > 0
    assert check["measured_s"] == pytest.approx(sum(10.0 * (i + 1) for i in range(len(names) - 1)))
    assert check["ratio"] == pytest.approx(expected / check["measured_s"])
    assert check["batches"] == len(names) - 1 and check["left_out"] == {names[-1]: "not measured"}
    assert check_table(check)[-3].startswith(f"| **total** | {len(names) - 1} |")
    # a job of a measured batch without a model: its batch is left out, named with its count
    first = batches[names[0]][0]
    pruned = {**result, "model": {k: v for k, v in result["model"].items() if tuple(k.split("\t")) != entry_key(first)}}
    left = check_against_measured(smoke_config, pruned, measured, only)["left_out"]
    assert "without a model" in left[names[0]] and left[names[-1]] == "not measured"
    # the CLI, from the saved model
    saved = tmp_path / "model.json"
    saved.write_text(json.dumps(result))
    out = tmp_path / "check.json"
    arguments = ["cost-model", "config/smoke.yaml", "--model", str(saved), "--out", str(out), "--experiments", *only]
    assert main([*arguments, "--measured", str(build)]) == 0
    printed = capsys.readouterr().out
    assert f"left out: {names[-1]} (not measured)" in printed and "| **total** |" in printed
    assert "by policy (CPU-hours): " in printed and "batches over 1 CPU-hour" in printed
    assert json.loads(out.read_text())["prediction"]["check"]["ratio"] == pytest.approx(check["ratio"])
