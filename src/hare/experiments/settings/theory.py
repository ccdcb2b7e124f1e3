"""The config's ``theory`` sections whose studies live in :mod:`hare.theory`: the regret decomposition and its grid
(:func:`check_settings`), the approximation term against the logged budget (:func:`check_approx_budget`) and the
heads x bonus-weight grid (:func:`check_heads_alpha`).

Each section is read into frozen typed settings (:mod:`hare.experiments.settings.theory_settings`), whose
construction is the check: every field's type and declared bound (:mod:`hare.typed`), then the section's rules, the
pure checks of a mapping here, each raising ``ValueError`` naming the key at fault. The config boundary reads a
section in a whole config (:func:`hare.experiments.settings.sections.check_sections`) and the one section a theory
command is given (:func:`hare.experiments.settings.sections.theory_section`) alike: the rules first, on the section
as written (their messages, prefixed with the section's path, are the refusals), then the settings. Each study
(:mod:`hare.theory.decomposition`, :mod:`hare.theory.decomposition_grid`, :mod:`hare.theory.approx_budget`,
:mod:`hare.theory.heads_alpha`) takes the settings, checks nothing again, and builds its policies from the same
:data:`VARIANTS` (:func:`variant_params`) and grid cells (:func:`cell_params`) that were checked, imported from here.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from hare.envs.synthetic import SyntheticConfig
from hare.experiments.settings.errors import ConfigError, dataclass_from
from hare.policies.hare import MEANS, HAREConfig

VARIANTS: dict[str, dict[str, str]] = {
    "full": {"projections": "learned", "user_state": "posterior"},
    "w_star": {"projections": "oracle", "user_state": "posterior"},
    "w_star_u_star": {"projections": "oracle", "user_state": "oracle"},
}
"""The three policies of the telescoping decomposition, as HAREConfig overrides."""


def variant_params(hare_params: dict[str, Any], variant: str) -> dict[str, Any]:
    """HARE's parameters for one of :data:`VARIANTS`: ``hare_params`` with the variant's overrides, without ``mode``;
    ``ValueError`` on a name that is not a :class:`HAREConfig` field."""
    known = {f.name for f in fields(HAREConfig)}
    unknown = sorted(set(hare_params) - known)
    if unknown:
        raise ValueError(f"hare_params: unknown hyperparameter(s) {unknown}")
    params = {**hare_params, **VARIANTS[variant]}
    params.pop("mode", None)
    return params


def check_warm_start_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """Check a theory section's ``n_logged`` (an integer >= 1, default 1000) and ``hare_params`` (a mapping); return
    ``hare_params``. Raises ``ValueError`` naming the key."""
    n_logged = settings.get("n_logged", 1000)
    if isinstance(n_logged, bool) or not isinstance(n_logged, int) or n_logged < 1:
        raise ValueError(
            f"n_logged: the warm start needs an integer number of logged interactions >= 1 (got {n_logged!r})"
        )
    hare_params = settings.get("hare_params") or {}
    if not isinstance(hare_params, dict):
        raise ValueError(f"hare_params: must be a mapping (got {type(hare_params).__name__})")
    return hare_params


def check_settings(settings: dict[str, Any], grid: bool = False) -> None:
    """Validate a ``theory.decomposition`` (``grid=False``) or ``theory.decomposition_grid`` section before any run.

    Checks ``n_logged`` (an integer >= 1, the warm start every policy gets), ``env_params`` (a valid
    :class:`SyntheticConfig`), ``hare_params`` (valid :class:`HAREConfig` fields for every variant, both
    means and, for a grid, every ``key_dims`` entry, in the warm regime on a synthetic environment;
    ``n_logged`` is not one of them) and ``baselines``. Raises ``ValueError`` naming the key.
    """
    if not grid:
        _check_horizon_span(settings.get("horizons"))
    hare_params = check_warm_start_settings(settings)
    if "n_logged" in hare_params:
        raise ValueError(
            "hare_params.n_logged: the warm start's M is the section's own n_logged (every policy gets the same logs), "
            "not a HARE hyperparameter"
        )
    if hare_params.get("covariance", "full") != "full":
        raise ValueError(
            f"hare_params.covariance: the decomposition's bounds and measurements (log det, eigenvalues of Sigma) "
            f"need the full per-cluster covariance (got {hare_params['covariance']!r})"
        )
    try:
        env_config = SyntheticConfig(**(settings.get("env_params") or {}))
    except (TypeError, ValueError) as error:
        raise ValueError(f"env_params: {error}") from error
    key_dims = (settings.get("key_dims") or [env_config.key_dim]) if grid else [env_config.key_dim]
    for key_dim in key_dims:
        params = {"key_dim": key_dim, **hare_params} if not grid else {**hare_params, "key_dim": key_dim}
        for variant in VARIANTS:
            for mean in (None, *MEANS):  # as given, then under both means (the mean ablation)
                try:
                    config = HAREConfig(
                        **{**variant_params(params, variant), **({} if mean is None else {"mean": mean})}
                    )
                    config.check_regime("warm")
                    config.check_environment("synthetic")
                except (TypeError, ValueError) as error:
                    raise ValueError(
                        f"hare_params ({variant}{'' if mean is None else f', mean {mean}'}): {error}"
                    ) from error
    baselines = settings.get("baselines", True)
    if not isinstance(baselines, bool) and (
        not isinstance(baselines, list | tuple) or set(baselines) - {"linucb", "lnucb_ta"}
    ):
        raise ValueError(f"baselines: true, false or a list of linucb, lnucb_ta (got {baselines!r})")


MIN_HORIZON_SPAN = 4.0
"""Smallest ``max(horizons) / min(horizons)`` a growth-exponent fit is run on: over a narrower grid the
log-log slope of ``sqrt(T) log T`` alone moves by more than the exponents it is meant to separate."""


def _check_horizon_span(horizons: Any) -> None:
    """``horizons``: at least two distinct positive integers spanning a factor ``>= MIN_HORIZON_SPAN``."""
    if not isinstance(horizons, list | tuple) or any(
        isinstance(h, bool) or not isinstance(h, int) or h < 1 for h in horizons
    ):
        raise ValueError(f"horizons: must be a list of positive integers (got {horizons!r})")
    if len(set(horizons)) < 2:
        raise ValueError(f"horizons: an exponent fit needs at least two distinct horizons (got {horizons!r})")
    span = max(horizons) / min(horizons)
    if span < MIN_HORIZON_SPAN:
        raise ValueError(
            f"horizons: the grid spans {span:g}x (max/min); growth exponents need at least {MIN_HORIZON_SPAN:g}x (got "
            f"{horizons!r})"
        )


# --------------------------------------------------------------------------
# The approximation budget and the heads x alpha grid
# --------------------------------------------------------------------------

MIN_POINTS = 4
"""Fewest grid values an exponent is fitted on."""


def check_positive_grid(values: Any, key: str, kind: type = int, minimum: int = MIN_POINTS) -> list:
    """A list of at least ``minimum`` distinct positive numbers of type ``kind``; ``ValueError`` naming ``key``
    otherwise."""
    if not isinstance(values, list | tuple) or len(values) < minimum:
        raise ValueError(f"{key}: an exponent needs a list of at least {minimum} values (got {values!r})")
    allowed = (int,) if kind is int else (int, float)
    if any(isinstance(v, bool) or not isinstance(v, allowed) or not v > 0 for v in values):
        raise ValueError(
            f"{key}: every value must be a positive {'integer' if kind is int else 'number'} (got {values!r})"
        )
    if len(set(values)) != len(values):
        raise ValueError(f"{key}: values must be distinct (got {values!r})")
    return list(values)


def check_run_settings(settings: dict[str, Any]) -> None:
    """``horizon`` (int >= 1), ``n_runs`` (int >= 2), ``n_boot`` (int >= 1), ``base_seed`` (int >= 0); ``ValueError``
    naming the key."""
    for key, low, required in (
        ("horizon", 1, True),
        ("n_runs", 2, True),
        ("n_boot", 1, False),
        ("base_seed", 0, False),
    ):
        if key not in settings:
            if required:
                raise ValueError(f"{key}: required")
            continue
        value = settings[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{key}: must be an integer >= {low} (got {value!r})")


def check_approx_budget(settings: dict[str, Any]) -> None:
    """Validate a ``theory.approx_budget`` section: ``budgets`` (>= 4 distinct positive integers, the ``M`` grid),
    the run settings, and ``env_params``/``hare_params`` through :func:`check_settings`
    at every ``M``. Raises ``ValueError`` naming the key."""
    budgets = check_positive_grid(settings.get("budgets"), "budgets")
    check_run_settings(settings)
    for budget in budgets:
        check_hare_sim(settings.get("env_params") or {}, settings.get("hare_params") or {}, budget)


def check_hare_sim(env_params: Any, hare_params: Any, n_logged: int) -> None:
    """``env_params`` and ``hare_params`` through :func:`check_settings` (every variant
    and mean, warm regime, HARE's own ``key_dim``, default the environment's); ``ValueError`` naming the key."""
    try:
        key_dim = SyntheticConfig(**env_params).key_dim
    except (TypeError, ValueError) as error:
        raise ValueError(f"env_params: {error}") from error
    if not isinstance(hare_params, dict):
        raise ValueError(f"hare_params: must be a mapping (got {type(hare_params).__name__})")
    check_settings(
        {
            "env_params": env_params,
            "hare_params": hare_params,
            "n_logged": n_logged,
            "baselines": False,
            "key_dims": [hare_params.get("key_dim", key_dim)],
        },
        grid=True,
    )


GRID_KEYS = ("n_heads", "alpha")
"""The axes of the heads x alpha grid: HARE hyperparameters a ``theory.heads_alpha`` section may not fix."""


def cell_params(hare_params: dict[str, Any], heads: int, alpha: float) -> dict[str, Any]:
    """HARE's parameters in the cell ``(H = heads, alpha)`` of the heads x alpha grid."""
    return {**hare_params, "n_heads": int(heads), "alpha": float(alpha)}


