"""The command line's argument types: every number, input file and output path is checked when it is parsed, before
any work, and refused in one line ``hare <command>: error: argument --x: ...`` (exit status 2).

A count is a positive integer (:func:`positive_int`), a measure a finite number (:func:`finite_float`,
:func:`positive_float`, :func:`probability`), an input an existing file (:func:`input_file`, :func:`npz_file`), and an
output's folder must already exist and be writable (:func:`output_file`): a command never creates folders outside the
project unless it is asked to (the workflow's rules write under ``results/``, whose folders Snakemake makes).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import NoReturn

ZIP_MAGIC = b"PK\x03\x04"
"""The first bytes of a zip archive, which an ``.npz`` file is (an empty archive starts ``PK\\x05\\x06``)."""


class OneLineParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose error is one line on stderr, ``<prog>: error: <message>``, exit status 2 (the
    usage stays on ``--help``), like every other refusal of the command line."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {' '.join(message.split())}", file=sys.stderr)
        raise SystemExit(2)


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer (got {text!r})") from None


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number (got {text!r})") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number (got {text!r})")
    return value


def positive_int(text: str) -> int:
    """A count: an integer >= 1."""
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1 (got {text!r})")
    return value


def nonnegative_int(text: str) -> int:
    """An integer >= 0."""
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0 (got {text!r})")
    return value


def finite_float(text: str) -> float:
    """A finite number (not NaN, not an infinity)."""
    return _number(text)


def positive_float(text: str) -> float:
    """A finite number > 0 (a time budget, seconds)."""
    value = _number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0 (got {text!r})")
    return value


def probability(text: str) -> float:
    """A number in the open interval (0, 1) (a confidence level's delta)."""
    value = _number(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1) (got {text!r})")
    return value


def input_file(text: str) -> Path:
    """An existing file."""
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"{text}: {'is not a file' if path.exists() else 'does not exist'}")
    return path


def npz_file(text: str) -> Path:
    """An existing ``.npz`` file (a zip archive): anything else is named as what it is, not as a missing sidecar."""
    path = input_file(text)
    with path.open("rb") as handle:
        head = handle.read(4)
    if head[:2] != ZIP_MAGIC[:2]:
        raise argparse.ArgumentTypeError(f"{text}: not an .npz file (not a zip archive; starts with {head!r})")
    return path


def output_file(text: str) -> Path:
    """A path to write: its folder exists and is writable (the command creates no folder)."""
    path = Path(text)
    parent = path.parent
    if not parent.is_dir():
        raise argparse.ArgumentTypeError(
            f"{text}: folder {parent} does not exist (create it first; a command creates no folder)"
        )
    if not os.access(parent, os.W_OK):
        raise argparse.ArgumentTypeError(f"{text}: folder {parent} is not writable")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: is a folder, not a file")
    return path


def _json(text: str) -> object:
    import json

    try:
        return json.loads(text)
    except ValueError:
        return None


def code_spec(text: str) -> dict:
    """``hare --record``'s value: a JSON object with a code spec (:mod:`hare.cli.code`)."""
    value = _json(text)
    if not isinstance(value, dict) or not isinstance(value.get("spec"), dict):
        raise argparse.ArgumentTypeError("must be a JSON object with a code spec")
    return value


def path_list(text: str) -> list:
    """``hare --outputs``'s value: a non-empty JSON list of paths."""
    value = _json(text)
    if not isinstance(value, list) or not value or not all(isinstance(path, str) for path in value):
        raise argparse.ArgumentTypeError("must be a non-empty JSON list of paths")
    return value
