"""How fast this machine runs the build's hot paths, as one figure against the machine the README's build time comes
from.

The workload is fixed (:data:`WORKLOAD`): 100 rounds of batched LinUCB on ``B = 20`` independent runs with ``d = 64``
features and ``8`` arms, in float64, as LinUCB and HARE do every round of an experiment job (scores of every arm by
``torch.bmm``, the chosen context's ``A^{-1} x`` by ``torch.bmm`` of ``(B, d, d)`` by ``(B, d, 1)``, a Sherman-Morrison
rank-one update of ``A^{-1}``), plus HARE's small per-cluster algebra (a rank-one update of an ``8 x 8`` covariance,
``torch.linalg.cholesky`` and ``torch.cholesky_solve``). Its cost is mostly the fixed cost per operation, as in the
build's experiment jobs at this size.

It is played with one thread (as experiment jobs run: ``OMP_NUM_THREADS=1``) and with torch's default thread count,
``REPEATS`` times each after a short warm-up (fewer when a mode has used its half of ``BUDGET_SECONDS``); each
mode's time is the median of its plays. The figure is

    score = REFERENCE_SECONDS / (one-thread median + default-threads median)

so ``1.00`` is the reference machine, ``2.00`` a machine twice as fast. A build's time on another machine is about
the README's time x the reference score / that machine's score. Other work on the cores lowers the figure (the
default-threads plays most: their threads wait for each other). The share of CPU time other work used in the
moment before the first play is recorded, and the printed lines say when it was a quarter or more.

On the reference machine itself the figure varies: 20 runs of ``hare calibrate``, idle, took 0.146 to 0.222 s
(figures 0.84 to 1.27; :data:`REFERENCE_SECONDS` is their median).
"""

from __future__ import annotations

import math
import os
import platform
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

import torch

REFERENCE_SECONDS = 0.1856
"""One-thread median + default-threads median of :data:`WORKLOAD` on the reference machine: the 2-core x86-64
virtual machine (AMD EPYC, CPU-only torch 2.13 with MKL) whose measured build time the README states; the median of
20 runs of ``hare calibrate`` there, nothing else running."""

REFERENCE_MACHINE = (
    "the 2-core x86-64 virtual machine (AMD EPYC, CPU-only torch 2.13, MKL) that measured the README's build time"
)

REPEATS = 5
BUDGET_SECONDS = 4.0
"""Timed plays of a mode stop once it has used half of this (at least one play each)."""
WARMUP_ROUNDS = 5


@dataclass(frozen=True)
class Workload:
    """The calibration workload's size: ``rounds`` rounds of ``batch`` runs, ``dim`` features, ``n_arms`` arms,
    ``small_dim`` the side of HARE's per-cluster covariance."""

    batch: int = 20
    dim: int = 64
    n_arms: int = 8
    rounds: int = 100
    small_dim: int = 8
    alpha: float = 1.0
    seed: int = 0


WORKLOAD = Workload()


def make_inputs(workload: Workload) -> dict[str, torch.Tensor]:
    """The workload's fixed float64 inputs: ``contexts`` ``(rounds, batch, n_arms, dim)`` (standard normal over
    ``sqrt(dim)``: norms near 1 but distinct, so no two arms tie in the first round), ``rewards``
    ``(rounds, batch, n_arms)`` in [0, 1), and ``keys`` ``(rounds, batch, small_dim)`` for the small covariance."""
    generator = torch.Generator().manual_seed(workload.seed)
    w = workload
    contexts = torch.randn(w.rounds, w.batch, w.n_arms, w.dim, generator=generator, dtype=torch.float64)
    contexts = contexts / w.dim**0.5
    rewards = torch.rand(w.rounds, w.batch, w.n_arms, generator=generator, dtype=torch.float64)
    keys = torch.randn(w.rounds, w.batch, w.small_dim, generator=generator, dtype=torch.float64)
    return {"contexts": contexts, "rewards": rewards, "keys": keys}


