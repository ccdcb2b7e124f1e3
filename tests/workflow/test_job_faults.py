"""A killed job leaves nothing that looks complete; NaN/Inf inputs fail loudly; the manifest catches changes."""

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.experiments.job_spec import JobSpec
from hare.experiments.manifest import read_manifest, verify, write_manifest
from hare.experiments.run import NonFiniteInputError, run_job
from hare.experiments.simulation import SimulationOptions, simulate
from hare.io import UnreadableResultError, read_npz, temporary_names, write_npz
from hare.policies import build_policy
from hare.random import run_keys

SOURCE = str(Path(__file__).resolve().parents[2] / "src")


def _spec(horizon: int) -> dict:
    return {
        "experiment": "faults",
        "label": "linucb",
        "policy": "linucb",
        "params": {"alpha": 1.0},
        "environment": {
            "name": "sim",
            "kind": "synthetic",
            "params": {"n_items": 12, "n_clusters": 3, "n_users": 2},
            "dataset": None,
            "horizon": horizon,
        },
        "n_runs": 2,
        "role": "report",
        "base_seed": 5,
        "device": "cpu",
        "record_every": 10,
        "regime": "cold",
        "n_logged": 0,
    }


def _job(horizon: int) -> JobSpec:
    return JobSpec.from_dict(_spec(horizon))


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_sigkill_mid_run_leaves_no_output_and_no_temporary(tmp_path):
    out = tmp_path / "X.npz"
    stale = tmp_path / ".X.npz.abcd1234.tmp"
    stale.write_bytes(b"left by an earlier killed attempt")
    env = {**os.environ, "PYTHONPATH": SOURCE, "OMP_NUM_THREADS": "1"}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hare",
            "run",
            "--job",
            json.dumps(_spec(10**7)),
            "--out",
            str(out),
            "--progress",
            "off",
        ],
        env=env,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while stale.exists():
        assert process.poll() is None, process.stderr.read().decode()
        assert time.monotonic() < deadline, "the job never started"
        time.sleep(0.05)
    time.sleep(1.0)
    assert process.poll() is None, "the job ended before it could be killed"
    process.kill()
    process.wait()
    process.stderr.close()
    assert process.returncode == -signal.SIGKILL
    assert _leftovers(tmp_path) == []


