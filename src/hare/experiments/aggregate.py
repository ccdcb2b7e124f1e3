"""Run files -> tables (CSV for readers and checks, booktabs LaTeX for the paper).

Every table states what its numbers are: total pseudo-regret (or reward) of the
reported runs, mean ± standard deviation over runs (ddof = 1), with the run count.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from hare.io import read_npz, write_text
from hare.report.latex import booktabs_table, escape, format_number
from hare.report.names import display_name

FIELDS = ("experiment", "environment", "policy", "policy_name", "params", "n_runs", "horizon", "mean", "std", "std_over_mean_pct", "mean_reward")
TIMING_FIELDS = ("wall_time_s", "peak_rss_mb", "device")
"""Measured, not reproducible bit for bit: only the compute, scaling and replay tables carry them."""
TABLE_KINDS = ("regret", "sensitivity", "scaling", "compute", "published", "replay")
SPREAD_NOTE = "mean $\\pm$ standard deviation over $n$ independent runs (ddof $=1$)"


def summarise_run(npz_path: str | Path) -> dict:
    """One row per run file: total regret statistics over runs plus the sidecar's provenance figures."""
    npz_path = Path(npz_path)
    sidecar = json.loads(npz_path.with_suffix(".json").read_text())
    arrays = read_npz(npz_path)
    job = sidecar["job"]
    if "total_regret" not in arrays:
        return _summarise_replay(arrays, sidecar)
    totals = arrays["total_regret"]
    mean = float(totals.mean())
    std = float(totals.std(ddof=1)) if totals.size > 1 else float("nan")
    return {
        "experiment": job["experiment"],
        "environment": job["environment"]["name"],
        "policy": job["label"],
        "policy_name": job["policy"],
        "params": json.dumps(job["params"], sort_keys=True),
        "n_runs": int(totals.size),
        "horizon": int(sidecar["horizon"]),
        "mean": mean,
        "std": std,
        "std_over_mean_pct": 100.0 * std / mean if mean > 0 else float("nan"),
        "mean_reward": float(arrays["total_reward"].mean()),
        "wall_time_s": float(sidecar["wall_time_s"]),
        "peak_rss_mb": float(sidecar["peak_memory"].get("host_max_rss_mb", float("nan"))),
        "device": sidecar["device"],
    }


def _std(values: np.ndarray) -> float:
    return float(values.std(ddof=1)) if values.size > 1 else float("nan")


def _summarise_replay(arrays: dict, sidecar: dict) -> dict:
    """A replay run (Li et al. 2011): rewards of accepted rounds and off-policy estimates, no regret."""
    job = sidecar["job"]
    mean_reward = arrays["total_mean_reward"]
    return {
        "experiment": job["experiment"],
        "environment": job["environment"]["name"],
        "policy": job["label"],
        "policy_name": job["policy"],
        "params": json.dumps(job["params"], sort_keys=True),
        "n_runs": int(arrays["total_reward"].size),
        "horizon": int(sidecar["horizon"]),
        "mean": float("nan"),
        "std": float("nan"),
        "std_over_mean_pct": float("nan"),
        "mean_reward": float(arrays["total_reward"].mean()),
        "std_reward": _std(arrays["total_reward"]),
        "accepted": float(arrays["total_accepted"].mean()),
        "reward_per_accepted": float(np.nanmean(mean_reward)),
        "reward_per_accepted_std": _std(mean_reward[np.isfinite(mean_reward)]),
        **{name: float(arrays[name].mean()) for name in ("ope_ipw", "ope_snipw", "ope_dm", "ope_dr")},
        "ope_ipw_se": float(arrays["ope_ipw_se"].mean()),
        "wall_time_s": float(sidecar["wall_time_s"]),
        "peak_rss_mb": float(sidecar["peak_memory"].get("host_max_rss_mb", float("nan"))),
        "device": sidecar["device"],
    }


