"""LaTeX of the theory studies' results, rendered from their result mappings (plain data, as written to JSON):

* the approximation term against the logged budget ``M`` (:func:`hare.theory.approx_budget.run_approx_budget`):
  :func:`approx_budget_tex`, :func:`write_approx_budget`;
* the regret over heads ``H`` x bonus weights ``alpha`` (:func:`hare.theory.heads_alpha.run_heads_alpha`):
  :func:`heads_alpha_tex`, :func:`write_heads_alpha`;
* the regret decomposition over a ``(C, d_k)`` grid (:func:`hare.theory.decomposition.run_decomposition_grid`):
  :func:`grid_rows`, :func:`grid_table_tex`, :func:`write_grid`;
* the OFUL check's macros (:func:`hare.theory.oful_check.oful_check`): :func:`oful_macros`, :func:`write_oful`.

The single decomposition's table and macros are :mod:`hare.report.decomposition`, the bounds' macros
:mod:`hare.report.bounds`.
"""

from __future__ import annotations

from typing import Any

from hare.io import write_json, write_text
from hare.report.decomposition import BOUND_LABELS, TERM_LABELS, mean_std
from hare.report.latex import booktabs_table, format_number, macro_name, macros

UNSERIALISED = ("arrays", "wall_seconds", "cpu_seconds")
"""Result fields left out of the JSON of the budget and heads x alpha studies: the arrays, and the timings (printed to
the log), so the file is byte-identical between two builds."""


# --------------------------------------------------------------------------
# R_approx against the logged budget M
# --------------------------------------------------------------------------


def approx_budget_tex(result: dict[str, Any]) -> str:
    """Macros (exponent, CI, horizon, runs) and a booktabs table ``M | R_approx mean +- std | eps_attn``."""
    fit = result["exponent"]
    values = {
        macro_name("approx", "budget", "horizon"): str(result["horizon"]),
        macro_name("approx", "budget", "n", "runs"): str(result["config"]["n_runs"]),
        macro_name("approx", "budget", "eps", "slope"): "--"
        if result["epsilon_attn"]["slope"] is None
        else f"{result['epsilon_attn']['slope']:.2f}",
    }
    for field in ("estimate", "ci_low", "ci_high"):
        value = None if fit is None else fit[field]
        values[macro_name("approx", "budget", "exponent", field.replace("_", " "))] = (
            "--" if value is None else f"{value:.2f}"
        )
    rows = []
    for k, budget in enumerate(result["budgets"]):
        std = result["r_approx"]["std"][k]
        cell = format_number(result["r_approx"]["mean"][k], 1) + (
            "" if std is None else r" $\pm$ " + format_number(std, 1)
        )
        rows.append([str(budget), cell, f"{result['epsilon_attn']['values'][k]:.3g}"])
    exponent = (
        "undefined (non-positive mean)"
        if fit is None
        else (
            f"{fit['estimate']:.2f}"
            + ("" if fit["ci_low"] is None else f" [{fit['ci_low']:.2f}, {fit['ci_high']:.2f}]")
        )
    )
    table = booktabs_table(
        ["$M$", r"$R_{\mathrm{approx}}$", r"$\epsilon_{\mathrm{attn}}$"],
        rows,
        "rrr",
        caption=(
            f"$R_{{\\mathrm{{approx}}}} = R(\\pi_{{\\mathrm{{full}}}}) - R(\\pi_{{W^*}})$ at $T = {result['horizon']}$ "
            f"against the "
            f"logged budget $M$ (mean $\\pm$ std over {result['config']['n_runs']} runs). Exponent in $M$: {exponent} "
            f"(least-squares log-log slope, 95\\% percentile bootstrap over runs; the bound predicts $-1/2$)."
        ),
        label="tab:approx-budget",
    )
    return macros(values) + table


def write_approx_budget(result: dict[str, Any], out_json, out_tex) -> None:
    """``approx_budget.json`` (arrays left out) and its LaTeX fragment, both atomically."""
    write_json(out_json, {k: v for k, v in result.items() if k not in UNSERIALISED})
    write_text(out_tex, approx_budget_tex(result))


# --------------------------------------------------------------------------
# Heads H x bonus weight alpha
# --------------------------------------------------------------------------


