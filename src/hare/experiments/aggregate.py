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

The reproduction table (kind ``reproduction``, :func:`reproduction_rows`) sets LNUCB-TA as written, the public code's
reading and each of its switches alone against LNUCB-TA's published row, with the claims' verdict rule, and writes one
paragraph per dataset from the same numbers (:func:`reproduction_text`).

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
from typing import NamedTuple

import numpy as np

from hare.io import read_npz, write_text
from hare.report.latex import booktabs_table, escape, format_number
from hare.report.names import display_name, parameter_symbol
from hare.statistics import t_interval

FIELDS = (
    "experiment",
    "environment",
    "policy",
    "policy_name",
    "params",
    "n_runs",
    "horizon",
    "mean",
    "std",
    "std_over_mean_pct",
    "mean_reward",
    "regime",
    "n_logged",
    "choice",
    "chosen",
    "tuned_grid",
    "selected_from",
    "ties",
    "fixed",
)
"""CSV columns. ``choice``: ``tuned`` (chosen on tuning runs), ``fixed`` (kept by the config, reason in ``fixed``),
``set`` (not tuned: an experiment without tuning) or ``none`` (no tunable hyperparameter); ``chosen``: JSON of the
values of the tuned (or tunable) hyperparameters; ``ties``: JSON list of the tuning labels tied with the chosen one
(empty without a tie)."""
TIMING_FIELDS = ("wall_time_s", "peak_rss_mb", "device")
"""Measured, not reproducible bit for bit: only the compute, scaling and replay tables carry them."""
TABLE_KINDS = ("regret", "sensitivity", "scaling", "compute", "published", "replay", "reproduction")
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
            "choice": "tuned",
            "chosen": json.dumps({k: job["params"].get(k) for k in sorted(grid)}, sort_keys=True),
            "tuned_grid": json.dumps(grid, sort_keys=True),
            "selected_from": job.get("selected_from", ""),
            "ties": json.dumps(ties if len(ties) > 1 else []),
            "fixed": "",
        }
    if tunable is None:
        names = _tunable(job["policy"])
        tunable, has_tunable = _set_values(job["policy"], job["params"], names), bool(names)
    else:
        has_tunable = bool(tunable)
    choice = "fixed" if "fixed" in job else "set" if has_tunable else "none"
    return {
        "choice": choice,
        "chosen": json.dumps(tunable, sort_keys=True),
        "tuned_grid": "",
        "selected_from": "",
        "ties": json.dumps([]),
        "fixed": job.get("fixed", ""),
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
        "run_file": str(npz_path),
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


def _with_regime(
    rows: list[dict], header: list[str], align: str, body: list[list[str]]
) -> tuple[list[str], str, list[list[str]]]:
    """A Regime column in front when the rows (one per body line) come from more than one regime."""
    if len(_regimes(rows)) < 2:
        return header, align, body
    return (
        ["Regime", *header],
        "l" + align,
        [[_regime_cell(r["regime"], r["n_logged"], rows), *line] for r, line in zip(rows, body, strict=True)],
    )


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
        sizes = sorted(
            {math.prod(len(v) for v in json.loads(r["tuned_grid"]).values()) for r in rows if r["choice"] == "tuned"}
        )
        budget = (
            f"every tuned policy searched the same {sizes[0]} grid points"
            if len(sizes) == 1
            else f"grids of {', '.join(map(str, sizes[:-1]))} and {sizes[-1]} points"
        )
        notes.append(
            f"Hyperparameters: the values chosen on tuning runs with disjoint seeds (lowest mean total regret; {budget})"
            + ("; values separated by / are per dataset, in column order" if per_dataset else "")
        )
    elif per_dataset:
        notes.append("Hyperparameters separated by / are per dataset, in column order")
    marks = _fixed_marks(rows)
    if marks:
        notes.append(
            "fixed: not tuned, kept at the configured value ("
            + "; ".join(f"$^{{{mark}}}$ {escape(reason)}" for reason, mark in marks.items())
            + ")"
        )
    if "set" in choices:
        notes.append("set: not tuned in this experiment, the configured value")
    if any(tied(r) for r in rows):
        notes.append(
            f"{TIE_MARK}: grid points tied on the tuning runs; the first in sorted label order was taken (the CSV lists the tied points)"
        )
    return "; ".join(notes) + ("." if notes else "")


def replay_table_tex(rows: list[dict], caption: str, label: str) -> str:
    """Replay evaluation on logged data: accepted rounds, cumulative and per-round reward, off-policy estimates, time."""
    body = []
    for r in rows:
        body.append(
            [
                escape(display_name(r["policy_name"])),
                _params_text(r),
                format_number(r["accepted"], 1),
                f"{format_number(r['mean_reward'], 2)} $\\pm$ {format_number(r['std_reward'], 2)}",
                f"{format_number(r['reward_per_accepted'], 4)} $\\pm$ {format_number(r['reward_per_accepted_std'], 4)}",
                format_number(r["ope_ipw"], 4),
                format_number(r["ope_dr"], 4),
                format_number(r["wall_time_s"], 1),
            ]
        )
    n = rows[0]["n_runs"] if rows else 0
    notes = (
        f"Replay evaluation (Li et al.\\ 2011) over $n={n}$ runs, each streaming the logged rows in its own order: accepted rounds, "
        "clicks on accepted rounds and clicks per accepted round (mean $\\pm$ std over runs), off-policy estimates of the final greedy policy's "
        "click rate (IPW, doubly robust), and wall time of all runs batched (s)."
    )
    notes += (" " + hyperparameter_note(rows)) if any(tied(r) for r in rows) else ""
    header, align, body = _with_regime(
        rows,
        ["Policy", "Hyperparameters", "Accepted", "Clicks", "Click rate", "IPW", "DR", "Time (s)"],
        "llrrrrrr",
        body,
    )
    return booktabs_table(header, body, align, f"{caption} {regime_sentence(rows)}", label, notes, resize=True)


def summarise_runs(run_files: Iterable[str | Path]) -> list[dict]:
    """Rows of every run file; the warm runs of one (experiment, environment) must record the same warm start."""
    rows = sorted(
        (summarise_run(p) for p in run_files), key=lambda r: (r["environment"], r["regime"], r["n_logged"], r["policy"])
    )
    check_same_warm_start(rows)
    return rows


def check_same_warm_start(rows: list[dict]) -> None:
    """``ValueError`` naming the experiment, environment and policies when the warm runs of one (experiment,
    environment) were fed different logs (their sidecars' ``warm_start_digest`` differ)."""
    digests: dict[tuple[str, str], dict[str, list[str]]] = {}
    for r in rows:
        if r["regime"] == "warm":
            digests.setdefault((r["experiment"], r["environment"]), {}).setdefault(
                str(r.get("warm_start_digest")), []
            ).append(r["policy"])
    for (experiment, environment), by_digest in digests.items():
        if len(by_digest) > 1:
            detail = "; ".join(
                f"{digest}: {', '.join(sorted(policies))}" for digest, policies in sorted(by_digest.items())
            )
            raise ValueError(
                f"experiment {experiment!r}, environment {environment!r}: the warm runs were fed different logs ({detail})"
            )


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
            raise ValueError(
                f"table {label!r}: two runs of {r['policy']!r} on {r['environment']!r} in the {r['regime']} regime "
                f"(experiments {cell[key]['experiment']!r} and {r['experiment']!r}); a row holds one run per dataset"
            )
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
    sizes = {
        env: f"$T={_header_runs(by_env[env], 'horizon')}$, $n={_header_runs(by_env[env], 'n_runs')}$"
        for env in environments
    }
    shared = len(set(sizes.values())) == 1
    header = [
        *(["Regime"] if with_regime else []),
        "Policy",
        "Hyperparameters",
        *(
            escape(display_name(env))
            if shared
            else rf"\begin{{tabular}}[b]{{@{{}}c@{{}}}}{escape(display_name(env))}\\ {sizes[env]}\end{{tabular}}"
            for env in environments
        ),
    ]
    notes = (
        "Total pseudo-regret"
        + (f" ({sizes[environments[0]]} for every dataset)" if shared else "")
        + f", {SPREAD_NOTE}"
        + (" and std/mean in \\%" if with_pct else "")
        + "; lower is better; best per column in bold."
    )
    extra = hyperparameter_note(rows, per_dataset)
    notes += (" " + extra) if extra else ""
    align = ("l" if with_regime else "") + "ll" + "r" * len(environments)
    return booktabs_table(
        header, body, align, f"{caption} {regime_sentence(rows)}", label, notes, resize=len(environments) > 1
    )


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
        body.append(
            [*names, rf"\textbf{{{text}}}" if bold else text, format_number(r["mean_reward"] / r["horizon"], 3)]
        )
    n = rows[0]["n_runs"] if rows else 0
    notes = f"Total pseudo-regret, {SPREAD_NOTE}, $n={n}$; mean reward per round; best point of each policy in bold."
    notes += (" " + hyperparameter_note(rows)) if any(tied(r) for r in rows) else ""
    header, align, body = _with_regime(
        rows, ["Environment", "Policy", "Hyperparameters", "Regret", "Mean reward"], "lllrr", body
    )
    return booktabs_table(header, body, align, f"{caption} {regime_sentence(rows)}", label, notes, resize=True)


def scaling_table_tex(rows: list[dict], caption: str, label: str) -> str:
    """Runtime and reward per policy point: wall time per round, total reward and regret."""
    body = []
    for r in rows:
        per_round_ms = 1000.0 * r["wall_time_s"] / r["horizon"]
        names = [escape(display_name(r["environment"])), escape(display_name(_group(r))), _params_text(r)]
        body.append(
            [*names, format_number(per_round_ms, 2), format_number(r["mean_reward"]), _spread(r, with_pct=False)]
        )
    notes = f"Wall time per round for all $n$ runs batched on {escape(rows[0]['device']) if rows else '--'}; total reward and regret {SPREAD_NOTE}."
    notes += (" " + hyperparameter_note(rows)) if any(tied(r) for r in rows) else ""
    header, align, body = _with_regime(
        rows, ["Environment", "Policy", "Hyperparameters", "ms/round", "Reward", "Regret"], "lllrrr", body
    )
    return booktabs_table(header, body, align, f"{caption} {regime_sentence(rows)}", label, notes, resize=True)


def compute_table_tex(rows: list[dict], caption: str, label: str) -> str:
    """Compute per experiment and device: jobs, summed wall time, largest peak memory (NeurIPS checklist)."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in rows:
        groups[(r["experiment"], r["device"])].append(r)
    ordered = sorted(groups.items())
    body = [
        [
            escape(exp),
            escape(dev),
            str(len(g)),
            format_number(sum(r["wall_time_s"] for r in g), 1),
            format_number(max(r["peak_rss_mb"] for r in g), 0),
        ]
        for (exp, dev), g in ordered
    ]
    header, align = ["Experiment", "Device", "Jobs", "Wall time (s)", "Peak RSS (MB)"], "llrrr"
    if len(_regimes(rows)) > 1:
        header, align = ["Regime", *header], "l" + align
        body = [
            [", ".join(_regime_cell(reg, m, rows) for reg, m in _regimes(g)), *line]
            for (_, g), line in zip(ordered, body, strict=True)
        ]
    total = sum(r["wall_time_s"] for r in rows)
    body.append(
        [*([""] if len(header) == 6 else []), r"\textbf{total}", "", str(len(rows)), format_number(total, 1), ""]
    )
    notes = "Simulation wall time summed over jobs (process start, data loading and the workflow's other rules excluded); peak resident memory of the largest job."
    return booktabs_table(header, body, align, f"{caption} {regime_sentence(rows)}", label, notes)


PROTOCOL_NAMES = {"reference": "reference (ordinal, unit rows)", "project": "one-hot, standardised, unit rows"}
"""How each preparation protocol is named in the published table (``hare.data.prepare``)."""


def read_published(published_csv: str | Path) -> dict[tuple[str, str], dict]:
    """The rows of a CSV of published numbers (policy, environment, mean, std, n_runs, horizon, source), by
    ``(policy, dataset)`` (``environment`` in the CSV names the dataset)."""
    with open(published_csv, newline="") as handle:
        return {(p["policy"], p["environment"]): p for p in csv.DictReader(handle)}


def published_rows(rows: list[dict], published_csv: str | Path) -> list[dict]:
    """Our rows beside the numbers a publication quotes (CSV: policy, environment, mean, std, n_runs, horizon, source).

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
    header, align, body = _with_regime(
        rows,
        ["Policy", "Dataset", "Hyperparameters", "Our protocol", "This artifact", "Published", "Comparable"],
        "llllrrl",
        body,
    )
    return booktabs_table(header, body, align, f"{caption} {regime_sentence(rows)}", label, notes, resize=True)


class Reading(NamedTuple):
    """One reading of LNUCB-TA in the reproduction table: its label in the ``published`` experiment (the label the
    claims register reads), the switches it sets to the public code's value (docs/lnucb_ta_reading.md), and its
    name in LaTeX and in plain text."""

    label: str
    switches: tuple[str, ...]
    tex: str
    text: str


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
READINGS = (
    Reading("lnucb_ta", (), "as written", "as written"),
    Reading("lnucb_ta_public", SWITCHES, "public-code reading", "public-code reading"),
    Reading("lnucb_ta_distance_weights", ("knn_weights",), "distance weights", "distance weights"),
    Reading("lnucb_ta_all_rewards", ("global_mean",), "$g$ from all rewards", "g from all rewards"),
    Reading("lnucb_ta_floor_k", ("k_rounding",), "$k$ by floor", "k by floor"),
    Reading("lnucb_ta_uniform_theta", ("theta_init",), r"$\theta$ uniform at start", "theta uniform at start"),
)
"""The rows of the reproduction table, in order: the algorithm as written, the public code's reading (every switch),
then each switch alone."""
NOT_A_BANDIT = "not available to a bandit"
VERDICTS_TEX = {
    "within 2 sd": r"within 2$\sigma$",
    "outside 2 sd": r"outside 2$\sigma$",
    "overlaps": "overlaps",
    "no published row": "no published row",
    "no interval": "no interval ($n<2$)",
}
"""How each verdict code of the CSV reads in the table (``not comparable`` gains our T and n)."""
REPRODUCTION_RULE = (
    r"Verdicts follow the rule of the claims register: within 2$\sigma$ when the whole 95\% $t$ interval of our mean lies "
    r"within the published mean $\pm$ two published standard deviations, outside 2$\sigma$ when it lies wholly outside, "
    r"overlaps otherwise, and not comparable at another horizon $T$ or run count $n$ than the published ones."
)
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


def reading_name(reading: Reading, tex: bool = True) -> str:
    """The row label of a reading: ``as written``, ``public-code reading (all switches)``, ``<switch> alone``; the
    switch that reads the whole reward matrix is marked as not available to a bandit."""
    name = reading.tex if tex else reading.text
    if len(reading.switches) == len(SWITCHES):
        return f"{name} (all switches)"
    if len(reading.switches) == 1:
        return f"{name} alone" + (f" ({NOT_A_BANDIT})" if reading.switches[0] == PRIVILEGED_SWITCH else "")
    return name


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
        "reading": reading_name(reading, tex=False),
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
    """The lines of the reproduction table: per dataset (sorted) of the runs under the reference preparation, LNUCB-TA's
    published row (when the CSV has one), then the readings of :data:`READINGS` that were run, in that order. Each
    reading's mean comes with its 95% t interval over runs (:func:`hare.statistics.t_interval`, read from its
    run file), its difference from the published mean in published standard deviations and its verdict
    (:func:`reproduction_verdict`)."""
    published = read_published(published_csv)
    readings = {reading.label: reading for reading in READINGS}
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
            for reading in READINGS
            if (dataset, reading.label) in runs
        )
    return out


