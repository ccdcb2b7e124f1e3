"""``results/MANIFEST.sha256``: the sha256 of every result file and every generated paper file, and its verification.

The manifest lists one ``<sha256>  <path>`` line per covered file, paths relative to the results directory with
``/`` separators, sorted by path: the format of ``sha256sum``, so ``cd results && sha256sum -c MANIFEST.sha256``
also checks it.

Covered: every regular file under ``results/`` (runs and their sidecars, raw and
prepared data, tables, checks, notebooks and their HTML, claims, the PDF), except

* ``logs/`` (tool output, not results),
* ``latex/`` (latexmk's build folder: aux files, logs),
* ``.snakemake/`` (workflow bookkeeping, if a run used ``results`` as its directory),
* ``code/`` (each step's record of the code it ran, with the commit: checked by ``hare verify`` against the code
  now, :func:`hare.cli.code.stale_results`) and ``store/`` (finished jobs by key, a cache:
  :mod:`hare.experiments.job_store`),
* ``report.html`` (``snakemake --report``, written from the finished results after the manifest),
* ``MANIFEST.sha256`` itself;

and every regular file under ``paper/generated/`` and ``paper/figures/`` (:data:`PAPER_DIRS`), the generated
tables, macros and figures the PDF reads, listed as ``../paper/generated/<name>`` and ``../paper/figures/<name>``.

Which paper files are listed: the two folders as a whole. ``.gitignore`` ignores both folders entirely and no file
in them is tracked, because only workflow rules write there (the table, theory, benchmark, claims and macros rules,
and the notebooks' figures and macros); every file in them is a workflow output (a stale one from an earlier
config included, as under ``results/``). The hand-written sources of the PDF (``paper/*.tex``,
``paper/sections/``, ``refs.bib``, ``claims.yaml``, ``published/``, ``readme/``) are tracked by git, which is
what checks them, and are not listed. A folder that mixed hand-written and generated files would break this rule;
``tests/experiments/test_manifest.py`` checks that git tracks nothing in either folder and ignores both.

Why ``../paper/...`` entries in the one manifest and not a second manifest in ``paper/``: one file, one
``hare verify``, one ``sha256sum -c`` from inside ``results/`` cover everything the PDF is built from, and the
workflow's rule ``manifest`` already takes every generated paper file as an input (``declared_outputs`` in
``rules/common.smk``), so it is rewritten whenever one of them is rebuilt. ``..`` is read lexically (the folder
beside the results directory as written, as the workflow sees it); ``sha256sum`` follows ``..`` physically, so the
two agree unless ``results`` is a symbolic link to another place.

The manifest records what one run produced, so :func:`verify` detects any later
change (a flipped byte, a deleted or an added file), and ``verify(repair=True)`` deletes a changed file, in
``results/`` or in ``paper/``, so that the next ``snakemake`` rebuilds it. Which files a *second* run
reproduces byte for byte is a different question, answered by the timed files: files that carry wall times, memory
peaks, commits or execution timestamps by design; every other file is bit-reproducible on the same device and
software versions. Each producer declares its timed files where it is defined; their union
(:data:`hare.experiments.studies.outputs.PROVENANCE_FILES`) sits above this module, which is handed the patterns
(``timed``) by its callers and never imports the producers.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hare.io import file_sha256, sidecar_mismatch, write_text

MANIFEST_NAME = "MANIFEST.sha256"
EXCLUDED_DIRS = ("logs", "latex", ".snakemake", "code", "store")
EXCLUDED_FILES = (MANIFEST_NAME, "report.html")
PAPER_DIRS = ("../paper/generated", "../paper/figures")
"""Folders of generated paper files, relative to the results directory: every file in them is listed."""


def _excluded(relative: str) -> bool:
    return relative in EXCLUDED_FILES or relative.split("/", 1)[0] in EXCLUDED_DIRS


def locate(results_dir: str | os.PathLike, relative: str) -> Path:
    """The file a manifest entry names: ``relative`` joined to ``results_dir``, ``..`` read lexically (the folder
    beside ``results_dir`` as written, even where ``results_dir`` is a symbolic link)."""
    return Path(os.path.normpath(os.path.join(os.path.abspath(results_dir), relative)))


def _regular_files(folder: Path) -> list[str]:
    """Regular files (no symbolic links) under ``folder``, relative to it with ``/`` separators; none if it is
    absent."""
    return [
        path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file() and not path.is_symlink()
    ]


def result_files(results_dir: str | os.PathLike) -> list[str]:
    """Paths (relative to ``results_dir``, ``/``-separated, sorted) of the files the manifest covers: the results
    but the excluded ones, and every file of :data:`PAPER_DIRS` as ``../paper/<folder>/<name>``."""
    files = [relative for relative in _regular_files(Path(results_dir)) if not _excluded(relative)]
    for folder in PAPER_DIRS:
        files.extend(f"{folder}/{relative}" for relative in _regular_files(locate(results_dir, folder)))
    return sorted(files)


def require_results_dir(results_dir: str | os.PathLike) -> Path:
    """``results_dir`` as a path; an error in one line if it is not an existing directory."""
    root = Path(results_dir)
    if not root.is_dir():
        raise FileNotFoundError(
            f"results directory {root} does not exist"
            if not root.exists()
            else f"results directory {root} is not a directory"
        )
    return root


def compute_manifest(results_dir: str | os.PathLike) -> dict[str, str]:
    """``{relative path: sha256}`` of every covered file."""
    return {relative: file_sha256(locate(results_dir, relative)) for relative in result_files(results_dir)}


def write_manifest(results_dir: str | os.PathLike) -> Path:
    """Write ``<results_dir>/MANIFEST.sha256`` atomically; return its path."""
    root = require_results_dir(results_dir)
    entries = compute_manifest(root)
    disagreeing = [
        f"{relative} ({problem})"
        for relative, digest in entries.items()
        if relative.endswith(".npz") and (problem := sidecar_mismatch(root / relative, digest))
    ]
    if disagreeing:
        raise ValueError(
            f"{root}: refusing to list result files that disagree with their sidecars: {'; '.join(disagreeing)}; "
            f"run `hare verify --results {root} --repair`, then snakemake again"
        )
    lines = [f"{digest}  {relative}\n" for relative, digest in entries.items()]
    path = root / MANIFEST_NAME
    write_text(path, "".join(lines))
    return path


def read_manifest(path: str | os.PathLike) -> dict[str, str]:
    """Parse a manifest into ``{relative path: sha256}``; a malformed line is an error naming its number."""
    path = Path(path)
    entries = {}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        digest, sep, relative = line.partition("  ")
        if not sep or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest) or not relative:
            raise ValueError(f"{path}: line {number}: expected '<sha256>  <path>', got {line!r}")
        entries[relative] = digest
    return entries


def verify(results_dir: str | os.PathLike, repair: bool = False) -> list[str]:
    """Problems of ``results_dir``, one line each; empty when everything matches.

    Every ``.npz`` is checked against the sha256 its sidecar recorded when it was written
    (:func:`hare.io.sidecar_mismatch`), whether or not a manifest exists; against the manifest,
    reports files listed but missing, files whose sha256 changed (a single flipped byte included)
    and covered files it does not list, generated paper files (``../paper/...``) included. ``repair``: delete
    every changed or disagreeing file (an ``.npz`` with its sidecar), so that the next ``snakemake`` rebuilds
    exactly them and what depends on them; each deletion is reported. A ``results_dir`` that is not a directory is
    an error (:func:`require_results_dir`), not a list of problems.
    """
    root = require_results_dir(results_dir)
    digests = compute_manifest(root)
    problems, bad = [], set()
    for relative in sorted(r for r in digests if r.endswith(".npz")):
        problem = sidecar_mismatch(root / relative, digests[relative])
        if problem:
            problems.append(f"disagrees with its sidecar: {relative} ({problem})")
            bad |= with_sidecar(relative)
    manifest = root / MANIFEST_NAME
    if not manifest.is_file():
        problems.append(f"{manifest}: manifest missing (run `hare manifest --results {root}`)")
    else:
        expected = read_manifest(manifest)
        for relative, digest in expected.items():
            if relative not in digests:
                problems.append(f"missing: {relative}")
            elif digests[relative] != digest:
                problems.append(f"changed: {relative} (sha256 {digests[relative]}, manifest {digest})")
                bad |= with_sidecar(relative)
        problems.extend(f"extra: {relative} (not in the manifest)" for relative in sorted(set(digests) - set(expected)))
    if repair:
        for relative in sorted(bad):
            if locate(root, relative).exists():
                locate(root, relative).unlink()
                problems.append(f"removed: {relative} (snakemake rebuilds it)")
    return problems


def with_sidecar(relative: str) -> set[str]:
    """``relative`` and, for a result ``.npz``, its sidecar ``.json``: what a repair deletes together."""
    return {relative, relative[: -len(".npz")] + ".json"} if relative.endswith(".npz") else {relative}


def is_provenance_file(relative: str, timed: Iterable[str]) -> bool:
    """Whether ``relative`` (a manifest entry: a path relative to ``results/``) matches one of the patterns ``timed``
    (globs relative to ``results/``, ``*`` crossing folders: the timed files,
    :data:`hare.experiments.studies.outputs.PROVENANCE_FILES`)."""
    return any(fnmatch.fnmatch(relative, pattern) for pattern in timed)


def reproducible_part(manifest: dict[str, str], timed: Iterable[str]) -> dict[str, str]:
    """The entries of ``manifest`` that two runs on the same device must share byte for byte: all but the timed
    files (:func:`is_provenance_file`)."""
    timed = tuple(timed)
    return {relative: digest for relative, digest in manifest.items() if not is_provenance_file(relative, timed)}


def notebook_outputs(path: str | os.PathLike) -> list[Any]:
    """The outputs of every code cell of a notebook file, in order (what it printed and drew, not its code)."""
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    return [cell.get("outputs") for cell in cells if cell["cell_type"] == "code"]


def _sources_only(old: Path, new: Path, relative: str) -> bool:
    """Whether ``relative`` differs between two builds in its notebook's code only: an ``.ipynb`` whose code cells'
    outputs agree, or the ``.html`` of such a notebook."""
    notebook = relative[: -len(".html")] + ".ipynb" if relative.endswith(".html") else relative
    if not notebook.endswith(".ipynb"):
        return False
    paths = locate(old, notebook), locate(new, notebook)
    return all(path.is_file() for path in paths) and notebook_outputs(paths[0]) == notebook_outputs(paths[1])


CODE_COLUMN = "Code identifier"
"""The column of a generated Markdown table (the notation table, ``hare notation``) that names where the code is."""


def without_code_column(text: str) -> list[str]:
    """The lines of a Markdown document with the :data:`CODE_COLUMN` cell taken out of every row of each table whose
    header names that column (cells split at ``|`` not escaped by a backslash)."""
    lines, column = [], None
    for line in text.splitlines():
        if not line.startswith("|"):
            lines.append(line)
            column = None
            continue
        cells = re.split(r"(?<!\\)\|", line)
        if column is None:
            names = [cell.strip() for cell in cells]
            column = names.index(CODE_COLUMN) if CODE_COLUMN in names else -1
        lines.append("|".join(cell for i, cell in enumerate(cells) if i != column))
    return lines


def _code_references_only(old: Path, new: Path, relative: str) -> bool:
    """Whether ``relative`` differs between two builds in the code identifiers of its tables only (a Markdown file
    whose tables have a :data:`CODE_COLUMN`: moving code moves them, the symbols, fields and result keys stay)."""
    if not relative.endswith(".md"):
        return False
    texts = [locate(root, relative).read_text(encoding="utf-8") for root in (old, new)]
    if not any(CODE_COLUMN in text for text in texts):
        return False
    return without_code_column(texts[0]) == without_code_column(texts[1])


def compare_builds(old_dir: str | os.PathLike, new_dir: str | os.PathLike, timed: Iterable[str]) -> list[str]:
    """How two finished builds differ, one line each, from their manifests' reproducible entries
    (:func:`reproducible_part`: the timed files ``timed`` aside): ``only in old``, ``only in new``, ``differs``, and
    ``sources only`` for a notebook whose code changed while everything it printed and drew stayed the same (a
    refactoring moves imports and rewraps lines), ``code identifiers only`` for a generated table whose code column
    alone changed (:func:`_code_references_only`: a refactoring moves the code a symbol names). Empty when the builds
    agree byte for byte.
    """
    old, new = require_results_dir(old_dir), require_results_dir(new_dir)
    timed = tuple(timed)
    before, after = (reproducible_part(read_manifest(root / MANIFEST_NAME), timed) for root in (old, new))
    lines = [f"only in old: {relative}" for relative in sorted(set(before) - set(after))]
    lines += [f"only in new: {relative}" for relative in sorted(set(after) - set(before))]
    for relative in sorted(set(before) & set(after)):
        if before[relative] != after[relative]:
            if _sources_only(old, new, relative):
                kind = "sources only"
            elif _code_references_only(old, new, relative):
                kind = "code identifiers only"
            else:
                kind = "differs"
            lines.append(f"{kind}: {relative}")
    return lines
