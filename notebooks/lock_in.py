# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # The lock-in of LNUCB-TA
#
# LNUCB-TA's exploration rate decays with every pull of an arm, so a run may stop exploring early and play a
# wrong arm almost every round: its total regret is then close to Random's. A run *locks in* when its total regret
# lies above 0.9 x Random's mean total regret on the same environment (the level of the `no_lock_in` family of the
# claims register, which fails a policy when more than 5% of its reported runs do).
#
# (a) Every reported run of LNUCB-TA as written (`lnucb_ta`) and of the public code's reading (`lnucb_ta_public`,
# docs/lnucb_ta_reading.md), one column group per dataset and experiment (`published`, `classification`), divided by
# Random's mean total regret of the same experiment and environment.
# (b) The share of runs that lock in against the exploration rate alpha_0: the reported runs of `exploration_sweep`
# (untuned; that experiment runs no Random, so the reference is Random of `classification` on the same dataset) and,
# where present, the tuning runs of the `published` experiment at each alpha_0 grid point of `lnucb_ta` and
# `lnucb_ta_public` (reference: Random's reported runs of `published` on the same environment).
#
# It also writes a JSON of the counts (per experiment, dataset and label) and the macros the paper's lock-in paragraph
# reads, among them, per dataset of LNUCB-TA's Table 2, the standard deviation that a single locked-in run among its
# published runs would imply at least: the sample standard deviation (ddof = 1) of n - 1 values at the published mean
# and one at the lock-in level, that level scaled from our horizon to the published one where they differ.
# Whatever is missing (a dataset, a policy, Random, the tuning runs) is skipped with a printed line.
# Reads only the files the workflow passes in; never re-runs an experiment.

# %% tags=["parameters"]
runs: list = []
figures: list = ["lock_in.pdf"]
outputs: dict = {"json": "lock_in.json", "macros": "lock_in_macros.tex"}
published_table: str = "paper/published/lnucb_ta_table2.csv"

# %%
import csv
from collections import defaultdict
from pathlib import Path

import numpy as np
from matplotlib.lines import Line2D

from hare.io import read_npz, run_files, write_json
from hare.report.latex import escape, format_number, macro_name
from hare.report.names import DISPLAY_NAMES, display_name
from hare.report.notebook_kit import Notes, write_macros
from hare.report.style import HIGHLIGHT_PALETTE, apply_style, distinct_colors, figure, save
from hare.theory.claims.expressions import zero_event_bound

apply_style()
LOCK_IN_FRACTION = 0.9
"""A run locks in above this fraction of Random's mean total regret (claims family ``no_lock_in``)."""
MAX_SHARE = 0.05
"""The ``no_lock_in`` claim fails a policy when more than this share of its reported runs lock in."""
LABELS = ["lnucb_ta", "lnucb_ta_public"]
"""LNUCB-TA as written and the public code's reading (docs/lnucb_ta_reading.md)."""
PANEL_EXPERIMENTS = ["published", "classification"]
SWEEP = "exploration_sweep"
GRID_PARAMETER = "alpha_0"
REFERENCE_EXPERIMENT = {"published": "published", "classification": "classification", SWEEP: "classification"}
"""Whose Random runs are the reference of each experiment's runs (the sweep runs no Random)."""
FALLBACK_NAMES = {"lnucb_ta_public": "LNUCB-TA (public code's reading)"}
say = Notes()


def name_of(label: str) -> str:
    base = label.partition("@")[0]
    return display_name(label) if base in DISPLAY_NAMES else FALLBACK_NAMES.get(base, label)


if not runs:
    say("no run files given: every panel is empty")

# %%
# One record per run file that this notebook reads: LNUCB-TA's labels, Random, and the alpha_0 grid points.
records = []
for path, sidecar in run_files(runs, say):
    job = sidecar["job"]
    base, _, point = job["label"].partition("@")
    if base not in (*LABELS, "random"):
        continue
    arrays = read_npz(path)
    if "total_regret" not in arrays:
        say(f"skipped {path}: no total_regret")
        continue
    records.append(
        {
            "path": str(path),
            "experiment": job["experiment"],
            "role": job.get("role", "report"),
            "environment": job["environment"]["name"],
            "dataset": job["environment"].get("dataset") or job["environment"]["name"],
            "preparation": job["environment"].get("preparation", "project"),
            "label": job["label"],
            "base": base,
            "point": point,
            "alpha_0": float(job["params"][GRID_PARAMETER])
            if point and GRID_PARAMETER in job.get("params", {})
            else None,
            "horizon": int(sidecar["horizon"]),
            "totals": np.asarray(arrays["total_regret"], dtype=np.float64),
        }
    )

