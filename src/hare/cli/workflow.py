"""Subcommands of the experiment workflow: configs and jobs, datasets, runs, selection, tables, the results manifest
and the cost model.

Length: one module because its subcommands share the config loading and the argument checks that run before any
work; a split by subcommand waits for the one config boundary that will own those checks.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from hare.cli.arguments import input_file, npz_file, positive_float, positive_int


def _load_config(paths: list[str], scope: str = "all") -> dict:
    """Merge YAML configs left to right (later files override top-level keys) and validate them (``scope``:
    :func:`hare.experiments.settings.validate_config`)."""
    from hare.experiments.config import load_config

    return load_config([Path(p) for p in paths], scope=scope)


def cmd_validate_config(args: argparse.Namespace) -> int:
    config = _load_config(args.config)
    from hare.experiments.grid import expand_jobs

    jobs = expand_jobs(config)
    print(
        f"config OK: {sum(j.role == 'report' for j in jobs)} report jobs, "
        f"{sum(j.role == 'tuning' for j in jobs)} tuning jobs"
    )
    return 0


def cmd_jobs(args: argparse.Namespace) -> int:
    from hare.experiments.grid import expand_jobs

    config = _load_config(args.config)
    if args.table:
        from hare.cli.code import workflow_code
        from hare.experiments.plan import job_table
        from hare.theory.claims.register import load_register

        table = job_table(config)
        table["code"] = workflow_code(table)
        table["claims"] = [
            {"key": claim["key"], "inputs": dict(claim.get("inputs") or {})}
            for claim in load_register(Path(args.register), [config])
        ]
        json.dump(table, sys.stdout, sort_keys=True)
        return 0
    if args.datasets:
        from hare.data.registry import get_dataset
        from hare.experiments.grid import prepared_dataset

        paths = {
            f"results/{path}"
            for job in expand_jobs(config)
            if args.role in (None, job.role)
            and (path := prepared_dataset(job.spec["environment"]))
            and not get_dataset(job.spec["environment"]["dataset"]).optional
        }
        print("\n".join(sorted(paths)))
        return 0
    for job in expand_jobs(config):
        if args.role in (None, job.role):
            print(job.stem)
    return 0


def cmd_fetch(args: argparse.Namespace) -> int:
    from hare.data.fetch import fetch_dataset
    from hare.io import file_sha256, write_json

    paths = fetch_dataset(
        args.dataset, Path(args.dest), Path(args.mirror) if args.mirror else None, offline=args.offline
    )
    if args.manifest:
        write_json(args.manifest, {"dataset": args.dataset, "files": {p.name: file_sha256(p) for p in paths}})
    for path in paths:
        print(path)
    return 0


def cmd_prepare(args: argparse.Namespace) -> int:
    from hare.data.prepare import prepare_dataset
    from hare.io import write_json

    summary = prepare_dataset(args.dataset, Path(args.raw), Path(args.out), args.protocol)
    if args.summary:
        write_json(args.summary, summary)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from hare.experiments.run import run_job

    spec = json.loads(args.job)
    run_job(
        spec,
        Path(args.out),
        args.dataset,
        progress=None if args.progress == "auto" else args.progress == "on",
        selected=args.selected,
    )
    return 0


def cmd_run_batch(args: argparse.Namespace) -> int:
    from hare.experiments.plan import batch_entries
    from hare.experiments.run import batch_cpu_line, run_batch

    config = _load_config(args.config, scope="experiments")
    entries, dataset = batch_entries(config, args.batch, Path(args.results), args.digest)
    if dataset is not None and not dataset.is_file():
        raise FileNotFoundError(
            f"--batch {args.batch!r}: its prepared dataset {dataset} is missing (snakemake {dataset} builds it)"
        )
    from hare.experiments.job_store import STORE

    run_batch(
        entries,
        dataset,
        progress=None if args.progress == "auto" else args.progress == "on",
        store=None if args.no_store else Path(args.results) / STORE,
    )
    if args.margins:
        _write_margins(config, args.batch, Path(args.results).parent, args.margins)
    print(batch_cpu_line(args.batch))
    return 0


def _write_margins(config: dict, batch: str, root: Path, out: str) -> None:
    """The margin file of ``batch`` (:func:`hare.experiments.margins.batch_margins`, tuning runs only), and its line."""
    from hare.experiments.margins import batch_margins
    from hare.io import write_json

    experiment, _, environment = batch.partition("/")
    entry = batch_margins(config, experiment, environment, root)
    write_json(out, entry)
    if not entry["policies"]:
        print(f"{batch}: no margins (not tuned in this config)")
        return
    floor = "none" if entry["resolution"] is None else f"{entry['resolution']:.4g}"
    deltas = ", ".join(
        f"{label} {'--' if p['margin'] is None else format(p['margin'], '.4g')}"
        for label, p in entry["policies"].items()
    )
    print(f"{batch}: delta against each comparator (floor {floor}): {deltas}")


def cmd_select(args: argparse.Namespace) -> int:
    from hare.experiments.selection import write_selection

    selection = write_selection(args.runs, args.out)
    tie = (
        f"; tied with {', '.join(t for t in selection['ties'] if t != selection['label'])}, "
        f"broken by {selection['tie_rule']}"
        if len(selection["ties"]) > 1
        else ""
    )
    print(f"selected {selection['label']} ({selection['criterion']}{tie})")
    return 0


def cmd_margins(args: argparse.Namespace) -> int:
    _write_margins(_load_config(args.config), args.batch, Path(args.root), args.out)
    return 0


def cmd_table(args: argparse.Namespace) -> int:
    from hare.experiments.tables.aggregate import write_table

    policies = [p for p in args.policies.split(",") if p] if args.policies else None
    write_table(
        args.kind,
        [str(p) for p in args.runs],
        args.csv,
        args.tex,
        args.caption,
        args.label,
        policies,
        args.published,
        args.text,
    )
    return 0


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
    predicted = {path: _load_config([path]) for path in args.predict}  # each read once, before any measurement
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
    """Register the workflow subcommands on ``sub``."""
    p = sub.add_parser("validate-config", help="validate config files against the schema and the policy registry")
    p.add_argument("config", nargs="+")
    p.set_defaults(func=cmd_validate_config)

    p = sub.add_parser("jobs", help="list the jobs of a config, or (--table) write the job table the workflow reads")
    p.add_argument("config", nargs="+")
    p.add_argument("--role", choices=("report", "tuning"), default=None, help="only jobs of this role")
    p.add_argument(
        "--table",
        action="store_true",
        help="the workflow's job table as JSON on standard output (hare.experiments.plan)",
    )
    p.add_argument(
        "--register", default="paper/claims.yaml", help="claims register whose inputs the table lists (with --table)"
    )
    p.add_argument(
        "--datasets",
        action="store_true",
        help="the prepared dataset files (results/data/...) the jobs read instead of the jobs, optional datasets "
        "(Covertype) left out",
    )
    p.set_defaults(func=cmd_jobs)

    p = sub.add_parser("fetch", help="download a dataset (canonical URL, then mirror), sha256-verified")
    p.add_argument("--dataset", required=True)
    p.add_argument("--dest", required=True)
    p.add_argument("--mirror", default=None, help="mirror folder (default: the vendored copy)")
    p.add_argument("--offline", action="store_true", help="skip canonical URLs, use the mirror only")
    p.add_argument("--manifest", default=None, help="write the fetched files and their sha256 here")
    p.set_defaults(func=cmd_fetch)

    p = sub.add_parser("prepare", help="turn a raw dataset into a prepared .npz")
    p.add_argument("--dataset", required=True)
    p.add_argument("--raw", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--summary", default=None, help="also write a JSON summary here")
    p.add_argument(
        "--protocol",
        default="project",
        choices=("project", "reference", "onehot", "standardised", "minmax", "onehot_standardised", "onehot_minmax"),
        help="classification preparation: project (default), reference (NeuralTS reference implementation) or one of "
        "its departures (hare.data.prepare.PREPARATIONS)",
    )
    p.set_defaults(func=cmd_prepare)

    p = sub.add_parser("run", help="run one job (all seeds batched)")
    p.add_argument("--job", required=True, help="job specification as JSON")
    p.add_argument("--out", required=True, help="result .npz (sidecar .json next to it)")
    p.add_argument("--dataset", default=None, help="prepared dataset .npz for classification environments")
    p.add_argument("--progress", choices=("auto", "on", "off"), default="auto")
    p.add_argument("--selected", default=None, help="hyperparameters chosen on tuning runs, for a tuned job")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "run-batch",
        help="run the jobs of one batch (experiment, environment: its tuning, then its reported jobs) of a config "
        "in one process",
    )
    p.add_argument("--config", nargs="+", required=True, help="config files, merged left to right")
    p.add_argument(
        "--batch",
        required=True,
        help="EXPERIMENT/ENVIRONMENT, e.g. synthetic/synthetic_linear (hare jobs --table lists them)",
    )
    p.add_argument(
        "--results",
        default="results",
        help="results folder: outputs, selections and prepared datasets are read and written under it",
    )
    p.add_argument(
        "--digest", default=None, help="the batch's digest in the job table: refuse to run if the config's jobs differ"
    )
    p.add_argument("--progress", choices=("auto", "on", "off"), default="auto")
    p.add_argument(
        "--margins",
        default=None,
        help="after the batch, write its margin file (as `hare margins`: tuning runs only) to this path",
    )
    p.add_argument(
        "--no-store",
        action="store_true",
        help="play every job: neither restore unchanged jobs from RESULTS/store nor keep the played ones there",
    )
    p.set_defaults(func=cmd_run_batch)

    p = sub.add_parser("select", help="choose hyperparameters from tuning runs (the selection lists tied points)")
    p.add_argument("runs", nargs="+")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_select)

    p = sub.add_parser(
        "margins", help="equivalence margin and per-run tuning totals of one tuned batch (tuning runs only)"
    )
    p.add_argument("--config", nargs="+", required=True)
    p.add_argument("--batch", required=True, help="EXPERIMENT/ENVIRONMENT of a tuned experiment")
    p.add_argument("--root", default=".")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_margins)

    p = sub.add_parser("table", help="run files -> a table (CSV + LaTeX); the caption gains the runs' regime sentence")
    p.add_argument(
        "runs",
        nargs="+",
        type=npz_file,
        help="report run files of one experiment or several (e.g. its cold and warm variants)",
    )
    p.add_argument(
        "--kind",
        default="regret",
        choices=("regret", "sensitivity", "scaling", "compute", "published", "replay", "reproduction"),
    )
    p.add_argument("--policies", default=None, help="comma-separated policy names or labels to keep")
    p.add_argument("--published", default=None, help="CSV of published numbers (kinds published and reproduction)")
    p.add_argument("--csv", required=True)
    p.add_argument("--tex", required=True)
    p.add_argument(
        "--text",
        default=None,
        help="kind reproduction only: also write the generated paragraph per dataset (LaTeX) here",
    )
    p.add_argument("--caption", required=True)
    p.add_argument("--label", required=True)
    p.set_defaults(func=cmd_table)

    p = sub.add_parser(
        "cost-model",
        help="the phases of every policy entry of a config (set-up, rounds, trainings, recording) measured at two run "
        "counts, and the predicted CPU time of its jobs (docs/cost_model.md)",
    )
    p.add_argument("config", nargs="+", help="the config whose policies and environments are measured")
    p.add_argument("--results", default="results", help="where the prepared datasets are")
    p.add_argument("--out", required=True, help="JSON: per-entry costs, the model and the predictions")
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
    p.add_argument("--experiments", nargs="+", default=None, help="only these experiments")
    p.add_argument(
        "--predict",
        nargs="*",
        default=[],
        help="other configs whose jobs to predict from this model (their entries this config lacks measured too)",
    )
    p.add_argument(
        "--measured",
        help="a finished build's results folder: its batches' CPU time (each batch log's last line, else its Snakemake "
        "benchmark file) beside the last prediction (the config's own without --predict), batch by batch (a table "
        "per experiment)",
    )
    p.add_argument(
        "--model",
        type=input_file,
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
        type=input_file,
        default=None,
        help="an earlier output of hare cost-model at the same --runs, --window and --budget: its entries are kept and "
        "only the others measured (an interrupted run; entries a newer version measures)",
    )
    p.set_defaults(func=cmd_cost_model)