def test_a_rerun_removes_what_a_writer_killed_mid_write_left(tmp_path):
    out = tmp_path / "X.npz"
    script = (
        "import os, signal, sys\nfrom hare.io import atomic_path\nwith atomic_path(sys.argv[1]) as tmp:\n"
        "    tmp.write_bytes(b'half')\n    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    subprocess.run([sys.executable, "-c", script, str(out)], env={**os.environ, "PYTHONPATH": SOURCE})
    (temporary,) = temporary_names(out)
    assert temporary.name.startswith(".X.npz.") and temporary.name.endswith(".tmp")
    assert not out.exists()
    run_job(_job(30), out)
    assert _leftovers(tmp_path) == ["X.json", "X.npz"]


def test_a_rerun_deletes_the_previous_result_before_it_starts(tmp_path):
    out = tmp_path / "X.npz"
    write_npz(out, total_regret=np.zeros(1))
    out.with_suffix(".json").write_text("{}")
    spec = replace(_job(30), policy="no_such_policy")
    with pytest.raises((KeyError, ValueError)):
        run_job(spec, out)
    assert _leftovers(tmp_path) == []


class _PoisonedBandit(SyntheticBandit):
    """Synthetic bandit whose contexts turn to ``value`` from round ``bad_round`` (0-based) on."""

    def __init__(self, *args, bad_round: int, value: float, field: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.bad_round, self.value, self.field = bad_round, value, field

    def round(self, t):
        round_ = super().round(t)
        if t >= self.bad_round:
            tensor = getattr(round_.observation, self.field)
            tensor = tensor.clone()
            tensor.view(-1)[0] = self.value
            object.__setattr__(round_.observation, self.field, tensor)
        return round_


@pytest.mark.parametrize("policy", ["linucb", "hare"])
@pytest.mark.parametrize(
    ("value", "field"), [(float("nan"), "contexts"), (float("inf"), "contexts"), (float("-inf"), "queries")]
)
def test_nonfinite_inputs_fail_at_the_first_bad_round(policy, value, field):
    env = _PoisonedBandit(
        SyntheticConfig(n_items=12, n_clusters=3, n_users=2),
        2,
        40,
        run_keys(0, range(2), "env"),
        bad_round=16,
        value=value,
        field=field,
    )
    if getattr(env.round(0).observation, field) is None:
        pytest.skip(f"this environment has no {field}")
    params = {"alpha": 1.0, "projections": "oracle"} if policy == "hare" else {"alpha": 1.0}
    seen = []
    policy_ = build_policy(policy, params, env, run_keys(0, range(2), "pol"))
    original = policy_.update
    policy_.update = lambda observation, arms, rewards: (
        seen.append(observation.t),
        original(observation, arms, rewards),
    )
    with pytest.raises(NonFiniteInputError, match=r"environment 'poisoned': round 17 has non-finite"):
        simulate(env, policy_, SimulationOptions(record_every=5, name="poisoned"))
    assert max(seen) == 15


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_nonfinite_inputs_on_cuda_name_the_first_bad_round():
    device = torch.device("cuda")
    env = _PoisonedBandit(
        SyntheticConfig(n_items=12, n_clusters=3, n_users=2),
        2,
        40,
        run_keys(0, range(2), "env").to(device),
        device,
        bad_round=16,
        value=float("nan"),
        field="contexts",
    )
    policy = build_policy("linucb", {"alpha": 1.0}, env, run_keys(0, range(2), "pol").to(device)).to(device)
    with pytest.raises(NonFiniteInputError, match=r"round 17 "):
        simulate(env, policy, SimulationOptions(record_every=5, name="poisoned"))


@pytest.fixture
def results(tmp_path):
    root = tmp_path / "results"
    for relative, text in {
        "runs/a/b.npz": "x",
        "tables/t.csv": "1,2\n",
        "claims.md": "# Claims\n",
        "logs/l.log": "noise",
        "latex/main.aux": "aux",
    }.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    write_manifest(root)
    return root


def test_manifest_lists_results_sorted_without_logs_and_latex(results):
    lines = (results / "MANIFEST.sha256").read_text().splitlines()
    assert [line.split("  ", 1)[1] for line in lines] == ["claims.md", "runs/a/b.npz", "tables/t.csv"]
    assert (
        read_manifest(results / "MANIFEST.sha256")["claims.md"]
        == __import__("hashlib").sha256(b"# Claims\n").hexdigest()
    )
    assert verify(results) == []


def test_manifest_is_sha256sum_compatible(results):
    result = subprocess.run(
        ["sha256sum", "--check", "--quiet", "MANIFEST.sha256"], cwd=results, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_verify_reports_flipped_missing_and_extra_files(results):
    data = bytearray((results / "tables/t.csv").read_bytes())
    data[0] ^= 0x01
    (results / "tables/t.csv").write_bytes(bytes(data))
    (results / "claims.md").unlink()
    (results / "runs/a/new.npz").write_text("y")
    (results / "logs/another.log").write_text("ignored")
    problems = verify(results)
    assert len(problems) == 3
    assert problems[0] == "missing: claims.md"
    assert problems[1].startswith("changed: tables/t.csv (sha256 ")
    assert problems[2] == "extra: runs/a/new.npz (not in the manifest)"


def test_the_report_written_after_the_manifest_is_not_an_extra_file(results):
    (results / "report.html").write_text("<html></html>")
    (results / "tables" / "report.html").write_text("<html></html>")
    assert verify(results) == ["extra: tables/report.html (not in the manifest)"]


def test_verify_without_a_manifest_says_so(tmp_path):
    assert "manifest missing" in verify(tmp_path)[0]


def test_cli_verify_exits_1_listing_problems(results):
    from hare.cli.code import write_record

    # what the workflow records of the step that wrote them: without a record, verify names the files as such
    outputs = ["results/runs/a/b.npz", "results/tables/t.csv", "results/claims.md"]
    env = {**os.environ, "PYTHONPATH": SOURCE}
    unrecorded = subprocess.run(
        [sys.executable, "-m", "hare", "verify", "--results", str(results)], capture_output=True, text=True, env=env
    )
    assert unrecorded.returncode == 1 and unrecorded.stdout.startswith("no code record: 3 file(s)")
    write_record({"command": "table"}, outputs, results)
    ok = subprocess.run(
        [sys.executable, "-m", "hare", "verify", "--results", str(results)], capture_output=True, text=True, env=env
    )
    assert ok.returncode == 0 and ok.stdout == ""
    (results / "runs/a/b.npz").write_text("z")
    bad = subprocess.run(
        [sys.executable, "-m", "hare", "verify", "--results", str(results)], capture_output=True, text=True, env=env
    )
    assert bad.returncode == 1
    assert bad.stdout.startswith("changed: runs/a/b.npz")
    assert f"hare verify --results {results} --repair, then rerun the workflow" in bad.stderr
    again = subprocess.run(
        [sys.executable, "-m", "hare", "manifest", "--results", str(results)], capture_output=True, text=True, env=env
    )
    assert again.returncode == 0 and verify(results) == []


def _tamper(path: Path, how: str) -> None:
    """Damage a result file in place, keeping its modification time (as bit rot would)."""
    stat = path.stat()
    data = path.read_bytes()
    if how == "flipped byte":
        middle = len(data) // 2
        path.write_bytes(data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :])
    elif how == "truncated":
        path.write_bytes(data[: len(data) // 3])
    elif how == "valid but altered":
        with np.load(path) as loaded:
            arrays = {name: loaded[name] for name in loaded.files}
        arrays["total_regret"] = arrays["total_regret"] / 2
        write_npz(path, **arrays)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


@pytest.mark.parametrize("how", ["flipped byte", "truncated", "valid but altered"])
def test_a_damaged_result_is_named_refused_by_the_manifest_and_repaired(tmp_path, how):
    root = tmp_path / "results"
    run = root / "runs" / "faults" / "sim" / "linucb.npz"
    sidecar = run_job(_job(20), run, progress=False)
    assert sidecar["npz_sha256"] == __import__("hashlib").sha256(run.read_bytes()).hexdigest()
    write_manifest(root)
    assert verify(root) == []
    mtime = run.stat().st_mtime_ns
    _tamper(run, how)
    assert run.stat().st_mtime_ns == mtime
    with pytest.raises(UnreadableResultError, match=rf"{run}: .*hare verify --repair"):
        read_npz(run)
    with pytest.raises(ValueError, match="refusing to list"):
        write_manifest(root)
    problems = verify(root)
    assert "disagrees with its sidecar: runs/faults/sim/linucb.npz" in problems[0]
    assert any(p.startswith("changed: runs/faults/sim/linucb.npz") for p in problems)
    repaired = verify(root, repair=True)
    assert (
        "removed: runs/faults/sim/linucb.json (snakemake rebuilds it)" in repaired
        and "removed: runs/faults/sim/linucb.npz (snakemake rebuilds it)" in repaired
    )
    assert not run.exists() and not run.with_suffix(".json").exists()
    run_job(_job(20), run, progress=False)
    write_manifest(root)
    assert verify(root) == []
