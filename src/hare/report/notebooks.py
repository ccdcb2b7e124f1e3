"""The figure notebooks as the workflow builds them: script -> ``.ipynb`` -> executed ``.ipynb`` -> HTML.

Every step writes the same bytes for the same inputs, so the notebooks under
``results/notebooks/`` are bit-reproducible like the figures they save. Left alone,
they are not: nbformat gives every cell a random id (jupytext's conversion and
papermill's injected-parameters cell), papermill records start and end times and
durations for the notebook and each cell, and the kernel client records message
timestamps in each cell's ``execution`` metadata. :func:`normalize` replaces the ids by
the cell's position and drops those timings; everything else (parameters, outputs,
status, kernel and language versions) is kept.
"""

from __future__ import annotations

import os
from pathlib import Path

import nbformat

from hare.io import write_text

PAPERMILL_TIMINGS = ("start_time", "end_time", "duration")
"""Keys of papermill's notebook and cell metadata that hold wall-clock times."""

KERNEL = "python3"


def cell_id(index: int) -> str:
    """The id of the ``index``-th cell: fixed by its position (nbformat allows ``[a-zA-Z0-9-_]{1,64}``)."""
    return f"cell-{index}"


def _drop_timings(papermill: dict) -> None:
    for key in PAPERMILL_TIMINGS:
        papermill.pop(key, None)


def normalize(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """``notebook`` with positional cell ids and without execution timestamps or durations (changed in place)."""
    _drop_timings(notebook.metadata.get("papermill", {}))
    for index, cell in enumerate(notebook.cells):
        cell["id"] = cell_id(index)
        cell.metadata.pop("execution", None)
        _drop_timings(cell.metadata.get("papermill", {}))
    return notebook


def write_notebook(notebook: nbformat.NotebookNode, path: str | os.PathLike) -> None:
    """Write ``notebook`` normalized, atomically, with nbformat's formatting and a final newline."""
    write_text(path, nbformat.writes(normalize(notebook)) + "\n")


def script_to_notebook(script: str | os.PathLike, out: str | os.PathLike) -> None:
    """A jupytext percent script -> ``.ipynb`` (papermill executes notebooks, not scripts)."""
    import jupytext

    write_notebook(jupytext.read(Path(script)), out)


def execute(source: str | os.PathLike, out: str | os.PathLike, parameters: dict, cwd: str | os.PathLike | None = None) -> None:
    """Execute ``source`` with papermill, the parameters cell set to ``parameters``; write it normalized to ``out``.

    Papermill writes ``out`` as it goes (a failing notebook is kept there with its
    traceback); the normalized notebook replaces it once every cell has run.
    """
    import papermill

    executed = papermill.execute_notebook(
        str(source), str(out), parameters=parameters, kernel_name=KERNEL, language="python", progress_bar=False,
        cwd=None if cwd is None else str(cwd),
    )
    write_notebook(executed, out)


def render_html(notebook: str | os.PathLike, out: str | os.PathLike) -> None:
    """An executed notebook -> standalone HTML for readers."""
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_filename(str(notebook))
    write_text(out, body)
