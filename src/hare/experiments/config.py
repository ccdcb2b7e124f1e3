"""The config boundary's entry point: files -> one validated config (the same checks Snakemake runs before any job).

:func:`load_config` reads each file (an overlay resolved onto its base), merges them, and validates the result in the
order of :mod:`hare.experiments.settings`, each step stopping at the first problem with one line naming the file or
the key path at fault: the files, the schema, the experiments, the other sections, and, for the whole config, the
pre-flight memory check
(:func:`hare.experiments.memory.check_memory`, a check of the machine's resources, not of a value: no experiment batch
may need more memory than its device has). The devices a config asks for are checked where jobs run
(:func:`check_devices`: ``hare validate-config --here``, which ``make all`` runs first, ``hare run-batch`` and
``hare run``), not where a config is only read (the paper config, for a GPU, is planned and priced on any machine).

The reading and the checks live in :mod:`hare.experiments.settings`; this module adds the resource checks, which need
the machine and the job expansion above them, and keeps the names callers import from here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hare.experiments.memory import check_memory
from hare.experiments.settings import ConfigError, validate_config
from hare.experiments.settings.reader import (
    BASE_KEY,
    merge_overlay,
    read_one_file,
    refuse_nonfinite_numbers,
    resolve_config_file,
)
from hare.experiments.settings.schema import REPOSITORY, SCHEMA_PATH, schema_errors

__all__ = [
    "BASE_KEY",
    "REPOSITORY",
    "SCHEMA_PATH",
    "ConfigError",
    "check_config",
    "load_config",
    "merge_overlay",
    "read_one_file",
    "refuse_nonfinite_numbers",
    "resolve_config_file",
    "schema_errors",
]


def check_config(
    config: dict[str, Any], schema_path: Path = SCHEMA_PATH, scope: str = "all", memory: bool = False
) -> dict[str, Any]:
    """Validate ``config``: finite numbers, the schema, then the sections of ``scope``
    (:func:`hare.experiments.settings.validate_config`); with ``memory``, also the pre-flight memory estimate of every
    batch (:func:`hare.experiments.memory.check_memory`). Returns ``config``."""
    refuse_nonfinite_numbers(config)
    errors = schema_errors(config, schema_path)
    if errors:
        raise ConfigError("invalid config: " + "; ".join(errors[:5]))
    validate_config(config, scope)
    if memory:
        check_memory(config)
    return config


def check_devices(config: dict[str, Any]) -> None:
    """The devices a config asks for exist on this machine: ``cuda`` (top level, or a study's ``device``) needs a CUDA
    device (``auto`` takes one when there is one); a :class:`ConfigError` in one line naming the key otherwise, before
    any batch starts (each would fail on its own). Called where jobs run, not by :func:`check_config`."""
    import torch

    wanted = {"device": config.get("device")}
    convergence = (config.get("theory") or {}).get("convergence") or {}
    wanted["theory.convergence.device"] = convergence.get("device")
    for key, device in wanted.items():
        if isinstance(device, str) and device.startswith("cuda") and not torch.cuda.is_available():
            raise ConfigError(
                f"{key}: {device!r}, but torch finds no CUDA device on this machine (auto takes one when there is one)"
            )


def load_config(
    paths: list[Path], schema_path: Path = SCHEMA_PATH, scope: str = "all", memory: bool | None = None
) -> dict[str, Any]:
    """Resolve each YAML file (an overlay onto its base, :func:`resolve_config_file`), merge them left to right
    (top-level keys of later files win) and validate the result (``scope``:
    :func:`hare.experiments.settings.validate_config`).
    ``memory`` (default: with ``scope="all"``, which is what ``hare validate-config`` and ``hare jobs`` read) adds the
    pre-flight memory check of :func:`check_config`."""
    config: dict[str, Any] = {}
    for path in paths:
        config.update(resolve_config_file(path))
    return check_config(config, schema_path, scope, memory=scope == "all" if memory is None else memory)
