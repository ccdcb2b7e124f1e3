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
# # What exploration buys: every run of HARE with and without its bonus
#
# Every reported run of the experiments `hare_online` (cold) and `hare_online_warm` (warm) is one point: its total
# regret, for HARE with alpha = 0 (`hare_alpha_zero`) beside the same HARE (online mean and projections) with alpha
# tuned on disjoint seeds (`hare_online_projections`) and, where the build runs them, with alpha learned online
# (`hare_alpha_meta`, `hare_alpha_exp3`). One panel per environment, cold left and warm right within it. Each column
# marks its mean (bar) and its worst-decile mean (CVaR at 10%, the mean of the worst tenth of the runs; triangle), the
# tail measure of the claims family `exploration_tails`; the dashed line is the lock-in level, 0.9 x Random's mean
# total regret of the same experiment and environment (the level of the `no_lock_in` family).
#
# It also writes a JSON of the per-column statistics and the macros the paper's paragraph reads, among them, per
# experiment and environment, the number of runs in which every HARE variant of the experiment has the same total
# regret. Whatever is missing (an experiment, an environment, a policy, Random) is skipped with a printed line.
# Reads only the files the workflow passes in; never re-runs an experiment.

# %% tags=["parameters"]
runs: list = []
figures: list = ["exploration_tails.pdf"]
outputs: dict = {"json": "exploration_tails.json", "macros": "exploration_tails_macros.tex"}

# %%
import numpy as np
from matplotlib.lines import Line2D

from hare.io import write_json
from hare.report.latex import format_number, macro_name
from hare.report.names import display_name
from hare.report.notebook_kit import Notes, reported_runs, write_macros
from hare.report.style import apply_style, distinct_colors, figure, save
from hare.statistics import upper_tail_mean

apply_style()
EXPERIMENTS = {"hare_online": "cold", "hare_online_warm": "warm"}
ENVIRONMENTS = ["synthetic_linear", "mushroom"]
POLICIES = ["hare_alpha_zero", "hare_online_projections", "hare_alpha_meta", "hare_alpha_exp3"]
"""alpha = 0, alpha tuned, alpha learned by meta-gradient and by EXP3 over the grid (the columns, in this order)."""
SHORT = {
    "hare_alpha_zero": r"$\alpha=0$",
    "hare_online_projections": r"tuned $\alpha$",
    "hare_alpha_meta": "meta-gradient",
    "hare_alpha_exp3": "EXP3",
}
TAIL_LEVEL = 0.1
LOCK_IN_FRACTION = 0.9
"""A run locks in above this fraction of Random's mean total regret (claims families no_lock_in, exploration_tails)."""
say = Notes()

if not runs:
    say("no run files given: every panel is empty")

# %%
totals, policy_of = {}, {}
for key, sidecar, arrays in reported_runs(runs, EXPERIMENTS, say):
    totals[key] = np.asarray(arrays["total_regret"], dtype=np.float64)
    policy_of[key] = sidecar["job"].get("policy", key[2])

columns = []
for environment in ENVIRONMENTS:
    for experiment, regime in EXPERIMENTS.items():
        random = totals.get((experiment, environment, "random"))
        if random is None:
            say(f"{experiment}/{environment}: no Random runs, no lock-in level")
        for label in POLICIES:
            values = totals.get((experiment, environment, label))
            if values is None:
                say(f"skipped {experiment}/{environment}/{label}: not among the inputs")
                continue
            level = LOCK_IN_FRACTION * float(random.mean()) if random is not None else None
            columns.append(
                {
                    "experiment": experiment,
                    "regime": regime,
                    "environment": environment,
                    "label": label,
                    "n_runs": int(values.size),
                    "mean": float(values.mean()),
                    "std": float(values.std(ddof=1)) if values.size > 1 else None,
                    "cvar10": upper_tail_mean(values, TAIL_LEVEL),
                    "lock_in_level": level,
                    "n_locked_in": int(np.sum(values > level)) if level is not None else None,
                    "totals": values.tolist(),
                }
            )

# Runs in which every HARE variant of an experiment (every label whose policy is hare) has the same total regret.
identical = {}
for experiment in EXPERIMENTS:
    for environment in ENVIRONMENTS:
        variants = [
            v
            for (e, env, label), v in totals.items()
            if (e, env) == (experiment, environment) and policy_of[(e, env, label)] == "hare"
        ]
        if len(variants) < 2 or len({v.size for v in variants}) != 1:
            continue
        stacked = np.stack(variants)
        identical[(experiment, environment)] = {
            "n_variants": len(variants),
            "n_runs": int(stacked.shape[1]),
            "n_identical": int(np.sum(np.all(stacked == stacked[0], axis=0))),
        }