def fit_text(fit: dict[str, Any] | None) -> str:
    if fit is None:
        return "--"
    return f"{fit['estimate']:.2f}" + ("" if fit["ci_low"] is None else f" [{fit['ci_low']:.2f}, {fit['ci_high']:.2f}]")


def heads_alpha_tex(result: dict[str, Any]) -> str:
    """Macros (pooled exponents and intervals, horizon, runs) and a table: rows ``H``, columns ``alpha`` (regret mean +-
    std),
    a last column with the exponent in ``g`` at that ``H`` and a last row with the exponent in ``H`` at that
    ``alpha``."""
    values = {
        macro_name("heads", "alpha", "horizon"): str(result["horizon"]),
        macro_name("heads", "alpha", "n", "runs"): str(result["config"]["n_runs"]),
        macro_name("heads", "alpha", "key", "dim"): str(result["key_dim"]),
    }
    for axis, fit in (("heads", result["exponent_H"]["pooled"]), ("factor", result["exponent_g"]["pooled"])):
        for field in ("estimate", "ci_low", "ci_high"):
            value = None if fit is None else fit[field]
            values[macro_name("heads", "alpha", "exponent", axis, field.replace("_", " "))] = (
                "--" if value is None else f"{value:.2f}"
            )
    mean, std = result["regret"]["mean"], result["regret"]["std"]
    rows = []
    for i, h in enumerate(result["heads"]):
        cells = [
            format_number(m, 1) + ("" if s is None else r" $\pm$ " + format_number(s, 1))
            for m, s in zip(mean[i], std[i], strict=True)
        ]
        rows.append([str(h), *cells, fit_text(result["exponent_g"]["by_H"][i])])
    rows.append([])
    rows.append(["exp.\\ in $H$", *(fit_text(f) for f in result["exponent_H"]["by_alpha"]), ""])
    header = ["$H$", *(f"$\\alpha = {a:g}$" for a in result["alphas"]), r"exp.\ in $g$"]
    table = booktabs_table(
        header,
        rows,
        "r" + "r" * len(result["alphas"]) + "l",
        caption=(
            f"Total pseudo-regret of HARE at $T = {result['horizon']}$ on linear HARE-Sim (mean $\\pm$ std over "
            f"{result['config']['n_runs']} paired runs) for $H$ heads and bonus weight $\\alpha$. Exponents: "
            f"least-squares "
            f"log-log slope in $H$ (last row) and in $g(\\alpha) = 1 + \\alpha^2/d_k$, $d_k = {result['key_dim']}$ "
            f"(last column), "
            f"with 95\\% percentile bootstrap intervals over runs. Pooled: {fit_text(result['exponent_H']['pooled'])} "
            f"in $H$, "
            f"{fit_text(result['exponent_g']['pooled'])} in $g$; the notes' theorem bounds them by $1/2$ and $1$."
        ),
        label="tab:heads-alpha",
        resize=True,
    )
    return macros(values) + table


def write_heads_alpha(result: dict[str, Any], out_json, out_tex) -> None:
    """``heads_alpha.json`` (arrays left out) and its LaTeX fragment, both atomically."""
    write_json(out_json, {k: v for k, v in result.items() if k not in UNSERIALISED})
    write_text(out_tex, heads_alpha_tex(result))


# --------------------------------------------------------------------------
# The decomposition over the (C, d_k) grid
# --------------------------------------------------------------------------


GRID_BOUNDS = {"approx": "hare_approx", "user": "user_regret_sum_rescaled", "explore": "hare_explore_oful"}
"""The bound each term is compared with in the grid table (the derived ones; all rows stay in the JSON)."""


def _exponent(fit: dict[str, Any] | None) -> str:
    if not fit or fit["estimate"] is None:
        return "--"
    interval = "" if fit["ci_low"] is None else f" [{fit['ci_low']:.2f}, {fit['ci_high']:.2f}]"
    return f"{fit['estimate']:.2f}{interval}"


def _level(grid: dict[str, Any]) -> str:
    levels = {fit["level"] for cell in grid["cells"] for fit in cell["exponents"].values() if fit}
    return ", ".join(f"{100 * level:g}\\%" for level in sorted(levels)) or "--"


