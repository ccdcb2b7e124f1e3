"""Throughput of the baseline policies, batched over runs, against sequential reference libraries.

A benchmark, not a test: it reports rounds·runs per second (rounds of ``select`` + ``update``
times the number of runs advanced together) for each policy, dataset and batch size, and the
same disjoint-LinUCB workload (one run) in MABWiser and Open Bandit Pipeline when they are
installed. Environment rounds are generated before the clock starts, so only policy work is
timed.

    python -m hare.experiments.bench --out results/bench/policies.json [--dataset name=path.npz ...]

Without ``--dataset`` the synthetic environment (HARE-Sim, default configuration) is used.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any, Union

import numpy as np
import torch

from hare.envs.base import BanditEnvironment, BanditRound
from hare.envs.classification import ClassificationBandit
from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.policies import build_policy
from hare.random import run_keys

BASELINES = ("random", "ucb1", "kl_ucb", "eps_greedy", "beta_thompson", "linucb", "lin_ts", "lin_thompson_ucb", "kernel_ucb", "kernel_ts")

DatasetSpec = Union[tuple[np.ndarray, np.ndarray], SyntheticConfig]


def make_environment(spec: DatasetSpec, n_runs: int, horizon: int, device: str) -> BanditEnvironment:
    """A classification bandit from ``(features (n_rows, dim), labels (n_rows,))`` or HARE-Sim from its config."""
    keys = run_keys(0, range(n_runs), "bench-env")
    if isinstance(spec, SyntheticConfig):
        return SyntheticBandit(spec, n_runs, horizon, keys, device)
    features, labels = spec
    features = torch.as_tensor(np.asarray(features, dtype=np.float64))
    features = features / features.norm(dim=1, keepdim=True).clamp_min(1e-12)
    return ClassificationBandit(features, torch.as_tensor(np.asarray(labels, dtype=np.int64)), n_runs, horizon, keys, device)


def synchronise(device: str) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def time_policy(name: str, params: dict, env: BanditEnvironment, rounds: list[BanditRound], device: str, warmup: int = 5) -> float:
    """Seconds for ``len(rounds)`` rounds of ``select`` + ``update`` (after ``warmup`` untimed rounds on a fresh copy)."""
    keys = run_keys(0, range(env.n_runs), "bench", name).to(device)
    for repeat in ("warmup", "timed"):
        policy = build_policy(name, params, env, keys).to(device)
        steps = rounds[:warmup] if repeat == "warmup" else rounds
        synchronise(device)
        start = time.perf_counter()
        for current in steps:
            arms = policy.select(current.observation)
            policy.update(current.observation, arms, current.reward(arms))
        synchronise(device)
        elapsed = time.perf_counter() - start
    return elapsed


def reference_linucb(library: str, contexts: np.ndarray, rewards: np.ndarray, alpha: float) -> dict[str, Any]:
    """One sequential run of disjoint LinUCB in ``library`` over ``contexts (horizon, dim)`` and ``rewards (horizon, n_arms)``."""
    horizon, n_arms = rewards.shape
    dim = contexts.shape[1]
    try:
        if library == "mabwiser":
            from mabwiser.mab import MAB, LearningPolicy

            model = MAB(arms=list(range(n_arms)), learning_policy=LearningPolicy.LinUCB(alpha=alpha, l2_lambda=1.0), seed=0)
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
    return {"library": library, "version": version, "policy": "linucb", "n_runs": 1, "horizon": horizon, "seconds": elapsed, "rounds_runs_per_second": horizon / elapsed}


def bench_policies(
    names: tuple[str, ...] | list[str],
    datasets: dict[str, DatasetSpec],
    n_runs_list: tuple[int, ...] = (1, 20),
    horizon: int = 1000,
    device: str = "cpu",
    params: dict[str, dict] | None = None,
    alpha: float = 1.0,
) -> dict[str, Any]:
    """Throughput of each policy on each dataset and batch size, and the reference libraries' LinUCB.

    datasets: name -> ``(features (n_rows, dim), labels (n_rows,))`` or a :class:`SyntheticConfig`.
    Returns ``{"environment": ..., "policies": [...], "references": [...]}`` where each policy entry
    holds ``dataset, policy, n_runs, horizon, seconds, rounds_runs_per_second``.
    """
    params = params or {}
    policies, references = [], []
    for dataset, spec in datasets.items():
        for n_runs in n_runs_list:
            env = make_environment(spec, n_runs, horizon, device)
            rounds = [env.round(t) for t in range(horizon)]
            for name in names:
                seconds = time_policy(name, params.get(name, {}), env, rounds, device)
                policies.append(
                    {"dataset": dataset, "policy": name, "params": params.get(name, {}), "n_runs": n_runs, "horizon": horizon, "seconds": seconds, "rounds_runs_per_second": horizon * n_runs / seconds}
                )
        env = make_environment(spec, 1, horizon, "cpu")
        recorded = [env.round(t) for t in range(horizon)]
        contexts = torch.stack([r.observation.contexts[0, 0] for r in recorded]).numpy()
        rewards = torch.stack([r.rewards[0] for r in recorded]).numpy()
        for library in ("mabwiser", "obp"):
            references.append({"dataset": dataset, **reference_linucb(library, contexts, rewards, alpha)})
    return {
        "environment": {
            "device": device,
            "device_name": torch.cuda.get_device_name(device) if torch.device(device).type == "cuda" else platform.processor() or platform.machine(),
            "torch": torch.__version__,
            "threads": torch.get_num_threads(),
            "python": platform.python_version(),
        },
        "policies": policies,
        "references": references,
    }


def write_json_atomic(path: Path, payload: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp", delete=False) as handle:
        json.dump(payload, handle, indent=2)
        temporary = handle.name
    os.replace(temporary, path)


def parse_dataset(text: str) -> tuple[str, Path]:
    name, separator, path = text.partition("=")
    if not separator or not name or not path:
        raise argparse.ArgumentTypeError(f"--dataset expects name=path.npz, got {text!r}")
    return name, Path(path)


def parse_param(text: str) -> tuple[str, str, Any]:
    target, separator, value = text.partition("=")
    policy, dot, key = target.partition(".")
    if not separator or not dot or not policy or not key:
        raise argparse.ArgumentTypeError(f"--param expects policy.key=value, got {text!r}")
    return policy, key, json.loads(value)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="result JSON")
    parser.add_argument("--dataset", type=parse_dataset, action="append", default=[], help="name=path.npz with arrays features, labels")
    parser.add_argument("--policies", nargs="+", default=list(BASELINES))
    parser.add_argument("--n-runs", type=int, nargs="+", default=[1, 20])
    parser.add_argument("--horizon", type=int, default=1000)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--param", type=parse_param, action="append", default=[], help="policy.key=json_value, e.g. kernel_ucb.max_points=200")
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's choice)")
    args = parser.parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    datasets: dict[str, DatasetSpec] = {}
    for name, path in args.dataset:
        with np.load(path, allow_pickle=False) as data:
            datasets[name] = (data["features"], data["labels"])
    if not datasets:
        datasets["synthetic"] = SyntheticConfig()
    params: dict[str, dict] = {}
    for policy, key, value in args.param:
        params.setdefault(policy, {})[key] = value
    result = bench_policies(args.policies, datasets, tuple(args.n_runs), args.horizon, args.device, params)
    write_json_atomic(args.out, result)
    for row in result["policies"]:
        print(f"{row['dataset']:>12} {row['policy']:>18} B={row['n_runs']:<4} {row['rounds_runs_per_second']:12.1f} rounds·runs/s")
    for row in result["references"]:
        rate = f"{row['rounds_runs_per_second']:12.1f} rounds·runs/s" if "skipped" not in row else row["skipped"]
        print(f"{row['dataset']:>12} {row['library'] + ' linucb':>18} B=1    {rate}")
    return result


if __name__ == "__main__":
    main()
