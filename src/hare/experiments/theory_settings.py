"""The ``theory`` sections' settings, where the studies of :mod:`hare.theory` read them; they are checked at the
config boundary, :mod:`hare.experiments.settings.theory`."""

from hare.experiments.settings.theory import (
    GRID_KEYS,
    MIN_HORIZON_SPAN,
    MIN_POINTS,
    VARIANTS,
    cell_params,
    check_approx_budget,
    check_hare_sim,
    check_heads_alpha,
    check_positive_grid,
    check_run_settings,
    check_settings,
    check_warm_start_settings,
    variant_params,
)

__all__ = [
    "GRID_KEYS",
    "MIN_HORIZON_SPAN",
    "MIN_POINTS",
    "VARIANTS",
    "cell_params",
    "check_approx_budget",
    "check_hare_sim",
    "check_heads_alpha",
    "check_positive_grid",
    "check_run_settings",
    "check_settings",
    "check_warm_start_settings",
    "variant_params",
]
