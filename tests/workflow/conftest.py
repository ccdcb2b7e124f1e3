"""A reference smoke run shared by the fault, reproducibility and Slurm tests (same xdist group)."""

import shutil
import subprocess
from pathlib import Path

import pytest

from repository_copy import SNAKEMAKE, copy_repository

FAULTS_GROUP = "workflow-faults"


@pytest.fixture(scope="session")
def reference_run(repository, tmp_path_factory) -> Path:
    """The smoke workflow run once from scratch, uninterrupted, on the local executor."""
    if shutil.which("latexmk") is None:
        pytest.fail("latexmk is missing: run `make setup` (it installs TeX), the smoke workflow needs it")
    workdir = copy_repository(repository, tmp_path_factory.mktemp("reference"))
    result = subprocess.run(
        [*SNAKEMAKE, "--cores", "2", "--configfile", "config/smoke.yaml"], cwd=workdir, capture_output=True, text=True
    )
    logs = "".join(
        f"\n--- {p}\n{p.read_text(errors='replace')[-1500:]}"
        for p in sorted((workdir / "results" / "logs").rglob("*.log"))
        if "rror" in p.read_text(errors="replace")
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:] + logs
    return workdir