def replay_table_tex(rows: list[dict], caption: str, label: str) -> str:
    """Replay evaluation on logged data: accepted rounds, cumulative and per-round reward, off-policy estimates, time."""
    body = []
    for r in rows:
        params = ", ".join(f"{k}={v}" for k, v in json.loads(r["params"]).items())
        body.append([
            escape(display_name(r["policy_name"])), f"\texttt{{{escape(params)}}}", format_number(r["accepted"], 1),
            f"{format_number(r['mean_reward'], 2)} $\\pm$ {format_number(r['std_reward'], 2)}",
            f"{format_number(r['reward_per_accepted'], 4)} $\\pm$ {format_number(r['reward_per_accepted_std'], 4)}",
            format_number(r["ope_ipw"], 4), format_number(r["ope_dr"], 4), format_number(r["wall_time_s"], 1),
        ])
    n = rows[0]["n_runs"] if rows else 0
    notes = (f"Replay evaluation (Li et al.\\ 2011) over $n={n}$ runs, each streaming the logged rows in its own order: accepted rounds, "
             "clicks on accepted rounds and clicks per accepted round (mean $\\pm$ std over runs), off-policy estimates of the final greedy policy's "
             "click rate (IPW, doubly robust), and wall time of all runs batched (s).")
    return booktabs_table(["Policy", "Hyperparameters", "Accepted", "Clicks", "Click rate", "IPW", "DR", "Time (s)"], body, "llrrrrrr", caption, label, notes, resize=True)


def summarise_runs(run_files: Iterable[str | Path]) -> list[dict]:
    return sorted((summarise_run(p) for p in run_files), key=lambda r: (r["environment"], r["policy"]))


def rows_to_csv(rows: list[dict], fields: tuple[str, ...] = FIELDS) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: (f"{row[k]:.6g}" if isinstance(row[k], float) else row[k]) for k in fields if k in row})
    return buffer.getvalue()


def _spread(row: dict, with_pct: bool) -> str:
    text = f"{format_number(row['mean'])} $\\pm$ {format_number(row['std'])}"
    return text + (f" ({format_number(row['std_over_mean_pct'])}\\%)" if with_pct else "")


def regret_table_tex(rows: list[dict], caption: str, label: str, with_pct: bool = True) -> str:
    """Policies as rows, environments as columns, total regret ``mean ± std (std/mean %)``; best mean per column in bold."""
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
            text = _spread(r, with_pct)
            line.append(rf"\textbf{{{text}}}" if np.isclose(r["mean"], best[env]) else text)
        body.append(line)
    first = {env: next(r for r in rows if r["environment"] == env) for env in environments}
    header = ["Policy", *(escape(display_name(env)) + f" ($T={first[env]['horizon']}$, $n={first[env]['n_runs']}$)" for env in environments)]
    notes = f"Total pseudo-regret, {SPREAD_NOTE}" + (" and std/mean in \\%" if with_pct else "") + "; lower is better; best per column in bold."
    return booktabs_table(header, body, "l" + "r" * len(environments), caption, label, notes, resize=len(environments) > 2)


def sensitivity_table_tex(rows: list[dict], caption: str, label: str) -> str:
    """One row per (environment, policy point): its hyperparameters, regret and mean reward; best point per policy in bold."""
    best = {}
    for r in rows:
        key = (r["environment"], r["policy_name"])
        best[key] = min(best.get(key, float("inf")), r["mean"])
    body = []
    for r in rows:
        params = ", ".join(f"{k}={v}" for k, v in json.loads(r["params"]).items())
        text = _spread(r, with_pct=False)
        bold = np.isclose(r["mean"], best[(r["environment"], r["policy_name"])])
        names = [escape(display_name(r["environment"])), escape(display_name(r["policy_name"])), f"\\texttt{{{escape(params)}}}"]
        body.append([*names, rf"\textbf{{{text}}}" if bold else text, format_number(r["mean_reward"] / r["horizon"], 3)])
    n = rows[0]["n_runs"] if rows else 0
    notes = f"Total pseudo-regret, {SPREAD_NOTE}, $n={n}$; mean reward per round; best point of each policy in bold."
    return booktabs_table(["Environment", "Policy", "Hyperparameters", "Regret", "Mean reward"], body, "lllrr", caption, label, notes, resize=True)


def scaling_table_tex(rows: list[dict], caption: str, label: str) -> str:
    """Runtime and reward per policy point: wall time per round, total reward and regret."""
    body = []
    for r in rows:
        per_round_ms = 1000.0 * r["wall_time_s"] / r["horizon"]
        params = ", ".join(f"{k}={v}" for k, v in json.loads(r["params"]).items())
        names = [escape(display_name(r["environment"])), escape(display_name(r["policy_name"])), f"\\texttt{{{escape(params)}}}"]
        body.append([*names, format_number(per_round_ms, 2), format_number(r["mean_reward"]), _spread(r, with_pct=False)])
    notes = f"Wall time per round for all $n$ runs batched on {escape(rows[0]['device']) if rows else '--'}; total reward and regret {SPREAD_NOTE}."
    return booktabs_table(["Environment", "Policy", "Hyperparameters", "ms/round", "Reward", "Regret"], body, "lllrrr", caption, label, notes, resize=True)


