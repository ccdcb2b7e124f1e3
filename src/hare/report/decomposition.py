"""The regret decomposition's outputs (:func:`hare.theory.decomposition.run_decomposition`): its JSON, its
per-run arrays, and its LaTeX fragment (the terms against their bounds, the growth exponents and their macros)."""

from __future__ import annotations

from typing import Any

from hare.io import write_json, write_npz, write_text
from hare.report.latex import booktabs_table, escape, format_number, macro_name, macros
from hare.report.names import display_name

TERM_LABELS = {
    "approx": r"$R_{\mathrm{approx}}$",
    "user": r"$R_{\mathrm{user}}$",
    "explore": r"$R_{\mathrm{explore}}$",
    "total": r"$R$",
    "explore_selection_gap": r"$R_{\mathrm{explore}}$, selection gap ($\alpha = 0$)",
    "explore_minus_selection_gap": r"$R_{\mathrm{explore}}$ $-$ selection gap",
}
BOUND_LABELS = {
    "hare_approx": r"$L_f T \epsilon_{\mathrm{attn}}$",
    "hare_explore_oful": "OFUL, derived",
    "hare_explore": "notes, as stated",
    "user_regret_sum": r"notes' form, factor $\sigma$",
    "user_regret_sum_rescaled": r"notes' form, factor 1",
    "hare_approx + hare_explore_oful + user_regret_sum_rescaled": "sum of the three",
    "linucb_oful": "OFUL (LinUCB)",
}


def _jsonable(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k != "arrays"}


def mean_std(row: dict[str, Any]) -> str:
    """Table cell ``mean ± std`` of a check row (``std`` None: the mean alone)."""
    std = row["std"]
    return format_number(row["mean"], 1) + (r" $\pm$ " + format_number(std, 1) if std is not None else "")


def _table_rows(result: dict[str, Any], horizon: int | None = None) -> list[list[str]]:
    """The rows of the terms table, at ``horizon`` only where given (else at every horizon of the grid)."""

    def at(t) -> bool:
        return horizon is None or int(t) == horizon

    def bound_label(key):
        return BOUND_LABELS.get(key, escape(key))

    def verdict(row):
        return ["pass" if row["holds"] else "fail", "yes" if row["vacuous"] else "no"]

    lines = []
    for row in result["rows"]:
        if not at(row["T"]):
            continue
        lines.append(
            [
                TERM_LABELS[row["term"]],
                bound_label(row["bound_key"]),
                str(row["T"]),
                mean_std(row),
                format_number(row["bound"], 1),
                f"{row['ratio']:.3g}",
                *verdict(row),
            ]
        )
    split = result.get("explore_split")
    if split:
        gap = split["selection_gap"]
        for t, mean, std in zip(split["T"], gap["mean"], gap["std"], strict=True):
            if not at(t):
                continue
            lines.append(
                [
                    TERM_LABELS["explore_selection_gap"],
                    "none",
                    str(t),
                    mean_std({"mean": mean, "std": std}),
                    "--",
                    "--",
                    "n/a",
                    "n/a",
                ]
            )
    for name, check in result.get("baselines", {}).items():
        for row in check["rows"]:
            if not at(row["T"]):
                continue
            if check.get("evaluated", True):
                lines.append(
                    [
                        escape(display_name(name)),
                        bound_label(check["bound_key"]),
                        str(row["T"]),
                        mean_std(row),
                        format_number(row["bound"], 1),
                        f"{row['ratio']:.3g}",
                        *verdict(row),
                    ]
                )
            else:
                lines.append(
                    [
                        escape(display_name(name)),
                        r"Thm.~1, $b$ unspecified",
                        str(row["T"]),
                        mean_std(row),
                        "--",
                        "--",
                        "n/a",
                        "n/a",
                    ]
                )
    return lines