randoms = {(r["experiment"], r["environment"]): r for r in records if r["base"] == "random" and r["role"] == "report"}


def reference(experiment: str, environment: str, dataset: str, horizon: int) -> dict | None:
    """Random's mean total regret for runs of ``experiment`` on ``environment`` at ``horizon``: Random's reported runs
    of the reference experiment on the same environment (else the only one on the same dataset), its mean scaled by
    ``horizon / its horizon`` where they differ (said once); ``None`` where there is none."""
    source = REFERENCE_EXPERIMENT[experiment]
    random = randoms.get((source, environment))
    if random is None:
        same = [r for (exp, _), r in randoms.items() if exp == source and r["dataset"] == dataset]
        random = same[0] if len(same) == 1 else None
    if random is None or random["totals"].mean() <= 0:
        return None
    scale = horizon / random["horizon"]
    if scale != 1.0:
        say(
            f"{experiment}/{environment}: Random of {source}/{random['environment']} "
            f"scaled from T={random['horizon']} to T={horizon}"
        )
    return {
        "experiment": source,
        "environment": random["environment"],
        "mean": float(random["totals"].mean()) * scale,
        "horizon": random["horizon"],
        "scaled_by": scale,
        "n_runs": int(random["totals"].size),
    }


def lock_in(totals: np.ndarray, random_mean: float) -> dict:
    """Runs, runs above the lock-in level (strictly, as the claim's ``share_above``) and their share."""
    level = LOCK_IN_FRACTION * random_mean
    above = int(np.sum(totals > level))
    return {
        "n_runs": int(totals.size),
        "level": level,
        "n_above": above,
        "share_above": above / totals.size,
        # The claim's limit: 5%, or the smallest share the runs can establish when that is larger (the exact bound
        # with no locked run, hare.theory.claims.expressions.zero_event_bound).
        "limit": max(MAX_SHARE, zero_event_bound(totals.size)),
        "fails_no_lock_in": above / totals.size > MAX_SHARE,
    }


# %%
# Every (experiment, source, dataset, label) the figure and the JSON report.
rows = []
skipped_references = set()
for record in sorted(records, key=lambda r: (r["experiment"], r["role"], r["dataset"], r["label"])):
    if record["base"] == "random":
        continue
    in_panel = record["role"] == "report" and record["experiment"] in PANEL_EXPERIMENTS and not record["point"]
    in_sweep = (
        record["role"] == "report"
        and record["experiment"] == SWEEP
        and record["base"] == "lnucb_ta"
        and record["alpha_0"] is not None
    )
    in_tuning = record["role"] == "tuning" and record["experiment"] == "published" and record["alpha_0"] is not None
    if not (in_panel or in_sweep or in_tuning):
        continue
    ref = reference(record["experiment"], record["environment"], record["dataset"], record["horizon"])
    if ref is None:
        key = (record["experiment"], record["environment"])
        if key not in skipped_references:
            say(
                f"skipped {record['experiment']}/{record['environment']}: "
                f"no Random runs of {REFERENCE_EXPERIMENT[record['experiment']]} there"
            )
            skipped_references.add(key)
        continue
    rows.append(
        {
            "experiment": record["experiment"],
            "source": "tuning" if in_tuning else "reported",
            "environment": record["environment"],
            "dataset": record["dataset"],
            "preparation": record["preparation"],
            "label": record["label"],
            "policy": record["base"],
            "alpha_0": record["alpha_0"],
            "horizon": record["horizon"],
            "reference": ref,
            **lock_in(record["totals"], ref["mean"]),
            "normalised": (record["totals"] / ref["mean"]).tolist(),
        }
    )

datasets_seen = sorted({r["dataset"] for r in records})
for experiment in (*PANEL_EXPERIMENTS, SWEEP):
    have = {r["dataset"] for r in rows if r["experiment"] == experiment and r["source"] == "reported"}
    if not have:
        say(f"skipped {experiment}: no runs of LNUCB-TA with a Random reference among the inputs")
    elif set(datasets_seen) - have:
        say(
            f"{experiment}: no runs of LNUCB-TA with a Random reference on "
            f"{', '.join(sorted(set(datasets_seen) - have))} (skipped)"
        )
