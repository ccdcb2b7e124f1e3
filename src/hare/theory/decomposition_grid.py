"""The measured regret decomposition over a grid of cluster counts ``C`` and key dimensions ``d_k``.

Every cell ``(C, d_k)`` is one :func:`hare.theory.decomposition.run_decomposition` on HARE-Sim
with ``n_clusters = C`` and ``key_dim = d_k`` (the learned projections get the same ``d_k``
as ``W*``), ``n_runs`` runs and the horizons of the grid. The table reports, per cell and
term, the primary bound of :data:`GRID_BOUNDS` at the largest horizon ``T``:

    term | measured mean +- std over runs | bound | ratio mean / bound | holds | vacuous | exponent [CI]

Every policy of every cell is warm-started with the same ``n_logged`` logged interactions of
the cell's environment (:func:`hare.theory.decomposition.run_decomposition`), and each cell's JSON
holds ``approx_by_mean``: ``R_approx`` with the online and the frozen mean at the largest ``T``.

``vacuous`` means ``bound >= T * Delta`` (``Delta`` the largest per-round regret of the
cell's instance); the exponent is the least-squares slope of ``log mean_runs R(T)`` on
``log T`` with its percentile bootstrap interval over runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hare.io import write_json, write_text
from hare.report.decomposition import BOUND_LABELS, TERM_LABELS, mean_std
from hare.report.latex import booktabs_table, format_number, macro_name, macros
from hare.theory.decomposition import TERMS, check_settings, run_decomposition_grid

__all__ = ["GRID_BOUNDS", "decomposition_grid_check", "grid_rows", "grid_table_tex", "write_grid"]

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
    """One table row per (cell, term): ``len(cells) * len(TERMS)`` rows of 9 cells each."""
    lines = []
    for cell in grid["cells"]:
        by_key = {(row["term"], row["bound_key"]): row for row in cell["rows"]}
        for term in TERMS:
            row = by_key[(term, GRID_BOUNDS[term])]
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
        f"{', '.join(str(h) for h in grid['horizons'])} with its {_level(grid)} percentile bootstrap interval over runs."
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


def decomposition_grid_check(config: dict[str, Any], *, out_json: str | Path, out_tex: str | Path) -> dict[str, Any]:
    """Validate a ``theory.decomposition_grid`` section, run :func:`run_decomposition_grid` on it (without the
    baselines) and write ``regret_terms_grid.json`` (with the section under ``config``) and its LaTeX fragment;
    returns the grid.

    The section holds ``n_clusters``, ``key_dims``, ``horizons``, ``n_runs``, ``base_seed`` and
    optionally ``n_logged`` (the warm start's ``M``, every policy of every cell learns from the same
    environment's logs), ``env_params``, ``hare_params``, ``device``, ``delta``, ``tolerance``, ``n_boot``,
    ``n_eps_queries``. The LinUCB and LNUCB-TA baselines are not played in the grid.
    """
    check_settings(config, grid=True)
    options = {k: config[k] for k in ("delta", "tolerance", "n_boot", "n_eps_queries", "n_logged") if k in config}
    grid = run_decomposition_grid(
        config.get("env_params", {}),
        config.get("hare_params", {}),
        config["n_clusters"],
        config["key_dims"],
        config["horizons"],
        int(config["n_runs"]),
        int(config.get("base_seed", 0)),
        config.get("device", "cpu"),
        baselines=False,
        **options,
    )
    grid["config"] = config
    write_grid(grid, out_json, out_tex)
    return grid