def _signed(value: float) -> str:
    """A signed number in math mode (``$+1.2$``, ``$-0.4$``, ``$0.0$``); ``--`` when undefined."""
    text = format_number(abs(value)) if math.isfinite(value) else "--"
    if text == "--" or text == format_number(0.0):
        return text if text == "--" else f"${text}$"
    return f"${'+' if value > 0 else '-'}{text}$"


def _scale(row: dict, published: bool = False) -> str:
    horizon, n_runs = (
        (row["published_horizon"], row["published_n_runs"]) if published else (row["horizon"], row["n_runs"])
    )
    return f"$T={format_number(horizon, 0)}$, $n={n_runs}$"


def _verdict_tex(row: dict) -> str:
    return f"not comparable ({_scale(row)})" if row["verdict"] == "not comparable" else VERDICTS_TEX[row["verdict"]]


def reproduction_table_tex(lines: list[dict], caption: str, label: str, regime: str = "") -> str:
    """Per dataset, LNUCB-TA's published mean ± std, then each reading's mean total regret with its 95% t interval,
    n and T, its difference from the published mean in published standard deviations and its verdict; the caption
    states the verdict rule (the claims') and ends with ``regime`` (:func:`regime_sentence` of the runs)."""
    readings = {reading.label: reading for reading in READINGS}
    body: list[list[str]] = []
    previous = None
    for r in lines:
        if previous is not None and r["dataset"] != previous:
            body.append([])
        dataset = escape(display_name(r["dataset"])) if r["dataset"] != previous else ""
        previous = r["dataset"]
        if r["role"] == "published":
            body.append(
                [
                    dataset,
                    "published (LNUCB-TA, Table~2)",
                    f"{format_number(r['mean'])} $\\pm$ {format_number(r['std'])}",
                    str(r["n_runs"]),
                    format_number(r["horizon"], 0),
                    "--",
                    "--",
                ]
            )
            continue
        body.append(
            [
                dataset,
                reading_name(readings[r["policy"]]),
                f"{format_number(r['mean'])} [{format_number(r['ci_low'])}, {format_number(r['ci_high'])}]",
                str(r["n_runs"]),
                format_number(r["horizon"], 0),
                _signed(r["sigma_difference"]) if r["comparable"] else "--",
                _verdict_tex(r),
            ]
        )
    notes = (
        "Total pseudo-regret under the reference preparation. Our rows: mean over $n$ independent runs of $T$ rounds with its "
        "95\\% Student $t$ interval; the published row: mean $\\pm$ standard deviation as LNUCB-TA's Table~2 quotes them. "
        "$\\Delta/\\sigma_{\\mathrm{pub}}$: (our mean $-$ published mean) / published standard deviation, at the published "
        "scale only (the CSV gives it at any scale). Every reading is "
        "tuned on $\\alpha_0$ over tuning runs with disjoint seeds, like LNUCB-TA as written; a switch alone departs from the "
        "algorithm as written in that one place, the public-code reading in all of them. $g$ from all rewards, and so the "
        "public-code reading, reads the environment's whole reward matrix: information a bandit does not have."
    )
    if any(r["verdict"] == "no published row" for r in lines):
        notes += " A dataset without a published LNUCB-TA row has no published row and no verdict."
    header = [
        "Dataset",
        "Reading",
        "Total regret [95\\% interval]",
        "$n$",
        "$T$",
        "$\\Delta/\\sigma_{\\mathrm{pub}}$",
        "Verdict",
    ]
    return booktabs_table(
        header, body, "llrrrrl", f"{caption} {REPRODUCTION_RULE} {regime}".rstrip(), label, notes, resize=True
    )


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"


