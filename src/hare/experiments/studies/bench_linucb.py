"""Batched disjoint LinUCB against the memory-bandwidth ceiling of its state and against its peer libraries, timed in
one process (the LinUCB family of :mod:`hare.experiments.studies.bench`).

Batched LinUCB is timed at each batch size ``B`` and device, then a read of a float64 state of the size of its
inverses (:func:`read_bandwidth_gbps`), then the same workload (one run, run 0's rounds) in MABWiser and Open Bandit
Pipeline (:data:`PEERS`, :func:`reference_linucb`), in turn, ``repeats`` times (:func:`compare_linucb`): each repeat
gives LinUCB's fraction of the ceiling,

    fraction = (B 8 (K + 3) d^2 / read rate) / (LinUCB's seconds per round)      (:func:`ceiling_fraction`),

and its rate over each peer's, and the entries keep both timings of every ratio (:func:`ceiling_entry`,
:func:`peer_ratio_entry`). :func:`linucb_speedups` reads the earlier summary of the same entries back.
"""

from __future__ import annotations

import importlib.metadata
import math
import time
from typing import Any

import numpy as np
import torch

from hare.experiments.simulation import prebuilt_rounds
from hare.experiments.studies.bench_harness import (
    TIMING_ERRORS,
    DatasetSpec,
    make_environment,
    median_row,
    skipped,
    time_policy,
)
from hare.experiments.studies.timing import PAIRED_METHOD, synchronise, t_summary

PEERS = ("mabwiser", "obp")


COMPARISON_REPEATS = 5
"""Default number of interleaved repeats of the comparison (batched LinUCB, the read of its state, the
peers): each repeat yields one back-to-back ratio, and the reported ratio is their mean with a t
interval over repeats, since one timing of the same code on a shared machine varies by tens of percent."""


def read_bandwidth_gbps(shape: tuple[int, ...], device: str, repeats: int = 50, max_seconds: float = 1.0) -> float:
    """Best of up to ``repeats`` timings of reading a float64 tensor of ``shape`` once (``sum``), in GB/s.

    The tensor has the size of batched LinUCB's inverses, so the rate is that of the cache level the
    state lives in: an upper bound on how fast one round can stream its state. Stops after
    ``max_seconds`` once five timings are taken.
    """
    buffer = torch.rand(shape, dtype=torch.float64, device=device)
    best = math.inf
    began = time.perf_counter()
    for index in range(repeats):
        synchronise(device)
        start = time.perf_counter()
        buffer.sum()
        synchronise(device)
        best = min(best, time.perf_counter() - start)
        if index >= 4 and time.perf_counter() - began > max_seconds:
            break
    return buffer.numel() * 8 / best / 1e9


def linucb_traffic_floor(dim: int, n_arms: int) -> int:
    """Fewest bytes one float64 LinUCB run-round must move, ``8 (K + 3) d^2``: every arm's ``A^{-1}`` read
    for its width, the pulled arm's ``A^{-1}`` written back, its ``A`` read and written."""
    return 8 * (n_arms + 3) * dim * dim


def ceiling_fraction(bytes_per_round: float, read_gbps: float, seconds_per_round: float) -> float:
    """Fraction of the memory-bandwidth ceiling reached: ``(bytes / (read_gbps 1e9)) / seconds_per_round``.

    ``bytes_per_round``: bytes one round of all ``B`` runs must move (``B`` times
    :func:`linucb_traffic_floor`); the numerator is the time streaming them takes at the measured
    rate, so 1 means the round runs as fast as its state can be read.
    """
    return bytes_per_round / (read_gbps * 1e9) / seconds_per_round


def reference_linucb(library: str, contexts: np.ndarray, rewards: np.ndarray, alpha: float) -> dict[str, Any]:
    """One sequential run of disjoint LinUCB in ``library`` over ``contexts (horizon, dim)`` and
    ``rewards (horizon, n_arms)``."""
    horizon, n_arms = rewards.shape
    dim = contexts.shape[1]
    try:
        if library == "mabwiser":
            from mabwiser.mab import MAB, LearningPolicy

            model = MAB(
                arms=list(range(n_arms)), learning_policy=LearningPolicy.LinUCB(alpha=alpha, l2_lambda=1.0), seed=0
            )
        else:
            from obp.policy import LinUCB

            model = LinUCB(dim=dim, n_actions=n_arms, epsilon=alpha, random_state=0)
    except ImportError as error:
        return {"library": library, "policy": "linucb", "skipped": f"not installed ({error})"}
    version = importlib.metadata.version(library)
    start = time.perf_counter()
    for t in range(horizon):
        x = contexts[t : t + 1]
        if library == "mabwiser":
            arm = model.predict(x) if t > 0 else 0
            update = model.partial_fit if t > 0 else model.fit
            update(decisions=[arm], rewards=[rewards[t, arm]], contexts=x)
        else:
            arm = int(model.select_action(x)[0])
            model.update_params(action=arm, reward=float(rewards[t, arm]), context=x)
    elapsed = time.perf_counter() - start
    return {
        "library": library,
        "version": version,
        "policy": "linucb",
        "n_runs": 1,
        "horizon": horizon,
        "seconds": elapsed,
        "rounds_runs_per_second": horizon / elapsed,
    }


