"""``hare calibrate``: this machine's CPU, torch with its BLAS, and its calibration figure against the machine that
measured the README's build time (:mod:`hare.experiments.studies.calibration`)."""

from __future__ import annotations

import argparse
import json

from hare.cli.arguments import output_file, positive_int


def cmd_calibrate(args: argparse.Namespace) -> int:
    from hare.experiments.studies.calibration import calibrate, format_calibration
    from hare.io import write_text

    facts = calibrate(repeats=args.repeats)
    print("\n".join(format_calibration(facts)))
    if args.json is not None:
        write_text(args.json, json.dumps(facts, indent=2) + "\n")
    return 0


def add_subcommands(sub: argparse._SubParsersAction) -> None:
    """Register ``hare calibrate`` on ``sub``."""
    p = sub.add_parser(
        "calibrate",
        help="this machine's speed on the build's hot paths, against the README's reference machine",
        description="CPU, cores, torch and its BLAS, and the calibration figure: a fixed few-second workload of small "
        "float64 batched products (LinUCB's and HARE's per-round algebra), one thread and default threads, "
        "as reference seconds / measured seconds (1.00 = the machine that measured the README's build time).",
    )
    p.add_argument("--json", type=output_file, default=None, help="also write the facts as JSON to this path")
    p.add_argument(
        "--repeats", type=positive_int, default=5, help="timed plays per thread setting (the median is taken)"
    )
    p.set_defaults(func=cmd_calibrate)
