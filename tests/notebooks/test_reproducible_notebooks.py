"""The notebook steps of the workflow write the same bytes when run twice on the same inputs.

The ``regret_curves`` notebook runs on two small fixture run files through the commands the
notebook rules call (``hare notebook-source``, ``notebook-execute``, ``notebook-html``),
twice into the same paths (papermill records them).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np

from hare.io import write_json, write_npz
from hare.report.notebooks import cell_id, normalize

REPOSITORY = Path(__file__).resolve().parents[2]
NOTEBOOK = "regret_curves"


def _fixture_runs(root: Path) -> list[str]:
    """Two run files (``.npz`` and sidecar) of one environment, as relative paths under ``root``."""
    runs = []
    rounds = np.arange(10, 60, 10)
    for index, label in enumerate(["linucb", "random"]):
        relative = f"results/runs/synthetic/synthetic_linear/{label}.npz"
        regret = np.cumsum(np.full((2, rounds.size), 1.0 + index), axis=1) + np.arange(2)[:, None]
        write_npz(root / relative, rounds=rounds, cumulative_regret=regret)
        write_json(
            (root / relative).with_suffix(".json"),
            {"job": {"environment": {"name": "synthetic_linear"}, "label": label, "policy": label.partition("@")[0]}},
        )
        runs.append(relative)
    return runs


def _hare(root: Path, *args: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY / "src"), "SOURCE_DATE_EPOCH": "0"}
    result = subprocess.run(
        [sys.executable, "-m", "hare", *args], cwd=root, capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


def _build(root: Path, runs: list[str]) -> dict[str, bytes]:
    """The rule's three steps on ``notebooks/regret_curves.py``; the bytes of every file they write."""
    out = "results/notebooks"
    (root / out).mkdir(parents=True, exist_ok=True)  # the commands create no folder
    parameters = {"runs": runs, "figures": ["paper/figures/regret_curves.pdf"]}
    _hare(
        root,
        "notebook-source",
        str(REPOSITORY / "notebooks" / f"{NOTEBOOK}.py"),
        "--out",
        f"{out}/{NOTEBOOK}.source.ipynb",
    )
    _hare(
        root,
        "notebook-execute",
        f"{out}/{NOTEBOOK}.source.ipynb",
        "--out",
        f"{out}/{NOTEBOOK}.ipynb",
        "--parameters",
        json.dumps(parameters),
    )
    _hare(root, "notebook-html", f"{out}/{NOTEBOOK}.ipynb", "--out", f"{out}/{NOTEBOOK}.html")
    written = [
        f"{out}/{NOTEBOOK}.source.ipynb",
        f"{out}/{NOTEBOOK}.ipynb",
        f"{out}/{NOTEBOOK}.html",
        *parameters["figures"],
    ]
    return {name: (root / name).read_bytes() for name in written}


def test_two_executions_write_identical_notebooks_html_and_figures(tmp_path):
    runs = _fixture_runs(tmp_path)
    first = _build(tmp_path, runs)
    second = _build(tmp_path, runs)
    for name in first:
        assert first[name] == second[name], f"{name}: two executions differ"
    executed = nbformat.reads(first[f"results/notebooks/{NOTEBOOK}.ipynb"].decode(), as_version=4)
    assert any("injected-parameters" in cell.metadata.get("tags", []) for cell in executed.cells)
    assert "synthetic_linear" in json.dumps(executed.metadata["papermill"]["parameters"])
    assert b"linucb" in first[f"results/notebooks/{NOTEBOOK}.html"]


def test_normalize_fixes_cell_ids_and_drops_timings():
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# t"), nbformat.v4.new_code_cell("1")])
    notebook.metadata["papermill"] = {
        "start_time": "2026-01-01T00:00:00",
        "end_time": "x",
        "duration": 1.5,
        "parameters": {"a": 1},
    }
    notebook.cells[1].metadata.update(
        execution={"iopub.status.busy": "2026-01-01T00:00:00"},
        papermill={"start_time": "t", "end_time": "t", "duration": 0.1, "status": "completed", "exception": False},
    )
    normalize(notebook)
    assert [cell["id"] for cell in notebook.cells] == [cell_id(0), cell_id(1)] == ["cell-0", "cell-1"]
    assert notebook.metadata["papermill"] == {"parameters": {"a": 1}}
    assert notebook.cells[1].metadata == {"papermill": {"status": "completed", "exception": False}}
    nbformat.validate(notebook)
