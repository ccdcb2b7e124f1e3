"""LNUCB-TA's public-code reading: the four switches of :class:`hare.policies.lnucb_ta.LNUCBTA` (``knn_weights``,
``global_mean: all_rewards``, ``k_rounding``, ``theta_init``) against brute-force loops over runs and arms, the
defaults against the algorithm as written, and batching with all four on."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch
from conftest_neural import GaussianContextBandit, batched_matches_alone

from hare.envs.base import BanditEnvironment, BanditRound, Observation
from hare.envs.classification import ClassificationBandit
from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.policies.adaptive_knn import AdaptiveNeighborMixin, adaptive_k
from hare.policies.base import build_policy, make_config
from hare.policies.lnucb_ta import PUBLIC_CODE_READING
from hare.random import CounterRNG, run_keys

SMALL_SIM = SyntheticConfig(n_items=4, n_clusters=2, n_users=2, query_dim=4)


class Pulls:
    """Planted pulls of ``n_runs`` runs, fed to a policy and kept as plain Python lists per run and arm for brute
    force."""

    def __init__(self, n_runs: int, n_arms: int):
        self.contexts = [[[] for _ in range(n_arms)] for _ in range(n_runs)]
        self.rewards = [[[] for _ in range(n_arms)] for _ in range(n_runs)]

    def feed(self, policy, t: int, contexts: torch.Tensor, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        """contexts ``(n_runs, n_arms, dim)``, arms and rewards ``(n_runs,)``."""
        policy.update(Observation(t, contexts), arms, rewards)
        for run, arm in enumerate(arms.tolist()):
            self.contexts[run][arm].append(contexts[run, arm].numpy().copy())
            self.rewards[run][arm].append(float(rewards[run]))


def brute_force_k(rewards: list[float], theta_min: int, theta_max: int, rounding: str) -> int:
    """Alg. 2 line 5 for one arm: population variance (0 below two pulls), then round (halves to even, as
    :func:`torch.round`) or floor, clipped."""
    variance = float(np.var(rewards)) if len(rewards) >= 2 else 0.0
    raw = theta_min + (theta_max - theta_min) * variance
    k = math.floor(raw) if rounding == "floor" else round(raw)
    return min(max(k, theta_min), theta_max)


def brute_force_f(contexts: list[np.ndarray], rewards: list[float], query: np.ndarray, k: int, weights: str) -> float:
    """Alg. 2 lines 6–7 for one arm: 0 below ``k`` pulls; else the ``k`` nearest (stable order), their plain mean or
    their ``1/d``-weighted mean, exact matches (``d = 0``) taking all the weight."""
    if len(rewards) < k:
        return 0.0
    distances = np.array([np.linalg.norm(query - y) for y in contexts])
    nearest = np.argsort(distances, kind="stable")[:k]
    d, r = distances[nearest], np.array(rewards)[nearest]
    if weights == "uniform":
        return float(r.mean())
    if (d == 0).any():
        return float(r[d == 0].mean())
    return float((r / d).sum() / (1.0 / d).sum())


def lnucb_ta(params: dict, env: BanditEnvironment, keys: torch.Tensor):
    return build_policy("lnucb_ta", params, env, keys)


def empty_env(n_runs: int, n_arms: int, dim: int, horizon: int = 50) -> GaussianContextBandit:
    return GaussianContextBandit(n_runs, n_arms, dim, horizon, run_keys(0, range(n_runs), "reading-env"))


@pytest.mark.parametrize(
    "key, value",
    [("knn_weights", "inverse"), ("global_mean", "everything"), ("k_rounding", "ceil"), ("theta_init", "normal")],
)
def test_each_switch_names_its_key_and_values(key, value):
    allowed = {
        "knn_weights": "('uniform', 'distance')",
        "global_mean": "('rounds', 'arms', 'all_rewards')",
        "k_rounding": "('round', 'floor')",
        "theta_init": "('zero', 'uniform')",
    }[key]
    with pytest.raises(
        ValueError, match=rf"^LNUCBTAConfig\.{key}: must be one of {re.escape(allowed)} \(got '{value}'\)$"
    ):
        make_config("lnucb_ta", {key: value})


@pytest.mark.parametrize("rounding, expected", [("round", [2, 2, 3, 3, 4, 5, 1]), ("floor", [2, 2, 3, 2, 3, 5, 1])])
def test_k_rounding_at_the_boundaries(rounding, expected):
    """theta in [1, 5]: raw k = 1 + 4 Var = 2.5, 2.49, 3.0, 2.7, 3.5, 9 (clipped) and 1."""
    variances = torch.tensor([[0.375, 0.3725, 0.5, 0.425, 0.625, 2.0, 0.0]], dtype=torch.float64)
    raw = (1 + 4 * variances)[0].tolist()
    assert adaptive_k(variances, 1, 5, rounding)[0].tolist() == expected
    assert [min(max(math.floor(v) if rounding == "floor" else round(v), 1), 5) for v in raw] == expected


@pytest.mark.parametrize("shared_context", [True, False])
@pytest.mark.parametrize("k_rounding", ["round", "floor"])
@pytest.mark.parametrize("knn_weights", ["uniform", "distance"])
def test_knn_adjustment_equals_brute_force(knn_weights, k_rounding, shared_context):
    """Random contexts, 0/1 rewards (variances up to 1/4, so ``k`` from 1 to 4 in [1, 12]): ``(f_a, k_a)`` of every run
    and arm, round after round, equal a loop over runs and arms."""
    n_runs, n_arms, dim, theta_min, theta_max = 2, 3, 3, 1, 12
    params = {"theta_min": theta_min, "theta_max": theta_max, "knn_weights": knn_weights, "k_rounding": k_rounding}
    policy = lnucb_ta(params, empty_env(n_runs, n_arms, dim), run_keys(0, range(n_runs), "reading-f"))
    rng = CounterRNG(run_keys(1, range(n_runs), "reading-f-data"))
    pulls = Pulls(n_runs, n_arms)
    seen_k = set()
    for t in range(40):
        x = rng.normal("x", t, (1 if shared_context else n_arms, dim)).expand(n_runs, n_arms, dim)
        f, k = policy.knn_adjustment(x)
        for run in range(n_runs):
            for arm in range(n_arms):
                stored = pulls.rewards[run][arm]
                expected_k = brute_force_k(stored, theta_min, theta_max, k_rounding)
                assert int(k[run, arm]) == expected_k
                expected_f = brute_force_f(
                    pulls.contexts[run][arm], stored, x[run, arm].numpy(), expected_k, knn_weights
                )
                assert float(f[run, arm]) == pytest.approx(expected_f, abs=1e-12)
                seen_k.add(expected_k)
        arms = rng.randint("arm", t, n_arms)
        pulls.feed(policy, t, x, arms, (rng.uniform("r", t) < 0.5).to(torch.float64))
    assert {1, 2, 3} <= seen_k


@pytest.mark.parametrize("knn_weights", ["uniform", "distance"])
def test_repeated_contexts_are_exact_matches(knn_weights):
    """Unit-norm 13-dimensional contexts, each pulled twice with different rewards, ``k = 3``: queried at a stored
    context, the distance weighting is the mean reward of its two exact matches (the third neighbour gets no weight),
    the plain mean takes all three; both equal brute force."""
    n_runs, n_arms, dim = 2, 2, 13
    params = {"theta_min": 3, "theta_max": 3, "knn_weights": knn_weights}
    policy = lnucb_ta(params, empty_env(n_runs, n_arms, dim), run_keys(0, range(n_runs), "reading-exact"))
    rng = CounterRNG(run_keys(2, range(n_runs), "reading-exact-data"))
    points = torch.nn.functional.normalize(rng.normal("points", 0, (6, dim)), dim=-1)  # (n_runs, 6, dim)
    pulls = Pulls(n_runs, n_arms)
    t = 0
    for _ in range(2):
        for p in range(6):
            x = points[:, p][:, None, :].expand(n_runs, n_arms, dim)
            rewards = rng.uniform("r", t)
            pulls.feed(policy, t, x, torch.full((n_runs,), p % n_arms), rewards)
            t += 1
    for p in range(6):
        query = points[:, p][:, None, :].expand(n_runs, n_arms, dim)
        f, _ = policy.knn_adjustment(query)
        for run in range(n_runs):
            arm = p % n_arms
            stored = pulls.rewards[run][arm]
            expected = brute_force_f(pulls.contexts[run][arm], stored, query[run, arm].numpy(), 3, knn_weights)
            assert float(f[run, arm]) == pytest.approx(expected, abs=1e-12)
            if knn_weights == "distance":
                twins = [
                    r
                    for y, r in zip(pulls.contexts[run][arm], stored, strict=True)
                    if np.array_equal(y, query[run, arm].numpy())
                ]
                assert len(twins) == 2 and float(f[run, arm]) == pytest.approx(sum(twins) / 2, abs=1e-15)


def test_all_rewards_is_one_over_k_in_classification():
    n_rows, dim, n_classes, n_runs, horizon = 40, 3, 3, 2, 30
    rng = CounterRNG(run_keys(0, [0], "reading-classification"))
    features = torch.nn.functional.normalize(rng.normal("features", 0, (n_rows, dim))[0], dim=-1)
    labels = torch.arange(n_rows) % n_classes
    env = ClassificationBandit(features, labels, n_runs, horizon, run_keys(0, range(n_runs), "reading-rows"))
    matrix = np.stack([env.round(t).rewards.numpy() for t in range(horizon)])  # (horizon, n_runs, n_arms)
    np.testing.assert_allclose(matrix.mean(axis=(0, 2)), 1.0 / n_classes, rtol=0, atol=1e-15)
    assert torch.equal(env.mean_reward_all_rounds(), torch.full((n_runs,), 1.0 / n_classes, dtype=torch.float64))
    policy = lnucb_ta({"global_mean": "all_rewards"}, env, run_keys(0, range(n_runs), "reading-g"))
    for t in range(5):
        assert torch.equal(policy.global_attention(), torch.full((n_runs,), 1.0 / n_classes, dtype=torch.float64))
        bandit_round = env.round(t)
        arms = policy.select(bandit_round.observation)
        policy.update(bandit_round.observation, arms, bandit_round.reward(arms))


def test_all_rewards_is_the_mean_of_the_whole_reward_matrix_on_synthetic():
    """HARE-Sim: ``g`` equals the mean of every arm's realised reward over every round of the horizon, rounds not yet
    played included, from round 0 on; it differs between runs and enters Alg. 3 line 4 (``alpha_a = alpha_0 kappa g``
    before any pull)."""
    n_runs, horizon = 3, 25
    env = SyntheticBandit(SMALL_SIM, n_runs, horizon, run_keys(0, range(n_runs), "reading-sim"))
    matrix = np.stack([env.round(t).rewards.numpy() for t in range(horizon)])  # (horizon, n_runs, n_arms)
    brute = np.array([matrix[:, run, :].mean() for run in range(n_runs)])
    policy = lnucb_ta(
        {"global_mean": "all_rewards", "alpha_0": 2.0, "kappa": 0.25}, env, run_keys(0, range(n_runs), "reading-g")
    )
    np.testing.assert_allclose(policy.global_attention().numpy(), brute, rtol=0, atol=1e-12)
    assert len(set(policy.global_attention().tolist())) == n_runs
    torch.testing.assert_close(
        policy.exploration_rates(),
        (2.0 * 0.25 * policy.global_attention())[:, None].expand(n_runs, env.n_arms),
        rtol=0,
        atol=1e-15,
    )
    before = policy.global_attention().clone()
    for t in range(3):
        bandit_round = env.round(t)
        arms = policy.select(bandit_round.observation)
        policy.update(bandit_round.observation, arms, bandit_round.reward(arms))
    assert torch.equal(policy.global_attention(), before)


class NoMatrixBandit(BanditEnvironment):
    """An environment that does not expose its reward matrix."""

    def __init__(self):
        self.n_runs, self.n_arms, self.dim, self.horizon, self.query_dim = 1, 2, 1, 5, 1

    def round(self, t: int) -> BanditRound:
        rewards = torch.zeros(1, 2, dtype=torch.float64)
        return BanditRound(Observation(t, torch.zeros(1, 2, 1, dtype=torch.float64)), rewards, rewards)


def test_all_rewards_is_refused_where_the_matrix_is_not_exposed():
    with pytest.raises(ValueError, match=r"^NoMatrixBandit does not expose the mean of its whole reward matrix"):
        lnucb_ta({"global_mean": "all_rewards"}, NoMatrixBandit(), run_keys(0, [0], "reading-none"))
    with pytest.raises(
        ValueError,
        match=r"global_mean: 'all_rewards' needs the whole reward matrix, which a replay environment does not have",
    ):
        make_config("lnucb_ta", {"global_mean": "all_rewards"}).check_environment("replay")
    make_config("lnucb_ta", {"global_mean": "all_rewards"}).check_environment("classification")


def ridge_estimate(contexts: list[np.ndarray], rewards: list[float], lam: float) -> np.ndarray:
    """``(lam I + sum x x^T)^{-1} sum r x`` of one arm."""
    dim = len(contexts[0])
    a = lam * np.eye(dim) + sum(np.outer(x, x) for x in contexts)
    return np.linalg.solve(a, sum(r * x for x, r in zip(contexts, rewards, strict=True)))


@pytest.mark.parametrize("dim", [3, 70])
def test_uniform_theta_init_then_the_ridge_estimate(dim):
    """``alpha_0 = 0``, no kNN term: the index is ``l_a``. Before an arm's first update ``l_a = x_a^T theta_a`` with
    ``theta_a`` in ``[-1, 1]^d``, the same for two constructions with the same keys and for each run constructed alone,
    different between runs; from its first update on, the ridge estimate (below and above the dimension where the
    width goes through ``A^{-1} x``)."""
    n_runs, n_arms, lam = 3, 3, 1.5
    params = {"alpha_0": 0.0, "adaptive_knn": False, "theta_init": "uniform", "lam": lam}
    keys = run_keys(0, range(n_runs), "reading-theta")
    env = empty_env(n_runs, n_arms, dim)
    policy = lnucb_ta(params, env, keys)
    theta = policy.initial_theta
    assert theta.shape == (n_runs, n_arms, dim) and bool((theta.abs() < 1).all())
    assert theta.min() < -0.5 and theta.max() > 0.5
    assert torch.equal(lnucb_ta(params, empty_env(n_runs, n_arms, dim), keys).initial_theta, theta)
    for run in range(n_runs):
        assert torch.equal(
            lnucb_ta(params, empty_env(1, n_arms, dim), keys[run : run + 1]).initial_theta[0], theta[run]
        )
    assert not torch.equal(theta[0], theta[1])
    rng = CounterRNG(run_keys(1, range(n_runs), "reading-theta-data"))
    pulls = Pulls(n_runs, n_arms)
    for t in range(8):
        x = torch.nn.functional.normalize(rng.normal("x", t, (n_arms, dim)), dim=-1)
        scores = policy.scores(x)
        for run in range(n_runs):
            for arm in range(n_arms):
                stored = pulls.rewards[run][arm]
                coefficients = (
                    ridge_estimate(pulls.contexts[run][arm], stored, lam) if stored else theta[run, arm].numpy()
                )
                assert float(scores[run, arm]) == pytest.approx(float(x[run, arm].numpy() @ coefficients), abs=1e-12)
        arms = torch.full((n_runs,), t % 2)  # arm 2 is never pulled: it keeps its draw
        pulls.feed(policy, t, x, arms, rng.normal("r", t))
    assert not pulls.rewards[0][2]


def test_zero_theta_init_scores_zero_before_any_pull():
    policy = lnucb_ta({"alpha_0": 0.0, "adaptive_knn": False}, empty_env(2, 3, 4), run_keys(0, [0, 1], "reading-zero"))
    assert policy.initial_theta is None
    x = torch.nn.functional.normalize(CounterRNG(run_keys(0, [0, 1], "reading-zero-x")).normal("x", 0, (3, 4)), dim=-1)
    assert torch.equal(policy.scores(x), torch.zeros(2, 3, dtype=torch.float64))


DEFAULTS = {"knn_weights": "uniform", "global_mean": "rounds", "k_rounding": "round", "theta_init": "zero"}


@pytest.mark.parametrize("shared_context", [True, False])
def test_defaults_are_the_algorithm_as_written_to_the_bit(shared_context):
    """The four keys at their defaults, given or left out: the same scores and arms round after round, the Alg. 2
    adjustment of :class:`AdaptiveNeighborMixin` (the enhanced variants' code) op for op, and no new state."""
    n_runs, n_arms, dim = 3, 4, 3
    keys = run_keys(0, range(n_runs), "reading-defaults")
    env = empty_env(n_runs, n_arms, dim)
    common = {"alpha_0": 0.7, "theta_max": 8}
    plain = lnucb_ta(common, env, keys)
    explicit = lnucb_ta({**common, **DEFAULTS}, env, keys)
    assert set(plain.state_dict()) == set(explicit.state_dict())
    assert not {"initial_theta", "global_constant"} & set(plain.state_dict())
    rng = CounterRNG(run_keys(1, range(n_runs), "reading-defaults-data"))
    for t in range(30):
        x = torch.nn.functional.normalize(rng.normal("x", t, (1 if shared_context else n_arms, dim)), dim=-1).expand(
            n_runs, n_arms, dim
        )
        observation = Observation(t, x)
        assert torch.equal(plain.scores(x), explicit.scores(x))
        mixin = AdaptiveNeighborMixin.knn_adjustment(plain, x)
        own = plain.knn_adjustment(x)
        assert torch.equal(mixin[0], own[0]) and torch.equal(mixin[1], own[1])
        arms = plain.select(observation)
        assert torch.equal(arms, explicit.select(observation))
        rewards = (rng.uniform("r", t) < 0.5).to(torch.float64)
        for policy in (plain, explicit):
            policy.update(observation, arms, rewards)


def test_the_public_code_reading_sets_all_four_switches():
    config = make_config("lnucb_ta", PUBLIC_CODE_READING)
    assert {key: getattr(config, key) for key in DEFAULTS} == PUBLIC_CODE_READING
    assert all(PUBLIC_CODE_READING[key] != value for key, value in DEFAULTS.items())


def test_batched_equals_alone_with_all_four_switches():
    """All four switches on, HARE-Sim (it exposes its reward matrix): each run alone, with its own key, pulls exactly
    the
    arms it pulls in the batch, and holds the same state up to the environment's own rounding (its rewards come from
    matrix products over the batch's rows, which round differently for one row)."""
    batched_matches_alone(
        "lnucb_ta",
        {**PUBLIC_CODE_READING, "theta_max": 8},
        lambda n, keys: SyntheticBandit(SMALL_SIM, n, 30, keys),
        n_runs=3,
        horizon=30,
        atol=1e-12,
    )


def test_batched_equals_alone_with_per_arm_contexts():
    """The three switches an environment without a reward matrix allows, on contexts that differ between arms."""
    params = {key: value for key, value in PUBLIC_CODE_READING.items() if key != "global_mean"}
    batched_matches_alone(
        "lnucb_ta",
        {**params, "theta_max": 8},
        lambda n, keys: GaussianContextBandit(n, 3, 2, 30, keys),
        n_runs=3,
        horizon=30,
        atol=0,
    )
