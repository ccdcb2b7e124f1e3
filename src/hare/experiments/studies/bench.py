"""Speed of every registered policy, batched over runs, reported as ratios timed in one process.

A benchmark, not a test. Batched disjoint LinUCB is timed at each batch size, then a read of a
float64 state of the size of its inverses, then the same workload (one run) in MABWiser and Open
Bandit Pipeline (the peers), in turn, several times: each repeat gives LinUCB's fraction of the
memory-bandwidth ceiling (:func:`ceiling_fraction`) and its rate over each peer's, and the JSON keeps
both timings of every ratio. Every other policy is timed at each batch size in turn (its batching
gain). Environment rounds are generated before the clock starts, so only policy work is timed. An
entry stops after ``max_seconds`` and reports the rounds it completed; a policy that cannot run on
a dataset (an oracle it lacks, memory) is recorded with the reason. The NeuralUCB exploration modes
(:mod:`hare.experiments.studies.bench_neural`) are measured into the same file.

    hare bench --out results/bench/policies.json \
        --dataset mushroom=mushroom.npz --dataset mnist=mnist.npz --horizon 1000 --device cpu

The synthetic environment (HARE-Sim, default configuration) is always included.
:mod:`hare.report.bench_tables` turns the file into the paper's tables and macros.

Length: one module because it is both the writer and the reader of one JSON format: the entries
that :func:`compare_linucb`, :func:`ceiling_entry`, :func:`peer_ratio_entry` and :func:`bench_policies`
write are the fields :func:`linucb_speedups` reads, and split, a change to the format would span modules
(the tables of :mod:`hare.report.bench_tables` read the same fields, as plain data). The rounds themselves are
played by :func:`hare.experiments.simulation.simulate`; the NeuralUCB modes are
:mod:`hare.experiments.studies.bench_neural`,
HARE's scaling :mod:`hare.experiments.studies.bench_hare`.
"""

from __future__ import annotations

import importlib.metadata
import math
import os
import platform
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hare.envs.base import BanditEnvironment, BanditRound
from hare.envs.classification import ClassificationBandit
from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.experiments.simulation import SimulationOptions, prebuilt_rounds, simulate
from hare.experiments.studies.timing import PAIRED_METHOD, synchronise, t_summary
from hare.io import write_json
from hare.policies import build_policy
from hare.policies.base import policy_names
from hare.random import run_keys
from hare.report.bench_tables import write_bench_tables

NOT_BENCHED = ("hare_synthesize",)
"""Synthesize mode outputs a vector, not an arm; it has no select/update round to time."""

PEERS = ("mabwiser", "obp")

BENCH_PARAMS = {
    "neural_ucb": {"width": 20, "exploration": "diagonal"},
    "neural_ts": {"width": 20, "exploration": "diagonal"},
    "bootstrap_nn": {"width": 20},
}
"""Defaults except for the neural policies: with the disjoint encoding the full ``p x p`` matrix
``Z^{-1}`` (``p = m K d + m``) does not fit in memory on these datasets, so they are timed with a
narrow network and the diagonal ``Z`` (the released code's choice for large networks); the
full modes are compared in ``results["neural"]``. ``--param`` overrides these."""


def benched_policies() -> list[str]:
    """Every registered policy name but those in :data:`NOT_BENCHED`."""
    return [name for name in policy_names() if name not in NOT_BENCHED]


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


def available_devices() -> list[str]:
    """``cpu``, and ``cuda`` when a GPU is visible."""
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def device_name(device: str) -> str:
    return (
        torch.cuda.get_device_name(device)
        if torch.device(device).type == "cuda"
        else platform.processor() or platform.machine()
    )


COMPARISON_REPEATS = 5
"""Default number of interleaved repeats of the comparison (batched LinUCB, the read of its state, the
peers): each repeat yields one back-to-back ratio, and the reported ratio is their mean with a t
interval over repeats, since one timing of the same code on a shared machine varies by tens of percent."""

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


