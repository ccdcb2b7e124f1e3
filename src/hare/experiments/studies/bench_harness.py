"""The harness every benchmark of the policies shares (:mod:`hare.experiments.studies.bench`,
:mod:`hare.experiments.studies.bench_linucb`, :mod:`hare.experiments.studies.bench_baselines`): the environment a
dataset is played in, one timed play of a policy and the median of several, and the record of an entry that could
not be timed.

A timed play (:func:`time_policy`) reads the clock after synchronising the device, before the first round and after
the last, around rounds generated beforehand (:func:`hare.experiments.simulation.prebuilt_rounds`), so that it holds
the policy's ``select`` and ``update`` alone.
"""

from __future__ import annotations

import math
import platform
import time
from typing import Any

import numpy as np
import torch

from hare.envs.base import BanditEnvironment, BanditRound
from hare.envs.classification import ClassificationBandit
from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.experiments.simulation import SimulationOptions, simulate
from hare.experiments.studies.timing import synchronise
from hare.policies import build_policy
from hare.random import run_keys

DatasetSpec = tuple[np.ndarray, np.ndarray] | SyntheticConfig


def make_environment(spec: DatasetSpec, n_runs: int, horizon: int, device: str) -> BanditEnvironment:
    """A classification bandit from ``(features (n_rows, dim), labels (n_rows,))`` or HARE-Sim from its config."""
    keys = run_keys(0, range(n_runs), "bench-env")
    if isinstance(spec, SyntheticConfig):
        return SyntheticBandit(spec, n_runs, horizon, keys, device)
    features, labels = spec
    features = torch.as_tensor(np.asarray(features, dtype=np.float64))
    features = features / features.norm(dim=1, keepdim=True).clamp_min(1e-12)
    return ClassificationBandit(
        features, torch.as_tensor(np.asarray(labels, dtype=np.int64)), n_runs, horizon, keys, device
    )


def time_policy(
    name: str,
    params: dict,
    env: BanditEnvironment,
    rounds: list[BanditRound],
    device: str,
    warmup: int = 2,
    max_seconds: float = math.inf,
) -> tuple[int, float]:
    """``(rounds played, seconds)`` of ``select`` + ``update`` over ``rounds``, after up to ``warmup``
    untimed rounds on a fresh copy; each phase stops after the first round that ends past ``max_seconds``.

    The rounds are played by :func:`hare.experiments.simulation.simulate` without its accounts (no input check,
    no regret), so the clock, read after synchronising the device before the first round and after the last,
    holds the policy's work alone."""
    keys = run_keys(0, range(env.n_runs), "bench", name).to(device)
    policy = None
    for repeat in ("warmup", "timed"):
        del policy  # the warm-up copy goes before the timed one is built: at MNIST scale each holds 2 GB
        policy = build_policy(name, params, env, keys).to(device)
        steps = rounds[:warmup] if repeat == "warmup" else rounds
        synchronise(device)
        start = time.perf_counter()
        played = int(
            simulate(
                env,
                policy,
                SimulationOptions(
                    progress=None,
                    rounds=steps,
                    account=False,
                    stop=lambda t, start=start: time.perf_counter() - start > max_seconds,
                ),
            )["rounds_played"]
        )
        synchronise(device)
        elapsed = time.perf_counter() - start
    return played, elapsed


TIMING_ERRORS = (RuntimeError, ValueError, KeyError, TypeError, MemoryError, NotImplementedError)


def median_timing(
    name: str,
    params: dict,
    env: BanditEnvironment,
    rounds: list[BanditRound],
    device: str,
    repeats: int,
    max_seconds: float,
) -> dict[str, Any]:
    """``rounds, seconds, rounds_runs_per_second`` of the median of ``repeats`` :func:`time_policy` timings."""
    timings = sorted(
        (time_policy(name, params, env, rounds, device, max_seconds=max_seconds) for _ in range(repeats)),
        key=lambda pair: pair[1] / pair[0],
    )
    played, seconds = timings[len(timings) // 2]
    return {"rounds": played, "seconds": seconds, "rounds_runs_per_second": played * env.n_runs / seconds}


def skipped(error: Exception) -> dict[str, str]:
    """The ``skipped`` field of an entry that could not be timed: the error, cut to 300 characters."""
    return {"skipped": f"{type(error).__name__}: {error}"[:300]}


def median_row(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The row of median ``rounds_runs_per_second`` (a skipped row counts as 0)."""
    rows = sorted(rows, key=lambda row: row.get("rounds_runs_per_second", 0.0))
    return rows[len(rows) // 2]


def available_devices() -> list[str]:
    """``cpu``, and ``cuda`` when a GPU is visible."""
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def device_name(device: str) -> str:
    return (
        torch.cuda.get_device_name(device)
        if torch.device(device).type == "cuda"
        else platform.processor() or platform.machine()
    )
