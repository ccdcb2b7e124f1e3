"""Can the per-cluster covariance be approximated efficiently for very large item pools? (The source notes' third
open question; paper, sec:scale.)

**Cost per round.** For every pool size ``N`` of the grid, every cluster-count rule ``N -> C``
(:func:`~hare.experiments.settings.pool_scaling.cluster_count`: fixed, sqrt, linear) and every covariance
kind (``full``, ``diagonal``, ``low_rank`` of rank ``r``: :func:`hare.model.covariance_approx.make_cluster_covariance`),
a synthetic pool (keys and values ``(H, N, d_k)`` standard normal, output ``(H d_k, d_k)``, cluster labels
``randperm(N) mod C``, so every cluster holds ``floor(N/C)`` or ``ceil(N/C)`` items) is served to ``B`` runs by the
library's :class:`~hare.model.attention.UncertaintyAttention` with that kind's state as its covariance. One round:

* **select**: the attention's forward pass with the bonus (paper, eq:scores to eq:softmax),
  ``A_h = softmax_n(s_{h,n} + alpha U_{h,c(n)})`` for unit-norm queries ``q`` ``(B, H, d_k)``, then the item
  ``argmax_n mean_h A_{h,n}`` and its cluster;
* **update**: ``update_chosen`` of the chosen cluster in every head and run (a gather, the kind's rank-one update,
  a scatter), with reward ``r ~ N(0, 1)``.

Each is timed separately (the device synchronised before every clock read); the median over ``rounds`` rounds after
``warmup`` untimed ones is reported, in milliseconds.

**Memory counted** (bytes, float64 and int64 as held): ``state`` = the covariance state's ``memory_bytes()``;
``pool`` = the attention's other buffers (keys, values, output, cluster labels and sizes, cluster mean keys), in
closed form ``8 (2 H N d_k + H d_k^2 + N + C + H C d_k)``; ``round`` = the select pass's per-round tensors, in
closed form ``8 B H (4 N + 2 C)`` (scores, the per-item bonus, logits and weights ``(B, H, N)``; bonuses and scaled
bonuses ``(B, H, C)``). ``peak`` = their sum: a count of what the round must hold, not an allocator reading (on CUDA
the allocator's peak is recorded beside it). A cell whose predicted peak (the state's closed form at ``B H C`` groups,
:func:`hare.model.covariance_approx.covariance_bytes`, plus the two closed forms above) exceeds ``memory_cap_mb`` is
skipped and recorded with its prediction. A measured cell holds exactly its prediction (tested).

**The exact alternative**, the per-item covariance (one ``d_k x d_k`` matrix per item): ``N d_k^2 8`` bytes per head
and run, ``B H N d_k^2 8`` in all (``closed_form_bytes``). Where the full state at ``C = N`` fits under the cap it is
measured like a cell (the library's full state also holds the inverse, so about twice the closed form); beyond, its
bytes are extrapolated as the closed form times the measured-to-closed-form ratio at the largest measured ``N``.

**Regret each kind costs.** On HARE-Sim (``regret.env_params``), HARE with each kind plays the same pre-built rounds
(:func:`~hare.experiments.simulation.prebuilt_rounds`) with the same policy keys, cold (no logs); the mean total
pseudo-regret over ``regret.n_runs`` runs with its t interval per kind, and the difference to ``full`` with its
paired t interval (over per-run differences).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict
from typing import Any

import numpy as np
import torch

from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.experiments.job_setup import deterministic_kernels, resolve_device
from hare.experiments.settings.pool_scaling import ITEMS_PER_CLUSTER, PoolScalingSettings, cluster_count, hare_params
from hare.experiments.simulation import SimulationOptions, prebuilt_rounds, simulate
from hare.experiments.studies.timing import synchronise
from hare.model.attention import UncertaintyAttention
from hare.model.covariance_approx import covariance_bytes
from hare.policies.base import build_policy
from hare.random import run_keys
from hare.statistics import t_interval

__all__ = [
    "MEMORY_COUNTED",
    "measure_cell",
    "per_item_line",
    "pool_bytes",
    "regret_comparison",
    "round_bytes",
    "run_pool_scaling",
    "synthetic_pool",
]

REFACTOR_EVERY = 1000
MEMORY_COUNTED = (
    "state: the covariance state's memory_bytes(); pool: keys, values (H, N, d_k), output (H d_k, d_k), cluster "
    "labels (N,), sizes (C,) and mean keys (H, C, d_k); round: the select pass's (B, H, N) scores, per-item bonus, "
    "logits and weights and its (B, H, C) bonuses and scaled bonuses; peak = state + pool + round (8 bytes each)"
)


def pool_bytes(n_heads: int, n_items: int, key_dim: int, n_clusters: int) -> int:
    """``8 (2 H N d_k + H d_k^2 + N + C + H C d_k)``: the attention's buffers other than the covariance."""
    h, n, d, c = n_heads, n_items, key_dim, n_clusters
    return 8 * (2 * h * n * d + h * d * d + n + c + h * c * d)


