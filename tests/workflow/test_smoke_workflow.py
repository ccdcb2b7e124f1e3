"""The smoke workflow end to end, in a temporary copy of the repository."""

import base64
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hare.experiments.config import resolve_config_file
from repository_copy import SNAKEMAKE, copy_repository

pytestmark = [pytest.mark.workflow, pytest.mark.xdist_group("workflow")]


@pytest.fixture(scope="module")
def smoke_run(repository, tmp_path_factory):
    if shutil.which("latexmk") is None:
        pytest.fail("latexmk is missing: run `make setup` (it installs TeX), the smoke workflow needs it")
    workdir = copy_repository(repository, tmp_path_factory.mktemp("smoke"))
    result = subprocess.run(
        [*SNAKEMAKE, "--cores", "2", "--configfile", "config/smoke.yaml"], cwd=workdir, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    return workdir


def test_smoke_workflow_builds_the_paper_and_the_claims(smoke_run):
    pdf = smoke_run / "results" / "paper.pdf"
    assert pdf.read_bytes()[:5] == b"%PDF-"
    claims = (smoke_run / "results" / "claims.md").read_text()
    assert claims.startswith("# Claims:")
    tables = [
        "classification",
        "enhanced",
        "published",
        "synthetic",
        "hare_ablations",
        "sensitivity",
        "scaling",
        "replay",
        "compute",
    ]
    generated = [
        "paper/generated/bounds.tex",
        "results/checks/oful.json",
        "paper/figures/regret_curves.pdf",
        "results/notebooks/regret_curves.html",
    ]
    for path in [
        *(f"results/tables/{t}.csv" for t in tables),
        *(f"paper/generated/table_{t}.tex" for t in tables),
        *generated,
    ]:
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
    result = subprocess.run(
        [*SNAKEMAKE, "--report", str(report), "--configfile", "config/smoke.yaml"],
        cwd=smoke_run,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    html = report.read_text()
    captions = _captions(html)
    figures = sorted((smoke_run / "paper" / "figures").glob("*.pdf"))
    config = resolve_config_file(smoke_run / "config" / "smoke.yaml")
    assert len(figures) >= 7
    for path in [*figures, *(smoke_run / "results" / "tables" / f"{table}.csv" for table in config["tables"])]:
        assert captions.get(path.name), f"{path.name}: not in the report, or without a caption"
        assert "{{" not in captions[path.name] and "{%" not in captions[path.name], path.name
        assert _embedded(path) in html, f"{path.name}: not embedded in the report"
    for table in config["tables"]:
        assert config["tables"][table]["caption"] in captions[f"{table}.csv"], table
    n_runs = config["experiments"]["synthetic"]["n_runs"]
    assert (
        f"{n_runs} runs" in captions["regret_curves.pdf"]
        and "one standard deviation over runs" in captions["regret_curves.pdf"]
    )


def test_every_input_of_the_paper_was_generated(smoke_run):
    import re

    tex = "\n".join(p.read_text() for p in (smoke_run / "paper").rglob("*.tex") if "generated" not in p.parts)
    for name in re.findall(r"\\input\{(generated/[^}]+)\}", tex):
        assert (smoke_run / "paper" / (name if name.endswith(".tex") else name + ".tex")).exists(), name
    for name in re.findall(r"\\includegraphics(?:\[[^]]*\])?\{([^}]+)\}", tex):
        assert (smoke_run / "paper" / name).exists(), name
    log = (smoke_run / "results" / "latex" / "main.log").read_text(errors="replace")
    assert "undefined" not in log.lower().replace("undefined control", "")
    from hare.report.paper import overfull_boxes

    assert overfull_boxes(log, 1.0) == [], "overfull \\hbox wider than 1 pt in the smoke paper"


def test_rerun_does_nothing_and_a_deleted_run_is_redone_identically(smoke_run):
    run = smoke_run / "results" / "runs" / "classification" / "mushroom" / "linucb.npz"
    before = run.read_bytes()
    dry = subprocess.run(
        [*SNAKEMAKE, "--cores", "1", "--configfile", "config/smoke.yaml", "--dry-run"],
        cwd=smoke_run,
        capture_output=True,
        text=True,
    )
    assert "Nothing to be done" in dry.stdout + dry.stderr
    run.unlink()
    target = str(run.relative_to(smoke_run))
    again = subprocess.run(
        [*SNAKEMAKE, target, "--cores", "2", "--configfile", "config/smoke.yaml"],
        cwd=smoke_run,
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert run.read_bytes() == before


def test_lint_is_clean(repository):
    result = subprocess.run(
        [*SNAKEMAKE, "--lint", "--configfile", "config/smoke.yaml"], cwd=repository, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Congratulations, your workflow is in a good condition!" in result.stdout + result.stderr


def test_bad_config_fails_before_any_job(repository, tmp_path):
    bad = tmp_path / "bad.yaml"
    good = (repository / "config" / "smoke.yaml").read_text()
    bad.write_text(
        good.replace(
            "linucb: {params: {lam: 1.0}, grid: {alpha: [0.1, 1.0]},",
            "linucb: {params: {lam: 1.0}, grid: {alpha: [-0.1, 1.0]},",
        )
    )
    (tmp_path / "default.yaml").write_bytes((repository / "config" / "default.yaml").read_bytes())  # the overlay's base
    assert bad.read_text() != good, "the smoke config no longer has the line this test breaks"
    result = subprocess.run(
        [*SNAKEMAKE, "--cores", "1", "--configfile", str(bad), "--dry-run"],
        cwd=repository,
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "alpha" in result.stdout + result.stderr


def test_a_yaml_syntax_error_is_one_line_naming_file_and_line_before_snakemake_runs(repository, tmp_path):
    """Snakemake reads every --configfile before the Snakefile and says of a YAML syntax error only that the file is
    not valid YAML; `make workflow` validates the config first (hare validate-config) and stops with one line naming
    the file and the line, before anything is written or Snakemake starts."""
    workdir = copy_repository(repository, tmp_path / "checkout")
    good = (repository / "config" / "smoke.yaml").read_text().splitlines(keepends=True)
    line = next(i for i, text in enumerate(good) if text == "base_seed: 7\n")
    bad = tmp_path / "broken.yaml"
    bad.write_text("".join([*good[:line], "base_seed: 7: 8\n", *good[line + 1 :]]))
    result = subprocess.run(
        ["make", "--no-print-directory", "workflow", f"CONFIG={bad}", f"BIN={Path(sys.executable).parent}"],
        cwd=workdir,
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    first = (result.stderr + result.stdout).strip().splitlines()[0]
    assert str(bad) in first and re.search(rf"\bline {line + 1}\b", first), result.stdout + result.stderr
    assert not (workdir / "results" / "logs").exists() and not (workdir / ".snakemake").exists()


ON_DEMAND_RULES = {"all", "claim"}
"""Rules outside the default target's graph: the target itself and `make claim`'s one-claim rule."""


def _summary(workdir: Path) -> dict[str, str]:
    """``{output file: rule}`` of every job in the default target's graph (``snakemake --summary``)."""
    result = subprocess.run(
        [*SNAKEMAKE, "--summary", "--configfile", "config/smoke.yaml"], cwd=workdir, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-3000:]
    rows = [line.split("\t") for line in result.stdout.splitlines()[1:] if line.strip()]
    return {row[0]: row[2] for row in rows}


def _planned(workdir: Path) -> str:
    result = subprocess.run(
        [*SNAKEMAKE, "--dry-run", "--cores", "1", "--configfile", "config/smoke.yaml"],
        cwd=workdir,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout + result.stderr


def _planned_rules(plan: str) -> list[str]:
    return sorted(re.findall(r"^(?:local)?rule (\S+):", plan, flags=re.MULTILINE))


def test_every_rule_is_in_the_default_graph_and_a_deleted_output_of_each_is_planned_again(smoke_run, tmp_path):
    """Snakemake leaves a deleted file alone when its consumers are up to date; every declared output is a target of
    `rule all`, so one deleted output of every rule (none of the final targets: claims, notebooks' HTML, the PDF, the
    manifest, whose absence would force their inputs anyway) is planned again."""
    listed = subprocess.run(
        [*SNAKEMAKE, "--list-rules", "--configfile", "config/smoke.yaml"], cwd=smoke_run, capture_output=True, text=True
    )
    rules = {line.split()[0] for line in listed.stdout.splitlines() if re.match(r"^[a-z_0-9]+(\s|$)", line)}
    outputs = _summary(smoke_run)
    assert "claim" in rules and rules - set(outputs.values()) <= ON_DEMAND_RULES
    final = {"results/claims.md", "results/paper.pdf", "results/MANIFEST.sha256"} | {
        p for p in outputs if p.startswith("results/notebooks/") and p.endswith(".html")
    }
    one_per_rule = {}
    for path, rule in outputs.items():
        if path not in final and (smoke_run / path).is_file() and rule not in one_per_rule:
            one_per_rule[rule] = path
    assert set(outputs.values()) - set(one_per_rule) <= {"manifest", "render_notebook", "paper_pdf"}
    before = _planned_rules(_planned(smoke_run))
    for rule, path in one_per_rule.items():
        (tmp_path / rule).mkdir()
        (smoke_run / path).rename(tmp_path / rule / "kept")
    plan = _planned(smoke_run)
    for rule, path in one_per_rule.items():
        (tmp_path / rule / "kept").rename(smoke_run / path)
    missing = [
        f"{rule}: {path}"
        for rule, path in one_per_rule.items()
        if not re.search(rf"Missing output files:[^\n]*{re.escape(path)}", plan)
    ]
    assert not missing, missing
    assert _planned_rules(_planned(smoke_run)) == before


def test_a_deleted_output_of_each_kind_is_rebuilt_by_a_plain_rerun(smoke_run):
    """One run file, one table, one figure, the macros, the claims and the PDF deleted together: a plain rerun of the
    default target exits 0 and every one of them is back (the run file byte for byte)."""
    kinds = [
        "results/runs/classification/mushroom/linucb.npz",
        "results/tables/sensitivity.csv",
        "paper/figures/runtime.pdf",
        "paper/generated/macros.tex",
        "results/claims.md",
        "results/paper.pdf",
    ]
    run_bytes = (smoke_run / kinds[0]).read_bytes()
    for path in kinds:
        (smoke_run / path).unlink()
    result = subprocess.run(
        [*SNAKEMAKE, "--cores", "2", "--configfile", "config/smoke.yaml"], cwd=smoke_run, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert [path for path in kinds if not (smoke_run / path).is_file()] == []
    assert (smoke_run / kinds[0]).read_bytes() == run_bytes
    assert "Nothing to be done" in _planned(smoke_run)


def test_bit_rot_is_found_repaired_and_rebuilt_through_the_workflow(smoke_run):
    """A flipped byte in a run file with its mtime kept: Snakemake sees nothing to do, `hare verify` names the file,
    `--repair` deletes it with its sidecar, the next plain run rebuilds it (byte for byte) and what follows, and the
    new manifest verifies."""
    run = smoke_run / "results" / "runs" / "synthetic" / "synthetic_linear" / "linucb.npz"
    original = run.read_bytes()
    stat = run.stat()
    middle = len(original) // 2
    run.write_bytes(original[:middle] + bytes([original[middle] ^ 0xFF]) + original[middle + 1 :])
    os.utime(run, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert "Nothing to be done" in _planned(smoke_run)
    hare = [sys.executable, "-m", "hare", "verify", "--results", "results"]
    found = subprocess.run(hare, cwd=smoke_run, capture_output=True, text=True)
    assert found.returncode == 1 and "runs/synthetic/synthetic_linear/linucb.npz" in found.stdout
    repaired = subprocess.run([*hare, "--repair"], cwd=smoke_run, capture_output=True, text=True)
    assert "removed: runs/synthetic/synthetic_linear/linucb.npz" in repaired.stdout, repaired.stdout + repaired.stderr
    assert not run.exists()
    result = subprocess.run(
        [*SNAKEMAKE, "--cores", "2", "--configfile", "config/smoke.yaml"], cwd=smoke_run, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert run.read_bytes() == original
    assert subprocess.run(hare, cwd=smoke_run, capture_output=True, text=True).returncode == 0


def test_a_kept_mtime_edit_of_a_generated_table_and_a_figure_is_found_repaired_and_rebuilt(smoke_run):
    """The manifest lists every generated paper file the workflow declares (as ``../paper/...``). One character of a
    generated table and one byte of a figure changed with their times kept: Snakemake sees nothing to do, `hare verify`
    names both as changed, `--repair` deletes them, a dry run plans their rules, the next plain run rebuilds them byte
    for byte, and the new manifest verifies."""
    from hare.experiments.manifest import read_manifest

    listed = {
        p.removeprefix("../") for p in read_manifest(smoke_run / "results" / "MANIFEST.sha256") if p.startswith("../")
    }
    assert listed == {p for p in _summary(smoke_run) if p.startswith("paper/")}
    damaged = {
        "paper/generated/table_synthetic.tex": "table",
        "paper/figures/regret_curves.pdf": "execute_regret_curves",
    }
    originals = {path: (smoke_run / path).read_bytes() for path in damaged}
    for path, data in originals.items():
        stat = (smoke_run / path).stat()
        middle = len(data) // 2
        (smoke_run / path).write_bytes(data[:middle] + bytes([data[middle] ^ 0x01]) + data[middle + 1 :])
        os.utime(smoke_run / path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert "Nothing to be done" in _planned(smoke_run)
    hare = [sys.executable, "-m", "hare", "verify", "--results", "results"]
    found = subprocess.run(hare, cwd=smoke_run, capture_output=True, text=True)
    assert found.returncode == 1 and sorted(line.split(" (")[0] for line in found.stdout.splitlines()) == [
        f"changed: ../{p}" for p in sorted(damaged)
    ], found.stdout
    repaired = subprocess.run([*hare, "--repair"], cwd=smoke_run, capture_output=True, text=True)
    assert all(f"removed: ../{path} (snakemake rebuilds it)" in repaired.stdout for path in damaged), (
        repaired.stdout + repaired.stderr
    )
    assert not any((smoke_run / path).exists() for path in damaged)
    assert set(damaged.values()) <= set(_planned_rules(_planned(smoke_run)))
    result = subprocess.run(
        [*SNAKEMAKE, "--cores", "2", "--configfile", "config/smoke.yaml"], cwd=smoke_run, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert {path: (smoke_run / path).read_bytes() for path in damaged} == originals
    assert subprocess.run(hare, cwd=smoke_run, capture_output=True, text=True).returncode == 0
