"""Our runs beside the numbers a publication quotes: the published table's rows and the reproduction table's lines.

The reproduction table (kind ``reproduction``, :func:`reproduction_rows`) sets every cell, a reading of LNUCB-TA (as
written, the public code's reading, each of its switches alone) or a policy with a published row, under one preparation
of the reference's rows (``hare.data.prepare.PREPARATIONS``), against its published row, with the claims' verdict rule
(:func:`reproduction_verdict`), and lists for each published row the cells that reproduce it;
:mod:`hare.experiments.tables.comparison` restates Table 2's comparison (LNUCB-TA against its best baseline) over the
same cells; :mod:`hare.report.reproduction` renders the table and its text.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

from hare.data.encoding import DEFAULT_PREPARATION, PREPARATIONS
from hare.io import read_npz
from hare.report.reproduction import Reading, Readings, reading_name
from hare.statistics import t_interval


def read_published(published_csv: str | Path) -> dict[tuple[str, str], dict]:
    """The rows of a CSV of published numbers (policy, environment, mean, std, n_runs, horizon, source), by
    ``(policy, dataset)`` (``environment`` in the CSV names the dataset)."""
    with open(published_csv, newline="") as handle:
        return {(p["policy"], p["environment"]): p for p in csv.DictReader(handle)}


def published_rows(rows: list[dict], published_csv: str | Path) -> list[dict]:
    """Our rows beside the numbers a publication quotes (CSV: policy, environment, mean, std, n_runs, horizon,
    source).

    A published row is matched by policy and dataset (``environment`` in the CSV names the dataset). Every preparation
    we ran is listed: the reference one is the published protocol, each other preparation of the reference's rows a
    candidate for the one the row fits; a project-preparation row shows what this project's preparation moves.
    ``comparable`` is true when the preparation is one of the reference's rows (not the project's) and the horizon
    equals the published one; our run count is ours (the interval carries it). ``verdict``: :func:`reproduction_verdict`
    on the 95% t interval of our mean (from ``mean``, ``std`` and ``n_runs``)."""
    published = read_published(published_csv)
    out = []
    for mine in rows:
        p = published.get((mine["policy_name"], mine.get("dataset") or mine["environment"]))
        if p is None:
            continue
        horizon, n_runs = int(p["horizon"]), int(p["n_runs"])
        preparation = mine.get("preparation") or DEFAULT_PREPARATION
        comparable = preparation != DEFAULT_PREPARATION and int(mine["horizon"]) == horizon
        low, high = _interval_of(mine)
        verdict = reproduction_verdict(low, high, mine["horizon"], p) if comparable else "not comparable"
        out.append(
            {
                **mine,
                "published_mean": float(p["mean"]),
                "published_std": float(p["std"]),
                "published_n_runs": n_runs,
                "published_horizon": horizon,
                "source": p["source"],
                "comparable": comparable,
                "verdict": verdict,
            }
        )
    return sorted(
        out,
        key=lambda r: (
            r["dataset"] or r["environment"],
            r["policy_name"],
            preparation_rank(r.get("preparation") or DEFAULT_PREPARATION),
        ),
    )


PREPARATION_ORDER = (*PREPARATIONS, DEFAULT_PREPARATION)
"""The preparations in table order: those of the reference's rows (:data:`hare.data.encoding.PREPARATIONS`, the
reference first), then the project's."""


def preparation_rank(preparation: str) -> int:
    return PREPARATION_ORDER.index(preparation) if preparation in PREPARATION_ORDER else len(PREPARATION_ORDER)


def _interval_of(row: dict) -> tuple[float | None, float | None]:
    """The 95% t interval of a table row's mean from its ``mean``, ``std`` (over runs, ddof 1) and ``n_runs``."""
    from scipy.stats import t as student_t

    n = int(row["n_runs"])
    mean, std = float(row["mean"]), float(row["std"])
    if n < 2 or not (math.isfinite(mean) and math.isfinite(std)):
        return None, None
    half = float(student_t.ppf(0.975, n - 1)) * std / math.sqrt(n)
    return mean - half, mean + half