def _move(delta: float, numbers: bool, sigma: float | None = None) -> tuple[str, str, str]:
    """``(verb, participle, amount)`` of a move of the mean by ``delta``: lowers/raises/leaves unchanged, and (with
    ``numbers``) `` by |delta|`` plus its size in published standard deviations when ``sigma`` is given."""
    if delta == 0:
        return "leaves unchanged", "leaving it unchanged", ""
    verb, participle = ("raises", "raising") if delta > 0 else ("lowers", "lowering")
    amount = f" by {format_number(abs(delta))}" if numbers else ""
    if numbers and sigma is not None and math.isfinite(sigma) and sigma > 0:
        amount += f" ({format_number(abs(delta) / sigma)} published standard deviations)"
    return verb, participle, amount


def _reading_subject(reading: Reading) -> str:
    """A reading as the paragraph names it: LNUCB-TA as written, the public-code reading, or the switch alone."""
    if not reading.switches:
        return "LNUCB-TA as written"
    return f"the {reading.tex}" if len(reading.switches) == len(SWITCHES) else reading_name(reading)


def _dataset_paragraph(lines: list[dict]) -> str:
    """About three sentences on one dataset's readings, from the numbers of its lines (see :func:`reproduction_text`)."""
    readings = {reading.label: reading for reading in READINGS}
    name = escape(display_name(lines[0]["dataset"]))
    published = next((r for r in lines if r["role"] == "published"), None)
    ours = {r["policy"]: r for r in lines if r["role"] == "ours"}
    written = ours.get(READINGS[0].label)
    comparable = published is not None and all(r["comparable"] for r in ours.values())
    numbers = published is None or comparable
    sigma = published["std"] if comparable else None
    sentences = []
    if published is None:
        sentences.append(
            f"On {name}, LNUCB-TA has no published row, so no reading gets a verdict"
            + (
                f"; as written it reaches a mean total regret of {format_number(written['mean'])} (95\\% interval "
                f"[{format_number(written['ci_low'])}, {format_number(written['ci_high'])}]; {_scale(written)})."
                if written
                else "."
            )
        )
    elif not comparable:
        scale = written or next(iter(ours.values()))
        sentences.append(
            f"On {name}, our runs ({_scale(scale)}) are not at the published scale ({_scale(scale, published=True)}): "
            "the verdicts need the published scale (\\texttt{config/paper.yaml}), so only the directions of the moves are reported."
        )
    elif written is not None:
        gap = written["mean"] - published["mean"]
        where = (
            "level with it"
            if _signed(written["sigma_difference"]) == f"${format_number(0.0)}$"
            else (
                f"{format_number(abs(written['sigma_difference']))} published standard deviations {'above' if gap > 0 else 'below'} it"
            )
        )
        sentences.append(
            f"On {name}, LNUCB-TA as written reaches a mean total regret of {format_number(written['mean'])} (95\\% interval "
            f"[{format_number(written['ci_low'])}, {format_number(written['ci_high'])}]) against the published "
            f"{format_number(published['mean'])} $\\pm$ {format_number(published['std'])}, {where}."
        )
    else:
        sentences.append(
            f"On {name}, LNUCB-TA as written was not run; the published mean is {format_number(published['mean'])} "
            f"$\\pm$ {format_number(published['std'])}."
        )
    if written is not None:
        clauses = []
        public = ours.get(READINGS[1].label)
        if public is not None:
            verb, _, amount = _move(public["mean"] - written["mean"], numbers, sigma)
            target = f" to {format_number(public['mean'])}" if numbers and verb != "leaves unchanged" else ""
            clauses.append(
                f"the public-code reading {verb} the mean total regret of LNUCB-TA as written{amount}{target}"
            )
        alone = [ours[r.label] for r in READINGS if len(r.switches) == 1 and r.label in ours]
        it = "it" if clauses else "the mean total regret of LNUCB-TA as written"
        if alone:
            most = max(alone, key=lambda r: abs(r["mean"] - written["mean"]))
            delta = most["mean"] - written["mean"]
            if delta == 0:
                clauses.append(f"no switch alone moves {it}")
            else:
                _, participle, amount = _move(delta, numbers, sigma)
                switch = readings[most["policy"]]
                mark = f" ({NOT_A_BANDIT})" if switch.switches == (PRIVILEGED_SWITCH,) else ""
                clauses.append(
                    f"of the switches alone, {switch.tex}{mark} moves {it} the most, {participle} it{amount}"
                )
        else:
            clauses.append(
                "no switch was run alone" if clauses else "neither the public-code reading nor a switch alone was run"
            )
        text = "; ".join(clauses)
        sentences.append(text[0].upper() + text[1:] + ".")
    if comparable:
        within = [_reading_subject(readings[r["policy"]]) for r in ours.values() if r["verdict"] == "within 2 sd"]
        if within:
            sentences.append(
                f"Of the readings, {_join(within)} {'reaches' if len(within) == 1 else 'reach'} the published mean "
                "within two published standard deviations."
            )
        else:
            overlapping = [_reading_subject(readings[r["policy"]]) for r in ours.values() if r["verdict"] == "overlaps"]
            note = (
                f" ({_join(overlapping)} {'overlaps' if len(overlapping) == 1 else 'overlap'} the band, undecided at this run count)"
                if overlapping
                else ""
            )
            sentences.append(
                "No reading reaches the published mean within two published standard deviations: the remaining gap is "
                f"unexplained{note}."
            )
    return " ".join(sentences)


