"""Subcommands that time the code: policy throughput against peer libraries, NeuralUCB's exploration modes, HARE's
scaling, the neural and kernel bandits against their dense references, CPU against CUDA."""

from __future__ import annotations

import argparse
import json
from typing import Any

from hare.cli.arguments import (
    baseline_policy,
    device,
    named_npz,
    nonnegative_int,
    output_file,
    policy_name,
    policy_param,
    positive_float,
    positive_int,
)


def cmd_bench(args: argparse.Namespace) -> int:
    from hare.experiments.studies.bench import run_bench
    from hare.report.bench_tables import format_summary

    overrides: dict[str, dict[str, Any]] = {}
    for policy, key, value in args.param:
        overrides.setdefault(policy, {})[key] = value
    library_default = {} if args.comparison_repeats is None else {"comparison_repeats": args.comparison_repeats}
    result = run_bench(
        out=args.out,
        datasets=dict(args.dataset),
        comparison_datasets=dict(args.comparison_dataset),
        policies=args.policies,
        n_runs=args.batch_sizes,
        horizon=args.horizon,
        devices=args.device,
        param_overrides=overrides,
        threads=args.threads,
        max_seconds=args.max_seconds,
        repeats=args.repeats,
        synthetic=not args.no_synthetic,
        tex=args.tex,
        tex_neural=args.tex_neural,
        neural_rounds=args.neural_rounds,
        neural_repeats=args.neural_repeats,
        **library_default,
    )
    for row in result["linucb_ceiling"]:
        print(
            f"{row['dataset']:>12} linucb {row['device']:>4} B={row['n_runs']:<3} "
            f"fraction of ceiling {format_summary(row.get('fraction'))}"
        )
    print(json.dumps(result["environment"]["process"]))
    return 0


def cmd_bench_neural(args: argparse.Namespace) -> int:
    from hare.experiments.studies.bench_neural import bench_neural
    from hare.io import write_json

    report = bench_neural(args.width, args.runs, args.rounds, args.arms, args.dim, args.device, args.repeats)
    write_json(args.out, report)
    print(json.dumps(report, indent=2))
    return 0


def cmd_bench_hare(args: argparse.Namespace) -> int:
    from hare.experiments.studies.bench_hare import run_bench_hare

    run_bench_hare(
        out=args.out,
        device=args.device,
        rounds=args.rounds,
        quick=args.quick,
        max_items=args.max_items,
        tex=args.tex,
        mean=args.mean,
    )
    return 0


BASELINE_SIZE_FLAGS = (
    ("--runs", "n_runs", "runs B, batched"),
    ("--width", "width", "hidden units m (even)"),
    ("--train-steps", "train_steps", "SGD steps of one training"),
    ("--batch-size", "batch_size", "SGD minibatch"),
    ("--networks", "n_networks", "BootstrapNN's networks per run"),
    ("--max-points", "max_points", "kernel dictionary size"),
    ("--history", "history", "points per run before a training is timed"),
    ("--rounds", "rounds", "timed rounds per policy and repeat"),
    ("--repeats", "repeats", "alternating repeats, each giving one ratio"),
    ("--max-seconds", "max_seconds", "no repeat starts once a setting's repeats have run this long"),
)
"""``hare bench-baselines``'s size flags: flag, field of ``BaselineSizes``, help."""


def cmd_bench_baselines(args: argparse.Namespace) -> int:
    from hare.experiments.studies.bench_baselines import KERNEL, NEURAL, BaselineSizes, SizeError, run_bench_baselines

    if not args.dataset:
        raise ValueError("--dataset: at least one name=path.npz is required")
    given = {field: getattr(args, field) for _, field, _ in BASELINE_SIZE_FLAGS if getattr(args, field) is not None}
    flags = {field: flag for flag, field, _ in BASELINE_SIZE_FLAGS}
    try:
        sizes = BaselineSizes(**given, warmup=not args.no_warmup)
    except SizeError as error:
        raise ValueError(f"{flags[error.field]} {error}") from None
    policies = tuple(args.policies or NEURAL + KERNEL)
    result = run_bench_baselines(
        out=args.out,
        datasets=dict(args.dataset),
        sizes=sizes,
        policies=policies,
        device=args.device,
        threads=args.threads,
        tex=args.tex,
    )
    print(json.dumps(result["environment"]["process"]))
    return 0


def cmd_device_check(args: argparse.Namespace) -> int:
    from hare.experiments.studies.device_check import device_check

    device_check(out=args.out, n_runs=args.n_runs, horizon=args.horizon)
    return 0


