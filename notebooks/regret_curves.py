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
# one standard deviation.
# Reads only the run files the workflow passes in; never re-runs an experiment.

# %% tags=["parameters"]
runs: list = []
figures: list = ["regret_curves.pdf"]

# %%
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from hare.io import read_npz
from hare.report.names import display_name
from hare.report.style import apply_style, color_for, figure, save

apply_style()
if not runs:
    raise ValueError("no run files given: set the 'runs' parameter")

# %%
curves = defaultdict(dict)
n_runs = {}
for path in map(Path, runs):
    job = json.loads(path.with_suffix(".json").read_text())["job"]
    data = read_npz(path)
    curves[job["environment"]["name"]][job["label"]] = (data["rounds"], data["cumulative_regret"])
    n_runs[job["environment"]["name"]] = data["cumulative_regret"].shape[0]
environments = sorted(curves)

# %%
n_cols = min(3, len(environments))
n_rows = -(-len(environments) // n_cols)
fig, axes = figure(n_cols=n_cols, n_rows=n_rows, height_in=1.9 * n_rows)
for ax in axes.flat[len(environments):]:
    ax.set_visible(False)
for ax, env in zip(axes.flat, environments, strict=False):
    for label in sorted(curves[env]):
        rounds, regret = curves[env][label]
        mean, std = regret.mean(0), regret.std(0, ddof=1) if regret.shape[0] > 1 else np.zeros(regret.shape[1])
        color = color_for(label)
        ax.plot(rounds, mean, color=color, label=display_name(label))
        ax.fill_between(rounds, mean - std, mean + std, color=color, alpha=0.2, linewidth=0)
    ax.set_title(f"{display_name(env)} ({n_runs[env]} runs)")
    ax.set_xlabel("round $t$")
for row in axes:
    row[0].set_ylabel("cumulative regret")
handles = {h.get_label(): h for ax in axes.flat for h in ax.get_lines()}
fig.legend(handles.values(), handles.keys(), frameon=False, loc="lower center", ncol=min(6, len(handles)), bbox_to_anchor=(0.5, 1.0))
save(fig, figures[0])
print({env: {label: float(curves[env][label][1][:, -1].mean()) for label in curves[env]} for env in environments})