def round_bytes(n_runs: int, n_heads: int, n_items: int, n_clusters: int) -> int:
    """``8 B H (4 N + 2 C)``: the select pass's per-round tensors (module docstring)."""
    return 8 * n_runs * n_heads * (4 * n_items + 2 * n_clusters)


def synthetic_pool(
    n_heads: int, n_items: int, key_dim: int, n_clusters: int, seed: int, device: torch.device | str = "cpu"
) -> dict[str, torch.Tensor]:
    """Keys, values ``(H, N, d_k)`` and output ``(H d_k, d_k)`` standard normal (float64); clusters ``(N,)`` int64,
    ``randperm(N) mod C`` (every cluster non-empty for ``C <= N``). Drawn from ``torch.Generator`` seeded ``seed``."""
    generator = torch.Generator().manual_seed(int(seed))
    shape = (n_heads, n_items, key_dim)
    tensors = {
        "keys": torch.randn(shape, generator=generator, dtype=torch.float64),
        "values": torch.randn(shape, generator=generator, dtype=torch.float64),
        "output": torch.randn(n_heads * key_dim, key_dim, generator=generator, dtype=torch.float64),
        "clusters": torch.randperm(n_items, generator=generator) % n_clusters,
    }
    return {name: tensor.to(device) for name, tensor in tensors.items()}


def _attention(
    settings: PoolScalingSettings, kind: str, n_items: int, n_clusters: int, device: torch.device
) -> UncertaintyAttention:
    """The library's attention over a synthetic pool with ``kind``'s covariance state for ``B`` runs."""
    pool = synthetic_pool(settings.n_heads, n_items, settings.key_dim, n_clusters, settings.base_seed, device)
    return UncertaintyAttention(
        pool["keys"],
        pool["values"],
        pool["output"],
        pool["clusters"],
        settings.n_runs,
        settings.lam,
        REFACTOR_EVERY,
        n_clusters,
        covariance_kind=kind,
        covariance_rank=settings.rank,
    )


