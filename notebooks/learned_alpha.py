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
# # The bonus weight learned online: its trajectories, and the regret of the last half
#
# Seed 000's fourth open question: can alpha be learned end to end by meta-gradient, or does that destabilise training?
# Every reported run of `hare_alpha_meta` (a meta-gradient step on log alpha_h after each round, paper
# eq:alpha-surrogate) and `hare_alpha_exp3` (EXP3 over the tuning grid, per head) records alpha_h at the recorded rounds
# (`alpha_trajectory`, runs x rounds x heads; for EXP3 the mean of the grid under its draw probabilities). One panel per
# environment and regime: the median over runs of each learner and head with the band between the 10th and 90th
# percentiles, on a log axis, beside the tuned alpha of the same experiment (dotted; chosen on the tuning runs).
#
# What the trajectories do is read off with rules fixed here, before any run: over the last half of the rounds, a
# learner *collapses* when at least half of its runs end below a hundredth of the initial alpha; else it *converges*
# when the median over runs of the total variation of log alpha is at most 0.1 (alpha moved by at most about 10%, back
# and forth included); else it *oscillates* when the median ratio of that total variation to the net change
# |log alpha_T - log alpha_{T/2}| is at least 3; else
# it *drifts*. The regret slope of the last half is each run's regret per round over rounds T/2 to T (its cumulative
# regret curve), mean and t interval over runs, for the learners, tuned alpha and alpha = 0.
#
# Writes a JSON of these numbers and the macros of the paper's paragraph. Whatever is missing is skipped with a printed
# line. Reads only the files the workflow passes in; never re-runs an experiment.

# %% tags=["parameters"]
runs: list = []
figures: list = ["learned_alpha.pdf"]
outputs: dict = {"json": "learned_alpha.json", "macros": "learned_alpha_macros.tex"}

# %%
import numpy as np
from matplotlib.lines import Line2D

from hare.io import write_json
from hare.report.latex import format_number, macro_name
from hare.report.names import display_name
from hare.report.notebook_kit import Notes, reported_runs, write_macros
from hare.report.style import apply_style, distinct_colors, figure, save
from hare.statistics import t_interval

apply_style()
EXPERIMENTS = {"hare_online": "cold", "hare_online_warm": "warm"}
ENVIRONMENTS = ["synthetic_linear", "mushroom"]
LEARNERS = {"hare_alpha_meta": "meta-gradient", "hare_alpha_exp3": "EXP3 over the grid"}
COMPARED = ["hare_alpha_zero", "hare_online_projections", *LEARNERS]
COLLAPSE_FACTOR = 0.01
CONVERGED_LOG_CHANGE = 0.1
OSCILLATION_RATIO = 3.0
say = Notes()

if not runs:
    say("no run files given: every panel is empty")

# %%
records = {}
for key, sidecar, arrays in reported_runs(runs, EXPERIMENTS, say, labels=COMPARED):
    records[key] = {
        "arrays": arrays,
        "params": dict(sidecar["job"].get("params", {})),
        "horizon": int(sidecar.get("horizon", arrays["rounds"][-1])),
    }


def last_half_slope(record: dict) -> np.ndarray:
    """Each run's regret per round over rounds T/2 to T, from its cumulative regret at the recorded rounds."""
    rounds = np.asarray(record["arrays"]["rounds"])
    curve = np.asarray(record["arrays"]["cumulative_regret"])
    horizon = int(rounds[-1])
    middle = int(np.argmin(np.abs(rounds - horizon / 2)))
    return (curve[:, -1] - curve[:, middle]) / (rounds[-1] - rounds[middle])


