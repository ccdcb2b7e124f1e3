"""Equivalence margins and run plans, from the tuning runs only (seeds disjoint from the reported runs).

For every tuned experiment ``e`` and environment ``x`` this reads, per policy entry, the tuning runs behind its
report: the selected grid point's runs (``results/selected/e/x/<label>.json`` names it) or, for an entry without a
grid (Random, a fixed baseline), its reference tuning runs (``results/tuning/e/x/<label>.npz``). From their total
regrets it fixes

``delta(e, x) = MARGIN_FRACTION * (mean_R(Random) - min_p mean_R(p))``

the practical margin of every comparison on ``(e, x)``: a tenth of the range that separates playing at random from
the best policy on the tuning runs. Two policies whose true mean total regrets differ by less than delta are, for this
paper, tied; a claim is EQUIVALENT when its 95% interval lies inside ``(-delta, delta)``
(:mod:`hare.verdicts`). An experiment without a Random entry has no margin (its claims can pass or fail but
not be equivalent).

The workflow writes one file per batch, ``results/checks/margins/e/x.json`` (:func:`batch_margins`), so that a claim
needs the tuning runs of its own experiment and dataset only. The claims register reads its margin
(``margin: m.margin``) and the per-run totals of two policies on the same tuning seeds
(``power: [m.policies.a.totals, m.policies.b.totals]``), whose paired spread plans the run count
(:func:`hare.verdicts.planned_runs`).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from hare.experiments.grid import expand_jobs
from hare.io import read_npz

MARGIN_FRACTION = 0.1
MARGIN_RULE = (
    f"delta = {MARGIN_FRACTION:g} x (mean total regret of Random - lowest mean total regret of any policy), "
    "both on the tuning runs of the same experiment and environment (seeds disjoint from the reported runs)"
)
REFERENCE = "random"
"""The policy label whose tuning runs anchor the margin."""


def tuning_sources(config: dict[str, Any]) -> dict[str, dict[str, dict[str, dict[str, str]]]]:
    """``{experiment: {environment: {label: {"selected": path | None, "runs": path | None}}}}`` over the tuned
    experiments: a tuned entry's selection file (its runs are the selected point's tuning file), an untuned entry's
    reference tuning file."""
    jobs = expand_jobs(config)
    sources: dict[str, dict[str, dict[str, dict[str, str]]]] = {}
    for job in jobs:
        if not config["experiments"][job.experiment].get("tune"):
            continue
        per_env = sources.setdefault(job.experiment, {}).setdefault(job.environment, {})
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


def _policy_totals(source: dict[str, str | None], root: Path) -> dict[str, Any]:
    if source["selected"]:
        selection = json.loads((root / source["selected"]).read_text())
        label = selection["label"]
        runs = Path(source["selected"].replace("selected/", "tuning/", 1)).parent / f"{label}.npz"
    else:
        runs = Path(str(source["runs"]))
        label = runs.stem
    totals = np.asarray(read_npz(root / runs)["total_regret"], dtype=float).reshape(-1)
    return {"label": label, "source": str(runs), "totals": [float(v) for v in totals], "mean": float(totals.mean())}


def margin_path(experiment: str, environment: str) -> str:
    return f"results/checks/margins/{experiment}/{environment}.json"


def batch_input_files(config: dict[str, Any], experiment: str, environment: str) -> list[str]:
    """The files :func:`batch_margins` reads for one batch: its selections and tuning runs."""
    jobs = [job for job in expand_jobs(config) if job.experiment == experiment and job.environment == environment]
    return sorted(
        [f"results/{job.stem}.npz" for job in jobs if job.role == "tuning"]
        + [f"results/{job.selection}" for job in jobs if job.selection]
    )


def batch_margins(config: dict[str, Any], experiment: str, environment: str, root: str | Path = ".") -> dict[str, Any]:
    """The margin entry of one experiment and environment (:func:`margins`), with the rule; without tuning runs (an
    experiment this config does not tune) the margin is ``None`` and there are no totals. A ``ValueError`` names a
    batch the config does not have."""
    exp = config["experiments"].get(experiment)
    if exp is None or environment not in exp["environments"]:
        raise ValueError(f"margins: {experiment}/{environment} is not an experiment and environment of this config")
    entry = margins(config, root, only=(experiment, environment))["experiments"].get(experiment, {}).get(environment)
    if entry is None:  # not tuned in this config: no tuning runs, so no margin and no plan
        entry = {
            "margin": None,
            "reference_mean": None,
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
    """``{"rule", "fraction", "experiments": {e: {x: {"margin", "reference_mean", "best", "best_mean", "n_tuning_runs",
    "policies": {label: {"label", "source", "totals", "mean"}}}}}}`` (module docstring); ``margin`` is ``None`` without
    a Random entry or when Random is the best policy (no range to take a share of)."""
    root = Path(root)
    out: dict[str, Any] = {"rule": MARGIN_RULE, "fraction": MARGIN_FRACTION, "experiments": {}}
    for experiment, per_env in tuning_sources(config).items():
        for environment, per_label in per_env.items():
            if only is not None and (experiment, environment) != only:
                continue
            policies = {label: _policy_totals(source, root) for label, source in per_label.items()}
            if not policies:
                continue
            best = min(policies, key=lambda label: policies[label]["mean"])
            reference = policies.get(REFERENCE)
            gap = reference["mean"] - policies[best]["mean"] if reference else math.nan
            margin = MARGIN_FRACTION * gap if math.isfinite(gap) and gap > 0 else None
            out["experiments"].setdefault(experiment, {})[environment] = {
                "margin": margin,
                "reference_mean": reference["mean"] if reference else None,
                "best": best,
                "best_mean": policies[best]["mean"],
                "n_tuning_runs": int(config["experiments"][experiment]["n_tuning_runs"]),
                "policies": policies,
            }
    return out
