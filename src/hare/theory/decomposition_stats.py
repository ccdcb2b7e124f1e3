"""The statistics of the regret decomposition (paper, sec:decomposition) on what
:mod:`hare.theory.decomposition_observer` measured: the bounds at every horizon and their rows, the exponent fits
and their checks, and the bounds at the largest horizon. The comparisons (the explore split, ``R_user`` against
``R_explore``, the mean
ablation and the baselines) are :mod:`hare.theory.decomposition_comparisons`.

Warm start and the bounds: the online rounds are rounds ``M+1..M+T`` of ridge states that
start from the ``M`` logged interactions. The width sums and log-determinants then run to
``M + T``, so the OFUL-type bounds (``hare_explore_oful``, ``linucb_oful``) are evaluated as
``sqrt(T / (M + T)) * bound(M + T)`` (their form ``2 beta_T sqrt(C T 2 d log(1 + T B^2/(lam d)))``
with ``T`` kept outside and ``M + T`` inside the radius and the logarithm; Cauchy-Schwarz runs
over the ``T`` online rounds only); the user sum takes ``log((M + s)/delta)`` for online round
``s``. With ``mean: online`` the ridge estimate is shrunk to ``theta0_j``, so the radius's
parameter norm is ``S_prior = max_j max_{n in j} ||k_n - mean_{m in j} k_m|| / sqrt(d_k)``
(``||theta*_j - theta0_j||`` for any ``theta*_j`` in the hull of cluster ``j``'s item parameters),
not ``S``; the constant used is reported as ``explore_parameter_norm``.

Bounds at every ``T`` of the grid: ``R_approx <= L_f T epsilon_attn`` (``hare_approx``);
``R_explore`` against ``hare_explore_oful`` and the notes' ``hare_explore``; ``R_user``
against :func:`hare.theory.bounds.user_regret_sum` on the measured ``lambda_min(t)`` of each
run, once as the notes write it (factor ``sigma``) and once rescaled (factor 1, because the
precision already carries ``1/sigma^2``: seed issue ``seed001_user_concentration``). Each
row reports the mean and standard deviation over runs, the bound, their ratio, ``holds``
(the worst run is below the bound; for run-dependent bounds every run is below its own)
and ``vacuous`` (bound ``>= T Delta``).

Growth exponents: the least-squares slope of ``log mean_runs R(T)`` on ``log T`` over the
grid, with a percentile bootstrap interval over runs (runs resampled with replacement by a
seeded ``numpy`` Generator; resamples whose mean curve is not positive at every ``T`` are
dropped and counted). Checks: exponent of ``R_explore`` and ``R_user`` at most
``0.5 + tolerance``; exponent of ``R_approx`` at least 0.8 (linear growth at fixed
``epsilon_attn``). The exponent of each bound over the same grid is reported next to it:
``sqrt(T) log T`` has a local log-log slope ``0.5 + 1/log T``, above 0.5 at any finite grid.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hare.policies.hare import HAREConfig
from hare.statistics import fit_exponent, is_vacuous, slope, t_interval
from hare.theory.bound_table import BOUNDS
from hare.theory.bounds import user_regret_sum

__all__ = [
    "APPROX_MIN_EXPONENT",
    "S_FLOOR",
    "SQRT_EXPONENT",
    "TERMS",
    "bound_rows",
    "bounds_at_horizon",
    "elliptical_potential_check",
    "exponent_checks",
    "exponent_fits",
    "explore_constants",
    "explore_radius",
    "run_std",
    "term_bounds",
    "term_rows",
    "warm_bound",
    "warm_user_regret_sum",
]

TERMS = ("approx", "user", "explore")
"""The three terms, ``R_approx``, ``R_user`` and ``R_explore``, by the keys they have in the result file."""
APPROX_MIN_EXPONENT = 0.8
SQRT_EXPONENT = 0.5


def run_std(curves: np.ndarray) -> list[float | None]:
    """Sample standard deviation over runs at every horizon; None with a single run."""
    if curves.shape[0] < 2:
        return [None] * curves.shape[1]
    return curves.std(0, ddof=1).tolist()


def bound_rows(measured: np.ndarray, bound: np.ndarray, horizons: np.ndarray, max_gap: float) -> list[dict[str, Any]]:
    """Rows of one (term, bound) pair: measured ``(n_runs, n_T)``; bound ``(n_T,)`` or per run ``(n_runs, n_T)``."""
    bound = np.asarray(bound, dtype=float)
    per_run = bound.ndim == 2
    rows = []
    for k, horizon in enumerate(horizons):
        values = measured[:, k]
        b = bound[:, k] if per_run else np.full_like(values, bound[k])
        mean_bound = float(b.mean())
        rows.append(
            {
                "T": int(horizon),
                "mean": float(values.mean()),
                "std": float(values.std(ddof=1)) if values.size > 1 else None,
                "worst": float(values.max()),
                "bound": mean_bound,
                "bound_min": float(b.min()),
                "bound_per_run": per_run,
                "ratio": float(values.mean() / mean_bound),
                "holds": bool(np.all(values <= b)),
                "vacuous": bool(np.all(is_vacuous(b, horizon, max_gap))),
                "trivial_bound": float(horizon * max_gap),
            }
        )
    return rows


S_FLOOR = 1e-12
"""``S_prior`` is 0 when every cluster holds one item (the prior is then the true parameter); the bound's
symbols are positive, so its ``S -> 0`` limit is evaluated at ``S = S_FLOOR``, which moves it by
``sqrt(lam) * 1e-12`` at most."""


def explore_constants(constants: dict[str, Any], config: HAREConfig, delta: float) -> dict[str, float]:
    """Constants of ``hare_explore_oful``; the parameter norm is ``S_prior`` for the online mean (module docstring),
    floored at :data:`S_FLOOR`."""
    return {
        "C": constants["n_clusters"],
        "d_k": constants["key_dim"],
        "lam": config.lam,
        "delta": delta,
        "sigma": constants["noise_sigma"],
        "S": max(constants["S_prior" if config.mean == "online" else "S"], S_FLOOR),
        "B_x": constants["query_norm_bound"],
    }


def warm_bound(key: str, T: np.ndarray, n_logged: int, **constants: float) -> np.ndarray:
    """An OFUL-type bound (``hare_explore_oful``, ``linucb_oful``) for online rounds ``M+1..M+T`` after a warm
    start of ``M`` rounds: ``sqrt(T / (M + T)) * bound(M + T)`` (module docstring); ``bound(T)`` when ``M = 0``."""
    total = np.asarray(T, dtype=float) + n_logged
    return (
        np.sqrt(np.asarray(T, dtype=float) / total)
        * np.asarray(BOUNDS[key].numeric(T=total, **constants), dtype=float)
        * np.ones_like(total)
    )


def warm_user_regret_sum(lambda_min: np.ndarray, n_logged: int, **constants: float) -> np.ndarray:
    """user_regret_sum (:func:`hare.theory.bounds.user_regret_sum`) over online rounds ``s = 1..T`` shown as ``M + s``:
    the union over rounds
    takes ``log((M + s)/delta)``; ``lambda_min`` ``(T,)`` is measured in the online rounds."""
    padded = np.concatenate([np.ones(n_logged), np.asarray(lambda_min, dtype=float)])
    total = user_regret_sum(padded, **constants)
    return total[n_logged:] - (total[n_logged - 1] if n_logged else 0.0)


def elliptical_potential_check(
    sim: dict[str, Any], horizons: np.ndarray, d_k: int, lam: float, query_bound: float, n_logged: int = 0
) -> dict[str, Any]:
    """Measured capped width sum of ``pi_W*,u*`` against ``2 log det`` and its closed form (Lemmas 10-11).

    The online widths are summed over the ``T`` online rounds; the covariances also hold the ``M``
    logged rounds of the warm start, so the per-cluster counts and the over-clusters form run to ``M + T``."""
    counts = sim["cluster_counts"]  # (n_runs, H, C, n_T)
    closed = np.zeros(counts.shape[:2] + counts.shape[3:])
    for index in np.ndindex(*counts.shape):
        pulls = counts[index]
        if pulls > 0:
            closed[index[0], index[1], index[3]] += BOUNDS["elliptical_potential"].numeric(
                T=pulls, d=d_k, lam=lam, B_x=query_bound
            )
    aggregate = (
        np.array([d_k * 2 * math.log(1 + (h + n_logged) * query_bound**2 / (lam * d_k)) for h in horizons])
        * counts.shape[2]
    )
    measured, log_det = sim["potential"], 2 * sim["log_det_ratio"]
    return {
        "description": "sum_t min(1, U_{t,j_t}^2) of pi_W*,u* over the online rounds (widths before the update) <= "
        "sum_j 2 log "
        "det(Sigma_j)/det(lam I) <= sum_j 2 d_k log(1 + T_j B_q^2/(lam d_k)) <= C 2 d_k log(1 + (M + T) B_q^2/(lam "
        "d_k)), "
        "T_j counting the M warm-start rounds too; mean over runs and heads.",
        "n_logged": int(n_logged),
        "T": horizons.tolist(),
        "measured_mean": measured.mean((0, 1)).tolist(),
        "measured_max": measured.max((0, 1)).tolist(),
        "two_log_det_mean": log_det.mean((0, 1)).tolist(),
        "closed_form_mean": closed.mean((0, 1)).tolist(),
        "closed_form_over_clusters_T": aggregate.tolist(),
        "measured_le_log_det": bool(np.all(measured <= log_det + 1e-9)),
        "log_det_le_closed_form": bool(np.all(log_det <= closed + 1e-9)),
        "holds": bool(np.all(measured <= closed + 1e-9)),
    }


def term_bounds(
    constants: dict[str, Any],
    config: HAREConfig,
    epsilon_attn: float,
    lambda_min_active: np.ndarray,
    lambda_max: np.ndarray,
    horizons: np.ndarray,
    n_logged: int,
    delta: float,
) -> dict[tuple[str, str], np.ndarray]:
    """Every bound of the module docstring at ``horizons`` ``(n_T,)``: ``{(term, bound key): (n_T,) or (n_runs, n_T)}``.

    ``R_approx <= L_f T epsilon_attn`` (``hare_approx``); ``R_explore`` against :func:`warm_bound` of
    ``hare_explore_oful`` (constants of :func:`explore_constants`) and the notes' ``hare_explore`` (``lambda_max``
    ``(n_T,)``); ``R_user`` against :func:`warm_user_regret_sum` of each run's ``lambda_min_active`` ``(n_runs, T)``
    with the factor ``sigma`` (``user_regret_sum``) and with factor 1 (``user_regret_sum_rescaled``).
    """
    T = horizons.astype(float)
    index = horizons - 1
    r_user_seed = np.stack(
        [
            warm_user_regret_sum(
                run,
                n_logged,
                L_u=constants["L_u"],
                sigma=constants["noise_sigma"],
                d_u=constants["user_dim"],
                delta=delta,
            )[index]
            for run in lambda_min_active
        ]
    )
    return {
        ("approx", "hare_approx"): np.asarray(
            BOUNDS["hare_approx"].numeric(T=T, L_f=constants["L_f"], epsilon_attn=epsilon_attn)
        )
        * np.ones_like(T),
        ("explore", "hare_explore_oful"): warm_bound(
            "hare_explore_oful", T, n_logged, **explore_constants(constants, config, delta)
        ),
        ("explore", "hare_explore"): np.asarray(
            BOUNDS["hare_explore"].numeric(
                T=T,
                alpha=config.alpha,
                d_k=constants["key_dim"],
                C=constants["n_clusters"],
                lambda_max=lambda_max,
                delta=delta,
            )
        ),
        ("user", "user_regret_sum"): r_user_seed,
        ("user", "user_regret_sum_rescaled"): r_user_seed / constants["noise_sigma"],
    }


TOTAL_BOUND_KEY = "hare_approx + hare_explore_oful + user_regret_sum_rescaled"
"""The ``bound_key`` of the total's rows: the sum of the three derived bounds."""


