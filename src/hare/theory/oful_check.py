"""Measured LinUCB regret against the OFUL bound, and the bound's premise (Abbasi-Yadkori et al. 2011; paper, eq:oful).

Disjoint-arm LinUCB over ``K`` arms with ``d``-dimensional contexts is a single linear
bandit in dimension ``dK`` with features ``x ⊗ e_a`` and parameter
``theta = (theta_1, ..., theta_K)``. On the linear HARE-Sim (identity link) the
parameter is known in closed form, so every constant of the bound is computed, not
assumed: ``S = ||theta||_2``, ``B_x = max ||x_t|| = sqrt(2)`` (unit query and a one-hot
user), and the trivial bound ``T * 2 S_max B_x`` with ``S_max = max_a ||theta_a||``.

The bound is stated for OFUL, whose bonus weight is the confidence radius
``beta_t(delta)``; the measured runs use LinUCB's fixed ``alpha``. The check reports both
facts instead of hiding either. At the horizons run the bound may exceed the trivial bound
``T Delta_max``; ``vacuous`` says so, and then "regret below the bound" cannot fail.

The premise of the bound can fail and is measured: Theorem 2 states that with probability at
least ``1 - delta``, simultaneously for every ``n``, ``||theta_hat_n - theta*||_{V_n} <= beta_n(delta)``.
For disjoint arms ``V_n = blockdiag(A_1, ..., A_K)`` over the stacked parameter, so

    ||theta_hat_n - theta*||_{V_n}^2 = sum_a (theta_hat_a - theta*_a)^T A_a (theta_hat_a - theta*_a).

The reported run is re-simulated from its sidecar's job (same environment draws, policy keys and
warm start; its total regret must equal the stored one) and the membership is recorded after the
update of every online round, ``n = M + t`` observations for ``M`` warm-start rounds.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hare.envs.synthetic import SyntheticBandit, linear_parameters
from hare.experiments.job_spec import JobSpec
from hare.io import read_npz
from hare.report.theory_tables import write_oful
from hare.statistics import clopper_pearson as exact_interval
from hare.statistics import t_interval
from hare.theory.bound_table import BOUNDS
from hare.theory.bounds import Bound
from hare.theory.decomposition_stats import warm_bound

RESIMULATION_TOLERANCE = 1e-9
"""Largest relative difference allowed between the stored and the re-simulated total regret of a run."""

CONFIDENCE_RADIUS = Bound(
    name="oful_confidence_radius",
    expr=BOUNDS["linucb_oful"].steps["confidence_radius"],
    description="beta_T(delta) = sigma sqrt(2 log(1/delta) + d log(1 + T B_x^2/(lam d))) + sqrt(lam) S",
    source="Abbasi-Yadkori, Pal, Szepesvari (2011), Theorem 2 with Lemma 10",
)
"""OFUL's confidence radius as derived in :func:`hare.theory.bounds.oful_confidence_radius`; ``T`` is the
number of observations behind the estimate."""


def oful_radius(
    n_observations: np.ndarray, dim: int, lam: float, delta: float, sigma: float, S: float, B_x: float
) -> np.ndarray:
    """``beta_n(delta) = sigma sqrt(2 log(1/delta) + d log(1 + n B_x^2/(lam d))) + sqrt(lam) S`` for every ``n`` of
    ``n_observations`` (same shape); ``d`` is the stacked dimension ``dK``."""
    n = np.asarray(n_observations, dtype=float)
    return np.asarray(
        CONFIDENCE_RADIUS.numeric(T=n, d=dim, lam=lam, delta=delta, sigma=sigma, S=S, B_x=B_x), dtype=float
    ) * np.ones_like(n)


def ellipsoid_norm_sq(theta_hat: torch.Tensor, theta_star: torch.Tensor, precision: torch.Tensor) -> torch.Tensor:
    """``||theta_hat - theta*||^2_V`` with ``V = blockdiag(A_1, ..., A_K)``, i.e.
    ``sum_a (theta_hat_a - theta*_a)^T A_a (theta_hat_a - theta*_a)``.

    theta_hat ``(n_runs, K, d)``, theta_star ``(K, d)`` or ``(n_runs, K, d)``, precision ``(n_runs, K, d, d)``
    -> ``(n_runs,)``.
    """
    diff = theta_hat - theta_star.to(theta_hat)
    return torch.einsum("rki,rkij,rkj->r", diff, precision, diff)


def confidence_membership(
    spec: JobSpec,
    env,
    theta_star: torch.Tensor,
    delta: float,
    sigma: float,
    S: float,
    B_x: float,
    radius_scale: float = 1.0,
) -> dict[str, Any]:
    """Re-simulate the job ``spec`` on ``env`` and record ``||theta_hat_n - theta*||_{V_n} <= radius_scale *
    beta_n(delta)``
    after the update of every online round of every run (module docstring).

    Returns ``inside`` ``(n_runs, T)`` bool, ``norm`` ``(n_runs, T)``, ``radius`` ``(T,)``, ``n_observations`` ``(T,)``,
    ``n_logged`` and the re-simulated ``arrays`` of :func:`hare.experiments.simulation.simulate`.
    ``radius_scale`` below 1 shrinks the radius (a premise that must then fail more often).
    """
    from hare.experiments.job_setup import policy_keys, warm_start_logs
    from hare.experiments.simulation import SimulationOptions, simulate
    from hare.policies.base import build_policy

    logs = warm_start_logs(spec, env)
    policy = build_policy(spec.policy, spec.params, env, policy_keys(spec)).to(env.pool.embeddings.device)
    theta_star = theta_star.to(torch.float64)
    norms_sq = []

    def record(t: int, state) -> None:
        norms_sq.append(ellipsoid_norm_sq(state.ridge.theta, theta_star, state.ridge.precision))

    arrays = simulate(
        env,
        policy,
        SimulationOptions(record_every=1, progress=False, name=spec.environment.name, on_record=record),
        logs=logs,
    )
    n_logged = 0 if logs is None else len(logs)
    norm = torch.stack(norms_sq, 1).clamp_min(0.0).sqrt().cpu().numpy()  # (n_runs, T)
    n_obs = n_logged + np.arange(1, norm.shape[1] + 1)
    radius = radius_scale * oful_radius(n_obs, theta_star.numel(), float(policy.config.lam), delta, sigma, S, B_x)
    return {
        "inside": norm <= radius[None],
        "norm": norm,
        "radius": radius,
        "n_observations": n_obs,
        "n_logged": n_logged,
        "arrays": arrays,
    }


def clopper_pearson(successes: np.ndarray, level: float = 0.95) -> dict[str, Any]:
    """Proportion of ``successes`` ``(n,)`` (bool, one per run) with the exact Clopper-Pearson interval
    ``[Beta_{a/2}(k, n-k+1), Beta_{1-a/2}(k+1, n-k)]``, ``a = 1 - level``, ``k`` the count (0 and 1 at the ends):
    :func:`hare.statistics.clopper_pearson`."""
    successes = np.asarray(successes, dtype=bool).ravel()
    n, k = int(successes.size), int(successes.sum())
    low, high = exact_interval(k, n, level) if n else (0.0, 1.0)
    return {
        "estimate": k / n if n else None,
        "ci_low": low if n else None,
        "ci_high": high if n else None,
        "level": level,
        "n": n,
        "method": "Clopper-Pearson over runs",
    }


def membership_summary(inside: np.ndarray, delta: float) -> dict[str, Any]:
    """Fractions of rounds inside the ellipsoid, per run and over runs, for ``inside`` ``(n_runs, T)``.

    ``fraction_inside``: mean over runs of the per-run fraction of rounds, t interval over runs (clipped to
    [0, 1]); ``premise_holds``: its estimate ``>= 1 - delta``. ``runs_inside_every_round``: the event of
    Theorem 2 itself (every round of a run inside), whose probability is at least ``1 - delta``.
    """
    per_run = inside.mean(1)
    fraction = t_interval(per_run, bounds=(0.0, 1.0))
    return {
        "fraction_inside": fraction,
        "fraction_inside_per_run": per_run.tolist(),
        "runs_inside_every_round": clopper_pearson(inside.all(1)),
        "threshold": 1.0 - delta,
        "premise_holds": bool(fraction["estimate"] >= 1.0 - delta),
        "premise_holds_at_ci_low": None if fraction["ci_low"] is None else bool(fraction["ci_low"] >= 1.0 - delta),
        "n_rounds": int(inside.shape[1]),
    }


def oful_check(
    run_npz: str | Path,
    sidecar: dict[str, Any],
    env: SyntheticBandit,
    delta: float,
    out_json: str | Path,
    out_tex: str | Path,
) -> dict[str, Any]:
    """Compare the measured cumulative regret at every checkpoint with the OFUL bound, measure the bound's premise on a
    re-simulation of the same run; write the JSON and its macros (:func:`hare.report.theory_tables.write_oful`)."""
    theta = linear_parameters(env)
    n_arms, dim = theta.shape
    spec = JobSpec.from_dict(sidecar["job"])
    params = spec.params
    lam = float(params.get("lam", 1.0))
    sigma = float(env.config.noise_sigma)
    norm_bound = float(theta.norm())
    context_bound = math.sqrt(2.0)
    max_gap = 2.0 * float(theta.norm(dim=1).max()) * context_bound
    arrays = read_npz(run_npz)
    rounds = arrays["rounds"].astype(float)
    curve = arrays["cumulative_regret"]
    horizon = int(spec.environment.horizon)
    if int(rounds[-1]) != horizon:
        raise ValueError(f"{run_npz}: last checkpoint {int(rounds[-1])} is not the horizon {horizon}")
    membership = confidence_membership(spec, env, theta, delta, sigma, norm_bound, context_bound)
    _check_resimulation(run_npz, arrays, membership["arrays"])
    n_logged = membership["n_logged"]
    constants = {"d": n_arms * dim, "lam": lam, "delta": delta, "sigma": sigma, "S": norm_bound, "B_x": context_bound}
    bound = warm_bound("linucb_oful", rounds, n_logged, **constants)
    mean = curve.mean(0)
    worst_run = curve.max(0)
    trivial = rounds * max_gap
    summary = membership_summary(membership["inside"], delta)
    result = {
        "check": "linucb_oful",
        "description": "Measured cumulative pseudo-regret of disjoint LinUCB on linear HARE-Sim against the OFUL bound "
        "with every constant computed from the instance.",
        "caveat": "The OFUL bound holds with probability 1-delta for OFUL's radius beta_t(delta); the run uses LinUCB "
        "with a fixed alpha.",
        "constants": {**constants, "max_gap": max_gap, "alpha": float(params.get("alpha", 1.0)), "n_logged": n_logged},
        "rounds": rounds.tolist(),
        "measured_mean": mean.tolist(),
        "measured_std": curve.std(0, ddof=1).tolist() if curve.shape[0] > 1 else [None] * len(rounds),
        "measured_max": worst_run.tolist(),
        "bound": bound.tolist(),
        "trivial_bound": trivial.tolist(),
        "horizon": horizon,
        "measured_at_horizon": t_interval(curve[:, -1]),
        "worst_run_at_horizon": float(worst_run[-1]),
        "bound_at_horizon": float(bound[-1]),
        "trivial_at_horizon": float(trivial[-1]),
        "bound_over_trivial_at_horizon": float(bound[-1] / trivial[-1]),
        "holds": bool(np.all(worst_run <= bound)),
        "vacuous": bool(np.all(bound >= trivial)),
        "vacuous_at_horizon": bool(bound[-1] >= trivial[-1]),
        "ratio_at_horizon": float(mean[-1] / bound[-1]),
        "n_runs": int(curve.shape[0]),
        "premise": {
            "description": "Theorem 2 premise: ||theta_hat_n - theta*||_{V_n} <= beta_n(delta), V_n block diagonal "
            "over arms, "
            "theta* the stacked closed-form parameter, beta_n = sigma sqrt(2 log(1/delta) + d log(1 + n B_x^2/(lam "
            "d))) "
            "+ sqrt(lam) S; checked after the update of every online round of a re-simulation of the reported run "
            "(n = M + t observations).",
            **summary,
            "radius_at_horizon": float(membership["radius"][-1]),
            "norm_at_horizon": t_interval(membership["norm"][:, -1]),
            "max_norm_over_radius": float((membership["norm"] / membership["radius"][None]).max()),
            "alpha_over_radius_at_horizon": float(params.get("alpha", 1.0)) / float(membership["radius"][-1]),
            "resimulated_total_regret_matches": True,
        },
    }
    write_oful(result, out_json, out_tex)
    return result


def _check_resimulation(run_npz: str | Path, stored: dict[str, np.ndarray], resimulated: dict[str, np.ndarray]) -> None:
    """The re-simulation must reproduce the stored run: same total regret in every run."""
    expected, got = (
        np.asarray(stored["total_regret"], dtype=float),
        np.asarray(resimulated["total_regret"], dtype=float),
    )
    if expected.shape != got.shape or not np.allclose(
        got, expected, rtol=RESIMULATION_TOLERANCE, atol=RESIMULATION_TOLERANCE
    ):
        raise ValueError(
            f"{run_npz}: the re-simulated total regret {got.tolist()} differs from the stored {expected.tolist()}; "
            "the premise would be measured on another run"
        )
