"""Speed of every registered policy, batched over runs, reported as ratios timed in one process.

A benchmark, not a test. Batched disjoint LinUCB is timed at each batch size, then a read of a
float64 state of the size of its inverses, then the same workload (one run) in MABWiser and Open
Bandit Pipeline (the peers), in turn, several times: each repeat gives LinUCB's fraction of the
memory-bandwidth ceiling (:func:`.bench_linucb.ceiling_fraction`) and its rate over each peer's, and the JSON keeps
both timings of every ratio. Every other policy is timed at each batch size in turn (its batching
gain). Environment rounds are generated before the clock starts, so only policy work is timed. An
entry stops after ``max_seconds`` and reports the rounds it completed; a policy that cannot run on
a dataset (an oracle it lacks, memory) is recorded with the reason. The NeuralUCB exploration modes
(:mod:`hare.experiments.studies.bench_neural`) are measured into the same file.

    hare bench --out results/bench/policies.json \
        --dataset mushroom=mushroom.npz --dataset mnist=mnist.npz --horizon 1000 --device cpu

The synthetic environment (HARE-Sim, default configuration) is always included.
:mod:`hare.report.bench_tables` turns the file into the paper's tables and macros.

The benchmark by family: batched LinUCB against its ceiling and its peers in
:mod:`hare.experiments.studies.bench_linucb`, every other policy's batching gain here (:func:`bench_policies`,
:func:`batching_gain`), on the harness of :mod:`hare.experiments.studies.bench_harness` (the environments, a timed
play); the NeuralUCB modes are :mod:`hare.experiments.studies.bench_neural`, HARE's scaling
:mod:`hare.experiments.studies.bench_hare`. The rounds themselves are played by
:func:`hare.experiments.simulation.simulate`, and :mod:`hare.report.bench_tables` reads the fields these modules
write, as plain data.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hare.envs.synthetic import SyntheticConfig
from hare.experiments.simulation import prebuilt_rounds
from hare.experiments.studies.bench_harness import (
    TIMING_ERRORS,
    DatasetSpec,
    available_devices,
    device_name,
    make_environment,
    median_timing,
    skipped,
)
from hare.experiments.studies.bench_linucb import (
    COMPARISON_REPEATS,
    PEERS,
    compare_linucb,
    linucb_speedups,
    reference_linucb,
)
from hare.io import write_json
from hare.policies.base import policy_names
from hare.report.bench_tables import write_bench_tables

NOT_BENCHED = ("hare_synthesize",)
"""Synthesize mode outputs a vector, not an arm; it has no select/update round to time."""


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