if not any(r["source"] == "tuning" for r in rows):
    say(
        "no tuning runs of the published experiment among the inputs: "
        "panel (b) shows the exploration sweep's reported runs only"
    )

# %%
# The standard deviation one locked-in run would imply at least, beside LNUCB-TA's published one.
published = {}
if Path(published_table).is_file():
    with open(published_table, newline="") as table:
        published = {row["environment"]: row for row in csv.DictReader(table) if row["policy"] == "lnucb_ta"}
else:
    say(f"skipped the implied standard deviations: no published table {published_table}")


def one_lock_in_sample(mean: float, level: float, n: int) -> np.ndarray:
    """n - 1 runs at the published mean and one at the lock-in level."""
    sample = np.full(n, mean, dtype=np.float64)
    sample[-1] = level
    return sample


def implied(dataset: str) -> dict | None:
    """Published mean, std and run count of LNUCB-TA on ``dataset``, the lock-in level at the published horizon and the
    sample standard deviation (ddof = 1) of one locked-in run among the published runs; ``None`` without the inputs."""
    candidates = [
        r
        for r in rows
        if r["experiment"] == "published"
        and r["source"] == "reported"
        and r["label"] == "lnucb_ta"
        and r["dataset"] == dataset
    ]
    row = min(candidates, key=lambda r: (r["preparation"] != "reference", r["environment"]), default=None)
    if dataset not in published or row is None or int(published[dataset]["n_runs"]) < 2:
        return None
    pub = published[dataset]
    mean, std, n, horizon = float(pub["mean"]), float(pub["std"]), int(pub["n_runs"]), int(pub["horizon"])
    scale = horizon / row["horizon"]
    level = row["level"] * scale
    if scale != 1.0:
        say(
            f"published/{dataset}: lock-in level {row['level']:.1f} at our T={row['horizon']} "
            f"scaled to the published T={horizon}: {level:.1f}"
        )
    std_implied = float(one_lock_in_sample(mean, level, n).std(ddof=1))
    # The same run with the other n - 1 runs set so that the sample's mean is the published one: the least spread a
    # sample with the published mean and one run at the level can have (a little above std_implied).
    fixed_mean = one_lock_in_sample((n * mean - level) / (n - 1), level, n)
    return {
        "environment": row["environment"],
        "published_mean": mean,
        "published_std": std,
        "published_std_text": pub["std"],
        "published_n_runs": n,
        "published_horizon": horizon,
        "our_horizon": row["horizon"],
        "horizon_scale": scale,
        "level_at_published_horizon": level,
        "implied_std": std_implied,
        "implied_std_at_published_mean": float(fixed_mean.std(ddof=1)),
        "implied_std_at_our_n_runs": float(one_lock_in_sample(mean, level, row["n_runs"]).std(ddof=1))
        if row["n_runs"] > 1
        else None,
        "compatible": std >= std_implied,
    }


implied_std = {}
for dataset in sorted(published):
    result = implied(dataset)
    if result is None:
        say(
            f"skipped the implied standard deviation on {dataset}: "
            "no published-protocol runs of LNUCB-TA with a Random reference"
        )
        continue
    implied_std[dataset] = result
for row in rows:
    result = implied_std.get(row["dataset"])
    if (
        row["experiment"] == "published"
        and row["source"] == "reported"
        and row["label"] == "lnucb_ta"
        and result
        and result["environment"] == row["environment"]
    ):
        row["published"] = {key: value for key, value in result.items() if key != "environment"}

# %%
fig, axes = figure(n_cols=2, height_in=2.7)
axes[0, 0].get_gridspec().set_width_ratios([1.6, 1.0])
ax_runs, ax_share = axes[0, 0], axes[0, 1]
label_colors = distinct_colors(LABELS)
markers = {"lnucb_ta": "o", "lnucb_ta_public": "s"}

# (a) every run: one block of columns per experiment, one column group per dataset (and environment, where an
# experiment runs two of one dataset), LNUCB-TA as written left, the public code's reading right.
panel = [r for r in rows if r["experiment"] in PANEL_EXPERIMENTS and r["source"] == "reported"]
groups = sorted(
    {(r["experiment"], r["dataset"], r["environment"]) for r in panel},
    key=lambda g: (PANEL_EXPERIMENTS.index(g[0]), g[1], g[2]),
)
shared = {
    (e, d) for e, d, _ in groups if sum((e2, d2) == (e, d) for e2, d2, _ in groups) > 1
}  # two environments of one dataset
positions = {}
for group in groups:  # a gap of half a column between experiments
    previous = groups[groups.index(group) - 1] if groups.index(group) else None
    positions[group] = 0.0 if previous is None else positions[previous] + (1.0 if previous[0] == group[0] else 1.5)
