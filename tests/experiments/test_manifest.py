"""The manifest covers the generated paper files beside the results: a kept-mtime edit of a generated table or a
figure is found and repaired, hand-written paper sources are left to git, and the timed ones are provenance.

The manifest's checks of result files alone (flipped, missing and extra files, damaged run files) are in
``tests/workflow/test_job_faults.py``."""

import json
import os
import subprocess

import pytest

from hare import cli
from hare.experiments.manifest import (
    PAPER_DIRS,
    compare_builds,
    is_provenance_file,
    read_manifest,
    reproducible_part,
    verify,
    write_manifest,
)
from hare.experiments.studies.outputs import PROVENANCE_FILES, TIMED_OUTPUTS

GENERATED = {
    "results/tables/synthetic.csv": "policy,regret\nlinucb,1.5\n",
    "results/claims.md": "# Claims\n",
    "paper/generated/table_synthetic.tex": "\\begin{tabular}{lr} LinUCB & 1.5 \\end{tabular}\n",
    "paper/generated/macros.tex": "\\newcommand{\\nruns}{20}\n",
    "paper/figures/regret_curves.pdf": "%PDF-1.5 regret curves\n",
}
HAND_WRITTEN = {"paper/main.tex": "\\input{generated/macros}\n", "paper/sections/method.tex": "Method.\n"}


@pytest.fixture
def build(tmp_path):
    """A finished build in ``tmp_path``: results, generated paper files, hand-written sources, and the manifest."""
    for relative, text in {**GENERATED, **HAND_WRITTEN}.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    write_manifest(tmp_path / "results")
    return tmp_path


def _edit_keeping_mtime(path):
    """Change one character of ``path`` and restore its access and modification times (what Snakemake cannot see)."""
    stat = path.stat()
    data = path.read_bytes()
    path.write_bytes(data[:-2] + bytes([data[-2] ^ 0x01]) + data[-1:])
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_the_manifest_lists_generated_paper_files_and_not_the_hand_written_sources(build):
    entries = read_manifest(build / "results" / "MANIFEST.sha256")
    assert sorted(entries) == [
        "../paper/figures/regret_curves.pdf",
        "../paper/generated/macros.tex",
        "../paper/generated/table_synthetic.tex",
        "claims.md",
        "tables/synthetic.csv",
    ]
    assert verify(build / "results") == []


