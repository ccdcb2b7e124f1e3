"""The ``hare`` command line: every subcommand answers ``--help``, and the passthrough commands reach
their module's parser with the arguments given (``hare device-check`` runs on CPU)."""

from __future__ import annotations

import json

import pytest

from hare import cli
from hare.experiments.run import run_job

SUBCOMMANDS = sorted(cli.build_parser()._subparsers._group_actions[0].choices)  # noqa: SLF001


@pytest.mark.parametrize("name", SUBCOMMANDS + sorted(cli.PASSTHROUGH))
def test_every_subcommand_answers_help(name, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main([name, "--help"])
    assert exit_info.value.code == 0
    assert "usage:" in capsys.readouterr().out


def test_device_check_runs_with_its_arguments(tmp_path):
    out = tmp_path / "device_check.json"
    assert cli.main(["device-check", "--out", str(out), "--n-runs", "2", "--horizon", "3"]) == 0
    report = json.loads(out.read_text())
    assert [case["policy"] for case in report["cases"]][:2] == ["random", "linucb"]
    assert all(len(case["cpu"]["total_regret"]) == 2 for case in report["cases"])


def test_a_corrupt_result_file_is_one_line_naming_it(tmp_path, capsys):
    spec = {"experiment": "e", "label": "linucb@alpha=1.0", "policy": "linucb", "params": {"alpha": 1.0}, "n_runs": 2, "role": "tuning",
            "environment": {"name": "s", "kind": "synthetic", "params": {"n_items": 6, "n_clusters": 2, "n_users": 2}, "dataset": None, "horizon": 5},
            "base_seed": 0, "device": "cpu", "record_every": 5}
    bad = tmp_path / "linucb@alpha=1.0.npz"
    run_job(spec, bad, progress=False)
    bad.write_bytes(bad.read_bytes()[:40])
    assert cli.main(["select", str(bad), "--out", str(tmp_path / "selected.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("hare select: error:") and str(bad) in err[0]
    assert not (tmp_path / "selected.json").exists()


def test_an_os_error_is_one_line(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert cli.main(["manifest", "--results", str(blocker / "inside")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("hare manifest: error:")


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_shows_the_traceback_of_the_one_line_error(tmp_path, capsys, where):
    missing = str(tmp_path / "missing.yaml")
    assert cli.main(["validate-config", missing]) == 2
    assert capsys.readouterr().err.strip() == f"hare validate-config: error: config file {missing} does not exist"
    argv = ["--debug", "validate-config", missing] if where == "before" else ["validate-config", missing, "--debug"]
    with pytest.raises(FileNotFoundError, match="does not exist"):
        cli.main(argv)
