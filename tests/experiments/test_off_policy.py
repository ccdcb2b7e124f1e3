import json
from pathlib import Path

import numpy as np
import pytest
import torch
from obp.ope import DirectMethod, DoublyRobust, InverseProbabilityWeighting, SelfNormalizedInverseProbabilityWeighting

from hare import cli
from hare.data.fetch import fetch_dataset
from hare.data.prepare import prepare_dataset
from hare.experiments import off_policy
from hare.experiments.job_spec import JobSpec
from hare.experiments.run import run_job


def _logged_inputs(n=400, n_actions=5, len_list=3, seed=0):
    rng = np.random.default_rng(seed)
    return {
        "reward": rng.binomial(1, 0.3, n).astype(float),
        "action": rng.integers(0, n_actions, n),
        "position": rng.integers(0, len_list, n),
        "pscore": rng.uniform(0.05, 1.0, n),
        "action_dist": rng.dirichlet(np.ones(n_actions), (n, len_list)).transpose(0, 2, 1),
        "estimated_rewards_by_reg_model": rng.uniform(0, 1, (n, n_actions, len_list)),
    }


def _ours(name, inputs, action_dist):
    q = inputs["estimated_rewards_by_reg_model"]
    args = (inputs["reward"], inputs["action"], inputs["pscore"], action_dist)
    return {
        "ipw": lambda: off_policy.inverse_probability_weighting(*args, inputs["position"]),
        "snipw": lambda: off_policy.self_normalized_inverse_probability_weighting(*args, inputs["position"]),
        "dm": lambda: off_policy.direct_method(action_dist, q, inputs["position"]),
        "dr": lambda: off_policy.doubly_robust(*args, q, inputs["position"]),
    }[name]()


OBP = {
    "ipw": InverseProbabilityWeighting,
    "snipw": SelfNormalizedInverseProbabilityWeighting,
    "dm": DirectMethod,
    "dr": DoublyRobust,
}


@pytest.mark.parametrize("name", sorted(OBP))
@pytest.mark.parametrize("deterministic", [False, True])
def test_estimators_equal_obp_on_identical_inputs(name, deterministic):
    inputs = _logged_inputs()
    if deterministic:
        arms = np.random.default_rng(1).integers(0, 5, 400)
        inputs["action_dist"] = off_policy.action_dist_from_arms(torch.from_numpy(arms), 5, 3).numpy()
    expected = OBP[name]().estimate_policy_value(**inputs)
    assert abs(float(_ours(name, inputs, inputs["action_dist"]).value) - expected) < 1e-10


@pytest.mark.parametrize("name", sorted(OBP))
def test_estimators_are_batched_over_leading_dimensions(name):
    inputs = _logged_inputs(n=200)
    other = _logged_inputs(n=200, seed=3)["action_dist"]
    batch = np.stack([inputs["action_dist"], other])  # (2, n, n_actions, len_list)
    estimate = _ours(name, inputs, batch)
    assert estimate.value.shape == estimate.standard_error.shape == (2,)
    for b, dist in enumerate((inputs["action_dist"], other)):
        expected = OBP[name]().estimate_policy_value(**{**inputs, "action_dist": dist})
        assert abs(float(estimate.value[b]) - expected) < 1e-10


def _simulated_world(n_contexts=20, n_actions=4, seed=0):
    """A finite context distribution with known mean rewards, a non-uniform logging policy and a deterministic
    target."""
    rng = np.random.default_rng(seed)
    mean_reward = rng.uniform(0.05, 0.6, (n_contexts, n_actions))
    logits = rng.normal(0, 1, (n_contexts, n_actions))
    logging = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    target = rng.integers(0, n_actions, n_contexts)
    true_value = mean_reward[np.arange(n_contexts), target].mean()
    return mean_reward, logging, target, true_value