rng = np.random.default_rng(0)
for group in groups:
    x = positions[group]
    present = [
        label
        for label in LABELS
        if any(r["label"] == label and (r["experiment"], r["dataset"], r["environment"]) == group for r in panel)
    ]
    for offset, label in zip(
        np.linspace(-0.18, 0.18, len(present)) if len(present) > 1 else [0.0], present, strict=True
    ):
        row = next(
            r for r in panel if r["label"] == label and (r["experiment"], r["dataset"], r["environment"]) == group
        )
        values = np.asarray(row["normalised"])
        ax_runs.scatter(
            x + offset + rng.uniform(-0.07, 0.07, values.size),
            values,
            s=9,
            marker=markers[label],
            facecolor="none",
            edgecolor=label_colors[label],
            linewidth=0.7,
            zorder=3,
        )
ax_runs.axhline(LOCK_IN_FRACTION, color="black", linestyle="--", linewidth=0.8, zorder=2)
top = max([1.05, *(max(r["normalised"]) * 1.05 for r in panel)])
if groups:

    def tick(group: tuple) -> str:
        """The dataset (and environment, where an experiment runs two of one dataset) and its run count, on one line:
        the labels are set at a slant, so that neighbouring names never run into each other."""
        experiment, dataset, environment = group
        counts = [
            r["n_runs"]
            for label in LABELS
            for r in panel
            if r["label"] == label and (r["experiment"], r["dataset"], r["environment"]) == group
        ]
        counts = str(counts[0]) if len(set(counts)) == 1 else "/".join(map(str, counts))  # as written / public reading
        where = f" ({environment})" if (experiment, dataset) in shared else ""
        return f"{display_name(dataset)}{where}, $n$={counts}"

    ax_runs.set_xticks(
        [positions[g] for g in groups],
        [tick(g) for g in groups],
        rotation=35,
        ha="right",
        rotation_mode="anchor",
    )
    ax_runs.set_xlim(-0.6, max(positions.values()) + 0.6)
    # Each experiment's name above its block of columns, inside the axes (the y range leaves room for it).
    blocks = [e for e in PANEL_EXPERIMENTS if any(g[0] == e for g in groups)]
    block_names = {"published": "published protocol", "classification": "classification benchmarks"}
    top *= 1.15
    for e in blocks:
        members = [positions[g] for g in groups if g[0] == e]
        ax_runs.text(
            (min(members) + max(members)) / 2,
            top * 0.985,
            block_names.get(e, e),
            ha="center",
            va="top",
            fontsize=7,
        )
    for e in blocks[1:]:
        ax_runs.axvline(
            min(positions[g] for g in groups if g[0] == e) - 0.75, color="grey", linewidth=0.5, linestyle=":"
        )
else:
    ax_runs.set_xticks([])
    ax_runs.text(
        0.5,
        0.5,
        "no runs of LNUCB-TA with a Random reference",
        transform=ax_runs.transAxes,
        ha="center",
        va="center",
        fontsize=7,
    )
ax_runs.set_ylim(0, top)
ax_runs.set_ylabel("total regret / Random's mean")
ax_runs.set_title("(a) every reported run", loc="left")
run_handles = [
    Line2D(
        [],
        [],
        linestyle="none",
        marker=markers[label],
        markerfacecolor="none",
        markeredgecolor=label_colors[label],
        markersize=4,
        label=name_of(label),
    )
    for label in LABELS
]
run_handles.append(
    Line2D(
        [],
        [],
        color="black",
        linestyle="--",
        linewidth=0.8,
        label=f"lock-in level: {LOCK_IN_FRACTION:g} × Random's mean",
    )
)
# (b) share of locked-in runs against alpha_0: one colour per dataset, one line style and marker per source; the
# number of runs behind each point in the source's legend entry (and beside each point where they differ).
sources = {
    ("exploration_sweep", "reported", "lnucb_ta"): ("exploration sweep, reported runs", "-", "o"),
    ("published", "tuning", "lnucb_ta"): ("published protocol, tuning runs", "--", "s"),
    ("published", "tuning", "lnucb_ta_public"): ("public code's reading, tuning runs", ":", "^"),
}
curves = defaultdict(list)
for row in rows:
    key = (row["experiment"], row["source"], row["policy"])
    if key in sources and row["alpha_0"] is not None:
        curves[(row["dataset"], key)].append(row)
