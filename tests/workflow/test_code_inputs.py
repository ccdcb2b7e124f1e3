"""Code is an input (docs/workflow.md): on a copy of the finished smoke build, an edit of the code reruns exactly the
steps that run it, and ``hare verify`` fails on a result computed by other code.

- a changed constant in a sympy bound reruns the bounds and the theory steps that use them, the claims and the PDF,
  and no experiment batch; the PDF's text shows the new bound;
- a changed line in one baseline policy module replays only the jobs whose code holds that module (the batches'
  logs count them) and leaves every other run file byte for byte;
- a docstring-only or comment-only edit reruns nothing;
- an edit of the round loop reruns every experiment batch;
- ``snakemake --touch`` after a policy edit leaves results computed by the old code, and ``hare verify`` names them.
"""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FAULTS_GROUP
from repository_copy import SNAKEMAKE, job_stats

pytestmark = [pytest.mark.workflow, pytest.mark.xdist_group(FAULTS_GROUP)]

CONFIG = ["--configfile", "config/smoke.yaml"]


def _copy(build: Path, dest: Path) -> Path:
    shutil.copytree(build, dest, symlinks=True)
    return dest


def _snakemake(workdir: Path, *args: str) -> str:
    result = subprocess.run([*SNAKEMAKE, *args, *CONFIG], cwd=workdir, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout + result.stderr


def _plan(workdir: Path) -> dict[str, int]:
    """``{rule: jobs}`` a dry run would run (empty when there is nothing to do)."""
    log = _snakemake(workdir, "--dry-run", "--cores", "1")
    return {} if "Nothing to be done" in log else job_stats(log)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} in {path}"
    path.write_text(text.replace(old, new))


def _run_digests(workdir: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(workdir)): path.read_bytes()
        for folder in ("runs", "tuning")
        for path in sorted((workdir / "results" / folder).rglob("*"))
        if path.suffix in (".npz", ".json")
    }


def _verify(workdir: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hare", "verify", "--results", "results"],
        cwd=workdir,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": "src", "PATH": "/usr/bin:/bin"},
    )


def _pdf_text(workdir: Path) -> str:
    return subprocess.run(
        ["pdftotext", "results/paper.pdf", "-"], cwd=workdir, capture_output=True, text=True, check=True
    ).stdout


def test_the_finished_build_has_a_code_record_for_every_output_and_verifies(reference_run):
    records = list((reference_run / "results" / "code").glob("*.json"))
    recorded = {output for path in records for output in json.loads(path.read_text())["outputs"]}
    assert {"paper/generated/bounds.tex", "results/paper.pdf", "results/claims.json"} <= recorded
    sidecars = [p for p in (reference_run / "results" / "runs").rglob("*.json")]
    assert sidecars and all(
        "hare.experiments.simulation" in json.loads(p.read_text())["code"]["modules"] for p in sidecars
    )
    assert _verify(reference_run).returncode == 0


def test_a_changed_bound_reruns_the_theory_the_claims_and_the_paper_and_no_experiment(reference_run, tmp_path):
    build = _copy(reference_run, tmp_path / "build")
    before = _pdf_text(build)
    _edit(
        build / "src/hare/theory/bounds.py",
        "2 * sp.log(1 / failure_probability)",
        "3 * sp.log(1 / failure_probability)",
    )
    plan = _plan(build)
    assert {"bounds_tex", "claims", "paper_pdf", "oful_check", "decomposition"} <= set(plan), plan
    assert not [rule for rule in plan if rule.startswith("run_")], plan
    assert "notebook_to_ipynb" not in plan and "table" not in plan, plan
    _snakemake(build, "--cores", "2")
    assert r"3 \log{\left(\frac{1}{\delta}" in (build / "paper/generated/bounds.tex").read_text()
    after = _pdf_text(build)
    assert after != before
    assert "3 log" in re.sub(r"\s+", " ", after) or any(
        "3" in line for line in set(after.splitlines()) - set(before.splitlines())
    )
    assert _verify(build).returncode == 0, _verify(build).stdout