# %%
present = [label for label in POLICIES if any(c["label"] == label for c in columns)] or POLICIES[:2]
colors = distinct_colors(present)
fig, axes = figure(n_cols=len(ENVIRONMENTS), height_in=2.8)
rng = np.random.default_rng(0)
for ax, environment in zip(axes[0], ENVIRONMENTS, strict=True):
    ticks, tick_labels = [], []
    x = 0.0
    for experiment, regime in EXPERIMENTS.items():
        group = [c for c in columns if (c["experiment"], c["environment"]) == (experiment, environment)]
        start = x
        for column in group:
            values = np.asarray(column["totals"])
            color = colors[column["label"]]
            ax.scatter(x + rng.uniform(-0.18, 0.18, values.size), values, s=5, color=color, alpha=0.55, linewidths=0)
            ax.hlines(column["mean"], x - 0.3, x + 0.3, color="black", linewidth=1.0)
            ax.scatter(
                [x + 0.36], [column["cvar10"]], marker="<", s=14, color=color, edgecolors="black", linewidths=0.4
            )
            x += 1.0
        if group:
            if group[0]["lock_in_level"] is not None:
                ax.hlines(
                    group[0]["lock_in_level"], start - 0.45, x - 0.55, color="black", linestyle="--", linewidth=0.7
                )
            ticks.append((start + x - 1.0) / 2)
            tick_labels.append(f"{regime} ({group[0]['n_runs']} runs)")
            x += 0.6
    ax.set_xticks(ticks, tick_labels)
    ax.set_title(display_name(environment), loc="left")
    ax.set_ylabel("total regret per run")
    if not ticks:
        ax.text(0.5, 0.5, "no runs", transform=ax.transAxes, ha="center", va="center", fontsize=7)
handles = [
    Line2D([], [], marker="o", linestyle="", color=colors[label], markersize=3.5, label=SHORT[label])
    for label in present
]
handles += [
    Line2D([], [], color="black", linewidth=1.0, label="mean"),
    Line2D([], [], marker="<", linestyle="", color="grey", markeredgecolor="black", label="worst-decile mean"),
    Line2D(
        [],
        [],
        color="black",
        linestyle="--",
        linewidth=0.7,
        label=f"lock-in level: {LOCK_IN_FRACTION:g} × Random's mean",
    ),
]
fig.legend(handles=handles, loc="upper center", ncol=4, frameon=False, fontsize=6, bbox_to_anchor=(0.5, 0.0))
save(fig, figures[0])

# %%
# The macros of the paper's paragraph on what exploration buys; "--" where this build has no such runs.
MISSING = "--"
values = {"explorationTailLevel": format_number(100 * TAIL_LEVEL, 0) + r"\%"}
for experiment in EXPERIMENTS:
    for environment in ENVIRONMENTS:
        for label in POLICIES:
            column = next(
                (
                    c
                    for c in columns
                    if (c["experiment"], c["environment"], c["label"]) == (experiment, environment, label)
                ),
                None,
            )
            parts = ("tails", experiment, environment, label)
            values[macro_name(*parts, "mean")] = format_number(column["mean"]) if column else MISSING
            values[macro_name(*parts, "std")] = (
                format_number(column["std"]) if column and column["std"] is not None else MISSING
            )
            values[macro_name(*parts, "cvar")] = format_number(column["cvar10"]) if column else MISSING
            values[macro_name(*parts, "locked")] = (
                str(column["n_locked_in"]) if column and column["n_locked_in"] is not None else MISSING
            )
            values[macro_name(*parts, "runs")] = str(column["n_runs"]) if column else MISSING
        same = identical.get((experiment, environment))
        values[macro_name("tails", experiment, environment, "identical")] = (
            str(same["n_identical"]) if same else MISSING
        )
        values[macro_name("tails", experiment, environment, "variants")] = str(same["n_variants"]) if same else MISSING
        values[macro_name("tails", experiment, environment, "runs")] = str(same["n_runs"]) if same else MISSING
write_macros(outputs["macros"], values, "exploration_tails")
document = {
    "tail_level": TAIL_LEVEL,
    "lock_in_fraction": LOCK_IN_FRACTION,
    "columns": [{k: v for k, v in c.items() if k != "totals"} for c in columns],
    "identical_runs": [{"experiment": e, "environment": env, **v} for (e, env), v in identical.items()],
    "notes": say.lines,
}
write_json(outputs["json"], document)

# %%
for c in columns:
    print(
        f"{c['experiment']:17s} {c['environment']:17s} {c['label']:24s} n={c['n_runs']:3d} mean {c['mean']:8.1f} "
        f"cvar10 {c['cvar10']:8.1f} locked {c['n_locked_in']}"
    )
for (experiment, environment), same in identical.items():
    print(
        f"{experiment}/{environment}: {same['n_identical']}/{same['n_runs']} runs identical "
        f"over {same['n_variants']} variants"
    )