# Dataset colours: far apart first, then the rest of the palette; never panel (a)'s colours or black (the key of the
# line styles).
preferred = ["#009E73", "#56B4E9", "#882255", "#999933", "#332288", "#661100"]
free = [c for c in dict.fromkeys([*preferred, *HIGHLIGHT_PALETTE]) if c not in label_colors.values() and c != "#000000"]
dataset_colors = {dataset: free[i % len(free)] for i, dataset in enumerate(sorted({dataset for dataset, _ in curves}))}
order = sorted(curves, key=lambda c: (list(sources).index(c[1]), c[0]))
for i, (dataset, key) in enumerate(order):
    points = sorted(curves[(dataset, key)], key=lambda r: r["alpha_0"])
    _, style, marker = sources[key]
    dodge = 10 ** (0.03 * (i - (len(order) - 1) / 2))  # side by side where shares coincide (log axis)
    ax_share.plot(
        [p["alpha_0"] * dodge for p in points],
        [p["share_above"] for p in points],
        linestyle=style,
        marker=marker,
        markersize=3.5,
        markerfacecolor="white" if key[2] == "lnucb_ta_public" else None,
        color=dataset_colors[dataset],
        linewidth=1.0,
        label=f"{dataset}: {sources[key][0]}",
    )
source_counts = {key: sorted({p["n_runs"] for (_, k), c in curves.items() if k == key for p in c}) for key in sources}
for (dataset, key), points in curves.items():
    if len(source_counts[key]) > 1:
        for p in points:
            ax_share.annotate(
                f"{p['n_runs']}",
                (p["alpha_0"], p["share_above"]),
                textcoords="offset points",
                xytext=(3, 3),
                fontsize=6,
                color=dataset_colors[dataset],
            )
ax_share.axhline(MAX_SHARE, color="grey", linestyle="-.", linewidth=0.7)
alphas = sorted({p["alpha_0"] for c in curves.values() for p in c})
ax_share.set_xscale("log")
if alphas:
    ax_share.set_xticks(alphas, [f"{a:g}" for a in alphas])
    ax_share.set_xlim(min(alphas) / 2, max(alphas) * 2)
else:
    ax_share.set_xticks([])
    ax_share.text(
        0.5,
        0.5,
        "no runs at an $\\alpha_0$ grid point",
        transform=ax_share.transAxes,
        ha="center",
        va="center",
        fontsize=7,
    )
ax_share.minorticks_off()
ax_share.set_ylim(-0.04, 1.04)
ax_share.set_xlabel(r"$\alpha_0$")
ax_share.set_ylabel("share of runs locked in")
ax_share.set_title(r"(b) lock-in against $\alpha_0$", loc="left")
share_handles = [
    Line2D([], [], color=color, linewidth=2.0, label=display_name(dataset)) for dataset, color in dataset_colors.items()
]
for key, (name, style, marker) in sources.items():
    if source_counts[key]:
        counts = source_counts[key]
        n_text = f"$n={counts[0]}$" if len(counts) == 1 else f"$n={counts[0]}$ to ${counts[-1]}$, beside each point"
        share_handles.append(
            Line2D(
                [],
                [],
                color="black",
                linestyle=style,
                marker=marker,
                markersize=3.5,
                linewidth=1.0,
                markerfacecolor="white" if key[2] == "lnucb_ta_public" else "black",
                label=f"{name} ({n_text})",
            )
        )
share_handles.append(
    Line2D(
        [],
        [],
        color="grey",
        linestyle="-.",
        linewidth=0.7,
        label=f"{MAX_SHARE:.0%} of runs (the claim's limit from 72 runs)",
    )
)
# One legend below both panels, a column each: (a)'s markers and levels, (b)'s datasets, (b)'s sources.
limit = share_handles.pop()
handles = [*run_handles, limit, *share_handles]
fig.legend(
    handles=handles,
    loc="upper center",
    bbox_to_anchor=(0.5, 0.0),
    ncol=3,
    frameon=False,
    handlelength=2.4,
    handletextpad=0.4,
    columnspacing=1.5,
)
save(fig, figures[0])

# %%
# The macros of paper/sections/lock_in.tex; "--" where this build has no such runs, so that every macro exists.
MISSING = "--"


def share_text(share: float) -> str:
    return format_number(100.0 * share, 0) + r"\%"