def check_heads_alpha(settings: dict[str, Any]) -> None:
    """Validate a ``theory.heads_alpha`` section; ``ValueError`` naming the key.

    ``heads``: >= 2 distinct positive integers; ``alphas``: >= 2 distinct numbers >= 0; ``horizon``,
    ``n_runs``, ``n_boot``, ``base_seed``, ``n_logged`` (int >= 1); ``hare_params`` must not set the grid's
    axes (``n_heads``, ``alpha``) and must give a valid warm-regime HARE config on HARE-Sim in every cell.
    """
    heads = check_positive_grid(settings.get("heads"), "heads", minimum=2)
    alphas = settings.get("alphas")
    if not isinstance(alphas, list | tuple) or len(alphas) < 2:
        raise ValueError(f"alphas: an exponent needs a list of at least 2 values (got {alphas!r})")
    if any(isinstance(a, bool) or not isinstance(a, int | float) or not a >= 0 for a in alphas) or len(
        set(alphas)
    ) != len(alphas):
        raise ValueError(f"alphas: must be distinct numbers >= 0 (got {alphas!r})")
    check_run_settings(settings)
    hare_params = check_warm_start_settings(settings)
    for key in GRID_KEYS:
        if key in hare_params:
            raise ValueError(f"hare_params.{key}: an axis of the grid (heads, alphas), not a fixed hyperparameter")
    if hare_params.get("alpha_schedule", "fixed") != "fixed":
        raise ValueError(
            f"hare_params.alpha_schedule: must be 'fixed' (alpha is the bonus weight of every round; got "
            f"{hare_params['alpha_schedule']!r})"
        )
    check_hare_sim(settings.get("env_params") or {}, hare_params, settings.get("n_logged", 1000))
    key_dim = SyntheticConfig(**(settings.get("env_params") or {})).key_dim
    for h in heads:
        for a in alphas:
            try:
                config = HAREConfig(**{"key_dim": key_dim, **cell_params(hare_params, h, a)})
                config.check_regime("warm")
                config.check_environment("synthetic")
            except (TypeError, ValueError) as error:
                raise ValueError(f"hare_params (H = {h}, alpha = {a}): {error}") from error


def check_decomposition_grid(grid: dict[str, Any], where: str = "theory.decomposition_grid") -> None:
    """Every ``(C, d_k)`` cell of the grid must be a valid HARE-Sim instance (``C <= n_items``); a
    :class:`ConfigError` naming the key path."""
    base = dataclass_from(SyntheticConfig, grid.get("env_params", {}), f"{where}.env_params")
    for key in ("n_clusters", "key_dims"):
        if not grid.get(key) or any(not isinstance(v, int) or v < 1 for v in grid[key]):
            raise ConfigError(f"{where}.{key}: must be a non-empty list of positive integers (got {grid.get(key)!r})")
    too_many = [c for c in grid["n_clusters"] if c > base.n_items]
    if too_many:
        raise ConfigError(f"{where}.n_clusters: {too_many} exceed the {base.n_items} items of env_params.n_items")
