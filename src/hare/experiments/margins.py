"""Equivalence margins and run plans, from the tuning runs only (seeds disjoint from the reported runs).

For every tuned experiment ``e`` and environment ``x`` this reads, per policy entry, the tuning runs behind its
report: the selected grid point's runs (``results/selected/e/x/<label>.json`` names it) or, for an entry without a
grid (Random, a fixed baseline), its reference tuning runs (``results/tuning/e/x/<label>.npz``). For a planned
experiment (``plan: true``: untuned, every grid point reported) it reads the tuning runs of every reported job, keyed
by the report's label (``lnucb_ta@alpha_0=0.1``, ``random``; :func:`hare.experiments.grid.expand_jobs` plays each
reported job again on the tuning seeds), and selects nothing. A claim that
compares policy ``a`` with policy ``b`` (the paired difference ``R(a) - R(b)`` of total regrets; ``b`` the
comparator, the policy the claim compares against) has the practical margin

``delta(b) = max(MARGIN_FRACTION * mean_R(b), resolution(x))``

with ``mean_R(b)`` the comparator's mean total regret on the tuning runs: two policies are tied, for this paper, when
their true mean total regrets differ by less than a tenth of the comparator's, and never by less than what the
measure resolves. ``resolution(x)`` is the cost of one mistake in the whole horizon (:func:`resolution`): 1 on a
classification dataset (rewards 0/1, one correct arm, so every wrong arm costs exactly 1), and on HARE-Sim the mean
gap between the best arm and another, ``mean_R(Random) / T * K / (K - 1)`` (Random's expected regret per round is
the mean gap over all ``K`` arms, the best one's gap 0 included). A claim is EQUIVALENT when its 95% interval lies
inside ``(-delta, delta)`` (:mod:`hare.verdicts`).

The margin is relative to the comparator and not to the spread between Random and the best policy: a tenth of that
spread dwarfs the regret of good policies (near zero on an easy dataset), so that a policy five times worse than the
comparator would be called equivalent to it. Random never ties with a policy whose regret is at most
``(1 - MARGIN_FRACTION)`` of Random's (the lock-in level of the register, 90%), whichever of the two is the
comparator: ``R(Random) - R(good) >= MARGIN_FRACTION R(Random) >= MARGIN_FRACTION R(good)``, and the floor is
below ``MARGIN_FRACTION R(Random)`` once ``T >= 20`` (classification, Random's regret ``T (K - 1) / K``) or
``T >= 10 K / (K - 1)`` (HARE-Sim).

A replay environment (Open Bandit; its class's ``replays_logged_data``) has no regret: the rewards of arms that were
not logged are unknown, and its comparisons are paired differences of ``total_mean_reward``, the replay estimate of
the click rate (:func:`hare.experiments.replay_job.replay`). Its margins are read off that quantity (``measure``:
:func:`measure_of`): ``delta(b) = MARGIN_FRACTION * mean_r(b)``, a tenth of the comparator's mean replay reward on the
tuning runs (no floor: one replayed event's weight depends on how many a run accepts), so that the margin lives on
the quantity the claim measures. A reward difference on a classification dataset (the ablation's total rewards) needs
no such change: there the reward of a round is one minus its regret, so the paired reward difference is minus the
regret difference and the regret margin bounds it exactly.

The workflow writes one file per batch, ``results/checks/margins/e/x.json`` (:func:`batch_margins`), so that a claim
needs the tuning runs of its own experiment and dataset only. Each policy's entry carries its tuning totals, their
mean and ``margin``, the delta of a comparison against it; the claims register reads a comparison's margin from its
comparator (``margin: m.policies.b.margin``, shown as a share of ``comparator_regret: m.policies.b.mean``) and the
per-run totals of the two policies on the same tuning seeds (``power: [m.policies.a.totals, m.policies.b.totals]``),
whose paired spread plans the run count (:func:`hare.verdicts.planned_runs`). A grid point's label is not a name:
the register reads it by item access, ``m.policies["lnucb_ta@alpha_0=0.1"].margin``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from hare.envs.registry import environment_class
from hare.experiments.grid import expand_jobs
from hare.experiments.job_spec import EnvironmentSpec
from hare.io import read_npz

MARGIN_FRACTION = 0.1
"""delta as a share of the comparator's mean total regret on the tuning runs."""
MARGIN_RULE = (
    f"{MARGIN_FRACTION:.0%} of the comparator's mean total regret (the policy the claim compares against) on the "
    "tuning runs of the same experiment and dataset, and at least the cost of one mistake in the whole horizon "
    "(1 on a classification dataset, whose rewards are 0 or 1; on HARE-Sim the mean gap between the best arm and "
    "another, from Random's tuning runs), fixed before any reported run is read; on a replay environment, which has "
    "no regret, 10% of the comparator's mean replay reward on the tuning runs"
)
"""The rule as a noun phrase (delta is ...): the margins files, results/claims.md and the paper (``\\claimsMarginRule``)
print this string."""
REFERENCE = "random"
"""The policy label whose tuning runs measure the mean gap of an environment without 0/1 rewards."""
REGRET = "total_regret"
"""The measure of the margins (a run file's array): total pseudo-regret, lower is better."""
REPLAY_REWARD = "total_mean_reward"
"""The measure on a replay environment, which has no regret: the replay estimate of the reward, higher is better."""


