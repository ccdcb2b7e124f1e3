"""The measured regret decomposition over a grid of cluster counts ``C`` and key dimensions ``d_k``.

Every cell ``(C, d_k)`` is one :func:`hare.theory.decomposition.run_decomposition` on HARE-Sim
with ``n_clusters = C`` and ``key_dim = d_k`` (the learned projections get the same ``d_k``
as ``W*``), ``n_runs`` runs and the horizons of the grid. The table reports, per cell and
term, the primary bound of :data:`hare.report.theory_tables.GRID_BOUNDS` at the largest horizon ``T``
(:func:`hare.report.theory_tables.grid_table_tex`):

    term | measured mean +- std over runs | bound | ratio mean / bound | holds | vacuous | exponent [CI]

Every policy of every cell is warm-started with the same ``n_logged`` logged interactions of
the cell's environment (:func:`hare.theory.decomposition.run_decomposition`), and each cell's JSON
holds ``approx_by_mean``: ``R_approx`` with the online and the frozen mean at the largest ``T``.

``vacuous`` means ``bound >= T * Delta`` (``Delta`` the largest per-round regret of the
cell's instance); the exponent is the least-squares slope of ``log mean_runs R(T)`` on
``log T`` with its percentile bootstrap interval over runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hare.experiments.settings.theory_settings import DecompositionGridSettings
from hare.report.theory_tables import write_grid
from hare.theory.decomposition import run_decomposition

__all__ = ["decomposition_grid_check", "run_decomposition_grid"]


def run_decomposition_grid(
    env_params: dict[str, Any],
    hare_params: dict[str, Any],
    n_clusters: Sequence[int],
    key_dims: Sequence[int],
    horizons: list[int],
    n_runs: int,
    base_seed: int,
    device: str = "cpu",
    **kwargs: Any,
) -> dict[str, Any]:
    """:func:`run_decomposition` for every ``(C, d_k)`` of a grid (environment ``n_clusters`` and ``key_dim``;
    the learned projections get the same ``key_dim`` as ``W*``; ``n_logged`` and the other options pass
    through). Returns ``{"cells": [...]}`` with each cell's constants, rows at the largest horizon,
    exponents, checks and ``approx_by_mean`` (``R_approx`` with the online and the frozen mean, their
    difference and the fraction removed, at the largest horizon)."""
    cells = []
    for clusters in n_clusters:
        for key_dim in key_dims:
            result = run_decomposition(
                {**env_params, "n_clusters": int(clusters), "key_dim": int(key_dim)},
                {**hare_params, "key_dim": int(key_dim)},
                horizons,
                n_runs,
                base_seed,
                device,
                keep_arrays=False,
                **kwargs,
            )
            last = max(int(h) for h in horizons)
            cells.append(
                {
                    "n_clusters": int(clusters),
                    "key_dim": int(key_dim),
                    "constants": result["constants"],
                    "epsilon_attn": result["measured"]["epsilon_attn"],
                    "rows": [row for row in result["rows"] if row["T"] == last],
                    "exponents": result["exponents"],
                    "exponent_checks": result["exponent_checks"],
                    "user_vs_explore": result["user_vs_explore"],
                    "bounds_at_horizon": result["bounds_at_horizon"],
                    "approx_by_mean": {
                        key: result["mean_ablation"][key]["mean"][-1]
                        for key in ("R_approx_online", "R_approx_frozen", "removed_by_online_mean")
                    }
                    | {"removed_fraction": result["mean_ablation"]["removed_fraction"][-1]},
                }
            )
    return {
        "check": "regret_terms_grid",
        "horizons": sorted({int(h) for h in horizons}),
        "n_runs": int(n_runs),
        "cells": cells,
    }


def decomposition_grid_check(
    settings: DecompositionGridSettings, *, out_json: str | Path, out_tex: str | Path
) -> dict[str, Any]:
    """Run :func:`run_decomposition_grid` on the settings of a ``theory.decomposition_grid`` section, read at the
    config boundary (:func:`hare.experiments.settings.theory_section`), without the baselines, and write
    ``regret_terms_grid.json`` (with the section under ``config``) and its LaTeX fragment; returns the grid.

    ``n_logged`` is the warm start's ``M``: every policy of every cell learns from the same environment's logs. An
    optional setting the section leaves out (``None``) takes :func:`run_decomposition`'s default; ``base_seed`` 0,
    ``device`` ``cpu``. The LinUCB and LNUCB-TA baselines are not played in the grid.
    """
    grid = run_decomposition_grid(
        dict(settings.env_params or {}),
        dict(settings.hare_params or {}),
        list(settings.n_clusters),
        list(settings.key_dims),
        list(settings.horizons),
        settings.n_runs,
        settings.base_seed or 0,
        settings.device or "cpu",
        baselines=False,
        **settings.given("delta", "tolerance", "n_boot", "n_eps_queries", "n_logged"),
    )
    grid["config"] = settings.as_dict()
    write_grid(grid, out_json, out_tex)
    return grid
