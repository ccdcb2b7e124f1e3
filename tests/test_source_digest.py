"""The code a step runs (:mod:`hare.source_digest`): a docstring, a comment or formatting leaves a module's digest
alone and any other edit changes it; the closure follows imports but not a registry's plugin imports, adds the plugin a
literal lookup names, every plugin for a lookup by a name not in the source, and exactly the named ones for a job;
the package's own jobs and commands close over what they run; a dirty checkout is recorded as dirty."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hare.source_digest import (
    SourceIndex,
    changed_modules,
    combined_digest,
    job_code,
    normalised_digest,
    source_index,
    tree_state,
)

MODULE = '''"""Docstring."""

import math


def bound(t):
    """The bound."""
    # a comment
    return 2 * math.sqrt(t)
'''


def test_docstrings_comments_and_formatting_do_not_count_and_a_constant_does():
    digest = normalised_digest(MODULE)
    assert normalised_digest(MODULE.replace('"""The bound."""', '"""Another sentence."""')) == digest
    assert normalised_digest(MODULE.replace("# a comment", "# another comment\n\n")) == digest
    assert normalised_digest(MODULE.replace("2 * math.sqrt(t)", "2*math.sqrt( t )")) == digest
    assert normalised_digest(MODULE.replace('"""Docstring."""', "")) == digest
    assert normalised_digest(MODULE.replace("2 * math", "3 * math")) != digest
    assert normalised_digest(MODULE.replace("return", "x = 1\n    return")) != digest


def _package(root: Path) -> SourceIndex:
    """A small package ``pkg`` with a policy registry: ``plugins`` registers ``a`` (module ``pkg.plugins.first``) and
    ``b`` (``pkg.plugins.second``, which imports ``pkg.shared``); ``literal`` looks ``a`` up by name, ``open`` by a
    variable, ``declaration`` only reads a declaration of the class."""
    files = {
        "pkg/__init__.py": "",
        "pkg/shared.py": "X = 1\n",
        "pkg/plugins/__init__.py": (
            "from pkg.plugins import first, second\nfrom pkg.plugins.base import build_policy, policy_class\n"
            "__all__ = ['build_policy', 'policy_class']\n"
        ),
        "pkg/plugins/base.py": (
            "def _load():\n    import pkg.plugins\n\n"
            "def policy_class(name):\n    _load()\n\n"
            "def build_policy(name):\n    return policy_class(name)()\n\n"
            "def register_policy(name):\n    return lambda cls: cls\n"
        ),
        "pkg/plugins/first.py": (
            "from pkg.plugins.base import register_policy\n\n@register_policy('a')\nclass A:\n    pass\n"
        ),
        "pkg/plugins/second.py": (
            "from pkg import shared\nfrom pkg.plugins.base import register_policy\n\n"
            "@register_policy('b')\nclass B:\n    pass\n"
        ),
        "pkg/literal.py": "from pkg.plugins.base import build_policy\n\ndef run():\n    return build_policy('a')\n",
        "pkg/open.py": "from pkg.plugins import build_policy\n\ndef run(name):\n    return build_policy(name)\n",
        "pkg/declaration.py": (
            "from pkg.plugins.base import policy_class\n\ndef tunable(name):\n    return policy_class(name).tunable\n"
        ),
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return SourceIndex(root / "pkg", package="pkg")


def test_the_closure_follows_imports_and_the_plugins_a_lookup_runs(tmp_path):
    index = _package(tmp_path)
    base = {"pkg", "pkg.plugins", "pkg.plugins.base"}
    assert set(index.closure(["pkg.literal"])) == base | {"pkg.literal", "pkg.plugins.first"}
    assert set(index.closure(["pkg.open"])) == base | {
        "pkg.open",
        "pkg.plugins.first",
        "pkg.plugins.second",
        "pkg.shared",
    }
    assert set(index.closure(["pkg.declaration"])) == base | {"pkg.declaration"}
    assert set(index.closure(["pkg.open"], plugins=[("register_policy", "b")])) == base | {
        "pkg.open",
        "pkg.plugins.second",
        "pkg.shared",
    }
    with pytest.raises(KeyError, match="'c'"):
        index.closure(["pkg.open"], plugins=[("register_policy", "c")])


def test_an_edit_changes_the_digest_of_exactly_the_closures_that_hold_it(tmp_path):
    index = _package(tmp_path)
    before = {name: index.closure([name]) for name in ("pkg.literal", "pkg.open", "pkg.declaration")}
    (tmp_path / "pkg/shared.py").write_text('"""Now documented."""\n\nX = 1  # and commented\n')
    assert {name: SourceIndex(tmp_path / "pkg", "pkg").closure([name]) for name in before} == before
    (tmp_path / "pkg/shared.py").write_text("X = 2\n")
    after = {name: SourceIndex(tmp_path / "pkg", "pkg").closure([name]) for name in before}
    assert changed_modules(before["pkg.open"], after["pkg.open"]) == ["pkg.shared"]
    assert after["pkg.literal"] == before["pkg.literal"] and after["pkg.declaration"] == before["pkg.declaration"]
    assert combined_digest(after["pkg.open"]) != combined_digest(before["pkg.open"])


def _job(policy: str, kind: str = "synthetic"):
    """A job of ``policy`` on an environment of ``kind`` (what :func:`job_code` reads of it: the two names)."""
    from hare.experiments.job_spec import EnvironmentSpec, JobSpec

    environment = EnvironmentSpec(name="env", kind=kind, params={}, dataset=None, horizon=10)
    return JobSpec(
        experiment="e",
        environment=environment,
        label=policy,
        policy=policy,
        params={},
        n_runs=1,
        role="report",
        base_seed=0,
        device="cpu",
        record_every=1,
        regime="cold",
        n_logged=0,
    )


def test_a_job_closes_over_its_own_policy_and_environment_only():
    from hare.experiments.run import ROUND_LOOP

    linucb, random = job_code(_job("linucb"), ROUND_LOOP), job_code(_job("random"), ROUND_LOOP)
    assert "hare.policies.linear" in linucb and "hare.policies.classic" not in linucb
    assert "hare.policies.classic" in random and "hare.policies.linear" not in random
    assert "hare.experiments.simulation" in linucb and "hare.experiments.simulation" in random
    assert "hare.envs.synthetic" in linucb and "hare.envs.text" not in linucb
    assert "hare.theory.bounds" not in linucb
    hare = job_code(_job("hare"), ROUND_LOOP)
    assert {"hare.policies.hare", "hare.model.attention"} <= set(hare) and "hare.policies.neural" not in hare


def test_commands_close_over_what_they_run():
    from hare.cli.code import BATCH_MODULES, command_code

    bounds = command_code("bounds")
    assert "hare.theory.bounds" in bounds and not any(name.startswith("hare.policies") for name in bounds)
    assert "hare.cli.theory:cmd_bounds" in bounds and "hare bounds: arguments" in bounds
    assert "hare.theory.bounds" in command_code("decomposition")
    assert "hare.policies.linear" in command_code("bench")  # the benchmark runs policies by configured names
    from hare.experiments.run import ROUND_LOOP

    assert BATCH_MODULES[0] == ROUND_LOOP[0]


def test_every_registered_policy_and_environment_has_its_module():
    from hare.envs.registry import environment_class, environment_kinds
    from hare.policies import policy_class, policy_names

    index = source_index()
    for name in policy_names():
        assert index.plugin_module("register_policy", name) == policy_class(name).__module__
    for kind in environment_kinds():
        assert index.plugin_module("register_environment", kind) == environment_class(kind).__module__


def test_a_dirty_tree_is_recorded_as_dirty(tmp_path):
    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    (tmp_path / "module.py").write_text("X = 1\n")
    git("init", "-q")
    git("add", "module.py")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    clean = tree_state.__wrapped__(tmp_path)
    assert clean["dirty"] is False and len(str(clean["commit"])) == 40
    (tmp_path / "module.py").write_text("X = 2\n")
    assert tree_state.__wrapped__(tmp_path) == {"commit": clean["commit"], "dirty": True}
    assert tree_state.__wrapped__(tmp_path.parent / "nowhere")["dirty"] is None


def test_the_closure_does_not_depend_on_the_order_it_is_walked(tmp_path):
    """A package first reached as the parent of a module it holds is still followed where a module imports it."""
    index = _package(tmp_path)
    (tmp_path / "pkg/late.py").write_text("import pkg.plugins.first\nimport pkg.plugins\n")
    index = SourceIndex(tmp_path / "pkg", package="pkg")
    closure = index.closure(["pkg.late"])
    assert {"pkg.plugins", "pkg.plugins.base", "pkg.plugins.first"} <= set(closure)
    for entries in (["pkg.plugins.first", "pkg.late"], ["pkg.late", "pkg.plugins.first"]):
        assert SourceIndex(tmp_path / "pkg", package="pkg").closure(entries) == closure


def test_commands_give_the_same_code_in_every_process():
    """Set iteration order varies between processes (string hashing): the digests must not."""
    script = (
        "from hare.cli.code import command_code, commands; from hare.source_digest import combined_digest;"
        "print(combined_digest({c: combined_digest(command_code(c)) for c in commands()}))"
    )
    answers = {
        subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
        ).stdout
        for seed in (1, 2, 3)
    }
    assert len(answers) == 1
