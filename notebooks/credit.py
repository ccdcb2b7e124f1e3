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
# # Credit assignment for novel outputs: regret over rounds per credit rule, and novelty against regret
#
# Seed 000's second open question: when the generated output is novel (not in the pool), how is the reward credited
# to specific attention weights? HARE in synthesize mode outputs `z`; the credit rule (paper, sec:credit;
# `hare.policies.hare_credit`) decides which clusters' covariance `Sigma_{h,j}` and vector `b_{h,j}` the reward of `z`
# updates: the dominant cluster (default), each cluster by its attention mass, the cluster of the nearest pool item, a
# gradient attribution, or none (the control). Every reported run of `synthesis_credit` (cold) and
# `synthesis_credit_warm` (warm) records its cumulative regret at the recorded rounds and the share of its outputs that
# are novel (`novelty`: nearest pool item's cosine below the threshold of `hare.novelty`).
#
# Top row: mean cumulative regret over rounds per rule and Random's pool item (`z = e_n`), one panel per environment
# and regime. Bottom row: each rule's mean novelty against its mean total regret with 95% t intervals over runs.
# Writes a JSON of these numbers and the macros of the paper's section. Whatever is missing is skipped with a
# printed line. Reads only the files the workflow passes in; never re-runs an experiment.

# %% tags=["parameters"]
runs: list = []
figures: list = ["credit.pdf"]
outputs: dict = {"json": "credit.json", "macros": "credit_macros.tex"}

# %%
import numpy as np
from matplotlib.lines import Line2D

from hare.io import write_json
from hare.novelty import NOVELTY_THRESHOLD
from hare.report.latex import format_number, macro_name
from hare.report.notebook_kit import Notes, reported_runs, write_macros
from hare.report.style import apply_style, distinct_colors, figure, save
from hare.statistics import t_interval

apply_style()
EXPERIMENTS = {"synthesis_credit": "cold", "synthesis_credit_warm": "warm"}
ENVIRONMENTS = ["synthetic_linear", "synthetic_nonlinear", "synthetic_between"]
VARIANTS = {"synthetic_linear": "linear", "synthetic_nonlinear": "nonlinear", "synthetic_between": "between"}
RULES = {
    "hare_credit_dominant": "dominant cluster",
    "hare_credit_attention_weighted": "attention-weighted",
    "hare_credit_nearest_item": "nearest item",
    "hare_credit_gradient": "gradient attribution",
    "hare_credit_none": "no credit",
}
LABELS = [*RULES, "random"]
say = Notes()

if not runs:
    say("no run files given: every panel is empty")

# %%
records = {}
for key, sidecar, arrays in reported_runs(runs, EXPERIMENTS, say, labels=LABELS):
    records[key] = {"arrays": arrays, "params": dict(sidecar["job"].get("params", {}))}

rows = []
for experiment, regime in EXPERIMENTS.items():
    for environment in ENVIRONMENTS:
        for label in LABELS:
            record = records.get((experiment, environment, label))
            if record is None:
                continue
            arrays = record["arrays"]
            novelty = np.asarray(arrays["novelty"], dtype=float) if "novelty" in arrays else None
            rows.append(
                {
                    "experiment": experiment,
                    "regime": regime,
                    "environment": environment,
                    "label": label,
                    "alpha": record["params"].get("alpha"),
                    "n_runs": int(np.asarray(arrays["total_regret"]).size),
                    "total_regret": t_interval(np.asarray(arrays["total_regret"], dtype=float)),
                    "novelty": t_interval(novelty, bounds=(0.0, 1.0)) if novelty is not None else None,
                    "rounds": np.asarray(arrays["rounds"]),
                    "mean_curve": np.asarray(arrays["cumulative_regret"], dtype=float).mean(0),
                }
            )
            if novelty is None:
                say(f"{experiment}/{environment}/{label}: no novelty in its run file")
panels = [
    (e, env)
    for e in EXPERIMENTS
    for env in ENVIRONMENTS
    if any((r["experiment"], r["environment"]) == (e, env) for r in rows)
]
if not panels:
    say("no run file of the credit experiments among the inputs")


