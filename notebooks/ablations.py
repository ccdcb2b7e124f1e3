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
# # HARE ablations and parameter sensitivity
#
# Total pseudo-regret of every grid point, mean over runs with an error bar of one standard
# deviation (ddof = 1), one panel per ablation group (the label before `@`) and environment:
# one figure for the `hare_ablations` experiment, one for `sensitivity`.
# Reads only the run files the workflow passes in; never re-runs an experiment.

# %% tags=["parameters"]
runs: list = []
figures: list = ["hare_ablations.pdf", "sensitivity.pdf"]
experiments: list = ["hare_ablations", "sensitivity"]

# %%
from collections import defaultdict
from pathlib import Path

import numpy as np

from hare.experiments.tables.aggregate import summarise_run
from hare.report.names import display_name, parameter_label
from hare.report.style import apply_style, color_for, figure, save

apply_style()
if not runs:
    raise ValueError("no run files given: set the 'runs' parameter")
if len(figures) != len(experiments):
    raise ValueError(f"one figure per experiment: {len(figures)} figures for {experiments}")

# %%
# panels[experiment][(group, environment)] = [(point, row), ...]
panels = defaultdict(lambda: defaultdict(list))
for path in map(Path, runs):
    row = summarise_run(path)
    group, _, point = row["policy"].partition("@")
    panels[row["experiment"]][(group, row["environment"])].append((point or "default", row))
missing = [experiment for experiment in experiments if experiment not in panels]
if missing:
    raise ValueError(f"no runs of {missing} among the run files")


def point_sort_key(point: str):
    """Grid points in numeric order where the values are numbers, else alphabetical."""
    key = []
    for assignment in point.split(","):
        _, _, value = assignment.partition("=")
        try:
            key.append((0, float(value), ""))
        except ValueError:
            key.append((1, 0.0, value))
    return key


# %%
def plot_experiment(experiment: str, path: str) -> None:
    # A policy entry without a grid (e.g. Random beside a sweep) has one point and no parameter to vary: not a panel.
    groups = sorted(
        group for group, points in panels[experiment].items() if any(point != "default" for point, _ in points)
    )
    environments = {env for _, env in groups}
    n_cols = min(3, len(groups))
    n_rows = -(-len(groups) // n_cols)
    fig, axes = figure(n_cols=n_cols, n_rows=n_rows, height_in=(2.1 if len(environments) > 1 else 1.9) * n_rows)
    for ax in axes.flat[len(groups) :]:
        ax.set_visible(False)
    for ax, (group, env) in zip(axes.flat, groups, strict=False):
        points = sorted(panels[experiment][(group, env)], key=lambda item: point_sort_key(item[0]))
        assignments = [
            dict(item.split("=", 1) for item in point.split(",")) if "=" in point else {"": point}
            for point, _ in points
        ]
        keys = sorted({key for assignment in assignments for key in assignment})
        names = [", ".join(assignment.get(key, "-") for key in keys) for assignment in assignments]
        means = np.array([row["mean"] for _, row in points])
        stds = np.nan_to_num(np.array([row["std"] for _, row in points]))
        color = color_for(points[0][1]["policy_name"])
        x = np.arange(len(points))
        ax.bar(x, means, 0.6, color=color, alpha=0.35, linewidth=0)
        ax.errorbar(x, means, yerr=stds, fmt="o", color=color, markersize=3, capsize=2, linewidth=0.9)
        long = sum(map(len, names)) > 24 // n_cols * 3
        ax.set_xticks(x, names, rotation=30 if long else 0, ha="right" if long else "center")
        ax.set_xlabel(", ".join(parameter_label(key) for key in keys if key))
        ax.set_xlim(-0.6, len(points) - 0.4)
        n = points[0][1]["n_runs"]
        title = display_name(group) + (f"\n{display_name(env)}" if len(environments) > 1 else "")
        ax.set_title(f"{title} ($n={n}$)", fontsize=7)
        ax.set_ylim(bottom=0)
    for row in axes:
        row[0].set_ylabel("total regret")
    if len(environments) == 1:
        fig.suptitle(f"{display_name(next(iter(environments)))}, $T={points[0][1]['horizon']}$", fontsize=8)
    save(fig, path)


for experiment, path in zip(experiments, figures, strict=True):
    plot_experiment(experiment, path)

# %%
for experiment in experiments:
    print(experiment)
    for (group, env), points in sorted(panels[experiment].items()):
        for point, row in sorted(points, key=lambda item: point_sort_key(item[0])):
            print(f"  {env:18s} {group:28s} {point:28s} {row['mean']:9.3f} +- {row['std']:.3f} (n={row['n_runs']})")
