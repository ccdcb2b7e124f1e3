"""``hare cost-model``: the phases of every policy entry of a config measured at two run counts, and the predicted CPU
time of its jobs (:mod:`hare.experiments.studies.cost_model`, docs/cost_model.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from hare.cli.arguments import (
    config_file,
    existing_dir,
    json_file,
    output_file,
    positive_float,
    positive_int,
    section_name,
)


def _load_config(path: str | list[str]) -> dict:
    """The config of ``path`` (or of several merged left to right), validated."""
    from hare.experiments.config import load_config

    return load_config([Path(p) for p in ([path] if isinstance(path, str) else path)])


def cmd_cost_model(args: argparse.Namespace) -> int:
    from hare.experiments.studies.cost_check import (
        check_against_measured,
        check_table,
        measured_batch_seconds,
        per_experiment,
    )
    from hare.experiments.studies.cost_model import check_arguments, run_cost_model
    from hare.experiments.studies.cost_prediction import predict_config, summary_lines
    from hare.io import write_json

    try:
        check_arguments(tuple(args.runs), tuple(args.at), args.window, args.budget)
    except ValueError as error:
        raise ValueError(f"--{error}") from None
    if args.model is not None and args.resume is not None:
        raise ValueError("--resume: give --model (predict from it, measuring nothing) or --resume (measure the rest)")
    config = _load_config(args.config)
    unknown = sorted(set(args.experiments or ()) - set(config["experiments"]))
    if unknown:
        raise ValueError(
            f"--experiments: no experiment {', '.join(unknown)} in the config "
            f"(it has {', '.join(config['experiments'])})"
        )
    predicted = {path: _load_config(path) for path in args.predict}  # each read once, before any measurement
    if args.model is not None:  # predict from an earlier measurement, measuring nothing
        result = json.loads(Path(args.model).read_text())
        result.pop("predictions", None)
        result["prediction"] = predict_config(config, result, args.experiments)
    else:
        result = run_cost_model(
            config,
            Path(args.results),
            tuple(args.runs),
            tuple(args.at),
            args.window,
            args.budget,
            args.experiments,
            on_entry=lambda partial: write_json(args.out, partial),
            earlier=None if args.resume is None else json.loads(Path(args.resume).read_text()),
            probe_budget_s=args.probe_budget,
            also=list(predicted.values()),
        )
    for path, other in predicted.items():
        result.setdefault("predictions", {})[path] = predict_config(other, result, args.experiments)
    check = None
    if args.measured:  # beside the last prediction (the config itself without --predict)
        checked = args.predict[-1] if args.predict else None
        prediction = result["prediction"] if checked is None else result["predictions"][checked]
        batches = measured_batch_seconds(Path(args.measured), args.experiments)
        prediction["measured_cpu_seconds"] = per_experiment(batches)
        prediction["check"] = check = check_against_measured(
            config if checked is None else predicted[checked], result, batches, args.experiments
        )
    write_json(args.out, result)
    for name, prediction in {"(this config)": result["prediction"], **result.get("predictions", {})}.items():
        print("\n".join(summary_lines(name, prediction)))
    if check is not None:
        name = args.predict[-1] if args.predict else " ".join(args.config)
        print("\n".join(["", f"{name} against {args.measured}:", *check_table(check)]))
    return 0


def add_subcommands(sub: argparse._SubParsersAction) -> None:
    """Register ``hare cost-model`` on ``sub``."""
    p = sub.add_parser(
        "cost-model",
        help="the phases of every policy entry of a config (set-up, rounds, trainings, recording) measured at two run "
        "counts, and the predicted CPU time of its jobs (docs/cost_model.md)",
    )
    p.add_argument(
        "config", nargs="+", type=config_file, help="the config whose policies and environments are measured"
    )
    p.add_argument("--results", type=existing_dir, default="results", help="where the prepared datasets are")
    p.add_argument(
        "--out", type=output_file, required=True, help="JSON: per-entry costs, the model and the predictions"
    )
    p.add_argument(
        "--runs",
        type=positive_int,
        nargs="+",
        default=[5, 20],
        help="run counts B at which every entry is measured (two or more: a cost line in B; one: proportional to B)",
    )
    p.add_argument(
        "--at", type=positive_int, nargs="+", default=[1000, 5000, 10000], help="rounds t at which costs are reported"
    )
    p.add_argument("--window", type=positive_int, default=20, help="rounds averaged into each cost")
    p.add_argument(
        "--budget",
        type=positive_float,
        default=20.0,
        help="seconds of play per entry and run count; later rounds are modelled",
    )
    p.add_argument(
        "--experiments", nargs="+", type=section_name, default=None, help="only these experiments of the config"
    )
    p.add_argument(
        "--predict",
        nargs="*",
        type=config_file,
        default=[],
        help="other configs whose jobs to predict from this model (their entries this config lacks measured too)",
    )
    p.add_argument(
        "--measured",
        type=existing_dir,
        help="a finished build's results folder: its batches' CPU time (each batch log's last line, else its Snakemake "
        "benchmark file) beside the last prediction (the config's own without --predict), batch by batch (a table "
        "per experiment)",
    )
    p.add_argument(
        "--model",
        type=json_file,
        default=None,
        help="predict from this earlier output of hare cost-model instead of measuring (its entries, with this "
        "version's prediction)",
    )
    p.add_argument(
        "--probe-budget",
        type=positive_float,
        default=10.0,
        help="CPU seconds a growing entry's probe may spend feeding its history towards its last round (then probed "
        "where the feeding stopped)",
    )
    p.add_argument(
        "--resume",
        type=json_file,
        default=None,
        help="an earlier output of hare cost-model at the same --runs, --window and --budget: its entries are kept and "
        "only the others measured (an interrupted run; entries a newer version measures)",
    )
    p.set_defaults(func=cmd_cost_model)
