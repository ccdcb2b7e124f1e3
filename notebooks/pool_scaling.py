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
# # Can the per-cluster covariance be approximated efficiently for very large item pools?
#
# Seed 000's third open question (paper, sec:scale), measured by `hare.experiments.studies.pool_scaling` on a
# synthetic pool of $N$ items in $C$ clusters, $C$ growing with $N$ by three rules (fixed $c_0$, $\lceil\sqrt N\rceil$,
# $\lceil N/100\rceil$), for $H$ heads and $B$ runs. Per round, against $N$ on log-log axes:
#
# * left: the **select** latency, the attention with the bonus over all $N$ items (median over the timed rounds);
# * middle: the **update** latency, the rank-one update of the chosen cluster of every head and run;
# * right: the **memory** the round holds (covariance state, pool and the round's tensors).
#
# One colour per covariance kind (full, diagonal, low-rank), one line style and marker per cluster rule. The
# per-item covariance, the exact alternative ($C = N$, full), is the dashed black line: measured where it fits under
# the study's memory cap, and in the memory panel extrapolated beyond (open markers) from its closed form
# $B H N d_k^2 \cdot 8$ bytes. Skipped cells (predicted over the cap) have no point.
#
# Reads only the check file the workflow passes in; never re-runs the study.

# %% tags=["parameters"]
runs: list = []
pool_scaling_json: str = ""
figures: list = ["pool_scaling.pdf"]

# %%
import json
from pathlib import Path

import numpy as np
from matplotlib.ticker import FuncFormatter, NullFormatter

from hare.report.style import OKABE_ITO, apply_style, figure, save

apply_style()
if not pool_scaling_json:
    raise ValueError("no check file given: set the 'pool_scaling_json' parameter")
result = json.loads(Path(pool_scaling_json).read_text())
settings = result["settings"]
KIND_NAMES = {
    "full": "full $\\Sigma$",
    "diagonal": "diagonal $\\Sigma$",
    "low_rank": f"low-rank $r = {settings['rank']}$",
}
KIND_COLORS = {"full": OKABE_ITO[0], "diagonal": OKABE_ITO[1], "low_rank": OKABE_ITO[2]}
RULE_NAMES = {
    "fixed": f"$C = {settings['fixed_clusters']}$",
    "sqrt": "$C = \\sqrt{N}$",
    "linear": f"$C = N/{settings['items_per_cluster']}$",
}
RULE_STYLES = {"fixed": ("-", "o"), "sqrt": ("-.", "s"), "linear": (":", "^")}
PANELS = (("select_ms", "select (ms per round)"), ("update_ms", "update (ms per round)"), ("peak_bytes", "memory (MB)"))


def series(rule: str, kind: str, key: str) -> tuple[np.ndarray, np.ndarray]:
    """``(N, value)`` of the measured cells of ``rule`` and ``kind``; memory in MB."""
    cells = [c for c in result["cells"] if c["rule"] == rule and c["kind"] == kind and c["status"] == "measured"]
    scale = 1e-6 if key == "peak_bytes" else 1.0
    return np.array([c["n_items"] for c in cells], dtype=float), np.array([c[key] * scale for c in cells])


# %%
fig, axes = figure(n_cols=3, height_in=2.6)
for (key, label), ax in zip(PANELS, axes[0], strict=True):
    for kind in settings["kinds"]:
        for rule in settings["cluster_rules"]:
            n, value = series(rule, kind, key)
            style, marker = RULE_STYLES[rule]
            ax.plot(n, value, color=KIND_COLORS[kind], linestyle=style, marker=marker, markersize=3, linewidth=1.0)
    line = result["per_item"]
    measured = [p for p in line if p["status"] == "measured"]
    if key == "peak_bytes":
        n_all = np.array([p["n_items"] for p in line], dtype=float)
        ax.plot(n_all, [p["bytes"] * 1e-6 for p in line], color="black", linestyle="--", linewidth=1.0)
        for p in line:
            ax.plot(
                p["n_items"],
                p["bytes"] * 1e-6,
                marker="D",
                markersize=3.5,
                color="black",
                markerfacecolor="white" if p["extrapolated"] else "black",
            )
    elif measured:
        ax.plot(
            [p["n_items"] for p in measured],
            [p[key] for p in measured],
            color="black",
            linestyle="--",
            marker="D",
            markersize=3,
            linewidth=1.0,
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        axis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("pool size $N$")
    ax.set_title(label)
handles = [
    axes[0][0].plot([], [], color=KIND_COLORS[kind], linewidth=1.2, label=KIND_NAMES[kind])[0]
    for kind in settings["kinds"]
]
handles += [
    axes[0][0].plot(
        [],
        [],
        color="#555555",
        linestyle=RULE_STYLES[rule][0],
        marker=RULE_STYLES[rule][1],
        markersize=3,
        linewidth=1.0,
        label=RULE_NAMES[rule],
    )[0]
    for rule in settings["cluster_rules"]
]
handles.append(
    axes[0][0].plot(
        [], [], color="black", linestyle="--", marker="D", markersize=3, label="per-item $\\Sigma$ ($C = N$)"
    )[0]
)
fig.legend(handles=handles, loc="outside lower center", ncols=4, frameon=False, fontsize=7)
save(fig, figures[0])

# %%
for cell in result["cells"]:
    if cell["status"] == "measured":
        print(
            f"N {cell['n_items']:>9,}  {cell['rule']:6s} C {cell['n_clusters']:>7,}  {cell['kind']:8s}  "
            f"select {cell['select_ms']:.3f} ms  update {cell['update_ms']:.3f} ms  "
            f"memory {cell['peak_bytes'] / 1e6:.1f} MB"
        )
    else:
        print(f"N {cell['n_items']:>9,}  {cell['rule']:6s} {cell['kind']:8s}  skipped: {cell['reason']}")
for kind, interval in result["regret"]["difference_to_full"].items():
    print(f"regret {kind} - full: {interval['estimate']} [{interval['ci_low']}, {interval['ci_high']}]")