def term_rows(
    terms: dict[str, np.ndarray],
    r_full: np.ndarray,
    bounds: dict[tuple[str, str], np.ndarray],
    horizons: np.ndarray,
    max_gap: float,
) -> list[dict[str, Any]]:
    """:func:`bound_rows` of every (term, bound) pair of ``bounds``, each row led by ``term`` and ``bound_key``, then
    the total ``R(pi_full)`` against the sum of the three derived bounds (:data:`TOTAL_BOUND_KEY`)."""
    rows = []
    for (term, key), bound in bounds.items():
        for row in bound_rows(terms[term], bound, horizons, max_gap):
            rows.append({"term": term, "bound_key": key, **row})
    total_bound = (
        bounds[("approx", "hare_approx")]
        + bounds[("explore", "hare_explore_oful")]
        + bounds[("user", "user_regret_sum_rescaled")]
    )
    for row in bound_rows(r_full, total_bound, horizons, max_gap):
        rows.append({"term": "total", "bound_key": TOTAL_BOUND_KEY, **row})
    return rows


def exponent_fits(
    horizons: np.ndarray,
    terms: dict[str, np.ndarray],
    selection_gap: np.ndarray,
    bounds: dict[tuple[str, str], np.ndarray],
    n_boot: int,
    seed: int,
) -> dict[str, Any]:
    """Growth exponent of every term of :data:`TERMS` (``None`` with one horizon; seeds ``seed + k``), each with
    ``bound_exponents`` (the log-log slope of every bound of the term), then of the selection gap and of
    ``R_explore`` minus it, run by run (seeds ``seed + 3``, ``seed + 4``)."""
    exponents = {}
    for offset, term in enumerate(TERMS):
        exponents[term] = (
            fit_exponent(horizons, terms[term], n_boot=n_boot, seed=seed + offset) if horizons.size >= 2 else None
        )
    if horizons.size >= 2:
        log_T = np.log(horizons.astype(float))
        for (term, key), bound in bounds.items():
            mean_bound = np.atleast_2d(bound).mean(0)
            exponents[term].setdefault("bound_exponents", {})[key] = float(slope(log_T, np.log(mean_bound)))
        exponents["explore_selection_gap"] = fit_exponent(
            horizons, selection_gap, n_boot=n_boot, seed=seed + len(TERMS)
        )
        exponents["explore_minus_selection_gap"] = fit_exponent(
            horizons, terms["explore"] - selection_gap, n_boot=n_boot, seed=seed + len(TERMS) + 1
        )
    return exponents


