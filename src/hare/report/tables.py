"""The results tables of the paper (booktabs LaTeX), from the summary rows of the run files.

Every table states what its numbers are: total pseudo-regret (or reward) of the reported runs, mean ± standard
deviation over runs (ddof = 1), with the run count; its caption ends with the information regime of its runs
(:func:`hare.report.table_cells.regime_sentence`), and a Hyperparameters column or note says how each row's values
were set (chosen on tuning runs, fixed by the config, or set). A row is a dict of
:func:`hare.experiments.tables.aggregate.summarise_run`; :func:`table_tex` is the entry point by table kind.
"""

from __future__ import annotations

import os
from collections import defaultdict

import numpy as np

from hare.io import write_text
from hare.report.latex import booktabs_table, escape, format_number
from hare.report.names import display_name, with_symbols
from hare.report.reproduction import Readings, reproduction_table_tex, reproduction_text
from hare.report.table_cells import (
    SPREAD_NOTE,
    TIE_MARK,
    choice_cell,
    fixed_marks,
    hyperparameter_note,
    params_text,
    regime_cell,
    regime_sentence,
    regimes,
    spread,
    tied,
    with_regime,
)

PROTOCOL_NAMES = {
    "reference": "reference (ordinal, raw, unit rows)",
    "onehot": "reference rows, one-hot, raw, unit rows",
    "standardised": "reference rows, ordinal, standardised, unit rows",
    "minmax": "reference rows, ordinal, min-max, unit rows",
    "onehot_standardised": "reference rows, one-hot, standardised, unit rows",
    "onehot_minmax": "reference rows, one-hot, min-max, unit rows",
    "project": "project rows, one-hot, standardised, unit rows",
}
"""How each preparation protocol is named in the published table (``hare.data.prepare``)."""


def _header_runs(rows: list[dict], key: str) -> str:
    return "/".join(str(v) for v in sorted({r[key] for r in rows}))


def regret_table_tex(rows: list[dict], caption: str, label: str, with_pct: bool = True) -> str:
    """Policies as rows (grouped by regime when the runs come from both), environments as columns, total regret
    ``mean ± std (std/mean %)``; best mean per column in bold; the hyperparameters each row used (chosen, fixed or
    set) in a column, a dagger on a cell whose selection had ties; the caption ends with the regime sentence."""
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
    several = len(regimes(rows)) > 1
    best = {env: min(r["mean"] for r in rows if r["environment"] == env) for env in environments}
    marks = fixed_marks([cell[(*key, env)] for key in keys for env in environments if (*key, env) in cell])
    body: list[list[str]] = []
    per_dataset = False
    previous = keys[0][:2]
    for key in keys:
        cells = [cell.get((*key, env)) for env in environments]
        if key[:2] != previous:
            body.append([])
            previous = key[:2]
        choice, differs = choice_cell(cells, marks)
        per_dataset = per_dataset or differs
        line = ([regime_cell(key[0], key[1], rows)] if several else []) + [escape(display_name(key[2])), choice]
        for r in cells:
            if r is None:
                line.append("--")
                continue
            text = spread(r, with_pct)
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
        *(["Regime"] if several else []),
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
    align = ("l" if several else "") + "ll" + "r" * len(environments)
    return booktabs_table(
        header, body, align, f"{caption} {regime_sentence(rows)}", label, notes, resize=len(environments) > 1
    )


def _group(row: dict) -> str:
    """The config label of a row without its grid point (``hare_heads@n_heads=2`` -> ``hare_heads``): what the
    table names it by, so that two entries of one registered policy keep their own names."""
    return row["policy"].partition("@")[0]


