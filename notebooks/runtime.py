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
# # Runtime and scaling
#
# Left: milliseconds per round of every policy point of the scaling experiment against its
# neighbourhood parameter (the grid value after `@`); a round advances every run of the job
# at once, so this is the sidecar's `wall_time_s / horizon`.
# Right: wall time of every report job (all runs of the job batched), one point per job,
# grouped by policy.
# Reads only the run files (and their JSON sidecars) the workflow passes in; never re-runs an experiment.

# %% tags=["parameters"]
runs: list = []
figures: list = ["runtime.pdf"]
scaling_experiment: str = "scaling"

# %%
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
from matplotlib.ticker import FuncFormatter, NullFormatter

from hare.report.names import display_name
from hare.report.style import apply_style, color_for, figure, save

apply_style()
if not runs:
    raise ValueError("no run files given: set the 'runs' parameter")

# %%
jobs = []
for path in map(Path, runs):
    sidecar = json.loads(path.with_suffix(".json").read_text())
    job = sidecar["job"]
    jobs.append(
        {
            "experiment": job["experiment"],
            "environment": job["environment"]["name"],
            "label": job["label"],
            "policy": job["policy"],
            "horizon": int(sidecar["horizon"]),
            "wall_time_s": float(sidecar["wall_time_s"]),
        }
    )
scaling = [job for job in jobs if job["experiment"] == scaling_experiment]
if not scaling:
    raise ValueError(f"no runs of the {scaling_experiment!r} experiment among the run files")

# %%
# series[(policy label, environment, parameter)] = [(value, ms per round, policy), ...]; a policy point
# without a grid value (no neighbourhood) is a reference: one horizontal line.
series = defaultdict(list)
references = []
for job in scaling:
    base, _, point = job["label"].partition("@")
    ms = 1000.0 * job["wall_time_s"] / job["horizon"]
    if not point:
        references.append((base, job["environment"], ms, job["policy"]))
        continue
    assignments = dict(item.split("=", 1) for item in point.split(","))
    if len(assignments) != 1:
        raise ValueError(f"{job['label']}: a scaling point varies exactly one parameter")
    ((parameter, value),) = assignments.items()
    series[(base, job["environment"], parameter)].append((float(value), ms, job["policy"]))
scaling_environments = sorted({job["environment"] for job in scaling})

experiments = sorted({job["experiment"] for job in jobs})
markers = {experiment: "osD^vP*Xh<>pd8H"[i % 14] for i, experiment in enumerate(experiments)}
policies = sorted({job["policy"] for job in jobs}, key=lambda name: display_name(name).lower())

fig, axes = figure(n_cols=2, height_in=3.2)
ax = axes[0, 0]
for (base, env, parameter), points in sorted(series.items()):
    points.sort()
    values, ms, policy = zip(*points, strict=True)
    suffix = f", {display_name(env)}" if len(scaling_environments) > 1 else ""
    ax.plot(
        values,
        ms,
        marker="o",
        markersize=3,
        color=color_for(policy[0]),
        label=f"{display_name(base)} ({parameter.replace('_', ' ')}){suffix}",
    )
for i, (base, env, ms, policy) in enumerate(sorted(references)):
    suffix = f", {display_name(env)}" if len(scaling_environments) > 1 else ""
    ax.axhline(
        ms,
        color=color_for(policy),
        linestyle=["--", ":", "-."][i % 3],
        linewidth=0.9,
        label=f"{display_name(base)}{suffix}",
    )
ax.set_xlabel("neighbourhood parameter")
ax.set_ylabel("ms per round (all runs batched)")
ax.set_xscale("log")
ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
ax.xaxis.set_minor_formatter(NullFormatter())
ax.set_ylim(bottom=0)
ax.set_title(f"{', '.join(map(display_name, scaling_environments))}, $T={scaling[0]['horizon']}$")
ax.legend(frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=2, fontsize=6)

ax = axes[0, 1]
offsets = np.linspace(-0.3, 0.3, len(experiments)) if len(experiments) > 1 else np.zeros(1)
for y, policy in enumerate(policies):
    for offset, experiment in zip(offsets, experiments, strict=True):
        times = [job["wall_time_s"] for job in jobs if job["policy"] == policy and job["experiment"] == experiment]
        if times:
            ax.plot(
                times,
                np.full(len(times), y + offset),
                linestyle="none",
                marker=markers[experiment],
                markersize=3,
                markerfacecolor="none",
                markeredgecolor=color_for(policy),
                markeredgewidth=0.8,
            )
ax.set_yticks(np.arange(len(policies)), [display_name(policy) for policy in policies], fontsize=5.5)
ax.set_ylim(len(policies) - 0.5, -0.5)
ax.set_xscale("log")
ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
ax.xaxis.set_minor_formatter(NullFormatter())
ax.set_xlabel("wall time per job (s)")
ax.set_title(f"every report job ({len(jobs)} jobs)")
for experiment in experiments:
    ax.plot(
        [],
        [],
        linestyle="none",
        marker=markers[experiment],
        markerfacecolor="none",
        markeredgecolor="#000000",
        markersize=3.5,
        label=experiment.replace("_", " "),
    )
ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0), title="experiment", title_fontsize=7, fontsize=6)
save(fig, figures[0])

# %%
for (base, env, parameter), points in sorted(series.items()):
    print(base, env, parameter, [(value, round(ms, 3)) for value, ms, _ in points])
for base, env, ms, _ in sorted(references):
    print(base, env, round(ms, 3))
totals = defaultdict(float)
for job in jobs:
    totals[job["policy"]] += job["wall_time_s"]
print({policy: round(seconds, 2) for policy, seconds in sorted(totals.items())})
