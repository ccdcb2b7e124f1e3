"""Hyperparameter selection on tuning runs (seeds disjoint from the reported runs).

The chosen point minimises the mean total regret over the tuning runs (the grids of
LNUCB-TA (Khosravi et al., 2025) §5.1). Points whose mean total regret equals the lowest one (within a relative
:data:`TIE_TOLERANCE`) tie; the selection lists them all (``ties``) and takes the first
in sorted label order (:data:`TIE_RULE`), so a table can mark a choice that a tie made.
The reported runs of the same policy then use the chosen point; no reported seed ever
influences it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from hare.experiments.job_spec import JobSpec
from hare.io import read_npz, write_json

CRITERION = "lowest mean total regret over the tuning runs"
TIE_RULE = "the first of the tied points in sorted label order"
TIE_TOLERANCE = 1e-12
"""Relative tolerance under which two mean total regrets are equal."""


def select_point(tuning_runs: Iterable[str | Path]) -> dict[str, Any]:
    """Summary of every grid point and the chosen one, from tuning ``.npz`` files and their sidecars.

    ``ties``: the labels of every point whose mean total regret equals the chosen one's (the chosen
    one included, so a tie is ``len(ties) > 1``); ``tie_rule``: how a tie was broken (``None`` without one).
    """
    points = []
    for path in map(Path, tuning_runs):
        sidecar = json.loads(path.with_suffix(".json").read_text())
        if sidecar["job"]["role"] != "tuning":
            raise ValueError(f"{path} is not a tuning run (role {sidecar['job']['role']!r})")
        totals = read_npz(path)["total_regret"]
        points.append(
            {
                "label": sidecar["job"]["label"],
                "params": sidecar["job"]["params"],
                "mean_total_regret": float(totals.mean()),
                "n_runs": int(totals.size),
            }
        )
    if not points:
        raise ValueError("no tuning runs to select from")
    points.sort(key=lambda p: p["label"])
    finite = [p["mean_total_regret"] for p in points if math.isfinite(p["mean_total_regret"])]
    if not finite:
        raise ValueError(f"no tuning run has a finite mean total regret: {[p['label'] for p in points]}")
    lowest = min(finite)
    tied = [p for p in points if math.isclose(p["mean_total_regret"], lowest, rel_tol=TIE_TOLERANCE, abs_tol=0.0)]
    best = tied[0]
    return {
        "criterion": CRITERION,
        "params": best["params"],
        "label": best["label"],
        "points": points,
        "ties": [p["label"] for p in tied],
        "tie_rule": TIE_RULE if len(tied) > 1 else None,
    }


def write_selection(tuning_runs: Iterable[str | Path], out: str | Path) -> dict[str, Any]:
    selection = select_point(tuning_runs)
    write_json(out, selection)
    return selection


def apply_selection(spec: JobSpec, selection_path: str | Path | None) -> JobSpec:
    """The job specification with the tuned hyperparameters filled in (a tuned job needs its selection): a new
    :class:`JobSpec` whose ``params`` are the job's with the selection's ``params`` over them.

    It records the chosen tuning label (``selected_from``) and every label tied with it
    (``selection_ties``, the chosen one included), so the report run's sidecar tells a table both.
    """
    if not spec.tuned:
        if selection_path is not None:
            raise ValueError(f"job {spec.label!r} is not tuned but a selection was given ({selection_path})")
        return spec
    if selection_path is None:
        raise ValueError(
            f"job {spec.label!r} is tuned over {spec.as_dict()['tuned_grid']}: pass its selection file (--selected)"
        )
    selection = json.loads(Path(selection_path).read_text())
    unknown = sorted(set(selection["params"]) - set(spec.params) - set(spec.tuned_grid))
    if unknown:
        raise ValueError(f"selection {selection_path} sets parameters {unknown} outside the grid of job {spec.label!r}")
    return replace(
        spec,
        params={**spec.params, **selection["params"]},
        selected_from=selection["label"],
        selection_ties=selection.get("ties", [selection["label"]]),
    )
