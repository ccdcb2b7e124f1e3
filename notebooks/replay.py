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
# # Replay on logged data
#
# Replay evaluation (Li et al. 2011) of every policy point of the `replay` experiment
# against the logged steps streamed: cumulative clicks on accepted events, accepted events,
# and clicks per accepted event (the replay estimate of the per-round reward). Mean over
# runs with a band of one standard deviation (ddof = 1); each run streams the logged rows in
# its own order.
# Reads only the run files the workflow passes in; never re-runs an experiment.

# %% tags=["parameters"]
runs: list = []
figures: list = ["replay.pdf"]

# %%
import json
from pathlib import Path

import numpy as np

from hare.io import read_npz
from hare.report.names import display_name
from hare.report.style import apply_style, color_for, figure, save

apply_style()
if not runs:
    raise ValueError("no run files given: set the 'runs' parameter")

# %%
curves = {}
for path in map(Path, runs):
    sidecar = json.loads(path.with_suffix(".json").read_text())
    job = sidecar["job"]
    data = read_npz(path)
    curves[job["label"]] = {
        "policy": job["policy"],
        "environment": job["environment"]["name"],
        **{name: data[name] for name in ("rounds", "cumulative_reward", "accepted", "mean_reward")},
    }
labels = sorted(curves)
environments = sorted({curve["environment"] for curve in curves.values()})


def mean_std(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation over runs (axis 0, ddof = 1), ignoring NaN (steps before a run's first accepted
    event)."""
    values = np.asarray(values, dtype=np.float64)  # (n_runs, n_checkpoints)
    counts = np.isfinite(values).sum(0)
    mean = np.where(counts > 0, np.nansum(values, 0) / np.maximum(counts, 1), np.nan)
    squares = np.nansum((values - mean) ** 2, 0)
    std = np.where(counts > 1, np.sqrt(squares / np.maximum(counts - 1, 1)), 0.0)
    return mean, std


# %%
# One colour per policy; points of the same policy get distinct line styles and the palette's next colours.
styles = ["-", "--", ":", "-."]
by_policy = {}
for label in labels:
    by_policy.setdefault(curves[label]["policy"], []).append(label)
look = {}
for policy, members in by_policy.items():
    for i, label in enumerate(members):
        look[label] = {"color": color_for(policy), "linestyle": styles[i % len(styles)]}

panels = [
    ("cumulative_reward", "cumulative clicks"),
    ("accepted", "accepted events"),
    ("mean_reward", "clicks per accepted event"),
]
fig, axes = figure(n_cols=3, height_in=2.0)
for ax, (field, ylabel) in zip(axes.flat, panels, strict=False):
    for label in labels:
        curve = curves[label]
        mean, std = mean_std(curve[field])
        ax.plot(curve["rounds"], mean, label=display_name(label), **look[label])
        ax.fill_between(curve["rounds"], mean - std, mean + std, color=look[label]["color"], alpha=0.15, linewidth=0)
    ax.set_xlabel("logged step")
    ax.set_ylabel(ylabel)
n_runs = {curves[label]["cumulative_reward"].shape[0] for label in labels}
axes[0, 0].set_title(f"{', '.join(map(display_name, environments))} ($n={'/'.join(map(str, sorted(n_runs)))}$ runs)")
handles, names = axes[0, 0].get_legend_handles_labels()
fig.legend(handles, names, frameon=False, loc="lower center", ncol=min(4, len(names)), bbox_to_anchor=(0.5, 1.0))
save(fig, figures[0])

# %%
for label in labels:
    curve = curves[label]
    final = curve["cumulative_reward"][:, -1]
    accepted = curve["accepted"][:, -1]
    print(
        f"{label:28s} clicks {final.mean():8.2f}  accepted {accepted.mean():8.1f}  "
        f"clicks/accepted {np.nanmean(curve['mean_reward'][:, -1]):.4f}"
    )
