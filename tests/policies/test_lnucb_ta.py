"""LNUCB-TA (hare.policies.lnucb_ta): its ingredients against hand computations, its component switches (its
ablation) and the configs' LNUCB-TA experiments."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest_neural import GaussianContextBandit

from hare.envs.base import BanditEnvironment, BanditRound, Observation
from hare.experiments.config import check_config, resolve_config_file
from hare.experiments.grid import expand_jobs
from hare.policies.base import build_policy, make_config
from hare.random import CounterRNG, run_keys


def one_arm_env(horizon: int = 10):
    return GaussianContextBandit(1, 2, 1, horizon, run_keys(0, [0], "tiny"))


def test_global_mean_uses_only_earlier_rounds():
    env = one_arm_env()
    policy = build_policy("lnucb_ta", {}, env, run_keys(0, [0], "g"))
    rewards = [0.5, 1.0, 0.0, 2.0]
    for t, reward in enumerate(rewards):
        expected = float(np.mean(rewards[:t])) if t else 0.0
        assert float(policy.global_attention()[0]) == pytest.approx(expected, abs=1e-12)
        observation = env.round(t).observation
        policy.update(observation, torch.tensor([t % 2]), torch.tensor([reward], dtype=torch.float64))


def test_lnucb_ta_index_by_hand():
    """Arm 0 pulled at x = 1 (r = 1) and x = 2 (r = 0); arm 1 at x = 3 (r = 1); query x = 1.2."""
    env = one_arm_env()
    policy = build_policy(
        "lnucb_ta",
        {"alpha_0": 2.0, "kappa": 0.25, "theta_min": 1, "theta_max": 3, "lam": 1.0},
        env,
        run_keys(0, [0], "hand"),
    )
    for t, (arm, x, r) in enumerate([(0, 1.0, 1.0), (0, 2.0, 0.0), (1, 3.0, 1.0)]):
        contexts = torch.full((1, 2, 1), x, dtype=torch.float64)
        policy.update(Observation(t, contexts), torch.tensor([arm]), torch.tensor([r], dtype=torch.float64))
    x = 1.2
    scores = policy.scores(torch.full((1, 2, 1), x, dtype=torch.float64))[0]
    g = 2.0 / 3.0
    # arm 0: A = 1 + 1 + 4 = 6, b = 1, var = 0.25 -> k = round(1 + 2 * 0.25) = 2 (1.5 rounds to 2), f = mean(1, 0), n_a
    # = 0.5
    alpha_0 = 2.0 / 3.0 * (0.25 * g + 0.75 * 0.5)
    expected_0 = x / 6.0 + 0.5 + alpha_0 * math.sqrt(x * x / 6.0)
    # arm 1: A = 1 + 9 = 10, b = 3, var = 0 (one pull) -> k = 1, f = 1, n_a = 1
    alpha_1 = 2.0 / 2.0 * (0.25 * g + 0.75 * 1.0)
    expected_1 = 3.0 * x / 10.0 + 1.0 + alpha_1 * math.sqrt(x * x / 10.0)
    torch.testing.assert_close(scores, torch.tensor([expected_0, expected_1], dtype=torch.float64), atol=1e-12, rtol=0)


class TableBandit(BanditEnvironment):
    """Fixed tables: contexts ``(n_runs, horizon, n_arms, dim)``, rewards ``(n_runs, horizon, n_arms)``."""

    def __init__(self, contexts: torch.Tensor, rewards: torch.Tensor):
        self.contexts, self.rewards = contexts.to(torch.float64), rewards.to(torch.float64)
        self.n_runs, self.horizon, self.n_arms, self.dim = contexts.shape
        self.query_dim = self.dim

    def round(self, t: int) -> BanditRound:
        return BanditRound(Observation(t, self.contexts[:, t]), self.rewards[:, t], self.rewards[:, t])


def table_bandit(n_runs: int, n_arms: int, dim: int, horizon: int, shared_context: bool) -> TableBandit:
    """Unit-norm Gaussian contexts (one per run, or one per arm) and rewards ``x_a^T beta_a + noise``."""
    rng = CounterRNG(run_keys(3, range(n_runs), "switch-table"))
    x = rng.normal("x", 0, (horizon, 1 if shared_context else n_arms, dim))
    x = torch.nn.functional.normalize(x, dim=-1).expand(n_runs, horizon, n_arms, dim)
    beta = CounterRNG(run_keys(3, [0], "switch-beta")).normal("beta", 0, (n_arms, dim))[0]
    return TableBandit(x, (x * beta).sum(-1) + 0.1 * rng.normal("noise", 0, (horizon, n_arms)))


NO_COMPONENTS = {"attention": False, "adaptive_knn": False}


@pytest.mark.parametrize("shared_context", [False, True])
@pytest.mark.parametrize("dim", [3, 70])
def test_lnucb_ta_without_components_is_linucb(shared_context, dim):
    """Both switches off: LinUCB at ``alpha = alpha_0`` bit for bit, index and arms, on the same rounds and keys,
    below and above the dimension where the width goes through ``A^{-1} x``."""
    env = table_bandit(3, 4, dim, 60, shared_context)
    keys = run_keys(0, [0, 1, 2], "switches")
    ablated = build_policy("lnucb_ta", {"alpha_0": 0.7, **NO_COMPONENTS}, env, keys)
    linucb = build_policy("linucb", {"alpha": 0.7}, env, keys)
    for t in range(env.horizon):
        bandit_round = env.round(t)
        contexts = bandit_round.observation.contexts
        assert torch.equal(ablated.scores(contexts), linucb.scores(contexts))
        arms = ablated.select(bandit_round.observation)
        assert torch.equal(arms, linucb.select(bandit_round.observation))
        for policy in (ablated, linucb):
            policy.update(bandit_round.observation, arms, bandit_round.reward(arms))
    assert len(set(ablated.history.arms.flatten().tolist())) > 1


def planted(policy, pulls: list[tuple[int, float, float]]) -> None:
    """Feed ``(arm, x, reward)`` pulls of a one-run, two-arm, one-dimensional bandit (the context shared by the
    arms)."""
    for t, (arm, x, r) in enumerate(pulls):
        policy.update(
            Observation(t, torch.full((1, 2, 1), x, dtype=torch.float64)),
            torch.tensor([arm]),
            torch.tensor([r], dtype=torch.float64),
        )


def choice(params: dict, pulls: list[tuple[int, float, float]], x: float) -> int:
    policy = build_policy("lnucb_ta", params, one_arm_env(), run_keys(0, [0], "planted"))
    planted(policy, pulls)
    return int(policy.select(Observation(len(pulls), torch.full((1, 2, 1), x, dtype=torch.float64)))[0])


def test_attention_switch_changes_the_choice():
    """Arm 0 nine pulls of reward 0.5, arm 1 one of 0.4, x = 1, alpha_0 = 1, kappa = 0.5, no kNN term.
    Constant rate: 0.45 + 1/sqrt(10) = 0.766 < 0.2 + 1/sqrt(2) = 0.907, arm 1. Attention (g = 0.49):
    alpha = (0.245 + 0.25)/10 and (0.245 + 0.2)/2, so 0.466 > 0.357, arm 0."""
    pulls = [(0, 1.0, 0.5)] * 9 + [(1, 1.0, 0.4)]
    common = {"alpha_0": 1.0, "kappa": 0.5, "adaptive_knn": False}
    assert choice({**common, "attention": False}, pulls, 1.0) == 1
    assert choice({**common, "attention": True}, pulls, 1.0) == 0


def test_adaptive_knn_switch_changes_the_choice():
    """x alternates 1, -1. Arm 0 earns 1 at both (no linear trend: l_0 = 0), arm 1 earns 0.3 x
    (l_1 = 1.2/5 = 0.24 at x = 1); equal pulls, equal widths. Without kNN arm 1 wins; with it the nearest
    reward at x = 1 (k = 1: Var 0 and 0.09) adds f_0 = 1 and f_1 = 0.3, so arm 0 wins (1 > 0.54)."""
    pulls = [(arm, x, 1.0 if arm == 0 else 0.3 * x) for x in (1.0, -1.0, 1.0, -1.0) for arm in (0, 1)]
    common = {"alpha_0": 0.1, "attention": False}
    assert choice({**common, "adaptive_knn": False}, pulls, 1.0) == 1
    assert choice({**common, "adaptive_knn": True}, pulls, 1.0) == 0


@pytest.mark.parametrize("switch", ["attention", "adaptive_knn"])
def test_component_switch_must_be_boolean(switch):
    with pytest.raises(ValueError, match=rf"LNUCBTAConfig\.{switch}: must be bool"):
        make_config("lnucb_ta", {switch: "no"})


CONFIGS = [
    Path(__file__).resolve().parents[2] / "config" / name for name in ("default.yaml", "smoke.yaml", "paper.yaml")
]
SWEEP_RATES = {"lnucb_ta": "alpha_0", "linucb": "alpha", "knn_ucb": "theta", "lin_knn_ucb": "alpha"}


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_lnucb_ta_experiments_of_every_config(path):
    """Each config validates; on every dataset LNUCB-TA plays in the classification experiment (all of them unless
    the policy names its own; the default config leaves MNIST's 784 features to the paper config) the sweep runs the
    four policies at the same rates (run files ``<policy>@<rate name>=<rate>``), the ablation runs the four switch
    settings, and the sensitivity study runs LNUCB-TA over kappa and over (theta_min, theta_max)."""
    config = check_config(resolve_config_file(path))
    experiment = config["experiments"]["classification"]
    classification = set(experiment["policies"]["lnucb_ta"].get("environments") or experiment["environments"])
    jobs = expand_jobs(config)
    for experiment in ("exploration_sweep", "lnucb_ta_ablation", "sensitivity"):
        assert set(config["experiments"][experiment]["environments"]) == classification, experiment
        assert config["experiments"][experiment].get("regime", "cold") == "cold"
    rates = config["experiments"]["exploration_sweep"]["policies"]["lnucb_ta"]["grid"]["alpha_0"]
    ablation = {
        (p["attention"], p["adaptive_knn"])
        for j in jobs
        if j.experiment == "lnucb_ta_ablation"
        for p in [j.spec.params]
    }
    assert ablation == {(False, False), (True, False), (False, True), (True, True)}
    for env in classification:
        sweep = {j.label for j in jobs if j.experiment == "exploration_sweep" and j.environment == env}
        assert sweep == {f"{name}@{rate_name}={rate}" for name, rate_name in SWEEP_RATES.items() for rate in rates}
        varied = {
            key
            for j in jobs
            if j.experiment == "sensitivity" and j.environment == env and j.spec.policy == "lnucb_ta"
            for key in j.spec.params
        }
        assert {"kappa", "theta_min", "theta_max"} <= varied