REPRODUCED_POLICY = "lnucb_ta"
"""The policy whose published row every reading is set against."""
PUBLIC_VALUES = {
    "knn_weights": "distance",
    "global_mean": "all_rewards",
    "k_rounding": "floor",
    "theta_init": "uniform",
}
"""LNUCB-TA's hyperparameters where the public code departs from the algorithm as written, at the public code's value
(``hare.policies.lnucb_ta.PUBLIC_CODE_READING``, repeated here so that a table process does not import torch)."""
SWITCHES = tuple(PUBLIC_VALUES)
PRIVILEGED_SWITCH = "global_mean"
"""The switch whose public value (``all_rewards``) reads information a bandit does not have."""
READINGS = Readings(
    (
        Reading("lnucb_ta", (), "as written"),
        Reading("lnucb_ta_public", SWITCHES, "public-code reading"),
        Reading("lnucb_ta_distance_weights", ("knn_weights",), "distance weights"),
        Reading("lnucb_ta_all_rewards", ("global_mean",), "g from all rewards"),
        Reading("lnucb_ta_floor_k", ("k_rounding",), "k by floor"),
        Reading("lnucb_ta_uniform_theta", ("theta_init",), "theta uniform at start"),
    ),
    SWITCHES,
    PRIVILEGED_SWITCH,
)
"""The rows of the reproduction table, in order: the algorithm as written, the public code's reading (every switch),
then each switch alone."""
REPRODUCTION_FIELDS = (
    "dataset",
    "environment",
    "preparation",
    "published_policy",
    "reading",
    "policy",
    "role",
    "mean",
    "ci_low",
    "ci_high",
    "std",
    "n_runs",
    "horizon",
    "published_mean",
    "published_std",
    "published_n_runs",
    "published_horizon",
    "sigma_difference",
    "verdict",
    "comparable",
    "chosen",
    "reproduced_by",
    "source",
)
"""CSV columns of the reproduction table: one line per table row; ``role`` is ``published`` (the quoted numbers, with
``reproduced_by`` the cells within two published standard deviations) or ``ours`` (a cell: a reading of LNUCB-TA or a
policy, under one ``preparation``, against the published row of ``published_policy``); ``sigma_difference`` is
(our mean - published mean) / published std; ``verdict`` one of ``within 2 sd``, ``outside 2 sd``,
``overlaps``, ``not comparable``, ``no published row``, ``no interval``."""


def _check_reading(row: dict, reading: Reading) -> None:
    """A run labelled as a reading plays LNUCB-TA with exactly that reading's switches at the public code's values."""
    params = json.loads(row["params"])
    public = tuple(name for name in SWITCHES if params.get(name) == PUBLIC_VALUES[name])
    if row["policy_name"] != REPRODUCED_POLICY or set(public) != set(reading.switches):
        raise ValueError(
            f"run of {row['policy']!r} on {row['environment']!r}: the reproduction table reads it as LNUCB-TA "
            f"{reading.text} (public-code switches {list(reading.switches)}), but it plays {row['policy_name']!r} "
            f"with the public-code switches {list(public)}"
        )


def reproduction_verdict(low: float | None, high: float | None, horizon: int, published: dict | None) -> str:
    """The verdict code of one cell: the claims' rule (:func:`hare.verdicts.decide` with ``within``) on the 95%
    interval ``[low, high]`` of our mean against the band published mean ± 2 published std, at the published horizon
    only (``not comparable`` otherwise; our run count is ours, the interval carries it); ``no published row`` without a
    published row."""
    from hare.verdicts import decide

    if published is None:
        return "no published row"
    if int(horizon) != int(published["horizon"]):
        return "not comparable"
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return "no interval"
    mean, std = float(published["mean"]), float(published["std"])
    status = decide(low, high, "within", (mean - 2 * std, mean + 2 * std))
    return {"PASS": "within 2 sd", "FAIL": "outside 2 sd"}.get(status, "overlaps")


def planned_band_runs(mean: float, sd: float, published: dict, cap: int = 100) -> int | None:
    """The power calculation of a cell: the smallest run count ``n`` whose expected 95% t half-width
    ``t_{0.975, n-1} sd / sqrt(n)`` is below the distance from ``mean`` to the nearer edge of the band published
    mean ± 2 published std (inside the band: the interval then lies inside it; outside: wholly outside), from a pilot's
    ``mean`` and ``sd`` (:func:`hare.verdicts.planned_runs`); None when the mean sits on an edge or more than ``cap``
    runs are needed."""
    from hare.verdicts import planned_runs

    centre, std = float(published["mean"]), float(published["std"])
    distance = min(abs(mean - (centre - 2 * std)), abs(mean - (centre + 2 * std)))
    if not (math.isfinite(distance) and distance > 0 and math.isfinite(sd)):
        return None
    return planned_runs(sd, distance * (1 - 1e-9), cap=cap)


def _published_line(dataset: str, policy: str, published: dict, reproduced_by: list[str]) -> dict:
    numbers = {
        "mean": float(published["mean"]),
        "std": float(published["std"]),
        "n_runs": int(published["n_runs"]),
        "horizon": int(published["horizon"]),
    }
    return {
        "dataset": dataset,
        "environment": "",
        "preparation": "",
        "published_policy": policy,
        "reading": "published",
        "policy": policy,
        "role": "published",
        **numbers,
        "ci_low": float("nan"),
        "ci_high": float("nan"),
        **{f"published_{k}": v for k, v in numbers.items()},
        "sigma_difference": float("nan"),
        "verdict": "",
        "comparable": "",
        "chosen": "",
        "reproduced_by": "; ".join(reproduced_by),
        "source": published["source"],
    }


