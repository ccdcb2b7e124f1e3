"""Subcommands of a finished build's results folder: its manifest, its verification (files against their sidecars
and the manifest, results against the code now) and the comparison of two builds."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hare.cli.arguments import existing_dir


def cmd_manifest(args: argparse.Namespace) -> int:
    from hare.experiments.manifest import write_manifest

    print(write_manifest(Path(args.results)))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from hare.cli.code import stale_results
    from hare.experiments.manifest import verify, with_sidecar

    problems = verify(Path(args.results), repair=args.repair)
    for line, files in stale_results(Path(args.results)):
        problems.append(line)
        if args.repair:
            for name in sorted({part for path in files for part in with_sidecar(path) if Path(part).is_file()}):
                if Path(name).exists():
                    Path(name).unlink()
                    problems.append(f"removed: {name} (computed by other code; snakemake rebuilds it)")
    for problem in problems:
        print(problem)
    if not problems:
        print(f"{args.results}: OK", file=sys.stderr)
    elif args.repair:
        print(
            f"{args.results}: {len(problems)} problem(s); the damaged files are removed: "
            "rerun the workflow to rebuild them",
            file=sys.stderr,
        )
    else:
        print(
            f"{args.results}: {len(problems)} problem(s); to rebuild the damaged files: "
            f"hare verify --results {args.results} --repair, "
            "then rerun the workflow",
            file=sys.stderr,
        )
    return 1 if problems else 0


def _files(paths: list[str]) -> str:
    """``N file(s) (a, b, c and M more)``."""
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    return f"{len(paths)} file(s) ({shown})"


def manifest_problems(results: Path) -> list[str]:
    """The files ``results``'s manifest lists that are missing or damaged (their sha256 differs from the manifest's),
    one line per group naming the build: what a comparison of the manifests alone cannot see."""
    from hare.experiments.manifest import MANIFEST_NAME, locate, read_manifest
    from hare.io import file_sha256

    missing, damaged = [], []
    for relative, digest in read_manifest(results / MANIFEST_NAME).items():
        path = locate(results, relative)
        if not path.is_file():
            missing.append(relative)
        elif file_sha256(path) != digest:
            damaged.append(relative)
    groups = (("missing", missing), ("damaged (sha256 differs from its manifest)", damaged))
    return [f"{results}: {kind}: {_files(paths)}" for kind, paths in groups if paths]


def cmd_compare_builds(args: argparse.Namespace) -> int:
    from hare.experiments.manifest import compare_builds
    from hare.experiments.studies.outputs import PROVENANCE_FILES

    lines = compare_builds(args.old, args.new, PROVENANCE_FILES)
    problems = manifest_problems(args.old) + manifest_problems(args.new)
    for line in lines + problems:
        print(line)
    different = [line for line in lines if not line.startswith(("sources only: ", "code identifiers only: "))]
    print(
        f"{args.old} -> {args.new}: {len(different)} difference(s) outside the timed files, "
        f"{len(lines) - len(different)} file(s) differing in their code only (a notebook's code cells, a table's code "
        f"identifiers), {len(problems)} group(s) of files missing or damaged against their build's manifest",
        file=sys.stderr,
    )
    return 1 if different or problems else 0


def add_subcommands(sub: argparse._SubParsersAction) -> None:
    """``hare manifest``, ``hare verify``, ``hare compare-builds``."""
    p = sub.add_parser(
        "manifest",
        help="write <results>/MANIFEST.sha256 (sha256 of every result file and of every file in paper/generated "
        "and paper/figures)",
    )
    p.add_argument("--results", type=existing_dir, default="results")
    p.set_defaults(func=cmd_manifest)

    p = sub.add_parser(
        "verify",
        help="check result and generated paper files against their sidecars and MANIFEST.sha256, and every "
        "result's code record against the code now (exit 1 listing every problem)",
    )
    p.add_argument("--results", type=existing_dir, default="results")
    p.add_argument(
        "--repair",
        action="store_true",
        help="delete every covered file that changed, disagrees with its sidecar or was computed by other code, so "
        "snakemake rebuilds it",
    )
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser(
        "compare-builds",
        help="compare two finished builds (their results folders) byte for byte, timed files aside, and each build's "
        "files against its own manifest (a missing or damaged file); a notebook whose outputs agree, or a table whose "
        "code identifiers alone changed, differs in its code only (exit 1 on any other difference or problem)",
    )
    p.add_argument("old", type=existing_dir, help="the first build's results folder")
    p.add_argument("new", type=existing_dir, help="the second build's results folder")
    p.set_defaults(func=cmd_compare_builds)