def measure_cell(
    settings: PoolScalingSettings, n_items: int, rule: str, kind: str, n_clusters: int, device: torch.device
) -> dict[str, Any]:
    """One cell: its predicted memory and, under the cap, its median select and update latency (ms) and the memory
    it holds (module docstring); over the cap, ``status: skipped`` with the prediction."""
    b, h, d = settings.n_runs, settings.n_heads, settings.key_dim
    predicted = (
        covariance_bytes(kind, b * h * n_clusters, d, settings.rank)
        + pool_bytes(h, n_items, d, n_clusters)
        + round_bytes(b, h, n_items, n_clusters)
    )
    record: dict[str, Any] = {
        "n_items": n_items,
        "rule": rule,
        "n_clusters": n_clusters,
        "kind": kind,
        "predicted_bytes": int(predicted),
    }
    if predicted > settings.memory_cap_bytes:
        return {**record, "status": "skipped", "reason": f"predicted {predicted} B > cap {settings.memory_cap_bytes} B"}
    attention = _attention(settings, kind, n_items, n_clusters, device)
    generator = torch.Generator().manual_seed(settings.base_seed + 1)
    total = settings.warmup + settings.rounds
    queries = torch.nn.functional.normalize(
        torch.randn(total, b, h, d, generator=generator, dtype=torch.float64), dim=-1
    )
    rewards = torch.randn(total, b, 1, 1, generator=generator, dtype=torch.float64)
    queries, rewards = queries.to(device), rewards.to(device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    select_s, update_s = [], []
    for t in range(total):
        synchronise(str(device))
        start = time.perf_counter()
        weights = attention(queries[t], settings.alpha).weights  # (B, H, N)
        item = weights.mean(-2).argmax(-1)  # (B,)
        chosen = attention.clusters[item][:, None].expand(b, h)  # (B, H)
        synchronise(str(device))
        middle = time.perf_counter()
        attention.update_chosen(queries[t], chosen, rewards[t])
        synchronise(str(device))
        end = time.perf_counter()
        if t >= settings.warmup:
            select_s.append(middle - start)
            update_s.append(end - middle)
    state = int(attention.covariance.memory_bytes())
    held_pool = sum(
        x.numel() * x.element_size() for n, x in attention.named_buffers() if not n.startswith("covariance.")
    )
    held_round = round_bytes(b, h, n_items, n_clusters)
    return {
        **record,
        "status": "measured",
        "select_ms": 1e3 * statistics.median(select_s),
        "update_ms": 1e3 * statistics.median(update_s),
        "state_bytes": state,
        "pool_bytes": int(held_pool),
        "round_bytes": int(held_round),
        "peak_bytes": int(state + held_pool + held_round),
        "cuda_peak_bytes": int(torch.cuda.max_memory_allocated(device)) if device.type == "cuda" else None,
    }


def per_item_line(settings: PoolScalingSettings, device: torch.device) -> list[dict[str, Any]]:
    """The per-item covariance at every ``N``: closed form ``B H N d_k^2 8`` bytes; the full state at ``C = N``
    measured under the cap, extrapolated beyond (module docstring)."""
    b, h, d = settings.n_runs, settings.n_heads, settings.key_dim
    line = []
    for n in settings.pool_sizes:
        closed = 8 * b * h * n * d * d
        cell = measure_cell(settings, n, "per_item", "full", n, device)
        line.append({**cell, "closed_form_bytes": closed, "per_head_and_run_bytes": 8 * n * d * d})
    measured = [p for p in line if p["status"] == "measured"]
    ratio = measured[-1]["peak_bytes"] / measured[-1]["closed_form_bytes"] if measured else 1.0
    for point in line:
        point["extrapolated"] = point["status"] != "measured"
        point["bytes"] = (
            point["peak_bytes"] if point["status"] == "measured" else int(point["closed_form_bytes"] * ratio)
        )
    return line


def regret_comparison(settings: PoolScalingSettings, device: torch.device) -> dict[str, Any]:
    """Mean total regret per kind with its t interval, and the paired difference to ``full`` (module docstring).

    Returns ``horizon``, ``n_runs``, ``env_params``, ``hare_params``, ``kinds`` (kind -> interval with ``per_run``)
    and ``difference_to_full`` (kind -> paired interval); intervals as :func:`hare.statistics.t_interval`."""
    regret = settings.regret
    n_runs = regret["n_runs"]
    env = SyntheticBandit(
        SyntheticConfig(**regret["env_params"]),
        n_runs,
        regret["horizon"],
        run_keys(regret["base_seed"], range(n_runs), "pool_scaling", "environment"),
        device,
    )
    env.logs_allowed = False
    rounds = prebuilt_rounds(env)
    policy_keys = run_keys(regret["base_seed"], range(n_runs), "pool_scaling", "policy").to(device)
    totals: dict[str, np.ndarray] = {}
    for kind in settings.kinds:
        params = hare_params(regret["hare_params"], kind, settings.rank)
        policy = build_policy("hare", params, env, policy_keys).to(device)
        totals[kind] = np.asarray(
            simulate(env, policy, SimulationOptions(rounds=rounds, progress=None))["total_regret"], dtype=float
        )
    kinds = {kind: {**t_interval(values), "per_run": values.tolist()} for kind, values in totals.items()}
    differences = {
        kind: {**t_interval(values - totals["full"]), "method": "paired t over runs (kind - full)"}
        for kind, values in totals.items()
        if "full" in totals and kind != "full"
    }
    return {
        "horizon": regret["horizon"],
        "n_runs": n_runs,
        "env_params": regret["env_params"],
        "hare_params": regret["hare_params"],
        "kinds": kinds,
        "difference_to_full": differences,
    }


def run_pool_scaling(settings: PoolScalingSettings) -> dict[str, Any]:
    """Every cell of the grid, the per-item line and the regret comparison: plain data (strict-JSON ready)."""
    device = resolve_device(settings.device)
    deterministic_kernels(device)
    cells = [
        measure_cell(settings, n, rule, kind, cluster_count(rule, n, settings.fixed_clusters), device)
        for n in settings.pool_sizes
        for rule in settings.cluster_rules
        for kind in settings.kinds
    ]
    return {
        "study": "pool_scaling",
        "question": "seed 000, section 5, third open question: can the per-cluster covariance be approximated "
        "efficiently for very large item pools?",
        "settings": {
            **asdict(settings),
            "memory_cap_bytes": settings.memory_cap_bytes,
            "items_per_cluster": ITEMS_PER_CLUSTER,
        },
        "device": str(device),
        "torch": torch.__version__,
        "memory_counted": MEMORY_COUNTED,
        "timing": "median over settings.rounds rounds after settings.warmup untimed ones; select and update timed "
        "apart, the device synchronised before every clock read",
        "cells": cells,
        "per_item": per_item_line(settings, device),
        "regret": regret_comparison(settings, device),
    }