def _exponent_macros(result: dict[str, Any]) -> dict[str, str]:
    values = {}
    for term, fit in result["exponents"].items():
        if fit is None:
            continue
        for field in ("estimate", "ci_low", "ci_high"):
            value = fit[field]
            values[macro_name("decomposition", "exponent", term, field.replace("_", " "))] = (
                "--" if value is None else f"{value:.2f}"
            )
    for name, check in result["exponent_checks"].items():
        values[macro_name("decomposition", "check", name)] = {True: "passes", False: "fails", None: "undefined"}[
            check["passes"]
        ]
    values[macro_name("decomposition", "tolerance")] = f"{result['config']['tolerance']:g}"
    values[macro_name("decomposition", "epsilon", "attn")] = f"{result['measured']['epsilon_attn']:.3g}"
    values[macro_name("decomposition", "n", "runs")] = str(result["config"]["n_runs"])
    values[macro_name("decomposition", "horizon")] = str(result["config"]["horizons"][-1])
    values[macro_name("decomposition", "n", "logged")] = str(result["config"]["n_logged"])
    ablation = result["mean_ablation"]
    values[macro_name("decomposition", "approx", "online", "mean")] = format_number(
        ablation["R_approx_online"]["mean"][-1], 1
    )
    values[macro_name("decomposition", "approx", "frozen", "mean")] = format_number(
        ablation["R_approx_frozen"]["mean"][-1], 1
    )
    fraction = ablation["removed_fraction"][-1]
    values[macro_name("decomposition", "approx", "removed", "fraction")] = (
        "--" if fraction is None else f"{fraction:.2f}"
    )
    return values


def _exponent_rows(result: dict[str, Any]) -> list[list[str]]:
    """One row per fitted exponent: term, estimate, 95% bootstrap interval over runs, runs."""

    def value(v):
        return "--" if v is None else f"{v:.2f}"

    lines = []
    for term, fit in result["exponents"].items():
        if fit is None:
            continue
        interval = "--" if fit["ci_low"] is None else f"[{value(fit['ci_low'])}, {value(fit['ci_high'])}]"
        lines.append([TERM_LABELS.get(term, escape(term)), value(fit["estimate"]), interval, str(fit["n"])])
    return lines


def write_checks(result: dict[str, Any], out_json, out_tex) -> None:
    """Write the result as ``regret_terms.json`` (arrays left out) and a LaTeX fragment, both atomically.

    The fragment holds ``\\newcommand`` macros for the exponents and their checks and the two booktabs tables, each
    as a macro so that the paper sets each where it reads it: ``\\decompositionTermsTable`` (term, bound, T, measured
    mean +- std, bound, ratio, pass/fail, vacuous) and ``\\decompositionExponentsTable`` (the growth exponents).
    """
    write_json(out_json, _jsonable(result))
    horizon = max(result["config"]["horizons"])
    table = booktabs_table(
        ["Term", "Bound", "$T$", "Measured", "Bound value", "Ratio", "Holds", "Vacuous"],
        _table_rows(result, horizon),
        "llrrrrcc",
        caption=f"Measured regret terms at the largest horizon, $T = {horizon}$ (mean $\\pm$ std over runs), against "
        "their bounds, every constant from the instance. Every horizon of the grid: the report's figure "
        "\\texttt{decomposition} and \\texttt{results/checks/regret\\_terms.json}.",
        label="tab:regret-terms",
        notes="Holds: the worst run is below the bound (run-dependent bounds: every run below its own). "
        "Vacuous: bound $\\geq T\\Delta$, $\\Delta$ the largest per-round regret of the instance.",
    )
    exponent_table = booktabs_table(
        ["Term", "Exponent", "95\\% interval", "Runs"],
        _exponent_rows(result),
        "lrcr",
        caption=f"Growth exponents $k$ in $R(T) \\propto T^k$ over $T \\in "
        f"\\{{{', '.join(str(h) for h in result['config']['horizons'])}\\}}$: "
        "least-squares slope of $\\log$ mean regret on $\\log T$, percentile bootstrap interval over runs.",
        label="tab:regret-exponents",
        notes="Selection gap: regret of $\\pi_{W^*,u^*}$ with $\\alpha = 0$ on the same draws, the part of "
        "$R_{\\mathrm{explore}}$ not caused by exploration; the remainder is $R_{\\mathrm{explore}}$ minus it, run by "
        "run.",
    )
    write_text(
        out_tex,
        macros(_exponent_macros(result))
        + "\\newcommand{\\decompositionTermsTable}{%\n"
        + table
        + "}\n\\newcommand{\\decompositionExponentsTable}{%\n"
        + exponent_table
        + "}\n",
    )


def write_arrays(result: dict[str, Any], out_npz) -> None:
    """Per-run cumulative regret of every variant and term at every horizon (``hare.io.write_npz``)."""
    arrays = result.get("arrays")
    if arrays is None:
        raise ValueError("result has no arrays (run_decomposition(..., keep_arrays=True))")
    write_npz(out_npz, **arrays)
