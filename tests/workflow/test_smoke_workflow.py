"""The smoke workflow end to end, in a temporary copy of the repository."""

import shutil
import subprocess

import pytest
from conftest import SNAKEMAKE, copy_repository

pytestmark = [pytest.mark.workflow, pytest.mark.xdist_group("workflow")]


@pytest.fixture(scope="module")
def smoke_run(repository, tmp_path_factory):
    if shutil.which("latexmk") is None:
        pytest.fail("latexmk is missing: run `make setup` (it installs TeX), the smoke workflow needs it")
    workdir = copy_repository(repository, tmp_path_factory.mktemp("smoke"))
    result = subprocess.run([*SNAKEMAKE, "--cores", "2", "--configfile", "config/smoke.yaml"], cwd=workdir, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    return workdir


def test_smoke_workflow_builds_the_paper_and_the_claims(smoke_run):
    pdf = smoke_run / "results" / "paper.pdf"
    assert pdf.read_bytes()[:5] == b"%PDF-"
    claims = (smoke_run / "results" / "claims.md").read_text()
    assert claims.startswith("# Claims:")
    tables = ["classification", "enhanced", "published", "synthetic", "hare_ablations", "sensitivity", "scaling", "replay", "compute"]
    for path in [*(f"results/tables/{t}.csv" for t in tables), *(f"paper/generated/table_{t}.tex" for t in tables), "paper/generated/bounds.tex", "results/checks/oful.json", "paper/figures/regret_curves.pdf", "results/notebooks/regret_curves.html"]:
        assert (smoke_run / path).stat().st_size > 0, path


def test_every_input_of_the_paper_was_generated(smoke_run):
    import re

    tex = "\n".join(p.read_text() for p in (smoke_run / "paper").rglob("*.tex") if "generated" not in p.parts)
    for name in re.findall(r"\\input\{(generated/[^}]+)\}", tex):
        assert (smoke_run / "paper" / (name if name.endswith(".tex") else name + ".tex")).exists(), name
    for name in re.findall(r"\\includegraphics(?:\[[^]]*\])?\{([^}]+)\}", tex):
        assert (smoke_run / "paper" / name).exists(), name
    log = (smoke_run / "results" / "latex" / "main.log").read_text(errors="replace")
    assert "undefined" not in log.lower().replace("undefined control", "")


def test_rerun_does_nothing_and_a_deleted_run_is_redone_identically(smoke_run):
    run = smoke_run / "results" / "runs" / "classification" / "mushroom" / "linucb.npz"
    before = run.read_bytes()
    dry = subprocess.run([*SNAKEMAKE, "--cores", "1", "--configfile", "config/smoke.yaml", "--dry-run"], cwd=smoke_run, capture_output=True, text=True)
    assert "Nothing to be done" in dry.stdout + dry.stderr
    run.unlink()
    target = str(run.relative_to(smoke_run))
    again = subprocess.run([*SNAKEMAKE, target, "--cores", "2", "--configfile", "config/smoke.yaml"], cwd=smoke_run, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr[-3000:]
    assert run.read_bytes() == before


def test_lint_is_clean(repository):
    result = subprocess.run([*SNAKEMAKE, "--lint", "--configfile", "config/smoke.yaml"], cwd=repository, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Congratulations, your workflow is in a good condition!" in result.stdout + result.stderr


def test_bad_config_fails_before_any_job(repository, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text((repository / "config" / "smoke.yaml").read_text().replace("linucb: {params: {alpha: 1.0", "linucb: {params: {alpha: -1.0"))
    result = subprocess.run([*SNAKEMAKE, "--cores", "1", "--configfile", str(bad), "--dry-run"], cwd=repository, capture_output=True, text=True)
    assert result.returncode != 0
    assert "alpha" in result.stdout + result.stderr
