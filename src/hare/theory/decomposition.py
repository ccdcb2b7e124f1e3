"""The measured three-term regret decomposition (paper, sec:decomposition).

Three variants of the same HARE policy (select mode) play the same HARE-Sim runs: one
environment object serves all of them, one after another (:func:`_simulate`), so every variant
sees the same queries, active users and reward noise in every round (``round(t)`` is a pure
function of the run keys and ``t``), and all variants share one set of policy keys (tie-breaks):

* ``pi_full``   learned projections ``W_hat``, posterior user state, exploration;
* ``pi_W*``     oracle projections ``W*``, posterior user state, exploration;
* ``pi_W*,u*``  oracle projections, true user state ``u*``; only the cluster-level
  exploration remains.

With ``R(pi)`` the cumulative pseudo-regret ``sum_t max_n mu_t(n) - mu_t(n_t)``:

    R_approx  = R(pi_full) - R(pi_W*)
    R_user    = R(pi_W*)   - R(pi_W*,u*)
    R_explore = R(pi_W*,u*)

so ``R_approx + R_user + R_explore = R(pi_full)`` exactly, run by run and round by round.
One run of length ``max(T)`` gives every horizon of the grid as a prefix.

Information: every policy of the comparison (the three variants, the diagnostic and mean-ablation
HARE policies, LinUCB and LNUCB-TA, Khosravi et al., 2025) is warm-started with the same ``n_logged`` logged
interactions
of the environment (:meth:`SyntheticBandit.logged`, uniform logging), through
:meth:`~hare.policies.base.Policy.warm_start` (``pi_full`` fits ``W_hat`` on them there, then feeds
them through its update like every other policy), and the online rounds are shown as ``M + t``
(as :func:`hare.experiments.simulation.simulate` does). Regret counts the online rounds only.

The mean the bonus explores around (paper, eq:online-mean): the variants use ``hare_params``' ``mean``
(default ``online``). ``pi_full`` and ``pi_W*`` also play with the other mean, so the output
holds ``R_approx`` under both, on the same runs:

    "mean_ablation": {"T", "main_mean", "R_approx_online": {"mean", "std"}, "R_approx_frozen": {"mean", "std"},
                      "removed_by_online_mean": {"mean", "std"},   (R_approx_frozen - R_approx_online, per run)
                      "removed_fraction": [...],                    (mean removed / mean R_approx_frozen; None if <= 0)
                      "policies": {"online": [full, w_star], "frozen": [full, w_star]}}

(policy names in ``regret``: ``full``/``w_star`` for the main mean, ``full_mean_<other>`` and
``w_star_mean_<other>`` for the other one). The macros ``\\decompositionApproxOnlineMean``,
``\\decompositionApproxFrozenMean`` and ``\\decompositionApproxRemovedFraction`` give them at the largest ``T``.

The constants of the instance and the measurements during the play are specified in
:mod:`hare.theory.decomposition_observer`.

The warm-start forms of the bounds, the bounds at every ``T`` of the grid and the growth exponents are specified
in :mod:`hare.theory.decomposition_stats`.

A fourth policy, ``pi_W*,u*`` with ``alpha = 0``, plays alongside as a diagnostic: exact scores
and no bonus, so its regret is the part of ``R_explore`` that comes from ranking clusters by
their mean score rather than from exploration (seed issue ``seed001_explore_cluster_mean_gap``).

Its growth exponent is reported on its own (``exponents["explore_selection_gap"]``, and
``exponents["explore_minus_selection_gap"]`` for ``R_explore`` minus it, run by run), with the values
under ``explore_split`` and a row per horizon plus an exponent table in the LaTeX fragment.

Further outputs: ``bounds_at_horizon[term][bound_key]`` gives every bound at the largest ``T`` next to
the trivial bound ``T Delta`` (``bound_at_horizon``, ``trivial_at_horizon``, ``vacuous``) and the
measured term with a t interval over runs; ``user_vs_explore`` gives the paired difference
``R_user - R_explore`` per run at the largest ``T`` (t interval over runs) with ``d_u``, ``d_k``, ``C``
and ``d_k sqrt(C)`` (the notes expect ``R_user <= R_explore`` when ``d_u << d_k sqrt(C)``, paper, sec:decomposition).
Every
interval follows the same mapping ``estimate, ci_low, ci_high, level, n, method`` (``None`` where
undefined). The horizons of ``theory.decomposition`` must span a factor of at least
:data:`hare.experiments.settings.theory.MIN_HORIZON_SPAN` (checked at the config boundary,
:func:`hare.experiments.settings.theory.check_settings`).

LinUCB and LNUCB-TA play the same runs (:func:`hare.theory.decomposition_comparisons.baseline_checks`).

This module runs the study: it builds the policies, plays them
(:func:`hare.theory.decomposition_observer.simulate_variants`)
and assembles the result from :mod:`hare.theory.decomposition_stats` and :mod:`hare.theory.decomposition_comparisons`;
the grid is :mod:`hare.theory.decomposition_grid`, the tables and the outputs :mod:`hare.report.theory_tables` and
:mod:`hare.report.decomposition`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.experiments.job_setup import deterministic_kernels
from hare.experiments.settings.theory import VARIANTS, variant_params
from hare.experiments.settings.theory_settings import DecompositionSettings
from hare.policies.base import build_policy
from hare.policies.hare import MEANS
from hare.random import run_keys
from hare.report.decomposition import write_arrays, write_checks
from hare.theory.decomposition_comparisons import (
    BASELINES,
    baseline_checks,
    explore_split,
    mean_ablation,
    user_vs_explore,
)
from hare.theory.decomposition_observer import instance_constants, measure_epsilon_attn, simulate_variants
from hare.theory.decomposition_stats import (
    TERMS,
    bounds_at_horizon,
    elliptical_potential_check,
    explore_constants,
    explore_radius,
    exponent_checks,
    exponent_fits,
    run_std,
    term_bounds,
    term_rows,
)
from hare.theory.seed_issues import SEED_ISSUES

__all__ = ["decomposition_check", "run_decomposition"]


def run_decomposition(
    env_params: dict[str, Any],
    hare_params: dict[str, Any],
    horizons: list[int],
    n_runs: int,
    base_seed: int,
    device: str = "cpu",
    *,
    delta: float = 0.05,
    tolerance: float = 0.1,
    n_boot: int = 2000,
    n_eps_queries: int = 4096,
    baselines: bool | Sequence[str] = True,
    baseline_params: dict[str, dict] | None = None,
    keep_arrays: bool = True,
    n_logged: int = 1000,
) -> dict[str, Any]:
    """Measure the three terms (paper, sec:decomposition) on HARE-Sim and check each against its bound (module
    docstring).

    env_params: :class:`SyntheticConfig` fields; hare_params: :class:`HAREConfig` fields shared by the
    three variants (``projections`` and ``user_state`` are set per variant; ``key_dim`` defaults to
    the environment's); n_logged: ``M``, the logged interactions every policy is warm-started with;
    baselines: True (:data:`BASELINES`, LinUCB and LNUCB-TA), False, or the names to play. Returns a JSON-ready dict;
    with ``keep_arrays`` the per-run arrays are under ``"arrays"`` (numpy, dropped by :func:`write_checks`).

    The arguments are the ``theory.decomposition`` section as the config boundary read it
    (:func:`hare.experiments.settings.theory_section`: horizons and counts >= 1, ``M >= 1``); nothing is checked again.
    """
    horizons_arr = np.array(sorted({int(h) for h in horizons}), dtype=np.int64)
    baseline_names = BASELINES if baselines is True else tuple(baselines or ())
    baseline_params = {"linucb": {"alpha": 1.0, "lam": 1.0}, "lnucb_ta": {}, **(baseline_params or {})}
    env_config = SyntheticConfig(**env_params)
    hare_params = {"key_dim": env_config.key_dim, **hare_params}
    deterministic_kernels(device)
    env_keys = run_keys(base_seed, range(n_runs), "decomposition", "environment")
    policy_keys = run_keys(base_seed, range(n_runs), "decomposition", "policy")
    env = SyntheticBandit(env_config, n_runs, int(horizons_arr[-1]), env_keys, device)
    logs = env.logged(n_logged)
    policies: dict[str, Any] = {}
    for variant in VARIANTS:
        policies[variant] = build_policy("hare", variant_params(hare_params, variant), env, policy_keys).to(device)
    greedy = {**variant_params(hare_params, "w_star_u_star"), "alpha": 0.0, "alpha_schedule": "fixed", "alphas": None}
    policies["selection_gap"] = build_policy("hare", greedy, env, policy_keys).to(device)
    main_mean = policies["full"].config.mean
    other_mean = next(m for m in MEANS if m != main_mean)
    ablation = {variant: f"{variant}_mean_{other_mean}" for variant in ("full", "w_star")}
    for variant, name in ablation.items():
        policies[name] = build_policy(
            "hare", {**variant_params(hare_params, variant), "mean": other_mean}, env, policy_keys
        ).to(device)
    for name in baseline_names:
        policies[name] = build_policy(name, baseline_params.get(name, {}), env, policy_keys).to(device)
    constants = instance_constants(env)
    sim = simulate_variants(env, policies, horizons_arr, logs)
    config = policies["full"].config
    if not constants["exact"]:
        constants.update(
            max_gap=sim["max_gap_seen"], L_f=sim["max_gap_seen"] / 2.0, max_abs_mean_reward=sim["max_abs_mean_seen"]
        )
    constants["max_gap_source"] = (
        "instance supremum over unit queries" if constants["exact"] else "empirical over the rounds played"
    )
    max_gap = constants["max_gap"]
    epsilon = measure_epsilon_attn(env, policies["full"], base_seed, n_eps_queries)

    curves = sim["curves"]
    terms = {
        "approx": curves["full"] - curves["w_star"],
        "user": curves["w_star"] - curves["w_star_u_star"],
        "explore": curves["w_star_u_star"].copy(),
    }
    T = horizons_arr.astype(float)
    explore_norms = explore_constants(constants, config, delta)
    idx = horizons_arr - 1
    lambda_max = np.maximum(sim["lambda_max"].max(0), 1.0 + 1e-12)
    bounds = term_bounds(
        constants, config, epsilon["epsilon_attn"], sim["lambda_min_active"], lambda_max, horizons_arr, n_logged, delta
    )
    rows = term_rows(terms, curves["full"], bounds, horizons_arr, max_gap)
    gap = curves["selection_gap"]
    exponents = exponent_fits(horizons_arr, terms, gap, bounds, n_boot, int(base_seed))
    checks = exponent_checks(exponents, tolerance)
    oful_radius = explore_radius(T + n_logged, constants, config.lam, delta, explore_norms["S"])
    by_mean = {main_mean: terms["approx"], other_mean: curves[ablation["full"]] - curves[ablation["w_star"]]}
    ablation_result = mean_ablation(
        by_mean,
        main_mean,
        {main_mean: ["full", "w_star"], other_mean: [ablation["full"], ablation["w_star"]]},
        horizons_arr,
    )
    residual = float(np.abs(terms["approx"] + terms["user"] + terms["explore"] - curves["full"]).max())
    result: dict[str, Any] = {
        "check": "regret_terms",
        "description": "Three-term regret decomposition (paper, sec:decomposition) measured by telescoping over oracle "
        "variants of HARE on the same runs.",
        "config": {
            "env_params": dict(env_params),
            "hare_params": {k: v for k, v in hare_params.items()},
            "horizons": horizons_arr.tolist(),
            "n_runs": int(n_runs),
            "base_seed": int(base_seed),
            "delta": delta,
            "tolerance": tolerance,
            "n_boot": int(n_boot),
            "n_logged": int(n_logged),
            "baseline_params": baseline_params if baseline_names else None,
        },
        "warm_start": {
            "n_logged": int(n_logged),
            "digest": logs.digest(),
            "policies": sorted(policies),
            "description": "every policy learned from the same logged interactions through warm_start before round 1; "
            "online rounds are shown as M + t, regret counts the online rounds",
        },
        "variants": {name: dict(spec) for name, spec in VARIANTS.items()},
        "constants": constants,
        "measured": {
            **epsilon,
            "lambda_min_active_at_T": [float(v) for v in sim["lambda_min_active"][:, idx].mean(0)],
            "lambda_min_user_mean_at_T": [float(v) for v in sim["lambda_min_user_mean"].mean(0)],
            "lambda_min_definition": "smallest eigenvalue of the posterior precision of the active user before the "
            "round's update (pi_W*); "
            "the user-mean is the average over users at the horizon",
            "lambda_max_at_T": lambda_max.tolist(),
            "max_query_norm": {name: float(v.max()) for name, v in sim["query_norm"].items()},
            "query_norm_bound": constants["query_norm_bound"],
            "query_norm_within_bound": bool(
                sim["query_norm"]["w_star_u_star"].max() <= constants["query_norm_bound"] * (1 + 1e-12)
            ),
            "max_gap_seen": sim["max_gap_seen"],
            "elliptical_potential": elliptical_potential_check(
                sim, horizons_arr, constants["key_dim"], config.lam, constants["query_norm_bound"], n_logged
            ),
            "decomposition_residual": residual,
        },
        "regret": {name: {"mean": curves[name].mean(0).tolist(), "std": run_std(curves[name])} for name in curves},
        "rows": rows,
        "exponents": exponents,
        "exponent_checks": checks,
        "premises": {
            "rewards_in_unit_interval": bool(constants["max_abs_mean_reward"] <= 1.0),
            "alpha": config.alpha,
            "oful_radius_at_T": oful_radius,
            "alpha_at_least_radius": bool(all(config.alpha >= r for r in oful_radius)),
            "explore_parameter_norm": {
                "value": explore_norms["S"],
                "name": "S_prior" if config.mean == "online" else "S",
                "description": "the radius's sqrt(lam) ||theta*_j - prior_j||: max_j max_{n in j} ||k_n - "
                "mean_{m in j} k_m||/sqrt(d_k) for the online mean (shrunk to theta0_j), "
                "max_n ||k_n||/sqrt(d_k) otherwise",
            },
            "warm_start_bounds": "OFUL-type bounds of the M+1..M+T online rounds: sqrt(T/(M+T)) bound(M+T); user sum "
            "with log((M+s)/delta)",
            "notes": [
                (
                    (
                        "hare_explore_oful is derived for OFUL with a ridge estimate per cluster and bonus weight "
                        "beta_T; HARE's online mean is "
                        "that ridge estimate (shrunk to the attention's cluster score theta0) with a fixed alpha in "
                        "place of beta_T, and the "
                        "reduction still assumes each cluster's reward linear in q (seed issue "
                        "seed001_step2_reduction): R_explore also "
                        "carries the gap between the best item and its cluster's linear fit."
                    )
                    if config.mean == "online"
                    else (
                        "hare_explore_oful is derived for OFUL with a ridge estimate per cluster and bonus weight "
                        "beta_T; with mean: frozen "
                        "HARE selects clusters by the mean attention score of the cluster plus alpha U with alpha "
                        "fixed (seed issue "
                        "seed001_step2_reduction), so R_explore also carries the gap between the best item and the "
                        "best cluster mean score."
                    )
                ),
                "L_f bounds the attention-weighted reward; select mode plays the argmax item, which is not Lipschitz "
                "in the attention.",
                (
                    "L_u assumes an argmax decision on scores computed with u_hat; HARE's cluster rule with a "
                    "history-dependent bonus does not "
                    "make R(W*) - R(W*,u*) a per-round function of ||u_hat - u*||."
                ),
            ],
        },
        "seed_issues": {
            key: SEED_ISSUES[key]
            for key in (
                "seed001_query_norm",
                "seed001_step2_reduction",
                "seed001_user_concentration",
                "seed001_additive_term",
                "seed001_term1_lipschitz_premise",
                "seed001_explore_cluster_mean_gap",
                "seed002_theorem1_rate",
            )
        },
        "shared_environment": "one environment object serves every policy in lock step; round t is a pure function of "
        "the run "
        "keys and t, so queries, active users and reward noise are identical across policies",
    }
    result["mean_ablation"] = ablation_result
    result["bounds_at_horizon"] = bounds_at_horizon(rows, terms, curves["full"], horizons_arr, max_gap)
    result["explore_split"] = explore_split(terms["explore"], gap, horizons_arr, exponents)
    result["user_vs_explore"] = user_vs_explore(terms["user"], terms["explore"], horizons_arr, constants)
    result["diagnostics"] = {
        "selection_gap": {
            "description": "Regret of pi_W*,u* with alpha = 0: exact scores, no bonus; the cluster chosen by its mean "
            "score "
            "may not hold the best item (seed issue seed001_explore_cluster_mean_gap). Part of R_explore not "
            "caused by exploration.",
            "T": horizons_arr.tolist(),
            "mean": gap.mean(0).tolist(),
            "std": run_std(gap),
            "exponent": exponents.get("explore_selection_gap"),
        },
    }
    if baseline_names:
        result["baselines"] = baseline_checks(sim, env, horizons_arr, baseline_params, delta, max_gap, n_logged)
    if keep_arrays:
        result["arrays"] = {
            "horizons": horizons_arr,
            **{f"regret_{name}": curves[name] for name in curves},
            **{f"term_{term}": terms[term] for term in TERMS},
            **{f"term_approx_mean_{mean}": value for mean, value in by_mean.items()},
            "lambda_min_active": sim["lambda_min_active"],
            "optimal_arms": sim["optimal_arms"],
            "bound_user_regret_sum": bounds[("user", "user_regret_sum")],
            "elliptical_measured": sim["potential"],
        }
    return result


def decomposition_check(
    settings: DecompositionSettings,
    *,
    out_json: str | Path,
    out_tex: str | Path,
    out_npz: str | Path | None = None,
) -> dict[str, Any]:
    """Run :func:`run_decomposition` on the settings of a ``theory.decomposition`` section, read at the config
    boundary (:func:`hare.experiments.settings.theory_section`), and write the JSON, the LaTeX fragment and, if
    ``out_npz`` is given, the per-run arrays; returns the result.

    An optional setting the section leaves out (``None``: ``n_logged``, ``delta``, ``tolerance``, ``n_boot``,
    ``baselines``, ``baseline_params``, ``n_eps_queries``) takes :func:`run_decomposition`'s default; ``base_seed``
    0, ``device`` ``cpu``.
    """
    result = run_decomposition(
        dict(settings.env_params or {}),
        dict(settings.hare_params or {}),
        list(settings.horizons),
        settings.n_runs,
        settings.base_seed or 0,
        settings.device or "cpu",
        **settings.given("delta", "tolerance", "n_boot", "baselines", "baseline_params", "n_eps_queries", "n_logged"),
    )
    write_checks(result, out_json, out_tex)
    if out_npz:
        write_arrays(result, out_npz)
    return result
