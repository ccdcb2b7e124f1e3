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
# # Regret curves
#
# Cumulative pseudo-regret against rounds for every policy of the HARE-Sim and
# classification experiments, one panel per environment: mean over runs with a band of
# one standard deviation. In colour, with a legend: HARE and its variants, LinUCB and the
# three baselines of lowest mean total regret in that panel (one colour per policy across
# panels); every other policy in light grey, without a legend entry.
# Reads only the run files the workflow passes in; never re-runs an experiment.

# %% tags=["parameters"]
runs: list = []
figures: list = ["regret_curves.pdf"]

# %%
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
from matplotlib.lines import Line2D

from hare.io import read_npz
from hare.report.names import display_name
from hare.report.style import (
    BACKGROUND_GREY,
    apply_style,
    distinct_colors,
    figure,
    highlighted_policies,
    is_hare_variant,
    save,
)

apply_style()
if not runs:
    raise ValueError("no run files given: set the 'runs' parameter")

# %%
curves = defaultdict(dict)
policies = defaultdict(dict)
n_runs = {}
for path in map(Path, runs):
    job = json.loads(path.with_suffix(".json").read_text())["job"]
    data = read_npz(path)
    curves[job["environment"]["name"]][job["label"]] = (data["rounds"], data["cumulative_regret"])
    policies[job["environment"]["name"]][job["label"]] = job["policy"]
    n_runs[job["environment"]["name"]] = data["cumulative_regret"].shape[0]
environments = sorted(curves)
final_regret = {
    env: {label: float(regret[:, -1].mean()) for label, (_, regret) in curves[env].items()} for env in environments
}
highlighted = {env: highlighted_policies(final_regret[env], policies[env]) for env in environments}


def policy_of(label: str) -> str:
    """The registered policy a label runs (the same in every environment)."""
    return next(policies[env][label] for env in environments if label in policies[env])


def legend_order(label: str) -> tuple:
    """HARE first, then its variants, LinUCB, and the other highlighted baselines by display name."""
    rank = (
        0
        if label == "hare"
        else 1
        if is_hare_variant(label, policy_of(label))
        else 2
        if policy_of(label) == "linucb"
        else 3
    )
    return rank, display_name(label).lower()


shown = sorted({label for env in environments for label in highlighted[env]}, key=legend_order)
colors = distinct_colors(shown)

# %%
n_cols = min(3, len(environments))
n_rows = -(-len(environments) // n_cols)
fig, axes = figure(n_cols=n_cols, n_rows=n_rows, height_in=1.9 * n_rows)
for ax in axes.flat[len(environments) :]:
    ax.set_visible(False)
for ax, env in zip(axes.flat, environments, strict=False):
    for label in sorted(curves[env], key=lambda label: label in highlighted[env]):
        rounds, regret = curves[env][label]
        mean = regret.mean(0)
        if label not in highlighted[env]:
            ax.plot(rounds, mean, color=BACKGROUND_GREY, linewidth=0.7, zorder=1)
            continue
        std = regret.std(0, ddof=1) if regret.shape[0] > 1 else np.zeros(regret.shape[1])
        hare = is_hare_variant(label, policies[env][label])
        ax.plot(
            rounds,
            mean,
            color=colors[label],
            linewidth=1.6 if hare else 1.1,
            zorder=3 + hare,
            label=display_name(label),
        )
        ax.fill_between(rounds, mean - std, mean + std, color=colors[label], alpha=0.15, linewidth=0, zorder=2)
    ax.set_title(f"{display_name(env)}, {n_runs[env]} runs")
    ax.set_xlabel("round $t$")
for row in axes:
    row[0].set_ylabel("cumulative regret")
handles = [
    Line2D([], [], color=colors[label], linewidth=1.6 if is_hare_variant(label, policy_of(label)) else 1.1)
    for label in shown
]
names = [display_name(label) for label in shown]
if any(len(curves[env]) > len(highlighted[env]) for env in environments):
    handles.append(Line2D([], [], color=BACKGROUND_GREY, linewidth=0.7))
    names.append("other policies")
fig.legend(handles, names, frameon=False, loc="lower center", ncol=min(5, len(handles)), bbox_to_anchor=(0.5, 1.0))
save(fig, figures[0])

# %%
for env in environments:
    print(env, "highlighted:", [display_name(label) for label in highlighted[env]])
    for label, value in sorted(final_regret[env].items(), key=lambda item: item[1]):
        print(f"  {label:28s} {value:10.2f}")
