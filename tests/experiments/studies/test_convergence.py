"""The convergence measurement (hare.experiments.studies.convergence): stability, agreement, local slopes, settings."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.experiments.settings.convergence import DEFAULT_VARIANTS, ConvergenceSettings, settings_from_config
from hare.experiments.studies import convergence
from hare.experiments.studies.convergence import (
    agreement,
    coarse_slopes,
    last_half_slope,
    local_slopes,
    make_probes,
    measure,
    run_convergence,
    run_variant,
    stability,
    write_outputs,
)
from hare.io import read_npz
from hare.policies.base import Policy, PolicyConfig
from hare.random import run_keys

ENV = {"n_items": 12, "n_clusters": 3, "item_dim": 6, "query_dim": 4, "user_dim": 2, "key_dim": 4, "n_users": 3}
HARE = {"alpha": 0.5, "key_dim": 4, "fit_steps": 20}
VARIANTS = {
    "cold_online": {
        "regime": "cold",
        "name": "cold, online W",
        "params": {"projections": "random", "mean": "online", "online_lr": 0.05},
    },
    "warm_online": {
        "regime": "warm",
        "name": "warm, online W",
        "params": {"projections": "learned", "mean": "online", "online_lr": 0.05},
    },
}


def small_settings(**overrides) -> ConvergenceSettings:
    values = {
        "env_params": ENV,
        "horizon": 60,
        "n_runs": 2,
        "n_logged": 200,
        "n_probes": 5,
        "record_every": 10,
        "base_seed": 3,
        "hare_params": HARE,
        "variants": VARIANTS,
    }
    return ConvergenceSettings(**{**values, **overrides})


# -- measures on hand-built arrays -------------------------------------------------------------


def test_stability_matches_a_brute_force_count():
    choices = np.random.default_rng(0).integers(0, 3, size=(7, 4, 9))  # (records, runs, probes)
    expected = np.full((7, 4), np.nan)
    for k in range(1, 7):
        for b in range(4):
            same = 0
            for p in range(9):
                same += int(choices[k, b, p] == choices[k - 1, b, p])
            expected[k, b] = same / 9
    np.testing.assert_array_equal(stability(choices), expected)
    assert np.isnan(stability(choices)[0]).all()


def test_stability_and_agreement_of_a_hand_sequence():
    choices = np.array([[[0, 1, 2, 2]], [[0, 1, 1, 2]], [[0, 1, 1, 2]], [[2, 2, 2, 2]]])  # one run, four probes
    np.testing.assert_array_equal(stability(choices)[1:, 0], [3 / 4, 1.0, 1 / 4])
    np.testing.assert_array_equal(agreement(choices, np.array([0, 1, 1, 0]))[:, 0], [2 / 4, 3 / 4, 3 / 4, 0.0])


@pytest.mark.parametrize("exponent", [0.5, 0.8, 1.0])
def test_local_slope_of_a_power_law_is_its_exponent(exponent):
    t = np.arange(10, 2001, 10)
    curve = 3.7 * t**exponent
    slopes = local_slopes(t, curve)
    assert np.isnan(slopes[0])
    np.testing.assert_allclose(slopes[1:], exponent, rtol=0, atol=1e-12)
    assert last_half_slope(t, curve) == pytest.approx(exponent, abs=1e-12)
    right_ends, coarse = coarse_slopes(t, curve, 1.25)
    assert right_ends[-1] == t[-1] and np.all(right_ends[1:] / right_ends[:-1] >= 1.25 - 1e-12)
    np.testing.assert_allclose(coarse, exponent, rtol=0, atol=1e-12)


def test_last_half_slope_is_the_chord_from_half_the_horizon():
    """A curve with a kink: the last-half slope is the chord from the first round >= T/2 to T, not the mean over all
    of t."""
    t = np.arange(10, 1001, 10, dtype=float)
    curve = np.where(t < 500, t**0.5, 500**0.5 * (t / 500))  # sqrt(t), then linear from t = 500
    assert last_half_slope(t, curve) == pytest.approx(1.0, abs=1e-12)
    assert np.nanmean(local_slopes(t, curve)) < 0.9


def test_slopes_are_undefined_where_the_regret_is_zero():
    t = np.array([10, 20, 30, 40])
    slopes = local_slopes(t, np.array([0.0, 0.0, 1.0, 2.0]))
    assert np.isnan(slopes[:3]).all() and slopes[3] == pytest.approx(np.log(2) / np.log(4 / 3))
    assert np.isnan(last_half_slope(t, np.array([0.0, 0.0, 0.0, 1.0])))


# -- the measurement on a policy whose choices never change ------------------------------------


@dataclass(frozen=True)
class FixedChoiceConfig(PolicyConfig):
    pass


class FixedChoice(Policy):
    """Always the item ``(run + user) mod N``: choices that depend on the probe but never on time."""

    config_class = FixedChoiceConfig

    def __init__(self, env: SyntheticBandit, keys: torch.Tensor):
        super().__init__(FixedChoiceConfig(), env, keys)
        self.clusters = env.pool.clusters.clone()
        self.updates = 0

    def select(self, observation):
        return (torch.arange(self.n_runs) + observation.users) % self.n_arms

    def update(self, observation, arms, rewards):
        self.updates += 1


def test_stability_is_one_for_choices_that_never_change():
    env = SyntheticBandit(SyntheticConfig(**ENV), 3, 50, run_keys(0, range(3), "env"))
    probes = make_probes(env, 8, base_seed=1)
    played = measure(env, FixedChoice(env, run_keys(0, range(3), "pol")), 10, probes)
    assert played["choices"].shape == (5, 3, 8)
    np.testing.assert_array_equal(stability(played["choices"])[1:], 1.0)
    expected = env.pool.clusters[(torch.arange(3)[:, None] + probes.users[None, :]) % env.n_arms]  # (runs, probes)
    np.testing.assert_array_equal(played["choices"][0], expected.numpy())
    best = env.pool.clusters[probes.best_items].numpy()
    np.testing.assert_array_equal(agreement(played["choices"], best)[-1], (expected.numpy() == best).mean(1))


def test_probes_are_far_from_the_run_and_shared_by_every_variant():
    env = SyntheticBandit(SyntheticConfig(**ENV), 2, 30, run_keys(0, range(2), "env"))
    probes = make_probes(env, 6, base_seed=1)
    observation = probes.observation(2, env)
    assert observation.t == convergence.PROBE_T0 + 2 and observation.contexts.shape == (2, env.n_arms, env.dim)
    np.testing.assert_array_equal(
        observation.contexts[0, 0, env.query_dim :], torch.nn.functional.one_hot(probes.users[2], env.n_users)
    )
    again = make_probes(SyntheticBandit(SyntheticConfig(**ENV), 2, 30, run_keys(9, range(2), "other")), 6, base_seed=1)
    torch.testing.assert_close(probes.queries, again.queries, rtol=0, atol=0)
    torch.testing.assert_close(probes.best_items, env.mean_rewards(probes.queries, probes.users).argmax(1))


# -- HARE variants ----------------------------------------------------------------------------


@pytest.mark.parametrize("label", list(VARIANTS))
def test_probing_does_not_change_the_trajectory(label):
    settings = small_settings()
    probed = run_variant(settings, label, probe=True)
    plain = run_variant(settings, label, probe=False)
    np.testing.assert_array_equal(probed["cumulative_regret"], plain["cumulative_regret"])
    assert probed["choices"].shape == (6, 2, 5) and "choices" not in plain


def test_run_writes_json_npz_and_digit_free_macros(tmp_path):
    settings = small_settings()
    result = run_convergence(settings)
    write_outputs(result, tmp_path / "c.json", tmp_path / "c.tex", tmp_path / "c.npz")
    saved = json.loads((tmp_path / "c.json").read_text())
    assert saved["settings"]["horizon"] == 60 and set(saved["variants"]) == set(VARIANTS)
    for variant in saved["variants"].values():
        assert variant["rounds"] == [10, 20, 30, 40, 50, 60]
        assert variant["stability_mean"][0] is None and 0 <= variant["final_stability"] <= 1
        assert len(variant["stability_per_run"]) == 2 and len(variant["regret_std"]) == 6
    arrays = read_npz(tmp_path / "c.npz")
    assert arrays["cold_online__choices"].shape == (6, 2, 5)
    np.testing.assert_allclose(
        arrays["cold_online__cumulative_regret"].mean(0), saved["variants"]["cold_online"]["regret_mean"]
    )
    tex = (tmp_path / "c.tex").read_text()
    names = re.findall(r"\\newcommand\{\\([^}]*)\}", tex)
    assert (
        "convergenceColdOnlineStability" in names
        and "convergenceWarmOnlineSlope" in names
        and "convergenceHorizon" in names
    )
    assert all(re.fullmatch(r"[A-Za-z]+", name) for name in names)


def test_default_variants_are_valid_settings():
    settings = ConvergenceSettings(env_params=ENV)
    assert set(settings.variants) == set(DEFAULT_VARIANTS)
    assert {v["regime"] for v in settings.variants.values()} == {"cold", "warm"}


# -- settings errors name the field -------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"horizon": 0}, "horizon"),
        ({"n_runs": 0}, "n_runs"),
        ({"n_probes": 0}, "n_probes"),
        ({"record_every": 60}, "record_every"),
        ({"n_logged": 0}, "n_logged"),
        ({"base_seed": -1}, "base_seed"),
        ({"device": "tpu"}, "device"),
        ({"env_params": {"n_items": 0}}, "env_params"),
        ({"variants": {}}, "variants"),
        ({"variants": {"a": {"regime": "hot", "params": {}}}}, "variants.a.regime"),
        ({"variants": {"a": {"regime": "cold", "params": {"no_such": 1}}}}, "variants.a.params"),
        ({"variants": {"a": {"regime": "cold", "params": {"projections": "learned"}}}}, "variants.a.params"),
        (
            {"variants": {"a": {"regime": "cold", "params": {"alpha_schedule": "inverse_sqrt"}}}},
            "variants.a.params.alpha_schedule",
        ),
        ({"variants": {"a": {"regime": "cold", "params": {}, "colour": "red"}}}, "variants.a"),
        ({"variants": {"a": {"regime": "cold", "params": {}, "name": ""}}}, "variants.a.name"),
        ({"hare_params": {**HARE, "mode": "synthesize"}}, "variants.cold_online.params.mode"),
    ],
)
def test_settings_errors_name_the_field(overrides, field):
    with pytest.raises(ValueError, match=re.escape(f"theory.convergence.{field}:")):
        small_settings(**overrides)


def test_unknown_section_keys_are_named():
    with pytest.raises(ValueError, match=r"theory\.convergence: unknown key\(s\) \['horizons'\]"):
        settings_from_config({"horizons": [10], "n_runs": 2, "n_probes": 4, "record_every": 5})