def behaviour(trajectory: np.ndarray, start: float) -> dict:
    """The rules of the introduction, on ``trajectory`` (runs, recorded rounds, heads) of one learner."""
    log_alpha = np.log(np.maximum(trajectory, 1e-300))
    middle = log_alpha.shape[1] // 2
    second = log_alpha[:, middle:]
    net = np.abs(second[:, -1] - second[:, 0])  # (runs, heads)
    variation = np.abs(np.diff(second, axis=1)).sum(1)
    ratio = np.where(net > 0, variation / np.where(net > 0, net, 1.0), np.inf)
    collapsed = float(np.mean(trajectory[:, -1] < COLLAPSE_FACTOR * start))
    median_change = float(np.median(net))
    median_ratio = float(np.median(ratio))
    if collapsed >= 0.5:
        verdict = "collapses towards 0"
    elif float(np.median(variation)) <= CONVERGED_LOG_CHANGE:
        verdict = "converges"
    elif median_ratio >= OSCILLATION_RATIO:
        verdict = "oscillates"
    else:
        verdict = "drifts " + ("down" if np.median(second[:, -1] - second[:, 0]) < 0 else "up")
    final = trajectory[:, -1]
    return {
        "start": start,
        "final_median": float(np.median(final)),
        "final_p10": float(np.percentile(final, 10)),
        "final_p90": float(np.percentile(final, 90)),
        "share_collapsed": collapsed,
        "median_last_half_log_change": median_change,
        "median_last_half_log_variation": float(np.median(variation)),
        "median_variation_ratio": median_ratio,
        "verdict": verdict,
    }


results = []
for experiment, regime in EXPERIMENTS.items():
    for environment in ENVIRONMENTS:
        tuned = records.get((experiment, environment, "hare_online_projections"))
        tuned_alpha = float(tuned["params"]["alpha"]) if tuned and "alpha" in tuned["params"] else None
        for label in COMPARED:
            record = records.get((experiment, environment, label))
            if record is None:
                say(f"skipped {experiment}/{environment}/{label}: not among the inputs")
                continue
            slope = t_interval(last_half_slope(record))
            row = {
                "experiment": experiment,
                "regime": regime,
                "environment": environment,
                "label": label,
                "n_runs": int(np.asarray(record["arrays"]["total_regret"]).size),
                "tuned_alpha": tuned_alpha,
                "last_half_slope": slope,
            }
            if label in LEARNERS:
                if "alpha_trajectory" not in record["arrays"]:
                    say(f"{experiment}/{environment}/{label}: no alpha_trajectory in its run file")
                else:
                    trajectory = np.asarray(record["arrays"]["alpha_trajectory"])
                    grid = record["params"].get("alpha_grid")
                    start = float(np.mean(grid)) if grid else float(record["params"]["alpha"])  # alpha before round 1
                    row["behaviour"] = behaviour(trajectory, start)
                    row["rounds"] = np.asarray(record["arrays"]["rounds"]).tolist()
                    row["trajectory"] = trajectory
            results.append(row)

