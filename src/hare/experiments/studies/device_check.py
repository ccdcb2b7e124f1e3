"""Same jobs on CPU and CUDA: do they pick the same arms, and how fast is each?

``hare device-check --out device_check.json`` runs a few policies of
the synthetic environment on both devices with identical run keys and records the total
regret per run, the largest difference, and the wall time. Counter-based randomness makes
the draws identical on both devices; floating-point reductions may still round differently,
which this check measures rather than assumes away.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch

from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.experiments.simulation import SimulationOptions, simulate
from hare.io import write_json
from hare.policies import build_policy
from hare.random import run_keys

CASES = [
    ("random", {}),
    ("linucb", {"alpha": 1.0}),
    ("hare", {"alpha": 1.0, "projections": "oracle"}),
    ("hare", {"alpha": 1.0, "projections": "random", "n_heads": 4}),
    ("hare", {"alpha": 1.0, "projections": "learned"}),
    ("rag_cosine", {}),
    ("lnucb_ta", {}),
    ("knn_ucb", {}),
    ("neural_ucb", {"width": 20, "exploration": "diagonal"}),
]


def run_case(policy: str, params: dict, device: str, n_runs: int, horizon: int) -> tuple[np.ndarray, float]:
    env = SyntheticBandit(
        SyntheticConfig(n_items=200, n_clusters=10, n_users=20),
        n_runs,
        horizon,
        run_keys(0, range(n_runs), "env"),
        device,
    )
    logs = env.logged(1000) if params.get("projections") == "learned" else None
    pol = build_policy(policy, params, env, run_keys(0, range(n_runs), "policy")).to(device)
    start = time.perf_counter()
    result = simulate(env, pol, SimulationOptions(record_every=horizon), logs=logs)
    if device == "cuda":
        torch.cuda.synchronize()
    return result["total_regret"], time.perf_counter() - start


def device_check(*, out: str | Path, n_runs: int = 20, horizon: int = 2000) -> dict:
    """Every case of :data:`CASES` on CPU and, when available, CUDA, each printed as a line when done; writes the
    report (total regret per run and wall time per device, the largest difference between devices) to ``out``
    (JSON) and returns it. A device that fails with a ``RuntimeError`` is recorded with the error."""
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    report = {
        "torch": torch.__version__,
        "device_name": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu",
        "cases": [],
    }
    for policy, params in CASES:
        row = {"policy": policy, "params": params}
        for device in devices:
            try:
                totals, wall = run_case(policy, params, device, n_runs, horizon)
            except RuntimeError as error:
                row[device] = {"error": str(error)}
                print(policy, params, device, "ERROR", error)
                continue
            row[device] = {
                "total_regret": totals.tolist(),
                "wall_s": wall,
                "rounds_runs_per_s": n_runs * horizon / wall,
            }
        if len(devices) == 2 and all("total_regret" in row[d] for d in devices):
            row["max_abs_difference"] = float(
                np.max(np.abs(np.array(row["cpu"]["total_regret"]) - np.array(row["cuda"]["total_regret"])))
            )
        report["cases"].append(row)
        print(
            policy,
            params,
            {d: round(row[d].get("wall_s", float("nan")), 2) for d in devices},
            row.get("max_abs_difference"),
        )
    write_json(out, report)
    return report
