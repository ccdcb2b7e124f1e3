"""``hare compare-claims``: two builds' claims registers side by side (:mod:`hare.report.claims_comparison`)."""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
from pathlib import Path

from hare.cli.arguments import existing_dir, output_file


def build_provenance(results: Path, label: str) -> str:
    """One line naming a build: its label, folder name, the commit its run files record and the calibration figure
    its workflow measured (``logs/calibration.json``), where the folder holds them."""
    commits = set()
    for sidecar in sorted(results.glob("runs/*/*/*.json"))[:50]:
        commit = json.loads(sidecar.read_text()).get("git_commit")
        if commit:
            commits.add(str(commit)[:7])
    calibration = results / "logs" / "calibration.json"
    figure = json.loads(calibration.read_text()).get("score") if calibration.is_file() else None
    parts = [f"{label}: commit {', '.join(sorted(commits)) or 'unknown'}"]
    if figure is not None:
        parts.append(f"calibration figure {figure:.2f}")
    return ", ".join(parts)


def cmd_compare_claims(args: argparse.Namespace) -> int:
    from hare.io import write_text
    from hare.report.claims_comparison import agreement_page, compare_registers, load_register, summary_line

    old_results, new_results = Path(args.old), Path(args.new)
    pairs = compare_registers(load_register(old_results), load_register(new_results), headline_only=not args.all)
    print(summary_line(pairs, args.old_label, args.new_label))
    for pair in pairs:
        if pair.outcome == "differ":
            print(f"  differs: {pair.claim_id} {pair.key}")
    if args.json is not None:
        from hare.io import write_json
        from hare.report.claims_comparison import scale_reference

        write_json(args.json, scale_reference(pairs, args.new_label, args.description or args.new_label))
    if args.out is not None:
        words = [args.old, args.new, "--old-label", args.old_label, "--new-label", args.new_label, "--out", args.out]
        words += ["--all"] if args.all else []
        words += ["--json", args.json, "--description", args.description] if args.json else []
        command = "hare compare-claims " + " ".join(shlex.quote(str(word)) for word in words)
        provenance = [
            f"Command: `{command}`",
            f"Written: {datetime.datetime.now(datetime.UTC).strftime('%Y-%m-%d %H:%M UTC')}",
            build_provenance(old_results, args.old_label),
            build_provenance(new_results, args.new_label),
            *args.note,
        ]
        write_text(args.out, agreement_page(pairs, args.old_label, args.new_label, provenance) + "\n")
    return 0


def add_subcommands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare-claims",
        help="two finished builds' claims registers side by side: which verdicts agree, which differ",
        description="Pair two builds' claims (results/claims.json) by key; print how many both decided and how many "
        "agree, and (--out) write the Markdown page with each differing claim's two intervals.",
    )
    p.add_argument("old", type=existing_dir, help="results folder of the first build (e.g. the default build)")
    p.add_argument("new", type=existing_dir, help="results folder of the second build (e.g. paper-core)")
    p.add_argument("--old-label", default="default build", help="the first build's name on the page")
    p.add_argument("--new-label", default="paper-core", help="the second build's name on the page")
    p.add_argument("--all", action="store_true", help="every claim, not only the headline claims")
    p.add_argument(
        "--out", type=output_file, default=None, help="write the Markdown page here (e.g. docs/scale_agreement.md)"
    )
    p.add_argument(
        "--json",
        type=output_file,
        default=None,
        help="write the second build's readings of the compared claims here (paper/scale_agreement.json, which "
        "hare claims --scale-reference sets beside the first build's verdicts)",
    )
    p.add_argument("--description", default=None, help="the second build in words, for the paper (with --json)")
    p.add_argument("--note", action="append", default=[], help="a line of provenance added to the page (repeatable)")
    p.set_defaults(func=cmd_compare_claims)
