"""Run files -> tables (CSV for readers and checks, booktabs LaTeX for the paper)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Iterable

import numpy as np

from hare.io import read_npz, write_text
from hare.report.latex import booktabs_table, escape, format_number
from hare.report.names import display_name

FIELDS = ("experiment", "environment", "policy", "n_runs", "horizon", "mean", "std", "std_over_mean_pct")


def summarise_run(npz_path: str | Path) -> dict:
    """One row: mean and std (ddof=1) over runs of the total regret of a run file and its sidecar."""
    npz_path = Path(npz_path)
    sidecar = json.loads(npz_path.with_suffix(".json").read_text())
    totals = read_npz(npz_path)["total_regret"]
    mean = float(totals.mean())
    std = float(totals.std(ddof=1)) if totals.size > 1 else float("nan")
    return {
        "experiment": sidecar["job"]["experiment"],
        "environment": sidecar["job"]["environment"]["name"],
        "policy": sidecar["job"]["label"],
        "n_runs": int(totals.size),
        "horizon": int(sidecar["horizon"]),
        "mean": mean,
        "std": std,
        "std_over_mean_pct": 100.0 * std / mean if mean > 0 else float("nan"),
    }


def regret_rows(run_files: Iterable[str | Path]) -> list[dict]:
    return sorted((summarise_run(p) for p in run_files), key=lambda r: (r["environment"], r["policy"]))


def rows_to_csv(rows: list[dict]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=FIELDS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: (f"{row[k]:.6g}" if isinstance(row[k], float) else row[k]) for k in FIELDS})
    return buffer.getvalue()


def regret_table_tex(rows: list[dict], caption: str, label: str) -> str:
    """Policies as rows, environments as columns, ``mean ± std`` of total regret; best mean per column in bold."""
    environments = sorted({r["environment"] for r in rows})
    policies = sorted({r["policy"] for r in rows})
    cell = {(r["policy"], r["environment"]): r for r in rows}
    best = {env: min(r["mean"] for r in rows if r["environment"] == env) for env in environments}
    body = []
    for policy in policies:
        line = [escape(display_name(policy))]
        for env in environments:
            r = cell.get((policy, env))
            if r is None:
                line.append("--")
                continue
            text = f"{format_number(r['mean'])} $\\pm$ {format_number(r['std'])}"
            line.append(rf"\textbf{{{text}}}" if np.isclose(r["mean"], best[env]) else text)
        body.append(line)
    first = {env: next(r for r in rows if r["environment"] == env) for env in environments}
    header = ["Policy", *(escape(display_name(env)) + f" ($T={first[env]['horizon']}$, $n={first[env]['n_runs']}$)" for env in environments)]
    notes = "Total pseudo-regret, mean $\\pm$ standard deviation over $n$ independent runs (ddof $=1$); lower is better; best per column in bold."
    return booktabs_table(header, body, "l" + "r" * len(environments), caption, label, notes)


def write_regret_table(run_files: Iterable[str | Path], csv_path: str | Path, tex_path: str | Path, caption: str, label: str) -> list[dict]:
    rows = regret_rows(run_files)
    write_text(csv_path, rows_to_csv(rows))
    write_text(tex_path, regret_table_tex(rows, caption, label))
    return rows
