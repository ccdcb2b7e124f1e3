"""The prediction of the cost model (:mod:`hare.experiments.studies.cost_model`) from its measured entries, and the
measured build it is compared with.

* :func:`cost_line`, :func:`cost_at`, :func:`rounds_seconds`: the line ``c(t) = a + b min(t, cap)`` through the
  measured rounds and the rounds' seconds it gives;
* :func:`play_seconds`, :func:`runs_line`: ``S_B`` of one simulation at a measured run count, and ``S(B)`` across
  run counts;
* :func:`predict`, :func:`predict_config`: the CPU seconds of a config's jobs, in total and per experiment;
* :func:`held_out_check`, :func:`coverage`: how far an entry was measured, and the check of its model against a
  longer held-out measurement;
* :func:`summary_lines`: what the command prints of a prediction.

The measured build a prediction is set beside: :mod:`hare.experiments.studies.cost_check`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from hare.envs.registry import environment_shape
from hare.experiments.grid import Job, expand_jobs
from hare.experiments.studies.cost_measurement import entry_key
from hare.experiments.studies.cost_schedule import plays, saturation_of, schedule_of, trainings_in


def cost_line(
    round_seconds: list[float], window: int, cap: float = math.inf, probe: dict[str, Any] | None = None
) -> tuple[float, float]:
    """``(a, b)`` of the line ``c(t) = a + b min(t, cap)``, ``b >= 0``.

    Without ``probe``: the least-squares line through the means of the measured rounds' windows (at their centres);
    fewer than two windows: their mean, flat. With ``probe`` (:func:`.cost_measurement.probe_late_rounds`: the
    rounds before round ``probe["last"]`` timed): the line through two points, the mean of the second half of the
    measured rounds at its centre and the probe's mean at its centre, so that the slope is the growth between the
    measured rounds and the late ones, not that of the first rounds' transients (a neighbour search that widens to
    ``k`` as the arms fill, allocations)."""
    seconds = np.asarray(round_seconds, dtype=np.float64)
    if probe is not None and probe["round_seconds"] and seconds.size:
        half = seconds.size // 2
        early, early_at = float(seconds[half:].mean()), min((half + seconds.size - 1) / 2, cap)
        late_seconds = probe["round_seconds"]
        late, late_at = float(np.mean(late_seconds)), min(probe["last"] - (len(late_seconds) + 1) / 2, cap)
        slope = (late - early) / (late_at - early_at) if late_at > early_at else 0.0
        if slope <= 0:
            return float(np.mean([early, late])), 0.0
        return early - slope * early_at, slope
    if seconds.size < 2 * window:
        return float(seconds.mean()) if seconds.size else 0.0, 0.0
    starts = np.arange(0, seconds.size - window + 1, window)
    means = np.array([seconds[s : s + window].mean() for s in starts])
    centres = np.minimum(starts + (window - 1) / 2, cap)
    if np.ptp(centres) == 0:
        return float(means.mean()), 0.0
    slope, intercept = np.polyfit(centres, means, 1)
    if slope <= 0:
        return float(means.mean()), 0.0
    return float(intercept), float(slope)


def cost_at(round_seconds: list[float], line: tuple[float, float], t: int, window: int, cap: float = math.inf):
    """Seconds of round ``t`` (1-based) without training: the mean of the ``window`` measured rounds before it, or the
    line's value when those rounds were not played (``measured`` False)."""
    if t <= len(round_seconds):
        return float(np.mean(round_seconds[max(0, t - window) : t])), True
    return line[0] + line[1] * min(t - 1, cap), False


def rounds_seconds(round_seconds: list[float], line: tuple[float, float], n_rounds: int, cap: float = math.inf):
    """``sum_{t < n_rounds} c(t)``: the measured rounds as measured, the rest ``a + b min(t, cap)``."""
    measured = float(np.sum(round_seconds[:n_rounds]))
    rest = np.arange(len(round_seconds), n_rounds, dtype=np.float64)
    return measured + float(np.sum(line[0] + line[1] * np.minimum(rest, cap)))


def play_seconds(
    measurement: dict[str, Any],
    line: tuple[float, float],
    n_logged: int,
    horizon: int,
    schedule: tuple[int, int, int] | None,
    cap: float = math.inf,
) -> float:
    """``S_B`` of :mod:`.cost_model`: one simulation at the measurement's run count ``B`` playing a warm start of
    ``n_logged`` logs and ``horizon`` rounds (a replay: ``horizon`` logged events), and a replay's finish
    (``finish_s``)."""
    warm = measurement["regime"] == "warm"
    first = n_logged if warm else 0
    last = n_logged + horizon
    training = float(np.mean(measurement["training_seconds"])) if measurement["training_seconds"] else 0.0
    trainings = trainings_in(first, last, *schedule) if schedule is not None else 0
    return (
        measurement["setup_s"]
        + (measurement["warm_start_s"] if warm else 0.0)
        + rounds_seconds(measurement["round_seconds"], line, last - first, cap)
        + trainings * training
        + measurement.get("finish_s", 0.0)
    )