def batching_gain(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Rounds·runs/s at the largest ``B`` over that at the smallest for one policy, dataset and device
    (``rows``: its :func:`bench_policies` entries, timed back to back); ``None`` when either is skipped."""
    timed = sorted((row for row in rows if "skipped" not in row), key=lambda row: row["n_runs"])
    sizes = sorted({row["n_runs"] for row in rows})
    if len(sizes) < 2 or len(timed) < 2 or timed[0]["n_runs"] != sizes[0] or timed[-1]["n_runs"] != sizes[-1]:
        return None
    low, high = timed[0], timed[-1]
    return {
        "dataset": low["dataset"],
        "device": low["device"],
        "policy": low["policy"],
        "n_runs_low": low["n_runs"],
        "n_runs_high": high["n_runs"],
        "rate_low": low["rounds_runs_per_second"],
        "rate_high": high["rounds_runs_per_second"],
        "gain": high["rounds_runs_per_second"] / low["rounds_runs_per_second"],
    }


def bench_policies(
    names: tuple[str, ...] | list[str] | None,
    datasets: dict[str, DatasetSpec],
    n_runs_list: tuple[int, ...] = (1, 20),
    horizon: int = 1000,
    device: str | list[str] = "cpu",
    params: dict[str, dict] | None = None,
    alpha: float = 1.0,
    max_seconds: float = 60.0,
    repeats: int = 1,
    comparison: dict[str, DatasetSpec] | None = None,
    comparison_repeats: int = COMPARISON_REPEATS,
) -> dict[str, Any]:
    """Throughput of each policy on each dataset, batch size and device; batched LinUCB against its bandwidth
    ceiling and the peers.

    names: policies (``None``: :func:`benched_policies`); datasets: name -> ``(features (n_rows, dim),
    labels (n_rows,))`` or a :class:`SyntheticConfig`; comparison: more datasets of the same form on
    which only batched LinUCB and the peers are timed (when ``"linucb"`` is in ``names``); device: one
    device or a list. When ``"linucb"`` is benched, :func:`compare_linucb` runs first on every dataset,
    in a process that has run no other policy, ``comparison_repeats`` times. Every other policy is then
    timed at each ``B`` in turn (median of ``repeats`` timings), so its batching gain is a back-to-back ratio.

    Returns ``{"environment", "policies", "references", "bandwidth", "linucb_ceiling", "peer_ratios",
    "batching_gains"}``: a policy entry holds ``dataset, policy, device, n_runs, horizon, dim, n_arms,
    rounds, seconds, rounds_runs_per_second`` or ``skipped`` (the error); a reference entry ``dataset,
    library, rounds_runs_per_second`` or ``skipped``; ``linucb_ceiling`` and ``peer_ratios`` come from
    :func:`ceiling_entry` and :func:`peer_ratio_entry`, ``batching_gains`` from :func:`batching_gain`.
    """
    if comparison_repeats < 1:
        raise ValueError(f"bench.comparison_repeats must be at least 1, got {comparison_repeats}")
    names = list(names) if names is not None else benched_policies()
    devices = [device] if isinstance(device, str) else list(device)
    params = params or {}
    out: dict[str, list] = {"references": [], "bandwidth": [], "linucb_ceiling": [], "peer_ratios": []}
    comparison = {name: spec for name, spec in (comparison or {}).items() if name not in datasets and "linucb" in names}
    compared: dict[tuple[str, str, int], dict[str, Any]] = {}
    for dataset, spec in {**datasets, **comparison}.items() if "linucb" in names else ():
        found = compare_linucb(
            dataset, spec, n_runs_list, horizon, devices, params, alpha, max_seconds, comparison_repeats
        )
        compared |= {(row["dataset"], row["device"], row["n_runs"]): row for row in found.pop("policies")}
        for key, rows in found.items():
            out[key] += rows
    if "linucb" not in names:
        for dataset, spec in datasets.items():
            env = make_environment(spec, 1, horizon, "cpu")
            recorded = prebuilt_rounds(env)
            contexts = torch.stack([r.observation.contexts[0, 0] for r in recorded]).numpy()
            rewards = torch.stack([r.rewards[0] for r in recorded]).numpy()
            out["references"] += [
                {"dataset": dataset, **reference_linucb(library, contexts, rewards, alpha)} for library in PEERS
            ]
    policies = []
    for dataset, spec in {**datasets, **comparison}.items():
        timed = [name for name in names if dataset in datasets or name == "linucb"]
        for dev in devices:
            envs = {n_runs: make_environment(spec, n_runs, horizon, dev) for n_runs in n_runs_list}
            rounds = {n_runs: prebuilt_rounds(env) for n_runs, env in envs.items()} if timed != ["linucb"] else {}
            for name in timed:
                for n_runs, env in envs.items():
                    entry = {
                        "dataset": dataset,
                        "policy": name,
                        "params": params.get(name, {}),
                        "device": dev,
                        "n_runs": n_runs,
                        "horizon": env.horizon,
                        "dim": env.dim,
                        "n_arms": env.n_arms,
                    }
                    if name == "linucb":
                        policies.append(compared[dataset, dev, n_runs])
                    else:
                        try:
                            policies.append(
                                entry
                                | median_timing(
                                    name, params.get(name, {}), env, rounds[n_runs], dev, repeats, max_seconds
                                )
                            )
                        except TIMING_ERRORS as error:
                            policies.append(entry | skipped(error))
                    row = policies[-1]
                    rate = (
                        f"skipped: {row['skipped']}"
                        if "skipped" in row
                        else f"{row['rounds_runs_per_second']:12.1f} rounds·runs/s"
                    )
                    print(f"{dataset:>12} {name:>22} {dev:>4} B={n_runs:<3} {rate}", flush=True)
            del envs, rounds
    groups: dict[tuple[str, str, str], list] = {}
    for row in policies:
        groups.setdefault((row["dataset"], row["device"], row["policy"]), []).append(row)
    gains = [gain for rows in groups.values() if (gain := batching_gain(rows)) is not None]
    return {
        "environment": {
            "devices": {dev: device_name(dev) for dev in devices},
            "torch": torch.__version__,
            "threads": torch.get_num_threads(),
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "python": platform.python_version(),
            "repeats": repeats,
            "comparison_repeats": comparison_repeats if "linucb" in names else 0,
            "max_seconds": max_seconds,
            "horizon": horizon,
        },
        "policies": policies,
        **out,
        "batching_gains": gains,
    }


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


def run_bench(
    *,
    out: str | Path,
    datasets: Mapping[str, str | Path] | None = None,
    comparison_datasets: Mapping[str, str | Path] | None = None,
    policies: list[str] | None = None,
    n_runs: Sequence[int] = (1, 20),
    horizon: int = 1000,
    devices: list[str] | None = None,
    param_overrides: Mapping[str, Mapping[str, Any]] | None = None,
    threads: int | None = None,
    max_seconds: float = 60.0,
    repeats: int = 1,
    comparison_repeats: int = COMPARISON_REPEATS,
    synthetic: bool = True,
    tex: str | Path | None = None,
    tex_neural: str | Path | None = None,
    neural_rounds: int = 30,
    neural_repeats: int = 3,
) -> dict[str, Any]:
    """The whole benchmark, written to ``out`` (JSON) and, if given, ``tex`` and ``tex_neural``; returns the result.

    ``datasets`` and ``comparison_datasets`` map a name to a ``.npz`` with arrays ``features`` and ``labels``
    (on the comparison ones only batched LinUCB and the peers are timed); HARE-Sim is included unless
    ``synthetic`` is false. ``policies`` defaults to :func:`benched_policies`, ``devices`` to
    :func:`available_devices`; ``param_overrides`` (``{policy: {key: value}}``) update :data:`BENCH_PARAMS`.
    ``threads`` sets torch's intra-op threads; ``neural_rounds = 0`` leaves out the NeuralUCB modes.
    """
    wall, cpu = time.perf_counter(), time.process_time()
    if threads is not None:
        torch.set_num_threads(threads)
    specs: dict[str, DatasetSpec] = {}
    if synthetic:
        specs["synthetic"] = SyntheticConfig()
    comparison: dict[str, DatasetSpec] = {}
    for target, paths in ((specs, datasets or {}), (comparison, comparison_datasets or {})):
        for name, path in paths.items():
            with np.load(path, allow_pickle=False) as data:
                target[name] = (data["features"], data["labels"])
    params: dict[str, dict] = {name: dict(values) for name, values in BENCH_PARAMS.items()}
    for policy, values in (param_overrides or {}).items():
        params.setdefault(policy, {}).update(values)
    devices = devices or available_devices()
    result = bench_policies(
        policies,
        specs,
        tuple(n_runs),
        horizon,
        devices,
        params,
        max_seconds=max_seconds,
        repeats=repeats,
        comparison=comparison,
        comparison_repeats=comparison_repeats,
    )
    if neural_rounds > 0:
        from hare.experiments.studies.bench_neural import bench_neural

        result["neural"] = bench_neural(rounds=neural_rounds, device=devices[0], repeats=neural_repeats)
    result["linucb_speedups"] = {dev: linucb_speedups(result, max(n_runs), dev) for dev in devices}
    result["environment"]["process"] = {
        "wall_seconds": time.perf_counter() - wall,
        "cpu_seconds": time.process_time() - cpu,
    }
    write_json(out, result)
    write_bench_tables(result, devices[0], tex, tex_neural, PEERS)
    return result
