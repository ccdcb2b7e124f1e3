"""Snakemake killed mid-run: the rerun redoes only what is missing and ends byte-identical to an uninterrupted run."""

import base64
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import FAULTS_GROUP
from hare.experiments.config import resolve_config_file
from hare.experiments.grid import expand_jobs
from hare.experiments.manifest import is_provenance_file, read_manifest, reproducible_part, verify
from hare.experiments.studies.outputs import PROVENANCE_FILES
from repository_copy import SNAKEMAKE, copy_repository, job_stats

pytestmark = [pytest.mark.workflow, pytest.mark.xdist_group(FAULTS_GROUP)]


def _batches() -> dict[str, list[str]]:
    """``{batch: [result .npz, ...]}``: the smoke config's jobs grouped as the workflow's batch rules group them
    (one rule ``run_<experiment>_<environment>`` per batch, its tuning and reported jobs)."""
    config = resolve_config_file(Path(__file__).resolve().parents[2] / "config" / "smoke.yaml")
    batches: dict[str, list[str]] = {}
    for job in expand_jobs(config):
        batches.setdefault(f"run_{job.experiment}_{job.environment}", []).append(f"results/{job.stem}.npz")
    return batches


BATCHES = _batches()


def _finished_batches(workdir: Path) -> dict[str, dict[str, int]]:
    """``{batch: {run .npz: mtime}}`` of batches whose every result and sidecar exist and that Snakemake recorded as
    finished."""
    incomplete = _incomplete(workdir)
    finished = {}
    for batch, outputs in BATCHES.items():
        paths = [workdir / npz for npz in outputs]
        if all(p.exists() and p.with_suffix(".json").exists() for p in paths) and not incomplete & {
            *outputs,
            *(o[:-4] + ".json" for o in outputs),
        }:
            finished[batch] = {npz: (workdir / npz).stat().st_mtime_ns for npz in outputs}
    return finished


def _incomplete(workdir: Path) -> set[str]:
    """Outputs Snakemake marked as incomplete (jobs started and not finished)."""
    folder = workdir / ".snakemake" / "incomplete"
    if not folder.is_dir():
        return set()
    return {base64.urlsafe_b64decode(marker.name.encode()).decode() for marker in folder.iterdir() if marker.is_file()}


@pytest.fixture(scope="module")
def interrupted_run(repository, tmp_path_factory):
    """A smoke run from scratch, SIGKILLed (Snakemake and its jobs) after two experiment batches finished, unlocked
    and resumed."""
    workdir = copy_repository(repository, tmp_path_factory.mktemp("interrupted"))
    command = [*SNAKEMAKE, "--cores", "2", "--configfile", "config/smoke.yaml"]
    process = subprocess.Popen(
        command, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + 300
    while len(_finished_batches(workdir)) < 2:
        assert process.poll() is None, "snakemake ended before it could be interrupted"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    time.sleep(0.5)

    complete = _finished_batches(workdir)
    stray = [p.name for p in (workdir / "results").rglob(".*.tmp")]
    unlock = subprocess.run([*command, "--unlock"], cwd=workdir, capture_output=True, text=True)
    assert unlock.returncode == 0, unlock.stderr[-2000:]
    resumed = subprocess.run(command, cwd=workdir, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-5000:]
    return workdir, complete, stray, resumed.stdout + resumed.stderr


def test_the_kill_left_work_to_redo(interrupted_run):
    _, complete, _, _ = interrupted_run
    assert 2 <= len(complete) < len(BATCHES)


def test_the_resumed_run_redoes_only_the_missing_batches(interrupted_run):
    workdir, complete, _, log = interrupted_run
    for batch in BATCHES:
        assert job_stats(log).get(batch, 0) == (0 if batch in complete else 1), batch
    for outputs in complete.values():
        for relative, mtime in outputs.items():
            assert (workdir / relative).stat().st_mtime_ns == mtime, f"{relative} was recomputed"


def test_no_temporary_file_survives(interrupted_run):
    workdir, _, _, _ = interrupted_run
    assert [str(p) for p in (workdir / "results").rglob(".*.tmp")] == []


def test_interrupted_and_uninterrupted_runs_are_byte_identical(interrupted_run, reference_run):
    """Two runs from scratch (one killed and resumed) agree on every file not listed as provenance."""
    workdir, _, _, _ = interrupted_run
    assert verify(workdir / "results") == []
    ours = read_manifest(workdir / "results" / "MANIFEST.sha256")
    reference = read_manifest(reference_run / "results" / "MANIFEST.sha256")
    assert sorted(ours) == sorted(reference)
    assert reproducible_part(ours, PROVENANCE_FILES) == reproducible_part(reference, PROVENANCE_FILES)
    assert (
        any(p.endswith(".npz") for p in reproducible_part(ours, PROVENANCE_FILES))
        and "tables/classification.csv" in ours
        and "checks/oful.json" in ours
    )
    for relative in ["paper/generated", "paper/figures"]:
        for path in sorted((reference_run / relative).iterdir()):
            # timed: differs between runs by design
            if is_provenance_file(f"../{relative}/{path.name}", PROVENANCE_FILES):
                continue
            assert (workdir / relative / path.name).read_bytes() == path.read_bytes(), f"{relative}/{path.name}"
    # The PDF is not compared: its compute, benchmark and runtime tables and figure carry measured wall times.
    assert (workdir / "results/paper.pdf").read_bytes()[:5] == b"%PDF-"


def test_provenance_files_are_the_only_differences(interrupted_run, reference_run):
    workdir, _, _, _ = interrupted_run
    ours = read_manifest(workdir / "results" / "MANIFEST.sha256")
    reference = read_manifest(reference_run / "results" / "MANIFEST.sha256")
    differing = sorted(p for p in ours if ours[p] != reference.get(p))
    assert differing and all(is_provenance_file(p, PROVENANCE_FILES) for p in differing)