def add_subcommands(sub: argparse._SubParsersAction) -> None:
    """Register the benchmark subcommands on ``sub``."""
    p = sub.add_parser(
        "bench",
        help="policy throughput benchmark against peer libraries",
        description="Speed of every registered policy, batched over runs, reported as ratios timed in one process.",
    )
    p.add_argument("--out", type=output_file, required=True, help="result JSON")
    p.add_argument(
        "--dataset", type=named_npz, action="append", default=[], help="name=path.npz with arrays features, labels"
    )
    p.add_argument(
        "--comparison-dataset",
        type=named_npz,
        action="append",
        default=[],
        help="name=path.npz on which only batched LinUCB and the peers are timed",
    )
    p.add_argument(
        "--policies",
        nargs="+",
        type=policy_name,
        default=None,
        help="default: every registered policy but hare_synthesize",
    )
    p.add_argument(
        "--batch-sizes",
        type=positive_int,
        nargs="+",
        default=[1, 20],
        help="numbers of runs B each policy is timed at, batched",
    )
    p.add_argument("--horizon", type=positive_int, default=1000)
    p.add_argument(
        "--device",
        nargs="+",
        type=device,
        default=None,
        help="cpu, cuda or cuda:N (default: cpu, and cuda when available)",
    )
    p.add_argument(
        "--param",
        type=policy_param,
        action="append",
        default=[],
        help="policy.key=number, a hyperparameter of a registered policy, e.g. kernel_ucb.max_points=200",
    )
    p.add_argument(
        "--threads", type=positive_int, default=None, help="torch intra-op threads (default: torch's choice)"
    )
    p.add_argument(
        "--max-seconds",
        type=positive_float,
        default=60.0,
        help="stop an entry after this long and report the rounds played",
    )
    p.add_argument("--repeats", type=positive_int, default=1, help="timings per entry; the median is kept")
    p.add_argument(
        "--comparison-repeats",
        type=positive_int,
        default=None,
        help="back-to-back repeats of batched LinUCB, its state read and the peers",
    )
    p.add_argument("--no-synthetic", action="store_true", help="leave out the synthetic environment")
    p.add_argument(
        "--tex", type=output_file, default=None, help="also write the ceiling and batching tables (LaTeX) here"
    )
    p.add_argument(
        "--tex-neural", type=output_file, default=None, help="also write the NeuralUCB modes table (LaTeX) here"
    )
    p.add_argument(
        "--neural-rounds", type=nonnegative_int, default=30, help="timed rounds per NeuralUCB mode (0: skip)"
    )
    p.add_argument(
        "--neural-repeats", type=positive_int, default=3, help="repeats of the three NeuralUCB modes in turn"
    )
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser(
        "bench-neural",
        help="NeuralUCB exploration modes: loop vs Jacobian vs diagonal",
        description="Benchmark (not a test): rounds per second of NeuralUCB's exploration modes.",
    )
    p.add_argument("--out", type=output_file, required=True)
    p.add_argument("--width", type=positive_int, default=20)
    p.add_argument("--runs", type=positive_int, default=1)
    p.add_argument("--rounds", type=positive_int, default=30)
    p.add_argument("--arms", type=positive_int, default=10)
    p.add_argument("--dim", type=positive_int, default=20)
    p.add_argument("--device", type=device, default="cpu", help="cpu, cuda or cuda:N")
    p.add_argument("--repeats", type=positive_int, default=3)
    p.set_defaults(func=cmd_bench_neural)

    p = sub.add_parser(
        "bench-hare",
        help="HARE select-mode latency and memory against N, C, H, d_k",
        description="Per-round latency and peak memory of HARE select mode against pool size, clusters, heads and d_k.",
    )
    p.add_argument("--out", type=output_file, required=True, help="JSON file to write")
    p.add_argument("--device", type=device, default="cpu", help="cpu, cuda or cuda:N")
    p.add_argument("--rounds", type=positive_int, default=20)
    p.add_argument("--quick", action="store_true", help="pool sizes up to 10,000 only")
    p.add_argument("--max-items", type=positive_int, default=None, help="largest pool size")
    p.add_argument("--tex", type=output_file, default=None, help="also write the table (LaTeX) here")
    p.add_argument(
        "--mean", default="online", choices=("online", "frozen"), help="the cluster index's mean (HAREConfig.mean)"
    )
    p.set_defaults(func=cmd_bench_hare)

    p = sub.add_parser(
        "bench-baselines",
        help="neural and kernel bandits against their dense references",
        description="The registered neural and kernel bandits against their dense references: one training and one "
        "round of each, timed in turn, as ratios with t intervals over repeats. Sizes default to the sources' "
        "(hare.experiments.studies.bench_baselines.BaselineSizes).",
    )
    p.add_argument("--out", type=output_file, required=True, help="result JSON")
    p.add_argument("--tex", type=output_file, default=None, help="also write the table and its macros (LaTeX) here")
    p.add_argument(
        "--dataset", type=named_npz, action="append", default=[], help="name=path.npz with arrays features, labels"
    )
    p.add_argument(
        "--policies", nargs="+", type=baseline_policy, default=None, help="default: every neural and kernel bandit"
    )
    for flag, field, text in BASELINE_SIZE_FLAGS:
        p.add_argument(
            flag, dest=field, type=positive_float if field == "max_seconds" else positive_int, default=None, help=text
        )
    p.add_argument(
        "--no-warmup", action="store_true", help="no untimed training before the first repeat (for minutes-long ones)"
    )
    p.add_argument("--device", type=device, default="cpu", help="cpu, cuda or cuda:N")
    p.add_argument(
        "--threads", type=positive_int, default=None, help="torch intra-op threads (default: torch's choice)"
    )
    p.set_defaults(func=cmd_bench_baselines)

    p = sub.add_parser(
        "device-check",
        help="the same jobs on CPU and CUDA",
        description="Same jobs on CPU and CUDA: do they pick the same arms, and how fast is each?",
    )
    p.add_argument("--out", type=output_file, required=True)
    p.add_argument("--n-runs", type=positive_int, default=20)
    p.add_argument("--horizon", type=positive_int, default=2000)
    p.set_defaults(func=cmd_device_check)