def ceiling_entry(setting: dict[str, Any], timings: list[dict[str, Any]]) -> dict[str, Any]:
    """One ``linucb_ceiling`` entry: per repeat, LinUCB's seconds per round and the read rate of its state
    measured right after it, the ceiling time ``bytes_per_round / read rate`` and their
    :func:`ceiling_fraction`; ``fraction`` summarises the repeats (:func:`t_summary`)."""
    bytes_per_round = setting["n_runs"] * linucb_traffic_floor(setting["dim"], setting["n_arms"])
    rows = []
    for timing in timings:
        if "skipped" in timing:
            continue
        per_round = timing["seconds"] / timing["rounds"]
        rows.append(
            {
                "rounds": timing["rounds"],
                "linucb_seconds_per_round": per_round,
                "read_gbps": timing["read_gbps"],
                "ceiling_seconds_per_round": bytes_per_round / (timing["read_gbps"] * 1e9),
                "fraction": ceiling_fraction(bytes_per_round, timing["read_gbps"], per_round),
            }
        )
    entry = {
        **setting,
        "traffic_floor_bytes": linucb_traffic_floor(setting["dim"], setting["n_arms"]),
        "bytes_per_round": bytes_per_round,
        "timings": rows,
    }
    if not rows:
        return entry | {"skipped": next(t["skipped"] for t in timings if "skipped" in t)}
    return entry | {"fraction": t_summary([row["fraction"] for row in rows], PAIRED_METHOD)}


def peer_ratio_entry(
    setting: dict[str, Any], library: str, ours: list[dict[str, Any]], peers: list[dict[str, Any]]
) -> dict[str, Any]:
    """One ``peer_ratios`` entry: batched LinUCB's rounds·runs/s over ``library``'s (one sequential run
    on run 0's rounds), repeat by repeat (each repeat times both back to back), and their summary."""
    pairs = [
        {
            "linucb_rounds_runs_per_second": a["rounds"] * setting["n_runs"] / a["seconds"],
            "peer_rounds_runs_per_second": b["rounds_runs_per_second"],
            "ratio": a["rounds"] * setting["n_runs"] / a["seconds"] / b["rounds_runs_per_second"],
        }
        for a, b in zip(ours, peers, strict=True)
        if "skipped" not in a and "skipped" not in b
    ]
    entry = {**setting, "library": library, "timings": pairs}
    if not pairs:
        reasons = [row["skipped"] for row in [*peers, *ours] if "skipped" in row]
        return entry | {"skipped": reasons[0] if reasons else "not timed"}
    return entry | {
        "version": peers[0].get("version"),
        "ratio": t_summary([pair["ratio"] for pair in pairs], PAIRED_METHOD),
    }