def play(workload: Workload, inputs: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Play the workload once: batched LinUCB with Sherman-Morrison updates of ``A^{-1}`` (``A = I + sum x x^T`` of
    the chosen contexts, ``b = sum r x``), and a covariance ``S = I + sum k k^T`` solved against ``k`` by Cholesky every
    round. Returns ``a_inv`` ``(batch, dim, dim)``, ``b`` ``(batch, dim)``, ``arms`` ``(rounds, batch)``, ``s``
    ``(batch, small_dim, small_dim)`` and ``solutions`` ``(rounds, batch, small_dim)`` (``S_t^{-1} k_t``)."""
    w = workload
    a_inv = torch.eye(w.dim, dtype=torch.float64).expand(w.batch, w.dim, w.dim).clone()
    b = torch.zeros(w.batch, w.dim, 1, dtype=torch.float64)
    s = torch.eye(w.small_dim, dtype=torch.float64).expand(w.batch, w.small_dim, w.small_dim).clone()
    rows = torch.arange(w.batch)
    arms, solutions = [], []
    for t in range(w.rounds):
        x_all = inputs["contexts"][t]
        theta = torch.bmm(a_inv, b)
        mean = torch.bmm(x_all, theta).squeeze(-1)
        width = (torch.bmm(x_all, a_inv) * x_all).sum(-1).clamp_min(0).sqrt()
        arm = torch.argmax(mean + w.alpha * width, dim=1)
        x = x_all[rows, arm].unsqueeze(-1)
        u = torch.bmm(a_inv, x)
        a_inv = a_inv - torch.bmm(u, u.transpose(1, 2)) / (1 + torch.bmm(x.transpose(1, 2), u))
        b = b + inputs["rewards"][t, rows, arm].view(-1, 1, 1) * x
        k = inputs["keys"][t].unsqueeze(-1)
        s = s + torch.bmm(k, k.transpose(1, 2))
        solutions.append(torch.cholesky_solve(k, torch.linalg.cholesky(s)).squeeze(-1))
        arms.append(arm)
    return {"a_inv": a_inv, "b": b.squeeze(-1), "arms": torch.stack(arms), "s": s, "solutions": torch.stack(solutions)}


def time_workload(
    workload: Workload,
    inputs: dict[str, torch.Tensor],
    threads: int,
    repeats: int,
    clock: Callable[[], float] = time.perf_counter,
    max_seconds: float = math.inf,
) -> list[float]:
    """Seconds of each of up to ``repeats`` plays of ``workload`` on ``threads`` torch threads, after an untimed
    warm-up of ``WARMUP_ROUNDS`` rounds; no further play starts once the timed ones took ``max_seconds``. The
    thread count is restored afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        play(replace(workload, rounds=min(WARMUP_ROUNDS, workload.rounds)), inputs)
        samples: list[float] = []
        for _ in range(repeats):
            start = clock()
            play(workload, inputs)
            samples.append(clock() - start)
            if sum(samples) >= max_seconds:
                break
        return samples
    finally:
        torch.set_num_threads(before)


def cpu_model() -> str:
    """The first ``model name`` of ``/proc/cpuinfo``, else :func:`platform.processor`, else ``unknown``."""
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def core_count() -> int:
    """The cores this process may run on (its affinity where the OS reports it, else ``os.cpu_count``)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


BLAS_NAMES = {
    "mkl": "MKL",
    "open": "OpenBLAS",
    "openblas": "OpenBLAS",
    "accelerate": "Accelerate",
    "blis": "BLIS",
    "eigen": "Eigen",
    "atlas": "ATLAS",
}


def blas_backend(config: str | None = None) -> str:
    """torch's CPU BLAS: ``BLAS_INFO`` of ``torch.__config__.show()`` (``config`` stands in for it), by its usual
    name (``MKL``, ``OpenBLAS``, ...); ``MKL`` when only ``torch.backends.mkl`` says so; else ``unknown``."""
    text = torch.__config__.show() if config is None else config
    found = re.search(r"BLAS_INFO=([^,\s]+)", text)
    if found:
        return BLAS_NAMES.get(found.group(1).lower(), found.group(1))
    if config is None and torch.backends.mkl.is_available():
        return "MKL"
    return "unknown"


def score(measured_seconds: float, reference_seconds: float = REFERENCE_SECONDS) -> float | None:
    """``reference_seconds / measured_seconds``: how many times faster than the reference machine (``None`` without a
    reference or a measurement)."""
    if reference_seconds <= 0 or measured_seconds <= 0:
        return None
    return reference_seconds / measured_seconds


BUSY_SHARE = 0.25
"""Other work's share of the CPU at or above which the printed lines warn that the figure is low."""


def cpu_times() -> tuple[int, int] | None:
    """``(idle, total)`` jiffies of all CPUs from ``/proc/stat`` (idle includes iowait), or ``None`` off Linux."""
    try:
        with open("/proc/stat") as handle:
            fields = [int(v) for v in handle.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    return fields[3] + (fields[4] if len(fields) > 4 else 0), sum(fields[:8])


def busy_share(window: float = 0.3) -> float | None:
    """The share of all cores' time that was not idle during ``window`` seconds in which this process sleeps: what
    other work takes, or ``None`` where ``/proc/stat`` is missing."""
    before = cpu_times()
    time.sleep(window)
    after = cpu_times()
    if before is None or after is None or after[1] <= before[1]:
        return None
    return 1 - (after[0] - before[0]) / (after[1] - before[1])


def calibrate(
    workload: Workload = WORKLOAD,
    repeats: int = REPEATS,
    reference_seconds: float = REFERENCE_SECONDS,
    clock: Callable[[], float] = time.perf_counter,
    budget_seconds: float = BUDGET_SECONDS,
    busy: Callable[[], float | None] = busy_share,
) -> dict[str, Any]:
    """The machine's facts and its calibration figure: CPU, cores, other work's share of the CPU just before (``busy``),
    torch with its BLAS, the median seconds of the workload with one thread and with the default threads, their sum,
    the reference and the score."""
    others = busy()
    inputs = make_inputs(workload)
    threads = torch.get_num_threads()
    one = time_workload(workload, inputs, 1, repeats, clock, budget_seconds / 2)
    default = time_workload(workload, inputs, threads, repeats, clock, budget_seconds / 2)
    seconds = statistics.median(one) + statistics.median(default)
    return {
        "cpu_model": cpu_model(),
        "cores": core_count(),
        "busy_share": others,
        "torch": torch.__version__,
        "blas": blas_backend(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "default_threads": threads,
        "workload": asdict(workload),
        "repeats": repeats,
        "plays": {"one_thread": len(one), "default_threads": len(default)},
        "one_thread_seconds": statistics.median(one),
        "default_threads_seconds": statistics.median(default),
        "samples": {"one_thread": one, "default_threads": default},
        "seconds": seconds,
        "reference_seconds": reference_seconds,
        "reference_machine": REFERENCE_MACHINE,
        "score": score(seconds, reference_seconds),
    }


def was_busy(facts: dict[str, Any]) -> bool:
    """Did other work take :data:`BUSY_SHARE` of the CPU or more just before the first play?"""
    return facts.get("busy_share") is not None and facts["busy_share"] >= BUSY_SHARE


def format_calibration(facts: dict[str, Any]) -> list[str]:
    """The few lines ``hare calibrate`` prints."""
    figure = "n/a (no reference)" if facts["score"] is None else f"{facts['score']:.2f}"
    plays = facts["plays"]
    lines = [
        f"CPU: {facts['cpu_model']}, {facts['cores']} cores; torch {facts['torch']}, BLAS {facts['blas']} "
        f"({facts['cpu_capability']})",
        f"calibration: {figure} (1.00 = the reference machine; higher is faster)",
        f"  workload {facts['seconds']:.3f} s = one thread {facts['one_thread_seconds']:.3f} s + "
        f"{facts['default_threads']} threads {facts['default_threads_seconds']:.3f} s "
        f"(medians of {plays['one_thread']} and {plays['default_threads']} plays); "
        f"reference {facts['reference_seconds']:.3f} s",
    ]
    if was_busy(facts):
        lines.append(f"  note: other work took {facts['busy_share']:.0%} of the CPU just before: this figure is low")
    return lines
