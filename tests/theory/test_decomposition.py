"""The measured regret decomposition (hare.theory.decomposition): one small run, its terms, outputs and checks."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hare import cli
from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.experiments.settings.theory import VARIANTS, check_settings
from hare.experiments.simulation import SimulationOptions, simulate
from hare.io import read_npz
from hare.policies import hare_projections as hare_policies
from hare.policies.base import build_policy
from hare.random import run_keys
from hare.report.decomposition import write_checks
from hare.statistics import fit_exponent, is_vacuous, t_interval
from hare.theory.decomposition import run_decomposition

ENV = {"n_items": 24, "n_clusters": 4, "item_dim": 8, "query_dim": 6, "user_dim": 3, "key_dim": 4, "n_users": 3}
HARE = {"fit_steps": 40}
N_LOGGED = 300
HORIZONS = [30, 60, 120]
N_RUNS = 3
SEED = 7


def small_run(**kwargs):
    return run_decomposition(
        ENV, HARE, HORIZONS, N_RUNS, SEED, n_boot=100, n_eps_queries=256, n_logged=N_LOGGED, **kwargs
    )


@pytest.fixture(scope="module")
def result():
    return small_run()


def test_terms_add_up_to_the_full_regret(result):
    arrays = result["arrays"]
    total = arrays["term_approx"] + arrays["term_user"] + arrays["term_explore"]
    np.testing.assert_allclose(total, arrays["regret_full"], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(arrays["term_explore"], arrays["regret_w_star_u_star"])
    assert result["measured"]["decomposition_residual"] <= 1e-12


def test_measured_elliptical_potential_is_below_its_closed_form(result):
    potential = result["measured"]["elliptical_potential"]
    assert potential["measured_le_log_det"] and potential["log_det_le_closed_form"] and potential["holds"]
    assert np.all(np.array(potential["measured_mean"]) <= np.array(potential["closed_form_mean"]))
    assert np.all(np.array(potential["closed_form_mean"]) <= np.array(potential["closed_form_over_clusters_T"]) + 1e-9)


def test_variants_see_identical_environment_draws(result):
    """Each variant run alone, on its own environment object with the same keys and warm-started through
    simulate with the same logs, reproduces the lock-step curves."""
    env_keys = run_keys(SEED, range(N_RUNS), "decomposition", "environment")
    policy_keys = run_keys(SEED, range(N_RUNS), "decomposition", "policy")
    config = SyntheticConfig(**ENV)
    for variant, overrides in VARIANTS.items():
        env = SyntheticBandit(config, N_RUNS, HORIZONS[-1], env_keys)
        optimal = np.stack([env.round(t).optimal_arms.numpy() for t in range(HORIZONS[-1])], 1)
        np.testing.assert_array_equal(optimal, result["arrays"]["optimal_arms"])
        policy = build_policy("hare", {"key_dim": ENV["key_dim"], **HARE, **overrides}, env, policy_keys)
        logs = env.logged(N_LOGGED)
        assert logs.digest() == result["warm_start"]["digest"]
        alone = simulate(env, policy, SimulationOptions(record_every=HORIZONS[0]), logs=logs)
        recorded = alone["rounds"].tolist()
        columns = [recorded.index(h) for h in HORIZONS]
        np.testing.assert_array_equal(alone["cumulative_regret"][:, columns], result["arrays"][f"regret_{variant}"])


def test_exponent_fit_recovers_a_known_slope():
    horizons = np.array([100, 200, 400, 800, 1600])
    rng = np.random.default_rng(0)
    curves = 3.0 * horizons[None, :] ** 0.7 * np.exp(0.02 * rng.standard_normal((20, horizons.size)))
    fit = fit_exponent(horizons, curves, n_boot=500, seed=1)
    assert fit["estimate"] == pytest.approx(0.7, abs=0.01)
    assert fit["ci_low"] <= 0.7 <= fit["ci_high"]
    assert fit["n_boot_valid"] == 500
    assert fit_exponent(horizons, curves, n_boot=500, seed=1) == fit
    exact = fit_exponent(horizons, np.vstack([2.0 * horizons**0.5] * 3), n_boot=50)
    assert exact["estimate"] == pytest.approx(0.5, abs=1e-12)
    assert fit_exponent(horizons, -np.ones((2, horizons.size)), n_boot=10)["estimate"] is None
    mixed = fit_exponent(horizons, np.vstack([-3.0 * horizons, 1.0 * horizons]), n_boot=200, seed=0)
    assert (
        mixed["estimate"] is None and mixed["ci_low"] is None and mixed["ci_high"] is None and mixed["n_boot_valid"] > 0
    )


def test_vacuous_flag_on_a_hand_example():
    assert is_vacuous(100.0, 50, 2.0)
    assert not is_vacuous(99.9, 50, 2.0)
    np.testing.assert_array_equal(is_vacuous(np.array([10.0, 250.0]), np.array([10, 100]), 2.0), [False, True])


def test_writers_produce_every_term(result, tmp_path):
    out_json, out_tex = tmp_path / "checks" / "regret_terms.json", tmp_path / "regret_terms.tex"
    write_checks(result, out_json, out_tex)
    payload = json.loads(out_json.read_text())
    assert "arrays" not in payload
    terms = {(row["term"], row["bound_key"]) for row in payload["rows"]}
    for term, key in [
        ("approx", "hare_approx"),
        ("explore", "hare_explore_oful"),
        ("explore", "hare_explore"),
        ("user", "user_regret_sum"),
    ]:
        assert (term, key) in terms
    assert {row["T"] for row in payload["rows"]} == set(HORIZONS)
    assert payload["baselines"]["linucb"]["bound_key"] == "linucb_oful"
    assert (
        payload["baselines"]["lnucb_ta"]["evaluated"] is False
        and "b" in payload["baselines"]["lnucb_ta"]["unspecified"]
    )
    tex = out_tex.read_text()
    for label in (r"R_{\mathrm{approx}}", r"R_{\mathrm{user}}", r"R_{\mathrm{explore}}", r"\toprule", r"\bottomrule"):
        assert label in tex
    for term in ("Approx", "User", "Explore"):
        assert f"\\newcommand{{\\decompositionExponent{term}Estimate}}" in tex
    assert not list(tmp_path.rglob("*.tmp"))


def test_main_writes_json_tex_and_npz(tmp_path):
    config = {
        "env_params": ENV,
        "hare_params": HARE,
        "horizons": [10, 40],
        "n_runs": 2,
        "base_seed": 3,
        "n_boot": 50,
        "baselines": False,
        "n_eps_queries": 128,
        "n_logged": 200,
    }
    paths = [tmp_path / name for name in ("r.json", "r.tex", "r.npz")]
    assert (
        cli.main(
            [
                "decomposition",
                "--config-json",
                json.dumps(config),
                "--out-json",
                str(paths[0]),
                "--out-tex",
                str(paths[1]),
                "--out-npz",
                str(paths[2]),
            ]
        )
        == 0
    )
    arrays = read_npz(paths[2])
    for name in ("term_approx", "term_user", "term_explore", "regret_full", "horizons"):
        assert name in arrays
    assert arrays["term_user"].shape == (2, 2)
    payload = json.loads(paths[0].read_text())
    assert payload["config"]["horizons"] == [10, 40] and payload["config"]["n_logged"] == 200
    assert payload["warm_start"]["n_logged"] == 200
    tex = paths[1].read_text()
    for name in ("ApproxOnlineMean", "ApproxFrozenMean", "ApproxRemovedFraction", "NLogged"):
        assert f"\\newcommand{{\\decomposition{name}}}" in tex


def test_rerun_gives_identical_json(result, tmp_path):
    hare_policies._FIT_CACHE.clear()
    again = small_run()
    write_checks(result, tmp_path / "a.json", tmp_path / "a.tex")
    write_checks(again, tmp_path / "b.json", tmp_path / "b.tex")
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text()
    assert (tmp_path / "a.tex").read_text() == (tmp_path / "b.tex").read_text()


def test_every_policy_is_warm_started_with_the_same_logs(result):
    """The variants, the diagnostic, the mean ablation and the baselines all learned from the same M logs before
    round 1."""
    warm = result["warm_start"]
    assert warm["n_logged"] == N_LOGGED == result["config"]["n_logged"]
    expected = {*VARIANTS, "selection_gap", "full_mean_frozen", "w_star_mean_frozen", "linucb", "lnucb_ta"}
    assert set(warm["policies"]) == expected == set(result["regret"])
    env = SyntheticBandit(SyntheticConfig(**ENV), 1, 1, run_keys(0, [0], "other"))
    assert env.logged(N_LOGGED).digest() == warm["digest"]


def test_mean_ablation_reports_r_approx_under_both_means(result):
    ablation, arrays = result["mean_ablation"], result["arrays"]
    assert ablation["main_mean"] == "online" and ablation["T"] == HORIZONS
    np.testing.assert_array_equal(arrays["term_approx_mean_online"], arrays["term_approx"])
    frozen = arrays["regret_full_mean_frozen"] - arrays["regret_w_star_mean_frozen"]
    np.testing.assert_array_equal(arrays["term_approx_mean_frozen"], frozen)
    np.testing.assert_allclose(ablation["R_approx_frozen"]["mean"], frozen.mean(0), rtol=0, atol=1e-12)
    removed = frozen - arrays["term_approx"]
    np.testing.assert_allclose(ablation["removed_by_online_mean"]["mean"], removed.mean(0), rtol=0, atol=1e-12)
    for fraction, r, f in zip(ablation["removed_fraction"], removed.mean(0), frozen.mean(0), strict=True):
        assert fraction is None if f <= 0 else fraction == pytest.approx(r / f)
    # The frozen-mean policies are really different policies (their arms differ somewhere).
    assert not np.array_equal(arrays["regret_full_mean_frozen"], arrays["regret_full"])


@pytest.mark.parametrize(
    "settings, match",
    [
        ({"n_logged": 0}, "n_logged"),
        ({"n_logged": True}, "n_logged"),
        ({"hare_params": {"n_logged": 300}}, "hare_params.n_logged"),
        ({"hare_params": {"covariance": "diagonal"}}, "hare_params.covariance: .*full per-cluster covariance"),
        ({"hare_params": {"heads": 2}}, "unknown hyperparameter"),
        ({"hare_params": {"mean": "sometimes"}}, "mean"),
        ({"env_params": {"n_items": 0}}, "env_params"),
        ({"baselines": ["neural_ucb"]}, "baselines"),
        ({"horizons": [10, 39]}, "horizons: the grid spans 3.9x"),
        ({"horizons": [40, 40]}, "horizons"),
        ({"horizons": [0, 40]}, "horizons"),
    ],
)
def test_settings_are_validated(settings, match):
    with pytest.raises(ValueError, match=match):
        check_settings({"horizons": [10, 40], "n_runs": 2, **settings})
    check_settings({"horizons": [10, 40], "n_runs": 2, "n_logged": 5, "hare_params": HARE, "env_params": ENV})
    check_settings({"n_clusters": [2], "key_dims": [4, 2], "n_logged": 5, "hare_params": HARE}, grid=True)


CONTRACT = {"estimate", "ci_low", "ci_high", "level", "n", "method"}


def test_t_interval_by_hand():
    from scipy.stats import t as student_t

    values = np.array([1.0, 2.0, 4.0])
    out = t_interval(values)
    half = student_t.ppf(0.975, 2) * np.std(values, ddof=1) / np.sqrt(3)
    assert out["estimate"] == pytest.approx(7 / 3) and out["n"] == 3 and out["level"] == 0.95
    assert out["ci_low"] == pytest.approx(7 / 3 - half) and out["ci_high"] == pytest.approx(7 / 3 + half)
    clipped = t_interval(np.array([0.9, 1.0, 1.0]), bounds=(0.0, 1.0))
    assert clipped["ci_high"] == 1.0 and clipped["ci_low"] < clipped["estimate"] < 1.0
    assert t_interval([3.0])["ci_low"] is None and t_interval([3.0])["estimate"] == 3.0
    assert t_interval([1.0, float("nan")])["estimate"] is None


def test_every_exponent_follows_the_uncertainty_contract(result):
    assert {"approx", "user", "explore", "explore_selection_gap", "explore_minus_selection_gap"} <= set(
        result["exponents"]
    )
    for fit in result["exponents"].values():
        assert CONTRACT <= set(fit) and fit["n"] == N_RUNS and fit["level"] == 0.95
        assert fit["method"].startswith("percentile bootstrap over runs")
        if fit["ci_low"] is not None:
            assert fit["ci_low"] <= fit["ci_high"]


def test_selection_gap_is_reported_on_its_own(result):
    arrays, split = result["arrays"], result["explore_split"]
    gap = arrays["regret_selection_gap"]
    np.testing.assert_allclose(split["selection_gap"]["mean"], gap.mean(0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(split["remainder"]["mean"], (arrays["term_explore"] - gap).mean(0), rtol=0, atol=1e-12)
    expected = fit_exponent(HORIZONS, gap, n_boot=100, seed=SEED + 3)
    assert result["exponents"]["explore_selection_gap"] == expected == split["selection_gap"]["exponent"]
    assert result["diagnostics"]["selection_gap"]["exponent"] == expected


def test_user_vs_explore_is_the_paired_difference_at_the_horizon(result):
    arrays, out = result["arrays"], result["user_vs_explore"]
    difference = arrays["term_user"][:, -1] - arrays["term_explore"][:, -1]
    assert out["T"] == HORIZONS[-1] and CONTRACT <= set(out["difference"])
    assert out["difference"]["estimate"] == pytest.approx(difference.mean())
    assert out["difference"]["ci_low"] <= out["difference"]["estimate"] <= out["difference"]["ci_high"]
    assert (out["d_u"], out["d_k"], out["C"]) == (ENV["user_dim"], ENV["key_dim"], ENV["n_clusters"])
    assert out["d_k_sqrt_C"] == pytest.approx(ENV["key_dim"] * np.sqrt(ENV["n_clusters"]))


def test_every_bound_states_its_value_and_the_trivial_bound_at_the_horizon(result):
    at_horizon, max_gap, last = result["bounds_at_horizon"], result["constants"]["max_gap"], HORIZONS[-1]
    pairs = {(row["term"], row["bound_key"]) for row in result["rows"]}
    assert pairs == {(term, key) for term, bounds in at_horizon.items() for key in bounds}
    for bounds in at_horizon.values():
        for entry in bounds.values():
            assert entry["T"] == last and entry["trivial_at_horizon"] == pytest.approx(last * max_gap)
            if not entry["bound_per_run"]:
                assert entry["vacuous"] == (entry["bound_at_horizon"] >= entry["trivial_at_horizon"])
            assert CONTRACT <= set(entry["measured_at_horizon"])


def test_table_lists_the_selection_gap_and_its_exponent(result, tmp_path):
    write_checks(result, tmp_path / "r.json", tmp_path / "r.tex")
    tex = (tmp_path / "r.tex").read_text()
    payload = json.loads((tmp_path / "r.json").read_text())
    assert "explore_selection_gap" in payload["exponents"] and "user_vs_explore" in payload
    assert (
        r"\label{tab:regret-exponents}" in tex and tex.count("selection gap ($\\alpha = 0$)") == 2
    )  # the terms table at the largest horizon, the exponents
    fit = result["exponents"]["explore_selection_gap"]
    assert f"{fit['estimate']:.2f} & [{fit['ci_low']:.2f}, {fit['ci_high']:.2f}]" in tex
    assert r"\newcommand{\decompositionExponentExploreSelectionGapEstimate}" in tex
    assert tex.index(r"\newcommand{\decompositionTermsTable}{%") < tex.index(r"\label{tab:regret-terms}")
    terms = tex[tex.index(r"\label{tab:regret-terms}") : tex.index(r"\newcommand{\decompositionExponentsTable}")]
    assert f" & {max(HORIZONS)} & " in terms and f" & {min(HORIZONS)} & " not in terms
    assert tex.index(r"\newcommand{\decompositionExponentsTable}{%") < tex.index(r"\label{tab:regret-exponents}")