def runs_line(points: list[tuple[int, float]]) -> Callable[[int], float]:
    """``S(B)`` from the measured ``(B_i, S_{B_i})``: the least-squares line in ``B`` with slope ``>= 0``, never below
    0; one run count: ``S_{B_1} B / B_1``."""
    runs = np.array([b for b, _ in points], dtype=np.float64)
    seconds = np.array([s for _, s in points], dtype=np.float64)
    if np.unique(runs).size < 2:
        per_run = float(seconds.mean() / runs.mean())
        return lambda b: per_run * b
    slope = max(float(np.polyfit(runs, seconds, 1)[0]), 0.0)
    intercept = float(seconds.mean() - slope * runs.mean())
    return lambda b: max(intercept + slope * b, 0.0)


def flat_line(measurement: dict[str, Any], line: tuple[float, float]) -> tuple[float, float]:
    """``(a, 0)``: the measured rounds' mean cost (the fitted line's intercept where no round was measured), the line
    of a policy whose round does not grow with the rounds played (:func:`.cost_schedule.saturation_of` 0), so that
    no slope fitted to noise over the first measured rounds is carried over the horizon."""
    seconds = measurement.get("round_seconds") or []
    return (float(np.mean(seconds)) if len(seconds) else float(line[0])), 0.0


def played_rounds(job: Job) -> int:
    """The rounds a job's environment plays: its horizon, capped where the environment runs out of rows (a
    classification dataset plays each online row once: Mushroom's 8,124 rows less the 1,000 set aside for logs play
    7,124 of a horizon of 10,000), as the environment's class answers it (``EnvironmentShape.rounds``)."""
    return int(environment_shape(job.spec.environment.as_dict()).rounds)


def predict(
    jobs: list[Job],
    model: dict[tuple[str, str], dict[str, Any]],
    recording_s: float = 0.0,
    startup_s: float = 0.0,
    not_measured: dict[tuple[str, str], str] | None = None,
) -> dict[str, Any]:
    """Predicted CPU seconds of ``jobs`` from the per-entry models ``{entry_key: {"measurements": [...], "lines":
    [...], "recording_s"}}``: every simulation of :func:`.cost_schedule.plays` at its run counts, plus each job's
    recording (its entry's, else ``recording_s``) and each batch's ``startup_s``; in total, per experiment, per policy
    (its plays and recordings; the batches' starts under no policy) and per batch (``<experiment>/<environment>``,
    one process: one Slurm job). Jobs without a model are listed under ``unmodelled`` and counted by reason under
    ``unmodelled_reasons`` (``not_measured``: the reason of each entry that could not be measured)."""
    not_measured = not_measured or {}
    total, by_experiment, by_policy, by_batch, unmodelled, reasons = 0.0, {}, {}, {}, [], {}
    modelled_batches: dict[str, str] = {}

    def add(experiment: str, batch: str, seconds: float, policy: str | None = None) -> None:
        nonlocal total
        total += seconds
        by_experiment[experiment] = by_experiment.get(experiment, 0.0) + seconds
        by_batch[batch] = by_batch.get(batch, 0.0) + seconds
        if policy is not None:
            by_policy[policy] = by_policy.get(policy, 0.0) + seconds

    for members, run_counts in plays(jobs):
        job = members[0]
        key = entry_key(job)
        entry = model.get(key)
        if entry is None:
            unmodelled.extend(member.stem for member in members)
            reason = not_measured.get(key, "entry not measured")
            reasons[reason] = reasons.get(reason, 0) + len(members)
            continue
        n_logged, horizon = int(job.spec.n_logged), played_rounds(job)
        schedule, cap = schedule_of(job.spec), saturation_of(job.spec)
        points = [
            (
                m["runs"],
                play_seconds(m, flat_line(m, line) if cap == 0 else tuple(line), n_logged, horizon, schedule, cap),
            )
            for m, line in zip(entry["measurements"], entry["lines"], strict=True)
        ]
        seconds_at = runs_line(points)
        seconds = sum(seconds_at(b) for b in run_counts) + len(members) * entry.get("recording_s", recording_s)
        modelled_batches[f"{job.experiment}/{job.environment}"] = job.experiment
        add(job.experiment, f"{job.experiment}/{job.environment}", seconds, job.spec.policy)
    for batch, experiment in modelled_batches.items():
        add(experiment, batch, startup_s)
    return {
        "cpu_seconds": total,
        "cpu_hours": total / 3600,
        "by_experiment": by_experiment,
        "by_policy": by_policy,
        "by_batch": by_batch,
        "unmodelled": unmodelled,
        "unmodelled_reasons": reasons,
    }


