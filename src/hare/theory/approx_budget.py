"""``R_approx`` against the logged budget ``M`` (paper, sec:decomposition, "Against the logged budget").

The source notes bound the approximation term by ``R_approx <= L_f T epsilon_attn`` and argue that
``epsilon_attn``, the attention error of projections fitted on ``M`` logged interactions,
falls as ``M^{-1/2}``; at a fixed horizon ``T`` the term should then fall as ``M^{-1/2}``.

For every ``M`` of the grid, the policies of :mod:`hare.theory.decomposition` that define
the term play the same runs of linear HARE-Sim:

* ``pi_full``  HARE with projections ``W_hat`` fitted on the ``M`` logs;
* ``pi_W*``    HARE with the oracle projections ``W*``;

both warm-started with the same ``M`` logged interactions
(:func:`hare.experiments.simulation.simulate` with ``logs``: online rounds shown as ``M + t``), so

    R_approx(M) = R_T(pi_full; M) - R_T(pi_W*; M)        per run, at the horizon T.

The environment object (and so the queries, active users and reward noise of every online
round, a pure function of the run keys and ``t``) is the same for every ``M`` and both
policies; the run keys are those of :func:`hare.theory.decomposition.run_decomposition`.
The logs are one logged set per ``M`` shared by every run (:meth:`SyntheticBandit.logged`),
so ``W_hat`` is one fit per ``M``: the spread over runs is that of the online rounds, not
that of the log draw.

Exponent: the least-squares slope ``k`` of ``log mean_runs R_approx(M)`` on ``log M``
(:func:`hare.statistics.fit_exponent` with ``M`` in place of ``T``), with a
percentile bootstrap interval over runs. A non-positive mean ``R_approx`` at some ``M`` has
no logarithm: the exponent is then ``null``. ``epsilon_attn(M)``
(:func:`hare.theory.decomposition_observer.measure_epsilon_attn`) and its log-log slope are reported
beside it (one fit per ``M``: no interval).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.experiments.job_setup import deterministic_kernels
from hare.experiments.settings.theory import variant_params
from hare.experiments.settings.theory_settings import ApproxBudgetSettings
from hare.experiments.simulation import SimulationOptions, prebuilt_rounds, simulate
from hare.policies.base import build_policy
from hare.random import run_keys
from hare.report.theory_tables import write_approx_budget
from hare.statistics import fit_exponent, slope
from hare.theory.decomposition_observer import measure_epsilon_attn

__all__ = [
    "approx_budget_check",
    "exponent_record",
    "exponent_summary",
    "run_approx_budget",
]

PREDICTED_EXPONENT = -0.5


def exponent_record(
    x: Sequence[float], samples: np.ndarray, n_boot: int = 2000, seed: int = 0, level: float = 0.95
) -> dict[str, Any] | None:
    """Exponent ``k`` of ``y ~ c x^k`` with the uncertainty-contract fields, or None if undefined.

    ``samples`` ``(n_runs, n_x)``: one curve per run, fitted by :func:`fit_exponent` (slope of
    ``log mean_runs y`` on ``log x``, percentile bootstrap over runs). ``samples``
    ``(n_runs, n_groups, n_x)``: the pooled exponent, the mean over groups of the per-group
    slopes (the common slope of a least-squares fit with one intercept per group, the grid of
    ``x`` being shared), every group resampled with the same runs (paired). None when a mean
    curve is not positive at every ``x``.
    """
    samples = np.asarray(samples, dtype=float)
    n_runs = samples.shape[0]
    if samples.ndim == 2:
        fit = fit_exponent(x, samples, n_boot=n_boot, seed=seed, level=level)
        method = f"least-squares log-log slope; percentile bootstrap over runs, n_boot={n_boot}"
    else:
        fit = _pooled_fit(np.asarray(x, dtype=float), samples, n_boot, seed, level)
        method = (
            f"mean over {samples.shape[1]} groups of the least-squares log-log slopes; "
            f"paired percentile bootstrap over runs, n_boot={n_boot}"
        )
    if fit["estimate"] is None:
        return None
    return {
        "estimate": fit["estimate"],
        "ci_low": fit["ci_low"],
        "ci_high": fit["ci_high"],
        "level": level,
        "n": int(n_runs),
        "method": method,
        "n_boot": fit["n_boot"],
        "n_boot_valid": fit["n_boot_valid"],
        "seed": fit["seed"],
    }


def _pooled_fit(x: np.ndarray, samples: np.ndarray, n_boot: int, seed: int, level: float) -> dict[str, Any]:
    """Mean over groups of the log-log slopes of ``samples`` ``(n_runs, n_groups, n_x)``; resamples as
    :func:`fit_exponent`."""
    log_x = np.log(x)
    mean = samples.mean(0)  # (n_groups, n_x)
    estimate = float(slope(log_x, np.log(mean)).mean()) if np.all(mean > 0) else None
    rng = np.random.default_rng(seed)
    index = rng.integers(0, samples.shape[0], size=(n_boot, samples.shape[0]))
    boot = samples[index].mean(1)  # (n_boot, n_groups, n_x)
    valid = np.all(boot > 0, axis=(1, 2))
    slopes = slope(log_x, np.log(boot[valid])).mean(-1) if valid.any() else np.empty(0)
    tail = 100 * (1 - level) / 2
    low, high = (float(v) for v in np.percentile(slopes, [tail, 100 - tail])) if slopes.size else (None, None)
    return {
        "estimate": estimate,
        "ci_low": low,
        "ci_high": high,
        "n_boot": int(n_boot),
        "n_boot_valid": int(valid.sum()),
        "seed": int(seed),
    }


def _std(values: np.ndarray) -> list[float | None]:
    """Sample standard deviation over runs (axis 0); None with one run."""
    return values.std(0, ddof=1).tolist() if values.shape[0] > 1 else [None] * values.shape[1]


def run_approx_budget(
    env_params: dict[str, Any],
    hare_params: dict[str, Any],
    budgets: Sequence[int],
    horizon: int,
    n_runs: int,
    base_seed: int = 0,
    device: str = "cpu",
    n_boot: int = 2000,
    n_eps_queries: int = 2048,
) -> dict[str, Any]:
    """``R_approx(M)`` at horizon ``T`` for every ``M`` of ``budgets`` over ``n_runs`` runs (module docstring).

    Returns the result mapping; ``arrays`` holds ``regret_full``, ``regret_w_star`` and ``r_approx``, each ``(n_runs,
    n_M)``.
    """
    started, cpu_started = time.perf_counter(), time.process_time()
    budgets = [int(m) for m in budgets]
    env_config = SyntheticConfig(**env_params)
    hare_params = {"key_dim": env_config.key_dim, **hare_params}
    deterministic_kernels(device)
    env_keys = run_keys(base_seed, range(n_runs), "decomposition", "environment")
    policy_keys = run_keys(base_seed, range(n_runs), "decomposition", "policy")
    env = SyntheticBandit(env_config, n_runs, int(horizon), env_keys, device)
    regret = {variant: np.zeros((n_runs, len(budgets))) for variant in ("full", "w_star")}
    epsilon_attn, digests = [], []
    rounds = prebuilt_rounds(env)
    for k, budget in enumerate(budgets):
        logs = env.logged(budget)
        digests.append(logs.digest())
        for variant in regret:
            policy = build_policy("hare", variant_params(hare_params, variant), env, policy_keys).to(device)
            regret[variant][:, k] = simulate(
                env, policy, SimulationOptions(record_every=int(horizon), rounds=rounds), logs=logs
            )["total_regret"]
            if variant == "full":
                epsilon_attn.append(measure_epsilon_attn(env, policy, base_seed, n_eps_queries)["epsilon_attn"])
    r_approx = regret["full"] - regret["w_star"]
    mean = r_approx.mean(0)
    exponent = exponent_record(budgets, r_approx, n_boot=n_boot, seed=int(base_seed))
    epsilon_attn = np.asarray(epsilon_attn)
    return {
        "check": "approx_budget",
        "description": "R_approx = R_T(pi_full) - R_T(pi_W*) at a fixed horizon T against the logged budget M of the "
        "warm start "
        "(R_approx of paper, sec:decomposition, predicted to fall as M^(-1/2)).",
        "config": {
            "env_params": dict(env_params),
            "hare_params": dict(hare_params),
            "budgets": budgets,
            "horizon": int(horizon),
            "n_runs": int(n_runs),
            "base_seed": int(base_seed),
            "n_boot": int(n_boot),
            "n_eps_queries": int(n_eps_queries),
        },
        "budgets": budgets,
        "horizon": int(horizon),
        "predicted_exponent": PREDICTED_EXPONENT,
        "exponent": exponent,
        "exponent_undefined": None
        if exponent is not None
        else f"mean R_approx is not positive at M = {[m for m, v in zip(budgets, mean, strict=True) if v <= 0]}: "
        f"log-log slope undefined",
        "r_approx": {
            "mean": mean.tolist(),
            "std": _std(r_approx),
            "positive_fraction": (r_approx > 0).mean(0).tolist(),
        },
        "regret": {
            variant: {"mean": values.mean(0).tolist(), "std": _std(values)} for variant, values in regret.items()
        },
        "epsilon_attn": {
            "values": epsilon_attn.tolist(),
            "slope": float(slope(np.log(budgets), np.log(epsilon_attn))) if np.all(epsilon_attn > 0) else None,
            "method": "least-squares log-log slope over M; one fit of W_hat per M, no interval",
        },
        "warm_start": {
            "digests": digests,
            "description": "one logged set per M shared by every run and both policies; "
            "online rounds shown as M + t, regret counts the online rounds",
        },
        "wall_seconds": time.perf_counter() - started,
        "cpu_seconds": time.process_time() - cpu_started,
        "arrays": {"regret_full": regret["full"], "regret_w_star": regret["w_star"], "r_approx": r_approx},
    }


def approx_budget_check(settings: ApproxBudgetSettings, *, out_json: str | Path, out_tex: str | Path) -> dict[str, Any]:
    """Run :func:`run_approx_budget` on the settings of a ``theory.approx_budget`` section, read at the config
    boundary (:func:`hare.experiments.settings.theory_section`), and write ``approx_budget.json`` and its LaTeX
    fragment; returns the result.

    An optional setting the section leaves out (``None``: ``n_boot``, ``n_eps_queries``) takes
    :func:`run_approx_budget`'s default; ``base_seed`` 0, ``device`` ``cpu``.
    """
    result = run_approx_budget(
        dict(settings.env_params or {}),
        dict(settings.hare_params or {}),
        list(settings.budgets),
        settings.horizon,
        settings.n_runs,
        settings.base_seed or 0,
        settings.device or "cpu",
        **settings.given("n_boot", "n_eps_queries"),
    )
    write_approx_budget(result, out_json, out_tex)
    return result


def exponent_summary(result: dict[str, Any]) -> str:
    """One line: the exponent of ``R_approx`` in ``M`` with its interval, and the wall time of the run."""
    fit = result["exponent"]
    return (
        "R_approx exponent in M: "
        + ("undefined" if fit is None else f"{fit['estimate']:.3f} [{fit['ci_low']}, {fit['ci_high']}]")
        + f" ({result['wall_seconds']:.1f} s)"
    )