def test_ipw_is_unbiased_and_its_standard_error_matches_the_spread():
    """200 data sets of 500 events: the mean IPW estimate lies within 4 Monte Carlo standard errors of the true value,
    and the mean reported standard error is within 20% of the empirical spread of the estimates."""
    mean_reward, logging, target, true_value = _simulated_world()
    n_contexts, n_actions = mean_reward.shape
    rng = np.random.default_rng(7)
    estimates, errors = [], []
    for _ in range(200):
        x = rng.integers(0, n_contexts, 500)
        u = rng.uniform(size=500)[:, None]
        action = (u > np.cumsum(logging[x], axis=1)).sum(1).clip(max=n_actions - 1)
        reward = rng.binomial(1, mean_reward[x, action]).astype(float)
        dist = off_policy.action_dist_from_arms(torch.from_numpy(target[x]), n_actions)
        estimate = off_policy.inverse_probability_weighting(reward, action, logging[x, action], dist)
        estimates.append(float(estimate.value))
        errors.append(float(estimate.standard_error))
    estimates = np.asarray(estimates)
    spread = estimates.std(ddof=1)
    assert abs(estimates.mean() - true_value) < 4 * spread / np.sqrt(len(estimates))
    assert abs(np.mean(errors) / spread - 1) < 0.2


def test_ridge_reward_model_solves_each_actions_normal_equations():
    rng = np.random.default_rng(2)
    n, n_actions, dim = 120, 3, 4
    features = rng.normal(size=(n, n_actions, dim))
    action = rng.integers(0, n_actions, n)
    reward = rng.normal(size=n)
    q = off_policy.fit_ridge_reward_model(
        torch.from_numpy(features), torch.from_numpy(action), torch.from_numpy(reward), lam=0.5
    )
    assert q.shape == (n, n_actions, 1)
    for a in range(n_actions):
        x = features[action == a, a]
        theta = np.linalg.solve(0.5 * np.eye(dim) + x.T @ x, x.T @ reward[action == a])
        np.testing.assert_allclose(q[:, a, 0].numpy(), features[:, a] @ theta, rtol=1e-10, atol=1e-12)


@pytest.fixture(scope="module")
def open_bandit_sample(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("obd")
    fetch_dataset("open_bandit", root / "raw", offline=True)
    prepare_dataset("open_bandit", root / "raw", root / "prepared.npz")
    return root / "prepared.npz"


def _replay_spec(horizon=150):
    return {
        "experiment": "news",
        "label": "linucb_1",
        "policy": "linucb",
        "params": {"alpha": 1.0},
        "environment": {
            "name": "open_bandit_men",
            "kind": "replay",
            "params": {},
            "dataset": "open_bandit",
            "horizon": horizon,
        },
        "n_runs": 2,
        "role": "report",
        "base_seed": 0,
        "device": "cpu",
        "record_every": 50,
        "regime": "cold",
        "n_logged": 0,
    }


def test_replay_job_end_to_end_on_the_open_bandit_sample(open_bandit_sample, tmp_path):
    spec = _replay_spec()
    out = tmp_path / "linucb.npz"
    assert (
        cli.main(
            [
                "run",
                "--job",
                json.dumps(spec),
                "--dataset",
                str(open_bandit_sample),
                "--out",
                str(out),
                "--progress",
                "off",
            ]
        )
        == 0
    )
    with np.load(out) as result:
        arrays = dict(result)
    sidecar = json.loads(out.with_suffix(".json").read_text())
    np.testing.assert_array_equal(arrays["rounds"], [50, 100, 150])
    assert arrays["cumulative_reward"].shape == arrays["accepted"].shape == (2, 3)
    np.testing.assert_array_equal(arrays["accepted"][:, -1], arrays["total_accepted"])
    assert arrays["accepted_cumulative_reward"].shape == (2, arrays["total_accepted"].max())
    assert (arrays["total_accepted"] > 0).all() and (arrays["total_accepted"] < 150).all()
    for name in ("ipw", "snipw", "dm", "dr"):
        assert arrays[f"ope_{name}"].shape == arrays[f"ope_{name}_se"].shape == (2,)
        assert np.isfinite(arrays[f"ope_{name}"]).all()
    assert (
        sidecar["job"] == spec
        and sidecar["logged_events"] == 10_000
        and sidecar["regime"] == "cold"
        and sidecar["greedy_rule"] == "ridge posterior mean"
    )
    assert abs(float(arrays["logged_mean_reward"]) - 46 / 10_000) < 1e-12

    again = tmp_path / "again.npz"
    run_job(JobSpec.from_dict(spec), again, open_bandit_sample, progress=False)
    assert again.read_bytes() == out.read_bytes()
