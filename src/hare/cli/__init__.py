"""``hare`` command line: the only entry point the workflow's rules call.

Every subcommand validates its arguments before doing expensive work and reports
bad input as one line naming the thing at fault (exit status 2), not a traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
import zipfile

import yaml

from hare.allocator import keep_freed_memory
from hare.cli import bench, calibrate, code, compare, cost, report, results, studies, theory, workflow
from hare.cli.arguments import OneLineParser, code_spec, path_list

DEBUG_FLAG = "--debug"
"""Anywhere on the command line: an error shows its traceback instead of its one line."""

USER_ERRORS = (
    ValueError,
    KeyError,
    OSError,
    RuntimeError,
    EOFError,
    ArithmeticError,
    MemoryError,
    zipfile.BadZipFile,
    yaml.YAMLError,
)
"""What a bad argument, config, file or permission, or a job too large for its machine, raises: one line
``hare <command>: error: ...``, exit 2 (``--debug`` shows the traceback). OSError covers a missing file and a denied
permission; RuntimeError covers torch's (a CUDA out-of-memory error, a failed factorisation of a bad matrix);
ValueError numpy's ``LinAlgError``, a decoding error and a :class:`hare.experiments.settings.errors.ConfigError`;
ArithmeticError an overflow; MemoryError an allocation the machine cannot satisfy."""


def one_line(error: BaseException) -> str:
    """The message of an expected error on one line: a ``KeyError``'s key without quotes, a ``MemoryError`` said to
    be one, every line break and run of spaces as one space (a torch or YAML message may span lines)."""
    message = error.args[0] if isinstance(error, KeyError) and error.args else error
    text = " ".join(str(message).split())
    if isinstance(error, MemoryError):
        return f"out of memory: {text}" if text else "out of memory"
    return text or type(error).__name__


def build_parser() -> argparse.ArgumentParser:
    """The ``hare`` parser with every subcommand; each parsed namespace carries its handler as ``func``."""
    parser = OneLineParser(prog="hare", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.add_argument(
        DEBUG_FLAG,
        action="store_true",
        help="on an error, show its traceback instead of its one line (anywhere on the line)",
    )
    parser.add_argument(
        "--record",
        type=code_spec,
        default=None,
        help="JSON {spec, digest}: the code spec of this step (hare.cli.code); after the command succeeds, the record "
        "of the code its --outputs were computed with is written under results/code (the workflow's rules pass it)",
    )
    parser.add_argument("--outputs", type=path_list, default=None, help="JSON list: the step's outputs, for --record")
    sub = parser.add_subparsers(dest="command", required=True)
    for stage in (workflow, cost, results, theory, report, compare, bench, calibrate, studies, code):
        stage.add_subcommands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the subcommand ``argv`` names (default ``sys.argv[1:]``) and return its exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    keep_freed_memory()
    debug = DEBUG_FLAG in argv
    argv = [arg for arg in argv if arg != DEBUG_FLAG]
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:  # a refused argument (its one line already printed: exit 2) or --help (exit 0)
        return stop.code if isinstance(stop.code, int) else 2
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    try:
        status = args.func(args)
        if status == 0 and args.record is not None:
            from hare.cli.code import write_record

            write_record(args.record["spec"], args.outputs or [])
        return status
    except USER_ERRORS as error:
        if debug:
            raise
        print(f"hare {args.command}: error: {one_line(error)}", file=sys.stderr)
        return 2
