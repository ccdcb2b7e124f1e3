"""Paper build: latexmk with strict checks, and the macro of the skipped datasets. The number macros of the runs
are :mod:`hare.experiments.tables.paper_macros` (computed from the run files, rendered by
:mod:`hare.report.paper_macros`)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from hare.io import atomic_path, write_json, write_text
from hare.report.latex import escape

UNDEFINED = re.compile(
    r"(Reference|Citation) [`'](.+?)' on page \S+ undefined|There were undefined (references|citations)"
)
OVERFULL = re.compile(r"Overfull \\hbox \((\d+(?:\.\d+)?)pt too wide\) ([^\n]*)")
OVERFULL_TOLERANCE_PT = 1.0
"""The widest overfull ``\\hbox`` a build accepts: anything wider sticks visibly into the margin."""
TOO_TALL = re.compile(r"Float too large for page by (\d+(?:\.\d+)?)pt on input line (\d+)")
"""A float taller than the text block: LaTeX sets it anyway and the page cuts it off."""
OUTPUT_WRITTEN = re.compile(r"Output written on .*?\((\d+) pages?\b")
BODY_END_LABEL = "body:end"
"""The label ``paper/main.tex`` sets after the last section of the body (its tables and figures flushed): its page in
the ``.aux`` is the body's last page."""


def overfull_boxes(log_text: str, tolerance_pt: float = OVERFULL_TOLERANCE_PT) -> list[tuple[float, str]]:
    """``(excess in pt, where)`` of every ``Overfull \\hbox (...pt too wide)`` of a pdflatex log wider than
    ``tolerance_pt``, widest first; ``where`` is the log's own location (``in paragraph at lines 12--15``) and the
    start of the offending material, which TeX prints on the next line."""
    boxes = []
    for match in OVERFULL.finditer(log_text):
        excess = float(match.group(1))
        if excess > tolerance_pt:
            following = log_text[match.end() :].lstrip("\n").split("\n", 1)[0]
            following = re.sub(
                r"\\[A-Za-z0-9]+/[^ ]*/[\d.]+ ?|\[\]", "", following
            ).strip()  # font switches, empty boxes
            where = match.group(2).strip() + (
                f": {following[:60]}" if following and not following.startswith(("Overfull", "Underfull")) else ""
            )
            boxes.append((excess, where))
    return sorted(boxes, key=lambda box: -box[0])


def check_overfull(log_text: str, source: str | Path, tolerance_pt: float = OVERFULL_TOLERANCE_PT) -> None:
    """Fail with one line naming the widest box when the log has an overfull ``\\hbox`` wider than ``tolerance_pt``."""
    boxes = overfull_boxes(log_text, tolerance_pt)
    if boxes:
        excess, where = boxes[0]
        raise RuntimeError(
            f"{source}: {len(boxes)} overfull \\hbox wider than {tolerance_pt:g}pt; the widest by {excess:g}pt {where}"
        )


def check_too_tall(log_text: str, source: str | Path) -> None:
    """Fail with one line naming the tallest when a float is too large for its page (its bottom is cut off in the
    PDF): ``Float too large for page by X pt on input line N``, the file being read at that point named as the log
    has it (its last ``(./file.tex`` before the warning)."""
    floats = []
    for match in TOO_TALL.finditer(log_text):
        opened = re.findall(r"\((\./[^\s()]+\.tex)", log_text[: match.start()])
        floats.append((float(match.group(1)), f"{opened[-1] if opened else 'main'} line {match.group(2)}"))
    if floats:
        excess, where = max(floats)
        raise RuntimeError(
            f"{source}: {len(floats)} float(s) too large for their page; the tallest by {excess:g}pt ({where}): its "
            "bottom is cut off"
        )


def pdf_pages(log_text: str) -> int | None:
    """The page count of a pdflatex log's last ``Output written on FILE (N pages, M bytes).`` line (TeX wraps log lines
    at 79 characters, so the line is read with the line breaks taken out); ``None`` without one."""
    matches = OUTPUT_WRITTEN.findall(log_text.replace("\n", ""))
    return int(matches[-1]) if matches else None


