"""HARE's regret against the number of heads ``H`` and the bonus weight ``alpha`` (paper, sec:decomposition, "Heads and
bonus weight").

The theorem of the source notes states (informally; paper, sec:seed-issues) ``R(T) = O(d sqrt(T log T) sqrt(H) (1 +
alpha^2/d_k))``: at a
fixed horizon, regret grows with ``H`` no faster than ``H^{1/2}`` and with ``alpha`` as the
factor ``g(alpha) = 1 + alpha^2 / d_k``.

On linear HARE-Sim, HARE (select mode, ``hare_params``; the configs use learned projections, so
the heads differ: with oracle projections every head holds ``W*`` and ``H`` changes nothing)
plays every cell ``(H, alpha)`` of the grid on the same environment object, so the queries,
active users and reward noise of every run are the same in every cell (paired comparisons),
each policy warm-started with the same ``n_logged`` logged interactions
(:func:`hare.experiments.simulation.simulate` with ``logs``). ``R_T(H, alpha)`` is the total online
pseudo-regret of a run, an array ``(n_runs, n_H, n_alpha)``.

Exponents (each the least-squares slope of ``log mean_runs R_T`` on the log of the regressor,
with a percentile bootstrap interval over runs, the same run resamples for every cell,
:func:`hare.theory.approx_budget.exponent_record`):

* ``exponent_H.by_alpha[j]``: slope in ``H`` at ``alpha_j``; ``exponent_H.pooled``: the mean of
  these slopes (the common slope with one intercept per ``alpha``);
* ``exponent_g.by_H[i]``: slope in ``g(alpha) = 1 + alpha^2/d_k`` at ``H_i``; ``exponent_g.pooled``
  likewise. ``d_k`` is HARE's key dimension.

That bound predicts ``exponent_H <= 1/2`` and ``exponent_g <= 1``. An upper bound's rate
says nothing about a decrease: a negative slope is consistent with it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.experiments.job_setup import deterministic_kernels
from hare.experiments.settings.theory import cell_params
from hare.experiments.settings.theory_settings import HeadsAlphaSettings
from hare.experiments.simulation import SimulationOptions, prebuilt_rounds, simulate
from hare.policies.base import build_policy
from hare.random import run_keys
from hare.report.theory_tables import fit_text, write_heads_alpha
from hare.theory.approx_budget import exponent_record

__all__ = [
    "alpha_factor",
    "exponent_summary",
    "heads_alpha_check",
    "run_heads_alpha",
]

PREDICTED = {"H": 0.5, "g": 1.0}


def alpha_factor(alphas: Sequence[float], key_dim: int) -> np.ndarray:
    """``g(alpha) = 1 + alpha^2 / d_k`` for every ``alpha``: ``(n_alpha,)``."""
    return 1.0 + np.asarray(alphas, dtype=float) ** 2 / key_dim


def _cell_stats(values: np.ndarray) -> dict[str, list]:
    """Mean and sample std over runs of ``values`` ``(n_runs, n_H, n_alpha)``: nested lists ``[H][alpha]``."""
    std = values.std(0, ddof=1) if values.shape[0] > 1 else np.full(values.shape[1:], np.nan)
    return {"mean": values.mean(0).tolist(), "std": [[None if np.isnan(s) else float(s) for s in row] for row in std]}


def run_heads_alpha(
    env_params: dict[str, Any],
    hare_params: dict[str, Any],
    heads: Sequence[int],
    alphas: Sequence[float],
    horizon: int,
    n_runs: int,
    base_seed: int = 0,
    n_logged: int = 1000,
    device: str = "cpu",
    n_boot: int = 2000,
) -> dict[str, Any]:
    """Total regret of HARE at ``horizon`` for every ``(H, alpha)`` over ``n_runs`` paired runs, and its exponents
    (module docstring).

    ``arrays["regret"]`` is ``(n_runs, n_H, n_alpha)``.
    """
    started, cpu_started = time.perf_counter(), time.process_time()
    heads, alphas = [int(h) for h in heads], [float(a) for a in alphas]
    env_config = SyntheticConfig(**env_params)
    hare_params = {"key_dim": env_config.key_dim, **hare_params}
    deterministic_kernels(device)
    env = SyntheticBandit(
        env_config, n_runs, int(horizon), run_keys(base_seed, range(n_runs), "heads-alpha", "environment"), device
    )
    policy_keys = run_keys(base_seed, range(n_runs), "heads-alpha", "policy")
    logs = env.logged(n_logged)
    regret = np.zeros((n_runs, len(heads), len(alphas)))
    key_dim = None
    rounds = prebuilt_rounds(env)
    for i, h in enumerate(heads):
        for j, a in enumerate(alphas):
            policy = build_policy("hare", cell_params(hare_params, h, a), env, policy_keys).to(device)
            regret[:, i, j] = simulate(
                env, policy, SimulationOptions(record_every=int(horizon), rounds=rounds), logs=logs
            )["total_regret"]
            key_dim = policy.key_dim
    factor = alpha_factor(alphas, key_dim)
    seed = int(base_seed)
    by_alpha = [exponent_record(heads, regret[:, :, j], n_boot=n_boot, seed=seed) for j in range(len(alphas))]
    by_heads = [exponent_record(factor, regret[:, i, :], n_boot=n_boot, seed=seed) for i in range(len(heads))]
    return {
        "check": "heads_alpha",
        "description": "Total pseudo-regret of HARE at a fixed horizon over a grid of heads H and bonus weights alpha "
        "on paired runs of "
        "linear HARE-Sim (the notes' theorem, paper, sec:seed-issues: R(T) = O(d sqrt(T log T) sqrt(H) (1 + "
        "alpha^2/d_k))).",
        "config": {
            "env_params": dict(env_params),
            "hare_params": dict(hare_params),
            "heads": heads,
            "alphas": alphas,
            "horizon": int(horizon),
            "n_runs": int(n_runs),
            "base_seed": int(base_seed),
            "n_logged": int(n_logged),
            "n_boot": int(n_boot),
        },
        "heads": heads,
        "alphas": alphas,
        "key_dim": int(key_dim),
        "alpha_factor": factor.tolist(),
        "horizon": int(horizon),
        "predicted_max_exponent": dict(PREDICTED),
        "regret": _cell_stats(regret),
        "exponent_H": {
            "by_alpha": by_alpha,
            "pooled": exponent_record(heads, np.swapaxes(regret, 1, 2), n_boot=n_boot, seed=seed),
            "regressor": "H",
        },
        "exponent_g": {
            "by_H": by_heads,
            "pooled": exponent_record(factor, regret, n_boot=n_boot, seed=seed),
            "regressor": "g(alpha) = 1 + alpha^2 / d_k",
        },
        "heads_identical": hare_params.get("projections", "oracle") == "oracle",
        "paired": "one environment object and one set of policy keys serve every cell; round t is a pure function of "
        "the run keys and t",
        "warm_start": {"n_logged": int(n_logged), "digest": logs.digest()},
        "wall_seconds": time.perf_counter() - started,
        "cpu_seconds": time.process_time() - cpu_started,
        "arrays": {"regret": regret},
    }


def heads_alpha_check(settings: HeadsAlphaSettings, *, out_json: str | Path, out_tex: str | Path) -> dict[str, Any]:
    """Run :func:`run_heads_alpha` on the settings of a ``theory.heads_alpha`` section, read at the config boundary
    (:func:`hare.experiments.settings.theory_section`), and write ``heads_alpha.json`` and its LaTeX fragment;
    returns the result.

    An optional setting the section leaves out (``None``: ``n_boot``, ``n_logged``, ``base_seed``, ``device``) takes
    :func:`run_heads_alpha`'s default.
    """
    result = run_heads_alpha(
        dict(settings.env_params or {}),
        dict(settings.hare_params or {}),
        list(settings.heads),
        list(settings.alphas),
        settings.horizon,
        settings.n_runs,
        **settings.given("n_boot", "n_logged", "base_seed", "device"),
    )
    write_heads_alpha(result, out_json, out_tex)
    return result


def exponent_summary(result: dict[str, Any]) -> str:
    """One line: the pooled exponents in ``H`` and in ``g(alpha)`` with their intervals, and the run's wall time."""
    return (
        f"exponent in H (pooled): {fit_text(result['exponent_H']['pooled'])}; in g (pooled): "
        f"{fit_text(result['exponent_g']['pooled'])} "
        f"({result['wall_seconds']:.1f} s)"
    )