def sensitivity_table_tex(rows: list[dict], caption: str, label: str) -> str:
    """One row per (environment, policy point): its hyperparameters, regret and mean reward; best point per policy
    in bold."""
    best = {}
    for r in rows:
        key = (r["environment"], r["regime"], r["n_logged"], _group(r))
        best[key] = min(best.get(key, float("inf")), r["mean"])
    body = []
    for r in rows:
        text = spread(r, with_pct=False)
        bold = np.isclose(r["mean"], best[(r["environment"], r["regime"], r["n_logged"], _group(r))])
        names = [escape(display_name(r["environment"])), escape(display_name(_group(r))), params_text(r)]
        body.append(
            [*names, rf"\textbf{{{text}}}" if bold else text, format_number(r["mean_reward"] / r["horizon"], 3)]
        )
    n = rows[0]["n_runs"] if rows else 0
    notes = f"Total pseudo-regret, {SPREAD_NOTE}, $n={n}$; mean reward per round; best point of each policy in bold."
    notes += (" " + hyperparameter_note(rows)) if any(tied(r) for r in rows) else ""
    header, align, body = with_regime(
        rows, ["Environment", "Policy", "Hyperparameters", "Regret", "Mean reward"], "lllrr", body
    )
    return booktabs_table(header, body, align, f"{caption} {regime_sentence(rows)}", label, notes, resize=True)


