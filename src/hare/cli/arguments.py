"""The command line's argument types: every number, input file and output path is checked when it is parsed, before
any work, and refused in one line ``hare <command>: error: argument --x: ...`` (exit status 2).

A count is a positive integer (:func:`positive_int`), a measure a finite number (:func:`finite_float`,
:func:`positive_float`, :func:`probability`), an input an existing file or folder of its kind (:func:`input_file`,
:func:`config_file`, :func:`json_file`, :func:`npz_file`, :func:`existing_dir`), a name one that a config or a
registry may hold (:func:`section_name`, :func:`policy_name`, :func:`dataset_name`, :func:`device`), and an output's
folder must already exist and be writable (:func:`output_file`; :func:`output_dir` for an output folder, whose parent
must): a command never creates folders outside the project unless it is asked to (the workflow's rules write under
``results/``, whose folders Snakemake makes). Free text (captions, labels, notes) is the only unchecked kind
(:data:`FREE_TEXT`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import zipfile
from pathlib import Path
from typing import NoReturn

ZIP_MAGIC = b"PK\x03\x04"
"""The first bytes of a zip archive, which an ``.npz`` file is (an empty archive starts ``PK\\x05\\x06``)."""

FREE_TEXT = frozenset({"caption", "label", "description", "note", "old_label", "new_label", "key", "machine"})
"""Destinations of the arguments that take free text, left unchecked: a table's caption and LaTeX label, a build's
label and description, a note, a claim's key (the register names the unknown one), the machine a build ran on. Every
other argument has a type of this module or a fixed set of choices (``tests/test_cli_arguments.py``)."""

YAML_SUFFIXES = (".yaml", ".yml")
"""How the name of a YAML file (a config, the claims register) ends."""

NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,63}")
"""A name of a config section (config/schema.yaml's ``name``): at most 64 of a-z, 0-9 and _, a letter first."""

DEVICE_PATTERN = re.compile(r"cpu|cuda(:[0-9]+)?")
"""A torch device a command runs on: ``cpu``, ``cuda`` or ``cuda:N``."""


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
    """An existing ``.npz`` file (a zip archive of ``.npy`` arrays): anything else is named as what it is, not as a
    missing sidecar."""
    path = input_file(text)
    with path.open("rb") as handle:
        head = handle.read(4)
    if head[:2] != ZIP_MAGIC[:2]:
        raise argparse.ArgumentTypeError(f"{text}: not an .npz file (not a zip archive; starts with {head!r})")
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.namelist()
    except (zipfile.BadZipFile, OSError) as error:
        raise argparse.ArgumentTypeError(f"{text}: not an .npz file (a damaged zip archive: {error})") from None
    other = [member for member in members if not member.endswith(".npy")]
    if other:
        raise argparse.ArgumentTypeError(f"{text}: not an .npz file (a zip archive holding {other[0]}, not an array)")
    return path


def config_file(text: str) -> str:
    """An existing YAML file (a config, the claims register), its name ending ``.yaml`` or ``.yml``; as given."""
    path = input_file(text)
    if path.suffix not in YAML_SUFFIXES:
        raise argparse.ArgumentTypeError(f"{text}: not a YAML file (its name does not end .yaml or .yml)")
    return text


def json_file(text: str) -> Path:
    """An existing file that holds JSON (a selection, an earlier cost model, another build's readings)."""
    path = input_file(text)
    try:
        json.loads(path.read_text(encoding="utf-8"))
    except ValueError as error:  # a JSONDecodeError or a UnicodeDecodeError
        raise argparse.ArgumentTypeError(f"{text}: not JSON ({error})") from None
    return path


def existing_dir(text: str) -> Path:
    """An existing folder (a results folder, a fetched dataset's, a build's)."""
    path = Path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: {'is not a folder' if path.exists() else 'does not exist'}")
    return path


def optional_dir(text: str) -> Path:
    """A folder that may not exist yet (then it holds nothing), never a file."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: is not a folder")
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


def output_dir(text: str) -> Path:
    """A folder to write into, which the command creates if it is missing: not a file, and its parent exists and is
    writable (the command creates that one folder, no more)."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: is a file, not a folder")
    where = path if path.is_dir() else path.parent
    if not where.is_dir():
        raise argparse.ArgumentTypeError(
            f"{text}: folder {where} does not exist (create it first; a command creates its output folder only)"
        )
    if not os.access(where, os.W_OK):
        raise argparse.ArgumentTypeError(f"{text}: folder {where} is not writable")
    return path


