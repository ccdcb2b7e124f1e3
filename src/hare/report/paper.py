"""Paper build: number macros from result sidecars, and latexmk with strict checks."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hare.experiments.aggregate import summarise_run
from hare.io import atomic_path, write_json, write_text
from hare.report.latex import escape, format_number, macro_name, macros

UNDEFINED = re.compile(r"(Reference|Citation) [`'](.+?)' on page \S+ undefined|There were undefined (references|citations)")
OVERFULL = re.compile(r"Overfull \\hbox \((\d+(?:\.\d+)?)pt too wide\) ([^\n]*)")
OVERFULL_TOLERANCE_PT = 1.0
"""The widest overfull ``\\hbox`` a build accepts: anything wider sticks visibly into the margin."""


def overfull_boxes(log_text: str, tolerance_pt: float = OVERFULL_TOLERANCE_PT) -> list[tuple[float, str]]:
    """``(excess in pt, where)`` of every ``Overfull \\hbox (...pt too wide)`` of a pdflatex log wider than
    ``tolerance_pt``, widest first; ``where`` is the log's own location (``in paragraph at lines 12--15``) and the
    start of the offending material, which TeX prints on the next line."""
    boxes = []
    for match in OVERFULL.finditer(log_text):
        excess = float(match.group(1))
        if excess > tolerance_pt:
            following = log_text[match.end():].lstrip("\n").split("\n", 1)[0]
            following = re.sub(r"\\[A-Za-z0-9]+/[^ ]*/[\d.]+ ?|\[\]", "", following).strip()  # font switches, empty boxes
            where = match.group(2).strip() + (f": {following[:60]}" if following and not following.startswith(("Overfull", "Underfull")) else "")
            boxes.append((excess, where))
    return sorted(boxes, key=lambda box: -box[0])


def check_overfull(log_text: str, source: str | Path, tolerance_pt: float = OVERFULL_TOLERANCE_PT) -> None:
    """Fail with one line naming the widest box when the log has an overfull ``\\hbox`` wider than ``tolerance_pt``."""
    boxes = overfull_boxes(log_text, tolerance_pt)
    if boxes:
        excess, where = boxes[0]
        raise RuntimeError(f"{source}: {len(boxes)} overfull \\hbox wider than {tolerance_pt:g}pt; the widest by {excess:g}pt {where}")


def paper_macros(run_files: Iterable[str | Path]) -> str:
    """``\\regret<Exp><Env><Policy>`` (mean total regret), ``\\regretStd...``, ``\\nRunsAboveHalf<Exp><Env><Policy>``
    (runs whose total regret exceeds half the horizon: on two arms, more than uniform random's expectation), ``\\nRuns<Exp>``, ``\\horizon<Exp><Env>``,
    the information regime ``\\regime<Exp>`` (cold or warm) and its ``\\nLogged<Exp>`` (``M``, 0 when cold), and versions."""
    values: dict[str, str] = {}
    versions: dict[str, str] = {}
    for path in run_files:
        row = summarise_run(path)
        sidecar = json.loads(Path(path).with_suffix(".json").read_text())
        versions = sidecar["versions"]
        env, policy, exp = row["environment"], row["policy"], row["experiment"]
        values[macro_name("regret", exp, env, policy)] = format_number(row["mean"])
        values[macro_name("regret", "std", exp, env, policy)] = format_number(row["std"])
        if "runs_above_half" in row:  # simulated runs (a replay run has no regret)
            values[macro_name("n", "runs", "above", "half", exp, env, policy)] = str(row["runs_above_half"])
        values[macro_name("n", "runs", exp)] = str(row["n_runs"])
        values[macro_name("horizon", exp, env)] = f"{row['horizon']:,}".replace(",", "{,}")
        values[macro_name("regime", exp)] = row["regime"]
        values[macro_name("n", "logged", exp)] = f"{row['n_logged']:,}".replace(",", "{,}")
    for package, version in versions.items():
        values[macro_name("version", package)] = escape(version)
    return macros(values)


def build_pdf(main: Path, outdir: Path, pdf: Path) -> None:
    """Compile ``main`` with latexmk into ``outdir``; fail on errors, undefined references/citations or an overfull
    ``\\hbox`` wider than :data:`OVERFULL_TOLERANCE_PT` (:func:`check_overfull`); copy to ``pdf``."""
    if shutil.which("latexmk") is None:
        raise RuntimeError("latexmk not found: install TeX (see README, 'make setup' does it on Debian/Ubuntu)")
    outdir = outdir.resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    for stale in outdir.glob("*.fdb_latexmk"):
        stale.unlink()
    env = {**os.environ, "SOURCE_DATE_EPOCH": os.environ.get("SOURCE_DATE_EPOCH", "0"), "FORCE_SOURCE_DATE": "1"}
    command = ["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error", "-file-line-error", f"-outdir={outdir}", main.name]
    result = subprocess.run(command, cwd=main.parent, env=env, capture_output=True, text=True)
    log_path = outdir / (main.stem + ".log")
    log_text = log_path.read_text(errors="replace") if log_path.exists() else ""
    if result.returncode != 0:
        errors = [line for line in log_text.splitlines() if line.startswith("!") or ":error" in line.lower() or re.match(r"^\S+\.tex:\d+:", line)]
        raise RuntimeError(f"latexmk failed on {main} (exit {result.returncode}): " + " | ".join(errors[:5] or result.stdout.splitlines()[-5:]))
    undefined = sorted({m.group(2) or m.group(0) for m in UNDEFINED.finditer(log_text)})
    if undefined:
        raise RuntimeError(f"{main}: undefined references or citations: {', '.join(undefined)}")
    check_overfull(log_text, log_path)
    with atomic_path(pdf) as tmp:
        shutil.copyfile(outdir / (main.stem + ".pdf"), tmp)


def write_paper_macros(run_files: Iterable[str | Path], out: str | Path) -> None:
    write_text(out, paper_macros(run_files))


def skipped_tex(skipped: list[dict[str, str]]) -> str:
    """``\\skippedDatasets``: ``none``, or each skipped dataset with its reason (LaTeX-escaped)."""
    text = "; ".join(f"{escape(row['dataset'])} ({escape(row['reason'])})" for row in skipped) or "none"
    return "% Generated by hare skipped-datasets; do not edit.\n" + f"\\newcommand{{\\skippedDatasets}}{{{text}}}\n"


def write_skipped(record: dict[str, Any], json_path: Path, tex_path: Path) -> None:
    """``results/data/skipped.json`` (``record``: ``{"skipped": [{"dataset", "reason"}], "stems", "tables"}``, of
    :func:`hare.experiments.plan.availability_record`) and the LaTeX macro of its skipped datasets."""
    skipped = record["skipped"]
    for row in skipped:
        if set(row) != {"dataset", "reason"}:
            raise ValueError(f"skipped dataset entries need exactly the keys dataset and reason, got {sorted(row)}")
    write_json(json_path, record)
    write_text(tex_path, skipped_tex(skipped))
