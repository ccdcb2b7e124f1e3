"""Subcommands of the studies of scale: ``hare pool-scaling`` (the source notes' third open question;
paper, sec:scale) and ``hare cost-growth`` (how every policy family's cost per round grows; paper, sec:cost-growth).
Each computes with :mod:`hare.experiments.studies` and writes through a :mod:`hare.report` writer.

Each reads the section given as ``--config-json`` into its typed settings at the config boundary
(:func:`hare.experiments.settings.study_settings`): a bad value is one line naming its key path (``pool_scaling.rank:
...``, exit status 2), and the study takes the settings without checking them again."""

from __future__ import annotations

import argparse
import time

from hare.cli.arguments import json_object, output_file


def cmd_pool_scaling(args: argparse.Namespace) -> int:
    from hare.experiments.settings import pool_scaling, study_settings
    from hare.experiments.studies.pool_scaling import run_pool_scaling
    from hare.io import write_json
    from hare.report.pool_scaling import write_pool_scaling_tex

    start = time.perf_counter()
    result = run_pool_scaling(study_settings(pool_scaling.WHERE, args.config_json))
    write_json(args.out_json, result, allow_nan=False)
    write_pool_scaling_tex(args.out_tex, result)
    measured = sum(cell["status"] == "measured" for cell in result["cells"])
    print(
        f"pool scaling: {measured} of {len(result['cells'])} cells measured, "
        f"{len(result['regret']['kinds'])} kinds on HARE-Sim, {time.perf_counter() - start:.1f} s"
    )
    return 0


def cmd_cost_growth(args: argparse.Namespace) -> int:
    from hare.experiments.settings import cost_growth, study_settings
    from hare.experiments.studies.cost_growth import cost_growth_check
    from hare.report.cost_growth import write_cost_growth_tex

    result = cost_growth_check(study_settings(cost_growth.WHERE, args.config_json), out_json=args.out_json)
    write_cost_growth_tex(args.out_tex, result)
    for name, policy in result["policies"].items():
        fits = {axis: (data["exponent"] or {}).get("estimate") for axis, data in policy["axes"].items()}
        print(f"{name}: " + ", ".join(f"{axis} {'--' if k is None else f'{k:.2f}'}" for axis, k in fits.items()))
    print(f"cost growth measured in {result['wall_s']:.1f} s")
    return 0


def add_subcommands(sub: argparse._SubParsersAction) -> None:
    """Register the study subcommands on ``sub``."""
    p = sub.add_parser(
        "pool-scaling",
        help="HARE's select and update latency and memory against the pool size, per covariance kind",
        description="Can the per-cluster covariance be approximated efficiently for very large item pools? "
        "(The source notes' third open question; paper, sec:scale.) Per pool size, cluster-count rule and "
        "covariance kind (full, diagonal, low-rank): select and update latency and memory; the per-item "
        "covariance as a cost line; the regret each kind costs on HARE-Sim.",
    )
    p.add_argument("--config-json", type=json_object, required=True, help="the pool_scaling config section as JSON")
    p.add_argument("--out-json", type=output_file, required=True, help="result JSON (strict, written atomically)")
    p.add_argument(
        "--out-tex", type=output_file, required=True, help="the table and macros (LaTeX, written atomically)"
    )
    p.set_defaults(func=cmd_pool_scaling)

    p = sub.add_parser(
        "cost-growth",
        help="seconds per round of one policy per family along one-factor sweeps of t, K, d and B",
    )
    p.add_argument(
        "--config-json", type=json_object, required=True, help="the cost_growth config section as a JSON object"
    )
    p.add_argument(
        "--out-json", type=output_file, required=True, help="the measurements and fitted exponents (strict JSON)"
    )
    p.add_argument("--out-tex", type=output_file, required=True, help="the paper's table and macros")
    p.set_defaults(func=cmd_cost_growth)
