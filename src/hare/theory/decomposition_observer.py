"""What the regret decomposition measures on the instance and during the play (paper, sec:decomposition):
the instance's constants (:func:`instance_constants`), the attention error of the learned projections
(:func:`measure_epsilon_attn`), and the per-round measurements of every policy while it plays
(:class:`Measurements`, :func:`simulate_variants`). The bounds and fits on them are
:mod:`hare.theory.decomposition_stats`; the study as a whole, :mod:`hare.theory.decomposition`.

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
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from hare.envs.base import LoggedRounds
from hare.envs.synthetic import SyntheticBandit
from hare.experiments.settings.theory import VARIANTS
from hare.experiments.simulation import RoundObserver, SimulationOptions, prebuilt_rounds, simulate
from hare.model.projections import attention_error, oracle_projections
from hare.random import CounterRNG, run_keys

__all__ = ["Measurements", "instance_constants", "measure_epsilon_attn", "simulate_variants"]


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


def measure_epsilon_attn(env: SyntheticBandit, full, base_seed: int, n_queries: int) -> dict[str, float]:
    """``epsilon_attn`` of the projections ``pi_full`` fitted in its warm start (with its fitted user table)."""
    learned, report = full.projections, full.fit_report
    device = env.pool.embeddings.device
    oracle = oracle_projections(env, full.n_heads).to(device)
    rng = CounterRNG(run_keys(base_seed, [0], "decomposition", "epsilon-attn").to(device))
    queries = torch.nn.functional.normalize(rng.normal("query", 0, (n_queries, env.query_dim))[0], dim=-1)
    users = rng.randint("user", 0, env.n_users, (n_queries,))[0]
    epsilon_attn = attention_error(
        learned.to(device), report.user_states.to(device), oracle, env.users, queries, users, env.pool.embeddings
    )
    return {"epsilon_attn": epsilon_attn, "epsilon_train": float(report.epsilon_train), "n_queries": int(n_queries)}


class Measurements(RoundObserver):
    """The quantities of the module docstring measured while policy ``name`` plays (:func:`simulate_variants`).

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


def simulate_variants(
    env: SyntheticBandit, policies: dict[str, Any], horizons: np.ndarray, logs: LoggedRounds
) -> dict[str, np.ndarray]:
    """Play every policy, warm-started on ``logs``, on the same rounds (:func:`hare.experiments.simulation.simulate`:
    online round ``t`` shown as ``M + t``), one after another; record regret and the measured quantities
    (:class:`Measurements`) at ``horizons``.

    ``round(t)`` is a pure function of the run keys and ``t``, and the policies share no state, so each policy
    sees the rounds and makes the choices it would make in lock step with the others; the rounds are drawn once
    (:func:`hare.experiments.simulation.prebuilt_rounds`).
    """
    curves, measured = {}, {}
    rounds = prebuilt_rounds(env)
    for name, policy in policies.items():
        measured[name] = Measurements(name, policy, env, horizons, environment=not measured)
        arrays = simulate(
            env,
            policy,
            SimulationOptions(
                progress=None,
                on_record=measured[name].record,
                record_at=horizons,
                observer=measured[name],
                rounds=rounds,
            ),
            logs=logs,
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
