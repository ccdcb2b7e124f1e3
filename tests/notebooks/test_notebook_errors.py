"""A notebook whose cell raises: ``hare notebook-execute`` (the command the notebook rules run) ends with one
line naming the notebook, the cell and the exception, and leaves no executed notebook and no figure behind."""

import json
import os
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]

FAILING = """# %% tags=["parameters"]
figures = []
outputs = {}

# %%
import pathlib

# %%
pathlib.Path(figures[0]).write_text("half a figure")
pathlib.Path(outputs["json"]).write_text("{")
raise ValueError("no runs\\nin the inputs")
"""


def _hare(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY / "src"), "SOURCE_DATE_EPOCH": "0"}
    return subprocess.run(
        [sys.executable, "-m", "hare", *args], cwd=root, capture_output=True, text=True, env=env, check=False
    )


def _failing_notebook(root: Path) -> str:
    (root / "failing.py").write_text(FAILING)
    made = _hare(root, "notebook-source", "failing.py", "--out", "failing.source.ipynb")
    assert made.returncode == 0, made.stderr[-3000:]
    return "failing.source.ipynb"


def test_a_failing_cell_is_one_line_and_leaves_no_outputs(tmp_path):
    source = _failing_notebook(tmp_path)
    (tmp_path / "kept.pdf").write_bytes(b"an earlier figure this execution never writes")
    parameters = {"figures": ["figures/failing.pdf", "kept.pdf"], "outputs": {"json": "failing.json"}}
    (tmp_path / "figures").mkdir()
    result = _hare(
        tmp_path, "notebook-execute", source, "--out", "failing.ipynb", "--parameters", json.dumps(parameters)
    )

    assert result.returncode == 2, result.stderr[-3000:]
    lines = result.stderr.strip().splitlines()
    assert lines[-1] == (
        "hare notebook-execute: error: failing.source.ipynb: cell 2 "
        '(`pathlib.Path(figures[0]).write_text("half a figure")`): ValueError: no runs in the inputs'
    )
    assert [line for line in lines if "ValueError" in line] == lines[-1:], result.stderr
    assert "Traceback" not in result.stderr
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == [
        "failing.py",
        "failing.source.ipynb",
        "kept.pdf",
    ]
    assert (tmp_path / "kept.pdf").read_bytes() == b"an earlier figure this execution never writes"


def test_debug_shows_the_cell_traceback(tmp_path):
    source = _failing_notebook(tmp_path)
    parameters = {"figures": ["failing.pdf"], "outputs": {"json": "failing.json"}}
    result = _hare(
        tmp_path,
        "--debug",
        "notebook-execute",
        source,
        "--out",
        "failing.ipynb",
        "--parameters",
        json.dumps(parameters),
    )

    assert result.returncode != 0
    assert "Traceback" in result.stderr and 'raise ValueError("no runs' in result.stderr
    assert (
        not (tmp_path / "failing.ipynb").exists()
        and not (tmp_path / "failing.pdf").exists()
        and not (tmp_path / "failing.json").exists()
    )
