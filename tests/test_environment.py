"""The environment files agree with each other and with the package's declared ranges."""

import re
import tomllib

import yaml
from packaging.requirements import Requirement
from packaging.version import Version


def _pins(lines):
    pins = {}
    for line in lines:
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            name, version = line.split("==")
            pins[name.strip().lower()] = version.strip()
    return pins


def test_conda_environment_lists_the_pinned_requirements(repository):
    requirements = _pins((repository / "envs" / "requirements.txt").read_text().splitlines())
    conda = yaml.safe_load((repository / "envs" / "hare.yaml").read_text())
    pip_section = next(d["pip"] for d in conda["dependencies"] if isinstance(d, dict))
    assert _pins(pip_section) == requirements
    assert "python=3.11" in conda["dependencies"]


def test_pins_satisfy_the_package_ranges(repository):
    project = tomllib.loads((repository / "pyproject.toml").read_text())["project"]
    pins = _pins((repository / "envs" / "requirements.txt").read_text().splitlines())
    pins |= _pins((repository / "envs" / "requirements-test.txt").read_text().splitlines())
    declared = [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["test"]]
    for requirement in declared:
        name = requirement.name.lower()
        assert name in pins, f"{name} is declared in pyproject.toml but not pinned in envs/"
        assert Version(pins[name]) in requirement.specifier, f"{name}=={pins[name]} outside {requirement.specifier}"


def test_torch_is_pinned_first(repository):
    first = next(
        line
        for line in (repository / "envs" / "requirements.txt").read_text().splitlines()
        if line and not line.startswith("#")
    )
    assert re.fullmatch(r"torch==[\d.]+", first)


def test_xdist_groups_keep_their_tests_on_one_worker(tmp_path):
    """The workflow tests share module fixtures (one smoke run, one Slurm cluster) through xdist_group; pytest 9.2 makes
    --dist loadgroup ignore the groups silently (pytest-xdist issue 1386), so two workers each started a Slurm cluster
    and both timed out. The pinned pytest and pytest-xdist must group."""
    import subprocess
    import sys

    (tmp_path / "test_grouped.py").write_text(
        "import os, pytest\n"
        "pytestmark = pytest.mark.xdist_group('one')\n"
        + "".join(
            f"def test_{i}():\n"
            "    open(os.environ['GROUP_LOG'], 'a').write(os.environ['PYTEST_XDIST_WORKER'] + '\\n')\n"
            for i in range(6)
        )
        + "".join(f"def test_free_{i}():\n    pass\n" for i in range(6))
    )
    log = tmp_path / "workers.log"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            str(tmp_path),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "GROUP_LOG": str(log)},
    )
    assert result.returncode == 0, result.stdout[-2000:]
    workers = log.read_text().split()
    assert len(workers) == 6 and len(set(workers)) == 1, f"the grouped tests ran on {sorted(set(workers))}"