def exponent_checks(exponents: dict[str, Any], tolerance: float) -> dict[str, dict[str, Any]]:
    """The exponents of ``R_explore`` and ``R_user`` at most ``1/2 + tolerance``, that of ``R_approx`` at least
    :data:`APPROX_MIN_EXPONENT`: ``passes`` on the estimate, ``ci_within`` on the interval (``None`` if undefined)."""
    checks = {}
    for term in ("explore", "user"):
        fit = exponents[term]
        threshold = SQRT_EXPONENT + tolerance
        checks[f"{term}_exponent_le_half_plus_tolerance"] = {
            "threshold": threshold,
            "tolerance": tolerance,
            "passes": None if not fit or fit["estimate"] is None else bool(fit["estimate"] <= threshold),
            "ci_within": None if not fit or fit["ci_high"] is None else bool(fit["ci_high"] <= threshold),
        }
    fit = exponents["approx"]
    checks["approx_exponent_ge_linear_threshold"] = {
        "threshold": APPROX_MIN_EXPONENT,
        "passes": None if not fit or fit["estimate"] is None else bool(fit["estimate"] >= APPROX_MIN_EXPONENT),
        "ci_within": None if not fit or fit["ci_low"] is None else bool(fit["ci_low"] >= APPROX_MIN_EXPONENT),
    }
    return checks


