"""How every policy's cost grows: seconds per round against the round ``t``, the arms ``K``, the context dimension
``d`` and the runs ``B`` (issue 30, item 4; paper, sec:cost-growth).

A benchmark, not a test. One representative policy per family plays a HARE-Sim instance (linear variant, identity
link; :mod:`hare.envs.synthetic`) whose ``K = n_items``, ``d = query_dim + n_users`` (the context ``[x,
onehot(user)]`` every arm shares; HARE's items get ``item_dim = d``), ``B`` and horizon are set directly, in the cold
regime, through the one round loop (:func:`hare.experiments.simulation.simulate`), every round timed by its
:class:`~hare.experiments.simulation.RoundTimer` as a job spends it (the environment's round, the input check, the
choice, the update, the sums). Four one-factor sweeps around the base point ``(T, K, d, B)`` of
:class:`~hare.experiments.settings.cost_growth.CostGrowthSettings`:

* ``t``: one play of ``max(rounds)`` rounds at the base point; the cell at ``t`` holds rounds ``t - w + 1 .. t``
  (``w = window``);
* ``K``, ``d``, ``B``: one play of ``T`` rounds per value; the cell holds the last ``w`` rounds.

A cell's cost ``c`` is the mean of its ``w`` round times. The growth exponent along an axis is the least-squares
slope of ``log c`` on ``log x`` over the measured cells (:func:`hare.statistics.fit_exponent`, ``c ~ a x^k``), with a
percentile-bootstrap interval that resamples the ``w`` rounds (row ``i``: the ``i``-th round of every cell's window).
A cell whose rounds were not all played within ``budget_s`` (the ``t`` play: ``budget_s`` per value of ``rounds``) is
skipped, and so is every larger value of its axis: the work grows along every axis, so they would not finish
either. :data:`EXPECTED` gives the order of the per-round work each algorithm implies.
"""

from __future__ import annotations

import logging
import platform
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.experiments.settings.cost_growth import CostGrowthSettings
from hare.experiments.simulation import RoundTimer, SimulationOptions, simulate
from hare.io import write_json
from hare.policies.base import build_policy
from hare.random import run_keys
from hare.statistics import fit_exponent

log = logging.getLogger(__name__)

AXES = ("t", "K", "d", "B")
"""The swept quantities: round, arms, context dimension, runs."""

SWEEP_OF = {"t": "rounds", "K": "arms", "d": "dims", "B": "runs"}
"""The settings field holding each axis's values."""

FAMILIES = {
    "ucb1": "classic",
    "linucb": "ridge",
    "lin_ts": "Thompson",
    "kernel_ucb": "kernel",
    "neural_ucb": "neural",
    "knn_ucb": "neighbours",
    "lnucb_ta": "neighbours",
    "hare": "HARE",
}

EXPECTED: dict[str, tuple[str, dict[str, float]]] = {
    "ucb1": ("B K", {"t": 0, "K": 1, "d": 0, "B": 1}),
    "linucb": ("B K d^2", {"t": 0, "K": 1, "d": 2, "B": 1}),
    "lin_ts": ("B K d^3", {"t": 0, "K": 1, "d": 3, "B": 1}),
    "kernel_ucb": ("B (t^2 / K + t d)", {"t": 2, "K": -1, "d": 0, "B": 1}),
    "neural_ucb": ("B K d m", {"t": 0, "K": 1, "d": 1, "B": 1}),
    "knn_ucb": ("B t d", {"t": 1, "K": 0, "d": 1, "B": 1}),
    "lnucb_ta": ("B (t d + K d^2)", {"t": 1, "K": 1, "d": 2, "B": 1}),
    "hare": ("B K d_k (d + d_k)", {"t": 0, "K": 1, "d": 1, "B": 1}),
}
"""Per policy: the leading per-round work the algorithm implies (``m``: the network's width, ``d_k``: HARE's key
dimension) and its exponent along each axis. LinUCB scores ``K`` quadratic forms in a ``d x d`` inverse; LinTS adds
a Cholesky factor per arm; KernelUCB reads one ``n_a x n_a`` inverse per arm (``t^2 / K`` with the arms pulled
evenly; the blocks are padded to the largest one) and computes each arm's kernel row against that arm's points only
(``t d`` in all), until ``max_points`` caps ``t``; NeuralUCB's per-round cost is its training in the dense
phase (``t`` below ``dense_training_rounds``); kNN-UCB measures distances to the ``t`` past contexts once (the
context is shared by the arms); LNUCB-TA adds LinUCB's ridge to that search; HARE's attention reads ``K`` keys and its
update touches the chosen cluster's ``d_k x d_k`` covariance only."""