values = {"lockInLevel": f"{LOCK_IN_FRACTION:g}", "lockInMaxShare": share_text(MAX_SHARE)}
macro_datasets = sorted(set(published) | set(datasets_seen))
reported = [r for r in rows if r["source"] == "reported"]
for experiment in PANEL_EXPERIMENTS:
    for dataset in macro_datasets:
        for label in LABELS:
            row = next(
                (r for r in reported if (r["experiment"], r["dataset"], r["label"]) == (experiment, dataset, label)),
                None,
            )
            values[macro_name("lockIn", "count", experiment, dataset, label)] = str(row["n_above"]) if row else MISSING
            values[macro_name("lockIn", "runs", experiment, dataset, label)] = str(row["n_runs"]) if row else MISSING
            values[macro_name("lockIn", "share", experiment, dataset, label)] = (
                share_text(row["share_above"]) if row else MISSING
            )
for label in LABELS:
    members = [r for r in reported if r["experiment"] in PANEL_EXPERIMENTS and r["label"] == label]
    values[macro_name("lockIn", "count", label)] = str(sum(r["n_above"] for r in members)) if members else MISSING
    values[macro_name("lockIn", "runs", label)] = str(sum(r["n_runs"] for r in members)) if members else MISSING
    values[macro_name("lockIn", "failing", label)] = (
        str(sum(r["fails_no_lock_in"] for r in members)) if members else MISSING
    )
    values[macro_name("lockIn", "groups", label)] = str(len(members)) if members else MISSING
sweep = [r for r in reported if r["experiment"] == SWEEP]
values["lockInSweepCount"] = str(sum(r["n_above"] for r in sweep)) if sweep else MISSING
values["lockInSweepRuns"] = str(sum(r["n_runs"] for r in sweep)) if sweep else MISSING
for alpha in sorted({r["alpha_0"] for r in sweep}):
    at = [r for r in sweep if r["alpha_0"] == alpha]
    values[macro_name("lockIn", "sweep", "count", "alpha", f"{alpha:g}")] = str(sum(r["n_above"] for r in at))
    values[macro_name("lockIn", "sweep", "runs", "alpha", f"{alpha:g}")] = str(sum(r["n_runs"] for r in at))
for dataset in macro_datasets:
    result = implied_std.get(dataset)
    values[macro_name("lockIn", "implied", "std", dataset)] = (
        format_number(result["implied_std"]) if result else MISSING
    )
    values[macro_name("lockIn", "published", "std", dataset)] = (
        escape(published[dataset]["std"]) if dataset in published else MISSING
    )
    values[macro_name("lockIn", "published", "runs", dataset)] = (
        published[dataset]["n_runs"] if dataset in published else MISSING
    )
    values[macro_name("lockIn", "level", dataset)] = (
        format_number(result["level_at_published_horizon"]) if result else MISSING
    )
    values[macro_name("lockIn", "compatible", dataset)] = (
        ("compatible" if result["compatible"] else "not compatible") if result else "untested for compatibility"
    )
write_macros(outputs["macros"], values, "lock_in")

# %%
document = {
    "lock_in_fraction": LOCK_IN_FRACTION,
    "max_share": MAX_SHARE,
    "definition": "a run locks in when its total regret is above lock_in_fraction x the mean total regret of "
    "Random's reported runs of the reference experiment on the same environment, scaled to the run's horizon "
    "where they differ",
    "implied_std": "sample std (ddof = 1) of published_n_runs - 1 values at the published mean and one at the "
    "lock-in level scaled to the published horizon; compatible: the published std is at least that",
    "rows": [{key: value for key, value in row.items() if key != "normalised"} for row in rows],
    "notes": say.lines,
}
write_json(outputs["json"], document)

# %%
for row in rows:
    alpha = f" alpha_0={row['alpha_0']:g}" if row["alpha_0"] is not None else ""
    print(
        f"{row['experiment']:18s} {row['source']:8s} {row['dataset']:10s} {row['label']:26s}{alpha:14s} "
        f"{row['n_above']:3d}/{row['n_runs']:<3d} above {row['level']:9.1f} (share {row['share_above']:.2f})"
    )
for dataset, result in implied_std.items():
    print(
        f"published {dataset}: one locked-in run among {result['published_n_runs']} "
        f"implies std >= {result['implied_std']:.1f} "
        f"(published {result['published_std_text']}): {'compatible' if result['compatible'] else 'not compatible'}"
    )
