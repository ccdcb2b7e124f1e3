"""Every figure notebook on the smoke results: executed by the workflow, re-executed by papermill.

The smoke workflow runs in a temporary copy of the repository up to the executed notebooks; each
notebook's parameters are read back from the executed notebook (papermill records them), and the
notebook is executed again twice with figures written elsewhere: the PDFs must be vector PDFs
with embedded TrueType (Type 42) fonts only, and byte-identical across executions.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from repository_copy import SNAKEMAKE, copy_repository

pytestmark = [pytest.mark.workflow, pytest.mark.xdist_group("workflow")]
NOTEBOOKS = sorted(p.stem for p in (Path(__file__).resolve().parents[2] / "notebooks").glob("*.py"))


@pytest.fixture(scope="module")
def smoke_notebooks(repository, tmp_path_factory):
    """The smoke workflow up to every executed notebook (and their figures), in a temporary copy."""
    workdir = copy_repository(repository, tmp_path_factory.mktemp("notebooks"))
    targets = [f"results/notebooks/{nb}.ipynb" for nb in NOTEBOOKS]
    result = subprocess.run(
        [*SNAKEMAKE, *targets, "--cores", "2", "--configfile", "config/smoke.yaml"],
        cwd=workdir,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    return workdir


def _parameters(workdir: Path, notebook: str) -> dict:
    executed = json.loads((workdir / "results" / "notebooks" / f"{notebook}.ipynb").read_text())
    return executed["metadata"]["papermill"]["parameters"]


def _execute(workdir: Path, notebook: str, parameters: dict, out: Path) -> None:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "0", "PYTHONPATH": str(workdir / "src")}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "papermill",
            "--kernel",
            "python3",
            "--cwd",
            str(workdir),
            "-y",
            json.dumps(parameters),
            str(workdir / "results" / "notebooks" / f"{notebook}.source.ipynb"),
            str(out),
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]


def assert_truetype_pdf(pdf: bytes, name: str) -> None:
    """A PDF whose fonts are all embedded TrueType (Type 42): ``/FontFile2`` streams, no Type 1 or Type 3 fonts."""
    assert pdf.startswith(b"%PDF-"), name
    assert b"/FontFile2" in pdf, f"{name}: no embedded TrueType font"
    assert not re.search(rb"/Subtype\s*/Type[13]\b", pdf), f"{name}: Type 1 or Type 3 font"
    assert not re.search(rb"/FontFile[3]?\s", pdf), f"{name}: Type 1 or CFF font file"
    assert b"/Subtype /Image" not in pdf, f"{name}: raster image in a vector figure"


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_notebook_figures_are_truetype_pdfs_and_reproducible(smoke_notebooks, notebook, tmp_path):
    workdir = smoke_notebooks
    parameters = _parameters(workdir, notebook)
    figures = parameters["figures"]
    assert figures, notebook
    named_files = [
        value for value in parameters.values() if isinstance(value, str) and value.endswith((".json", ".npz"))
    ]
    assert set(named_files) <= set(parameters["runs"]), "a file read by name is not a tracked input"
    for run in parameters["runs"]:
        assert (workdir / run).exists(), run
    produced = {}
    for attempt in ("first", "second"):
        out = tmp_path / attempt
        out.mkdir()
        moved = {**parameters, "figures": [str(out / Path(figure).name) for figure in figures]}
        _execute(workdir, notebook, moved, out / f"{notebook}.ipynb")
        produced[attempt] = [Path(path).read_bytes() for path in moved["figures"]]
    for figure, workflow_bytes, first, second in zip(
        figures, (Path(workdir, f).read_bytes() for f in figures), produced["first"], produced["second"], strict=True
    ):
        assert_truetype_pdf(workflow_bytes, figure)
        assert first == second, f"{figure}: two executions differ"
        assert first == workflow_bytes, f"{figure}: differs from the workflow's"


def test_every_notebook_is_a_final_target(repository, tmp_path):
    """``rule all`` renders every notebook of ``notebooks/`` (NOTEBOOKS is set at the end of rules/notebooks.smk)."""
    workdir = copy_repository(repository, tmp_path)
    result = subprocess.run(
        [*SNAKEMAKE, "--configfile", "config/smoke.yaml", "--dry-run", "--forceall", "--quiet", "rules"],
        cwd=workdir,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", result.stdout, flags=re.MULTILINE))
    assert int(counts.get("render_notebook", 0)) == len(NOTEBOOKS), result.stdout
    for notebook in NOTEBOOKS:
        assert counts.get(f"execute_{notebook}") == "1", notebook
