"""Run files -> tables (CSV for readers and checks, booktabs LaTeX for the paper).

Every table states what its numbers are: total pseudo-regret (or reward) of the
reported runs, mean ± standard deviation over runs (ddof = 1), with the run count.

Every table also states, from the run sidecars alone:

* its information regime: the caption ends with a sentence generated from the runs'
  ``regime`` and ``n_logged`` (runs without them, older files, are cold); a table whose
  runs come from both regimes gets a Regime column;
* the value each hyperparameter of a row took: for a tuned policy the point chosen on the
  tuning runs (a dagger where the selection had ties), for an entry the config keeps
  ``fixed`` its set value and the reason, otherwise the set value of the policy's
  tunable hyperparameters. The CSV carries the same in extra columns.

Length: one module because every table writer reads the row dicts :func:`summarise_run` builds (the columns of
:data:`FIELDS`, the regime and hyperparameter-choice fields) and shares the caption and cell pieces derived
from them (:func:`regime_sentence`, :func:`hyperparameter_note`, the marks of ``fixed`` reasons); split into
summaries and writers, that untyped row schema would become an interface between modules.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from hare.io import read_npz, write_text
from hare.report.latex import booktabs_table, escape, format_number
from hare.report.names import display_name, parameter_symbol

FIELDS = (
    "experiment", "environment", "policy", "policy_name", "params", "n_runs", "horizon", "mean", "std", "std_over_mean_pct", "mean_reward",
    "regime", "n_logged", "choice", "chosen", "tuned_grid", "selected_from", "ties", "fixed",
)
"""CSV columns. ``choice``: ``tuned`` (chosen on tuning runs), ``fixed`` (kept by the config, reason in ``fixed``),
``set`` (not tuned: an experiment without tuning) or ``none`` (no tunable hyperparameter); ``chosen``: JSON of the
values of the tuned (or tunable) hyperparameters; ``ties``: JSON list of the tuning labels tied with the chosen one
(empty without a tie)."""
TIMING_FIELDS = ("wall_time_s", "peak_rss_mb", "device")
"""Measured, not reproducible bit for bit: only the compute, scaling and replay tables carry them."""
TABLE_KINDS = ("regret", "sensitivity", "scaling", "compute", "published", "replay")
SPREAD_NOTE = "mean $\\pm$ standard deviation over $n$ independent runs (ddof $=1$)"
TIE_MARK = r"$^\dagger$"
REGIMES = ("cold", "warm")


def regime_of_run(sidecar: dict) -> tuple[str, int]:
    """``(regime, n_logged)`` of a run: the sidecar's record, else its job's, else cold (older files)."""
    job = sidecar.get("job", {})
    regime = sidecar.get("regime") or job.get("regime") or "cold"
    if regime not in REGIMES:
        raise ValueError(f"run of {job.get('label')!r}: unknown regime {regime!r}")
    n_logged = sidecar.get("n_logged", job.get("n_logged", 0)) if regime == "warm" else 0
    return regime, int(n_logged or 0)


def _tunable(policy: str) -> tuple[str, ...]:
    from hare.policies.base import policy_class

    try:
        return tuple(policy_class(policy).config_class.tunable)
    except KeyError:
        return ()


def _set_values(policy: str, params: dict, names: tuple[str, ...]) -> dict:
    """The values the tunable ``names`` take for ``params`` (the policy's defaults filled in); for parameters the
    policy rejects, those of ``names`` that ``params`` sets."""
    from hare.policies.base import tunable_values

    try:
        return tunable_values(policy, params)
    except (KeyError, TypeError, ValueError):
        return {name: params[name] for name in names if name in params}


def hyperparameter_choice(job: dict, tunable: dict | None = None) -> dict:
    """How a report run's hyperparameters were set, from its job specification (the sidecar's ``job``) and the
    values of the policy's tunable hyperparameters the sidecar records (``tunable``; older sidecars: derived from
    the policy's config class, which imports the policies)."""
    if "tuned_grid" in job:
        grid = job["tuned_grid"]
        ties = list(job.get("selection_ties") or [])
        return {
            "choice": "tuned", "chosen": json.dumps({k: job["params"].get(k) for k in sorted(grid)}, sort_keys=True),
            "tuned_grid": json.dumps(grid, sort_keys=True), "selected_from": job.get("selected_from", ""),
            "ties": json.dumps(ties if len(ties) > 1 else []), "fixed": "",
        }
    if tunable is None:
        names = _tunable(job["policy"])
        tunable, has_tunable = _set_values(job["policy"], job["params"], names), bool(names)
    else:
        has_tunable = bool(tunable)
    choice = "fixed" if "fixed" in job else "set" if has_tunable else "none"
    return {
        "choice": choice, "chosen": json.dumps(tunable, sort_keys=True),
        "tuned_grid": "", "selected_from": "", "ties": json.dumps([]), "fixed": job.get("fixed", ""),
    }


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
    regime, n_logged = regime_of_run(sidecar)
    return {
        "experiment": job["experiment"],
        "environment": job["environment"]["name"],
        "dataset": job["environment"].get("dataset") or "",
        "preparation": job["environment"].get("preparation", "project") if job["environment"].get("dataset") else "",
        "policy": job["label"],
        "policy_name": job["policy"],
        "params": json.dumps(job["params"], sort_keys=True),
        "n_runs": int(totals.size),
        "horizon": int(sidecar["horizon"]),
        "mean": mean,
        "std": std,
        "std_over_mean_pct": 100.0 * std / mean if mean > 0 else float("nan"),
        "runs_above_half": int((totals > sidecar["horizon"] / 2).sum()),
        "mean_reward": float(arrays["total_reward"].mean()),
        "regime": regime,
        "n_logged": n_logged,
        "warm_start_digest": sidecar.get("warm_start_digest"),
        **hyperparameter_choice(job, sidecar.get("tunable")),
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
    regime, n_logged = regime_of_run(sidecar)
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
        "regime": regime,
        "n_logged": n_logged,
        **hyperparameter_choice(job, sidecar.get("tunable")),
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


def _value_text(value) -> str:
    """A hyperparameter value for a table cell: numbers in their shortest form (0.01, 1e-05, 10)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return f"{value:g}"
    return escape(str(value))


def _params_text(row: dict) -> str:
    params = ", ".join(f"{k}={v}" for k, v in json.loads(row["params"]).items())
    return f"\\texttt{{{escape(params)}}}" + (TIE_MARK if tied(row) else "")


def tied(row: dict) -> bool:
    """Did the tuning runs of this row's selection tie between several points?"""
    return len(json.loads(row.get("ties") or "[]")) > 1


def _regimes(rows: list[dict]) -> list[tuple[str, int]]:
    return sorted({(r["regime"], r["n_logged"]) for r in rows})


def regime_sentence(rows: list[dict]) -> str:
    """The sentence a table's caption ends with: the information regime(s) of its runs."""
    regimes = _regimes(rows)
    warm = [m for regime, m in regimes if regime == "warm"]
    cold = any(regime == "cold" for regime, _ in regimes)
    if len(regimes) == 1:
        if cold:
            return "Regime: cold, no policy sees a logged interaction."
        return f"Regime: warm, every policy first learns from the same $M = {warm[0]}$ logged interactions."
    parts = ["cold (no policy sees a logged interaction)"] if cold else []
    if len(warm) == 1:
        parts.append(f"warm (every policy first learns from the same $M = {warm[0]}$ logged interactions)")
    else:
        sizes = ", ".join(f"${m}$" for m in warm[:-1]) + f" or ${warm[-1]}$"
        parts.append(f"warm (every policy of a row first learns from the same $M$ logged interactions, $M =$ {sizes})")
    return f"Regimes: {' and '.join(parts)}; the Regime column gives each row's."


def _regime_cell(regime: str, n_logged: int, rows: list[dict]) -> str:
    several_m = len({m for reg, m in _regimes(rows) if reg == "warm"}) > 1
    return f"warm ($M={n_logged}$)" if regime == "warm" and several_m else regime


def _with_regime(rows: list[dict], header: list[str], align: str, body: list[list[str]]) -> tuple[list[str], str, list[list[str]]]:
    """A Regime column in front when the rows (one per body line) come from more than one regime."""
    if len(_regimes(rows)) < 2:
        return header, align, body
    return ["Regime", *header], "l" + align, [[_regime_cell(r["regime"], r["n_logged"], rows), *line] for r, line in zip(rows, body, strict=True)]


def _fixed_marks(rows: list[dict]) -> dict[str, str]:
    """A superscript letter per distinct ``fixed`` reason, in row order."""
    reasons = list(dict.fromkeys(r["fixed"] for r in rows if r.get("choice") == "fixed"))
    return {reason: "abcdefghijklmnopqrstuvwxyz"[i % 26] * (1 + i // 26) for i, reason in enumerate(reasons)}


def _choice_cell(cells: list[dict | None], marks: dict[str, str]) -> tuple[str, bool]:
    """The hyperparameter values of one table row: one value where every dataset agrees, else one per dataset (in column order).

    Returns the cell's LaTeX and whether some value is listed per dataset.
    """
    present = [r for r in cells if r is not None]
    values = [json.loads(r["chosen"]) if r is not None else None for r in cells]
    names = list(dict.fromkeys(name for v in values if v is not None for name in v))
    parts = []
    per_dataset = False
    for name in names:
        per = [_value_text(v[name]) if v is not None and name in v else "--" for v in values]
        distinct = {text for text, r in zip(per, cells, strict=True) if r is not None}
        per_dataset = per_dataset or len(distinct) > 1
        parts.append(f"{parameter_symbol(name)}={next(iter(distinct)) if len(distinct) == 1 else '/'.join(per)}")
    text = ", ".join(parts) or "--"
    choices = {r["choice"] for r in present}
    if "fixed" in choices:
        reason = next(r["fixed"] for r in present if r["choice"] == "fixed")
        text += f" (fixed$^{{{marks[reason]}}}$)"
    elif "set" in choices:
        text += " (set)"
    return text, per_dataset


def hyperparameter_note(rows: list[dict], per_dataset: bool = False) -> str:
    """What the Hyperparameters column's values, marks and daggers mean (only the parts the rows use)."""
    notes = []
    choices = {r["choice"] for r in rows}
    if "tuned" in choices:
        sizes = sorted({math.prod(len(v) for v in json.loads(r["tuned_grid"]).values()) for r in rows if r["choice"] == "tuned"})
        budget = f"every tuned policy searched the same {sizes[0]} grid points" if len(sizes) == 1 else f"grids of {', '.join(map(str, sizes[:-1]))} and {sizes[-1]} points"
        notes.append(f"Hyperparameters: the values chosen on tuning runs with disjoint seeds (lowest mean total regret; {budget})"
                     + ("; values separated by / are per dataset, in column order" if per_dataset else ""))
    elif per_dataset:
        notes.append("Hyperparameters separated by / are per dataset, in column order")
    marks = _fixed_marks(rows)
    if marks:
        notes.append("fixed: not tuned, kept at the configured value (" + "; ".join(f"$^{{{mark}}}$ {escape(reason)}" for reason, mark in marks.items()) + ")")
    if "set" in choices:
        notes.append("set: not tuned in this experiment, the configured value")
    if any(tied(r) for r in rows):
        notes.append(f"{TIE_MARK}: grid points tied on the tuning runs; the first in sorted label order was taken (the CSV lists the tied points)")
    return "; ".join(notes) + ("." if notes else "")


def replay_table_tex(rows: list[dict], caption: str, label: str) -> str:
    """Replay evaluation on logged data: accepted rounds, cumulative and per-round reward, off-policy estimates, time."""
    body = []
    for r in rows:
        body.append([
            escape(display_name(r["policy_name"])), _params_text(r), format_number(r["accepted"], 1),
            f"{format_number(r['mean_reward'], 2)} $\\pm$ {format_number(r['std_reward'], 2)}",
            f"{format_number(r['reward_per_accepted'], 4)} $\\pm$ {format_number(r['reward_per_accepted_std'], 4)}",
            format_number(r["ope_ipw"], 4), format_number(r["ope_dr"], 4), format_number(r["wall_time_s"], 1),
        ])
    n = rows[0]["n_runs"] if rows else 0
    notes = (f"Replay evaluation (Li et al.\\ 2011) over $n={n}$ runs, each streaming the logged rows in its own order: accepted rounds, "
             "clicks on accepted rounds and clicks per accepted round (mean $\\pm$ std over runs), off-policy estimates of the final greedy policy's "
             "click rate (IPW, doubly robust), and wall time of all runs batched (s).")
    notes += (" " + hyperparameter_note(rows)) if any(tied(r) for r in rows) else ""
    header, align, body = _with_regime(rows, ["Policy", "Hyperparameters", "Accepted", "Clicks", "Click rate", "IPW", "DR", "Time (s)"], "llrrrrrr", body)
    return booktabs_table(header, body, align, f"{caption} {regime_sentence(rows)}", label, notes, resize=True)


def summarise_runs(run_files: Iterable[str | Path]) -> list[dict]:
    """Rows of every run file; the warm runs of one (experiment, environment) must record the same warm start."""
    rows = sorted((summarise_run(p) for p in run_files), key=lambda r: (r["environment"], r["regime"], r["n_logged"], r["policy"]))
    check_same_warm_start(rows)
    return rows


def check_same_warm_start(rows: list[dict]) -> None:
    """``ValueError`` naming the experiment, environment and policies when the warm runs of one (experiment,
    environment) were fed different logs (their sidecars' ``warm_start_digest`` differ)."""
    digests: dict[tuple[str, str], dict[str, list[str]]] = {}
    for r in rows:
        if r["regime"] == "warm":
            digests.setdefault((r["experiment"], r["environment"]), {}).setdefault(str(r.get("warm_start_digest")), []).append(r["policy"])
    for (experiment, environment), by_digest in digests.items():
        if len(by_digest) > 1:
            detail = "; ".join(f"{digest}: {', '.join(sorted(policies))}" for digest, policies in sorted(by_digest.items()))
            raise ValueError(f"experiment {experiment!r}, environment {environment!r}: the warm runs were fed different logs ({detail})")


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


def _header_runs(rows: list[dict], key: str) -> str:
    return "/".join(str(v) for v in sorted({r[key] for r in rows}))


def regret_table_tex(rows: list[dict], caption: str, label: str, with_pct: bool = True) -> str:
    """Policies as rows (grouped by regime when the runs come from both), environments as columns, total regret
    ``mean ± std (std/mean %)``; best mean per column in bold; the hyperparameters each row used (chosen, fixed or set)
    in a column, a dagger on a cell whose selection had ties; the caption ends with the regime sentence."""
    environments = sorted({r["environment"] for r in rows})
    cell: dict[tuple, dict] = {}
    for r in rows:
        key = (r["regime"], r["n_logged"], r["policy"], r["environment"])
        if key in cell:
            raise ValueError(f"table {label!r}: two runs of {r['policy']!r} on {r['environment']!r} in the {r['regime']} regime "
                             f"(experiments {cell[key]['experiment']!r} and {r['experiment']!r}); a row holds one run per dataset")
        cell[key] = r
    keys = sorted({(r["regime"], r["n_logged"], r["policy"]) for r in rows})
    with_regime = len(_regimes(rows)) > 1
    best = {env: min(r["mean"] for r in rows if r["environment"] == env) for env in environments}
    marks = _fixed_marks([cell[(*key, env)] for key in keys for env in environments if (*key, env) in cell])
    body: list[list[str]] = []
    per_dataset = False
    previous = keys[0][:2]
    for key in keys:
        cells = [cell.get((*key, env)) for env in environments]
        if key[:2] != previous:
            body.append([])
            previous = key[:2]
        choice, differs = _choice_cell(cells, marks)
        per_dataset = per_dataset or differs
        line = ([_regime_cell(key[0], key[1], rows)] if with_regime else []) + [escape(display_name(key[2])), choice]
        for r in cells:
            if r is None:
                line.append("--")
                continue
            text = _spread(r, with_pct)
            text = rf"\textbf{{{text}}}" if np.isclose(r["mean"], best[r["environment"]]) else text
            line.append(text + (TIE_MARK if tied(r) else ""))
        body.append(line)
    by_env = {env: [r for r in rows if r["environment"] == env] for env in environments}
    sizes = {env: f"$T={_header_runs(by_env[env], 'horizon')}$, $n={_header_runs(by_env[env], 'n_runs')}$" for env in environments}
    shared = len(set(sizes.values())) == 1
    header = [
        *(["Regime"] if with_regime else []), "Policy", "Hyperparameters",
        *(escape(display_name(env)) if shared else rf"\begin{{tabular}}[b]{{@{{}}c@{{}}}}{escape(display_name(env))}\\ {sizes[env]}\end{{tabular}}" for env in environments),
    ]
    notes = ("Total pseudo-regret" + (f" ({sizes[environments[0]]} for every dataset)" if shared else "") + f", {SPREAD_NOTE}"
             + (" and std/mean in \\%" if with_pct else "") + "; lower is better; best per column in bold.")
    extra = hyperparameter_note(rows, per_dataset)
    notes += (" " + extra) if extra else ""
    align = ("l" if with_regime else "") + "ll" + "r" * len(environments)
    return booktabs_table(header, body, align, f"{caption} {regime_sentence(rows)}", label, notes, resize=len(environments) > 1)


def _group(row: dict) -> str:
    """The config label of a row without its grid point (``hare_heads@n_heads=2`` -> ``hare_heads``): what the
    table names it by, so that two entries of one registered policy keep their own names."""
    return row["policy"].partition("@")[0]


def sensitivity_table_tex(rows: list[dict], caption: str, label: str) -> str:
    """One row per (environment, policy point): its hyperparameters, regret and mean reward; best point per policy in bold."""
    best = {}
    for r in rows:
        key = (r["environment"], r["regime"], r["n_logged"], _group(r))
        best[key] = min(best.get(key, float("inf")), r["mean"])
    body = []
    for r in rows:
        text = _spread(r, with_pct=False)
        bold = np.isclose(r["mean"], best[(r["environment"], r["regime"], r["n_logged"], _group(r))])
        names = [escape(display_name(r["environment"])), escape(display_name(_group(r))), _params_text(r)]
        body.append([*names, rf"\textbf{{{text}}}" if bold else text, format_number(r["mean_reward"] / r["horizon"], 3)])
    n = rows[0]["n_runs"] if rows else 0
    notes = f"Total pseudo-regret, {SPREAD_NOTE}, $n={n}$; mean reward per round; best point of each policy in bold."
    notes += (" " + hyperparameter_note(rows)) if any(tied(r) for r in rows) else ""
    header, align, body = _with_regime(rows, ["Environment", "Policy", "Hyperparameters", "Regret", "Mean reward"], "lllrr", body)
    return booktabs_table(header, body, align, f"{caption} {regime_sentence(rows)}", label, notes, resize=True)


def scaling_table_tex(rows: list[dict], caption: str, label: str) -> str:
    """Runtime and reward per policy point: wall time per round, total reward and regret."""
    body = []
    for r in rows:
        per_round_ms = 1000.0 * r["wall_time_s"] / r["horizon"]
        names = [escape(display_name(r["environment"])), escape(display_name(_group(r))), _params_text(r)]
        body.append([*names, format_number(per_round_ms, 2), format_number(r["mean_reward"]), _spread(r, with_pct=False)])
    notes = f"Wall time per round for all $n$ runs batched on {escape(rows[0]['device']) if rows else '--'}; total reward and regret {SPREAD_NOTE}."
    notes += (" " + hyperparameter_note(rows)) if any(tied(r) for r in rows) else ""
    header, align, body = _with_regime(rows, ["Environment", "Policy", "Hyperparameters", "ms/round", "Reward", "Regret"], "lllrrr", body)
    return booktabs_table(header, body, align, f"{caption} {regime_sentence(rows)}", label, notes, resize=True)


def compute_table_tex(rows: list[dict], caption: str, label: str) -> str:
    """Compute per experiment and device: jobs, summed wall time, largest peak memory (NeurIPS checklist)."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in rows:
        groups[(r["experiment"], r["device"])].append(r)
    ordered = sorted(groups.items())
    body = [[escape(exp), escape(dev), str(len(g)), format_number(sum(r["wall_time_s"] for r in g), 1), format_number(max(r["peak_rss_mb"] for r in g), 0)] for (exp, dev), g in ordered]
    header, align = ["Experiment", "Device", "Jobs", "Wall time (s)", "Peak RSS (MB)"], "llrrr"
    if len(_regimes(rows)) > 1:
        header, align = ["Regime", *header], "l" + align
        body = [[", ".join(_regime_cell(reg, m, rows) for reg, m in _regimes(g)), *line] for (_, g), line in zip(ordered, body, strict=True)]
    total = sum(r["wall_time_s"] for r in rows)
    body.append([*([""] if len(header) == 6 else []), r"\textbf{total}", "", str(len(rows)), format_number(total, 1), ""])
    notes = "Simulation wall time summed over jobs (process start, data loading and the workflow's other rules excluded); peak resident memory of the largest job."
    return booktabs_table(header, body, align, f"{caption} {regime_sentence(rows)}", label, notes)


PROTOCOL_NAMES = {"reference": "reference (ordinal, unit rows)", "project": "one-hot, standardised, unit rows"}
"""How each preparation protocol is named in the published table (``hare.data.prepare``)."""


def published_rows(rows: list[dict], published_csv: str | Path) -> list[dict]:
    """Our rows beside the numbers a publication quotes (CSV: policy, environment, mean, std, n_runs, horizon, source).

    A published row is matched by policy and dataset (``environment`` in the CSV names the dataset). Every protocol
    we ran is listed: the reference preparation is the published protocol; a project-preparation row of the same
    policy shows what the preparation alone moves. ``comparable`` is true only when the preparation is the
    reference one and the horizon and run count equal the published ones; no difference is computed.
    """
    with open(published_csv, newline="") as handle:
        published = {(p["policy"], p["environment"]): p for p in csv.DictReader(handle)}
    out = []
    for mine in rows:
        p = published.get((mine["policy_name"], mine.get("dataset") or mine["environment"]))
        if p is None:
            continue
        horizon, n_runs = int(p["horizon"]), int(p["n_runs"])
        comparable = mine.get("preparation") == "reference" and mine["horizon"] == horizon and mine["n_runs"] == n_runs
        out.append({**mine, "published_mean": float(p["mean"]), "published_std": float(p["std"]), "published_n_runs": n_runs,
                    "published_horizon": horizon, "source": p["source"], "comparable": comparable})
    return sorted(out, key=lambda r: (r["dataset"] or r["environment"], r["policy_name"], r.get("preparation") != "reference"))


def published_table_tex(rows: list[dict], caption: str, label: str) -> str:
    """Policy, dataset, our protocol with T and n, our mean +- std, the published mean +- std with its T and n, and
    whether the two sides are comparable (same protocol, horizon and run count); no difference column."""
    marks = _fixed_marks(rows)
    body = [
        [
            escape(display_name(r["policy_name"])),
            escape(display_name(r["dataset"] or r["environment"])),
            _choice_cell([r], marks)[0],
            f"{escape(PROTOCOL_NAMES.get(r.get('preparation') or 'project', r.get('preparation') or ''))}, $T={r['horizon']}$, $n={r['n_runs']}$",
            f"{_spread(r, False)}" + (TIE_MARK if tied(r) else ""),
            f"{format_number(r['published_mean'])} $\\pm$ {format_number(r['published_std'])} ($T={r['published_horizon']}$, $n={r['published_n_runs']}$)",
            "yes" if r["comparable"] else "no",
        ]
        for r in rows
    ]
    notes = (
        "Published numbers as quoted by the source (LNUCB-TA, Table 2, which follows the NeuralTS protocol: shuffled rows, "
        "unit-norm features, one pass). A row is comparable when it follows the reference preparation at the published horizon "
        "and run count; its claim in the register asks that our mean lie within two published standard deviations of the "
        "published mean. Rows with the project preparation show what the preparation alone changes."
    )
    extra = hyperparameter_note(rows)
    notes += (" " + extra) if extra else ""
    header, align, body = _with_regime(rows, ["Policy", "Dataset", "Hyperparameters", "Our protocol", "This artifact", "Published", "Comparable"], "llllrrl", body)
    return booktabs_table(header, body, align, f"{caption} {regime_sentence(rows)}", label, notes, resize=True)


def write_table(
    kind: str, run_files: Iterable[str | Path], csv_path: str | Path, tex_path: str | Path, caption: str, label: str,
    policies: list[str] | None = None, published_csv: str | Path | None = None,
) -> list[dict]:
    """Build the table of ``kind`` from run files (of one experiment or several); ``policies`` keeps only those config names.

    The caption written to the ``.tex`` is ``caption`` (plain text from the config, TeX specials escaped) followed by
    the regime sentence of the runs (:func:`regime_sentence`).
    """
    if kind not in TABLE_KINDS:
        raise ValueError(f"table kind must be one of {TABLE_KINDS}, got {kind!r}")
    caption = escape(caption)
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
        sentence = regime_sentence(rows)
        rows = published_rows(rows, published_csv)
        fields = FIELDS + ("dataset", "preparation", "published_mean", "published_std", "published_n_runs", "published_horizon", "comparable", "source")
        tex = published_table_tex(rows, caption, label) if rows else booktabs_table(["Policy"], [["no published counterpart in this configuration"]], "l", f"{caption} {sentence}", label)
    write_text(csv_path, rows_to_csv(rows, fields))
    write_text(tex_path, tex)
    return rows
