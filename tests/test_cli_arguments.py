"""Every argument of every ``hare`` subcommand is checked when it is parsed, before any work (issue 51): the parser
is read, so a new subcommand or argument is covered without a new test. Each argument has a type of
:mod:`hare.cli.arguments`, a fixed set of choices, or takes free text (:data:`hare.cli.arguments.FREE_TEXT`); a bad
value of its type is refused in one line naming the argument, exit status 2, within a second, and nothing is created.
``hare compare-builds`` checks each build's files against its manifest, not only the manifests against each other."""

from __future__ import annotations

import argparse
import shutil
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

import hare.data.registry  # noqa: F401  (the types that read a registry import it once: timed refusals are not imports)
import hare.experiments.studies.bench_baselines  # noqa: F401
import hare.policies  # noqa: F401
from hare import cli
from hare.cli import arguments
from hare.experiments.manifest import write_manifest
from hare.io import write_result

FLAGS = (argparse._HelpAction, argparse._StoreTrueAction, argparse._StoreFalseAction)  # noqa: SLF001
PARSER = cli.build_parser()
SUBCOMMANDS = next(a for a in PARSER._actions if isinstance(a, argparse._SubParsersAction)).choices  # noqa: SLF001
ROOT_ARGUMENTS = [a for a in PARSER._actions if not isinstance(a, (*FLAGS, argparse._SubParsersAction))]  # noqa: SLF001
ARGUMENTS = [
    (command, action)
    for command, parser in sorted(SUBCOMMANDS.items())
    for action in parser._actions  # noqa: SLF001
    if not isinstance(action, FLAGS)
]

BAD_VALUES = {
    arguments.output_file: ["missing/out.json", "folder"],
    arguments.output_dir: ["missing/out", "text.md"],
    arguments.input_file: ["missing.txt", "folder"],
    arguments.config_file: ["missing.yaml", "folder", "text.md"],
    arguments.json_file: ["missing.json", "folder", "text.md"],
    arguments.npz_file: ["missing.npz", "folder", "text.md", "archive.zip"],
    arguments.existing_dir: ["missing", "text.md"],
    arguments.optional_dir: ["text.md"],
    arguments.positive_int: ["nan", "x", "0"],
    arguments.nonnegative_int: ["nan", "x", "-1"],
    arguments.finite_float: ["nan", "x"],
    arguments.positive_float: ["nan", "x", "0"],
    arguments.probability: ["nan", "x", "2"],
    arguments.section_name: ["Nope!"],
    arguments.name_list: ["nope,Nope!"],
    arguments.batch_name: ["nope", "nope/Nope!"],
    arguments.sha256_hex: ["abc"],
    arguments.dataset_name: ["nope"],
    arguments.policy_name: ["nope"],
    arguments.baseline_policy: ["nope", "linucb"],
    arguments.device: ["tpu", "cuda:x"],
    arguments.named_npz: ["nope", "toy=missing.npz", "toy=text.md", "Nope!=archive.zip"],
    arguments.policy_param: ["linucb.alpha=nan", "nope.alpha=1", "linucb.nope=1", "linucb.alpha=x", "x"],
    arguments.json_object: ["{", "[1]"],
    arguments.code_spec: ["x", "{}"],
    arguments.path_list: ["x", "[]"],
}
"""Bad values of each argument type, by the kind of mistake: an output in a missing folder or onto a folder, a
missing or wrong-kind input, a number that is not one or out of its range, an unknown name."""


def name_of(action: argparse.Action) -> str:
    """How argparse names an argument in its error: its options, else its metavar or destination."""
    return "/".join(action.option_strings) or action.metavar or action.dest


GOOD_VALUES = {arguments.existing_dir: "folder"}
"""A good value of the type of a positional argument that comes before another (compare-builds' ``old``)."""


def _before(command: str | None, action: argparse.Action) -> list[str]:
    """``command`` and good values of the positional arguments before ``action``, a positional one."""
    if command is None:
        return []
    if action.option_strings:
        return [command]
    positionals = [a for a in SUBCOMMANDS[command]._actions if not a.option_strings]  # noqa: SLF001
    return [command, *(GOOD_VALUES[a.type] for a in positionals[: positionals.index(action)])]


