"""Per-round latency and peak memory of HARE select mode against pool size, clusters, heads and d_k.

Cluster-level covariance costs ``O(C d_k^2)`` per head instead of ``O(N d_k^2)``
per item (paper, sec:method, "Covariance update"); this benchmark measures it. One round is ``select`` +
``update`` on an ``n_runs``-run HARE-Sim instance with random projections (no fit and no logs: the cold regime's
HARE) and the cluster index's ``mean`` (``online`` by default: the ridge estimate
``Sigma^{-1}(lam theta0 + b)`` of every cluster, one more ``O(H C d_k^2)`` product per round;
``--mean frozen`` times the ablation). Latency is
the median over ``rounds`` timed rounds after ``warmup`` rounds; peak memory is the CUDA
peak on a GPU and the growth of the process's peak resident set on CPU (a lower bound
there, since earlier cases may have raised the peak already), and ``state_bytes`` is the
size of the policy's buffers (covariances, keys, posteriors): exact on every device.

    hare bench-hare --out bench.json [--device cpu|cuda] [--quick]
"""

from __future__ import annotations

import json
import resource
import statistics
from pathlib import Path

import torch

from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.experiments.simulation import RoundTimer, SimulationOptions, simulate
from hare.io import write_json
from hare.policies import build_policy
from hare.random import run_keys
from hare.report.bench_tables import write_bench_hare_table


def bench_case(
    n_items: int,
    n_clusters: int,
    n_heads: int,
    key_dim: int,
    n_runs: int = 1,
    rounds: int = 20,
    warmup: int = 3,
    device: str = "cpu",
    mean: str = "online",
) -> dict:
    """Median seconds per round and peak memory (bytes) of one HARE configuration.

    The ``rounds + warmup`` rounds are played by :func:`hare.experiments.simulation.simulate` without its accounts;
    a round's time is its :class:`~hare.experiments.simulation.RoundTimer` ``policy_seconds`` (``select`` and
    ``update``, the device synchronised before and after)."""
    dev = torch.device(device)
    config = SyntheticConfig(n_items=n_items, n_clusters=min(n_clusters, n_items), item_dim=16, key_dim=key_dim)
    env = SyntheticBandit(config, n_runs, rounds + warmup, run_keys(0, range(n_runs), "bench-env"), device=dev)
    params = {"projections": "random", "n_heads": n_heads, "key_dim": key_dim, "n_clusters": n_clusters, "mean": mean}
    policy = build_policy("hare", params, env, run_keys(0, range(n_runs), "bench-policy")).to(dev)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)
    timer = RoundTimer(dev)
    simulate(env, policy, SimulationOptions(progress=None, observer=timer, account=False))
    times = timer.policy_seconds[warmup:]
    peak = (
        torch.cuda.max_memory_allocated(dev)
        if dev.type == "cuda"
        else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss_before
    )
    state = sum(buffer.numel() * buffer.element_size() for buffer in policy.buffers())
    return {
        "n_items": n_items,
        "n_clusters": n_clusters,
        "n_heads": n_heads,
        "key_dim": key_dim,
        "n_runs": n_runs,
        "mean": mean,
        "seconds_per_round": statistics.median(times),
        "peak_memory_bytes": int(peak),
        "state_bytes": int(state),
        "device": str(dev),
    }


def grid(quick: bool, max_items: int | None = None) -> list[dict]:
    """The cases: pool size at fixed C, H, d_k; then C, H and d_k at fixed N (``max_items`` caps N)."""
    sizes = [100, 1_000, 10_000] if quick else [100, 1_000, 10_000, 100_000]
    base_n = 1_000 if quick else 10_000
    if max_items is not None:
        sizes = [n for n in sizes if n <= max_items] or [max_items]
        base_n = min(base_n, max_items)
    cases = [dict(n_items=n, n_clusters=min(16, n), n_heads=1, key_dim=8) for n in sizes]
    cases += [
        dict(n_items=base_n, n_clusters=c, n_heads=1, key_dim=8) for c in sorted({1, 64, 256, base_n}) if c <= base_n
    ]
    cases += [dict(n_items=base_n, n_clusters=min(16, base_n), n_heads=h, key_dim=8) for h in (2, 4, 8)]
    cases += [dict(n_items=base_n, n_clusters=min(16, base_n), n_heads=1, key_dim=k) for k in (16, 32, 64)]
    return cases


def run_bench_hare(
    *,
    out: str | Path,
    device: str = "cpu",
    rounds: int = 20,
    quick: bool = False,
    max_items: int | None = None,
    tex: str | Path | None = None,
    mean: str = "online",
) -> dict:
    """Every case of :func:`grid` through :func:`bench_case`, each printed as a JSON line when done; writes
    ``{"torch": version, "cases": [...]}`` to ``out`` (JSON) and, if given, its table to ``tex``; returns it."""
    results = []
    for case in grid(quick, max_items):
        results.append(bench_case(**case, rounds=rounds, device=device, mean=mean))
        print(json.dumps(results[-1]), flush=True)
    payload = {"torch": torch.__version__, "cases": results}
    write_json(out, payload)
    if tex:
        write_bench_hare_table(tex, payload)
    return payload
