"""Paper build: number macros from result sidecars, and latexmk with strict checks."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from hare.experiments.aggregate import summarise_run
from hare.io import atomic_path, write_text
from hare.report.latex import escape, format_number, macro_name, macros

UNDEFINED = re.compile(r"(Reference|Citation) [`'](.+?)' on page \S+ undefined|There were undefined (references|citations)")


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
        values[macro_name("n", "runs", "above", "half", exp, env, policy)] = str(row["runs_above_half"])
        values[macro_name("n", "runs", exp)] = str(row["n_runs"])
        values[macro_name("horizon", exp, env)] = f"{row['horizon']:,}".replace(",", "{,}")
        values[macro_name("regime", exp)] = row["regime"]
        values[macro_name("n", "logged", exp)] = f"{row['n_logged']:,}".replace(",", "{,}")
    for package, version in versions.items():
        values[macro_name("version", package)] = escape(version)
    return macros(values)


def build_pdf(main: Path, outdir: Path, pdf: Path) -> None:
    """Compile ``main`` with latexmk into ``outdir``; fail on errors or undefined references/citations; copy to ``pdf``."""
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
    with atomic_path(pdf) as tmp:
        shutil.copyfile(outdir / (main.stem + ".pdf"), tmp)


def write_paper_macros(run_files: Iterable[str | Path], out: str | Path) -> None:
    write_text(out, paper_macros(run_files))