# %%
def error_bar(interval: dict) -> list | None:
    """``[[below], [above]]`` of a t interval for ``errorbar``, ``None`` without an interval (fewer than 2 runs)."""
    if interval["ci_low"] is None:
        return None
    return [[interval["estimate"] - interval["ci_low"]], [interval["ci_high"] - interval["estimate"]]]


colors = distinct_colors(LABELS)
fig, axes = figure(n_cols=max(len(panels), 1), n_rows=2, height_in=2.9)
for column, (experiment, environment) in enumerate(panels):
    top, bottom = axes[0, column], axes[1, column]
    for row in rows:
        if (row["experiment"], row["environment"]) != (experiment, environment):
            continue
        style = ":" if row["label"] == "random" else "-"
        top.plot(row["rounds"], row["mean_curve"], color=colors[row["label"]], linestyle=style, linewidth=1.0)
        if row["label"] != "random" and row["novelty"] and row["novelty"]["estimate"] is not None:
            regret, novelty = row["total_regret"], row["novelty"]
            bottom.errorbar(
                novelty["estimate"],
                regret["estimate"],
                xerr=error_bar(novelty),
                yerr=error_bar(regret),
                color=colors[row["label"]],
                marker="o",
                markersize=3,
                linewidth=0.8,
                capsize=1.5,
            )
    top.set_title(f"HARE-Sim {VARIANTS[environment]}, {EXPERIMENTS[experiment]}", loc="left", fontsize=6)
    top.set_xlabel("round $t$")
    bottom.set_xlabel("novel share")
axes[0, 0].set_ylabel("mean cumulative regret")
axes[1, 0].set_ylabel("total regret (95% CI)")
handles = [
    Line2D([], [], color=colors[label], linewidth=1.5, linestyle=":" if label == "random" else "-", label=name)
    for label, name in {**RULES, "random": "Random (pool item)"}.items()
]
fig.legend(handles=handles, loc="upper center", ncol=6, frameon=False, fontsize=6, bbox_to_anchor=(0.5, 0.0))
save(fig, figures[0])

# %%
MISSING = "--"
values = {"creditNoveltyThreshold": format_number(NOVELTY_THRESHOLD, 1)}
for experiment in EXPERIMENTS:
    for environment in ENVIRONMENTS:
        for label in LABELS:
            row = next(
                (
                    r
                    for r in rows
                    if (r["experiment"], r["environment"], r["label"]) == (experiment, environment, label)
                ),
                None,
            )
            parts = ("credit", experiment, environment, label)
            regret = row["total_regret"]["estimate"] if row else None
            novelty = row["novelty"]["estimate"] if row and row["novelty"] else None
            values[macro_name(*parts, "regret")] = format_number(regret, 1) if regret is not None else MISSING
            values[macro_name(*parts, "novelty")] = (
                format_number(100 * novelty, 0) + r"\%" if novelty is not None else MISSING
            )
            values[macro_name(*parts, "alpha")] = (
                format_number(float(row["alpha"]), 2) if row and row["alpha"] is not None else MISSING
            )
    for environment in ENVIRONMENTS:
        means = [
            r["total_regret"]["estimate"]
            for r in rows
            if (r["experiment"], r["environment"]) == (experiment, environment)
            and r["label"] in RULES
            and r["total_regret"]["estimate"] is not None
        ]
        # the spread of the rules' mean total regrets: the largest difference the choice of rule makes
        values[macro_name("credit", experiment, environment, "spread")] = (
            format_number(max(means) - min(means), 2) if len(means) == len(RULES) else MISSING
        )
write_macros(outputs["macros"], values, "credit")
document = {
    "rows": [{k: v for k, v in r.items() if k not in ("rounds", "mean_curve")} for r in rows],
    "notes": say.lines,
}
write_json(outputs["json"], document)

# %%
for r in rows:
    novelty = r["novelty"]["estimate"] if r["novelty"] else float("nan")
    print(
        f"{r['experiment']:22s} {r['environment']:19s} {r['label']:31s} alpha {r['alpha']!s:6s} "
        f"regret {r['total_regret']['estimate']:9.2f} novelty {novelty:.2f}"
    )
