"""Subcommands of the experiment workflow: configs and jobs, datasets, runs, selection and tables (the cost model of
its jobs: :mod:`hare.cli.cost`).

Length: one module because its subcommands share the config loading and the argument checks that run before any
work; a split by subcommand waits for the one config boundary that will own those checks.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from hare.cli.arguments import (
    batch_name,
    config_file,
    dataset_name,
    existing_dir,
    input_file,
    json_file,
    json_object,
    name_list,
    npz_file,
    output_dir,
    output_file,
    sha256_hex,
)


def _load_config(paths: list[str], scope: str = "all") -> dict:
    """Merge YAML configs left to right (later files override top-level keys) and validate them (``scope``:
    :func:`hare.experiments.settings.validate_config`)."""
    from hare.experiments.config import load_config

    return load_config([Path(p) for p in paths], scope=scope)


def cmd_validate_config(args: argparse.Namespace) -> int:
    config = _load_config(args.config)
    from hare.experiments.grid import expand_jobs
    from hare.experiments.settings.experiments import full_pass_notes

    if args.here:
        from hare.experiments.config import check_devices

        check_devices(config)
    jobs = expand_jobs(config)
    for note in full_pass_notes(config):
        print(f"note: {note}")
    print(
        f"config OK: {sum(j.role == 'report' for j in jobs)} report jobs, "
        f"{sum(j.role == 'tuning' for j in jobs)} tuning jobs"
    )
    if Path("paper/claims.yaml").is_file():  # the register's claims no outcome at this config's run counts can decide
        from hare.theory.claims.decidable import undecidable_report

        print("\n".join(undecidable_report(Path("paper/claims.yaml"), config)))
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
            and (path := prepared_dataset(job.spec.environment))
            and not get_dataset(job.spec.environment.dataset).optional
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
    from hare.experiments.job_boundary import parse_job
    from hare.experiments.run import run_job

    run_job(
        parse_job(args.job),
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
    from hare.experiments.config import check_devices

    check_devices(config)
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

    if args.text is not None and args.kind != "reproduction":
        raise ValueError(f"--text: only a reproduction table writes a text, not a {args.kind} table")
    write_table(
        args.kind,
        [str(p) for p in args.runs],
        args.csv,
        args.tex,
        args.caption,
        args.label,
        args.policies or None,
        args.published,
        args.text,
    )
    return 0


def add_subcommands(sub: argparse._SubParsersAction) -> None:
    """Register the workflow subcommands on ``sub``."""
    p = sub.add_parser("validate-config", help="validate config files against the schema and the policy registry")
    p.add_argument("config", nargs="+", type=config_file)
    p.add_argument(
        "--here",
        action="store_true",
        help="also check that this machine has the devices the config asks for (make all runs it with this flag)",
    )
    p.set_defaults(func=cmd_validate_config)

    p = sub.add_parser("jobs", help="list the jobs of a config, or (--table) write the job table the workflow reads")
    p.add_argument("config", nargs="+", type=config_file)
    p.add_argument("--role", choices=("report", "tuning"), default=None, help="only jobs of this role")
    p.add_argument(
        "--table",
        action="store_true",
        help="the workflow's job table as JSON on standard output (hare.experiments.plan)",
    )
    p.add_argument(
        "--register",
        type=config_file,
        default=Path("paper/claims.yaml"),
        help="claims register whose inputs the table lists (with --table; checked when given)",
    )
    p.add_argument(
        "--datasets",
        action="store_true",
        help="the prepared dataset files (results/data/...) the jobs read instead of the jobs, optional datasets "
        "(Covertype) left out",
    )
    p.set_defaults(func=cmd_jobs)

    p = sub.add_parser("fetch", help="download a dataset (canonical URL, then mirror), sha256-verified")
    p.add_argument("--dataset", type=dataset_name, required=True)
    p.add_argument("--dest", type=output_dir, required=True, help="folder of the files (created if missing)")
    p.add_argument("--mirror", type=existing_dir, default=None, help="mirror folder (default: the vendored copy)")
    p.add_argument("--offline", action="store_true", help="skip canonical URLs, use the mirror only")
    p.add_argument("--manifest", type=output_file, default=None, help="write the fetched files and their sha256 here")
    p.set_defaults(func=cmd_fetch)

    p = sub.add_parser("prepare", help="turn a raw dataset into a prepared .npz")
    p.add_argument("--dataset", type=dataset_name, required=True)
    p.add_argument("--raw", type=existing_dir, required=True, help="the fetched dataset's folder")
    p.add_argument("--out", type=output_file, required=True, help="the prepared .npz")
    p.add_argument("--summary", type=output_file, default=None, help="also write a JSON summary here")
    p.add_argument(
        "--protocol",
        default="project",
        choices=("project", "reference", "onehot", "standardised", "minmax", "onehot_standardised", "onehot_minmax"),
        help="classification preparation: project (default), reference (NeuralTS reference implementation) or one of "
        "its departures (hare.data.prepare.PREPARATIONS)",
    )
    p.set_defaults(func=cmd_prepare)

    p = sub.add_parser("run", help="run one job (all seeds batched)")
    p.add_argument("--job", type=json_object, required=True, help="job specification as JSON")
    p.add_argument("--out", type=output_file, required=True, help="result .npz (sidecar .json next to it)")
    p.add_argument(
        "--dataset", type=npz_file, default=None, help="prepared dataset .npz for classification environments"
    )
    p.add_argument("--progress", choices=("auto", "on", "off"), default="auto")
    p.add_argument(
        "--selected", type=json_file, default=None, help="hyperparameters chosen on tuning runs, for a tuned job"
    )
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "run-batch",
        help="run the jobs of one batch (experiment, environment: its tuning, then its reported jobs) of a config "
        "in one process",
    )
    p.add_argument("--config", nargs="+", type=config_file, required=True, help="config files, merged left to right")
    p.add_argument(
        "--batch",
        type=batch_name,
        required=True,
        help="EXPERIMENT/ENVIRONMENT, e.g. synthetic/synthetic_linear (hare jobs --table lists them)",
    )
    p.add_argument(
        "--results",
        type=output_dir,
        default="results",
        help="results folder (created if missing): outputs, selections and prepared datasets are read and written "
        "under it",
    )
    p.add_argument(
        "--digest",
        type=sha256_hex,
        default=None,
        help="the batch's digest in the job table: refuse to run if the config's jobs differ",
    )
    p.add_argument("--progress", choices=("auto", "on", "off"), default="auto")
    p.add_argument(
        "--margins",
        type=output_file,
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
    p.add_argument("runs", nargs="+", type=npz_file, help="tuning run files")
    p.add_argument("--out", type=output_file, required=True, help="the selection (JSON)")
    p.set_defaults(func=cmd_select)

    p = sub.add_parser(
        "margins", help="equivalence margin and per-run tuning totals of one tuned batch (tuning runs only)"
    )
    p.add_argument("--config", nargs="+", type=config_file, required=True)
    p.add_argument("--batch", type=batch_name, required=True, help="EXPERIMENT/ENVIRONMENT of a tuned experiment")
    p.add_argument("--root", type=existing_dir, default=".", help="the checkout whose results/ holds the runs")
    p.add_argument("--out", type=output_file, required=True)
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
    p.add_argument(
        "--policies",
        type=name_list,
        default=None,
        help="comma-separated policies or policy labels of the config to keep (labels are the config's names, so "
        "these are checked as names here and against the runs by the table)",
    )
    p.add_argument(
        "--published",
        type=input_file,
        default=None,
        help="CSV of published numbers (kinds published and reproduction)",
    )
    p.add_argument("--csv", type=output_file, required=True)
    p.add_argument("--tex", type=output_file, required=True)
    p.add_argument(
        "--text",
        type=output_file,
        default=None,
        help="kind reproduction only: also write the generated paragraph per dataset (LaTeX) here",
    )
    p.add_argument("--caption", required=True)
    p.add_argument("--label", required=True)
    p.set_defaults(func=cmd_table)
