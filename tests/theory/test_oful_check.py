"""The OFUL check (hare.theory.oful_check): the bound at the horizon, and its premise theta* in the confidence
ellipsoid."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from hare.cli import main as cli_main
from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.experiments.job_setup import build_environment
from hare.experiments.job_spec import JobSpec
from hare.experiments.run import run_job
from hare.io import file_sha256, read_npz, write_json, write_npz
from hare.random import run_keys
from hare.theory.oful_check import (
    confidence_membership,
    ellipsoid_norm_sq,
    linear_parameters,
    membership_summary,
    oful_check,
    oful_radius,
)

ENV = {
    "variant": "linear",
    "link": "identity",
    "n_items": 6,
    "n_clusters": 2,
    "n_users": 2,
    "query_dim": 4,
    "noise_sigma": 0.1,
}
DELTA = 0.05
CONTRACT = {"estimate", "ci_low", "ci_high", "level", "n", "method"}


def _spec(regime="cold", n_logged=0, horizon=60, alpha=1.0) -> JobSpec:
    return JobSpec.from_dict(
        {
            "experiment": "oful",
            "label": "linucb",
            "policy": "linucb",
            "params": {"alpha": alpha, "lam": 1.0},
            "environment": {"name": "sim", "kind": "synthetic", "params": ENV, "dataset": None, "horizon": horizon},
            "n_runs": 3,
            "role": "report",
            "base_seed": 2,
            "device": "cpu",
            "record_every": 25,
            "regime": regime,
            "n_logged": n_logged,
        }
    )


def _run(tmp_path, **kwargs):
    out = tmp_path / "runs" / "linucb.npz"
    sidecar = run_job(_spec(**kwargs), out, progress=False)
    return out, sidecar


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("oful")
    out, sidecar = _run(tmp)
    env = build_environment(JobSpec.from_dict(sidecar["job"]), torch.device("cpu"))
    return oful_check(out, sidecar, env, DELTA, tmp / "oful.json", tmp / "oful.tex"), tmp


def test_linear_parameters_give_the_mean_rewards():
    env = SyntheticBandit(SyntheticConfig(**ENV), 2, 5, run_keys(0, range(2), "oful-test"))
    theta = linear_parameters(env).to(torch.float64)
    for t in range(5):
        round_ = env.round(t)
        means = torch.einsum("rkd,kd->rk", round_.observation.contexts.to(torch.float64), theta)
        torch.testing.assert_close(means, round_.mean_rewards.to(torch.float64), rtol=1e-6, atol=1e-6)


def test_block_diagonal_norm_equals_the_dense_stacked_form():
    gen = torch.Generator().manual_seed(0)
    n_runs, n_arms, dim = 3, 4, 2
    factors = torch.randn(n_runs, n_arms, dim, dim, generator=gen, dtype=torch.float64)
    precision = factors @ factors.mT + torch.eye(dim, dtype=torch.float64)
    theta_hat = torch.randn(n_runs, n_arms, dim, generator=gen, dtype=torch.float64)
    theta_star = torch.randn(n_arms, dim, generator=gen, dtype=torch.float64)
    fast = ellipsoid_norm_sq(theta_hat, theta_star, precision)
    for r in range(n_runs):
        dense = torch.block_diag(*precision[r])  # (dK, dK)
        diff = (theta_hat[r] - theta_star).reshape(-1)  # stacked (theta_1, ..., theta_K)
        torch.testing.assert_close(fast[r], diff @ dense @ diff)


def test_radius_is_the_oful_formula():
    n = np.array([1.0, 10.0, 1000.0])
    d, lam, sigma, S, B = 12, 2.0, 0.3, 1.7, math.sqrt(2.0)
    expected = sigma * np.sqrt(2 * np.log(1 / DELTA) + d * np.log(1 + n * B**2 / (lam * d))) + np.sqrt(lam) * S
    np.testing.assert_allclose(oful_radius(n, d, lam, DELTA, sigma, S, B), expected, rtol=1e-12)


def test_membership_summary_by_hand():
    inside = np.array([[True, True, False, True], [True, True, True, True]])
    out = membership_summary(inside, 0.2)
    assert out["fraction_inside_per_run"] == [0.75, 1.0]
    assert out["fraction_inside"]["estimate"] == pytest.approx(0.875) and out["premise_holds"]
    assert out["runs_inside_every_round"]["estimate"] == 0.5
    assert not membership_summary(inside, 0.1)["premise_holds"]


def test_clopper_pearson_by_hand():
    from hare.theory.oful_check import clopper_pearson

    every = clopper_pearson(np.ones(5, dtype=bool))
    assert every["estimate"] == 1.0 and every["ci_high"] == 1.0 and every["ci_low"] == pytest.approx(0.025 ** (1 / 5))
    none = clopper_pearson(np.zeros(5, dtype=bool))
    assert none["ci_low"] == 0.0 and none["ci_high"] == pytest.approx(1 - 0.025 ** (1 / 5))


def test_oful_json_states_the_horizon_and_the_premise(checked):
    result, tmp = checked
    payload = json.loads((tmp / "oful.json").read_text())
    assert payload["rounds"][-1] == payload["horizon"] == 60
    assert (
        payload["bound_at_horizon"] == payload["bound"][-1]
        and payload["trivial_at_horizon"] == payload["trivial_bound"][-1]
    )
    assert payload["worst_run_at_horizon"] == payload["measured_max"][-1]
    assert payload["vacuous_at_horizon"] == (payload["bound_at_horizon"] >= payload["trivial_at_horizon"])
    premise = payload["premise"]
    for key in ("fraction_inside", "runs_inside_every_round"):
        assert CONTRACT <= set(premise[key]) and premise[key]["n"] == 3
        assert 0.0 <= premise[key]["ci_low"] <= premise[key]["estimate"] <= premise[key]["ci_high"] <= 1.0
    assert (
        all(0.0 <= f <= 1.0 for f in premise["fraction_inside_per_run"])
        and len(premise["fraction_inside_per_run"]) == 3
    )
    assert premise["premise_holds"] == (premise["fraction_inside"]["estimate"] >= 1 - DELTA)
    assert premise["threshold"] == pytest.approx(1 - DELTA) and premise["n_rounds"] == 60
    assert CONTRACT <= set(payload["measured_at_horizon"])
    assert r"\newcommand{\ofulPremiseFraction}" in (tmp / "oful.tex").read_text()


def test_true_parameter_lies_in_the_ellipsoid_on_this_instance(checked):
    premise = checked[0]["premise"]
    assert premise["premise_holds"] and premise["max_norm_over_radius"] <= 1.0


def test_premise_fails_for_a_wrong_parameter_or_a_shrunk_radius(tmp_path):
    _, sidecar = _run(tmp_path)
    spec = JobSpec.from_dict(sidecar["job"])
    env = build_environment(spec, torch.device("cpu"))
    theta = linear_parameters(env)
    constants = {"delta": DELTA, "sigma": ENV["noise_sigma"], "S": float(theta.norm()), "B_x": math.sqrt(2.0)}
    right = confidence_membership(spec, build_environment(spec, torch.device("cpu")), theta, **constants)
    assert membership_summary(right["inside"], DELTA)["premise_holds"]
    wrong = confidence_membership(spec, build_environment(spec, torch.device("cpu")), theta + 1.0, **constants)
    summary = membership_summary(wrong["inside"], DELTA)
    assert not summary["premise_holds"] and summary["fraction_inside"]["estimate"] < 1 - DELTA
    shrunk = confidence_membership(
        spec, build_environment(spec, torch.device("cpu")), theta, radius_scale=0.01, **constants
    )
    assert not membership_summary(shrunk["inside"], DELTA)["premise_holds"]


def test_warm_start_counts_the_logged_rounds(tmp_path):
    _, sidecar = _run(tmp_path, regime="warm", n_logged=40, horizon=30)
    spec = JobSpec.from_dict(sidecar["job"])
    env = build_environment(spec, torch.device("cpu"))
    theta = linear_parameters(env)
    membership = confidence_membership(spec, env, theta, DELTA, ENV["noise_sigma"], float(theta.norm()), math.sqrt(2.0))
    np.testing.assert_array_equal(membership["n_observations"], 40 + np.arange(1, 31))
    np.testing.assert_array_equal(
        membership["arrays"]["total_regret"], read_npz(tmp_path / "runs" / "linucb.npz")["total_regret"]
    )


def test_a_run_that_the_resimulation_does_not_reproduce_is_refused(tmp_path):
    out, sidecar = _run(tmp_path)
    arrays = read_npz(out)
    write_npz(out, **{**arrays, "total_regret": arrays["total_regret"] + 1.0})
    write_json(
        out.with_suffix(".json"), {**sidecar, "npz_sha256": file_sha256(out)}
    )  # consistent with its sidecar, wrong all the same
    env = build_environment(JobSpec.from_dict(sidecar["job"]), torch.device("cpu"))
    with pytest.raises(ValueError, match="re-simulated total regret"):
        oful_check(out, sidecar, env, DELTA, tmp_path / "o.json", tmp_path / "o.tex")


def test_cli_runs_the_check_from_the_sidecar(tmp_path):
    out, _ = _run(tmp_path)
    assert (
        cli_main(
            [
                "check-oful",
                "--run",
                str(out),
                "--delta",
                str(DELTA),
                "--out-json",
                str(tmp_path / "o.json"),
                "--out-tex",
                str(tmp_path / "o.tex"),
            ]
        )
        == 0
    )
    assert "premise" in json.loads((tmp_path / "o.json").read_text())
