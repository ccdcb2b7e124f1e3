"""The smoke workflow end to end, in a temporary copy of the repository."""

import base64
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from repository_copy import SNAKEMAKE, copy_repository

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
    generated = ["paper/generated/bounds.tex", "results/checks/oful.json", "paper/figures/regret_curves.pdf", "results/notebooks/regret_curves.html"]
    for path in [*(f"results/tables/{t}.csv" for t in tables), *(f"paper/generated/table_{t}.tex" for t in tables), *generated]:
        assert (smoke_run / path).stat().st_size > 0, path


REPORT_ITEM = re.compile(r'"name": ("(?:[^"\\]|\\.)*"), "filename": [^{}]*?"caption": ("(?:[^"\\]|\\.)*")')
"""A result of the HTML report as Snakemake embeds it: JSON fields ``name``, ..., ``caption`` (rendered HTML)."""


def _captions(html: str) -> dict[str, str]:
    """``{file name: caption HTML, whitespace collapsed}`` of every result in a Snakemake HTML report."""
    return {json.loads(m.group(1)): " ".join(json.loads(m.group(2)).split()) for m in REPORT_ITEM.finditer(html)}


def _embedded(path: Path) -> str:
    """How the HTML report embeds a file: its bytes as base64 (a data URI)."""
    return base64.b64encode(path.read_bytes()).decode()


def test_report_carries_every_figure_and_table_with_its_caption(smoke_run, tmp_path):
    report = tmp_path / "report.html"
    result = subprocess.run([*SNAKEMAKE, "--report", str(report), "--configfile", "config/smoke.yaml"], cwd=smoke_run, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    html = report.read_text()
    captions = _captions(html)
    figures = sorted((smoke_run / "paper" / "figures").glob("*.pdf"))
    config = yaml.safe_load((smoke_run / "config" / "smoke.yaml").read_text())
    assert len(figures) >= 7
    for path in [*figures, *(smoke_run / "results" / "tables" / f"{table}.csv" for table in config["tables"])]:
        assert captions.get(path.name), f"{path.name}: not in the report, or without a caption"
        assert "{{" not in captions[path.name] and "{%" not in captions[path.name], path.name
        assert _embedded(path) in html, f"{path.name}: not embedded in the report"
    for table in config["tables"]:
        assert config["tables"][table]["caption"] in captions[f"{table}.csv"], table
    n_runs = config["experiments"]["synthetic"]["n_runs"]
    assert f"{n_runs} runs" in captions["regret_curves.pdf"] and "one standard deviation over runs" in captions["regret_curves.pdf"]


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
    good = (repository / "config" / "smoke.yaml").read_text()
    bad.write_text(good.replace("linucb: {params: {lam: 1.0}, grid: {alpha: [0.1, 1.0]}}", "linucb: {params: {lam: 1.0}, grid: {alpha: [-0.1, 1.0]}}"))
    assert bad.read_text() != good, "the smoke config no longer has the line this test breaks"
    result = subprocess.run([*SNAKEMAKE, "--cores", "1", "--configfile", str(bad), "--dry-run"], cwd=repository, capture_output=True, text=True)
    assert result.returncode != 0
    assert "alpha" in result.stdout + result.stderr
