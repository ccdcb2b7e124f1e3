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
# # Measured regret decomposition
#
# Each measured term of the three-term decomposition of HARE's regret
# ($R = R_{\mathrm{approx}} + R_{\mathrm{explore}} + R_{\mathrm{user}}$, `hare.theory.decomposition`)
# and the total, against the horizon $T$ on log-log axes: the mean over runs with one standard
# deviation, the individual runs (thin lines), and every bound the check evaluates for that term.
# The legend gives the least-squares growth exponent (slope of $\log R$ on $\log T$) with the
# check's bootstrap interval over runs, and each bound's exponent over the same grid; the
# exponent of the total is fitted here on the mean curve (no interval). The band is clipped below at a
# tenth of the mean (log axes). The dotted grey line is
# $T\Delta$, above which a bound is vacuous. Means that are not positive cannot be drawn on log axes
# and are left out (stated in the panel).
# Reads only the check files the workflow passes in; never re-runs the check.

# %% tags=["parameters"]
runs: list = []
terms_json: str = ""
terms_npz: str = ""
figures: list = ["decomposition.pdf"]

# %%
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from hare.io import read_npz
from hare.report.decomposition import BOUND_LABELS, TERM_LABELS
from hare.report.style import OKABE_ITO, apply_style, color_for, figure, save
from hare.statistics import loglog_slope

apply_style()
if not terms_json:
    raise ValueError("no check file given: set the 'terms_json' parameter")
result = json.loads(Path(terms_json).read_text())
arrays = read_npz(terms_npz) if terms_npz else {}

# %%
PANELS = ("approx", "explore", "user", "total")
"""The terms drawn, one panel each, labelled as the report's table labels them."""
PER_RUN = {"approx": "term_approx", "explore": "term_explore", "user": "term_user", "total": "regret_full"}
BOUND_COLORS = [OKABE_ITO[0], OKABE_ITO[2], OKABE_ITO[3]]


rows = defaultdict(lambda: defaultdict(list))  # rows[term][bound_key] = [row, ...] sorted by T
for row in result["rows"]:
    rows[row["term"]][row["bound_key"]].append(row)
for term in rows:
    for key in rows[term]:
        rows[term][key].sort(key=lambda row: row["T"])
max_gap = float(result["constants"]["max_gap"])
n_runs = int(result["config"]["n_runs"])

# %%
fig, axes = figure(n_cols=2, n_rows=2, height_in=4.2)
measured_color = color_for("hare")
for ax, term in zip(axes.flat, PANELS, strict=False):
    first = next(iter(rows[term].values()))
    T = np.array([row["T"] for row in first], dtype=float)
    mean = np.array([row["mean"] for row in first])
    std = np.array([row["std"] if row["std"] is not None else 0.0 for row in first])
    fit = result["exponents"].get(term)
    if fit and fit.get("estimate") is not None:
        interval = f" [{fit['ci_low']:.2f}, {fit['ci_high']:.2f}]" if fit.get("ci_low") is not None else ""
        exponent = f"{fit['estimate']:.2f}{interval}"
    else:
        exponent = f"{loglog_slope(T, mean):.2f}"
    per_run = arrays.get(PER_RUN[term])
    if per_run is not None:
        for run in np.atleast_2d(per_run):  # (n_runs, n_horizons)
            keep = run > 0
            ax.plot(T[keep], run[keep], color=measured_color, alpha=0.5, linewidth=0.6)
    positive = mean > 0
    ax.fill_between(
        T[positive],
        np.maximum(mean - std, mean / 10)[positive],
        (mean + std)[positive],
        color=measured_color,
        alpha=0.2,
        linewidth=0,
    )
    ax.plot(
        T[positive], mean[positive], marker="o", markersize=3, color=measured_color, label=f"measured, slope {exponent}"
    )
    for color, (key, bound_rows) in zip(BOUND_COLORS, sorted(rows[term].items()), strict=False):
        bound = np.array([row["bound"] for row in bound_rows])
        bound_exponent = (fit or {}).get("bound_exponents", {}).get(key, loglog_slope(T, bound))
        ax.plot(
            T,
            bound,
            linestyle="--",
            marker="s",
            markersize=2.5,
            color=color,
            label=f"{BOUND_LABELS.get(key, key)}, slope {bound_exponent:.2f}",
        )
    ax.plot(T, T * max_gap, linestyle=":", color="#7F7F7F", linewidth=0.9, label=r"$T\Delta$ (trivial)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(T, [f"{t:g}" for t in T])
    ax.minorticks_off()
    dropped = int((~positive).sum())
    title = ("total " if term == "total" else "") + TERM_LABELS[term]  # the panel of R itself reads "total R"
    ax.set_title(title + (f" ({dropped} of {len(T)} means $\\leq 0$ not shown)" if dropped else ""))
    ax.legend(frameon=False, loc="upper left", fontsize=6, handlelength=1.8)
    ax.set_ylim(top=ax.get_ylim()[1] * 30)
for ax in axes[-1]:
    ax.set_xlabel("horizon $T$")
for row in axes:
    row[0].set_ylabel(f"cumulative regret ($n={n_runs}$ runs)")
save(fig, figures[0])

# %%
for term in PANELS:
    for key, bound_rows in sorted(rows[term].items()):
        print(
            term,
            key,
            [
                (row["T"], round(row["mean"], 3), round(row["bound"], 3), row["holds"], row["vacuous"])
                for row in bound_rows
            ],
        )
print(
    {term: fit and {k: fit[k] for k in ("estimate", "ci_low", "ci_high")} for term, fit in result["exponents"].items()}
)
print(result["exponent_checks"])