def environment(settings: CostGrowthSettings, n_arms: int, dim: int, n_runs: int, horizon: int) -> SyntheticBandit:
    """HARE-Sim at ``K = n_arms`` items, ``d = dim`` (``query_dim = d - n_users``, ``item_dim = d``), ``B = n_runs``
    runs and ``horizon`` rounds; keys from the settings' seed, the same for every policy."""
    config = SyntheticConfig(
        n_items=n_arms,
        n_clusters=settings.n_clusters,
        item_dim=dim,
        query_dim=dim - settings.n_users,
        n_users=settings.n_users,
        variant="linear",
        link="identity",
        noise_sigma=0.1,
    )
    keys = run_keys(settings.base_seed, range(n_runs), "cost_growth", "environment")
    return SyntheticBandit(config, n_runs, horizon, keys)


def play_seconds(
    settings: CostGrowthSettings,
    policy: str,
    point: Mapping[str, int],
    horizon: int,
    budget_s: float,
    clock: Callable[[], float] = time.perf_counter,
) -> list[float]:
    """Seconds of every round ``policy`` played at ``point`` (``{"n_arms", "dim", "n_runs"}``) within ``budget_s``
    (at least one round), up to ``horizon`` rounds, cold."""
    env = environment(settings, point["n_arms"], point["dim"], point["n_runs"], horizon)
    env.logs_allowed = False
    keys = run_keys(settings.base_seed, range(point["n_runs"]), "cost_growth", policy, "policy")
    built = build_policy(policy, dict(settings.policies[policy] or {}), env, keys)
    timer = RoundTimer(budget_s=budget_s, clock=clock)
    simulate(env, built, SimulationOptions(progress=None, observer=timer, stop=timer.over_budget))
    return timer.round_seconds


def window_cell(value: int, seconds: list[float], end: int, window: int) -> dict[str, Any]:
    """The cell at ``value`` from round times ``seconds``: rounds ``end - window + 1 .. end`` (1-based), or skipped
    (``"budget"``) when the play stopped before round ``end``."""
    if len(seconds) < end:
        return skipped_cell(value, f"budget: {len(seconds)} of {end} rounds played", len(seconds))
    samples = [float(s) for s in seconds[end - window : end]]
    return {"value": value, "seconds": float(np.mean(samples)), "samples": samples, "skipped": None, "rounds": end}


def skipped_cell(value: int, reason: str, rounds: int = 0) -> dict[str, Any]:
    return {"value": value, "seconds": None, "samples": None, "skipped": reason, "rounds": rounds}


def growth_exponent(cells: list[dict[str, Any]], n_boot: int = 1000, seed: int = 0) -> dict[str, Any] | None:
    """``c ~ a x^k`` over the measured cells: :func:`hare.statistics.fit_exponent` of their costs on their values,
    the bootstrap resampling rounds (a ``(w, n_cells)`` matrix); ``None`` with fewer than two measured cells."""
    measured = [cell for cell in cells if cell["skipped"] is None]
    if len(measured) < 2:
        return None
    samples = np.array([cell["samples"] for cell in measured], dtype=np.float64).T  # (w, n_cells)
    fit = fit_exponent([cell["value"] for cell in measured], samples, n_boot=n_boot, seed=seed)
    return {key: fit[key] for key in ("estimate", "ci_low", "ci_high", "level", "n", "method")} | {
        "n_cells": len(measured)
    }


