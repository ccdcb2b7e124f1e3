"""Step records and their check (:mod:`hare.cli.code`): a record of the code now passes, a record whose module
digest differs is one line naming the module, a covered file without any record is named, a fetched folder is covered
by its step's record; the workflow's rules all pass their code and outputs to ``hare --record``."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hare.cli.code import command_code, stale_results, write_record

ROOT = Path(__file__).resolve().parents[1]


def _build(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    (results / "data/raw/x").mkdir(parents=True)
    (results / "data/raw/x/file.csv").write_text("1\n")
    (results / "data/raw/x/MANIFEST.json").write_text("{}")
    (tmp_path / "paper/generated").mkdir(parents=True)
    (tmp_path / "paper/generated/bounds.tex").write_text("% bounds\n")
    write_record({"command": "bounds"}, ["paper/generated/bounds.tex"], results)
    write_record({"command": "fetch"}, ["results/data/raw/x/MANIFEST.json", "results/data/raw/x/"], results)
    return results


def test_records_of_the_code_now_pass(tmp_path):
    assert stale_results(_build(tmp_path)) == []


def test_a_changed_module_is_named_with_its_files(tmp_path):
    results = _build(tmp_path)
    (record,) = (results / "code").glob("paper__generated__bounds.tex.json")
    content = json.loads(record.read_text())
    content["code"]["modules"]["hare.theory.bounds"] = "0" * 16
    record.write_text(json.dumps(content))
    ((line, files),) = stale_results(results)
    assert line.startswith("computed by other code: 1 file(s)") and line.endswith("changed since: hare.theory.bounds")
    assert files == [str(tmp_path / "paper/generated/bounds.tex")]


def test_a_file_without_a_record_is_named(tmp_path):
    results = _build(tmp_path)
    (tmp_path / "paper/generated/orphan.tex").write_text("%\n")
    ((line, files),) = stale_results(results)
    assert line.startswith("no code record: 1 file(s)") and files == [str(tmp_path / "paper/generated/orphan.tex")]


def test_a_command_record_holds_its_handler_and_arguments():
    modules = command_code("bounds")
    assert "hare.cli.theory:cmd_bounds" in modules and "hare bounds: arguments" in modules


def test_every_rule_that_runs_hare_records_its_code_and_outputs():
    for path in sorted((ROOT / "rules").glob("*.smk")):
        for block in re.split(r"\n(?=rule |checkpoint |    rule:)", path.read_text()):
            calls = re.findall(
                r"\{params\.hare\}( --record \{params\.code:q\} --outputs \{params\.outputs:q\})?", block
            )
            if not calls:
                continue
            assert all(calls), f"{path.name}: {block[:80]}"
            assert re.search(r"^\s*code=", block, re.MULTILINE) and re.search(r"^\s*outputs=", block, re.MULTILINE)
