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
# # How every policy's cost grows
#
# Seconds per round of one policy per family (paper, fig:cost-growth), measured by
# `hare.experiments.studies.cost_growth` on HARE-Sim: four one-factor sweeps around a base point, the round $t$ of
# one long play, the arms $K$, the context dimension $d$ and the runs $B$. Each point is the mean of a window of
# consecutive rounds; a line stops where a cell ran past its time budget (recorded as skipped). Log-log axes, so a
# line's slope is the growth exponent of the table (tab:cost-growth).
#
# Reads only the check file the workflow passes in; never re-runs the study.

# %% tags=["parameters"]
runs: list = []
cost_growth_json: str = ""
figures: list = ["cost_growth.pdf"]

# %%
import json
from pathlib import Path

import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter, NullLocator

from hare.report.names import display_name
from hare.report.style import apply_style, distinct_colors, figure, save

apply_style()
if not cost_growth_json:
    raise ValueError("no check file given: set the 'cost_growth_json' parameter")
result = json.loads(Path(cost_growth_json).read_text())
settings = result["settings"]
policies = {name: result["policies"][name] for name in result["order"]}
AXIS_LABELS = {"t": "round $t$", "K": "arms $K$", "d": "context dimension $d$", "B": "runs $B$"}
colors = distinct_colors(list(policies))
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]

# %%
fig, axes = figure(n_cols=4, height_in=2.4)
handles = []
for column, axis in enumerate(result["axes"]):
    ax = axes[0][column]
    for index, (name, policy) in enumerate(policies.items()):
        cells = [cell for cell in policy["axes"][axis]["cells"] if cell["skipped"] is None]
        if not cells:
            continue
        x = np.array([cell["value"] for cell in cells], dtype=float)
        y = np.array([cell["seconds"] for cell in cells], dtype=float)
        fit = policy["axes"][axis]["exponent"]
        slope = "" if fit is None or fit["estimate"] is None else f" ({fit['estimate']:.1f})"
        (line,) = ax.plot(
            x,
            y,
            color=colors[name],
            marker=MARKERS[index % len(MARKERS)],
            markersize=3,
            linewidth=1.0,
            label=display_name(name),
        )
        if column == 0:
            handles.append(line)
        ax.annotate(
            slope.strip(" ()"),
            (x[-1], y[-1]),
            fontsize=5,
            color=colors[name],
            xytext=(2, 0),
            textcoords="offset points",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    sweep = settings[{"t": "rounds", "K": "arms", "d": "dims", "B": "runs"}[axis]]
    ax.set_xticks(sweep)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(AXIS_LABELS[axis])
    if column == 0:
        ax.set_ylabel("seconds per round")
base = settings["base"]
fig.suptitle(
    f"base point T = {base['horizon']}, K = {base['n_arms']}, d = {base['dim']}, B = {base['n_runs']}; "
    f"mean of {settings['window']} rounds per point, one thread",
    fontsize=7,
)
fig.legend(handles=handles, loc="outside lower center", ncols=8, frameon=False, fontsize=7)
save(fig, figures[0])

# %%
for name, policy in policies.items():
    fits = {axis: (policy["axes"][axis]["exponent"] or {}).get("estimate") for axis in result["axes"]}
    expected = {axis: policy["axes"][axis]["expected"] for axis in result["axes"]}
    skipped = sum(cell["skipped"] is not None for data in policy["axes"].values() for cell in data["cells"])
    print(
        f"{display_name(name):10s} "
        + "  ".join(
            f"{axis}: {'--' if k is None else f'{k:5.2f}'} (expected {expected[axis]})" for axis, k in fits.items()
        )
        + f"  skipped cells: {skipped}"
    )
