"""Timing statistics shared by the benchmarks (:mod:`hare.experiments.studies.bench` and its harness
:mod:`hare.experiments.studies.bench_harness`, :mod:`hare.experiments.studies.bench_linucb`,
:mod:`hare.experiments.studies.bench_baselines`, :mod:`hare.experiments.studies.bench_neural`): device
synchronisation before a clock is read, and the geometric-mean ratio with its t interval over repeats."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

PAIRED_METHOD = (
    "t over repeats on log ratios (geometric mean), each repeat a back-to-back pair timed in one process "
    "on the same data"
)


def synchronise(device: str) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def t_summary(values: list[float], method: str) -> dict[str, Any]:
    """``{"estimate", "ci_low", "ci_high", "level", "n", "method"}`` of positive ratios ``values``: the
    geometric mean ``exp(mean log r)`` and its 95% interval ``exp(mean log r ± t_{0.975, n-1} s / sqrt(n))``,
    ``s`` the standard deviation of ``log r`` (``null`` bounds when ``n < 2``)."""
    from scipy import stats

    logs = np.log(np.asarray(values, dtype=np.float64))
    n = int(logs.size)
    if n == 0:
        return {"estimate": None, "ci_low": None, "ci_high": None, "level": 0.95, "n": 0, "method": method}
    centre = float(logs.mean())
    if n < 2:
        return {"estimate": math.exp(centre), "ci_low": None, "ci_high": None, "level": 0.95, "n": 1, "method": method}
    half = float(stats.t.ppf(0.975, n - 1) * logs.std(ddof=1) / math.sqrt(n))
    return {
        "estimate": math.exp(centre),
        "ci_low": math.exp(centre - half),
        "ci_high": math.exp(centre + half),
        "level": 0.95,
        "n": n,
        "method": method,
    }
