"""What the figure notebooks share: the lines they print about a build's gaps, the reported run files they read, and
the macro file they write for the paper.

A notebook reads only the files its rule passes in (``runs``); what is missing is said once, as one line, and kept for
the notebook's JSON (:class:`Notes`). :func:`reported_runs` gives the reported run files (role ``report``) of the
notebook's experiments, keyed ``(experiment, environment, label)`` as the paper's macros are. :func:`write_macros`
writes the macros with the header that names the notebook.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Iterator

import numpy as np

from hare.io import read_npz, run_files, write_text
from hare.report.latex import macros

RunKey = tuple[str, str, str]
"""``(experiment, environment name, label)`` of a run file's job."""


class Notes:
    """The lines a notebook prints about what the build lacks or changes: each printed once, in the order said, and
    kept in :attr:`lines` for the notebook's JSON. An instance is the ``say`` callable :func:`hare.io.run_files`
    takes."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, line: str) -> None:
        if line not in self.lines:
            print(line)
            self.lines.append(line)


def reported_runs(
    runs: Iterable[str | os.PathLike],
    experiments: Collection[str],
    say: Callable[[str], None],
    labels: Collection[str] | None = None,
) -> Iterator[tuple[RunKey, dict, dict[str, np.ndarray]]]:
    """``(key, sidecar, arrays)`` for each reported run file among ``runs`` of one of ``experiments`` (and of
    one of ``labels`` when given), in order; tuning runs (role ``tune``) and other experiments are passed over before
    their arrays are read. Missing files are said through ``say`` (:func:`hare.io.run_files`)."""
    for path, sidecar in run_files(runs, say):
        job = sidecar["job"]
        if job["experiment"] not in experiments or job.get("role", "report") != "report":
            continue
        if labels is not None and job["label"] not in labels:
            continue
        yield (job["experiment"], job["environment"]["name"], job["label"]), sidecar, read_npz(path)


def write_macros(path: str | os.PathLike, values: dict[str, str], notebook: str) -> None:
    """Write ``values`` as LaTeX macros (:func:`hare.report.latex.macros`) under the header naming
    ``notebooks/<notebook>.py``, atomically."""
    header = f"% Written by notebooks/{notebook}.py from the run files of its rule; do not edit.\n"
    write_text(path, header + macros(values))