def grid_rows(grid: dict[str, Any]) -> list[list[str]]:
    """One table row per (cell, term): ``len(cells) * len(GRID_BOUNDS)`` rows of 9 cells each."""
    lines = []
    for cell in grid["cells"]:
        by_key = {(row["term"], row["bound_key"]): row for row in cell["rows"]}
        for term, bound_key in GRID_BOUNDS.items():
            row = by_key[(term, bound_key)]
            lines.append(
                [
                    str(cell["n_clusters"]),
                    str(cell["key_dim"]),
                    TERM_LABELS[term],
                    mean_std(row),
                    format_number(row["bound"], 1),
                    f"{row['ratio']:.3g}",
                    "pass" if row["holds"] else "fail",
                    "yes" if row["vacuous"] else "no",
                    _exponent(cell["exponents"].get(term)),
                ]
            )
    return lines


def grid_table_tex(grid: dict[str, Any]) -> str:
    """Macros (run count, largest horizon, cell count) and a booktabs table of :func:`grid_rows`."""
    horizon = max(grid["horizons"])
    bounds = "; ".join(f"{TERM_LABELS[t]}: {BOUND_LABELS[k]}" for t, k in GRID_BOUNDS.items())
    caption = (
        f"Measured regret terms over the grid of cluster counts $C$ and key dimensions $d_k$ at $T = {horizon}$: "
        f"mean $\\pm$ sample standard deviation over {grid['n_runs']} runs per cell (the error bar is the spread "
        f"of the runs, not a confidence interval). Exponent: least-squares log-log slope over the horizons "
        f"{', '.join(str(h) for h in grid['horizons'])} with its {_level(grid)} percentile bootstrap interval over "
        f"runs."
    )
    table = booktabs_table(
        ["$C$", "$d_k$", "Term", "Measured", "Bound", "Ratio", "Holds", "Vacuous", "Exponent"],
        grid_rows(grid),
        "rrlrrrccl",
        caption,
        "tab:regret-terms-grid",
        notes=f"Bounds: {bounds}. Holds: the worst run is below the bound. Vacuous: bound $\\geq T\\Delta$.",
        resize=True,
    )
    values = {
        macro_name("decomposition", "grid", "n", "runs"): str(grid["n_runs"]),
        macro_name("decomposition", "grid", "horizon"): str(horizon),
        macro_name("decomposition", "grid", "n", "cells"): str(len(grid["cells"])),
    }
    return macros(values) + table


def write_grid(grid: dict[str, Any], out_json, out_tex) -> None:
    """``regret_terms_grid.json`` and its LaTeX fragment, both atomically."""
    write_json(out_json, grid)
    write_text(out_tex, grid_table_tex(grid))


# --------------------------------------------------------------------------
# OFUL (LinUCB) against its bound
# --------------------------------------------------------------------------


def oful_macros(result: dict[str, Any]) -> dict[str, str]:
    """The ``\\ofulXxx`` macros of an OFUL check result (its JSON mapping): horizon, measured mean, bound and trivial
    bound at the horizon, their ratio, the stacked dimension ``dK``, ``delta``, runs, the verdicts and the premise."""
    constants, premise = result["constants"], result["premise"]
    return {
        macro_name("oful", "horizon"): str(result["horizon"]),
        macro_name("oful", "measured"): format_number(float(result["measured_mean"][-1]), 1),
        macro_name("oful", "bound"): format_number(float(result["bound_at_horizon"]), 0),
        macro_name("oful", "trivial"): format_number(float(result["trivial_at_horizon"]), 0),
        macro_name("oful", "ratio"): f"{result['ratio_at_horizon']:.3g}",
        macro_name("oful", "dim"): str(constants["d"]),
        macro_name("oful", "delta"): f"{constants['delta']:g}",
        macro_name("oful", "n", "runs"): str(result["n_runs"]),
        macro_name("oful", "holds"): "holds" if result["holds"] else "is violated",
        macro_name("oful", "vacuous"): "vacuous" if result["vacuous_at_horizon"] else "non-vacuous",
        macro_name("oful", "premise", "fraction"): f"{premise['fraction_inside']['estimate']:.3f}",
        macro_name("oful", "premise", "holds"): "holds" if premise["premise_holds"] else "fails",
    }


def oful_tex(result: dict[str, Any]) -> str:
    """The ``\\newcommand`` lines of :func:`oful_macros`."""
    return macros(oful_macros(result))


def write_oful(result: dict[str, Any], out_json, out_tex) -> None:
    """``oful.json`` and its macros, both atomically."""
    write_json(out_json, result)
    write_text(out_tex, oful_tex(result))
