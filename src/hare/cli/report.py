"""Subcommands of the paper and its companions: number macros, the notation table, the claims register, the PDF,
notebooks and the README's results block."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from hare.cli.arguments import (
    config_file,
    existing_dir,
    input_file,
    json_file,
    json_object,
    name_list,
    npz_file,
    optional_dir,
    output_dir,
    output_file,
    positive_float,
    positive_int,
)


def cmd_macros(args: argparse.Namespace) -> int:
    from hare.experiments.tables.paper_macros import write_paper_macros

    write_paper_macros(args.runs, args.out)
    return 0


def cmd_notation(args: argparse.Namespace) -> int:
    from hare.report.notation import write_notation

    write_notation(args.out, markdown=args.markdown)
    return 0


def cmd_build_paper(args: argparse.Namespace) -> int:
    from hare.report.paper import build_pdf

    build_pdf(Path(args.main), Path(args.outdir), Path(args.pdf), args.max_pages, args.max_body_pages)
    return 0


def cmd_skipped_datasets(args: argparse.Namespace) -> int:
    from hare.experiments.config import load_config
    from hare.experiments.plan import availability_record
    from hare.report.paper import write_skipped

    record = availability_record(load_config([Path(p) for p in args.config]), Path(args.raw))
    write_skipped(record, Path(args.out_json), Path(args.out_tex))
    return 0


def cmd_claims(args: argparse.Namespace) -> int:
    from hare.report.register import write_register_tex
    from hare.theory.claims.documents import claims_document, format_interval, format_threshold, write_claims
    from hare.theory.claims.register import load_configs, not_produced

    configs = load_configs(args.config)
    keys = args.key or None
    if keys and (args.json or args.tex):
        raise SystemExit(
            "hare claims: --json and --tex need the whole register (the adjustment is per family); drop --key"
        )
    results = write_claims(
        args.register, args.root, args.markdown, args.json, not_produced(args.register, configs), configs, keys
    )
    if args.tex:
        scale = json.loads(Path(args.scale_reference).read_text()) if args.scale_reference else None
        write_register_tex(args.tex, claims_document(results), scale)
    counts: dict[str, int] = {}
    for r in results:
        status = r.adjusted_status or r.status
        counts[status] = counts.get(status, 0) + 1
    headline = [r for r in results if r.headline]
    print(
        f"claims: {counts.get('PASS', 0)}/{len(results)} PASS after adjustment ("
        + ", ".join(f"{n} {s}" for s, n in counts.items())
        + ")"
    )
    if headline:
        settled = sum((r.adjusted_status or r.status) in ("PASS", "FAIL", "EQUIVALENT", "VACUOUS") for r in headline)
        print(
            f"headline claims: {sum((r.adjusted_status or r.status) == 'PASS' for r in headline)}/{len(headline)} "
            "PASS, "
            f"{settled}/{len(headline)} decided"
        )
    for r in results:
        status = r.adjusted_status or r.status
        if (r.headline and status != "PASS") or keys:
            print(
                f"  {r.claim_id:5s} {status:12s} {r.key}: {format_interval(r)}, needed {format_threshold(r)}"
                + (f"; {r.note}" if r.note else "")
            )
    return 0


def cmd_notebook_source(args: argparse.Namespace) -> int:
    from hare.report.notebooks import script_to_notebook

    script_to_notebook(args.script, args.out)
    return 0


def cmd_notebook_execute(args: argparse.Namespace) -> int:
    from hare.report.notebooks import execute

    execute(args.notebook, args.out, args.parameters)
    return 0


def cmd_notebook_html(args: argparse.Namespace) -> int:
    from hare.report.notebooks import render_html

    render_html(args.notebook, args.out)
    return 0


def cmd_readme(args: argparse.Namespace) -> int:
    from hare.report.readme import fill_readme

    fill_readme(
        readme=args.readme,
        results=args.results,
        table=",".join(args.table),
        figure=args.figure,
        png=args.png,
        wall_seconds=args.wall_seconds,
        machine=args.machine,
        config=args.config,
    )
    return 0


def add_subcommands(sub: argparse._SubParsersAction) -> None:
    """Register the paper and report subcommands on ``sub``."""
    p = sub.add_parser("macros", help="number macros for the paper from run files")
    p.add_argument("runs", nargs="+", type=npz_file, help="report run files")
    p.add_argument("--out", type=output_file, required=True)
    p.set_defaults(func=cmd_macros)

    p = sub.add_parser("notation", help="the paper's notation table (symbol, config field, code identifier)")
    p.add_argument("--out", type=output_file, required=True)
    p.add_argument(
        "--markdown",
        type=output_file,
        default=None,
        help="the whole glossary (code identifiers, result keys) as Markdown",
    )
    p.set_defaults(func=cmd_notation)

    p = sub.add_parser("build-paper", help="compile the paper with latexmk, strictly")
    p.add_argument("--main", type=input_file, required=True, help="the paper's main .tex file")
    p.add_argument("--outdir", type=output_dir, required=True, help="latexmk's build folder (created if missing)")
    p.add_argument("--pdf", type=output_file, required=True)
    p.add_argument(
        "--max-pages", type=positive_int, default=None, help="fail when the PDF has more pages (paper.max_pages)"
    )
    p.add_argument(
        "--max-body-pages",
        type=positive_int,
        default=None,
        help="fail when the body (up to its label body:end) ends on a later page (paper.max_body_pages)",
    )
    p.set_defaults(func=cmd_build_paper)

    p = sub.add_parser("claims", help="evaluate the claims register")
    p.add_argument("--register", type=config_file, required=True, help="the claims register (YAML)")
    p.add_argument("--root", type=existing_dir, default=".", help="the checkout whose files the claims read")
    p.add_argument("--markdown", type=output_file, required=True)
    p.add_argument(
        "--tex",
        type=output_file,
        default=None,
        help="LaTeX macros and the claims table (left out when --key is given)",
    )
    p.add_argument(
        "--json",
        type=output_file,
        default=None,
        help="results/claims.json: every claim as data, the source of the paper's register (whole register only)",
    )
    p.add_argument(
        "--config",
        nargs="+",
        type=config_file,
        required=True,
        help="the running configuration's files, merged in order; claims on run files it does not produce are NOT RUN",
    )
    p.add_argument("--key", nargs="*", default=[], help="evaluate only these claims and print their verdicts")
    p.add_argument(
        "--scale-reference",
        type=json_file,
        default=None,
        help="another build's readings of the headline claims (paper/scale_agreement.json, hare compare-claims "
        "--json): a headline verdict that differs there is marked and both readings are printed under the table",
    )
    p.set_defaults(func=cmd_claims)

    p = sub.add_parser("skipped-datasets", help="record the optional datasets this build left out (JSON + LaTeX macro)")
    p.add_argument("--config", nargs="+", type=config_file, required=True, help="config files, merged left to right")
    p.add_argument(
        "--raw",
        type=optional_dir,
        default="results/data/raw",
        help="raw-data folder where optional datasets may already be fetched (none yet where it is missing)",
    )
    p.add_argument("--out-json", type=output_file, required=True)
    p.add_argument("--out-tex", type=output_file, required=True)
    p.set_defaults(func=cmd_skipped_datasets)

    p = sub.add_parser("notebook-source", help="jupytext percent script -> .ipynb with fixed cell ids")
    p.add_argument("script", type=input_file, help="the jupytext percent script")
    p.add_argument("--out", type=output_file, required=True)
    p.set_defaults(func=cmd_notebook_source)

    p = sub.add_parser(
        "notebook-execute", help="execute a notebook with papermill; the output has no timestamps and fixed cell ids"
    )
    p.add_argument("notebook", type=input_file, help="the notebook (.ipynb)")
    p.add_argument("--out", type=output_file, required=True)
    p.add_argument("--parameters", type=json_object, default={}, help="the parameters cell's values, as a JSON object")
    p.set_defaults(func=cmd_notebook_execute)

    p = sub.add_parser("notebook-html", help="executed notebook -> HTML")
    p.add_argument("notebook", type=input_file, help="the executed notebook (.ipynb)")
    p.add_argument("--out", type=output_file, required=True)
    p.set_defaults(func=cmd_notebook_html)

    p = sub.add_parser(
        "readme",
        help="fill the README's results block from a finished build",
        description="The README's results block, filled from a finished build (never typed by hand).",
    )
    p.add_argument("--readme", type=input_file, default="README.md", help="the README whose blocks are filled")
    p.add_argument("--results", type=existing_dir, default="results", help="the finished build's results folder")
    p.add_argument(
        "--table",
        type=name_list,
        default="classification,classification_warm,synthetic,synthetic_warm",
        help="table names, comma-separated",
    )
    p.add_argument("--figure", type=input_file, default="paper/figures/regret_curves.pdf", help="the figure (PDF)")
    p.add_argument("--png", type=output_file, default="paper/readme/regret_curves.png", help="its PNG, written")
    p.add_argument("--wall-seconds", type=positive_float, required=True)
    p.add_argument("--machine", required=True, help="the machine the build ran on, in words")
    p.add_argument("--config", type=config_file, default="config/default.yaml", help="the build's config file")
    p.set_defaults(func=cmd_readme)
