"""Helpers for tests that run a notebook of notebooks/ on planted files through papermill, as the workflow runs it
(``hare notebook-source``, then ``hare notebook-execute`` with the parameters cell set)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]


def _hare(root: Path, *args: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY / "src"), "SOURCE_DATE_EPOCH": "0", "OMP_NUM_THREADS": "1"}
    result = subprocess.run([sys.executable, "-m", "hare", *args], cwd=root, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


def execute(root: Path, notebook: str, runs: list[str]) -> tuple[dict, dict]:
    parameters = {
        "runs": runs,
        "figures": [f"paper/figures/{notebook}.pdf"],
        "outputs": {"json": f"results/checks/{notebook}.json", "macros": f"paper/generated/{notebook}_macros.tex"},
    }
    out = "results/notebooks"
    (root / out).mkdir(parents=True, exist_ok=True)  # the commands create no folder
    _hare(
        root,
        "notebook-source",
        str(REPOSITORY / "notebooks" / f"{notebook}.py"),
        "--out",
        f"{out}/{notebook}.src.ipynb",
    )
    _hare(
        root,
        "notebook-execute",
        f"{out}/{notebook}.src.ipynb",
        "--out",
        f"{out}/{notebook}.ipynb",
        "--parameters",
        json.dumps(parameters),
    )
    assert (root / "paper" / "figures" / f"{notebook}.pdf").read_bytes().startswith(b"%PDF-")
    text = (root / "paper" / "generated" / f"{notebook}_macros.tex").read_text()
    document = json.loads((root / "results" / "checks" / f"{notebook}.json").read_text())
    return dict(re.findall(r"\\newcommand\{\\([A-Za-z]+)\}\{(.*)\}", text)), document