def test_the_manifest_stays_sha256sum_compatible_from_inside_results(build):
    result = subprocess.run(
        ["sha256sum", "--check", "--strict", "MANIFEST.sha256"], cwd=build / "results", capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "../paper/generated/table_synthetic.tex: OK" in result.stdout


@pytest.mark.parametrize("relative", ["paper/generated/table_synthetic.tex", "paper/figures/regret_curves.pdf"])
def test_a_kept_mtime_edit_of_a_generated_paper_file_is_changed_and_repaired(build, relative):
    """One character edited, its times restored: `verify` names it as changed; `--repair` deletes it, and only it."""
    path = build / relative
    _edit_keeping_mtime(path)
    problems = verify(build / "results")
    assert len(problems) == 1 and problems[0].startswith(f"changed: ../{relative} (sha256 "), problems
    assert verify(build / "results", repair=True)[-1] == f"removed: ../{relative} (snakemake rebuilds it)"
    assert not path.exists()
    assert all((build / other).is_file() for other in {**GENERATED, **HAND_WRITTEN} if other != relative)
    assert verify(build / "results") == [f"missing: ../{relative}"]


def test_an_edited_hand_written_source_is_git_s_business_and_a_new_figure_is_extra(build):
    (build / "paper" / "sections" / "method.tex").write_text("Method, edited.\n")
    (build / "paper" / "figures" / "new.pdf").write_text("%PDF-1.5 new\n")
    assert verify(build / "results") == ["extra: ../paper/figures/new.pdf (not in the manifest)"]


def test_the_paper_folder_beside_a_symlinked_results_folder_is_covered(build, tmp_path_factory):
    """``..`` is read lexically: the paper files beside ``results`` as the workflow writes them, even where ``results``
    is a link to a folder elsewhere (scratch storage on a cluster)."""
    elsewhere = tmp_path_factory.mktemp("scratch") / "results"
    (build / "results").rename(elsewhere)
    (build / "results").symlink_to(elsewhere, target_is_directory=True)
    assert verify(build / "results") == []
    _edit_keeping_mtime(build / "paper" / "generated" / "macros.tex")
    assert verify(build / "results")[0].startswith("changed: ../paper/generated/macros.tex")


def test_verify_of_a_missing_results_directory_is_one_line(tmp_path, capsys):
    missing = tmp_path / "no" / "such" / "dir"
    assert cli.main(["verify", "--results", str(missing)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.strip().splitlines() == [
        f"hare verify: error: argument --results: {missing}: does not exist"
    ]


def test_the_timed_paper_files_are_provenance_and_the_others_reproducible(repository):
    """Every table of a timed kind (compute, scaling, replay) in any config, CSV and LaTeX, the benchmark and claims
    tables and the runtime figure differ between runs by design; other generated tables and figures do not."""
    from hare.experiments.config import resolve_config_file

    for config in sorted(path for path in (repository / "config").glob("*.yaml") if path.name != "schema.yaml"):
        for name, table in (resolve_config_file(config).get("tables") or {}).items():
            timed = table["kind"] in ("compute", "scaling", "replay")
            assert (
                is_provenance_file(f"../paper/generated/table_{name}.tex", PROVENANCE_FILES)
                == timed
                == is_provenance_file(f"tables/{name}.csv", PROVENANCE_FILES)
            ), f"{config.name}: {name}"
    timed = [
        "../paper/generated/claims.tex",
        "../paper/generated/table_bench.tex",
        "../paper/generated/table_bench_hare.tex",
        "../paper/generated/table_bench_baselines.tex",
        "bench/baselines.json",
        "../paper/figures/runtime.pdf",
    ]
    steady = [
        "../paper/generated/macros.tex",
        "../paper/generated/bounds.tex",
        "../paper/figures/regret_curves.pdf",
        "../paper/figures/claims_matrix.pdf",
    ]
    assert reproducible_part(dict.fromkeys(timed + steady, "0" * 64), PROVENANCE_FILES) == dict.fromkeys(
        steady, "0" * 64
    )


def test_the_covered_paper_folders_hold_only_workflow_outputs(repository):
    """The rule that makes every file of PAPER_DIRS a workflow output: git tracks nothing in them and ignores them."""
    for folder in PAPER_DIRS:
        assert folder.startswith("../paper/")
        inside = folder.removeprefix("../")
        tracked = subprocess.run(
            ["git", "ls-files", "--", inside], cwd=repository, capture_output=True, text=True, check=True
        ).stdout
        assert tracked == "", f"{inside}: tracked files {tracked.split()}"
        ignored = subprocess.run(["git", "check-ignore", "--quiet", "--no-index", f"{inside}/any.tex"], cwd=repository)
        assert ignored.returncode == 0, f"{inside} is not ignored by .gitignore"


def _notebook(code: str, output: str) -> str:
    cell = {"cell_type": "code", "source": code, "outputs": [{"output_type": "stream", "text": output}]}
    return json.dumps({"cells": [cell]})


def _build_copy(tmp_path, name, edits):
    """A finished build under ``tmp_path / name``: GENERATED plus two notebooks, with ``edits`` applied."""
    files = {
        **GENERATED,
        "results/notebooks/curves.ipynb": _notebook("plot(x)", "R = 1.5"),
        "results/notebooks/curves.html": "<pre>plot(x)</pre><pre>R = 1.5</pre>",
        "results/bench/linucb.json": '{"seconds": 1.0}',
        **edits,
    }
    root = tmp_path / name
    for relative, text in files.items():
        if text is None:
            continue
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    write_manifest(root / "results")
    return root / "results"


def test_compare_builds_tells_a_change_of_results_from_a_change_of_notebook_code_only(tmp_path):
    old = _build_copy(tmp_path, "old", {})
    assert compare_builds(old, _build_copy(tmp_path, "same", {}), PROVENANCE_FILES) == []
    # a timed file (provenance) may differ
    assert (
        compare_builds(
            old, _build_copy(tmp_path, "timed", {"results/bench/linucb.json": '{"seconds": 2.0}'}), PROVENANCE_FILES
        )
        == []
    )
    recoded = {
        "results/notebooks/curves.ipynb": _notebook("plot(\n    x\n)", "R = 1.5"),
        "results/notebooks/curves.html": "<pre>plot(\n    x\n)</pre><pre>R = 1.5</pre>",
    }
    assert compare_builds(old, _build_copy(tmp_path, "recoded", recoded), PROVENANCE_FILES) == [
        "sources only: notebooks/curves.html",
        "sources only: notebooks/curves.ipynb",
    ]
    changed = {
        "results/notebooks/curves.ipynb": _notebook("plot(x)", "R = 1.6"),
        "paper/generated/macros.tex": "\\newcommand{\\nruns}{21}\n",
        "results/tables/synthetic.csv": None,
    }
    assert compare_builds(old, _build_copy(tmp_path, "changed", changed), PROVENANCE_FILES) == [
        "only in old: tables/synthetic.csv",
        "differs: ../paper/generated/macros.tex",
        "differs: notebooks/curves.ipynb",
    ]


NOTATION = (
    "# Notation\n\n| Symbol | Meaning | Config field | Code identifier | Result key |\n|---|---|---|---|---|\n"
    "| $d$ | context dimension | -- | `{code}` | `oful.json: d` |\n| $\\|x\\|$ | norm | -- | `{code}.norm` | -- |\n"
)


def test_compare_builds_tells_a_moved_code_identifier_from_a_changed_symbol_in_the_notation_table(tmp_path, capsys):
    """A refactoring that moves the code a symbol names changes the notation table's code column only: reported as
    such, exit 0; a changed symbol, meaning or result key is a difference (exit 1)."""
    old = _build_copy(tmp_path, "old", {"results/notation.md": NOTATION.format(code="hare.grid:dim")})
    moved = _build_copy(tmp_path, "moved", {"results/notation.md": NOTATION.format(code="hare.settings:dim")})
    assert compare_builds(old, moved, PROVENANCE_FILES) == ["code identifiers only: notation.md"]
    assert cli.main(["compare-builds", str(old), str(moved)]) == 0
    renamed = NOTATION.format(code="hare.settings:dim").replace("context dimension", "feature dimension")
    changed = _build_copy(tmp_path, "changed", {"results/notation.md": renamed})
    assert compare_builds(old, changed, PROVENANCE_FILES) == ["differs: notation.md"]
    assert cli.main(["compare-builds", str(old), str(changed)]) == 1
    capsys.readouterr()


def test_compare_builds_on_the_command_line_exits_one_on_a_difference(tmp_path, capsys):
    old = _build_copy(tmp_path, "old", {})
    assert cli.main(["compare-builds", str(old), str(_build_copy(tmp_path, "same", {}))]) == 0
    new = _build_copy(tmp_path, "new", {"results/tables/synthetic.csv": "policy,regret\nlinucb,1.6\n"})
    assert cli.main(["compare-builds", str(old), str(new)]) == 1
    assert "differs: tables/synthetic.csv" in capsys.readouterr().out


PROVENANCE_FILES_BEFORE_THE_DECLARATIONS = (
    "runs/*.json",
    "tuning/*.json",
    "notebooks/runtime.ipynb",
    "notebooks/runtime.html",
    "bench/*",
    "tables/compute.csv",
    "tables/scaling.csv",
    "tables/exploration_sweep.csv",
    "tables/replay.csv",
    "checks/personalization.json",
    "checks/cost_growth.json",
    "checks/pool_scaling.json",
    "claims.md",
    "claims.json",
    "paper.pdf",
    "../paper/generated/table_bench*.tex",
    "../paper/generated/table_compute.tex",
    "../paper/generated/table_scaling.tex",
    "../paper/generated/table_exploration_sweep.tex",
    "../paper/generated/table_replay.tex",
    "../paper/generated/claims.tex",
    "../paper/generated/pool_scaling.tex",
    "../paper/figures/runtime.pdf",
    "../paper/figures/pool_scaling.pdf",
    "notebooks/pool_scaling.ipynb",
    "notebooks/pool_scaling.html",
    "../paper/generated/cost_growth.tex",
    "../paper/figures/cost_growth.pdf",
    "notebooks/cost_growth.ipynb",
    "notebooks/cost_growth.html",
)
"""The hand-kept list the manifest held before each producer declared its timed files."""


def test_the_declared_timed_files_are_the_hand_kept_list_they_replace():
    assert len(PROVENANCE_FILES) == len(set(PROVENANCE_FILES))
    assert set(PROVENANCE_FILES) == set(PROVENANCE_FILES_BEFORE_THE_DECLARATIONS)


def test_every_producer_declares_why_and_what():
    for outputs in TIMED_OUTPUTS:
        assert outputs.producer and outputs.why and outputs.patterns, outputs
    patterns = [pattern for outputs in TIMED_OUTPUTS for pattern in outputs.patterns]
    assert len(patterns) == len(set(patterns)), "a timed file declared by two producers"


def test_the_manifest_compares_with_the_patterns_it_is_given(tmp_path):
    """The manifest holds no list of timed files: a build differing in a file outside ``timed`` differs."""
    assert is_provenance_file("bench/linucb.json", PROVENANCE_FILES)
    assert not is_provenance_file("bench/linucb.json", ())
    old = _build_copy(tmp_path, "old", {})
    new = _build_copy(tmp_path, "timed", {"results/bench/linucb.json": '{"seconds": 2.0}'})
    assert compare_builds(old, new, PROVENANCE_FILES) == []
    assert compare_builds(old, new, ()) == ["differs: bench/linucb.json"]
