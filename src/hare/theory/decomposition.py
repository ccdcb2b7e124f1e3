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
HARE policies, LinUCB and LNUCB-TA, Khosravi et al., 2025) is warm-started with the same ``n_logged`` logged interactions
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

Constants, all computed from the instance (identity link, linear variant; otherwise the
range below is the empirical one over the rounds played and is labelled so):

* ``Delta = sup_{||x||=1, i} max_n mu(n) - min_n mu(n)``, the largest per-round regret.
  With ``mu(n) = <a_n, x> + b_{n,i}``, ``a_n = s W*_Qx^T k_n / sqrt(d_k)``,
  ``b_{n,i} = s <W*_Qu u*_i, k_n> / sqrt(d_k)``, ``k_n = W*_K e_n``, ``s`` the reward scale:
  ``Delta = max_{i,n,m} ||a_n - a_m|| + b_{n,i} - b_{m,i}`` (the supremum over unit ``x``
  of ``<a_n - a_m, x>`` is ``||a_n - a_m||``).
* ``L_f = Delta / 2``. The reward of an attention distribution ``a`` is
  ``f(a) = sum_n a_n mu(n)`` (the expected reward of an item drawn from ``a``; for identity
  values and link also the synthesize-mode reward of ``z = sum_n a_n e_n``). Since
  ``sum_n (a_n - a'_n) = 0``, ``|f(a) - f(a')| = |sum_n (a_n - a'_n)(mu(n) - c)|
  <= max_n |mu(n) - c| ||a - a'||_1`` for every ``c``; ``c`` the midpoint of the range gives
  ``(max mu - min mu)/2 ||a - a'||_1``, and the supremum over rounds is ``Delta/2``. HARE in
  select mode plays an argmax, which is not a Lipschitz function of ``a``: the premise of
  the ``R_approx`` bound (assumption 2 of paper, sec:assumptions) holds for ``f``, not for the
  played item, and the check tests whether the bound holds anyway.
* ``epsilon_attn = E ||a(W_hat, u_hat) - a(W*, u*)||_1`` on fresh queries and users drawn
  from keys of their own (:func:`hare.model.projections.attention_error`, ``u_hat`` the
  fitted user table).
* ``L_u = 2 max_n ||s W*_Qu^T k_n|| / sqrt(d_k)``: ``mu(n)`` is Lipschitz in ``u`` with
  constant ``max_n ||grad_u mu(n)||``, and an argmax of scores computed with ``u_hat``
  loses at most twice the largest score error against the argmax computed with ``u*``.
* ``lambda_min(t)``: smallest eigenvalue of the posterior precision
  ``Sigma_u^{-1} = I / prior + sum phi phi^T / sigma^2`` of the *active* user of round
  ``t``, before the round-``t`` update (the precision behind the estimate ``u_hat_t`` that
  round uses), per run of ``pi_W*``. The user-average at each horizon is reported too.
* ``B_x`` (seed issue ``seed001_query_norm``): the explore bounds sum widths of the
  projected query ``q_t = s(W*_Qx x_t + W*_Qu u*_{i_t})``, so
  ``B_q = s(||W*_Qx||_2 + ||W*_Qu||_2 max_i ||u*_i||)`` (``||x_t|| = 1``); the measured
  ``max_t ||q_t||`` of every variant is reported (for ``pi_W*`` and ``pi_full`` the query
  carries ``u_hat`` and has no a-priori bound).
* ``S = max_n ||k_n|| / sqrt(d_k)`` bounds every per-item parameter ``theta_n = k_n / sqrt(d_k)``
  (``mu(n) = <q, theta_n>``) and every cluster-mean parameter.
* ``lambda_max``: largest eigenvalue of the cluster covariances ``Sigma_{h,j}`` of
  ``pi_W*,u*`` at each horizon (the ``R_explore`` bound as the source notes state it, paper, sec:decomposition).

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
and ``d_k sqrt(C)`` (the notes expect ``R_user <= R_explore`` when ``d_u << d_k sqrt(C)``, paper, sec:decomposition). Every
interval follows the same mapping ``estimate, ci_low, ci_high, level, n, method`` (``None`` where
undefined). The horizons of ``theory.decomposition`` must span a factor of at least
:data:`hare.experiments.theory_settings.MIN_HORIZON_SPAN` (:func:`check_settings`).

LinUCB and LNUCB-TA play the same runs. LinUCB is checked against ``linucb_oful`` with the
constants of :func:`hare.envs.synthetic.linear_parameters`; LNUCB-TA's Theorem 1 has
an unspecified absolute constant ``b`` and a kNN uncertainty ``Gamma_kNN`` built from an
unspecified metric, so it is not evaluated: the output states this and reports the
``b`` the bound would need at ``Gamma_kNN -> 0`` (any positive ``Gamma_kNN`` lowers it).

Length: one module because this docstring is the specification of every measured quantity and of how
every bound is evaluated on it (the warm-start forms, the constants, the exponent checks), and
:func:`run_decomposition` computes them in that order from private helpers that no other module uses;
split, the definitions would sit apart from the code that computes them. The play itself is
:func:`hare.experiments.simulation.simulate`, the grid's tables :mod:`hare.theory.decomposition_grid` and the
writers :mod:`hare.report.decomposition`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hare.envs.base import LoggedRounds
from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.experiments.job_setup import deterministic_kernels
from hare.experiments.simulation import RoundObserver, prebuilt_rounds, simulate
from hare.experiments.theory_settings import VARIANTS, check_settings, variant_params
from hare.model.projections import attention_error, oracle_projections
from hare.policies.base import build_policy
from hare.policies.hare import MEANS, HAREConfig
from hare.random import CounterRNG, run_keys
from hare.report.decomposition import write_arrays, write_checks
from hare.statistics import fit_exponent, is_vacuous, slope, t_interval
from hare.theory.bounds import BOUNDS, SEED_ISSUES, user_regret_sum

__all__ = [
    "VARIANTS",
    "check_settings",
    "decomposition_check",
    "fit_exponent",
    "instance_constants",
    "is_vacuous",
    "t_interval",
    "run_decomposition",
    "run_decomposition_grid",
    "write_checks",
]

TERMS = ("approx", "user", "explore")
APPROX_MIN_EXPONENT = 0.8
SQRT_EXPONENT = 0.5


# --------------------------------------------------------------------------
# Instance constants
# --------------------------------------------------------------------------


def instance_constants(env: SyntheticBandit) -> dict[str, Any]:
    """``Delta``, ``L_f``, ``L_u``, ``S``, ``B_q`` and ``max |mu|`` of a HARE-Sim instance (module docstring).

    ``exact`` is False for the logistic link or the nonlinear variant, where ``Delta`` and
    ``max |mu|`` are left to the empirical range over the rounds played.
    """
    c = env.config
    w = env.oracle
    scale = float(c.reward_scale)
    root = math.sqrt(c.key_dim)
    keys = env.pool.embeddings.to(torch.float64) @ w.key.to(torch.float64).T  # (N, d_k)
    a = scale * keys @ w.query_context.to(torch.float64) / root  # (N, d_x)
    b = scale * (env.users.to(torch.float64) @ w.query_user.to(torch.float64).T) @ keys.T / root  # (n_users, N)
    pair_norm = torch.cdist(a, a)  # (N, N)
    gap = pair_norm[None] + b[:, :, None] - b[:, None, :]  # (n_users, N, N)
    grad_u = scale * keys @ w.query_user.to(torch.float64) / root  # (N, d_u)
    query_bound = scale * (
        float(torch.linalg.matrix_norm(w.query_context.to(torch.float64), ord=2))
        + float(torch.linalg.matrix_norm(w.query_user.to(torch.float64), ord=2)) * float(env.users.norm(dim=1).max())
    )
    exact = c.link == "identity" and c.variant == "linear"
    delta_max = float(gap.max()) if exact else float("nan")
    return {
        "exact": exact,
        "max_gap": delta_max,
        "L_f": delta_max / 2.0,
        "L_u": 2.0 * float(grad_u.norm(dim=1).max()),
        "S": float(keys.norm(dim=1).max()) / root,
        "S_prior": _prior_parameter_norm(keys, env.pool.clusters.to(keys.device), int(c.n_clusters)) / root,
        "query_norm_bound": query_bound,
        "max_abs_mean_reward": float((a.norm(dim=1)[None] + b.abs()).max()) if exact else float("nan"),
        "n_clusters": int(c.n_clusters),
        "key_dim": int(c.key_dim),
        "user_dim": int(c.user_dim),
        "n_items": int(c.n_items),
        "noise_sigma": float(c.noise_sigma),
    }


def _prior_parameter_norm(keys: torch.Tensor, clusters: torch.Tensor, n_clusters: int) -> float:
    """``max_j max_{n in j} ||k_n - mean_{m in j} k_m||`` for keys ``(N, d_k)`` in clusters ``(N,)``."""
    sums = torch.zeros(n_clusters, keys.shape[1], dtype=keys.dtype, device=keys.device).index_add_(0, clusters, keys)
    sizes = torch.bincount(clusters, minlength=n_clusters).clamp_min(1).to(keys.dtype)
    return float((keys - (sums / sizes[:, None])[clusters]).norm(dim=1).max())


# --------------------------------------------------------------------------
# Exponent fits and flags
# --------------------------------------------------------------------------


def _std(curves: np.ndarray) -> list[float | None]:
    """Sample standard deviation over runs at every horizon; None with a single run."""
    if curves.shape[0] < 2:
        return [None] * curves.shape[1]
    return curves.std(0, ddof=1).tolist()


def _summary(measured: np.ndarray, bound: np.ndarray, horizons: np.ndarray, max_gap: float) -> list[dict[str, Any]]:
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


# --------------------------------------------------------------------------
# Simulation
# --------------------------------------------------------------------------


def _epsilon_attention(env: SyntheticBandit, full, base_seed: int, n_queries: int) -> dict[str, float]:
    """``epsilon_attn`` of the projections ``pi_full`` fitted in its warm start (with its fitted user table)."""
    learned, report = full.projections, full.fit_report
    device = env.pool.embeddings.device
    oracle = oracle_projections(env, full.n_heads).to(device)
    rng = CounterRNG(run_keys(base_seed, [0], "decomposition", "epsilon-attn").to(device))
    queries = torch.nn.functional.normalize(rng.normal("query", 0, (n_queries, env.query_dim))[0], dim=-1)
    users = rng.randint("user", 0, env.n_users, (n_queries,))[0]
    eps = attention_error(
        learned.to(device), report.user_states.to(device), oracle, env.users, queries, users, env.pool.embeddings
    )
    return {"epsilon_attn": eps, "epsilon_train": float(report.epsilon_train), "n_queries": int(n_queries)}


class _Measurements(RoundObserver):
    """The quantities of the module docstring measured while policy ``name`` plays (:func:`_simulate`).

    With ``K`` horizons and ``T`` the largest:

    * every variant of :data:`VARIANTS`: ``query_norm`` ``(n_runs,)``, the largest norm of its projected query
      ``max_t ||q_t||`` (from its attention before ``select``);
    * ``pi_W*,u*`` (``w_star_u_star``): the capped width sum ``sum_t min(1, U_{t,j_t}^2)`` per head (widths before
      the update) and at every horizon its cluster covariances' ``log det(Sigma_j) - d_k log lam`` summed over
      clusters, their counts and their largest eigenvalue over heads and clusters;
    * ``pi_W*`` (``w_star``): ``lambda_min_active`` ``(n_runs, T)``, the smallest eigenvalue of the active user's
      posterior precision before each round's update, and at every horizon its mean over users;
    * with ``environment``: every round's optimal arms ``(n_runs, T)``, the largest reward range
      ``max_n mu_t(n) - min_n mu_t(n)`` and the largest ``|mu_t(n)|`` seen.
    """

    def __init__(self, name: str, policy, env: SyntheticBandit, horizons: np.ndarray, environment: bool):
        n_runs, horizon, device = env.n_runs, int(horizons[-1]), env.pool.embeddings.device
        self.policy, self.attends, self.explore, self.user, self.environment = (
            policy,
            name in VARIANTS,
            name == "w_star_u_star",
            name == "w_star",
            environment,
        )
        self.index = {int(h) - 1: k for k, h in enumerate(horizons)}
        self.runs = torch.arange(n_runs, device=device)
        self.query_norm = torch.zeros(n_runs, dtype=torch.float64, device=device)
        self.potential = None
        self.explore_curves: dict[str, list[np.ndarray]] = {
            "potential": [],
            "log_det_ratio": [],
            "cluster_counts": [],
            "lambda_max": [],
        }
        self.lambda_min_active = np.zeros((n_runs, horizon))
        self.lambda_min_users = np.zeros((n_runs, len(horizons)))
        self.optimal = np.zeros((n_runs, horizon), dtype=np.int64)
        self.gap_seen = torch.zeros((), dtype=torch.float64, device=device)
        self.abs_seen = torch.zeros((), dtype=torch.float64, device=device)

    def selecting(self, t: int, round_, observation) -> None:
        if self.environment:
            self.optimal[:, t] = round_.optimal_arms.cpu().numpy()
            self.gap_seen = torch.maximum(
                self.gap_seen, (round_.mean_rewards.max(1).values - round_.mean_rewards.min(1).values).max()
            )
            self.abs_seen = torch.maximum(self.abs_seen, round_.mean_rewards.abs().max())
        if self.user:
            precision = self.policy.user_posterior.precision[self.runs, observation.users]
            self.lambda_min_active[:, t] = torch.linalg.eigvalsh(precision)[:, 0].cpu().numpy()
        if self.attends:
            self.attention = self.policy.attend(observation)
            self.query_norm = torch.maximum(self.query_norm, self.attention.queries.norm(dim=-1).max(-1).values)

    def selected(self, t: int, arms: torch.Tensor) -> None:
        if self.explore:
            n_heads = self.policy.n_heads
            chosen = self.policy.clusters[arms]
            widths = (
                self.attention.bonuses.gather(-1, chosen[:, None, None].expand(-1, n_heads, 1)).squeeze(-1) ** 2
            )  # (n_runs, H)
            if self.potential is None:
                self.potential = torch.zeros(len(self.runs), n_heads, dtype=torch.float64, device=widths.device)
            self.potential += widths.clamp(max=1.0)

    def record(self, t: int, policy) -> None:
        if self.explore:
            covariance = policy.attention.covariance
            log_det = torch.linalg.slogdet(covariance.precision)[1] - policy.key_dim * math.log(
                policy.config.lam
            )  # (n_runs, H, C)
            curves = self.explore_curves
            curves["potential"].append(self.potential.cpu().numpy().copy())
            curves["log_det_ratio"].append(log_det.sum(-1).cpu().numpy())
            curves["cluster_counts"].append(covariance.counts.cpu().numpy().copy())
            curves["lambda_max"].append(
                torch.linalg.eigvalsh(covariance.precision)[..., -1].flatten(1).max(1).values.cpu().numpy()
            )
        if self.user:
            self.lambda_min_users[:, self.index[t]] = (
                torch.linalg.eigvalsh(policy.user_posterior.precision)[..., 0].mean(1).cpu().numpy()
            )


def _simulate(
    env: SyntheticBandit, policies: dict[str, Any], horizons: np.ndarray, logs: LoggedRounds
) -> dict[str, np.ndarray]:
    """Play every policy, warm-started on ``logs``, on the same rounds (:func:`hare.experiments.simulation.simulate`:
    online round ``t`` shown as ``M + t``), one after another; record regret and the measured quantities
    (:class:`_Measurements`) at ``horizons``.

    ``round(t)`` is a pure function of the run keys and ``t``, and the policies share no state, so each policy
    sees the rounds and makes the choices it would make in lock step with the others; the rounds are drawn once
    (:func:`hare.experiments.simulation.prebuilt_rounds`).
    """
    curves, measured = {}, {}
    rounds = prebuilt_rounds(env)
    for name, policy in policies.items():
        measured[name] = _Measurements(name, policy, env, horizons, environment=not measured)
        arrays = simulate(
            env,
            policy,
            progress=None,
            logs=logs,
            on_record=measured[name].record,
            record_at=horizons,
            observer=measured[name],
            rounds=rounds,
        )
        curves[name] = arrays["cumulative_regret"]
    first, explore, user = next(iter(measured.values())), measured["w_star_u_star"], measured["w_star"]
    return {
        "curves": curves,
        "query_norm": {name: m.query_norm.cpu().numpy() for name, m in measured.items() if m.attends},
        **{key: np.stack(values, -1) for key, values in explore.explore_curves.items()},
        "lambda_min_active": user.lambda_min_active,
        "lambda_min_user_mean": user.lambda_min_users,
        "optimal_arms": first.optimal,
        "max_gap_seen": float(first.gap_seen),
        "max_abs_mean_seen": float(first.abs_seen),
    }


S_FLOOR = 1e-12
"""``S_prior`` is 0 when every cluster holds one item (the prior is then the true parameter); the bound's
symbols are positive, so its ``S -> 0`` limit is evaluated at ``S = S_FLOOR``, which moves it by
``sqrt(lam) * 1e-12`` at most."""


def _explore_constants(constants: dict[str, Any], config: HAREConfig, delta: float) -> dict[str, float]:
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
    """:func:`user_regret_sum` over online rounds ``s = 1..T`` shown as ``M + s``: the union over rounds
    takes ``log((M + s)/delta)``; ``lambda_min`` ``(T,)`` is measured in the online rounds."""
    padded = np.concatenate([np.ones(n_logged), np.asarray(lambda_min, dtype=float)])
    total = user_regret_sum(padded, **constants)
    return total[n_logged:] - (total[n_logged - 1] if n_logged else 0.0)


def _elliptical(
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
        "description": "sum_t min(1, U_{t,j_t}^2) of pi_W*,u* over the online rounds (widths before the update) <= sum_j 2 log "
        "det(Sigma_j)/det(lam I) <= sum_j 2 d_k log(1 + T_j B_q^2/(lam d_k)) <= C 2 d_k log(1 + (M + T) B_q^2/(lam d_k)), "
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


def _baseline_checks(
    sim: dict[str, Any],
    env: SyntheticBandit,
    horizons: np.ndarray,
    baseline_params: dict[str, dict],
    delta: float,
    max_gap: float,
    n_logged: int = 0,
) -> dict[str, Any]:
    from hare.envs.synthetic import linear_parameters

    theta = linear_parameters(env)
    n_arms, dim = theta.shape
    out: dict[str, Any] = {}
    if "linucb" in sim["curves"]:
        params = baseline_params.get("linucb", {})
        constants = {
            "d": n_arms * dim,
            "lam": float(params.get("lam", 1.0)),
            "delta": delta,
            "sigma": env.config.noise_sigma,
            "S": float(theta.norm()),
            "B_x": math.sqrt(2.0),
        }
        bound = warm_bound("linucb_oful", horizons.astype(float), n_logged, **constants)
        out["linucb"] = {
            "bound_key": "linucb_oful",
            "constants": constants,
            "alpha": float(params.get("alpha", 1.0)),
            "caveat": "The OFUL bound is for OFUL's radius beta_t(delta); LinUCB runs with a fixed alpha. Disjoint arms are one "
            "linear bandit in dimension n_arms * dim with features x (x) e_a (oful_check). Warm-started on the M logged "
            "rounds: evaluated as sqrt(T/(M+T)) bound(M+T).",
            "rows": _summary(sim["curves"]["linucb"], bound, horizons, max_gap),
        }
    if "lnucb_ta" in sim["curves"]:
        constants = {
            "d": n_arms * dim,
            "delta": delta,
            "sigma": env.config.noise_sigma,
            "S": float(theta.norm()),
            "B_x": math.sqrt(2.0),
        }
        unit = np.asarray(
            BOUNDS["lnucbta_theorem1"].numeric(
                T=horizons.astype(float), b_lnucb=1.0, knn_uncertainty=1e-12, **constants
            ),
            dtype=float,
        )
        measured = sim["curves"]["lnucb_ta"]
        out["lnucb_ta"] = {
            "bound_key": "lnucbta_theorem1",
            "evaluated": False,
            "constants": constants,
            "unspecified": {
                "b": "absolute constant of LNUCB-TA Theorem 1, eq. 11, never given",
                "Gamma_kNN": "sum_a T^a (u^a_{t,k})^2 with u^a_{t,k} a distance under an unspecified metric rho on (context, reward) "
                "pairs, at an unspecified round t (LNUCB-TA eqs. 10-11, 22)",
                "sigma": "Theorem 1 assumes |noise| <= sigma; HARE-Sim noise is Gaussian (unbounded)",
            },
            "b_required_at_gamma_zero": [float(v) for v in measured.max(0) / unit],
            "bound_over_b_at_gamma_zero": unit.tolist(),
            "rows": [
                {k: v for k, v in row.items() if k not in ("bound", "bound_min", "ratio", "holds", "vacuous")}
                for row in _summary(measured, unit, horizons, max_gap)
            ],
        }
    return out


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
    """Measure the three terms (paper, sec:decomposition) on HARE-Sim and check each against its bound (module docstring).

    env_params: :class:`SyntheticConfig` fields; hare_params: :class:`HAREConfig` fields shared by the
    three variants (``projections`` and ``user_state`` are set per variant; ``key_dim`` defaults to
    the environment's); n_logged: ``M``, the logged interactions every policy is warm-started with;
    baselines: True (LinUCB and LNUCB-TA), False, or the names to play. Returns a JSON-ready dict;
    with ``keep_arrays`` the per-run arrays are under ``"arrays"`` (numpy, dropped by :func:`write_checks`).
    """
    horizons_arr = np.array(sorted({int(h) for h in horizons}), dtype=np.int64)
    if horizons_arr.size < 1 or horizons_arr[0] < 1:
        raise ValueError("horizons must be positive integers")
    if n_runs < 1:
        raise ValueError("n_runs must be >= 1")
    if isinstance(n_logged, bool) or not isinstance(n_logged, int) or n_logged < 1:
        raise ValueError(
            f"n_logged must be an integer >= 1: pi_full fits its projections on the warm start's logs (got {n_logged!r})"
        )
    baseline_names = ("linucb", "lnucb_ta") if baselines is True else tuple(baselines or ())
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
    sim = _simulate(env, policies, horizons_arr, logs)
    config = policies["full"].config
    if not constants["exact"]:
        constants.update(
            max_gap=sim["max_gap_seen"], L_f=sim["max_gap_seen"] / 2.0, max_abs_mean_reward=sim["max_abs_mean_seen"]
        )
    constants["max_gap_source"] = (
        "instance supremum over unit queries" if constants["exact"] else "empirical over the rounds played"
    )
    max_gap = constants["max_gap"]
    eps = _epsilon_attention(env, policies["full"], base_seed, n_eps_queries)

    curves = sim["curves"]
    terms = {
        "approx": curves["full"] - curves["w_star"],
        "user": curves["w_star"] - curves["w_star_u_star"],
        "explore": curves["w_star_u_star"].copy(),
    }
    T = horizons_arr.astype(float)
    explore_constants = _explore_constants(constants, config, delta)
    d_u = constants["user_dim"]
    idx = horizons_arr - 1
    user_seed = np.stack(
        [
            warm_user_regret_sum(
                run, n_logged, L_u=constants["L_u"], sigma=constants["noise_sigma"], d_u=d_u, delta=delta
            )[idx]
            for run in sim["lambda_min_active"]
        ]
    )
    user_rescaled = user_seed / constants["noise_sigma"]
    lambda_max = np.maximum(sim["lambda_max"].max(0), 1.0 + 1e-12)
    bounds = {
        ("approx", "hare_approx"): np.asarray(
            BOUNDS["hare_approx"].numeric(T=T, L_f=constants["L_f"], eps_attn=eps["epsilon_attn"])
        )
        * np.ones_like(T),
        ("explore", "hare_explore_oful"): warm_bound("hare_explore_oful", T, n_logged, **explore_constants),
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
        ("user", "user_regret_sum"): user_seed,
        ("user", "user_regret_sum_rescaled"): user_rescaled,
    }
    rows = []
    for (term, key), bound in bounds.items():
        for row in _summary(terms[term], bound, horizons_arr, max_gap):
            rows.append({"term": term, "bound_key": key, **row})
    total_bound = bounds[("approx", "hare_approx")] + bounds[("explore", "hare_explore_oful")] + user_rescaled
    for row in _summary(curves["full"], total_bound, horizons_arr, max_gap):
        rows.append({"term": "total", "bound_key": "hare_approx + hare_explore_oful + user_regret_sum_rescaled", **row})

    exponents = {}
    fit_seed = int(base_seed)
    for offset, term in enumerate(TERMS):
        fit = (
            fit_exponent(horizons_arr, terms[term], n_boot=n_boot, seed=fit_seed + offset)
            if horizons_arr.size >= 2
            else None
        )
        exponents[term] = fit
    if horizons_arr.size >= 2:
        for (term, key), bound in bounds.items():
            mean_bound = np.atleast_2d(bound).mean(0)
            exponents[term].setdefault("bound_exponents", {})[key] = float(slope(np.log(T), np.log(mean_bound)))
    gap = curves["selection_gap"]
    if horizons_arr.size >= 2:
        exponents["explore_selection_gap"] = fit_exponent(horizons_arr, gap, n_boot=n_boot, seed=fit_seed + len(TERMS))
        exponents["explore_minus_selection_gap"] = fit_exponent(
            horizons_arr, terms["explore"] - gap, n_boot=n_boot, seed=fit_seed + len(TERMS) + 1
        )
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

    oful_radius = []
    for horizon in T + n_logged:
        log_det = constants["key_dim"] * math.log(
            1 + horizon * constants["query_norm_bound"] ** 2 / (config.lam * constants["key_dim"])
        )
        radius = (
            constants["noise_sigma"] * math.sqrt(2 * math.log(constants["n_clusters"] / delta) + log_det)
            + math.sqrt(config.lam) * explore_constants["S"]
        )
        oful_radius.append(radius)
    by_mean = {main_mean: terms["approx"], other_mean: curves[ablation["full"]] - curves[ablation["w_star"]]}
    removed = by_mean["frozen"] - by_mean["online"]
    frozen_mean = by_mean["frozen"].mean(0)
    mean_ablation = {
        "description": "R_approx = R(pi_full) - R(pi_W*) with the online mean (ridge estimate shrunk to the attention's cluster "
        "score) and with the frozen mean (the attention's cluster score), on the same runs and warm start; "
        "removed_by_online_mean = R_approx(frozen) - R_approx(online) per run, removed_fraction = its mean over "
        "the mean R_approx(frozen) (None where that is not positive).",
        "T": horizons_arr.tolist(),
        "main_mean": main_mean,
        "R_approx_online": {"mean": by_mean["online"].mean(0).tolist(), "std": _std(by_mean["online"])},
        "R_approx_frozen": {"mean": frozen_mean.tolist(), "std": _std(by_mean["frozen"])},
        "removed_by_online_mean": {"mean": removed.mean(0).tolist(), "std": _std(removed)},
        "removed_fraction": [
            float(r / f) if f > 0 else None for r, f in zip(removed.mean(0), frozen_mean, strict=True)
        ],
        "policies": {main_mean: ["full", "w_star"], other_mean: [ablation["full"], ablation["w_star"]]},
    }
    residual = float(np.abs(terms["approx"] + terms["user"] + terms["explore"] - curves["full"]).max())
    result: dict[str, Any] = {
        "check": "regret_terms",
        "description": "Three-term regret decomposition (paper, sec:decomposition) measured by telescoping over oracle variants of HARE on the same runs.",
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
            **eps,
            "lambda_min_active_at_T": [float(v) for v in sim["lambda_min_active"][:, idx].mean(0)],
            "lambda_min_user_mean_at_T": [float(v) for v in sim["lambda_min_user_mean"].mean(0)],
            "lambda_min_definition": "smallest eigenvalue of the posterior precision of the active user before the round's update (pi_W*); "
            "the user-mean is the average over users at the horizon",
            "lambda_max_at_T": lambda_max.tolist(),
            "max_query_norm": {name: float(v.max()) for name, v in sim["query_norm"].items()},
            "query_norm_bound": constants["query_norm_bound"],
            "query_norm_within_bound": bool(
                sim["query_norm"]["w_star_u_star"].max() <= constants["query_norm_bound"] * (1 + 1e-12)
            ),
            "max_gap_seen": sim["max_gap_seen"],
            "elliptical_potential": _elliptical(
                sim, horizons_arr, constants["key_dim"], config.lam, constants["query_norm_bound"], n_logged
            ),
            "decomposition_residual": residual,
        },
        "regret": {name: {"mean": curves[name].mean(0).tolist(), "std": _std(curves[name])} for name in curves},
        "rows": rows,
        "exponents": exponents,
        "exponent_checks": checks,
        "premises": {
            "rewards_in_unit_interval": bool(constants["max_abs_mean_reward"] <= 1.0),
            "alpha": config.alpha,
            "oful_radius_at_T": oful_radius,
            "alpha_at_least_radius": bool(all(config.alpha >= r for r in oful_radius)),
            "explore_parameter_norm": {
                "value": explore_constants["S"],
                "name": "S_prior" if config.mean == "online" else "S",
                "description": "the radius's sqrt(lam) ||theta*_j - prior_j||: max_j max_{n in j} ||k_n - "
                "mean_{m in j} k_m||/sqrt(d_k) for the online mean (shrunk to theta0_j), "
                "max_n ||k_n||/sqrt(d_k) otherwise",
            },
            "warm_start_bounds": "OFUL-type bounds of the M+1..M+T online rounds: sqrt(T/(M+T)) bound(M+T); user sum with log((M+s)/delta)",
            "notes": [
                (
                    (
                        "hare_explore_oful is derived for OFUL with a ridge estimate per cluster and bonus weight beta_T; HARE's online mean is "
                        "that ridge estimate (shrunk to the attention's cluster score theta0) with a fixed alpha in place of beta_T, and the "
                        "reduction still assumes each cluster's reward linear in q (seed issue seed001_step2_reduction): R_explore also "
                        "carries the gap between the best item and its cluster's linear fit."
                    )
                    if config.mean == "online"
                    else (
                        "hare_explore_oful is derived for OFUL with a ridge estimate per cluster and bonus weight beta_T; with mean: frozen "
                        "HARE selects clusters by the mean attention score of the cluster plus alpha U with alpha fixed (seed issue "
                        "seed001_step2_reduction), so R_explore also carries the gap between the best item and the best cluster mean score."
                    )
                ),
                "L_f bounds the attention-weighted reward; select mode plays the argmax item, which is not Lipschitz in the attention.",
                (
                    "L_u assumes an argmax decision on scores computed with u_hat; HARE's cluster rule with a history-dependent bonus does not "
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
        "shared_environment": "one environment object serves every policy in lock step; round t is a pure function of the run "
        "keys and t, so queries, active users and reward noise are identical across policies",
    }
    result["mean_ablation"] = mean_ablation
    result["bounds_at_horizon"] = _bounds_at_horizon(rows, terms, curves["full"], horizons_arr, max_gap)
    result["explore_split"] = _explore_split(terms["explore"], gap, horizons_arr, exponents)
    result["user_vs_explore"] = _user_vs_explore(terms["user"], terms["explore"], horizons_arr, constants)
    result["diagnostics"] = {
        "selection_gap": {
            "description": "Regret of pi_W*,u* with alpha = 0: exact scores, no bonus; the cluster chosen by its mean score "
            "may not hold the best item (seed issue seed001_explore_cluster_mean_gap). Part of R_explore not "
            "caused by exploration.",
            "T": horizons_arr.tolist(),
            "mean": gap.mean(0).tolist(),
            "std": _std(gap),
            "exponent": exponents.get("explore_selection_gap"),
        },
    }
    if baseline_names:
        result["baselines"] = _baseline_checks(sim, env, horizons_arr, baseline_params, delta, max_gap, n_logged)
    if keep_arrays:
        result["arrays"] = {
            "horizons": horizons_arr,
            **{f"regret_{name}": curves[name] for name in curves},
            **{f"term_{term}": terms[term] for term in TERMS},
            **{f"term_approx_mean_{mean}": value for mean, value in by_mean.items()},
            "lambda_min_active": sim["lambda_min_active"],
            "optimal_arms": sim["optimal_arms"],
            "bound_user_regret_sum": user_seed,
            "elliptical_measured": sim["potential"],
        }
    return result


def _bounds_at_horizon(
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


def _explore_split(
    explore: np.ndarray, gap: np.ndarray, horizons: np.ndarray, exponents: dict[str, Any]
) -> dict[str, Any]:
    """``R_explore`` ``(n_runs, n_T)`` next to its selection-gap part ``gap`` (``pi_W*,u*`` with ``alpha = 0``, same draws)
    and the remainder ``R_explore - gap``: values at every horizon and growth exponents (bootstrap over runs)."""
    remainder = explore - gap
    return {
        "description": "selection_gap: regret of pi_W*,u* with alpha = 0 (exact scores, no bonus) on the same draws, the part of "
        "R_explore that comes from choosing the cluster by its mean score rather than the best item's cluster; "
        "remainder: R_explore - selection_gap per run (may be negative: the two are different policies).",
        "T": horizons.tolist(),
        "explore": {"mean": explore.mean(0).tolist(), "std": _std(explore), "exponent": exponents.get("explore")},
        "selection_gap": {
            "mean": gap.mean(0).tolist(),
            "std": _std(gap),
            "exponent": exponents.get("explore_selection_gap"),
            "at_horizon": t_interval(gap[:, -1]),
        },
        "remainder": {
            "mean": remainder.mean(0).tolist(),
            "std": _std(remainder),
            "exponent": exponents.get("explore_minus_selection_gap"),
            "at_horizon": t_interval(remainder[:, -1]),
        },
        "selection_gap_fraction_at_horizon": t_interval(gap[:, -1] / explore[:, -1])
        if np.all(explore[:, -1] > 0)
        else {**t_interval([]), "note": "R_explore is not positive in every run at the horizon"},
    }


def _user_vs_explore(
    user: np.ndarray, explore: np.ndarray, horizons: np.ndarray, constants: dict[str, Any]
) -> dict[str, Any]:
    """The notes' comparison ``R_user <= R_explore`` (paper, sec:decomposition) when ``d_u << d_k sqrt(C)``: the paired difference
    ``R_user - R_explore`` per run at the largest horizon (same draws), t interval over runs."""
    d_u, d_k, n_clusters = constants["user_dim"], constants["key_dim"], constants["n_clusters"]
    scale = d_k * math.sqrt(n_clusters)
    difference = t_interval(user[:, -1] - explore[:, -1])
    return {
        "description": "R_user - R_explore per run at the largest horizon (paired: same environment draws and policy keys), "
        "t interval over runs; premise of the notes' comparison (paper, sec:decomposition): d_u << d_k sqrt(C).",
        "T": int(horizons[-1]),
        "difference": difference,
        "R_user": t_interval(user[:, -1]),
        "R_explore": t_interval(explore[:, -1]),
        "difference_ci_high_le_zero": None if difference["ci_high"] is None else bool(difference["ci_high"] <= 0.0),
        "d_u": int(d_u),
        "d_k": int(d_k),
        "C": int(n_clusters),
        "d_k_sqrt_C": float(scale),
        "d_u_over_d_k_sqrt_C": float(d_u / scale),
    }


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


def decomposition_check(
    config: dict[str, Any], *, out_json: str | Path, out_tex: str | Path, out_npz: str | Path | None = None
) -> dict[str, Any]:
    """Validate a ``theory.decomposition`` section (:func:`check_settings`), run :func:`run_decomposition` on it and
    write the JSON, the LaTeX fragment and, if ``out_npz`` is given, the per-run arrays; returns the result.

    The section holds ``env_params``, ``hare_params``, ``horizons``, ``n_runs``, ``base_seed`` and
    optionally ``n_logged`` (the warm start's ``M``), ``device``, ``delta``, ``tolerance``, ``n_boot``,
    ``baselines``, ``baseline_params``, ``n_eps_queries``.
    """
    check_settings(config)
    options = {
        k: config[k]
        for k in ("delta", "tolerance", "n_boot", "baselines", "baseline_params", "n_eps_queries", "n_logged")
        if k in config
    }
    result = run_decomposition(
        config.get("env_params", {}),
        config.get("hare_params", {}),
        config["horizons"],
        int(config["n_runs"]),
        int(config.get("base_seed", 0)),
        config.get("device", "cpu"),
        **options,
    )
    write_checks(result, out_json, out_tex)
    if out_npz:
        write_arrays(result, out_npz)
    return result