def sweep_policy(
    settings: CostGrowthSettings, policy: str, clock: Callable[[], float] = time.perf_counter
) -> dict[str, Any]:
    """The four axes of one policy: ``{axis: {"values", "cells", "exponent", "expected"}}`` (module docstring)."""
    base = dict(settings.base)
    point = {key: base[key] for key in ("n_arms", "dim", "n_runs")}
    axes: dict[str, dict[str, Any]] = {}
    rounds = list(settings.rounds)
    try:
        seconds = play_seconds(settings, policy, point, max(rounds), settings.budget_s * len(rounds), clock)
        cells = [window_cell(t, seconds, t, settings.window) for t in rounds]
    except (RuntimeError, MemoryError, ValueError) as error:
        cells = [skipped_cell(t, f"error: {' '.join(str(error).split())}") for t in rounds]
    axes["t"] = cells
    for axis, key in (("K", "n_arms"), ("d", "dim"), ("B", "n_runs")):
        cells, reason = [], None
        for value in getattr(settings, SWEEP_OF[axis]):
            if reason is not None:
                cells.append(skipped_cell(value, f"a smaller {axis} was skipped ({reason})"))
                continue
            try:
                seconds = play_seconds(
                    settings, policy, {**point, key: value}, base["horizon"], settings.budget_s, clock
                )
                cell = window_cell(value, seconds, base["horizon"], settings.window)
            except (RuntimeError, MemoryError, ValueError) as error:
                cell = skipped_cell(value, f"error: {' '.join(str(error).split())}")
            reason = cell["skipped"] and cell["skipped"].split(":")[0]
            cells.append(cell)
        axes[axis] = cells
    formula, expected = EXPECTED.get(policy, ("", {}))
    return {
        "family": FAMILIES.get(policy, policy),
        "params": dict(settings.policies[policy] or {}),
        "expected_work": formula,
        "axes": {
            axis: {
                "values": [cell["value"] for cell in cells],
                "cells": cells,
                "exponent": growth_exponent(cells),
                "expected": expected.get(axis),
            }
            for axis, cells in axes.items()
        },
    }


def run_cost_growth(settings: CostGrowthSettings, clock: Callable[[], float] = time.perf_counter) -> dict[str, Any]:
    """Every policy of ``settings`` along every axis, one thread: ``{"settings", "machine", "axes", "order" (the
    policies in :data:`FAMILIES` order; the JSON's keys are sorted), "policies": {name: sweep_policy(...)},
    "wall_s"}``; plain data."""
    torch.set_num_threads(1)
    start = time.perf_counter()
    policies = {}
    order = list(FAMILIES)
    for policy in sorted(settings.policies, key=lambda name: order.index(name) if name in order else len(order)):
        policies[policy] = sweep_policy(settings, policy, clock)
        log.info(
            "%s: exponents %s",
            policy,
            {axis: (a["exponent"] or {}).get("estimate") for axis, a in policies[policy]["axes"].items()},
        )
    return {
        "settings": {
            **asdict(settings),
            "base": dict(settings.base),
            "policies": {k: dict(v or {}) for k, v in settings.policies.items()},
        },
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "torch": torch.__version__,
            "threads": 1,
        },
        "axes": list(AXES),
        "order": list(policies),
        "policies": policies,
        "wall_s": time.perf_counter() - start,
    }


def cost_growth_check(settings: CostGrowthSettings, *, out_json: str | Path) -> dict[str, Any]:
    """The ``cost_growth`` section's settings (read at the config boundary,
    :func:`hare.experiments.settings.study_settings`) measured (:func:`run_cost_growth`) and written to ``out_json``
    (strict JSON); returns the result."""
    result = run_cost_growth(settings)
    write_json(out_json, result)
    return result