def scaling_table_tex(rows: list[dict], caption: str, label: str) -> str:
    """Runtime and reward per policy point: wall time per round, total reward and regret."""
    body = []
    for r in rows:
        per_round_ms = 1000.0 * r["wall_time_s"] / r["horizon"]
        names = [escape(display_name(r["environment"])), escape(display_name(_group(r))), params_text(r)]
        body.append(
            [*names, format_number(per_round_ms, 2), format_number(r["mean_reward"]), spread(r, with_pct=False)]
        )
    device = escape(rows[0]["device"]) if rows else "--"
    notes = f"Wall time per round for all $n$ runs batched on {device}; total reward and regret {SPREAD_NOTE}."
    notes += (" " + hyperparameter_note(rows)) if any(tied(r) for r in rows) else ""
    header, align, body = with_regime(
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
    if len(regimes(rows)) > 1:
        header, align = ["Regime", *header], "l" + align
        body = [
            [", ".join(regime_cell(reg, m, rows) for reg, m in regimes(g)), *line]
            for (_, g), line in zip(ordered, body, strict=True)
        ]
    total = sum(r["wall_time_s"] for r in rows)
    body.append(
        [*([""] if len(header) == 6 else []), r"\textbf{total}", "", str(len(rows)), format_number(total, 1), ""]
    )
    notes = (
        "Simulation wall time summed over jobs (process start, data loading and the workflow's other rules "
        "excluded); peak resident memory of the largest job."
    )
    return booktabs_table(header, body, align, f"{caption} {regime_sentence(rows)}", label, notes)


def replay_table_tex(rows: list[dict], caption: str, label: str) -> str:
    """Replay evaluation on logged data: accepted rounds, cumulative and per-round reward, off-policy estimates,
    time."""
    body = []
    for r in rows:
        body.append(
            [
                escape(display_name(r["policy_name"])),
                params_text(r),
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
        f"Replay evaluation (Li et al.\\ 2011) over $n={n}$ runs, each streaming the logged rows in its own order: "
        "accepted rounds, clicks on accepted rounds and clicks per accepted round (mean $\\pm$ std over runs), "
        "off-policy estimates of the final greedy policy's click rate (IPW, doubly robust), and wall time of all "
        "runs batched (s)."
    )
    notes += (" " + hyperparameter_note(rows)) if any(tied(r) for r in rows) else ""
    header, align, body = with_regime(
        rows,
        ["Policy", "Hyperparameters", "Accepted", "Clicks", "Click rate", "IPW", "DR", "Time (s)"],
        "llrrrrrr",
        body,
    )
    return booktabs_table(header, body, align, f"{caption} {regime_sentence(rows)}", label, notes, resize=True)


PUBLISHED_VERDICTS = {
    "within 2 sd": r"within 2$\sigma$",
    "outside 2 sd": r"outside 2$\sigma$",
    "overlaps": "overlaps",
    "not comparable": "not comparable",
    "no interval": "no interval ($n<2$)",
}
"""A published-table row's verdict code as the table prints it."""


def published_table_tex(rows: list[dict], caption: str, label: str) -> str:
    """Policy, dataset, our protocol with T and n, our mean +- std, the published mean +- std with its T and n, and
    the verdict of the claims' rule (our 95% interval within two published standard deviations, at the published
    horizon under a preparation of the reference's rows; our run count is ours). ``rows``:
    :func:`hare.experiments.tables.reproduction.published_rows`."""
    marks = fixed_marks(rows)
    body = [
        [
            escape(display_name(r["policy_name"])),
            escape(display_name(r["dataset"] or r["environment"])),
            choice_cell([r], marks)[0],
            f"{escape(PROTOCOL_NAMES.get(r.get('preparation') or 'project', r.get('preparation') or ''))}, "
            f"$T={r['horizon']}$, $n={r['n_runs']}$",
            f"{spread(r, False)}" + (TIE_MARK if tied(r) else ""),
            f"{format_number(r['published_mean'])} $\\pm$ {format_number(r['published_std'])} "
            f"($T={r['published_horizon']}$, $n={r['published_n_runs']}$)",
            PUBLISHED_VERDICTS.get(r.get("verdict", ""), escape(str(r.get("verdict", "")))),
        ]
        for r in rows
    ]
    notes = (
        "Published numbers as quoted by the source (LNUCB-TA, Table 2, which follows the NeuralTS protocol: shuffled "
        "rows, unit-norm features, one pass). A row is comparable when it plays the reference's rows (under the "
        "reference preparation or a departure from it) at the published horizon: within 2$\\sigma$ when the 95\\% "
        "interval of our mean lies within two published standard deviations of the published mean, outside when "
        "wholly outside, overlaps otherwise (the rule of the claims register); our run count is ours, the interval "
        "carries it. Rows with the project preparation show what this project's preparation changes."
    )
    extra = hyperparameter_note(rows)
    notes += (" " + extra) if extra else ""
    header, align, body = with_regime(
        rows,
        ["Policy", "Dataset", "Hyperparameters", "Our protocol", "This artifact", "Published", "Verdict"],
        "llllrrl",
        body,
    )
    return booktabs_table(header, body, align, f"{caption} {regime_sentence(rows)}", label, notes, resize=True)


def empty_table_tex(column: str, message: str, caption: str, label: str) -> str:
    """A one-cell table saying why a table has no row (``caption`` already escaped, the regime sentence appended)."""
    return booktabs_table([column], [[message]], "l", caption, label)


RENDERERS = {
    "regret": regret_table_tex,
    "sensitivity": sensitivity_table_tex,
    "scaling": scaling_table_tex,
    "compute": compute_table_tex,
    "replay": replay_table_tex,
}
"""The table kinds rendered from the summary rows alone (``published`` and ``reproduction`` add their own)."""


def table_tex(kind: str, rows: list[dict], caption: str, label: str, regime: str = "") -> str:
    """The LaTeX of a table of ``kind`` (a key of :data:`RENDERERS`, or ``published``) from its rows; ``caption`` is
    plain text (TeX specials escaped here). A published table without a row says so, its caption ending with
    ``regime`` (the regime sentence of the runs before matching)."""
    caption = with_symbols(caption)
    if kind == "published":
        if not rows:
            message = "no published counterpart in this configuration"
            return empty_table_tex("Policy", message, f"{caption} {regime}", label)
        return published_table_tex(rows, caption, label)
    return RENDERERS[kind](rows, caption, label)


def write_table_tex(
    path: str | os.PathLike,
    kind: str,
    rows: list[dict],
    caption: str,
    label: str,
    regime: str = "",
    readings: Readings | None = None,
    text_path: str | os.PathLike | None = None,
    comparison: list[dict] | None = None,
) -> None:
    """Write the LaTeX of a table of ``kind`` to ``path``, atomically: :func:`table_tex`, or for the reproduction
    table (``readings`` required) :func:`hare.report.reproduction.reproduction_table_tex` and, with ``text_path``,
    its per-dataset paragraphs (:func:`hare.report.reproduction.reproduction_text`, with ``comparison``: Table 2's
    comparison restated)."""
    if kind == "reproduction":
        if readings is None:
            raise ValueError("a reproduction table needs its readings")
        tex = reproduction_table_tex(rows, readings, caption, label, regime)
        if text_path is not None:
            write_text(text_path, reproduction_text(rows, readings, comparison or []))
    else:
        tex = table_tex(kind, rows, caption, label, regime)
    write_text(path, tex)
