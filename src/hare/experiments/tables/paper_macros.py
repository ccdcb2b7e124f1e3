"""The numbers behind the paper's macros, from the run files: one summary row per run file and the versions.

Here rather than in :mod:`hare.report`, because the numbers come from the run files through
:func:`hare.experiments.tables.aggregate.summarise_run`; :mod:`hare.report.paper_macros` renders them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from hare.experiments.tables.aggregate import summarise_run
from hare.report import paper_macros as render


def macro_inputs(run_files: Iterable[str | Path]) -> tuple[list[dict], dict[str, str]]:
    """``(rows, versions)``: :func:`summarise_run` of every run file, in order, and the package versions the last
    run file's sidecar records (``{}`` without a run file)."""
    rows: list[dict] = []
    versions: dict[str, str] = {}
    for path in run_files:
        rows.append(summarise_run(path))
        versions = json.loads(Path(path).with_suffix(".json").read_text())["versions"]
    return rows, versions


def paper_macros(run_files: Iterable[str | Path]) -> str:
    """The macro file of the run files (:func:`hare.report.paper_macros.paper_macros` of :func:`macro_inputs`)."""
    return render.paper_macros(*macro_inputs(run_files))


def write_paper_macros(run_files: Iterable[str | Path], out: str | Path) -> None:
    """:func:`paper_macros` of the run files, written atomically to ``out``."""
    render.write_paper_macros(out, *macro_inputs(run_files))
