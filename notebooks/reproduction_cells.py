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
# # LNUCB-TA's Table 2 against the cells: which preparation each published row fits
#
# One panel per dataset of the `published` experiment. Each row of the panel is a published row of LNUCB-TA's
# Table 2 that the configuration ran a cell for (LNUCB-TA, LinUCB, ...): its published mean with the band of two
# published standard deviations (grey), and each of our cells, a reading of LNUCB-TA (as written, the public code's
# reading) or the policy under one preparation of the reference's rows (reference: ordinal codes, raw numbers;
# one-hot; standardised; min-max; `hare.data.prepare.PREPARATIONS`), as its mean with its 95% t interval over runs,
# one colour per preparation. A cell whose interval lies inside the band reproduces the row (the claims' rule); the
# horizontal axis is logarithmic, since the rows of one dataset differ by up to a factor of thirty.
#
# The cells are the lines of the reproduction table (`hare.experiments.tables.reproduction.reproduction_rows`): the
# same numbers as Table `lnucb_ta_reproduction`. A cell at another horizon than the published one is drawn hollow
# (not comparable). Reads only the files the workflow passes in; never re-runs an experiment.

# %% tags=["parameters"]
runs: list = []
figures: list = ["reproduction_cells.pdf"]
published_table: str = "paper/published/lnucb_ta_table2.csv"

# %%
from pathlib import Path

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import NullFormatter

from hare.experiments.tables.aggregate import summarise_runs
from hare.experiments.tables.reproduction import PREPARATION_ORDER, REPRODUCED_POLICY, reproduction_rows
from hare.report.names import PREPARATION_NAMES, display_name
from hare.report.style import apply_style, distinct_colors, figure, save

apply_style()
run_paths = [p for p in runs if str(p).endswith(".npz") and "/runs/published/" in str(p)]
lines = reproduction_rows(summarise_runs(run_paths), published_table) if run_paths else []
print(f"{len(run_paths)} run files of the published experiment, {len(lines)} lines of the reproduction table")

# %%
READINGS_SHOWN = ("lnucb_ta", "lnucb_ta_public")
"""The readings of LNUCB-TA drawn beside the published policies' own cells (the switches alone stay in the table)."""
MARKERS = {"lnucb_ta": "o", "lnucb_ta_public": "D"}
datasets = list(dict.fromkeys(r["dataset"] for r in lines if r["role"] == "published"))
preparations = [p for p in PREPARATION_ORDER if any(r.get("preparation") == p for r in lines)]
colors = distinct_colors(preparations)


def shown(r: dict) -> bool:
    """Our cell of a published row, drawn: the policy itself, or the two main readings of LNUCB-TA."""
    if r["role"] != "ours":
        return False
    if r["published_policy"] == REPRODUCED_POLICY:
        return r["policy"] in READINGS_SHOWN
    return r["policy"] == r["published_policy"]


fig, axes = figure(n_cols=max(len(datasets), 1), height_in=2.4)
for ax, dataset in zip(axes[0], datasets or [None], strict=True):
    if dataset is None:
        ax.text(0.5, 0.5, "no cell with a published row", transform=ax.transAxes, ha="center", va="center")
        ax.set_xticks([])
        ax.set_yticks([])
        continue
    rows = [r for r in lines if r["dataset"] == dataset]
    published = [r for r in rows if r["role"] == "published"]
    ticks = []
    for y, pub in enumerate(published):
        mean, std = float(pub["mean"]), float(pub["std"])
        ax.fill_betweenx([y - 0.4, y + 0.4], mean - 2 * std, mean + 2 * std, color="0.85", zorder=1, linewidth=0)
        ax.plot([mean, mean], [y - 0.4, y + 0.4], color="black", linewidth=0.8, zorder=2)
        ticks.append(display_name(pub["policy"]))
        cells = [r for r in rows if shown(r) and r["published_policy"] == pub["policy"]]
        offsets = np.linspace(-0.28, 0.28, max(len(cells), 1))
        for offset, cell in zip(offsets, cells, strict=False):
            comparable = bool(cell["comparable"])
            color = colors[cell["preparation"]]
            ax.errorbar(
                float(cell["mean"]),
                y + offset,
                xerr=[
                    [max(float(cell["mean"]) - float(cell["ci_low"]), 0.0)],
                    [max(float(cell["ci_high"]) - float(cell["mean"]), 0.0)],
                ],
                fmt=MARKERS.get(cell["policy"], "s"),
                markersize=3.5,
                color=color,
                markerfacecolor=color if comparable else "none",
                linewidth=0.8,
                zorder=3,
            )
    ax.set_yticks(range(len(published)), ticks, fontsize=7)
    ax.set_ylim(-0.6, len(published) - 0.4)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("total regret")
    ax.set_title(display_name(dataset), loc="left")
handles = [Patch(color="0.85", label="published mean ± 2 std")]
handles += [
    Line2D([], [], linestyle="none", marker="s", color=colors[p], label=PREPARATION_NAMES[p]) for p in preparations
]
handles += [
    Line2D([], [], linestyle="none", marker=MARKERS[label], color="black", markerfacecolor="none", label=text)
    for label, text in (("lnucb_ta", "LNUCB-TA as written"), ("lnucb_ta_public", "public-code reading"))
    if any(r["policy"] == label for r in lines)
]
fig.legend(handles=handles, loc="outside lower center", ncol=min(len(handles), 4), fontsize=6, frameon=False)
for path in figures:
    save(fig, Path(path))
