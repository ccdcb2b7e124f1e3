"""The sections after the experiments (:mod:`hare.experiments.settings.sections`): a command given one section
(``--config-json``) reads it through the same checks as the whole config, refuses a bad value in one line naming its
key path with exit status 2, and the studies after the boundary check nothing again."""

from __future__ import annotations

import ast
import copy
import json
from pathlib import Path

import pytest

from hare.cli import main
from hare.experiments.config import resolve_config_file
from hare.experiments.settings import ConfigError, study_settings, theory_section
from hare.experiments.settings.convergence import ConvergenceSettings
from hare.experiments.settings.cost_growth import CostGrowthSettings
from hare.experiments.settings.pool_scaling import PoolScalingSettings

ROOT = Path(__file__).resolve().parents[3]

COMMANDS = {
    "theory.decomposition": ("decomposition", "horizons", [10, 20]),
    "theory.decomposition_grid": ("decomposition-grid", "n_clusters", [999]),
    "theory.approx_budget": ("approx-budget", "budgets", [1]),
    "theory.heads_alpha": ("heads-alpha", "alphas", [1.0]),
    "theory.convergence": ("convergence", "n_probes", 0),
    "pool_scaling": ("pool-scaling", "rank", 0),
    "cost_growth": ("cost-growth", "window", 0),
}
"""Key path of a section -> its command, a key of it and a value the boundary refuses there."""

SETTINGS = {
    "theory.convergence": ConvergenceSettings,
    "pool_scaling": PoolScalingSettings,
    "cost_growth": CostGrowthSettings,
}


@pytest.fixture(scope="module")
def smoke() -> dict:
    return resolve_config_file(ROOT / "config" / "smoke.yaml")


def _section(config: dict, path: str) -> dict:
    for key in path.split("."):
        config = config[key]
    return copy.deepcopy(config)


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_a_shipped_section_reads_into_its_settings(smoke, path):
    section = _section(smoke, path)
    if path.startswith("theory.") and path not in SETTINGS:
        assert theory_section(path.removeprefix("theory."), section).as_dict() == section
    else:
        assert isinstance(study_settings(path, section), SETTINGS[path])


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_a_command_refuses_a_bad_value_of_its_section_in_one_line_with_its_key_path(smoke, tmp_path, capsys, path):
    command, key, value = COMMANDS[path]
    section = {**_section(smoke, path), key: value}
    argv = [command, "--config-json", json.dumps(section), "--out-json", str(tmp_path / "a.json")]
    argv += ["--out-tex", str(tmp_path / "a.tex")]
    assert main(argv) == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and error.startswith(f"hare {command}: error: {path}.{key}: "), error
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_a_section_that_is_not_a_mapping_is_refused_naming_the_section(path):
    if path in SETTINGS:
        read = lambda section: study_settings(path, section)  # noqa: E731
    else:
        read = lambda section: theory_section(path.removeprefix("theory."), section)  # noqa: E731
    with pytest.raises(ConfigError, match=rf"^{path}: must be a mapping, got list$"):
        read([1])


def test_an_unknown_section_name_is_a_programming_error_not_a_config_error():
    with pytest.raises(ValueError, match="not a theory section") as caught:
        theory_section("oful", {})
    assert not isinstance(caught.value, ConfigError)
    with pytest.raises(ValueError, match="not a study section"):
        study_settings("personalization", {})


BOUNDARY_CHECKS = {
    "check_settings",
    "check_approx_budget",
    "check_heads_alpha",
    "check_hare_sim",
    "check_run_settings",
    "check_positive_grid",
    "check_warm_start_settings",
    "check_regret",
    "settings_from_config",
    "validate_config",
    "check_config",
    "theory_section",
    "study_settings",
}
"""The boundary's checks and readers of a config section."""


@pytest.mark.parametrize("package", ["theory", "experiments/studies"])
def test_the_studies_after_the_boundary_import_none_of_its_checks(package):
    """The studies of :mod:`hare.theory` and :mod:`hare.experiments.studies` take settings the command line read at
    the boundary; none of them imports a check or a reader of a config section."""
    found = []
    for path in sorted((ROOT / "src" / "hare" / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hare.experiments"):
                found += [f"{path.name}: {alias.name}" for alias in node.names if alias.name in BOUNDARY_CHECKS]
    assert found == []
