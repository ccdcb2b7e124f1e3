"""Security properties of the library and the workflow: no pickle, HTTPS only, no shell injection from config."""

import ast
import os
import re
import shutil
import string
import subprocess
from pathlib import Path

import pytest
import yaml

from hare.data.registry import DATASETS
from hare.experiments.config import check_config
from hare.experiments.settings import ConfigError
from repository_copy import SNAKEMAKE, copy_repository

REPOSITORY = Path(__file__).resolve().parents[2]

UNQUOTED_ALLOWLIST = {
    "params.hare": "interpreter and PYTHONPATH, each shlex-quoted in rules/common.smk",
    "params.configs": "the workflow's config file paths, each shlex-quoted in rules/common.smk (CONFIG_FILES)",
    "params.python": "sys.executable, shlex-quoted in rules/common.smk",
    "params.mirror": "'--mirror <path>' with the path shlex-quoted in rules/data.smk",
    "params.offline": "the constant '--offline' or ''",
    "params.dataset": "'--dataset <path>' with the path shlex-quoted in rules/experiments.smk",
    "params.delta": "a number (schema: theory.oful.delta is a number in (0, 1))",
    "params.selected": "'--selected <path>' with the path shlex-quoted in rules/common.smk (option)",
    "params.published": "'--published <path>' with the path shlex-quoted in rules/common.smk (option)",
    "params.text": "'--text <path>' (a declared output) shlex-quoted in rules/common.smk (option), or empty",
    "params.datasets": "'--dataset name=path' pairs, each shlex-quoted in rules/theory.smk",
    "params.not_run": "claim input paths the config does not produce, each shlex-quoted in rules/paper.smk",
    "params.settings": "benchmark settings from the schema-validated bench config, "
    "each shlex-quoted in rules/theory.smk",
    "threads": "an integer",
    "wildcards.experiment": "constrained to [a-z][a-z0-9_]* by wildcard_constraints",
    "wildcards.notebook": "constrained to [a-z][a-z0-9_]* by wildcard_constraints",
    "wildcards.table": "constrained to [a-z][a-z0-9_]* by wildcard_constraints",
}
SAFE_WILDCARD = "[a-z][a-z0-9_]*"


def _source_files():
    return sorted((REPOSITORY / "src").rglob("*.py"))


def test_no_pickle_anywhere_in_the_library():
    offenders = []
    for path in _source_files():
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import) and any(
                alias.name.split(".")[0] in {"pickle", "cPickle", "dill", "cloudpickle"} for alias in node.names
            ):
                offenders.append(f"{path}:{node.lineno}: import pickle")
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in {
                "pickle",
                "cPickle",
                "dill",
                "cloudpickle",
            }:
                offenders.append(f"{path}:{node.lineno}: from pickle import")
            if (
                isinstance(node, ast.keyword)
                and node.arg == "allow_pickle"
                and not (isinstance(node.value, ast.Constant) and node.value.value is False)
            ):
                offenders.append(f"{path}:{node.lineno}: allow_pickle not False")
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", None) == "load"
                and getattr(node.func.value, "id", None) == "torch"
            ):
                weights_only = [k for k in node.keywords if k.arg == "weights_only"]
                if not weights_only or not (
                    isinstance(weights_only[0].value, ast.Constant) and weights_only[0].value.value is True
                ):
                    offenders.append(f"{path}:{node.lineno}: torch.load without weights_only=True")
    assert offenders == []


def test_every_registry_url_is_https():
    urls = [(name, rf.url) for name, spec in DATASETS.items() for rf in spec.files]
    assert urls
    assert [(name, url) for name, url in urls if not url.startswith("https://")] == []


def _shell_commands() -> list[tuple[str, str]]:
    """``(rules file, shell string)`` of every ``shell:`` directive under ``rules/``."""
    commands = []
    for path in sorted((REPOSITORY / "rules").glob("*.smk")):
        lines = path.read_text().splitlines()
        for number, line in enumerate(lines):
            if line.strip() != "shell:":
                continue
            indent = len(line) - len(line.lstrip())
            body = []
            for following in lines[number + 1 :]:
                if following.strip() and len(following) - len(following.lstrip()) <= indent:
                    break
                body.append(following.strip())
            commands.append((path.name, ast.literal_eval("(" + " ".join(body).rstrip(",") + ")")))
    return commands


def test_shell_strings_quote_every_value_not_built_by_the_workflow():
    commands = _shell_commands()
    assert len(commands) >= 10
    unquoted = set()
    for name, command in commands:
        for _, field, spec, _ in string.Formatter().parse(command):
            if field is not None and spec != "q":
                assert field in UNQUOTED_ALLOWLIST, f"{name}: {{{field}}} is interpolated unquoted into {command!r}"
                unquoted.add(field)
    assert not any(field.startswith("config") for field in unquoted)