def bad_cases() -> list:
    """``pytest.param(argv, argument name)`` for each bad value of each argument (choices: an unknown one)."""
    cases = []
    for command, action in [(None, action) for action in ROOT_ARGUMENTS] + ARGUMENTS:
        if action.dest in arguments.FREE_TEXT:
            continue
        for value in ["nope"] if action.choices else BAD_VALUES.get(action.type, []):
            argv = [*_before(command, action), *action.option_strings[:1], value]
            cases.append(pytest.param(argv, name_of(action), id=" ".join(argv)))
    return cases


def test_every_argument_has_a_checked_type_or_choices_or_is_free_text():
    unchecked = [
        f"{command} {name_of(action)}"
        for command, action in ARGUMENTS
        if not action.choices
        and action.dest not in arguments.FREE_TEXT
        and getattr(action.type, "__module__", None) != arguments.__name__
    ]
    assert not unchecked, f"arguments without a type of hare.cli.arguments, choices or a FREE_TEXT entry: {unchecked}"
    assert arguments.FREE_TEXT <= {action.dest for _, action in ARGUMENTS}  # no stale entry


def test_every_argument_type_has_bad_values():
    types = {action.type for _, action in ARGUMENTS + [(None, a) for a in ROOT_ARGUMENTS] if action.type}
    assert types <= set(BAD_VALUES), sorted(t.__name__ for t in types - set(BAD_VALUES))


def _tree(root: Path) -> list[str]:
    return sorted(path.relative_to(root).as_posix() for path in root.rglob("*"))


@pytest.fixture
def workplace(tmp_path, monkeypatch) -> Path:
    """An empty folder as the working directory, with a folder, a text file and a zip archive that is not an npz."""
    (tmp_path / "folder").mkdir()
    (tmp_path / "text.md").write_text("# Not a run file\n")
    with zipfile.ZipFile(tmp_path / "archive.zip", "w") as archive:
        archive.writestr("notes.txt", "not an array")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(("argv", "name"), bad_cases())
def test_a_bad_value_is_refused_in_one_line_naming_the_argument_before_any_work(workplace, capsys, argv, name):
    before = _tree(workplace)
    start = time.perf_counter()
    status = cli.main(argv)
    seconds = time.perf_counter() - start
    lines = capsys.readouterr().err.splitlines()
    assert status == 2
    prog = "hare" if argv[0].startswith("-") else f"hare {argv[0]}"
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: error: argument {name}: "), lines
    assert seconds < 1.0
    assert _tree(workplace) == before


def _build(root: Path) -> Path:
    """A finished build's results folder: three run files with their sidecars, a table, and its manifest."""
    results = root / "results"
    for label in ("a", "b", "c"):
        write_result(results / "runs" / "e" / "s" / f"{label}.npz", {"regret": np.arange(4.0)}, {"label": label})
    (results / "tables").mkdir()
    (results / "tables" / "t.csv").write_text("policy,regret\nlinucb,1.5\n")
    write_manifest(results)
    return results


def test_compare_builds_reports_a_deleted_and_a_damaged_run_file(tmp_path, capsys):
    """Two copies of one build compared their manifests only: "0 difference(s)" with half the run files gone."""
    old = _build(tmp_path / "old")
    new = tmp_path / "new" / "results"
    shutil.copytree(old, new)
    assert cli.main(["compare-builds", str(old), str(new)]) == 0
    capsys.readouterr()
    (new / "runs" / "e" / "s" / "a.npz").unlink()
    damaged = new / "runs" / "e" / "s" / "b.npz"
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte
    damaged.write_bytes(bytes(data))
    assert cli.main(["compare-builds", str(old), str(new)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{new}: missing: 1 file(s) (runs/e/s/a.npz)",
        f"{new}: damaged (sha256 differs from its manifest): 1 file(s) (runs/e/s/b.npz)",
    ]