def measure_of(environment: EnvironmentSpec) -> str:
    """The run files' array the margins of ``environment`` are read off: :data:`REPLAY_REWARD` on an environment that
    replays logged data (no regret there), else :data:`REGRET`."""
    return REPLAY_REWARD if environment_class(environment.kind).replays_logged_data else REGRET


def planned(exp: dict[str, Any]) -> bool:
    """Whether an experiment entry has tuning runs for its margins: tuned (``tune``) or planned (``plan``)."""
    return bool(exp.get("tune") or exp.get("plan"))


def tuning_sources(config: dict[str, Any]) -> dict[str, dict[str, dict[str, dict[str, str]]]]:
    """``{experiment: {environment: {label: {"selected": path | None, "runs": path | None}}}}`` over the tuned and
    planned experiments: a tuned entry's selection file (its runs are the selected point's tuning file), an untuned
    entry's reference tuning file; in a planned experiment every reported job's tuning file, under its full label."""
    jobs = expand_jobs(config)
    sources: dict[str, dict[str, dict[str, dict[str, str]]]] = {}
    for job in jobs:
        exp = config["experiments"][job.experiment]
        if not planned(exp):
            continue
        per_env = sources.setdefault(job.experiment, {}).setdefault(job.environment, {})
        if exp.get("plan"):
            if job.role == "tuning":
                per_env[job.label] = {"selected": None, "runs": f"results/{job.stem}.npz"}
            continue
        base = job.label.split("@", 1)[0]
        if job.role == "report" and job.selection:
            per_env[base] = {"selected": f"results/{job.selection}", "runs": None}
        elif job.role == "tuning" and "@" not in job.label:
            per_env[base] = {"selected": None, "runs": f"results/{job.stem}.npz"}
    return sources


def input_files(config: dict[str, Any]) -> list[str]:
    """Every file :func:`margins` reads (selections, reference tuning runs, and the tuning runs they may select)."""
    files = []
    for per_env in tuning_sources(config).values():
        for per_label in per_env.values():
            for source in per_label.values():
                files += [source["selected"] or source["runs"]]
    tuning = [f"results/{job.stem}.npz" for job in expand_jobs(config) if job.role == "tuning"]
    return sorted(set(files) | set(tuning))


def _policy_totals(source: dict[str, str | None], root: Path, measure: str = REGRET) -> dict[str, Any]:
    if source["selected"]:
        selection = json.loads((root / source["selected"]).read_text())
        label = selection["label"]
        runs = Path(source["selected"].replace("selected/", "tuning/", 1)).parent / f"{label}.npz"
    else:
        runs = Path(str(source["runs"]))
        label = runs.stem
    totals = np.asarray(read_npz(root / runs)[measure], dtype=float).reshape(-1)
    return {"label": label, "source": str(runs), "totals": [float(v) for v in totals], "mean": float(totals.mean())}


def batch_input_files(config: dict[str, Any], experiment: str, environment: str) -> list[str]:
    """The files :func:`batch_margins` reads for one batch: its selections and tuning runs."""
    jobs = [job for job in expand_jobs(config) if job.experiment == experiment and job.environment == environment]
    return sorted(
        [f"results/{job.stem}.npz" for job in jobs if job.role == "tuning"]
        + [f"results/{job.selection}" for job in jobs if job.selection]
    )