def test_a_changed_policy_line_replays_only_its_jobs_and_keeps_every_other_run_file(reference_run, tmp_path):
    from hare.experiments.job_spec import JobSpec
    from hare.experiments.run import ROUND_LOOP
    from hare.source_digest import SourceIndex, job_code

    build = _copy(reference_run, tmp_path / "build")
    module = "hare.policies.classic"
    index = SourceIndex(build / "src" / "hare")
    sidecars = sorted((build / "results").glob("*/**/*.json"))
    jobs = {
        str(path.relative_to(build)): JobSpec.from_dict(json.loads(path.read_text())["job"])
        for path in sidecars
        if path.with_suffix(".npz").is_file() and path.parts[len(build.parts) + 1] in ("runs", "tuning")
    }
    holding = {path for path, spec in jobs.items() if module in job_code(spec, ROUND_LOOP, index)}
    assert holding and len(holding) < len(jobs)
    before = _run_digests(build)
    logs_before = {path: path.read_text() for path in (build / "results/logs/experiments").rglob("*.log")}
    _edit(  # a changed line in Random's select
        build / "src/hare/policies/classic.py",
        'return self.rng.randint("random-arm", observation.t, self.n_arms)',
        'arms = self.rng.randint("random-arm", observation.t, self.n_arms)\n        return arms',
    )
    plan = _plan(build)
    assert plan and all(rule.startswith("run_") or not rule.startswith("run") for rule in plan)
    logs = _snakemake(build, "--cores", "2")
    assert "Error" not in logs
    rerun = [path for path, text in logs_before.items() if path.read_text() != text]
    played = sum(int(m.group(1)) for log in rerun for m in re.finditer(r"(\d+) job\(s\) played", log.read_text()))
    after = _run_digests(build)
    changed = {path for path in before if before[path] != after.get(path)}
    assert {path for path in changed if path.endswith(".json")} == holding
    assert played == len(holding)
    assert _verify(build).returncode == 0, _verify(build).stdout


def test_a_docstring_or_comment_edit_reruns_nothing(reference_run, tmp_path):
    build = _copy(reference_run, tmp_path / "build")
    _edit(
        build / "src/hare/policies/linear.py", '"""Linear contextual bandits', '"""Linear contextual (edited) bandits'
    )
    _edit(build / "src/hare/experiments/simulation.py", "\nimport math\n", "\n# a new comment\nimport math\n")
    assert _plan(build) == {}


def test_an_edit_of_the_round_loop_reruns_every_experiment(reference_run, tmp_path):
    build = _copy(reference_run, tmp_path / "build")
    batches = {path.stem for path in (build / "results/checks/margins").rglob("*.json")}
    _edit(
        build / "src/hare/experiments/simulation.py", "\nimport math\n", "\nimport math\n\nROUND_LOOP_EDITED = True\n"
    )
    plan = _plan(build)
    assert sum(count for rule, count in plan.items() if rule.startswith("run_")) == len(
        list((build / "results/checks/margins").rglob("*.json"))
    ), (plan, batches)


def test_touch_after_a_policy_edit_leaves_results_that_verify_names(reference_run, tmp_path):
    build = _copy(reference_run, tmp_path / "build")
    _edit(  # a changed line in LinUCB's select
        build / "src/hare/policies/linear.py",
        "scores, products = self.scores_and_products(observation.contexts)",
        "scores, products = self.scores_and_products(observation.contexts)\n        scores = scores * 1.0",
    )
    _snakemake(build, "--touch", "--cores", "1")
    result = _verify(build)
    assert result.returncode == 1
    lines = [line for line in result.stdout.splitlines() if line.startswith("computed by other code")]
    assert lines and all("hare.policies.linear" in line for line in lines), result.stdout
    stale = sum(int(re.search(r"code: (\d+) file", line).group(1)) for line in lines)
    linucb = [p for p in (build / "results").glob("*/**/linucb*.json") if p.with_suffix(".npz").is_file()]
    assert stale >= len(linucb) > 0
