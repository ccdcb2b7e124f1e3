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

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat

from hare.io import write_text

if TYPE_CHECKING:
    from papermill.exceptions import PapermillExecutionError

log = logging.getLogger(__name__)

PAPERMILL_TIMINGS = ("start_time", "end_time", "duration")
"""Keys of papermill's notebook and cell metadata that hold wall-clock times."""

KERNEL = "python3"

FIRST_LINE_WIDTH = 80
"""The most characters of a failing cell's first line that its one-line error shows."""


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


class NotebookError(RuntimeError):
    """A notebook cell raised: one line naming the notebook, the cell (index and first source line) and the
    exception; the cell's traceback is on ``__cause__`` (``hare --debug`` shows it)."""


def execute(
    source: str | os.PathLike, out: str | os.PathLike, parameters: dict, cwd: str | os.PathLike | None = None
) -> None:
    """Execute ``source`` with papermill, the parameters cell set to ``parameters``; write it normalized to ``out``.

    Nothing is written until every cell has run: papermill keeps the notebook in memory (it would
    otherwise save it after each cell, and a failing one with its traceback), and on any failure
    the files the notebook was asked to write (``parameters["figures"]`` and the values of
    ``parameters["outputs"]``) that this execution created or changed are removed, so a failure
    never leaves a partial figure behind. A failing cell raises :class:`NotebookError`.
    """
    import papermill
    from papermill.exceptions import PapermillException, PapermillExecutionError

    declared = _declared_outputs(parameters, cwd)
    before = {path: _signature(path) for path in declared}
    try:
        executed = papermill.execute_notebook(
            str(source),
            None,
            parameters=parameters,
            kernel_name=KERNEL,
            language="python",
            progress_bar=False,
            cwd=None if cwd is None else str(cwd),
        )
    except BaseException as error:
        for path in declared:
            if _signature(path) != before[path]:
                path.unlink(missing_ok=True)
        if isinstance(error, PapermillExecutionError):
            raise NotebookError(_one_line_failure(source, error)) from error
        if isinstance(error, PapermillException):
            raise NotebookError(f"{source}: {_one_line(str(error))}") from error
        raise
    executed.metadata.papermill["output_path"] = str(out)  # as if papermill had written it there
    log.info("Executed notebook: %s", out)
    write_notebook(executed, out)


def _declared_outputs(parameters: dict, cwd: str | os.PathLike | None) -> list[Path]:
    """The files ``parameters`` asks the notebook to write: ``figures`` and the values of ``outputs``."""
    figures, outputs = parameters.get("figures", []), parameters.get("outputs", {})
    named = [figures] if isinstance(figures, str) else list(figures) if isinstance(figures, (list, tuple)) else []
    named += list(outputs.values()) if isinstance(outputs, dict) else []
    base = Path.cwd() if cwd is None else Path(cwd)
    return [base / name for name in named if isinstance(name, (str, os.PathLike))]


def _signature(path: Path) -> tuple[int, int, int] | None:
    """What changes when ``path`` is created, replaced or rewritten; ``None`` when there is no such file."""
    try:
        status = path.stat()
    except OSError:
        return None
    return status.st_ino, status.st_size, status.st_mtime_ns


def _one_line(text: str) -> str:
    """``text`` without terminal colours, its lines joined by single spaces."""
    from papermill.exceptions import strip_color

    return " ".join(line.strip() for line in strip_color(text).splitlines() if line.strip())


def _one_line_failure(source: str | os.PathLike, error: PapermillExecutionError) -> str:
    """``<source>: cell <index> (`<first line>`): <Exception>: <message>``; the index counts the cells of ``source``
    (papermill's counts its injected-parameters cell too), found by the failing cell's source where it is unique."""
    index = error.cell_index
    try:
        matches = [
            i for i, cell in enumerate(nbformat.read(str(source), as_version=4).cells) if cell.source == error.source
        ]
    except (OSError, ValueError):
        matches = []
    if len(matches) == 1:
        index = matches[0]
    first = next((line.strip() for line in str(error.source).splitlines() if line.strip()), "")
    if len(first) > FIRST_LINE_WIDTH:
        first = first[: FIRST_LINE_WIDTH - 3] + "..."
    message = _one_line(str(error.evalue))
    return f"{source}: cell {index} (`{first}`): {error.ename}" + (f": {message}" if message else "")


def render_html(notebook: str | os.PathLike, out: str | os.PathLike) -> None:
    """An executed notebook -> standalone HTML for readers."""
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_filename(str(notebook))
    write_text(out, body)