def resolution(environment: EnvironmentSpec, random_mean: float | None) -> float | None:
    """The cost of one mistake in the whole horizon on ``environment`` (a job's environment: its ``kind``,
    ``horizon`` and ``params`` are read): 1 on a classification dataset (0/1 rewards, one correct arm); on HARE-Sim
    the mean gap between the best arm and another, ``random_mean / T * K / (K - 1)`` with ``K`` arms (``n_items``),
    from Random's mean total regret on the tuning runs; ``None`` elsewhere, or on HARE-Sim without Random's tuning
    runs."""
    return environment_class(environment.kind).mistake_cost(environment.as_dict(), random_mean)


def comparison_margin(comparator_mean: float, floor: float | None) -> float | None:
    """``delta(b) = max(MARGIN_FRACTION * comparator_mean, floor)`` (module docstring), ``None`` when neither term is
    positive and finite (no tie can be declared)."""
    terms = [MARGIN_FRACTION * comparator_mean, floor if floor is not None else math.nan]
    finite = [t for t in terms if math.isfinite(t) and t > 0]
    return max(finite) if finite else None


def _environment_specs(config: dict[str, Any]) -> dict[tuple[str, str], EnvironmentSpec]:
    return {(job.experiment, job.environment): job.spec.environment for job in expand_jobs(config)}


def batch_margins(config: dict[str, Any], experiment: str, environment: str, root: str | Path = ".") -> dict[str, Any]:
    """The margin entry of one experiment and environment (:func:`margins`), with the rule; without tuning runs (an
    experiment this config neither tunes nor plans) there are no policies, no resolution and no plan. A ``ValueError``
    names a batch the config does not have."""
    exp = config["experiments"].get(experiment)
    if exp is None or environment not in exp["environments"]:
        raise ValueError(f"margins: {experiment}/{environment} is not an experiment and environment of this config")
    entry = margins(config, root, only=(experiment, environment))["experiments"].get(experiment, {}).get(environment)
    if entry is None:  # neither tuned nor planned in this config: no tuning runs, so no margin and no plan
        entry = {
            "measure": None,
            "resolution": None,
            "best": None,
            "best_mean": None,
            "n_tuning_runs": 0,
            "policies": {},
        }
    return {
        "rule": MARGIN_RULE,
        "fraction": MARGIN_FRACTION,
        "experiment": experiment,
        "environment": environment,
        **entry,
    }


def margins(config: dict[str, Any], root: str | Path = ".", only: tuple[str, str] | None = None) -> dict[str, Any]:
    """``{"rule", "fraction", "experiments": {e: {x: {"measure", "resolution", "best", "best_mean", "n_tuning_runs",
    "policies": {label: {"label", "source", "totals", "mean", "margin"}}}}}}``: each policy's ``margin`` is the delta
    of a comparison against it (:func:`comparison_margin` of its tuning mean and the environment's
    :func:`resolution`; module docstring), on the ``measure`` (:func:`measure_of`); ``best`` is the policy of lowest
    mean regret (highest mean replay reward)."""
    root = Path(root)
    out: dict[str, Any] = {"rule": MARGIN_RULE, "fraction": MARGIN_FRACTION, "experiments": {}}
    specs = _environment_specs(config)
    for experiment, per_env in tuning_sources(config).items():
        for environment, per_label in per_env.items():
            if only is not None and (experiment, environment) != only:
                continue
            spec = specs[(experiment, environment)]
            measure = measure_of(spec)
            policies = {label: _policy_totals(source, root, measure) for label, source in per_label.items()}
            if not policies:
                continue
            reference = policies.get(REFERENCE)
            floor = resolution(spec, reference["mean"] if reference else None) if measure == REGRET else None
            for entry in policies.values():
                entry["margin"] = comparison_margin(entry["mean"], floor)
            sign = 1.0 if measure == REGRET else -1.0
            best = min(policies, key=lambda label: sign * policies[label]["mean"])
            out["experiments"].setdefault(experiment, {})[environment] = {
                "measure": measure,
                "resolution": floor,
                "best": best,
                "best_mean": policies[best]["mean"],
                "n_tuning_runs": int(config["experiments"][experiment]["n_tuning_runs"]),
                "policies": policies,
            }
    return out