# %%
colors = distinct_colors(list(LEARNERS))
panels = [(e, env) for env in ENVIRONMENTS for e in EXPERIMENTS]
fig, axes = figure(n_cols=len(panels), height_in=2.3)
for ax, (experiment, environment) in zip(axes[0], panels, strict=True):
    drawn = False
    for row in results:
        if (row["experiment"], row["environment"]) != (experiment, environment) or "trajectory" not in row:
            continue
        rounds, trajectory = np.asarray(row["rounds"]), row["trajectory"]
        for head in range(trajectory.shape[2]):
            values = trajectory[:, :, head]
            style = "-" if head == 0 else "--"
            ax.plot(rounds, np.median(values, 0), color=colors[row["label"]], linestyle=style, linewidth=1.0)
            ax.fill_between(
                rounds,
                np.percentile(values, 10, 0),
                np.percentile(values, 90, 0),
                color=colors[row["label"]],
                alpha=0.2,
                linewidth=0,
            )
        drawn = True
        if row["tuned_alpha"]:
            ax.axhline(row["tuned_alpha"], color="black", linestyle=":", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xlabel("round $t$")
    ax.set_title(f"{display_name(environment)}, {EXPERIMENTS[experiment]}", loc="left", fontsize=7)
    if not drawn:
        ax.text(0.5, 0.5, "no learned alpha", transform=ax.transAxes, ha="center", va="center", fontsize=7)
axes[0, 0].set_ylabel(r"$\alpha_h$ (median, 10th to 90th percentile)")
handles = [Line2D([], [], color=colors[label], linewidth=1.5, label=name) for label, name in LEARNERS.items()]
handles.append(Line2D([], [], color="black", linestyle=":", linewidth=0.8, label=r"tuned $\alpha$ (tuning runs)"))
fig.legend(handles=handles, loc="upper center", ncol=3, frameon=False, fontsize=6, bbox_to_anchor=(0.5, 0.0))
save(fig, figures[0])

# %%
MISSING = "--"
values = {
    "learnedAlphaCollapseFactor": format_number(COLLAPSE_FACTOR, 2),
    "learnedAlphaConvergedChange": format_number(CONVERGED_LOG_CHANGE, 1),
    "learnedAlphaOscillationRatio": format_number(OSCILLATION_RATIO, 0),
}
for experiment in EXPERIMENTS:
    for environment in ENVIRONMENTS:
        for label in COMPARED:
            row = next(
                (
                    r
                    for r in results
                    if (r["experiment"], r["environment"], r["label"]) == (experiment, environment, label)
                ),
                None,
            )
            parts = ("learnedAlpha", experiment, environment, label)
            slope = row["last_half_slope"] if row else None
            values[macro_name(*parts, "slope")] = (
                format_number(slope["estimate"], 3) if slope and slope["estimate"] is not None else MISSING
            )
            values[macro_name(*parts, "slope", "low")] = (
                format_number(slope["ci_low"], 3) if slope and slope["ci_low"] is not None else MISSING
            )
            values[macro_name(*parts, "slope", "high")] = (
                format_number(slope["ci_high"], 3) if slope and slope["ci_high"] is not None else MISSING
            )
            if label in LEARNERS:
                b = row.get("behaviour") if row else None
                values[macro_name(*parts, "verdict")] = b["verdict"] if b else "not measured"
                values[macro_name(*parts, "final")] = format_number(b["final_median"], 3) if b else MISSING
                values[macro_name(*parts, "final", "low")] = format_number(b["final_p10"], 3) if b else MISSING
                values[macro_name(*parts, "final", "high")] = format_number(b["final_p90"], 3) if b else MISSING
                values[macro_name(*parts, "start")] = format_number(b["start"], 2) if b else MISSING
                values[macro_name(*parts, "change")] = (
                    format_number(b["median_last_half_log_change"], 2) if b else MISSING
                )
                values[macro_name(*parts, "collapsed")] = (
                    format_number(100 * b["share_collapsed"], 0) + r"\%" if b else MISSING
                )
        tuned = next(
            (
                r
                for r in results
                if (r["experiment"], r["environment"]) == (experiment, environment) and r["tuned_alpha"]
            ),
            None,
        )
        values[macro_name("learnedAlpha", experiment, environment, "tuned")] = (
            format_number(tuned["tuned_alpha"], 2) if tuned else MISSING
        )
write_macros(outputs["macros"], values, "learned_alpha")
document = {
    "rules": {
        "collapse_factor": COLLAPSE_FACTOR,
        "converged_log_change": CONVERGED_LOG_CHANGE,
        "oscillation_ratio": OSCILLATION_RATIO,
    },
    "rows": [{k: v for k, v in r.items() if k not in ("trajectory", "rounds")} for r in results],
    "notes": say.lines,
}
write_json(outputs["json"], document)

# %%
for r in results:
    b = r.get("behaviour")
    s = r["last_half_slope"]
    extra = (
        f" alpha {b['start']:.3g} -> {b['final_median']:.3g} "
        f"[{b['final_p10']:.3g}, {b['final_p90']:.3g}]: {b['verdict']}"
        if b
        else ""
    )
    print(f"{r['experiment']:17s} {r['environment']:17s} {r['label']:24s} slope {s['estimate']:.4f}{extra}")
