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
# # Do the covariance and the attention, updated online together, converge?
#
# An open question of the source notes (paper, fig:convergence), measured by `hare.experiments.studies.convergence`
# on HARE-Sim. Every variant plays the same environment draws; the ridge mean the bonus explores
# around is online in all of them, the query projections $W$ are frozen or take online SGD steps,
# and start random (cold) or fitted on the logged interactions (warm). A reference plays the true
# projections $W^*$ (no approximation error; only the user states are estimated).
#
# * Left: **stability** (solid), the fraction of (run, probe) pairs whose chosen cluster is the one
#   chosen at the previous recorded round, for a fixed set of probe (query, user) pairs; and
#   **oracle agreement** (dashed), the fraction whose chosen cluster holds the probe's best item.
# * Right: the **local slope** $d\log R/d\log t$ of the mean cumulative regret over the online
#   rounds, smoothed over windows spanning a factor 1.25 in $t$ (markers; the raw slope between
#   consecutive recorded rounds is the faint line), with the reference slopes 0.5 ($\sqrt{t}$
#   regret) and 1 (linear regret).
#
# Reads only the check file the workflow passes in; never re-runs the check.

# %% tags=["parameters"]
runs: list = []
convergence_json: str = ""
figures: list = ["convergence.pdf"]

# %%
import json
from pathlib import Path

import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from hare.report.style import OKABE_ITO, apply_style, color_for, figure, save

apply_style()
if not convergence_json:
    raise ValueError("no check file given: set the 'convergence_json' parameter")
result = json.loads(Path(convergence_json).read_text())
settings = result["settings"]
GROUPS = ("cold", "warm", "oracle")  # legend order: cold starts, warm starts, the W* reference


def group_of(variant: dict) -> str:
    return "oracle" if variant["params"].get("projections") == "oracle" else variant["regime"]


variants = dict(sorted(result["variants"].items(), key=lambda item: (GROUPS.index(group_of(item[1])), item[0])))


def values(column: list) -> np.ndarray:
    """A JSON column with nulls (undefined values) as a float array with NaN."""
    return np.array([np.nan if v is None else v for v in column], dtype=float)


# Cold variants in blues, warm ones in oranges, variants with the true projections W* in green and black.
PALETTE = {
    "cold": [OKABE_ITO[0], OKABE_ITO[5], "#332288"],
    "warm": [OKABE_ITO[1], OKABE_ITO[4], "#882255"],
    "oracle": [OKABE_ITO[2], OKABE_ITO[7]],
}
MARKERS = ["o", "s", "^", "D", "v", "P", "X"]
seen = {group: 0 for group in PALETTE}
colors = {}
for label, variant in variants.items():
    group = group_of(variant)
    colors[label] = PALETTE[group][seen[group]] if seen[group] < len(PALETTE[group]) else color_for(label)
    seen[group] += 1

# %%
fig, axes = figure(n_cols=2, height_in=2.9)
ax_choice, ax_slope = axes[0]
handles = []
for index, (label, variant) in enumerate(variants.items()):
    t = np.array(variant["rounds"], dtype=float)
    color = colors[label]
    ax_choice.plot(t, values(variant["stability_mean"]), color=color, linewidth=1.1)
    ax_choice.plot(t, values(variant["agreement_mean"]), color=color, linewidth=1.1, linestyle="--")
    ax_slope.plot(t, values(variant["local_slope"]), color=color, linewidth=0.5, alpha=0.25)
    (line,) = ax_slope.plot(
        np.array(variant["coarse_slope_rounds"], dtype=float),
        values(variant["coarse_slope"]),
        color=color,
        marker=MARKERS[index % len(MARKERS)],
        markersize=3,
        linewidth=1.1,
        label=variant["name"],
    )
    handles.append(line)
for ax in (ax_choice, ax_slope):
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("online round $t$")
ax_choice.set_ylim(0, 1.02)
ax_choice.set_ylabel("fraction of (run, probe) pairs")
ax_choice.set_title(f"cluster choices on {settings['n_probes']} fixed probes")
ax_choice.plot([], [], color="#555555", linewidth=1.1, label="stability (same cluster as the previous record)")
ax_choice.plot([], [], color="#555555", linewidth=1.1, linestyle="--", label="agreement (cluster holds the best item)")
ax_choice.legend(frameon=False, loc="lower right", fontsize=6.5)
for reference, style, meaning in ((1.0, ":", "linear regret"), (0.5, "-.", r"$\sqrt{t}$ regret")):
    handles.append(
        ax_slope.axhline(
            reference, color="#7F7F7F", linewidth=0.9, linestyle=style, label=f"slope {reference:g} ({meaning})"
        )
    )
ax_slope.set_ylim(0.2, 1.5)
ax_slope.set_ylabel(r"local slope $d\log R / d\log t$")
ax_slope.set_title(f"cumulative regret, mean over {settings['n_runs']} runs")
fig.legend(handles=handles, loc="outside lower center", ncols=4, frameon=False, fontsize=7)
save(fig, figures[0])

# %%
for variant in variants.values():
    print(
        f"{variant['name']:28s} final stability {variant['final_stability']:.3f}  "
        f"final agreement {variant['final_agreement']:.3f}  "
        f"last-half slope {variant['last_half_slope']}  R(T) {variant['final_regret_mean']:.2f}"
    )
