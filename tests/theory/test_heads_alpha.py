"""HARE's regret over heads H and bonus weights alpha: the factor, the grid, the config checks, an end-to-end run."""

import json
from pathlib import Path

import numpy as np
import pytest

from hare import cli
from hare.experiments.settings.theory import check_heads_alpha
from hare.theory.heads_alpha import alpha_factor

TINY = {
    "heads": [1, 2],
    "alphas": [0.5, 1.0, 2.0],
    "horizon": 20,
    "n_runs": 2,
    "base_seed": 0,
    "n_boot": 40,
    "n_logged": 60,
    "hare_params": {"projections": "learned", "fit_steps": 10},
    "env_params": {"n_items": 12, "n_clusters": 3, "n_users": 2},
}
CONTRACT = {"estimate", "ci_low", "ci_high", "level", "n", "method"}


def test_alpha_factor_is_one_plus_alpha_squared_over_key_dim():
    np.testing.assert_allclose(alpha_factor([0.0, 1.0, 2.0, 4.0], 8), [1.0, 1.125, 1.5, 3.0])


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"heads": [0, 1, 2]}, "heads"),
        ({"heads": [-1, 2]}, "heads"),
        ({"heads": [2]}, "heads"),
        ({"heads": [1.5, 2]}, "heads"),
        ({"alphas": [-0.1, 1.0]}, "alphas"),
        ({"alphas": [1.0, 1.0]}, "alphas"),
        ({"horizon": 0}, "horizon"),
        ({"n_logged": 0}, "n_logged"),
        ({"hare_params": {"n_heads": 2}}, r"hare_params\.n_heads"),
        ({"hare_params": {"alpha": 2}}, r"hare_params\.alpha"),
        ({"hare_params": {"alpha_schedule": "inverse_sqrt"}}, r"hare_params\.alpha_schedule"),
    ],
)
def test_bad_config_names_the_key(change, key):
    with pytest.raises(ValueError, match=rf"^{key}"):
        check_heads_alpha({**TINY, **change})


def test_workflow_validation_names_the_section():
    from hare.experiments.config import resolve_config_file
    from hare.experiments.settings import ConfigError, validate_config

    config = resolve_config_file(Path(__file__).parents[2] / "config" / "smoke.yaml")
    config["theory"] = {"heads_alpha": {**config["theory"]["heads_alpha"], "heads": [0, 2]}}
    with pytest.raises(ConfigError, match=r"theory\.heads_alpha\.heads"):
        validate_config(config)


def test_end_to_end_grid_shape_and_json_fields(tmp_path):
    out_json, out_tex = tmp_path / "heads_alpha.json", tmp_path / "heads_alpha.tex"
    assert (
        cli.main(
            ["heads-alpha", "--config-json", json.dumps(TINY), "--out-json", str(out_json), "--out-tex", str(out_tex)]
        )
        == 0
    )
    result = json.loads(out_json.read_text())
    n_h, n_a = len(TINY["heads"]), len(TINY["alphas"])
    assert np.asarray(result["regret"]["mean"]).shape == (n_h, n_a)
    assert np.asarray(result["regret"]["std"], dtype=float).shape == (n_h, n_a)
    assert np.all(np.asarray(result["regret"]["mean"]) >= 0)
    assert len(result["exponent_H"]["by_alpha"]) == n_a and len(result["exponent_g"]["by_H"]) == n_h
    np.testing.assert_allclose(result["alpha_factor"], alpha_factor(TINY["alphas"], result["key_dim"]))
    for fit in [
        *result["exponent_H"]["by_alpha"],
        *result["exponent_g"]["by_H"],
        result["exponent_H"]["pooled"],
        result["exponent_g"]["pooled"],
    ]:
        assert CONTRACT <= set(fit) and fit["n"] == TINY["n_runs"] and fit["ci_low"] <= fit["ci_high"]
    by_alpha = [f["estimate"] for f in result["exponent_H"]["by_alpha"]]
    assert result["exponent_H"]["pooled"]["estimate"] == pytest.approx(np.mean(by_alpha))
    assert result["heads_identical"] is False
    tex = out_tex.read_text()
    assert (
        "\\newcommand{\\headsAlphaExponentHeadsCiHigh}" in tex
        and "\\newcommand{\\headsAlphaExponentFactorCiHigh}" in tex
    )


def test_oracle_heads_are_identical_so_regret_does_not_depend_on_h(tmp_path):
    """With W* copied into every head the policy is the same for every H: the exponent in H is 0."""
    from hare.theory.heads_alpha import run_heads_alpha

    result = run_heads_alpha(TINY["env_params"], {}, [1, 3], [1.0, 2.0], 20, 2, n_logged=60, n_boot=20)
    regret = result["arrays"]["regret"]
    np.testing.assert_allclose(regret[:, 0], regret[:, 1], rtol=1e-9, atol=1e-9)
    assert result["heads_identical"] is True
    assert result["exponent_H"]["pooled"]["estimate"] == pytest.approx(0.0, abs=1e-9)
