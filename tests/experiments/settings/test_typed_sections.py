"""The theory sections, ``tables``, ``paper`` and ``theory.oful`` read into frozen typed settings at the config
boundary (:mod:`hare.experiments.settings.theory`, :mod:`hare.experiments.settings.sections`): a valid section reads
into settings whose ``as_dict()`` is the section as written, a bad value is refused in the boundary's one line, and the
settings cannot be changed after the boundary."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest

from hare.experiments.config import resolve_config_file
from hare.experiments.settings import ConfigError, theory_section, validate_config
from hare.experiments.settings.sections import (
    OfulSettings,
    PaperSettings,
    TableSettings,
    oful_settings,
    paper_settings,
    tables_settings,
)
from hare.experiments.settings.theory_settings import (
    THEORY_SETTINGS,
    ApproxBudgetSettings,
    DecompositionGridSettings,
    DecompositionSettings,
    HeadsAlphaSettings,
)

ROOT = Path(__file__).resolve().parents[3]
CONFIGS = ("smoke", "default", "paper")


@pytest.fixture(scope="module", params=CONFIGS)
def config(request) -> dict:
    return resolve_config_file(ROOT / "config" / f"{request.param}.yaml")


@pytest.mark.parametrize("name", sorted(THEORY_SETTINGS))
def test_a_theory_section_reads_into_settings_equal_to_the_section(config, name):
    section = copy.deepcopy(config["theory"][name])
    settings = theory_section(name, section)
    assert isinstance(settings, THEORY_SETTINGS[name])
    assert settings.as_dict() == section
    assert section == config["theory"][name]  # the section itself is not changed


def test_tables_paper_and_oful_read_into_settings_equal_to_the_sections(config):
    tables = tables_settings(config)
    assert set(tables) == set(config["tables"])
    assert all(isinstance(table, TableSettings) for table in tables.values())
    assert {name: table.as_dict() for name, table in tables.items()} == config["tables"]
    assert paper_settings(config["paper"]).as_dict() == config["paper"]
    assert oful_settings(config, config["theory"]["oful"]).as_dict() == config["theory"]["oful"]


def test_an_optional_setting_left_out_is_none_and_not_given():
    settings = theory_section("decomposition", {"horizons": [10, 40], "n_runs": 2, "n_boot": 30})
    assert settings.delta is None and settings.base_seed is None
    assert settings.horizons == (10, 40)
    assert settings.given("delta", "n_boot", "baselines") == {"n_boot": 30}
    assert settings.as_dict() == {"horizons": [10, 40], "n_runs": 2, "n_boot": 30}


BAD_THEORY = [
    (
        "decomposition",
        {"horizons": [10, 20]},
        "theory.decomposition.horizons: the grid spans 2x (max/min); growth exponents need at least 4x (got [10, 20])",
    ),
    (
        "decomposition",
        {"n_logged": True},
        "theory.decomposition.n_logged: the warm start needs an integer number of logged interactions >= 1 (got True)",
    ),
    (
        "decomposition",
        {"baselines": ["neural_ucb"]},
        "theory.decomposition.baselines: true, false or a list of linucb, lnucb_ta (got ['neural_ucb'])",
    ),
    (
        "decomposition_grid",
        {"key_dims": []},
        "theory.decomposition_grid.key_dims: must be a non-empty list of positive integers (got [])",
    ),
    ("approx_budget", {"horizon": 0}, "theory.approx_budget.horizon: must be an integer >= 1 (got 0)"),
    ("approx_budget", {"n_runs": "2"}, "theory.approx_budget.n_runs: must be an integer >= 2 (got '2')"),
    (
        "approx_budget",
        {"budgets": [1, 2]},
        "theory.approx_budget.budgets: an exponent needs a list of at least 4 values (got [1, 2])",
    ),
    (
        "heads_alpha",
        {"hare_params": {"alpha": 1.0}},
        "theory.heads_alpha.hare_params.alpha: an axis of the grid (heads, alphas), not a fixed hyperparameter",
    ),
    (
        "heads_alpha",
        {"alphas": [1.0, 1.0]},
        "theory.heads_alpha.alphas: must be distinct numbers >= 0 (got [1.0, 1.0])",
    ),
]


@pytest.mark.parametrize(("name", "change", "message"), BAD_THEORY)
def test_a_bad_theory_value_is_refused_in_the_boundarys_one_line(name, change, message):
    smoke = resolve_config_file(ROOT / "config" / "smoke.yaml")
    section = {**smoke["theory"][name], **change}
    with pytest.raises(ConfigError) as caught:
        theory_section(name, section)
    assert str(caught.value) == message
    bad = {**smoke, "theory": {**smoke["theory"], name: section}}
    with pytest.raises(ConfigError) as whole:
        validate_config(bad)
    assert str(whole.value) == message


def test_a_setting_no_study_reads_is_refused_naming_it():
    with pytest.raises(ConfigError, match=r"^theory\.approx_budget\.horizons: unknown setting; known: \["):
        theory_section("approx_budget", {"budgets": [1, 2, 4, 8], "horizon": 10, "n_runs": 2, "horizons": [10]})


@pytest.mark.parametrize(
    ("cls", "values", "message"),
    [
        (
            DecompositionSettings,
            {"horizons": (10, 20), "n_runs": 2},
            "DecompositionSettings.horizons: the grid spans 2x (max/min); growth exponents need at least 4x",
        ),
        (DecompositionSettings, {"horizons": (10, 40), "n_runs": 1}, "DecompositionSettings.n_runs: must be an "),
        (
            DecompositionGridSettings,
            {"n_clusters": (2,), "key_dims": (4,), "horizons": (10, 0), "n_runs": 2},
            "DecompositionGridSettings.horizons: must all be an integer >= 1",
        ),
        (
            ApproxBudgetSettings,
            {"budgets": (1, 2, 4, 8), "horizon": 10, "n_runs": 2, "hare_params": {"heads": 2}},
            "ApproxBudgetSettings.hare_params",
        ),
        (
            HeadsAlphaSettings,
            {"heads": (1, 2), "alphas": (0.5, 1.0), "horizon": 10, "n_runs": 2, "hare_params": {"n_heads": 2}},
            "HeadsAlphaSettings.hare_params.n_heads: an axis of the grid",
        ),
    ],
)
def test_theory_settings_built_directly_check_themselves(cls, values, message):
    with pytest.raises(ValueError) as caught:
        cls(**values)
    assert str(caught.value).startswith(message), caught.value


def _smoke_with(path: tuple[str, ...], value) -> dict:
    config = copy.deepcopy(resolve_config_file(ROOT / "config" / "smoke.yaml"))
    target = config
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return config


def test_bad_tables_paper_and_oful_values_are_refused_in_the_boundarys_one_line():
    smoke = resolve_config_file(ROOT / "config" / "smoke.yaml")
    table = next(iter(smoke["tables"]))
    oful = smoke["theory"]["oful"]["experiment"]
    cases = [
        (
            ("tables", table, "caption"),
            "One.\n\nTwo.",
            f"tables.{table}.caption: holds a blank line (a paragraph break), which a LaTeX caption cannot take",
        ),
        (
            ("tables", table, "published"),
            "paper/published/none_such.csv",
            f"tables.{table}.published: paper/published/none_such.csv does not exist",
        ),
        (
            ("paper", "max_body_pages"),
            smoke["paper"]["max_pages"] + 1,
            f"paper.max_body_pages: {smoke['paper']['max_pages'] + 1} exceeds paper.max_pages "
            f"({smoke['paper']['max_pages']}); the body is part of the PDF",
        ),
        (
            ("theory", "oful", "policy"),
            "none_such",
            f"theory.oful.policy: 'none_such' is not a policy label of experiment {oful!r} "
            f"({sorted(smoke['experiments'][oful]['policies'])})",
        ),
    ]
    for path, value, message in cases:
        with pytest.raises(ConfigError) as caught:
            validate_config(_smoke_with(path, value))
        assert str(caught.value) == message


def test_paper_settings_built_directly_check_the_rule_between_their_fields():
    with pytest.raises(ValueError, match=r"^PaperSettings\.max_body_pages: 41 exceeds paper\.max_pages \(40\)"):
        PaperSettings(build_pdf=True, max_pages=40, max_body_pages=41)
    with pytest.raises(ValueError, match=r"^OfulSettings\.delta: must be in \(0, 1\) \(got 1\.0\)$"):
        OfulSettings(experiment="a", environment="b", policy="linucb", delta=1.0)


def test_the_settings_are_frozen():
    smoke = resolve_config_file(ROOT / "config" / "smoke.yaml")
    read = [theory_section(name, copy.deepcopy(smoke["theory"][name])) for name in THEORY_SETTINGS]
    read += [*tables_settings(smoke).values(), paper_settings(smoke["paper"])]
    read.append(oful_settings(smoke, smoke["theory"]["oful"]))
    for settings in read:
        field = dataclasses.fields(settings)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(settings, field, None)
    table = next(iter(tables_settings(smoke).values()))
    assert isinstance(table.experiments, tuple)
