"""A finished build copied (as `cp -a` copies) or moved to another folder: Snakemake there has nothing to do.

Snakemake reruns a job whose recorded params, input files or shell code differ from the workflow's now
(snakemake/persistence: params_changed, input_changed, code_changed); none of them may name the checkout's folder or
the interpreter by an absolute path.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import FAULTS_GROUP
from repository_copy import SNAKEMAKE

pytestmark = [pytest.mark.workflow, pytest.mark.xdist_group(FAULTS_GROUP)]


def _copy(build: Path, dest: Path) -> Path:
    """``build`` copied as `cp -a` copies it: symbolic links as links, modification times kept (copy2, copystat)."""
    shutil.copytree(build, dest, symlinks=True)
    return dest


def _plan(workdir: Path) -> str:
    """Snakemake's dry run of the smoke build in ``workdir``."""
    result = subprocess.run(
        [*SNAKEMAKE, "--dry-run", "--cores", "1", "--configfile", "config/smoke.yaml"],
        cwd=workdir,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout + result.stderr


def _why(plan: str) -> str:
    """The reasons a dry run gives for its jobs, each once, those that only follow from another job's left out."""
    reasons = set(re.findall(r"^\s*reason: (.*)$", plan, flags=re.MULTILINE))
    first = sorted(
        reason for reason in reasons if not reason.startswith("Input files updated by another job")
    ) or sorted(reasons)
    return "\n".join(reason[:500] for reason in first[:20]) + "\n" + plan[-3000:]


def test_a_copied_build_reruns_nothing(reference_run, tmp_path):
    copy = _copy(reference_run, tmp_path / "copy")
    plan = _plan(copy)
    assert "Nothing to be done" in plan, _why(plan)


def test_a_moved_build_reruns_nothing_and_builds_in_its_new_place(reference_run, tmp_path):
    """The copy is moved (os.rename): its first folder is gone; a deleted output is rebuilt there, byte for byte."""
    first = _copy(reference_run, tmp_path / "first")
    moved = tmp_path / "elsewhere" / "moved"
    moved.parent.mkdir()
    os.rename(first, moved)
    assert not first.exists()
    plan = _plan(moved)
    assert "Nothing to be done" in plan, _why(plan)

    bounds = moved / "paper" / "generated" / "bounds.tex"
    before = bounds.read_bytes()
    bounds.unlink()
    rebuilt = subprocess.run(
        [*SNAKEMAKE, "paper/generated/bounds.tex", "--cores", "1", "--configfile", "config/smoke.yaml"],
        cwd=moved,
        capture_output=True,
        text=True,
    )
    log = moved / "results" / "logs" / "theory" / "bounds.log"
    assert rebuilt.returncode == 0, rebuilt.stderr[-3000:] + (
        log.read_text(errors="replace")[-2000:] if log.exists() else ""
    )
    assert bounds.read_bytes() == before
