"""Context-free policies: closed-form indices, the Beta sampler, batching, MABWiser cross-checks, regret."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest
import scipy.optimize
import scipy.stats
import torch

from hare.envs.base import Observation
from hare.policies import build_policy, make_config
from hare.policies.base import bernoulli_kl, kl_upper_bound
from hare.policies.classic import beta_variates, gamma_variates
from hare.random import CounterRNG, run_keys

CONTEXT_FREE = ["ucb1", "kl_ucb", "eps_greedy", "beta_thompson"]


@pytest.mark.parametrize(
    "name, params, match",
    [
        ("ucb1", {"alpha": -0.1}, r"UCB1Config\.alpha: must be >= 0"),
        ("ucb1", {"alpha": math.nan}, r"UCB1Config\.alpha"),
        ("kl_ucb", {"c": -1.0}, r"KLUCBConfig\.c: must be >= 0"),
        ("kl_ucb", {"iterations": 5}, r"KLUCBConfig\.iterations: must be in \[10, 200\]"),
        ("eps_greedy", {"epsilon": 1.5}, r"EpsilonGreedyConfig\.epsilon: must be in \[0, 1\]"),
        ("eps_greedy", {"epsilon": -0.01}, r"EpsilonGreedyConfig\.epsilon"),
        ("eps_greedy", {"decay": -1.0}, r"EpsilonGreedyConfig\.decay: must be >= 0"),
        ("beta_thompson", {"a0": 0.0}, r"BetaThompsonConfig\.a0: must be > 0"),
        ("beta_thompson", {"b0": -2.0}, r"BetaThompsonConfig\.b0: must be > 0"),
        ("beta_thompson", {"b0": math.inf}, r"BetaThompsonConfig\.b0"),
    ],
)
def test_invalid_config_names_the_field(name, params, match):
    with pytest.raises(ValueError, match=match):
        make_config(name, params)


class FakeEnv:
    def __init__(self, n_runs: int, n_arms: int, dim: int = 2):
        self.n_runs, self.n_arms, self.dim = n_runs, n_arms, dim


def observation(t: int, n_runs: int, n_arms: int, dim: int = 2) -> Observation:
    return Observation(t, torch.zeros(n_runs, n_arms, dim, dtype=torch.float64))


def policy_with_history(name: str, params: dict, arms: list[int], rewards: list[float], n_arms: int = 3):
    policy = build_policy(name, params, FakeEnv(1, n_arms), run_keys(0, [0], name))
    for t, (arm, reward) in enumerate(zip(arms, rewards, strict=True)):
        policy.update(observation(t, 1, n_arms), torch.tensor([arm]), torch.tensor([reward], dtype=torch.float64))
    return policy


def test_ucb1_index_matches_hand_computation():
    policy = policy_with_history("ucb1", {"alpha": 0.5}, [0, 1, 2, 0, 0, 1], [1.0, 0.0, 0.5, 0.0, 0.5, 1.0])
    # t = 6 pulls; arm 0: n=3, mean 0.5; arm 1: n=2, mean 0.5; arm 2: n=1, mean 0.5
    expected = [0.5 + 0.5 * math.sqrt(2 * math.log(6) / n) for n in (3, 2, 1)]
    assert torch.allclose(policy.scores()[0], torch.tensor(expected, dtype=torch.float64), atol=1e-12)
    assert int(policy.select(observation(6, 1, 3))) == 2


def test_index_policies_pull_every_arm_once_first():
    for name in ("ucb1", "kl_ucb", "eps_greedy"):
        params = {"epsilon": 0.0} if name == "eps_greedy" else {}
        policy = build_policy(name, params, FakeEnv(4, 6), run_keys(1, range(4), name))
        pulled = []
        for t in range(6):
            arms = policy.select(observation(t, 4, 6))
            pulled.append(arms)
            policy.update(observation(t, 4, 6), arms, torch.ones(4, dtype=torch.float64))
        assert (torch.stack(pulled).sort(dim=0).values == torch.arange(6)[:, None]).all(), name


def scipy_kl_ucb(mean: float, count: float, budget: float) -> float:
    def kl(p, q):
        return scipy.special.rel_entr(p, q) + scipy.special.rel_entr(1 - p, 1 - q)

    if mean >= 1.0 or count * kl(mean, 1 - 1e-15) <= budget:
        return 1.0
    return scipy.optimize.brentq(lambda q: count * kl(mean, q) - budget, mean, 1 - 1e-15, xtol=1e-14)


def test_kl_upper_bound_matches_scipy_root_finding():
    means = torch.tensor([0.0, 0.1, 0.5, 0.9, 0.999, 1.0, 0.3], dtype=torch.float64)
    counts = torch.tensor([1.0, 5.0, 20.0, 3.0, 100.0, 4.0, 1000.0], dtype=torch.float64)
    budget = torch.tensor(math.log(50.0) + 3 * math.log(math.log(50.0)), dtype=torch.float64)
    ours = kl_upper_bound(means, budget / counts, iterations=60)
    reference = [scipy_kl_ucb(m, n, float(budget)) for m, n in zip(means.tolist(), counts.tolist(), strict=True)]
    assert np.allclose(ours.numpy(), reference, atol=1e-9)
    assert (counts * bernoulli_kl(means, ours) <= budget + 1e-12).all()


def test_kl_upper_bound_equals_plain_bisection_bit_for_bit():
    """The bound's loop reuses the divergence's q-free terms in place; plain bisection on bernoulli_kl, written out
    here, must give the same bits (random means, counts and budgets, arms broadcast against a per-run budget)."""
    generator = torch.Generator().manual_seed(0)
    means = torch.rand(40, 7, generator=generator, dtype=torch.float64)
    means[0, :2] = torch.tensor([0.0, 1.0])
    level = (
        torch.rand(40, 1, generator=generator, dtype=torch.float64)
        * 5
        / torch.randint(1, 50, (40, 7), generator=generator)
    )
    low, high = means.clone(), torch.ones_like(means)
    for _ in range(60):
        middle = 0.5 * (low + high)
        inside = bernoulli_kl(means, middle) <= level
        low, high = torch.where(inside, middle, low), torch.where(inside, high, middle)
    assert torch.equal(kl_upper_bound(means, level, iterations=60), low)


def test_kl_ucb_policy_scores_use_log_t_plus_c_log_log_t():
    policy = policy_with_history("kl_ucb", {"c": 3.0}, [0, 1, 2, 2, 0], [1.0, 0.0, 0.5, 1.0, 0.0])
    t = 5.0
    budget = math.log(t) + 3.0 * math.log(math.log(t))
    expected = [scipy_kl_ucb(m, n, budget) for m, n in ((0.5, 2), (0.0, 1), (0.75, 2))]
    assert np.allclose(policy.scores()[0].numpy(), expected, atol=1e-9)


def test_kl_ucb_clips_rewards_into_unit_interval():
    policy = policy_with_history("kl_ucb", {}, [0, 1, 2], [2.0, -1.0, 0.5])
    assert policy.means[0].tolist() == [1.0, 0.0, 0.5]


@pytest.mark.parametrize("a, b", [(0.5, 0.5), (1.0, 1.0), (4.0, 4.0), (3.0, 1.0), (1.0, 3.0), (40.0, 2.5)])
def test_beta_variates_follow_the_beta_distribution(a, b):
    n = 6000
    rng = CounterRNG(run_keys(3, range(n), "beta-ks"))
    samples = beta_variates(rng, "ks", 11, torch.full((n, 1), a), torch.full((n, 1), b))[:, 0].numpy()
    assert scipy.stats.kstest(samples, scipy.stats.beta(a, b).cdf).pvalue > 1e-3


def test_gamma_variates_follow_the_gamma_distribution_for_small_shapes():
    n = 6000
    rng = CounterRNG(run_keys(4, range(n), "gamma-ks"))
    shapes = torch.tensor([[0.2, 1.0, 7.5]], dtype=torch.float64).expand(n, 3)
    samples = gamma_variates(rng, "ks", 0, shapes).numpy()
    for column, shape in enumerate([0.2, 1.0, 7.5]):
        assert scipy.stats.kstest(samples[:, column], scipy.stats.gamma(shape).cdf).pvalue > 1e-3


def test_beta_thompson_posterior_counts_binary_rewards_exactly():
    policy = policy_with_history("beta_thompson", {"a0": 2.0, "b0": 0.5}, [0, 0, 1, 2, 0], [1.0, 0.0, 1.0, 0.0, 1.0])
    alpha, beta = policy.posterior()
    assert alpha[0].tolist() == [4.0, 3.0, 2.0]
    assert beta[0].tolist() == [1.5, 0.5, 1.5]


def test_beta_thompson_binarises_fractional_rewards_with_the_reward_as_probability():
    n_runs = 4000
    policy = build_policy("beta_thompson", {}, FakeEnv(n_runs, 2), run_keys(5, range(n_runs), "bin"))
    policy.update(
        observation(0, n_runs, 2),
        torch.zeros(n_runs, dtype=torch.int64),
        torch.full((n_runs,), 0.3, dtype=torch.float64),
    )
    assert abs(policy.reward_sums[:, 0].mean().item() - 0.3) < 0.03


def test_eps_greedy_explores_with_the_scheduled_probability():
    n_runs = 4000
    policy = build_policy(
        "eps_greedy", {"epsilon": 0.4, "decay": 0.5}, FakeEnv(n_runs, 5), run_keys(6, range(n_runs), "eps")
    )
    policy.counts.fill_(1.0)
    policy.reward_sums[:, 3] = 1.0
    t = 2
    arms = policy.select(observation(t, n_runs, 5))
    epsilon_t = 0.4 / (1 + 0.5 * t)
    assert policy.exploration_probability(t, torch.zeros(n_runs)) == pytest.approx(epsilon_t)
    assert (arms != 3).double().mean().item() == pytest.approx(epsilon_t * 4 / 5, abs=0.02)


@pytest.mark.parametrize("name", ["random", *CONTEXT_FREE])
def test_batched_runs_equal_runs_alone(name, default_params, batched_equals_unbatched):
    batched_equals_unbatched(name, default_params[name])


mabwiser = importlib.import_module("mabwiser.mab")


@pytest.mark.parametrize(
    "name, params, learning_policy",
    [
        ("ucb1", {"alpha": 1.0}, lambda lp: lp.UCB1(alpha=1.0)),
        ("ucb1", {"alpha": 0.3}, lambda lp: lp.UCB1(alpha=0.3)),
        ("eps_greedy", {"epsilon": 0.0}, lambda lp: lp.EpsilonGreedy(epsilon=0.0)),
    ],
)
def test_same_arms_as_mabwiser_on_a_fixed_reward_table(name, params, learning_policy, table_bandit):
    """MABWiser breaks ties by the first arm and we at random; both start from the same one-pull-per-arm
    history, after which continuous rewards leave no ties. Its UCB1 index is ours:
    ``mean + alpha sqrt(2 log(total decisions) / n_a)``."""
    n_arms, horizon = 5, 300
    env = table_bandit(8, 1, n_arms + horizon, n_arms, 3)
    policy = build_policy(name, params, env, run_keys(0, [0], name))
    warm_arms = list(range(n_arms))
    warm_rewards = [float(env.rewards[0, t, t]) for t in warm_arms]
    for t, (arm, reward) in enumerate(zip(warm_arms, warm_rewards, strict=True)):
        policy.update(env.round(t).observation, torch.tensor([arm]), torch.tensor([reward], dtype=torch.float64))
    reference = mabwiser.MAB(arms=warm_arms, learning_policy=learning_policy(mabwiser.LearningPolicy), seed=0)
    reference.fit(decisions=warm_arms, rewards=warm_rewards)
    ours_sequence, reference_sequence = [], []
    for t in range(n_arms, n_arms + horizon):
        current = env.round(t)
        arm = policy.select(current.observation)
        reference_arm = reference.predict()
        ours_sequence.append(int(arm))
        reference_sequence.append(int(reference_arm))
        reward = current.reward(torch.tensor([reference_arm]))
        policy.update(current.observation, torch.tensor([reference_arm]), reward)
        reference.partial_fit(decisions=[reference_arm], rewards=[float(reward)])
    assert ours_sequence == reference_sequence
    if name == "ucb1":
        assert len(set(ours_sequence)) > 1, "the comparison should visit several arms"


@pytest.mark.parametrize("name", CONTEXT_FREE)
def test_beats_random_on_the_synthetic_environment(name, sanity_regret):
    """Stated margin: at least 10% less cumulative pseudo-regret than uniform random play over
    800 rounds (the best fixed arm has about a third of random's regret on this instance)."""
    assert sanity_regret(name) < 0.9 * sanity_regret("random")


def test_policy_randomness_follows_keys_loaded_in_place(table_bandit):
    """The policy's generator (kept between rounds for its cached counter heads) draws from the keys a
    ``load_state_dict`` copies in, not from the keys it was built with."""
    env = table_bandit(0, 2, 3, 4, 3)
    policy = build_policy("random", {}, env, run_keys(0, range(2), "a"))
    before = policy.rng.uniform("s", 0, (5,))
    other = build_policy("random", {}, env, run_keys(0, range(2), "b"))
    policy.load_state_dict(other.state_dict())
    assert torch.equal(policy.rng.uniform("s", 0, (5,)), other.rng.uniform("s", 0, (5,)))
    assert not torch.equal(policy.rng.uniform("s", 0, (5,)), before)


def test_random_in_synthesize_mode_outputs_the_embedding_of_the_arm_it_would_pull():
    from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
    from hare.policies.base import synthesizes
    from hare.random import run_keys

    env = SyntheticBandit(SyntheticConfig(n_items=12, n_clusters=3), 4, 10, run_keys(0, range(4), "env"))
    keys = run_keys(0, range(4), "pol")
    selecting, synthesizing = (
        build_policy("random", {}, env, keys),
        build_policy("random", {"mode": "synthesize"}, env, keys),
    )
    assert not selecting.synthesizes and synthesizing.synthesizes and synthesizes(synthesizing.config)
    observation = env.round(5).observation
    assert torch.equal(synthesizing.synthesize(observation), env.pool.embeddings[selecting.select(observation)])
    with pytest.raises(ValueError, match="rewards pool items only"):
        synthesizing.config.check_environment("classification")
    synthesizing.config.check_environment("synthetic")
    selecting.config.check_environment("classification")
