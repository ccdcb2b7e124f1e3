"""The cost-growth study (hare.experiments.studies.cost_growth): the exponent fit against planted power laws, the
window of a cell, the skip rule, the config section's one-line refusals, and the JSON of a tiny sweep."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from hare.experiments.settings.cost_growth import DEFAULT_POLICIES, settings_from_config
from hare.experiments.studies import cost_growth
from hare.experiments.studies.cost_growth import (
    AXES,
    EXPECTED,
    FAMILIES,
    cost_growth_check,
    growth_exponent,
    play_seconds,
    sweep_policy,
    window_cell,
)

TINY = {
    "base": {"horizon": 4, "n_arms": 3, "dim": 3, "n_runs": 1},
    "rounds": [3, 5],
    "arms": [2, 3],
    "dims": [3, 4],
    "runs": [1, 2],
    "window": 2,
    "budget_s": 30.0,
    "n_users": 1,
    "n_clusters": 1,
    "policies": {"ucb1": {}, "linucb": {"lam": 1.0}},
}


def power_cells(values, exponent, scale=1e-3, window=5, noise=0.0, seed=0):
    """Cells whose ``window`` round times are ``scale x^exponent`` times a log-normal factor of spread ``noise``."""
    rng = np.random.default_rng(seed)
    cells = []
    for value in values:
        samples = scale * value**exponent * np.exp(noise * rng.standard_normal(window))
        cells.append({"value": value, "seconds": float(samples.mean()), "samples": samples.tolist(), "skipped": None})
    return cells


@pytest.mark.parametrize("exponent", [0.0, 1.0, 2.0, 3.0, 0.5])
def test_fit_recovers_planted_exponent_exactly(exponent):
    fit = growth_exponent(power_cells([10, 30, 100, 300, 1000], exponent))
    assert fit["estimate"] == pytest.approx(exponent, abs=1e-9)
    assert fit["ci_low"] == pytest.approx(exponent, abs=1e-9) and fit["ci_high"] == pytest.approx(exponent, abs=1e-9)
    assert fit["n_cells"] == 5


def test_fit_with_noisy_rounds_covers_the_planted_exponent():
    fit = growth_exponent(power_cells([100, 200, 400, 800, 1600], 2.0, window=40, noise=0.1, seed=3))
    assert abs(fit["estimate"] - 2.0) < 0.05
    assert fit["ci_low"] <= 2.0 <= fit["ci_high"]
    assert fit["ci_low"] < fit["ci_high"]


def test_fit_uses_the_measured_cells_only():
    cells = power_cells([1, 2, 4, 8], 1.0)
    cells[3] = {"value": 8, "seconds": None, "samples": None, "skipped": "budget"}
    fit = growth_exponent(cells)
    assert fit["estimate"] == pytest.approx(1.0, abs=1e-9) and fit["n_cells"] == 3
    assert growth_exponent(cells[:1] + cells[3:]) is None


def test_window_cell_holds_the_rounds_before_t_or_is_skipped():
    seconds = [float(i) for i in range(1, 11)]  # round i (1-based) took i seconds
    cell = window_cell(7, seconds, 7, 3)
    assert cell["samples"] == [5.0, 6.0, 7.0] and cell["seconds"] == pytest.approx(6.0) and cell["skipped"] is None
    short = window_cell(12, seconds, 12, 3)
    assert short["seconds"] is None and short["skipped"].startswith("budget: 10 of 12")


def test_skip_rule_skips_every_larger_value_of_the_axis(monkeypatch):
    """A fake play in which the number of rounds finished within the budget falls as K grows: the first cell short
    of its rounds is skipped for the budget and every larger K after it, without being played."""
    played = []

    def fake_play(settings, policy, point, horizon, budget_s, clock=None):
        played.append(dict(point))
        rounds = horizon if point["n_arms"] <= 20 else horizon // 2
        return [1e-3 * point["n_arms"]] * rounds

    monkeypatch.setattr(cost_growth, "play_seconds", fake_play)
    settings = settings_from_config(
        {**TINY, "base": {"horizon": 10, "n_arms": 10, "dim": 3, "n_runs": 1}, "arms": [10, 20, 40, 80], "window": 2}
    )
    result = sweep_policy(settings, "ucb1")
    cells = result["axes"]["K"]["cells"]
    assert [c["skipped"] is None for c in cells] == [True, True, False, False]
    assert cells[2]["skipped"].startswith("budget") and cells[3]["skipped"].startswith("a smaller K was skipped")
    assert [p["n_arms"] for p in played].count(80) == 0
    assert result["axes"]["K"]["exponent"]["estimate"] == pytest.approx(1.0, abs=1e-9)


def test_round_timer_budget_stops_a_real_play():
    """A clock that advances one second a read: a 0.5 s budget plays one round only, and the cell is skipped."""
    ticks = itertools.count()
    settings = settings_from_config(TINY)
    seconds = play_seconds(settings, "linucb", {"n_arms": 3, "dim": 3, "n_runs": 1}, 5, 0.5, clock=lambda: next(ticks))
    assert len(seconds) == 1
    assert window_cell(3, seconds, 3, 2)["skipped"] is not None


@pytest.mark.parametrize(
    "section, key",
    [
        ({"rounds": [10, 5]}, "rounds"),
        ({"arms": [4]}, "arms"),
        ({"window": 0}, "window"),
        ({"budget_s": -1.0}, "budget_s"),
        ({"dims": [2, 8]}, "dims"),
        ({"base": {"horizon": 10, "n_arms": 4, "dim": 8}}, "base"),
        ({"base": {"horizon": 0, "n_arms": 4, "dim": 8, "n_runs": 1}}, "base.horizon"),
        ({"policies": {"linucb": {"alpha": -1.0}}}, "policies.linucb"),
        ({"policies": {"no_such_policy": {}}}, "policies.no_such_policy"),
        ({"n_clusters": 50}, "n_clusters"),
        ({"horizon": 10}, ""),
    ],
)
def test_bad_section_is_refused_in_one_line_naming_the_key(section, key):
    with pytest.raises(ValueError) as error:
        settings_from_config(section)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"cost_growth.{key}:" if key else "cost_growth: unknown key(s) ['horizon']")


def test_every_default_policy_has_a_family_and_expected_orders():
    assert set(DEFAULT_POLICIES) <= set(FAMILIES) == set(EXPECTED)
    for _, orders in EXPECTED.values():
        assert set(orders) == set(AXES)
    assert EXPECTED["knn_ucb"][1]["t"] == 1 and EXPECTED["linucb"][1]["d"] == 2 and EXPECTED["kernel_ucb"][1]["t"] == 2


def _refuse_constant(name):
    raise ValueError(f"non-strict JSON constant {name}")


def test_tiny_sweep_writes_strict_json_of_every_axis(tmp_path):
    out = tmp_path / "cost_growth.json"
    result = cost_growth_check(settings_from_config(TINY), out_json=out)
    data = json.loads(out.read_text(), parse_constant=_refuse_constant)
    assert data["axes"] == list(AXES)
    assert data["order"] == ["ucb1", "linucb"]  # family order; the keys are sorted
    assert data["settings"]["base"] == TINY["base"] and data["machine"]["threads"] == 1
    for name, policy in data["policies"].items():
        assert policy["family"] == FAMILIES[name] and policy["expected_work"] == EXPECTED[name][0]
        for axis in AXES:
            entry = policy["axes"][axis]
            sweep = TINY[cost_growth.SWEEP_OF[axis]]
            assert entry["values"] == sweep and [c["value"] for c in entry["cells"]] == sweep
            assert entry["expected"] == EXPECTED[name][1][axis]
            for cell in entry["cells"]:
                assert cell["skipped"] is None and len(cell["samples"]) == TINY["window"]
                assert cell["seconds"] == pytest.approx(float(np.mean(cell["samples"])))
                assert math.isfinite(cell["seconds"]) and cell["seconds"] > 0
            assert entry["exponent"]["n_cells"] == 2 and math.isfinite(entry["exponent"]["estimate"])
    assert result["wall_s"] > 0