def test_unquoted_wildcards_are_constrained_to_safe_names():
    common = (REPOSITORY / "rules" / "common.smk").read_text()
    block = common[common.index("wildcard_constraints:") :].split("\n\n", 1)[0]
    constraints = dict(re.findall(r"(\w+)=\"([^\"]+)\"", block))
    for field in UNQUOTED_ALLOWLIST:
        if field.startswith("wildcards."):
            assert constraints[field.split(".", 1)[1]] == SAFE_WILDCARD


@pytest.mark.parametrize(
    "path",
    [
        ["experiments", "classification", "policies", "$(touch PWNED)"],
        ["environments", "x;touch PWNED"],
        ["experiments", "a`touch PWNED`"],
    ],
)
def test_schema_rejects_shell_metacharacters_in_names(smoke_config, path):
    node = smoke_config
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = {}
    with pytest.raises(ConfigError, match=re.escape(".".join(path[:-1])) or "invalid config"):
        check_config(smoke_config)


INJECTION = "$(touch PWNED) `touch PWNED` ; touch PWNED ' \" "


@pytest.mark.workflow
def test_config_strings_with_shell_metacharacters_are_never_executed(smoke_config, tmp_path):
    """A mirror path and the OFUL policy name full of shell syntax reach the rules as data; an environment parameter
    full of it is refused at parse time, naming its key, before any job."""
    workdir = copy_repository(REPOSITORY, tmp_path / "repo")
    mirror = tmp_path / f"mirror {INJECTION}"
    shutil.copytree(REPOSITORY / "src" / "hare" / "data" / "mirror" / "uci_mushroom", mirror / "uci_mushroom")
    smoke_config["data"]["mirror"] = str(mirror)
    smoke_config["environments"]["synthetic_linear"]["params"]["variant"] = f"linear{INJECTION}"
    smoke_config["theory"]["oful"]["policy"] = f"linucb{INJECTION}"
    config = tmp_path / "injected.yaml"
    config.write_text(yaml.safe_dump(smoke_config))
    env = {**os.environ, "PWD": str(workdir)}

    dry = subprocess.run(
        [*SNAKEMAKE, "--cores", "1", "--configfile", str(config), "--dry-run", "--printshellcmds"],
        cwd=workdir,
        capture_output=True,
        text=True,
        env=env,
    )
    assert dry.returncode != 0, "the OFUL check names a run no job produces; the DAG must not build"
    assert "touch PWNED" in dry.stdout + dry.stderr

    smoke_config["theory"]["oful"]["policy"] = "linucb"
    config.write_text(yaml.safe_dump(smoke_config))
    targets = ["results/data/prepared/mushroom.npz", "results/runs/synthetic/synthetic_linear/random.npz"]
    refused = subprocess.run(
        [*SNAKEMAKE, *targets, "--cores", "2", "--configfile", str(config)],
        cwd=workdir,
        capture_output=True,
        text=True,
        env=env,
    )
    assert (
        refused.returncode != 0
        and "environments.synthetic_linear.params.variant: must be one of ['linear', 'nonlinear', 'between']"
        in refused.stdout + refused.stderr
    )
    assert not (workdir / "results" / "runs").exists(), "a config refused at parse time runs no job"

    smoke_config["environments"]["synthetic_linear"]["params"]["variant"] = "linear"
    config.write_text(yaml.safe_dump(smoke_config))
    run = subprocess.run(
        [*SNAKEMAKE, *targets, "--cores", "2", "--configfile", str(config)],
        cwd=workdir,
        capture_output=True,
        text=True,
        env=env,
    )
    assert run.returncode == 0 and all((workdir / target).exists() for target in targets), (
        run.stdout[-3000:] + run.stderr[-3000:]
    )
    assert [p for p in tmp_path.rglob("PWNED")] == []
    assert not Path("PWNED").exists()


def test_notebooks_are_executed_only_from_the_repository(smoke_config, tmp_path):
    dry = subprocess.run(
        [
            *SNAKEMAKE,
            "--cores",
            "1",
            "--configfile",
            "config/smoke.yaml",
            "--dry-run",
            "--printshellcmds",
            "--forceall",
        ],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
    )
    assert dry.returncode == 0, dry.stderr[-2000:]
    record = r"--record \S+ --outputs \S+ "  # the code record's JSON, one shell word (rules/common.smk)
    jupytext = re.findall(rf"-m hare {record}notebook-source (\S+) --out (\S+) >", dry.stdout)
    papermill = re.findall(rf"-m hare {record}notebook-execute (\S+\.ipynb) --out (\S+\.ipynb) ", dry.stdout)
    assert jupytext and papermill
    sources = {}
    for source, output in jupytext:
        source = source.strip("'")
        assert source.startswith("notebooks/") and (REPOSITORY / source).is_file(), source
        sources[output.strip("'")] = source
    tracked = set(
        subprocess.run(
            ["git", "ls-files", "notebooks"], cwd=REPOSITORY, capture_output=True, text=True, check=True
        ).stdout.split()
    )
    for notebook, _executed in papermill:
        assert notebook.strip("'") in sources, f"papermill executes {notebook}, which no rule builds from notebooks/"
        assert sources[notebook.strip("'")] in tracked