def reproduction_text(lines: list[dict]) -> str:
    """One generated paragraph per dataset of the reproduction table, every number from its lines: LNUCB-TA as written
    against the published mean; how far the public-code reading moves it and in which direction; which switch alone
    moves it most; and which readings reach the published mean within two published standard deviations, or that none
    does and the gap is unexplained. Rows at another scale than the published one (not comparable) give the directions
    of the moves only, and say that the verdicts need the published scale."""
    head = "% Generated by `hare table --kind reproduction` from the run files; do not edit.\n"
    datasets = list(dict.fromkeys(r["dataset"] for r in lines))
    if not datasets:
        return head + "No reading of LNUCB-TA was run under the reference preparation in this configuration.\n"
    return head + "\n\n".join(_dataset_paragraph([r for r in lines if r["dataset"] == d]) for d in datasets) + "\n"


def write_table(
    kind: str,
    run_files: Iterable[str | Path],
    csv_path: str | Path,
    tex_path: str | Path,
    caption: str,
    label: str,
    policies: list[str] | None = None,
    published_csv: str | Path | None = None,
    text_path: str | Path | None = None,
) -> list[dict]:
    """Build the table of ``kind`` from run files (of one experiment or several); ``policies`` keeps only those config names.

    The caption written to the ``.tex`` is ``caption`` (plain text from the config, TeX specials escaped) followed by
    the regime sentence of the runs (:func:`regime_sentence`). A ``reproduction`` table (:func:`reproduction_rows`)
    also writes its generated paragraphs (:func:`reproduction_text`) to ``text_path`` when given; other kinds take none.
    """
    if kind not in TABLE_KINDS:
        raise ValueError(f"table kind must be one of {TABLE_KINDS}, got {kind!r}")
    if text_path is not None and kind != "reproduction":
        raise ValueError(f"only a reproduction table writes a text (--text), not a {kind} table")
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
        fields = (
            FIELDS
            + TIMING_FIELDS
            + (
                "std_reward",
                "accepted",
                "reward_per_accepted",
                "reward_per_accepted_std",
                "ope_ipw",
                "ope_snipw",
                "ope_dm",
                "ope_dr",
                "ope_ipw_se",
            )
        )
        tex = replay_table_tex(rows, caption, label)
    elif kind == "reproduction":
        if published_csv is None:
            raise ValueError("a reproduction table needs --published")
        sentence = regime_sentence(rows)
        rows = reproduction_rows(rows, published_csv)
        fields = REPRODUCTION_FIELDS
        tex = (
            reproduction_table_tex(rows, caption, label, sentence)
            if rows
            else booktabs_table(
                ["Reading"],
                [["no reading of LNUCB-TA under the reference preparation in this configuration"]],
                "l",
                f"{caption} {sentence}",
                label,
            )
        )
        if text_path is not None:
            write_text(text_path, reproduction_text(rows))
    else:
        if published_csv is None:
            raise ValueError("a published table needs --published")
        sentence = regime_sentence(rows)
        rows = published_rows(rows, published_csv)
        fields = FIELDS + (
            "dataset",
            "preparation",
            "published_mean",
            "published_std",
            "published_n_runs",
            "published_horizon",
            "comparable",
            "source",
        )
        tex = (
            published_table_tex(rows, caption, label)
            if rows
            else booktabs_table(
                ["Policy"], [["no published counterpart in this configuration"]], "l", f"{caption} {sentence}", label
            )
        )
    write_text(csv_path, rows_to_csv(rows, fields))
    write_text(tex_path, tex)
    return rows