def explore_radius(
    observations: np.ndarray, constants: dict[str, Any], lam: float, delta: float, parameter_norm: float
) -> list[float]:
    """OFUL's radius with a union over clusters at every number of observations ``n`` (``M + T``):
    ``beta_n = sigma sqrt(2 log(C/delta) + d_k log(1 + n B_q^2/(lam d_k))) + sqrt(lam) S``."""
    radii = []
    for horizon in observations:
        log_det = constants["key_dim"] * math.log(
            1 + horizon * constants["query_norm_bound"] ** 2 / (lam * constants["key_dim"])
        )
        radius = (
            constants["noise_sigma"] * math.sqrt(2 * math.log(constants["n_clusters"] / delta) + log_det)
            + math.sqrt(lam) * parameter_norm
        )
        radii.append(radius)
    return radii


def bounds_at_horizon(
    rows: list[dict[str, Any]], terms: dict[str, np.ndarray], total: np.ndarray, horizons: np.ndarray, max_gap: float
) -> dict[str, dict[str, Any]]:
    """Every (term, bound) pair at the largest horizon: ``{term: {bound_key: {...}}}`` with the measured term
    (t interval over runs), ``bound_at_horizon`` (mean over runs for run-dependent bounds), ``trivial_at_horizon``
    ``= T Delta`` and ``vacuous`` (the bound of every run ``>= T Delta``)."""
    last = int(horizons[-1])
    measured = {**terms, "total": total}
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        if row["T"] != last:
            continue
        out.setdefault(row["term"], {})[row["bound_key"]] = {
            "T": last,
            "measured_at_horizon": t_interval(measured[row["term"]][:, -1]),
            "bound_at_horizon": row["bound"],
            "bound_per_run": row["bound_per_run"],
            "trivial_at_horizon": float(last * max_gap),
            "vacuous": row["vacuous"],
            "holds": row["holds"],
        }
    return out
