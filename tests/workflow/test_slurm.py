"""A slice of the smoke workflow on a real single-node Slurm cluster (localhost), through the profile in profiles/slurm.

The test starts its own munged, slurmctld and slurmd (a private munge key and socket,
state in a temporary folder), writes ``/etc/slurm/slurm.conf`` (job steps read the
configuration from there; ``SLURM_CONF`` does not reach them) and restores whatever was
there before. Every daemon is stopped by the PID it was started with. It skips only when
the Slurm or munge binaries are missing, or when another Slurm configuration is in use.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from conftest import FAULTS_GROUP
from hare.experiments.manifest import is_provenance_file, result_files
from hare.experiments.studies.outputs import PROVENANCE_FILES
from repository_copy import SNAKEMAKE, copy_repository, job_stats

pytestmark = [pytest.mark.workflow, pytest.mark.xdist_group(FAULTS_GROUP)]
BINARIES = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol")
SLURM_CONF = Path("/etc/slurm/slurm.conf")
PARTITION = "localtest"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.2)


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _stop(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _run_daemon(command: list[str], env: dict | None = None) -> None:
    """Start a daemon that forks into the background; its start-up errors fail the test verbatim."""
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    assert result.returncode == 0, f"{command[0]} failed to start: {result.stdout}{result.stderr}"


def slurm_conf(state: Path, munge_socket: Path, node_line: str) -> str:
    """A one-node configuration: no accounting, no cgroups, jobs kept visible to squeue for 10 minutes."""
    host = node_line.split()[0].split("=", 1)[1]
    return "\n".join(
        [
            "ClusterName=hare-localtest",
            f"SlurmctldHost={host}",
            f"SlurmctldPort={_free_port()}",
            f"SlurmdPort={_free_port()}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={munge_socket}",
            f"StateSaveLocation={state / 'ctld'}",
            f"SlurmdSpoolDir={state / 'd'}",
            f"SlurmctldPidFile={state / 'slurmctld.pid'}",
            f"SlurmdPidFile={state / 'slurmd.pid'}",
            f"SlurmctldLogFile={state / 'slurmctld.log'}",
            f"SlurmdLogFile={state / 'slurmd.log'}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "MpiDefault=none",
            "SchedulerType=sched/builtin",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core_Memory",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "ReturnToService=2",
            "MinJobAge=600",
            "InactiveLimit=0",
            "KillWait=5",
            "SlurmctldTimeout=30",
            "SlurmdTimeout=30",
            node_line + " State=UNKNOWN",
            f"PartitionName={PARTITION} Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
            "",
        ]
    )


@pytest.fixture(scope="module")
def slurm_cluster(tmp_path_factory):
    """A running one-node Slurm cluster; yields the environment its clients need.

    munged's socket must be reachable by every user, so its folder is a world-searchable
    temporary folder rather than the test's private one.
    """
    missing = [name for name in BINARIES if shutil.which(name) is None]
    if missing:
        pytest.skip(f"Slurm/munge binaries missing: {', '.join(missing)} (Debian: apt-get install slurm-wlm munge)")
    if os.geteuid() != 0:
        pytest.skip("starting slurmd and writing /etc/slurm/slurm.conf needs root")
    state = tmp_path_factory.mktemp("slurm")
    for folder in ("ctld", "d"):
        (state / folder).mkdir()
    munge = Path(tempfile.mkdtemp(prefix="hare-munge-"))
    munge.chmod(0o755)
    key = munge / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    munge_socket = munge / "socket"
    node_line = next(
        line
        for line in subprocess.run(["slurmd", "-C"], capture_output=True, text=True, check=True).stdout.splitlines()
        if line.startswith("NodeName=")
    )
    node_line = re.sub(r"RealMemory=(\d+)", lambda m: f"RealMemory={int(m.group(1)) * 9 // 10}", node_line)

    backup = None
    if SLURM_CONF.exists():
        backup = SLURM_CONF.read_bytes()
        if b"hare-localtest" not in backup:
            pytest.skip(f"{SLURM_CONF} exists and belongs to another Slurm installation; not overwriting it")
    SLURM_CONF.parent.mkdir(parents=True, exist_ok=True)
    SLURM_CONF.write_text(slurm_conf(state, munge_socket, node_line))
    env = {**os.environ, "SLURM_CONF": str(SLURM_CONF)}
    pids = []
    try:
        _run_daemon(
            [
                "munged",
                f"--key-file={key}",
                f"--socket={munge_socket}",
                f"--pid-file={munge / 'munged.pid'}",
                f"--log-file={munge / 'munged.log'}",
                f"--seed-file={munge / 'seed'}",
            ]
        )
        _wait_for(lambda: _read_pid(munge / "munged.pid") is not None, 10, "munged's PID file")
        pids.append(_read_pid(munge / "munged.pid"))
        _run_daemon(["slurmctld", "-f", str(SLURM_CONF)], env)
        _wait_for(lambda: _read_pid(state / "slurmctld.pid") is not None, 20, "slurmctld's PID file")
        pids.append(_read_pid(state / "slurmctld.pid"))
        _run_daemon(["slurmd", "-f", str(SLURM_CONF)], env)
        _wait_for(lambda: _read_pid(state / "slurmd.pid") is not None, 20, "slurmd's PID file")
        pids.append(_read_pid(state / "slurmd.pid"))

        def node_idle() -> bool:
            out = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, env=env).stdout
            return "idle" in out

        try:
            _wait_for(node_idle, 60, "the node to become idle")
        except TimeoutError as error:
            logs = "\n".join(
                (state / name).read_text(errors="replace")[-2000:]
                for name in ("slurmctld.log", "slurmd.log")
                if (state / name).exists()
            )
            raise AssertionError(f"{error}\n{logs}") from None
        yield env
    finally:
        for pid in reversed(pids):
            if pid is not None:
                _stop(pid)
        if backup is None:
            SLURM_CONF.unlink(missing_ok=True)
        else:
            SLURM_CONF.write_bytes(backup)
        shutil.rmtree(munge, ignore_errors=True)


def _local_profile(repository: Path, dest: Path) -> Path:
    """profiles/slurm with the site settings of this one-node cluster: its partition, no GPU, small jobs."""
    profile = yaml.safe_load((repository / "profiles" / "slurm" / "config.yaml").read_text())
    profile["default-resources"].update({"slurm_partition": PARTITION, "mem_mb": 1000, "runtime": 30})
    profile.update(
        {
            "jobs": 4,
            "latency-wait": 5,
            "retries": 0,
            "slurm-status-command": "squeue",
            "slurm-init-seconds-before-status-checks": 2,
            "slurm-keep-successful-logs": True,
        }
    )
    dest.mkdir(parents=True)
    (dest / "config.yaml").write_text(yaml.safe_dump(profile))
    return dest


SLICE = [
    "results/tables/synthetic.csv",
    "results/checks/oful.json",
    "paper/generated/bounds.tex",
    "results/notebooks/regret_curves.html",
]
"""Targets whose jobs span every kind of step: fetch and prepare a dataset, two experiments' batches (tuning and
reported runs), a table, a theory check, the bounds, a notebook converted, executed and rendered. The whole smoke DAG
(about a hundred jobs) goes through the same profile, but Slurm's submission and status polling cost seconds per
job, which made the whole DAG take 7 times as long as a local run; the local reference run covers the rest."""


def _slice_jobs(workdir: Path) -> dict[str, int]:
    """``{rule: job count}`` of the slice, from a dry run (every job of the slice, nothing built yet)."""
    dry = subprocess.run(
        [*SNAKEMAKE, *SLICE, "--dry-run", "--cores", "1", "--configfile", "config/smoke.yaml"],
        cwd=workdir,
        capture_output=True,
        text=True,
    )
    assert dry.returncode == 0, dry.stdout[-3000:] + dry.stderr[-3000:]
    return job_stats(dry.stdout)


@pytest.fixture(scope="module")
def slurm_run(slurm_cluster, repository, tmp_path_factory):
    workdir = copy_repository(repository, tmp_path_factory.mktemp("slurm-run"))
    profile = _local_profile(repository, workdir / "profiles" / "slurm-localtest")
    jobs = _slice_jobs(workdir)
    result = subprocess.run(
        [*SNAKEMAKE, *SLICE, "--profile", str(profile), "--configfile", "config/smoke.yaml"],
        cwd=workdir,
        capture_output=True,
        text=True,
        env=slurm_cluster,
        timeout=1200,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-6000:]
    return workdir, result.stdout + result.stderr, jobs


def test_jobs_went_through_sbatch(slurm_run):
    workdir, log, jobs = slurm_run
    job_ids = set(re.findall(r"SLURM jobid (\d+)", log, flags=re.IGNORECASE)) | set(
        re.findall(r"slurm_jobid=(\d+)", log)
    )
    slurm_logs = list((workdir / ".snakemake" / "slurm_logs").rglob("*.log"))
    assert job_ids, log[-3000:]
    assert {"fetch_dataset", "prepare_dataset", "table", "oful_check", "execute_regret_curves"} <= set(jobs), jobs
    assert len(job_ids) == len(slurm_logs) == sum(jobs.values()), "every job of the slice should have gone via sbatch"
    for rule in jobs:
        assert any(f"rule_{rule}" in str(p) for p in slurm_logs), f"{rule}: no Slurm log"


def test_slurm_results_equal_a_local_run(slurm_run, reference_run):
    workdir, _, _ = slurm_run
    built = result_files(workdir / "results")
    runs = {p.split("/")[1] for p in built if p.startswith("runs/") and p.endswith(".npz")}
    assert runs == {"synthetic", "classification"}, runs
    assert {"tables/synthetic.csv", "checks/oful.json", "notebooks/regret_curves.html"} <= set(built)
    compared = [p for p in built if not is_provenance_file(p, PROVENANCE_FILES)]
    assert len(compared) > 20
    for relative in compared:
        ours, theirs = workdir / "results" / relative, reference_run / "results" / relative
        assert ours.read_bytes() == theirs.read_bytes(), f"{relative} differs from the local run's"
