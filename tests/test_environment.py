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
    first = next(line for line in (repository / "envs" / "requirements.txt").read_text().splitlines() if line and not line.startswith("#"))
    assert re.fullmatch(r"torch==[\d.]+", first)
