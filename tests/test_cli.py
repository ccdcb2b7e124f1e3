"""The ``hare`` command line: every subcommand answers ``--help``, and the passthrough commands reach
their module's parser with the arguments given (``hare device-check`` runs on CPU)."""

from __future__ import annotations

import json

import pytest

from hare import cli

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