def section_name(text: str) -> str:
    """The name of an experiment, environment, policy entry or table of a config: at most 64 of a-z, 0-9 and _, a
    letter first (config/schema.yaml's ``name``)."""
    if not NAME_PATTERN.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{text!r}: not a name (at most 64 of a-z, 0-9 and _, a letter first)")
    return text


def name_list(text: str) -> list[str]:
    """Comma-separated names (:func:`section_name`), as a list; an empty text is an empty list (no selection)."""
    return [section_name(part) for part in text.split(",")] if text else []


def batch_name(text: str) -> str:
    """A batch of a config, ``EXPERIMENT/ENVIRONMENT``: two names (:func:`section_name`)."""
    experiment, separator, environment = text.partition("/")
    if not separator:
        raise argparse.ArgumentTypeError(f"{text!r}: not EXPERIMENT/ENVIRONMENT")
    section_name(experiment)
    section_name(environment)
    return text


def sha256_hex(text: str) -> str:
    """A sha256 digest: 64 lowercase hexadecimal digits."""
    if not re.fullmatch(r"[0-9a-f]{64}", text):
        raise argparse.ArgumentTypeError(f"{text!r}: not a sha256 digest (64 lowercase hexadecimal digits)")
    return text


def dataset_name(text: str) -> str:
    """A dataset of the registry (:data:`hare.data.registry.DATASETS`)."""
    from hare.data.registry import DATASETS

    if text not in DATASETS:
        raise argparse.ArgumentTypeError(f"{text}: no such dataset; choices: {', '.join(sorted(DATASETS))}")
    return text


def policy_name(text: str) -> str:
    """A policy of the registry (:func:`hare.policies.base.policy_names`)."""
    from hare.policies.base import policy_names

    known = policy_names()
    if text not in known:
        raise argparse.ArgumentTypeError(f"{text}: no such policy; choices: {', '.join(known)}")
    return text


def baseline_policy(text: str) -> str:
    """A neural or kernel bandit with a dense reference (:mod:`hare.experiments.studies.bench_baselines`)."""
    from hare.experiments.studies.bench_baselines import KERNEL, NEURAL

    if text not in NEURAL + KERNEL:
        raise argparse.ArgumentTypeError(
            f"{text}: no dense reference for this policy; choices: {', '.join(NEURAL + KERNEL)}"
        )
    return text


def device(text: str) -> str:
    """A torch device: ``cpu``, ``cuda`` or ``cuda:N``, a CUDA device only where this machine has it."""
    if not DEVICE_PATTERN.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{text}: not a device; choices: cpu, cuda, cuda:N")
    if text != "cpu":
        import torch

        visible = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if int(text.partition(":")[2] or 0) >= visible:
            raise argparse.ArgumentTypeError(f"{text}: no such CUDA device on this machine ({visible} visible)")
    return text


def named_npz(text: str) -> tuple[str, Path]:
    """``name=path.npz``: a dataset's name (:func:`section_name`) and its prepared file (:func:`npz_file`), as a
    pair."""
    label, separator, path = text.partition("=")
    if not separator or not label or not path:
        raise argparse.ArgumentTypeError(f"expects name=path.npz, got {text!r}")
    section_name(label)
    try:
        return label, npz_file(path)
    except argparse.ArgumentTypeError as error:
        raise argparse.ArgumentTypeError(f"{label}={error}") from None


def policy_param(text: str) -> tuple[str, str, int | float]:
    """``policy.key=value``: a registered policy (:func:`policy_name`), one of its hyperparameters and a finite number
    (an integer stays one), as ``(policy, key, value)``."""
    from dataclasses import fields

    from hare.policies.base import policy_class

    target, separator, value = text.partition("=")
    policy, dot, key = target.partition(".")
    if not separator or not dot or not policy or not key:
        raise argparse.ArgumentTypeError(f"expects policy.key=value, got {text!r}")
    known = sorted(field.name for field in fields(policy_class(policy_name(policy)).config_class))
    if key not in known:
        raise argparse.ArgumentTypeError(f"{target}: {policy} has no hyperparameter {key}; known: {', '.join(known)}")
    if re.fullmatch(r"[+-]?[0-9]+", value):
        return policy, key, int(value)
    try:
        return policy, key, _number(value)
    except argparse.ArgumentTypeError as error:
        raise argparse.ArgumentTypeError(f"{target}: {error}") from None


def json_object(text: str) -> dict:
    """A JSON object given as text (a job, a config section, a notebook's parameters)."""
    try:
        value = json.loads(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not JSON: {error}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"not a JSON object (got {text[:60]!r})")
    return value


def _json(text: str) -> object:
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
