"""The code each workflow step runs, its record beside the step's outputs, and the check of records against the code
now (``hare verify``): docs/workflow.md, "Code is an input".

A step is named by a *code spec*, a small JSON object the workflow passes to ``hare --record``:

- ``{"command": "bounds"}``: a ``hare`` subcommand: its handler function (with the same module's functions it calls),
  its arguments' definitions (names, defaults, types; help texts aside) and the closure of the modules the handler
  imports (:meth:`hare.source_digest.SourceIndex.closure`);
- ``{"command": "notebook-execute", "notebook": "notebooks/x.py"}``: the same, with the closure of the notebook's
  imports of ``hare``;
- ``{"batch": "experiment/environment", "plugins": [[decorator, name], ...]}``: an experiment batch's own outputs
  (selections, margins): the round loop and the margins with the batch's policies and environments;
- ``{"package": true}``: every module (the code state the paper's appendix prints).

An experiment job's run file carries its own record in its sidecar (:func:`hare.source_digest.job_code`).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hare.source_digest import (
    SourceIndex,
    changed_modules,
    combined_digest,
    job_code,
    job_plugins,
    source_index,
    tree_state,
)

NOT_OUTPUTS = ("README.md",)
"""Files of the results folder that no step writes (tracked by git)."""

RECORDS = "code"
"""Folder of the step records, under the results folder (not in the manifest: like logs, they carry commits)."""

BATCH_MODULES = ("hare.experiments.run", "hare.experiments.margins")
"""What a batch runs besides its jobs: the selections and the margins (with the batch's plugins); the first is the
round loop (:data:`hare.experiments.run.ROUND_LOOP`, a test holds them equal)."""


@functools.lru_cache(maxsize=1)
def _subparsers() -> dict[str, argparse.ArgumentParser]:
    from hare.cli import build_parser

    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def commands() -> list[str]:
    """Every ``hare`` subcommand."""
    return sorted(_subparsers())


def _type_name(value: Any) -> Any:
    if callable(value):
        return f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', repr(value))}"
    return value


ARGUMENT_TYPES = "hare.cli.arguments"
"""The module of the command line's argument types: a command's code holds its digest (how a string becomes a value)
but not the registries its types consult to refuse a name (:meth:`hare.source_digest.SourceIndex.closure`'s leaves),
so that a policy edit does not rerun ``hare bounds``."""


def arguments_digest(command: str) -> str:
    """sha256 (16 hex) of subcommand ``command``'s arguments as parsed: option strings, destinations, defaults,
    types, choices, counts; their help texts do not count."""
    sub = _subparsers()[command]
    described = [
        [
            list(action.option_strings),
            action.dest,
            repr(action.default),
            repr(action.const),
            repr(action.nargs),
            _type_name(action.type),
            repr(sorted(map(repr, action.choices)) if action.choices else None),
            bool(action.required),
            type(action).__name__,
        ]
        for action in sub._actions
        if action.dest != "help"
    ]
    return combined_digest({"arguments": json.dumps(described, sort_keys=True)})[:16]


def command_code(command: str, index: SourceIndex | None = None) -> dict[str, str]:
    """``{module or function: digest}`` of subcommand ``command``: its handler and the helpers it calls, its
    arguments, and the closure of what they import."""
    index = index or source_index()
    if command not in _subparsers():
        raise KeyError(f"unknown hare command {command!r}; known: {', '.join(commands())}")
    func = _subparsers()[command].get_default("func")
    digest, imports = index.function_source(func.__module__, func.__name__)
    modules = index.closure(sorted(imports), leaves=(ARGUMENT_TYPES,))
    modules[f"{func.__module__}:{func.__name__}"] = digest
    modules[f"hare {command}: arguments"] = arguments_digest(command)
    return dict(sorted(modules.items()))


def notebook_imports(path: str | Path, index: SourceIndex) -> list[str]:
    """Modules of ``hare`` a notebook (a percent-format script) imports."""
    import ast

    found = set()
    for node in ast.walk(ast.parse(Path(path).read_text())):
        if not (isinstance(node, ast.ImportFrom) and node.level):  # a script's relative import names no module
            found |= index.imported(node, index.package)
    return sorted(name for name in found if name in index.files)


def code_of(spec: Mapping[str, Any], root: Path = Path("."), index: SourceIndex | None = None) -> dict[str, str]:
    """``{module: digest}`` of the code a code spec (this module's docstring) names, as the sources are now;
    notebook paths are relative to ``root``."""
    index = index or source_index()
    if spec.get("package"):
        return {name: index.module(name).digest for name in sorted(index.files)}
    if "batch" in spec:
        return index.closure(BATCH_MODULES, plugins=[tuple(p) for p in spec["plugins"]])
    if "job" in spec:
        from hare.experiments.job_spec import JobSpec

        return job_code(JobSpec.from_dict(spec["job"]), BATCH_MODULES[:1], index)
    modules = command_code(spec["command"], index)
    if spec.get("notebook"):
        modules.update(index.closure(notebook_imports(root / spec["notebook"], index)))
    return dict(sorted(modules.items()))


def record_name(outputs: list[str]) -> str:
    """The record's file name: its step's first output, folders joined by ``__``."""
    return outputs[0].replace("/", "__") + ".json"


def write_record(spec: Mapping[str, Any], outputs: list[str], results: Path = Path("results")) -> Path:
    """Write the code record of a finished step (``hare --record SPEC --outputs OUTPUTS``): its code spec, outputs, the
    modules and their digest as the sources are now, the commit and whether the tree was dirty."""
    from hare.io import write_json

    if not outputs:
        raise ValueError("--record needs the step's --outputs")
    modules = code_of(spec)
    path = results / RECORDS / record_name(list(outputs))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(
        path,
        {
            "spec": dict(spec),
            "outputs": list(outputs),
            "code": {"digest": combined_digest(modules), "modules": modules},
            "tree": tree_state(),
        },
    )
    return path


def stale_results(results: Path, index: SourceIndex | None = None) -> list[tuple[str, list[str]]]:
    """``(line, files)`` per group of results computed by code that differs from the code now: the step records
    under ``results/code`` and the run sidecars' records, grouped by the modules that changed; a file the manifest
    covers that no record names (a run file without its sidecar's record included) is a group of its own, ``no code
    record``. ``files``: the group's files as paths (run files as their ``.npz``), for ``hare verify --repair``.

    A record names its outputs relative to the checkout that built them, whose ``results`` folder ``results`` is.
    """
    from hare.experiments.job_spec import JobSpec
    from hare.experiments.manifest import result_files

    index = index or source_index()
    checkout = results.parent
    groups: dict[tuple[str, ...], list[str]] = {}
    covered: set[str] = set()  # files, as the manifest names them (relative to ``results``)
    folders: list[str] = []  # a step's output folder (a fetched dataset): every file under it
    cache: dict[str, dict[str, str]] = {}

    def relative(path: Path) -> str:
        return os.path.normpath(os.path.relpath(path, results)).replace(os.sep, "/")

    for path in sorted((results / RECORDS).glob("*.json")):
        record = json.loads(path.read_text())
        outputs = [checkout / output for output in record["outputs"]]
        for output, named in zip(outputs, record["outputs"], strict=True):
            if named.endswith("/") or output.is_dir():
                folders.append(relative(output) + "/")
            else:
                covered.add(relative(output))
        key = json.dumps(record["spec"], sort_keys=True)
        if key not in cache:
            cache[key] = code_of(record["spec"], root=checkout, index=index)
        changed = changed_modules(record["code"]["modules"], cache[key])
        if changed:
            groups.setdefault(tuple(changed), []).extend(str(output) for output in outputs)
    for sidecar in sorted(results.glob("runs/**/*.json")) + sorted(results.glob("tuning/**/*.json")):
        run = sidecar.with_suffix(".npz")
        content = json.loads(sidecar.read_text())
        if not run.is_file() or "code" not in content:
            continue
        covered.update((relative(run), relative(sidecar)))
        job = JobSpec.from_dict(content["job"])
        key = json.dumps(job_plugins(job))
        if key not in cache:
            cache[key] = job_code(job, BATCH_MODULES[:1], index)
        changed = changed_modules(content["code"]["modules"], cache[key])
        if changed:
            groups.setdefault(tuple(changed), []).append(str(run))
    unrecorded = sorted(
        relative
        for relative in set(result_files(results)) - covered
        if relative not in NOT_OUTPUTS and not relative.startswith(tuple(folders))
    )
    lines = []
    for changed, files in sorted(groups.items()):
        lines.append((f"computed by other code: {_count(files)}; changed since: {', '.join(changed)}", files))
    if unrecorded:
        files = [os.path.normpath(results / relative) for relative in unrecorded]
        lines.append((f"no code record: {_count(files)} (computed by a version that did not record its code)", files))
    return lines


def _count(files: list[str]) -> str:
    shown = ", ".join(map(str, files[:3])) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    return f"{len(files)} file(s) ({shown})"


def workflow_code(table: Mapping[str, Any]) -> dict[str, Any]:
    """The code digests the workflow's rules take as params: ``{"commands": {command: digest}, "batches": {batch:
    spec with its digest}, "package": digest}``, read by rules/common.smk from the job table."""
    index = source_index()
    batches = {}
    for batch, planned in table["batches"].items():
        spec = {"batch": batch, "plugins": [list(p) for p in planned["plugins"]]}
        batches[batch] = {"spec": spec, "digest": combined_digest(code_of(spec, index=index))}
    notebooks = {
        path.stem: combined_digest(code_of({"command": "notebook-execute", "notebook": path.as_posix()}, index=index))
        for path in sorted(Path("notebooks").glob("*.py"))
    }
    return {
        "commands": {name: combined_digest(command_code(name, index)) for name in commands()},
        "notebooks": notebooks,
        "batches": batches,
        "package": combined_digest(code_of({"package": True}, index=index)),
    }


def cmd_code_state(args: argparse.Namespace) -> int:
    from hare.io import write_text
    from hare.report.paper_macros import code_state_macros

    modules = code_of({"package": True})
    state = tree_state()
    write_text(
        args.out, code_state_macros(str(state["commit"]), state["dirty"], combined_digest(modules), len(modules))
    )
    return 0


def add_subcommands(sub: argparse._SubParsersAction) -> None:
    """``hare code-state``."""
    from hare.cli.arguments import output_file

    p = sub.add_parser(
        "code-state",
        help="write the commit, whether the tree was dirty and the digest of the package's code as LaTeX macros",
    )
    p.add_argument("--out", type=output_file, required=True, help="the .tex file of macros")
    p.set_defaults(func=cmd_code_state)