def label_page(aux_text: str, label: str = BODY_END_LABEL) -> int | None:
    """The page of ``\\label{label}`` as the ``.aux`` records it (``\\newlabel{label}{{number}{page}...}``, with or
    without hyperref's extra fields); ``None`` where the label is not there or its page is not a number."""
    match = re.search(r"\\newlabel\{" + re.escape(label) + r"\}\{\{(?:[^{}]|\{[^{}]*\})*\}\{(\d+)\}", aux_text)
    return int(match.group(1)) if match else None


def check_pages(
    log_text: str,
    aux_text: str,
    source: str | Path,
    max_pages: int | None = None,
    max_body_pages: int | None = None,
) -> None:
    """Fail with one line naming the budget and the measured pages when the PDF has more than ``max_pages`` pages or
    the body (up to :data:`BODY_END_LABEL`) ends after page ``max_body_pages``; ``None`` checks nothing. A budget
    that cannot be measured (no ``Output written`` line, no body label) fails too."""
    pages = pdf_pages(log_text)
    body = label_page(aux_text)
    if max_pages is not None and pages is None:
        raise RuntimeError(f"{source}: no 'Output written on' line in the log: the {max_pages}-page budget unchecked")
    if max_body_pages is not None and body is None:
        raise RuntimeError(
            f"{source}: no \\label{{{BODY_END_LABEL}}} in the .aux: the body's {max_body_pages}-page budget unchecked"
        )
    over_total = max_pages is not None and pages > max_pages
    over_body = max_body_pages is not None and body > max_body_pages
    if over_total or over_body:
        parts = []
        if max_pages is not None:
            parts.append(f"{pages} pages against a budget of {max_pages} (paper.max_pages)")
        if max_body_pages is not None:
            parts.append(f"the body ends on page {body} against a budget of {max_body_pages} (paper.max_body_pages)")
        raise RuntimeError(f"{source}: over the page budget: " + "; ".join(parts))


def build_pdf(
    main: Path, outdir: Path, pdf: Path, max_pages: int | None = None, max_body_pages: int | None = None
) -> None:
    """Compile ``main`` with latexmk into ``outdir``; fail on errors, undefined references/citations, an overfull
    ``\\hbox`` wider than :data:`OVERFULL_TOLERANCE_PT` (:func:`check_overfull`), a float too tall for its page
    (:func:`check_too_tall`) or a page budget exceeded
    (:func:`check_pages`: ``max_pages`` for the whole PDF, ``max_body_pages`` for the body); copy to ``pdf``. A failed
    check leaves no ``pdf`` behind (a stale one is removed first)."""
    if shutil.which("latexmk") is None:
        raise RuntimeError("latexmk not found: install TeX (see README, 'make setup' does it on Debian/Ubuntu)")
    outdir = outdir.resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    pdf.unlink(missing_ok=True)
    for stale in outdir.glob("*.fdb_latexmk"):
        stale.unlink()
    env = {**os.environ, "SOURCE_DATE_EPOCH": os.environ.get("SOURCE_DATE_EPOCH", "0"), "FORCE_SOURCE_DATE": "1"}
    command = [
        "latexmk",
        "-pdf",
        "-interaction=nonstopmode",
        "-halt-on-error",
        "-file-line-error",
        f"-outdir={outdir}",
        main.name,
    ]
    result = subprocess.run(command, cwd=main.parent, env=env, capture_output=True, text=True)
    log_path = outdir / (main.stem + ".log")
    log_text = log_path.read_text(errors="replace") if log_path.exists() else ""
    if result.returncode != 0:
        errors = [
            line
            for line in log_text.splitlines()
            if line.startswith("!") or ":error" in line.lower() or re.match(r"^\S+\.tex:\d+:", line)
        ]
        raise RuntimeError(
            f"latexmk failed on {main} (exit {result.returncode}): "
            + " | ".join(errors[:5] or result.stdout.splitlines()[-5:])
        )
    undefined = sorted({m.group(2) or m.group(0) for m in UNDEFINED.finditer(log_text)})
    if undefined:
        raise RuntimeError(f"{main}: undefined references or citations: {', '.join(undefined)}")
    check_overfull(log_text, log_path)
    check_too_tall(log_text, log_path)
    aux_path = outdir / (main.stem + ".aux")
    aux_text = aux_path.read_text(errors="replace") if aux_path.exists() else ""
    check_pages(log_text, aux_text, outdir / (main.stem + ".pdf"), max_pages, max_body_pages)
    with atomic_path(pdf) as tmp:
        shutil.copyfile(outdir / (main.stem + ".pdf"), tmp)


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
