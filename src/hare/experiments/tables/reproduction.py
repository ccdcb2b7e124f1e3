"""Our runs beside the numbers a publication quotes: the published table's rows and the reproduction table's lines.

The reproduction table (kind ``reproduction``, :func:`reproduction_rows`) sets LNUCB-TA as written, the public code's
reading and each of its switches alone against LNUCB-TA's published row, with the claims' verdict rule
(:func:`reproduction_verdict`); :mod:`hare.report.reproduction` renders it and its paragraph per dataset.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

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

    A published row is matched by policy and dataset (``environment`` in the CSV names the dataset). Every protocol
    we ran is listed: the reference preparation is the published protocol; a project-preparation row of the same
    policy shows what the preparation alone moves. ``comparable`` is true only when the preparation is the
    reference one and the horizon and run count equal the published ones; no difference is computed.
    """
    published = read_published(published_csv)
    out = []
    for mine in rows:
        p = published.get((mine["policy_name"], mine.get("dataset") or mine["environment"]))
        if p is None:
            continue
        horizon, n_runs = int(p["horizon"]), int(p["n_runs"])
        comparable = mine.get("preparation") == "reference" and mine["horizon"] == horizon and mine["n_runs"] == n_runs
        out.append(
            {
                **mine,
                "published_mean": float(p["mean"]),
                "published_std": float(p["std"]),
                "published_n_runs": n_runs,
                "published_horizon": horizon,
                "source": p["source"],
                "comparable": comparable,
            }
        )
    return sorted(
        out, key=lambda r: (r["dataset"] or r["environment"], r["policy_name"], r.get("preparation") != "reference")
    )


REPRODUCED_POLICY = "lnucb_ta"
"""The policy whose published row every reading is set against."""
PUBLIC_VALUES = {
    "knn_weights": "distance",
    "global_mean": "all_rewards",
    "k_rounding": "floor",
    "theta_init": "uniform",
}
"""LNUCB-TA's hyperparameters where the public code departs from the algorithm as written, at the public code's value
(``hare.policies.neighbors.PUBLIC_CODE_READING``, repeated here so that a table process does not import torch)."""
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
    "source",
)
"""CSV columns of the reproduction table: one line per table row; ``role`` is ``published`` (the quoted numbers) or
``ours``; ``sigma_difference`` is (our mean - published mean) / published std; ``verdict`` one of ``within 2 sd``,
``outside 2 sd``, ``overlaps``, ``not comparable``, ``no published row``, ``no interval``."""


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


def reproduction_verdict(
    low: float | None, high: float | None, horizon: int, n_runs: int, published: dict | None
) -> str:
    """The verdict code of one reading: the claims' rule (:func:`hare.verdicts.decide` with ``within``) on the 95%
    interval ``[low, high]`` of our mean against the band published mean ± 2 published std, at the published horizon
    and run count only (``not comparable`` otherwise); ``no published row`` without a published row."""
    from hare.verdicts import decide

    if published is None:
        return "no published row"
    if int(horizon) != int(published["horizon"]) or int(n_runs) != int(published["n_runs"]):
        return "not comparable"
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return "no interval"
    mean, std = float(published["mean"]), float(published["std"])
    status = decide(low, high, "within", (mean - 2 * std, mean + 2 * std))
    return {"PASS": "within 2 sd", "FAIL": "outside 2 sd"}.get(status, "overlaps")


def _published_line(dataset: str, published: dict) -> dict:
    numbers = {
        "mean": float(published["mean"]),
        "std": float(published["std"]),
        "n_runs": int(published["n_runs"]),
        "horizon": int(published["horizon"]),
    }
    return {
        "dataset": dataset,
        "environment": "",
        "reading": "published",
        "policy": REPRODUCED_POLICY,
        "role": "published",
        **numbers,
        "ci_low": float("nan"),
        "ci_high": float("nan"),
        **{f"published_{k}": v for k, v in numbers.items()},
        "sigma_difference": float("nan"),
        "verdict": "",
        "comparable": "",
        "chosen": "",
        "source": published["source"],
    }


def _reading_line(row: dict, reading: Reading, published: dict | None) -> dict:
    interval = t_interval(read_npz(row["run_file"])["total_regret"])
    mean = interval["estimate"]
    low, high = interval["ci_low"], interval["ci_high"]
    verdict = reproduction_verdict(low, high, row["horizon"], row["n_runs"], published)
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
        "reading": reading_name(reading, READINGS, tex=False),
        "policy": reading.label,
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
        "source": published["source"] if published is not None else "",
        "regime": row["regime"],
        "n_logged": row["n_logged"],
    }


def reproduction_rows(rows: list[dict], published_csv: str | Path) -> list[dict]:
    """The lines of the reproduction table: per dataset (sorted) of the runs under the reference preparation,
    LNUCB-TA's published row (when the CSV has one), then the readings of :data:`READINGS` that were run, in that
    order. Each reading's mean comes with its 95% t interval over runs (:func:`hare.statistics.t_interval`, read from
    its run file), its difference from the published mean in published standard deviations and its verdict
    (:func:`reproduction_verdict`)."""
    published = read_published(published_csv)
    readings = READINGS.by_label()
    runs: dict[tuple[str, str], dict] = {}
    for r in rows:
        if r.get("preparation") != "reference" or r["policy"] not in readings:
            continue
        key = (r["dataset"], r["policy"])
        if key in runs:
            raise ValueError(
                f"two runs of {r['policy']!r} on {r['dataset']!r} under the reference preparation "
                f"({runs[key]['run_file']} and {r['run_file']}); the reproduction table holds one per dataset"
            )
        _check_reading(r, readings[r["policy"]])
        runs[key] = r
    out = []
    for dataset in sorted({d for d, _ in runs}):
        row = published.get((REPRODUCED_POLICY, dataset))
        if row is not None:
            out.append(_published_line(dataset, row))
        out.extend(
            _reading_line(runs[(dataset, reading.label)], reading, row)
            for reading in READINGS.readings
            if (dataset, reading.label) in runs
        )
    return out
