"""The ``hare`` command line: every subcommand answers ``--help``, every subcommand and option the workflow's
rules call exists, arguments reach the library (``hare device-check`` runs on CPU), errors are one line
(``--debug`` shows the traceback), and no module outside ``hare.cli`` parses a command line."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from hare import cli
from hare.experiments.job_spec import JobSpec
from hare.experiments.run import run_job

ROOT = Path(__file__).resolve().parents[1]
PARSERS = cli.build_parser()._subparsers._group_actions[0].choices  # noqa: SLF001
SUBCOMMANDS = sorted(PARSERS)


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_every_subcommand_answers_help(name, capsys):
    assert cli.main([name, "--help"]) == 0
    assert capsys.readouterr().out.startswith(f"usage: hare {name} ")


def rule_calls() -> list[tuple[str, set[str], set[str]]]:
    """``(rule, subcommands, options)`` for every rule of ``rules/*.smk`` that runs ``{params.hare} <subcommand>``: the
    subcommands it calls and every ``--option`` spelled anywhere in the rule (its shell line and its params)."""
    found = []
    for path in sorted((ROOT / "rules").glob("*.smk")):
        for block in re.split(r"\n(?=rule |checkpoint )", path.read_text()):
            calls = set(
                re.findall(
                    r"\{params\.hare\} (?:--record \{params\.code:q\} --outputs \{params\.outputs:q\} )?([a-z][a-z-]*)",
                    block,
                )
            )
            if calls:
                found.append(
                    (
                        f"{path.name}: {block.split(':')[0].strip()[:60]}",
                        calls,
                        set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", block)),
                    )
                )
    return found


def test_every_subcommand_and_option_the_rules_call_exists():
    calls = rule_calls()
    assert {"decomposition", "convergence", "bench", "approx-budget", "run-batch"} <= set().union(
        *(names for _, names, _ in calls)
    )
    for rule, names, options in calls:
        assert names <= set(SUBCOMMANDS), rule
        known = {flag for name in names for action in PARSERS[name]._actions for flag in action.option_strings}  # noqa: SLF001
        known |= {flag for action in cli.build_parser()._actions for flag in action.option_strings}  # noqa: SLF001
        assert options <= known, f"{rule}: {sorted(options - known)}"


def test_only_the_cli_imports_argparse():
    source = ROOT / "src" / "hare"
    importers = []
    for path in sorted(source.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(name and name.split(".")[0] == "argparse" for name in names):
                importers.append(path.relative_to(source).as_posix())
    assert importers and all(path.startswith("cli/") for path in importers), importers


def test_device_check_runs_with_its_arguments(tmp_path):
    out = tmp_path / "device_check.json"
    assert cli.main(["device-check", "--out", str(out), "--n-runs", "2", "--horizon", "3"]) == 0
    report = json.loads(out.read_text())
    assert [case["policy"] for case in report["cases"]][:2] == ["random", "linucb"]
    assert all(len(case["cpu"]["total_regret"]) == 2 for case in report["cases"])


def test_a_corrupt_result_file_is_one_line_naming_it(tmp_path, capsys):
    spec = {
        "experiment": "e",
        "label": "linucb@alpha=1.0",
        "policy": "linucb",
        "params": {"alpha": 1.0},
        "n_runs": 2,
        "role": "tuning",
        "environment": {
            "name": "s",
            "kind": "synthetic",
            "params": {"n_items": 6, "n_clusters": 2, "n_users": 2},
            "dataset": None,
            "horizon": 5,
        },
        "base_seed": 0,
        "device": "cpu",
        "record_every": 5,
        "regime": "cold",
        "n_logged": 0,
    }
    bad = tmp_path / "linucb@alpha=1.0.npz"
    run_job(JobSpec.from_dict(spec), bad, progress=False)
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
    bad = tmp_path / "duplicate.yaml"
    bad.write_text("base_seed: 7\nbase_seed: 8\n")
    assert cli.main(["validate-config", str(bad)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"hare validate-config: error: {bad}: not valid YAML at line 2, column 1: duplicate key 'base_seed' (first at "
        "line 1)"
    )
    argv = ["--debug", "validate-config", str(bad)] if where == "before" else ["validate-config", str(bad), "--debug"]
    with pytest.raises(ValueError, match="duplicate key"):
        cli.main(argv)


@pytest.mark.parametrize("debug", [False, True])
def test_a_bad_config_section_is_one_line_or_with_debug_its_traceback(tmp_path, capsys, debug):
    argv = [
        "approx-budget",
        "--config-json",
        json.dumps({"budgets": [1]}),
        "--out-json",
        str(tmp_path / "a.json"),
        "--out-tex",
        str(tmp_path / "a.tex"),
    ]
    if debug:
        with pytest.raises(ValueError, match="budgets"):
            cli.main([*argv, "--debug"])
    else:
        assert cli.main(argv) == 2
        assert capsys.readouterr().err.strip().splitlines() == [
            "hare approx-budget: error: theory.approx_budget.budgets: an exponent needs a list of at least 4 values "
            "(got [1])"
        ]
    assert not list(tmp_path.iterdir())


def _raising(error: BaseException):
    def handler(args):
        raise error

    return handler


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (
            MemoryError("Unable to allocate 745. GiB for an array with shape (100000000000,) and data type int64"),
            "out of memory: Unable to allocate 745. GiB for an array with shape (100000000000,) and data type int64",
        ),
        (MemoryError(), "out of memory"),
        (
            RuntimeError(
                "linalg.cholesky: The factorization could not be completed\nbecause the input is not positive-definite."
            ),
            "linalg.cholesky: The factorization could not be completed because the input is not positive-definite.",
        ),
        (OverflowError("Python int too large to convert to C long"), "Python int too large to convert to C long"),
        (KeyError("horizon"), "horizon"),
    ],
)
def test_every_expected_failure_is_one_line_and_debug_shows_its_traceback(monkeypatch, capsys, tmp_path, error, line):
    """A job too large for its machine (MemoryError, torch's out-of-memory RuntimeError), a failed factorisation of a
    bad matrix, an overflow: one line, exit 2; with --debug the exception itself."""
    from hare.cli import workflow

    monkeypatch.setattr(workflow, "cmd_validate_config", _raising(error))
    (tmp_path / "any.yaml").write_text("")
    assert cli.main(["validate-config", str(tmp_path / "any.yaml")]) == 2
    assert capsys.readouterr().err.splitlines() == [f"hare validate-config: error: {line}"]
    with pytest.raises(type(error)):
        cli.main(["validate-config", str(tmp_path / "any.yaml"), "--debug"])


def test_torch_and_numpy_failures_are_expected_errors():
    import numpy as np
    import torch

    assert issubclass(torch.cuda.OutOfMemoryError, cli.USER_ERRORS)
    assert issubclass(np.linalg.LinAlgError, cli.USER_ERRORS)
    assert issubclass(torch.linalg.LinAlgError, cli.USER_ERRORS)


SMOKE_HARE = "hare: {params: {key_dim: null}, grid: {alpha: [0.01, 0.1]}}"
BAD_VARIANTS = {
    "alpha_inf": (
        SMOKE_HARE,
        SMOKE_HARE.replace("[0.01, 0.1]", "[0.01, .inf]"),
        "experiments.classification.policies.hare.grid.alpha[1]: .inf is not a finite number",
    ),
    "lam_inf": (
        "linucb: {params: {lam: 1.0}",
        "linucb: {params: {lam: .inf}",
        "experiments.classification.policies.linucb.params.lam: .inf is not a finite number",
    ),
    "noise_nan": (
        "noise_sigma: 0.1",
        "noise_sigma: .nan",
        "environments.synthetic_linear.params.noise_sigma: .nan is not a finite number",
    ),
    "horizon": (
        "horizon: 80\n    n_runs: 2",
        "horizon: 1000000000000\n    n_runs: 2",
        "experiments.synthetic.horizon: 1000000000000 is greater than the maximum",
    ),
    "n_runs": (
        "horizon: 80\n    n_runs: 2",
        "horizon: 80\n    n_runs: 100000000",
        "experiments.synthetic.n_runs: 100000000 is greater than the maximum",
    ),
    "duplicate": (
        "base_seed: 7\n",
        "base_seed: 7\nbase_seed: 8\n",
        "not valid YAML at line 4, column 1: duplicate key 'base_seed' (first at line 3)",
    ),
    "latin1": ("# Smoke", "# Sm\udce9ke", "not UTF-8 text: byte 0xe9 at byte offset 4 (line 1)"),
    "long_environment_name": (
        "  synthetic_linear:\n    kind: synthetic",
        "  " + "e" * 300 + ":\n    kind: synthetic",
        "invalid config: environments: '" + "e" * 300 + "' is too long",
    ),
    "alpha_1e308": (
        SMOKE_HARE,
        SMOKE_HARE.replace("[0.01, 0.1]", "[0.01, 1.0e308]"),
        "experiments.classification.policies.hare.grid.alpha[1]: 1e+308 is greater than the maximum of 1000000",
    ),
    "lam_subnormal": (
        "linucb: {params: {lam: 1.0}",
        "linucb: {params: {lam: 1e-320}",
        "experiments.classification.policies.linucb.params.lam: 1e-320 is less than the minimum of 1e-12",
    ),
    "deep": ("base_seed: 7\n", "base_seed: 7\ndeep: " + "[" * 5000 + "]" * 5000 + "\n", "nested deeper than 32 levels"),
}


@pytest.mark.parametrize("command", ["validate-config", "jobs"])
@pytest.mark.parametrize("variant", sorted(BAD_VARIANTS))
def test_each_bad_config_of_issue_28_is_one_line_naming_the_key(tmp_path, capsys, command, variant):
    """Variants of config/smoke.yaml that ran to completion (an infinite alpha or lambda, an absurd n_runs, a duplicate
    key), failed late in a Cholesky error (a NaN noise), in a 30-line MemoryError traceback (10^12 rounds) or without
    the file's name (a byte that is not UTF-8): one line on stderr, nothing on stdout, exit 2."""
    old, new, expected = BAD_VARIANTS[variant]
    text = (ROOT / "config" / "smoke.yaml").read_text()
    assert old in text
    path = tmp_path / f"{variant}.yaml"
    path.write_bytes(text.replace(old, new, 1).encode("utf-8", "surrogateescape"))
    (tmp_path / "default.yaml").write_bytes((ROOT / "config" / "default.yaml").read_bytes())  # the overlay's base
    argv = [command, str(path), *(["--table"] if command == "jobs" else [])]
    assert cli.main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.splitlines()
    assert line.startswith(f"hare {command}: error: ") and expected in line, line


def test_jobs_datasets_lists_every_preparation_a_config_reads_and_no_optional_dataset(capsys):
    """``hare jobs --datasets`` (what ``make cost-model`` prepares): the paper config's published experiment reads
    each dataset under several preparations, each listed once, in its own folder; Covertype, optional and unreachable
    offline, is left out."""
    assert cli.main(["jobs", str(ROOT / "config" / "paper.yaml"), "--datasets"]) == 0
    lines = capsys.readouterr().out.split()
    assert len(lines) == len(set(lines)) and lines == sorted(lines)
    assert {
        "results/data/prepared/mnist.npz",
        "results/data/prepared_reference/mnist.npz",
        "results/data/prepared_standardised/mnist.npz",
        "results/data/prepared_onehot/mushroom.npz",
        "results/data/prepared_minmax/magic.npz",
        "results/data/prepared_onehot_standardised/adult.npz",
    } <= set(lines)
    assert not any("covertype" in line for line in lines)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["cost-model", str(ROOT / "config" / "smoke.yaml"), "--out", "x.json", "--runs", "-1"],
            "argument --runs: must be an integer >= 1",
        ),
        (
            ["cost-model", str(ROOT / "config" / "smoke.yaml"), "--out", "x.json", "--budget", "nan"],
            "argument --budget: must be a finite",
        ),
        (["calibrate", "--json", "/no/such/dir/x.json"], "folder /no/such/dir does not exist"),
        (["calibrate", "--repeats", "0"], "argument --repeats: must be an integer >= 1"),
        (["bench-hare", "--out", "x.json", "--rounds", "0"], "argument --rounds: must be an integer >= 1"),
        (
            ["check-oful", "--delta", "1.5", "--run", "r.npz", "--out-json", "a", "--out-tex", "b"],
            "must be a number in",
        ),
    ],
)
def test_a_bad_argument_is_refused_in_one_line_before_any_work(capsys, argv, expected):
    """``hare cost-model --runs -1 --budget nan`` exited 0 with "predicted 0.00 CPU-hours"; ``hare calibrate --json
    /no/such/dir/x.json`` created the folders."""
    assert cli.main(argv) == 2
    captured = capsys.readouterr()
    [line] = captured.err.splitlines()
    assert line.startswith(f"hare {argv[0]}: error: ") and expected in line, line
    assert not Path("/no/such/dir").exists()


def test_table_names_a_file_that_is_not_an_npz_as_such(tmp_path, capsys):
    """It blamed a missing sidecar."""
    text = tmp_path / "run.npz"
    text.write_text("not a zip archive\n")
    status = cli.main(
        [
            "table",
            str(text),
            "--csv",
            str(tmp_path / "t.csv"),
            "--tex",
            str(tmp_path / "t.tex"),
            "--caption",
            "c",
            "--label",
            "l",
        ]
    )
    assert status == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("hare table: error: argument runs: ") and "not an .npz file" in line, line
    assert "sidecar" not in line


def test_the_fixed_choices_of_the_command_line_are_the_registries():
    """The command line spells a few fixed lists out (so ``hare --help`` imports no registry); each equals its one
    definition: the table kinds and the dataset preparations."""
    from hare.data.encoding import PROTOCOLS
    from hare.experiments.tables.aggregate import TABLE_KINDS

    def choices(command: str, option: str) -> tuple:
        (action,) = [a for a in PARSERS[command]._actions if option in a.option_strings]  # noqa: SLF001
        return tuple(action.choices)

    assert choices("table", "--kind") == TABLE_KINDS
    assert choices("prepare", "--protocol") == PROTOCOLS
