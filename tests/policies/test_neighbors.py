"""Nearest-neighbour policies: search against brute force, LNUCB-TA's ingredients against hand
computations, batching, validation and a regret sanity check; LNUCB-TA's component switches (its
ablation) and the configs' LNUCB-TA experiments."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest_neural import GaussianContextBandit, batched_matches_alone, synthetic_regret

from hare.envs.base import BanditEnvironment, BanditRound, Observation
from hare.experiments.config import check_config, resolve_config_file
from hare.experiments.grid import expand_jobs
from hare.policies import neighbors
from hare.policies.base import build_policy, kl_upper_bound, make_config
from hare.policies.neighbors import ArmHistory, adaptive_k
from hare.random import CounterRNG, run_keys

N_ARMS, DIM = 3, 2


def arm_pulls(history: ArmHistory, run: int, arm: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Contexts ``(N_a, dim)`` and rewards ``(N_a,)`` of one run's pulls of ``arm``, oldest first: the brute-force
    reading of the history that the searches are checked against."""
    n = int(history.size)
    mine = history.arms[run, :n] == arm
    return history.contexts[run, :n][mine], history.rewards[run, :n][mine]


def small_env(n_runs: int, keys: torch.Tensor, horizon: int = 40) -> GaussianContextBandit:
    return GaussianContextBandit(n_runs, N_ARMS, DIM, horizon, keys)


def one_arm_env(horizon: int = 10):
    return GaussianContextBandit(1, 2, 1, horizon, run_keys(0, [0], "tiny"))


@pytest.fixture(params=["selection", "selection-over-all-pulls", "scatter"])
def search_path(request, monkeypatch):
    """Every search of :meth:`ArmHistory.nearest`: the per-arm selection (few arms) among its candidates, the same
    over all pulls (ties at ``d_k`` beyond the margin: forced by a zero margin) and the scatter-min passes (more
    arms)."""
    monkeypatch.setattr(neighbors, "SELECTION_MAX_ARMS", 0 if request.param == "scatter" else 1000)
    if request.param == "selection-over-all-pulls":
        monkeypatch.setattr(neighbors, "TIE_MARGIN", 0)
    return request.param


def test_vectorised_search_equals_brute_force(search_path):
    n_runs, n_arms, capacity, dim, k = 2, 3, 20, 4, 5
    rng = CounterRNG(run_keys(0, [0, 1], "search"))
    history = ArmHistory(n_runs, n_arms, capacity, dim)
    for s in range(20):
        arms = rng.randint("arm", s, n_arms)
        history.append(arms, rng.normal("x", s, (dim,)), rng.normal("r", s))
    queries = rng.normal("q", 0, (n_arms, dim))
    distances, rewards = history.nearest(queries, k)
    for run in range(n_runs):
        for arm in range(n_arms):
            stored, stored_rewards = arm_pulls(history, run, arm)
            assert len(stored) == int(history.counts[run, arm])
            stored = stored.numpy()
            brute = np.array([np.linalg.norm(queries[run, arm].numpy() - row) for row in stored])
            order = np.argsort(brute)[:k]
            expected_d = np.full(k, np.inf)
            expected_r = np.zeros(k)
            expected_d[: len(order)] = brute[order]
            expected_r[: len(order)] = stored_rewards.numpy()[order]
            np.testing.assert_allclose(distances[run, arm].numpy(), expected_d, atol=1e-12)
            np.testing.assert_allclose(rewards[run, arm].numpy(), expected_r, atol=0)
    assert (history.counts < k).any()


def test_adaptive_k_stays_in_range():
    variances = torch.tensor([[0.0, 0.1, 0.25, 0.5, 1.0, 3.0, 100.0]], dtype=torch.float64)
    k = adaptive_k(variances, 2, 6)
    assert k.tolist() == [[2, 2, 3, 4, 6, 6, 6]]


def test_lnucb_ta_k_within_bounds_during_play():
    keys = run_keys(0, [0, 1], "lnucb-k")
    env = small_env(2, keys)
    policy = build_policy("lnucb_ta", {"theta_min": 2, "theta_max": 4}, env, keys)
    for t in range(30):
        observation = env.round(t).observation
        _, k = policy.knn_adjustment(observation.contexts)
        assert int(k.min()) >= 2 and int(k.max()) <= 4
        arms = policy.select(observation)
        policy.update(observation, arms, env.round(t).reward(arms))


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