def _cell_name(row: dict) -> str:
    """A cell as the published line lists it: ``<reading or policy> / <preparation>``."""
    return f"{row['reading']} / {row['preparation']}"


def _reading_line(row: dict, reading: Reading | None, published_policy: str, published: dict | None) -> dict:
    interval = t_interval(read_npz(row["run_file"])["total_regret"])
    mean = interval["estimate"]
    low, high = interval["ci_low"], interval["ci_high"]
    verdict = reproduction_verdict(low, high, row["horizon"], published)
    pub = {"mean": float("nan"), "std": float("nan"), "n_runs": "", "horizon": ""}
    if published is not None:
        pub = {
            "mean": float(published["mean"]),
            "std": float(published["std"]),
            "n_runs": int(published["n_runs"]),
            "horizon": int(published["horizon"]),
        }
    sigma = (mean - pub["mean"]) / pub["std"] if pub["std"] > 0 else float("nan")
    return {
        "dataset": row["dataset"],
        "environment": row["environment"],
        "preparation": row.get("preparation") or DEFAULT_PREPARATION,
        "published_policy": published_policy,
        "reading": reading_name(reading, READINGS, tex=False) if reading is not None else row["policy_name"],
        "policy": row["policy"],
        "role": "ours",
        "mean": mean,
        "std": row["std"],
        "ci_low": float("nan") if low is None else low,
        "ci_high": float("nan") if high is None else high,
        "n_runs": row["n_runs"],
        "horizon": row["horizon"],
        **{f"published_{k}": v for k, v in pub.items()},
        "sigma_difference": sigma,
        "verdict": verdict,
        "comparable": verdict not in ("not comparable", "no published row"),
        "chosen": row.get("chosen", ""),
        "reproduced_by": "",
        "source": published["source"] if published is not None else "",
        "regime": row["regime"],
        "n_logged": row["n_logged"],
    }


def reproduction_cells(rows: list[dict], published: dict[tuple[str, str], dict]) -> dict[tuple[str, str, str], dict]:
    """``{(dataset, label, preparation): row}`` of the runs the reproduction table reads: every reading of LNUCB-TA
    and every policy with a published row, under every preparation of the reference's rows (not the project's)."""
    readings = READINGS.by_label()
    policies = {policy for policy, _ in published}
    runs: dict[tuple[str, str, str], dict] = {}
    for r in rows:
        preparation = r.get("preparation") or DEFAULT_PREPARATION
        if preparation == DEFAULT_PREPARATION or not r.get("dataset"):
            continue
        if r["policy"] in readings:
            _check_reading(r, readings[r["policy"]])
        elif not (r["policy"] == r["policy_name"] and r["policy"] in policies):
            continue
        key = (r["dataset"], r["policy"], preparation)
        if key in runs:
            raise ValueError(
                f"two runs of {r['policy']!r} on {r['dataset']!r} under the {preparation} preparation "
                f"({runs[key]['run_file']} and {r['run_file']}); the reproduction table holds one per cell"
            )
        runs[key] = r
    return runs


def reproduction_rows(rows: list[dict], published_csv: str | Path) -> list[dict]:
    """The lines of the reproduction table, per dataset (sorted), per published policy (LNUCB-TA first, then the
    others in the CSV's order; datasets without a published row: LNUCB-TA's readings alone): the published row (when
    the CSV has one), with ``reproduced_by`` the cells within two published standard deviations of it, then its cells
    that were run, one per (reading or policy) x preparation of the reference's rows: LNUCB-TA's readings
    (:data:`READINGS`) in that order, each preparation in :data:`PREPARATION_ORDER`. Each cell's mean comes with its
    95% t interval over runs (:func:`hare.statistics.t_interval`, read from its run file), its difference from the
    published mean in published standard deviations and its verdict (:func:`reproduction_verdict`)."""
    published = read_published(published_csv)
    runs = reproduction_cells(rows, published)
    policies = list(dict.fromkeys([REPRODUCED_POLICY, *(policy for policy, _ in published)]))
    by_label = READINGS.by_label()
    out = []
    for dataset in sorted({d for d, _, _ in runs}):
        for policy in policies:
            labels = [r.label for r in READINGS.readings] if policy == REPRODUCED_POLICY else [policy]
            keys = sorted(
                (key for key in runs if key[0] == dataset and key[1] in labels),
                key=lambda k: (labels.index(k[1]), preparation_rank(k[2])),
            )
            if not keys:
                continue
            row = published.get((policy, dataset))
            cells = [_reading_line(runs[key], by_label.get(key[1]), policy, row) for key in keys]
            if row is not None:
                within = [_cell_name(c) for c in cells if c["verdict"] == "within 2 sd"]
                out.append(_published_line(dataset, policy, row, within))
            out.extend(cells)
    return out