def held_out_check(
    measurement: dict[str, Any], window: int, schedule: tuple[int, int, int] | None, cap: float
) -> dict[str, Any] | None:
    """The model fitted on the first half of the measured rounds (and trainings), predicting the whole measured play:
    ``{"fitted_rounds", "checked_rounds", "predicted_s", "measured_s", "ratio"}``; None with fewer than ``4 window``
    rounds."""
    n = measurement["rounds_played"]
    if n < 4 * window:
        return None
    half = n // 2
    rounds = measurement["round_seconds"][:half]
    offset = measurement.get("n_logged", 0) if measurement["regime"] == "warm" else 0
    trainings = measurement["training_seconds"][: trainings_in(offset, offset + half, *schedule)] if schedule else []
    fitted = {**measurement, "round_seconds": rounds, "training_seconds": trainings, "setup_s": 0.0}
    line = cost_line(rounds, window, cap)
    predicted = play_seconds({**fitted, "warm_start_s": 0.0}, line, offset, n, schedule, cap)
    measured = float(np.sum(measurement["round_seconds"]) + np.sum(measurement["training_seconds"]))
    return {
        "fitted_rounds": half,
        "checked_rounds": n,
        "predicted_s": predicted,
        "measured_s": measured,
        "ratio": predicted / measured if measured > 0 else math.nan,
    }


def coverage(measurement: dict[str, Any], schedule: tuple[int, int, int] | None, cap: float, rounds_needed: int) -> str:
    """How far the entry was measured (:mod:`.cost_model`), from its measurement at the largest run count."""
    played = measurement["rounds_played"]
    probe = measurement.get("probe")
    if probe is not None and probe["last"] >= min(cap, rounds_needed):
        return f"past its most expensive phase: its rounds before round {probe['last']:,} probed"
    if schedule is not None and schedule[2] > 0:
        if measurement["training_seconds"] and played:
            return "past its most expensive phase: the training and the round without it timed apart"
        return "held-out check: no training timed"
    if cap == 0 and played:
        return "past its most expensive phase: a round that does not grow with the history, its measured mean"
    if played >= min(cap, rounds_needed):
        return "past its most expensive phase: " + (
            "the dictionary full" if math.isfinite(cap) and cap <= rounds_needed else "its whole play"
        )
    return "held-out check: later rounds on the line"


def entry_models(cost_model: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """The per-entry models of a saved cost model, keyed by :func:`.cost_measurement.entry_key` (the output joins each
    key's two parts with a tab)."""
    return {tuple(key.split("\t")): value for key, value in cost_model["model"].items()}


def predict_config(config: dict[str, Any], cost_model: dict[str, Any], only: list[str] | None = None) -> dict[str, Any]:
    """The prediction of :func:`predict` for another config from a saved cost model (its ``model`` and
    ``startup_s``)."""
    model = entry_models(cost_model)
    jobs = [job for job in expand_jobs(config) if only is None or job.experiment in only]
    return predict(jobs, model, startup_s=cost_model.get("startup_s", 0.0))


def summary_lines(name: str, prediction: dict[str, Any], hour_s: float = 3600.0) -> list[str]:
    """What ``hare cost-model`` prints of one prediction: its CPU-hours (and the measured build's, where set beside
    it), the policies by CPU-hours, the batches over ``hour_s`` (one core each), and the jobs without a model by
    reason."""
    measured = prediction.get("measured_cpu_seconds")
    note = f"; measured {sum(measured.values()) / 3600:.2f} CPU-hours" if measured else ""
    lines = [
        f"{name}: predicted {prediction['cpu_hours']:.2f} CPU-hours{note}; "
        f"{len(prediction['unmodelled'])} jobs without a model"
    ]
    policies = sorted(prediction.get("by_policy", {}).items(), key=lambda item: -item[1])
    if policies:
        lines.append("  by policy (CPU-hours): " + ", ".join(f"{p} {s / 3600:.1f}" for p, s in policies))
    batches = sorted(prediction.get("by_batch", {}).items(), key=lambda item: -item[1])
    long = [(batch, seconds) for batch, seconds in batches if seconds > hour_s]
    if batches:
        lines.append(
            f"  {len(long)} of {len(batches)} batches over {hour_s / 3600:g} CPU-hour"
            + "".join(f"\n    {batch}: {seconds / 3600:.1f}" for batch, seconds in long)
        )
    lines.extend(f"  {count} jobs: {reason}" for reason, count in prediction["unmodelled_reasons"].items())
    return lines