def test_knn_ucb_index_by_hand():
    """One arm with pulls at x = 0 (r = 1) and x = 1 (r = 0); query x = 0.1 at round t = 4 (log 5)."""
    env = one_arm_env()
    theta, phi = 0.5, 2.0
    policies = {
        name: build_policy(name, {"theta": theta, "lipschitz": phi, "max_neighbors": 4}, env, run_keys(0, [0], name))
        for name in ("knn_ucb", "knn_kl_ucb")
    }
    for policy in policies.values():
        for t, (x, r) in enumerate([(0.0, 1.0), (1.0, 0.0)]):
            policy.update(
                Observation(t, torch.full((1, 2, 1), x, dtype=torch.float64)),
                torch.tensor([0]),
                torch.tensor([r], dtype=torch.float64),
            )
    query = torch.full((1, 2, 1), 0.1, dtype=torch.float64)
    log_t = math.log(5)
    objective = [math.sqrt(theta * log_t / 1) + phi * 0.1, math.sqrt(theta * log_t / 2) + phi * 0.9]
    k = 1 + int(np.argmin(objective))
    mean = [1.0, 0.5][k - 1]
    radius = phi * [0.1, 0.9][k - 1]
    ucb = policies["knn_ucb"].scores(query, 4)[0]
    assert ucb[0].item() == pytest.approx(mean + math.sqrt(theta * log_t / k) + radius, abs=1e-12)
    assert math.isinf(ucb[1].item())
    kl = policies["knn_kl_ucb"].scores(query, 4)[0, 0].item()
    expected_kl = (
        kl_upper_bound(
            torch.tensor(mean, dtype=torch.float64), torch.tensor(theta * log_t / k, dtype=torch.float64), 50
        ).item()
        + radius
    )
    assert kl == pytest.approx(expected_kl, abs=1e-12)


def test_kl_upper_bound_solves_the_divergence_equation():
    mean = torch.tensor([0.2, 0.5, 0.9], dtype=torch.float64)
    level = torch.tensor([0.1, 0.3, 0.01], dtype=torch.float64)
    bound = kl_upper_bound(mean, level, 50)
    divergence = mean * torch.log(mean / bound) + (1 - mean) * torch.log((1 - mean) / (1 - bound))
    torch.testing.assert_close(divergence, level, atol=1e-9, rtol=0)


NAMES = [
    ("knn_ucb", {"theta": 0.1, "max_neighbors": 10}),
    ("knn_kl_ucb", {"theta": 0.1, "max_neighbors": 10}),
    ("lin_knn_ucb", {"k": 3}),
    ("lnucb_ta", {}),
    ("beta_thompson_enhanced", {}),
    ("eps_greedy_enhanced", {"epsilon": 0.2}),
    ("lin_thompson_enhanced", {}),
]


@pytest.mark.parametrize("name, params", NAMES)
def test_batched_equals_alone(name, params):
    batched_matches_alone(name, params, lambda n, keys: small_env(n, keys), n_runs=3, horizon=25, atol=0)


@pytest.mark.parametrize(
    "name, params, match",
    [
        ("knn_ucb", {"theta": 0.0}, "theta: must be > 0"),
        ("knn_ucb", {"lipschitz": -1.0}, "lipschitz"),
        ("knn_kl_ucb", {"max_neighbors": 0}, "max_neighbors"),
        ("lin_knn_ucb", {"k": 0}, r"\.k: must be >= 1"),
        ("lin_knn_ucb", {"alpha": -1.0}, "alpha"),
        ("lnucb_ta", {"kappa": 1.5}, r"kappa: must be in \[0, 1\]"),
        ("lnucb_ta", {"theta_min": 0}, "theta_min"),
        ("lnucb_ta", {"theta_min": 5, "theta_max": 3}, "theta_max: must be >= theta_min"),
        ("lnucb_ta", {"alpha_0": -1.0}, "alpha_0"),
        ("lnucb_ta", {"global_mean": "all"}, "global_mean"),
        ("beta_thompson_enhanced", {"prior_alpha": 0.0}, "prior_alpha"),
        ("eps_greedy_enhanced", {"epsilon": 1.5}, "epsilon"),
        ("lin_thompson_enhanced", {"v": -1.0}, r"\.v: must be >= 0"),
        ("lin_thompson_enhanced", {"gamma": -1.0}, "gamma"),
    ],
)
def test_invalid_hyperparameters(name, params, match):
    with pytest.raises(ValueError, match=match):
        make_config(name, params)


