"""After an interrupted build, the working directory stays locked: `make all` (its workflow step) says so on the
console with the step that unlocks it, and `make unlock` removes the lock."""

import subprocess
import sys
from pathlib import Path

import pytest

from repository_copy import copy_repository

pytestmark = [pytest.mark.workflow]


def test_a_locked_directory_names_make_unlock_on_the_console_and_make_unlock_frees_it(repository, tmp_path):
    workdir = copy_repository(repository, tmp_path / "checkout")
    venv = Path(sys.executable).parents[1]
    locks = workdir / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    (locks / "0.output.lock").write_text("results/claims.md\n")  # as Snakemake writes its lock: relative paths
    make = ["make", f"VENV={venv}", "CONFIG=config/smoke.yaml", "CORES=1"]
    locked = subprocess.run([*make, "workflow"], cwd=workdir, capture_output=True, text=True)
    assert locked.returncode != 0
    assert "run `make unlock`" in locked.stdout + locked.stderr, locked.stdout[-2000:] + locked.stderr[-2000:]
    unlocked = subprocess.run([*make, "unlock"], cwd=workdir, capture_output=True, text=True)
    assert unlocked.returncode == 0, unlocked.stdout[-2000:] + unlocked.stderr[-2000:]
    assert not list(locks.glob("*.lock"))
