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
# Cumulative pseudo-regret against rounds for every policy of the `regret` experiment,
# one panel per environment: mean over runs with a band of one standard deviation.
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
fig, axes = figure(n_cols=len(environments), height_in=2.0)
for ax, env in zip(axes[0], environments):
    for label in sorted(curves[env]):
        rounds, regret = curves[env][label]
        mean, std = regret.mean(0), regret.std(0, ddof=1) if regret.shape[0] > 1 else np.zeros(regret.shape[1])
        color = color_for(label)
        ax.plot(rounds, mean, color=color, label=display_name(label))
        ax.fill_between(rounds, mean - std, mean + std, color=color, alpha=0.2, linewidth=0)
    ax.set_title(f"{display_name(env)} ({n_runs[env]} runs)")
    ax.set_xlabel("round $t$")
axes[0][0].set_ylabel("cumulative regret")
axes[0][-1].legend(frameon=False, loc="upper left")
save(fig, figures[0])
print({env: {label: float(curves[env][label][1][:, -1].mean()) for label in curves[env]} for env in environments})
