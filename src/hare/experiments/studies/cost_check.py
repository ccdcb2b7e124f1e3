"""A finished build's measured CPU time beside the cost model's prediction
(:mod:`hare.experiments.studies.cost_prediction`).

* :func:`measured_batch_seconds`, :func:`measured_job_seconds`: the CPU seconds a finished build's experiment batches
  took, per batch and per experiment;
* :func:`check_against_measured`, :func:`check_table`: the prediction set beside such a build, batch by batch.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from hare.experiments.grid import Job, expand_jobs
from hare.experiments.run import BATCH_CPU
from hare.experiments.studies.cost_prediction import entry_models, predict


def measured_batch_seconds(results: Path, experiments: list[str] | None = None) -> dict[str, tuple[float, str]]:
    """CPU seconds (user and system) each of a finished build's experiment batches took,
    ``{"<experiment>/<environment>": (seconds, source)}``, the whole batch process (its start, set-up, plays and
    recording, as the model predicts it) read from

    * the last line of its log (``logs/experiments/<experiment>/<environment>.log``, :func:`hare.experiments.run.
      batch_cpu_line`: the process's own count at its end; source ``"log"``), else
    * the ``cpu_time`` column of its Snakemake benchmark file (``<environment>.benchmark.tsv``; Snakemake samples it
      every 30 s and keeps the last sample, so it misses up to the batch's last 30 s; source ``"benchmark"``), else
    * for a build without either (older than them), its sidecars' ``wall_time_s`` (the plays only; a grid simulation
      counted once, from its ``grid_simulation``; source ``"sidecars"``)."""
    folder = results / "logs" / "experiments"
    benchmarks = sorted(folder.glob("*/*.benchmark.tsv"))
    logs = sorted(folder.glob("*/*.log"))
    measured: dict[str, tuple[float, str]] = {}
    batches = {path.with_suffix("").with_suffix("") for path in benchmarks} | {path.with_suffix("") for path in logs}
    for batch in sorted(batches):
        experiment = batch.parent.name
        if experiments is not None and experiment not in experiments:
            continue
        log = batch.with_name(batch.name + ".log")
        counted = BATCH_CPU.findall(log.read_text(errors="replace")) if log.is_file() else []
        benchmark = batch.with_name(batch.name + ".benchmark.tsv")
        if counted:
            measured[f"{experiment}/{batch.name}"] = float(counted[-1][1]), "log"
        elif benchmark.is_file():
            header, *rows = (line.split("\t") for line in benchmark.read_text().splitlines() if line.strip())
            column = header.index("cpu_time")
            measured[f"{experiment}/{batch.name}"] = sum(float(row[column]) for row in rows), "benchmark"
    if measured:  # else: logs without the line and no benchmark files (an older build), read its sidecars
        return measured
    seen = set()
    for sidecar in sorted(results.glob("*/*/*/*.json")):
        if sidecar.parts[-4] not in ("runs", "tuning"):
            continue
        data = json.loads(sidecar.read_text())
        job = data.get("job") or {}
        experiment = job.get("experiment")
        if experiment is None or (experiments is not None and experiment not in experiments):
            continue
        batch = f"{experiment}/{job['environment']['name']}"
        grid = data.get("grid_simulation")
        if grid is not None:
            key = (batch, tuple(grid["labels"]))
            if key in seen:
                continue
            seen.add(key)
            seconds = grid["wall_time_s"]
        else:
            seconds = data.get("wall_time_s", 0.0)
        measured[batch] = measured.get(batch, (0.0, "sidecars"))[0] + seconds, "sidecars"
    return measured


def measured_job_seconds(results: Path, experiments: list[str] | None = None) -> dict[str, float]:
    """The CPU seconds of :func:`measured_batch_seconds` summed per experiment."""
    return per_experiment(measured_batch_seconds(results, experiments))


def per_experiment(measured: dict[str, tuple[float, str]]) -> dict[str, float]:
    """The batches' CPU seconds of :func:`measured_batch_seconds` summed per experiment."""
    totals: dict[str, float] = {}
    for batch, (seconds, _) in measured.items():
        experiment = batch.split("/")[0]
        totals[experiment] = totals.get(experiment, 0.0) + seconds
    return totals


def check_against_measured(
    config: dict[str, Any],
    cost_model: dict[str, Any],
    measured: dict[str, tuple[float, str]],
    only: list[str] | None = None,
) -> dict[str, Any]:
    """The prediction of a saved cost model set beside a measured build, batch by batch: every batch of ``config``
    that the build measured (:func:`measured_batch_seconds`) and whose jobs all have a model is predicted alone
    (:func:`predict` on its jobs, its start counted once) and summed per experiment; the others are listed under
    ``left_out`` with the reason (not measured; jobs without a model). ``ratio`` is predicted over measured CPU
    seconds over the compared batches; ``benchmark_batches`` counts the compared batches read from a Snakemake
    benchmark sample (each possibly short by up to 30 s)."""
    model = entry_models(cost_model)
    batches: dict[str, list[Job]] = {}
    for job in expand_jobs(config):
        if only is None or job.experiment in only:
            batches.setdefault(f"{job.experiment}/{job.environment}", []).append(job)
    rows: dict[str, dict[str, float]] = {}
    left_out: dict[str, str] = {}
    from_benchmark = 0
    for batch, members in sorted(batches.items()):
        if batch not in measured:
            left_out[batch] = "not measured"
            continue
        prediction = predict(members, model, startup_s=cost_model.get("startup_s", 0.0))
        if prediction["unmodelled"]:
            left_out[batch] = f"{len(prediction['unmodelled'])} of {len(members)} jobs without a model"
            continue
        seconds, source = measured[batch]
        from_benchmark += source == "benchmark"
        row = rows.setdefault(members[0].experiment, {"batches": 0, "predicted_s": 0.0, "measured_s": 0.0})
        row["batches"] += 1
        row["predicted_s"] += prediction["cpu_seconds"]
        row["measured_s"] += seconds
    predicted = sum(row["predicted_s"] for row in rows.values())
    measured_total = sum(row["measured_s"] for row in rows.values())
    return {
        "by_experiment": rows,
        "predicted_s": predicted,
        "measured_s": measured_total,
        "ratio": predicted / measured_total if measured_total > 0 else math.nan,
        "batches": sum(int(row["batches"]) for row in rows.values()),
        "benchmark_batches": from_benchmark,
        "left_out": left_out,
    }


def check_table(check: dict[str, Any]) -> list[str]:
    """The Markdown table of :func:`check_against_measured`, one row per experiment and the total, then how many
    batches came from a benchmark sample and the batches left out, a line each."""
    lines = [
        "batch by batch (the batches measured and modelled):",
        "| experiment | batches | predicted CPU-s | measured CPU-s | predicted / measured |",
        "|---|---:|---:|---:|---:|",
    ]
    for experiment, row in sorted(check["by_experiment"].items()):
        ratio = row["predicted_s"] / row["measured_s"] if row["measured_s"] > 0 else math.nan
        lines.append(
            f"| {experiment} | {int(row['batches'])} | {row['predicted_s']:,.0f} | {row['measured_s']:,.0f} "
            f"| {ratio:.2f} |"
        )
    lines.append(
        f"| **total** | {check['batches']} | {check['predicted_s']:,.0f} | {check['measured_s']:,.0f} | "
        f"{check['ratio']:.2f} |"
    )
    lines.append(f"{check['benchmark_batches']} batches read from a Snakemake benchmark sample (each up to 30 s short)")
    lines.extend(f"left out: {batch} ({reason})" for batch, reason in check["left_out"].items())
    return lines
