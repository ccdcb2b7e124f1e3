"""Benchmark (not a test): rounds per second of NeuralUCB's exploration modes.

A random 10-class problem (``dim`` 20, unit-norm features, disjoint encoding, so ``d_in = 200``)
with training switched off, so the numbers measure the exploration machinery that distinguishes the
modes. Two rates per mode: ``selects_per_second`` times ``select`` alone (the mean and the bonus of
all ``K`` arms: the K-pass problem of the NeuralUCB tutorial chapter, naive vs vectorised Jacobian),
``rounds_per_second`` times ``select`` plus ``update`` (which adds the Sherman–Morrison update of the ``p x p``
inverse ``Z^{-1}``, the same in ``loop`` and ``jacobian``, so the speedup of a whole round is bounded by that
common cost). The modes are timed in turn, several times, and every ratio is taken within one repeat.

    hare bench-neural --out bench.json [--width 20 --rounds 30 --runs 1]
"""

from __future__ import annotations

import platform
import statistics

import torch

from hare.envs.classification import ClassificationBandit
from hare.experiments.simulation import RoundTimer, SimulationOptions, simulate
from hare.experiments.studies.timing import PAIRED_METHOD, t_summary
from hare.policies.base import build_policy
from hare.random import CounterRNG, run_keys


def mode_rates(mode: str, width: int, n_runs: int, rounds: int, n_arms: int, dim: int, device: str) -> dict[str, float]:
    """``{"select": selects/s, "round": rounds/s}`` of NeuralUCB with ``exploration=mode`` over ``rounds``
    timed rounds (after two warm-up rounds), played by :func:`hare.experiments.simulation.simulate` without its
    accounts; ``select`` and ``update`` are clocked separately (:class:`~hare.experiments.simulation.RoundTimer`)."""
    rng = CounterRNG(run_keys(0, [0], "bench-data"))
    n_rows = rounds + 2
    features = torch.nn.functional.normalize(rng.normal("features", 0, (n_rows, dim))[0], dim=-1)
    labels = rng.randint("labels", 0, n_arms, (n_rows,))[0]
    keys = run_keys(0, list(range(n_runs)), "bench")
    env = ClassificationBandit(features, labels, n_runs, n_rows, keys, device)
    params = dict(width=width, exploration=mode, train_steps=0, memory_budget_mb=4096.0)
    policy = build_policy("neural_ucb", params, env, keys.to(device)).to(device)
    timer = RoundTimer(device, split=True)
    simulate(env, policy, SimulationOptions(progress=None, observer=timer, account=False))
    select_seconds, update_seconds = sum(timer.select_seconds[2:]), sum(timer.update_seconds[2:])
    return {"select": rounds / select_seconds, "round": rounds / (select_seconds + update_seconds)}


def bench_neural(
    width: int = 20,
    runs: int = 1,
    rounds: int = 30,
    arms: int = 10,
    dim: int = 20,
    device: str = "cpu",
    repeats: int = 3,
) -> dict:
    """Selects/s and rounds/s of the three exploration modes and their speed over ``loop``.

    Each of ``repeats`` repeats times ``loop``, ``jacobian`` and ``diagonal`` in turn on the same
    rounds, so each repeat gives one back-to-back ratio ``rate(mode) / rate(loop)`` per mode;
    ``ratios`` holds their geometric mean with a t interval (of the log ratio) over repeats, ``repeats`` every
    timing, and the rates and ``*_speedup_*`` fields the medians over repeats.
    """

    if repeats < 1:
        raise ValueError(f"bench.neural_repeats must be at least 1, got {repeats}")
    modes = ("loop", "jacobian", "diagonal")
    timed = [{mode: mode_rates(mode, width, runs, rounds, arms, dim, device) for mode in modes} for _ in range(repeats)]
    ratios = {
        f"{kind}_{mode}_over_loop": t_summary([rep[mode][kind] / rep["loop"][kind] for rep in timed], PAIRED_METHOD)
        for kind in ("select", "round")
        for mode in ("jacobian", "diagonal")
    }
    selects = {mode: statistics.median([rep[mode]["select"] for rep in timed]) for mode in modes}
    rounds_rates = {mode: statistics.median([rep[mode]["round"] for rep in timed]) for mode in modes}
    return {
        "selects_per_second": selects,
        "rounds_per_second": rounds_rates,
        "repeats": timed,
        "ratios": ratios,
        "select_speedup_jacobian_over_loop": statistics.median(
            [rep["jacobian"]["select"] / rep["loop"]["select"] for rep in timed]
        ),
        "select_speedup_diagonal_over_loop": statistics.median(
            [rep["diagonal"]["select"] / rep["loop"]["select"] for rep in timed]
        ),
        "speedup_jacobian_over_loop": statistics.median(
            [rep["jacobian"]["round"] / rep["loop"]["round"] for rep in timed]
        ),
        "speedup_diagonal_over_loop": statistics.median(
            [rep["diagonal"]["round"] / rep["loop"]["round"] for rep in timed]
        ),
        "n_parameters": width * arms * dim + width,
        "settings": {
            "width": width,
            "runs": runs,
            "rounds": rounds,
            "arms": arms,
            "dim": dim,
            "device": device,
            "repeats": repeats,
        },
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "machine": platform.processor() or platform.machine(),
    }
