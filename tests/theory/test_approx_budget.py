"""R_approx against the logged budget M: the exponent fit, the config checks, an end-to-end run."""

import json
from pathlib import Path

import numpy as np
import pytest

from hare import cli
from hare.experiments.settings.theory import check_approx_budget
from hare.theory.approx_budget import exponent_record

TINY = {
    "budgets": [60, 120, 240, 480],
    "horizon": 20,
    "n_runs": 2,
    "base_seed": 0,
    "n_boot": 40,
    "n_eps_queries": 64,
    "hare_params": {"fit_steps": 10},
    "env_params": {"n_items": 12, "n_clusters": 3, "n_users": 2},
}


def planted(x, exponent, n_runs, scale=3.0, noise=0.05, seed=0):
    """Curves ``scale * x^exponent * exp(noise * z)``, ``(n_runs, n_x)``."""
    rng = np.random.default_rng(seed)
    return scale * np.asarray(x, float) ** exponent * np.exp(noise * rng.standard_normal((n_runs, len(x))))


@pytest.mark.parametrize("exponent", [-0.5, -1.0, 0.3])
def test_exponent_recovers_planted_slope_and_interval_covers_it(exponent):
    budgets = [250, 500, 1000, 2000, 4000]
    fit = exponent_record(budgets, planted(budgets, exponent, 30), n_boot=500, seed=1)
    assert fit["estimate"] == pytest.approx(exponent, abs=0.03)
    assert fit["ci_low"] <= exponent <= fit["ci_high"]
    assert fit["ci_high"] - fit["ci_low"] < 0.1
    assert {"estimate", "ci_low", "ci_high", "level", "n", "method"} <= set(fit)
    assert fit["n"] == 30 and fit["level"] == 0.95 and "bootstrap" in fit["method"]


def test_interval_widens_with_noise():
    budgets = [250, 500, 1000, 2000]
    narrow = exponent_record(budgets, planted(budgets, -0.5, 20, noise=0.02), n_boot=400)
    wide = exponent_record(budgets, planted(budgets, -0.5, 20, noise=0.5), n_boot=400)
    assert wide["ci_high"] - wide["ci_low"] > 5 * (narrow["ci_high"] - narrow["ci_low"])


def test_pooled_exponent_is_the_common_slope_over_groups():
    x = [1, 2, 4, 8]
    groups = np.stack(
        [planted(x, 0.2, 25, scale=1.0, seed=2), planted(x, 0.6, 25, scale=9.0, seed=3)], axis=1
    )  # (runs, groups, n_x)
    pooled = exponent_record(x, groups, n_boot=300)
    singles = [exponent_record(x, groups[:, g], n_boot=300)["estimate"] for g in range(2)]
    assert pooled["estimate"] == pytest.approx(np.mean(singles))
    assert pooled["estimate"] == pytest.approx(0.4, abs=0.03)


def test_pooled_interval_covers_the_planted_slope_in_most_replications():
    x = [1, 2, 4, 8]
    covered = []
    for seed in range(40):
        groups = np.stack(
            [planted(x, 0.2, 25, scale=1.0, seed=2 * seed), planted(x, 0.6, 25, scale=9.0, seed=2 * seed + 1)], axis=1
        )
        fit = exponent_record(x, groups, n_boot=200, seed=seed)
        covered.append(fit["ci_low"] <= 0.4 <= fit["ci_high"])
    assert np.mean(covered) >= 0.8


def test_non_positive_mean_gives_no_exponent():
    curves = planted([250, 500, 1000, 2000], -0.5, 10)
    curves[:, 2] = -curves[:, 2]
    assert exponent_record([250, 500, 1000, 2000], curves, n_boot=50) is None


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"budgets": [250, 500, 1000]}, "budgets"),
        ({"budgets": [250, 500, 0, 1000]}, "budgets"),
        ({"budgets": [250, 250, 500, 1000]}, "budgets"),
        ({"horizon": 0}, "horizon"),
        ({"n_runs": 1}, "n_runs"),
        ({"env_params": {"n_items": 2, "n_clusters": 5}}, "env_params"),
        ({"hare_params": {"n_logged": 5}}, "hare_params"),
    ],
)
def test_bad_config_names_the_key(change, key):
    with pytest.raises(ValueError, match=rf"^{key}"):
        check_approx_budget({**TINY, **change})


def test_workflow_validation_names_the_section():
    from hare.experiments.config import resolve_config_file
    from hare.experiments.settings import ConfigError, validate_config

    config = resolve_config_file(Path(__file__).parents[2] / "config" / "smoke.yaml")
    config["theory"] = {"approx_budget": {**config["theory"]["approx_budget"], "budgets": [1, 2, 3]}}
    with pytest.raises(ConfigError, match=r"theory\.approx_budget\.budgets"):
        validate_config(config)


def test_end_to_end_writes_the_json_fields(tmp_path):
    out_json, out_tex = tmp_path / "approx_budget.json", tmp_path / "approx_budget.tex"
    assert (
        cli.main(
            ["approx-budget", "--config-json", json.dumps(TINY), "--out-json", str(out_json), "--out-tex", str(out_tex)]
        )
        == 0
    )
    result = json.loads(out_json.read_text())
    n_m = len(TINY["budgets"])
    assert result["budgets"] == TINY["budgets"] and result["horizon"] == TINY["horizon"]
    assert (
        len(result["r_approx"]["mean"])
        == len(result["r_approx"]["std"])
        == len(result["epsilon_attn"]["values"])
        == n_m
    )
    diff = np.subtract(result["regret"]["full"]["mean"], result["regret"]["w_star"]["mean"])
    np.testing.assert_allclose(result["r_approx"]["mean"], diff, atol=1e-9)
    if result["exponent"] is None:
        assert "not positive" in result["exponent_undefined"]
    else:
        assert {"estimate", "ci_low", "ci_high", "level", "n", "method"} <= set(result["exponent"])
        assert result["exponent"]["n"] == TINY["n_runs"]
    tex = out_tex.read_text()
    assert "\\newcommand{\\approxBudgetExponentEstimate}" in tex and "tab:approx-budget" in tex