SANITY = [
    ("knn_ucb", {"theta": 0.01, "lipschitz": 0.1, "max_neighbors": 10}),
    ("knn_kl_ucb", {"theta": 0.01, "lipschitz": 0.1, "max_neighbors": 10}),
    ("lin_knn_ucb", {"k": 3}),
    ("lnucb_ta", {}),
    ("beta_thompson_enhanced", {}),
    ("eps_greedy_enhanced", {"epsilon": 0.2}),
    ("lin_thompson_enhanced", {"v": 0.1}),
]


@pytest.mark.parametrize("name, params", SANITY)
def test_beats_random_on_synthetic(name, params):
    """Total regret over 200 rounds at most 85% of uniform random's (2 runs)."""
    assert synthetic_regret(name, params, 2, 200) <= 0.85 * synthetic_regret("random", {}, 2, 200)


def test_search_with_a_context_shared_by_the_arms_equals_the_general_search(search_path):
    n_runs, n_arms, dim = 2, 3, 4
    rng = CounterRNG(run_keys(0, [0, 1], "shared-search"))
    history = ArmHistory(n_runs, n_arms, 30, dim)
    for s in range(30):
        history.append(rng.randint("arm", s, n_arms), rng.normal("x", s, (dim,)), rng.normal("r", s))
    query = rng.normal("q", 0, (1, dim)).expand(n_runs, n_arms, dim)
    shared = history.nearest(query, 6)
    general = history.nearest(query.contiguous(), 6)
    torch.testing.assert_close(shared, general, rtol=0, atol=1e-12)


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
        for p in [j.spec["params"]]
    }
    assert ablation == {(False, False), (True, False), (False, True), (True, True)}
    for env in classification:
        sweep = {j.label for j in jobs if j.experiment == "exploration_sweep" and j.environment == env}
        assert sweep == {f"{name}@{rate_name}={rate}" for name, rate_name in SWEEP_RATES.items() for rate in rates}
        varied = {
            key
            for j in jobs
            if j.experiment == "sensitivity" and j.environment == env and j.spec["policy"] == "lnucb_ta"
            for key in j.spec["params"]
        }
        assert {"kappa", "theta_min", "theta_max"} <= varied


def test_search_with_tied_distances_takes_the_earliest_pulls_first(search_path):
    """Repeated contexts (as in Mushroom's discrete features): among equal distances the earlier
    pull comes first, and a tie at the k-th distance keeps the earliest pulls, as a stable sort would."""
    n_runs, n_arms, dim, k = 2, 2, 3, 4
    rng = CounterRNG(run_keys(0, [0, 1], "tied-search"))
    points = torch.tensor([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], dtype=torch.float64)
    history = ArmHistory(n_runs, n_arms, 40, dim)
    for s in range(40):
        which = rng.randint("which", s, len(points))
        history.append(rng.randint("arm", s, n_arms), points[which], torch.full((n_runs,), float(s)))
    query = torch.tensor([0.0, 0.0, 0.5], dtype=torch.float64).expand(n_runs, n_arms, dim)
    distances, rewards = history.nearest(query, k)
    for run in range(n_runs):
        for arm in range(n_arms):
            stored, stored_rewards = arm_pulls(history, run, arm)
            brute = np.linalg.norm(stored.numpy() - query[run, arm].numpy(), axis=1)
            order = np.argsort(brute, kind="stable")[:k]
            np.testing.assert_allclose(distances[run, arm].numpy(), brute[order], atol=1e-12)
            np.testing.assert_array_equal(rewards[run, arm].numpy(), stored_rewards.numpy()[order])
    assert len(torch.unique(distances)) < distances.numel()


def test_selection_without_the_foreign_pull_buffer_equals_it_with(monkeypatch):
    """A history made for the scatter passes (no ``foreign_pulls``) searched by the selection derives the
    same per-arm mask from the stored arms."""
    n_runs, n_arms, dim, k = 2, 2, 3, 4
    histories = {}
    for threshold in (0, 1000):
        monkeypatch.setattr(neighbors, "SELECTION_MAX_ARMS", threshold)
        rng = CounterRNG(run_keys(0, [0, 1], "foreign-search"))
        histories[threshold] = history = ArmHistory(n_runs, n_arms, 30, dim)
        for s in range(30):
            history.append(rng.randint("arm", s, n_arms), rng.normal("x", s, (dim,)).round(), rng.normal("r", s))
    assert histories[0].foreign_pulls is None and histories[1000].foreign_pulls is not None
    query = torch.zeros(n_runs, n_arms, dim, dtype=torch.float64)
    torch.testing.assert_close(histories[0].nearest(query, k), histories[1000].nearest(query, k), rtol=0, atol=0)
