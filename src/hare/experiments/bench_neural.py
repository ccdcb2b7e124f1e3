"""Benchmark (not a test): rounds per second of NeuralUCB's exploration modes.

A random 10-class problem (``dim`` 20, unit-norm features, disjoint encoding, so ``d_in = 200``);
each timed round is ``select`` plus ``update`` with training switched off, so the numbers measure
the exploration machinery (gradients, bonus, ``Z`` update) that distinguishes the modes.

    python -m hare.experiments.bench_neural --out bench.json [--width 20 --rounds 30 --runs 1]
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import torch

from hare.envs.classification import ClassificationBandit
from hare.policies.base import build_policy
from hare.random import CounterRNG, run_keys


def rounds_per_second(mode: str, width: int, n_runs: int, rounds: int, n_arms: int, dim: int, device: str) -> float:
    """Timed rounds (after two warm-up rounds) per second of NeuralUCB with ``exploration=mode``."""
    rng = CounterRNG(run_keys(0, [0], "bench-data"))
    n_rows = rounds + 2
    features = torch.nn.functional.normalize(rng.normal("features", 0, (n_rows, dim))[0], dim=-1)
    labels = rng.randint("labels", 0, n_arms, (n_rows,))[0]
    keys = run_keys(0, list(range(n_runs)), "bench")
    env = ClassificationBandit(features, labels, n_runs, n_rows, keys, device)
    params = dict(width=width, exploration=mode, train_steps=0, memory_budget_mb=4096.0)
    policy = build_policy("neural_ucb", params, env, keys.to(device)).to(device)

    def play(t: int) -> None:
        bandit_round = env.round(t)
        arms = policy.select(bandit_round.observation)
        policy.update(bandit_round.observation, arms, bandit_round.reward(arms))

    for t in range(2):
        play(t)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    start = time.perf_counter()
    for t in range(2, n_rows):
        play(t)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return rounds / (time.perf_counter() - start)


def bench_neural(width: int = 20, runs: int = 1, rounds: int = 30, arms: int = 10, dim: int = 20, device: str = "cpu") -> dict:
    """Rounds/s of the three exploration modes and the speedups over ``loop``."""
    results = {mode: rounds_per_second(mode, width, runs, rounds, arms, dim, device) for mode in ("loop", "jacobian", "diagonal")}
    return {
        "rounds_per_second": results,
        "speedup_jacobian_over_loop": results["jacobian"] / results["loop"],
        "speedup_diagonal_over_loop": results["diagonal"] / results["loop"],
        "n_parameters": width * arms * dim + width,
        "settings": {"width": width, "runs": runs, "rounds": rounds, "arms": arms, "dim": dim, "device": device},
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "machine": platform.processor() or platform.machine(),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--width", type=int, default=20)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--arms", type=int, default=10)
    parser.add_argument("--dim", type=int, default=20)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)
    report = bench_neural(args.width, args.runs, args.rounds, args.arms, args.dim, args.device)
    with open(args.out, "w") as handle:
        json.dump(report, handle, indent=2)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