def compute_table_tex(rows: list[dict], caption: str, label: str) -> str:
    """Compute per experiment and device: jobs, summed wall time, largest peak memory (NeurIPS checklist)."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in rows:
        groups[(r["experiment"], r["device"])].append(r)
    body = [[escape(exp), escape(dev), str(len(g)), format_number(sum(r["wall_time_s"] for r in g), 1), format_number(max(r["peak_rss_mb"] for r in g), 0)] for (exp, dev), g in sorted(groups.items())]
    total = sum(r["wall_time_s"] for r in rows)
    body.append([r"\textbf{total}", "", str(len(rows)), format_number(total, 1), ""])
    notes = "Simulation wall time summed over jobs (process start, data loading and the workflow's other rules excluded); peak resident memory of the largest job."
    return booktabs_table(["Experiment", "Device", "Jobs", "Wall time (s)", "Peak RSS (MB)"], body, "llrrr", caption, label, notes)


def published_rows(rows: list[dict], published_csv: str | Path) -> list[dict]:
    """Our rows next to the numbers a publication quotes (CSV: policy, environment, mean, std, n_runs, horizon, source)."""
    with open(published_csv, newline="") as handle:
        published = list(csv.DictReader(handle))
    ours = {(r["policy_name"], r["environment"]): r for r in rows}
    out = []
    for p in published:
        mine = ours.get((p["policy"], p["environment"]))
        if mine is None:
            continue
        published_mean = float(p["mean"])
        out.append(
            {**mine, "published_mean": published_mean, "published_std": float(p["std"]), "published_n_runs": int(p["n_runs"]),
             "published_horizon": int(p["horizon"]), "source": p["source"], "difference": mine["mean"] - published_mean}
        )
    return out


def published_table_tex(rows: list[dict], caption: str, label: str) -> str:
    body = [
        [
            escape(display_name(r["policy_name"])),
            escape(display_name(r["environment"])),
            f"{_spread(r, False)} ($T={r['horizon']}$, $n={r['n_runs']}$)",
            f"{format_number(r['published_mean'])} $\\pm$ {format_number(r['published_std'])} ($T={r['published_horizon']}$, $n={r['published_n_runs']}$)",
            format_number(r["difference"]),
        ]
        for r in rows
    ]
    notes = (
        "Published numbers as quoted by the source (LNUCB-TA, Table 2, which follows the NeuralTS protocol). "
        "Differences in horizon, run count or preprocessing make the columns comparable only where $T$ and $n$ agree."
    )
    return booktabs_table(["Policy", "Dataset", "This artifact", "Published", "Difference"], body, "llrrr", caption, label, notes, resize=True)


def write_table(
    kind: str, run_files: Iterable[str | Path], csv_path: str | Path, tex_path: str | Path, caption: str, label: str,
    policies: list[str] | None = None, published_csv: str | Path | None = None,
) -> list[dict]:
    """Build the table of ``kind`` from run files; ``policies`` keeps only those config names."""
    if kind not in TABLE_KINDS:
        raise ValueError(f"table kind must be one of {TABLE_KINDS}, got {kind!r}")
    rows = summarise_runs(run_files)
    if policies:
        rows = [r for r in rows if r["policy_name"] in policies or r["policy"] in policies]
    if not rows:
        raise ValueError(f"no run matches the table {label!r} (policies {policies})")
    fields = FIELDS
    if kind == "regret":
        tex = regret_table_tex(rows, caption, label)
    elif kind == "sensitivity":
        tex = sensitivity_table_tex(rows, caption, label)
    elif kind == "scaling":
        fields = FIELDS + TIMING_FIELDS
        tex = scaling_table_tex(rows, caption, label)
    elif kind == "compute":
        fields = FIELDS + TIMING_FIELDS
        tex = compute_table_tex(rows, caption, label)
    elif kind == "replay":
        fields = FIELDS + TIMING_FIELDS + ("std_reward", "accepted", "reward_per_accepted", "reward_per_accepted_std", "ope_ipw", "ope_snipw", "ope_dm", "ope_dr", "ope_ipw_se")
        tex = replay_table_tex(rows, caption, label)
    else:
        if published_csv is None:
            raise ValueError("a published table needs --published")
        rows = published_rows(rows, published_csv)
        fields = FIELDS + ("published_mean", "published_std", "published_n_runs", "published_horizon", "difference", "source")
        tex = published_table_tex(rows, caption, label) if rows else booktabs_table(["Policy"], [["no published counterpart in this configuration"]], "l", caption, label)
    write_text(csv_path, rows_to_csv(rows, fields))
    write_text(tex_path, tex)
    return rows