def compare_linucb(
    dataset: str,
    spec: DatasetSpec,
    n_runs_list: tuple[int, ...],
    horizon: int,
    devices: list[str],
    params: dict,
    alpha: float,
    max_seconds: float,
    repeats: int,
) -> dict[str, list]:
    """Batched LinUCB at every ``B`` and device, the read rate of its state and the peers' LinUCB, in turn,
    ``repeats`` times.

    Returns ``{"policies", "references", "bandwidth", "linucb_ceiling", "peer_ratios"}`` for ``dataset``:
    the median LinUCB and peer rows, the median read rate per setting, and the per-repeat ratios.
    """
    env = make_environment(spec, 1, horizon, "cpu")
    recorded = prebuilt_rounds(env)
    contexts = torch.stack([r.observation.contexts[0, 0] for r in recorded]).numpy()
    rewards = torch.stack([r.rewards[0] for r in recorded]).numpy()
    batched = {}
    for dev in devices:
        for n_runs in n_runs_list:
            env = make_environment(spec, n_runs, horizon, dev)
            batched[dev, n_runs] = (env, prebuilt_rounds(env))
    peer_runs: dict[str, list] = {library: [] for library in PEERS}
    our_runs: dict[tuple[str, int], list] = {key: [] for key in batched}
    for _ in range(repeats):
        for (dev, n_runs), (env, rounds) in batched.items():
            try:
                played, seconds = time_policy(
                    "linucb", params.get("linucb", {}), env, rounds, dev, max_seconds=max_seconds
                )
                gbps = read_bandwidth_gbps((n_runs, env.n_arms, env.dim, env.dim), dev)
                our_runs[dev, n_runs].append(
                    {
                        "rounds": played,
                        "seconds": seconds,
                        "rounds_runs_per_second": played * n_runs / seconds,
                        "read_gbps": gbps,
                    }
                )
            except TIMING_ERRORS as error:
                our_runs[dev, n_runs].append(skipped(error))
        for library in PEERS:
            peer_runs[library].append(reference_linucb(library, contexts, rewards, alpha))
    out: dict[str, list] = {
        "policies": [],
        "references": [{"dataset": dataset, **median_row(runs)} for runs in peer_runs.values()],
        "bandwidth": [],
        "linucb_ceiling": [],
        "peer_ratios": [],
    }
    for (dev, n_runs), (env, _) in batched.items():
        setting = {
            "dataset": dataset,
            "device": dev,
            "n_runs": n_runs,
            "horizon": env.horizon,
            "dim": env.dim,
            "n_arms": env.n_arms,
        }
        median = median_row(our_runs[dev, n_runs])
        out["policies"].append(
            {
                **setting,
                "policy": "linucb",
                "params": params.get("linucb", {}),
                **{k: v for k, v in median.items() if k != "read_gbps"},
            }
        )
        out["linucb_ceiling"].append(ceiling_entry(setting, our_runs[dev, n_runs]))
        out["peer_ratios"] += [
            peer_ratio_entry(setting, library, our_runs[dev, n_runs], peer_runs[library]) for library in PEERS
        ]
        rates = sorted(row["read_gbps"] for row in our_runs[dev, n_runs] if "read_gbps" in row)
        if rates:
            out["bandwidth"].append(
                {
                    "dataset": dataset,
                    "device": dev,
                    "n_runs": n_runs,
                    "bytes": 8 * n_runs * env.n_arms * env.dim * env.dim,
                    "read_gbps": rates[len(rates) // 2],
                }
            )
    return out


def linucb_speedups(results: dict[str, Any], n_runs: int = 20, device: str = "cpu") -> dict[str, dict[str, Any]]:
    """Per dataset: batched LinUCB's rounds·runs/s at ``n_runs`` on ``device`` over the fastest peer's (medians).

    Kept for readers of the earlier format; the paper reports :func:`ceiling_fraction` and the
    repeat-by-repeat ``peer_ratios`` instead. With a bandwidth entry for the dataset at ``n_runs``,
    also ``ceiling_rate = read_gbps / linucb_traffic_floor(d, K)`` run-rounds/s and ``ceiling_speedup``,
    that rate over the peer's.
    """
    out = {}
    for dataset in dict.fromkeys(row["dataset"] for row in results["policies"]):
        ours = [
            row
            for row in results["policies"]
            if row["dataset"] == dataset
            and row["policy"] == "linucb"
            and row["n_runs"] == n_runs
            and row["device"] == device
            and "skipped" not in row
        ]
        peers = [row for row in results["references"] if row["dataset"] == dataset and "skipped" not in row]
        if ours and peers:
            fastest = max(peers, key=lambda row: row["rounds_runs_per_second"])
            rate, peer_rate = ours[0]["rounds_runs_per_second"], fastest["rounds_runs_per_second"]
            out[dataset] = {
                "linucb": rate,
                "peer": fastest["library"],
                "peer_rate": peer_rate,
                "speedup": rate / peer_rate,
            }
            measured = [
                row
                for row in results.get("bandwidth", [])
                if row["dataset"] == dataset and row["device"] == device and row.get("n_runs", n_runs) == n_runs
            ]
            if measured and "dim" in ours[0]:
                floor = linucb_traffic_floor(ours[0]["dim"], ours[0]["n_arms"])
                ceiling = measured[0]["read_gbps"] * 1e9 / floor
                out[dataset] |= {
                    "read_gbps": measured[0]["read_gbps"],
                    "traffic_floor_bytes": floor,
                    "ceiling_rate": ceiling,
                    "ceiling_speedup": ceiling / fastest["rounds_runs_per_second"],
                }
    return out
