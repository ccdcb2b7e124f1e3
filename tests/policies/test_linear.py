"""Linear policies: brute-force scores, the ridge state, LinTS sampling, MABWiser/OBP cross-checks, regret."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest
import torch

from hare.envs.base import Observation
from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.model.covariance import ROW_PRODUCTS_MIN_DIM, RidgeState
from hare.policies import build_policy, make_config
from hare.random import CounterRNG, run_keys

LINEAR = ["linucb", "lin_ts", "lin_thompson_ucb"]


def inverse_drift(state: RidgeState) -> torch.Tensor:
    """Largest ``|A^{-1} A - I|`` entry per run, ``(n_runs,)``: the rounding drift of the kept inverse."""
    eye = torch.eye(state.dim, dtype=torch.float64, device=state.inverse.device)
    return (state.inverse @ state.precision - eye).abs().flatten(1).max(dim=1).values


@pytest.mark.parametrize(
    "name, params, match",
    [
        ("linucb", {"alpha": -1.0}, r"LinUCBConfig\.alpha: must be >= 0"),
        ("linucb", {"lam": 0.0}, r"LinUCBConfig\.lam: must be > 0"),
        ("linucb", {"refactor_every": 0}, r"LinUCBConfig\.refactor_every: must be >= 1"),
        ("lin_ts", {"nu": -0.1}, r"LinTSConfig\.nu: must be >= 0"),
        ("lin_ts", {"nu": math.inf}, r"LinTSConfig\.nu"),
        ("lin_ts", {"lam": -1.0}, r"LinTSConfig\.lam: must be > 0"),
        ("lin_ts", {"refactor_every": 0}, r"LinTSConfig\.refactor_every"),
        ("lin_thompson_ucb", {"alpha": -0.5}, r"LinThompsonUCBConfig\.alpha: must be >= 0"),
        ("lin_thompson_ucb", {"nu": -0.5}, r"LinThompsonUCBConfig\.nu: must be >= 0"),
        ("lin_thompson_ucb", {"lam": 0.0}, r"LinThompsonUCBConfig\.lam: must be > 0"),
        ("lin_ts", {"sampling": "cholesky"}, r"LinTSConfig\.sampling: must be one of \('score', 'parameter'\)"),
        ("lin_thompson_ucb", {"sampling": None}, r"LinThompsonUCBConfig\.sampling"),
    ],
)
def test_invalid_config_names_the_field(name, params, match):
    with pytest.raises(ValueError, match=match):
        make_config(name, params)


def test_unknown_hyperparameter_is_an_error_naming_it():
    with pytest.raises(ValueError, match=r"unknown hyperparameter\(s\) \['epsilon'\]"):
        make_config("lin_ts", {"epsilon": 0.1})


def test_linucb_scores_match_numpy_brute_force(table_bandit):
    n_arms, dim, alpha, lam = 4, 3, 0.7, 2.0
    env = table_bandit(1, 2, 30, n_arms, dim, shared_context=False)
    policy = build_policy("linucb", {"alpha": alpha, "lam": lam}, env, run_keys(0, range(2), "linucb"))
    history = CounterRNG(run_keys(1, range(2), "arms")).randint("arms", 0, n_arms, (29,))
    for t in range(29):
        current = env.round(t)
        policy.update(current.observation, history[:, t], current.reward(history[:, t]))
    x_now = env.round(29).observation.contexts
    scores = policy.scores(x_now)
    for run in range(2):
        for arm in range(n_arms):
            pulled = (history[run] == arm).numpy()
            x_past = env.contexts[run, :29, arm].numpy()[pulled]
            r_past = env.rewards[run, :29, arm].numpy()[pulled]
            a_matrix = lam * np.eye(dim) + x_past.T @ x_past
            theta = np.linalg.solve(a_matrix, x_past.T @ r_past)
            x = x_now[run, arm].numpy()
            expected = x @ theta + alpha * math.sqrt(x @ np.linalg.inv(a_matrix) @ x)
            assert scores[run, arm].item() == pytest.approx(expected, abs=1e-10)


@pytest.mark.parametrize("name, params", [("lin_ts", {"nu": 0.3}), ("lin_thompson_ucb", {"nu": 0.3, "alpha": 0.5})])
def test_thompson_policies_through_row_products_equal_the_quadratic_form_path(
    name, params, simulator, table_bandit, monkeypatch
):
    """At ``dim >= ROW_PRODUCTS_MIN_DIM`` the Thompson policies take widths from ``v_a = A_a^{-1} x_a`` and
    reuse the pulled arm's ``v`` in the update; with the threshold raised above ``dim`` they take the
    quadratic form and read the inverse again. Same arms over 60 rounds, same state to rounding."""
    n_runs, n_arms, dim, horizon = 3, 4, ROW_PRODUCTS_MIN_DIM, 60
    env = table_bandit(13, n_runs, horizon, n_arms, dim)
    keys = run_keys(0, range(n_runs), name)
    products = simulator(name, params, env, keys)
    monkeypatch.setattr("hare.policies.linear.ROW_PRODUCTS_MIN_DIM", dim + 1)
    form = simulator(name, params, env, keys)
    assert torch.equal(products.arms, form.arms)
    assert len(set(products.arms.flatten().tolist())) > 1
    assert torch.allclose(products.policy.ridge.inverse, form.policy.ridge.inverse, rtol=0, atol=1e-12)
    assert torch.allclose(products.policy.ridge.theta, form.policy.ridge.theta, rtol=0, atol=1e-12)


def test_linucb_through_row_products_matches_numpy_brute_force(table_bandit):
    """At ``dim >= ROW_PRODUCTS_MIN_DIM`` with a context shared by the arms (the classification
    layout), LinUCB scores through ``A^{-1} x`` and reuses it in its update: the arms it pulls and
    its scores follow a NumPy LinUCB that inverts ``A`` every round."""
    n_runs, n_arms, dim, horizon, alpha, lam = 2, 3, ROW_PRODUCTS_MIN_DIM, 40, 0.8, 1.5
    rng = np.random.default_rng(0)
    contexts = rng.normal(size=(horizon, n_runs, dim))
    contexts /= np.linalg.norm(contexts, axis=-1, keepdims=True)
    rewards = rng.random((horizon, n_runs, n_arms))
    env = table_bandit(0, n_runs, 2, n_arms, dim)
    policy = build_policy("linucb", {"alpha": alpha, "lam": lam}, env, run_keys(0, range(n_runs), "row-products"))
    a_matrix = np.broadcast_to(lam * np.eye(dim), (n_runs, n_arms, dim, dim)).copy()
    b_vector = np.zeros((n_runs, n_arms, dim))
    for t in range(horizon):
        x = torch.as_tensor(contexts[t])
        observation = Observation(t, x[:, None, :].expand(n_runs, n_arms, dim))
        scores = policy.scores(observation.contexts)
        arms = policy.select(observation)
        expected = np.empty((n_runs, n_arms))
        for run in range(n_runs):
            for arm in range(n_arms):
                inverse = np.linalg.inv(a_matrix[run, arm])
                xv = contexts[t, run]
                expected[run, arm] = xv @ inverse @ b_vector[run, arm] + alpha * math.sqrt(xv @ inverse @ xv)
        np.testing.assert_allclose(scores.numpy(), expected, rtol=0, atol=1e-10)
        np.testing.assert_allclose(
            expected[np.arange(n_runs), arms.numpy()], expected.max(-1), rtol=0, atol=1e-10
        )  # ties go to a random maximiser
        pulled = rewards[t, np.arange(n_runs), arms.numpy()]
        policy.update(observation, arms, torch.as_tensor(pulled))
        for run, arm in enumerate(arms.tolist()):
            a_matrix[run, arm] += np.outer(contexts[t, run], contexts[t, run])
            b_vector[run, arm] += pulled[run] * contexts[t, run]


def test_sherman_morrison_matches_brute_force_inverse():
    n_runs, groups, dim = 3, (2, 4), 5
    state = RidgeState(n_runs, groups, dim, lam=0.5, refactor_every=10**9)
    rng = CounterRNG(run_keys(2, range(n_runs), "sm"))
    for step in range(40):
        x = rng.normal("x", step, (*groups, dim))
        weight = rng.uniform("w", step, groups) * (rng.uniform("keep", step, groups) < 0.7)
        state.update(x, rng.normal("r", step, groups), weight)
        index = rng.randint("i", step, 8)
        state.update_selected(index, rng.normal("xs", step, (dim,)), rng.normal("rs", step))
    brute = torch.linalg.inv(state.precision)
    assert torch.allclose(state.inverse, brute, atol=1e-10, rtol=1e-8)
    assert float(inverse_drift(state).max()) < 1e-10


def test_long_horizon_keeps_the_inverse_within_1e_6_of_identity():
    horizon, dim = 100_000, 5
    state = RidgeState(1, (1,), dim, lam=1.0, refactor_every=1000)
    rng = CounterRNG(run_keys(3, [0], "long"))
    x = rng.normal("x", 0, (horizon, dim))[0]
    rewards = rng.normal("r", 0, (horizon,))[0]
    index = torch.zeros(1, dtype=torch.int64)
    worst = 0.0
    for t in range(horizon):
        state.update_selected(index, x[t : t + 1], rewards[t : t + 1])
        if t % 1000 == 998:
            worst = max(worst, float(inverse_drift(state).max()))
    assert worst < 1e-6
    assert float(inverse_drift(state).max()) < 1e-6


def test_lin_ts_samples_have_the_posterior_mean_and_covariance(table_bandit):
    n_runs, n_arms, dim, nu = 20_000, 2, 3, 0.8
    history_env = table_bandit(4, 1, 25, n_arms, dim, shared_context=False)
    contexts = history_env.contexts.expand(n_runs, -1, -1, -1)
    rewards = history_env.rewards.expand(n_runs, -1, -1)
    env = type(history_env)(contexts, rewards)
    policy = build_policy("lin_ts", {"nu": nu}, env, run_keys(5, range(n_runs), "lin_ts"))
    for t in range(25):
        current = env.round(t)
        arms = torch.full((n_runs,), t % n_arms)
        policy.update(current.observation, arms, current.reward(arms))
    samples = policy.sample_theta(25)  # (n_runs, n_arms, dim)
    for arm in range(n_arms):
        mean = policy.ridge.theta[0, arm]
        covariance = nu**2 * policy.ridge.inverse[0, arm]
        centred = samples[:, arm] - mean
        assert (centred.mean(0).abs() <= 4 * covariance.diagonal().sqrt() / math.sqrt(n_runs)).all()
        empirical = centred.T @ centred / n_runs
        assert torch.allclose(empirical, covariance, atol=0.05 * covariance.diagonal().max().item())


@pytest.mark.parametrize("name, params", [("lin_ts", {"nu": 0.8}), ("lin_thompson_ucb", {"nu": 0.8, "alpha": 0.3})])
def test_score_and_parameter_sampling_give_the_posterior_law_of_the_scores(name, params, table_bandit):
    """Over 20,000 runs with one shared history, the scores of both sampling modes have mean
    ``x_a^T theta_hat_a + alpha w_a`` and variance ``nu^2 w_a^2``, ``w_a^2 = x_a^T A_a^{-1} x_a``, and are
    uncorrelated across arms (4-sigma bands of the sampling error)."""
    n_runs, n_arms, dim, nu, alpha = 20_000, 3, 4, params["nu"], params.get("alpha", 0.0)
    history_env = table_bandit(11, 1, 31, n_arms, dim, shared_context=False)
    env = type(history_env)(history_env.contexts.expand(n_runs, -1, -1, -1), history_env.rewards.expand(n_runs, -1, -1))
    for sampling in ("score", "parameter"):
        policy = build_policy(name, {**params, "sampling": sampling}, env, run_keys(2, range(n_runs), name))
        for t in range(30):
            current = env.round(t)
            arms = torch.full((n_runs,), t % n_arms)
            policy.update(current.observation, arms, current.reward(arms))
        x = env.round(30).observation.contexts[0]  # (n_arms, dim)
        inverse, theta = policy.ridge.inverse[0], policy.ridge.theta[0]
        width = torch.einsum("ai,aij,aj->a", x, inverse, x).sqrt()
        scores = policy.scores(env.round(30).observation)  # (n_runs, n_arms)
        standard = (scores - (x * theta).sum(-1) - alpha * width) / (nu * width)
        assert (standard.mean(0).abs() < 4 / math.sqrt(n_runs)).all(), sampling
        assert ((standard.var(0) - 1).abs() < 4 * math.sqrt(2 / n_runs)).all(), sampling
        correlation = torch.corrcoef(standard.T)
        assert (correlation - torch.eye(n_arms, dtype=torch.float64)).abs().max() < 4 / math.sqrt(n_runs), sampling


def test_lin_ts_pulls_the_arms_mabwiser_pulls_on_the_same_noise(table_bandit):
    """MABWiser's LinTS scores ``x^T beta~_a`` with ``beta~_a ~ N(beta_a, alpha^2 A_a^{-1})``, its ridge fit
    through ``np.linalg.inv``. Its sampler is replaced by one that spends our standard normal ``z_a``
    (stream ``"lin-ts-score"``) along the context, ``beta_a + C x z_a / sqrt(x^T C x)`` with
    ``C = alpha^2 A_a^{-1}``: a draw whose projection on ``x`` has the posterior law. With the same
    ``z`` both then score ``x^T beta_a + alpha sqrt(x^T A_a^{-1} x) z_a``, each from its own posterior;
    both start from one pull per arm (MABWiser's untrained arms start at ``A^{-1} = lam I``)."""
    mab = importlib.import_module("mabwiser.mab")
    n_arms, dim, nu, lam = 5, 4, 0.3, 1.5
    env = table_bandit(12, 1, 400, n_arms, dim)
    keys = run_keys(0, [0], "lin_ts")
    policy = build_policy("lin_ts", {"nu": nu, "lam": lam}, env, keys)
    reference = mab.MAB(
        arms=list(range(n_arms)), learning_policy=mab.LearningPolicy.LinTS(alpha=nu, l2_lambda=lam), seed=0
    )
    noise = CounterRNG(keys)
    clock = {"t": n_arms - 1}

    class SameNoise:
        def __init__(self, arm: int, x: np.ndarray):
            self.arm, self.x = arm, x

        def multivariate_normal(self, mean, cov, size):
            z = float(noise.normal("lin-ts-score", clock["t"], (n_arms,))[0, self.arm])
            direction = cov @ self.x / np.sqrt(self.x @ cov @ self.x)
            return np.broadcast_to(mean + direction * z, (size, len(mean)))

    def select(x):
        clock["t"] += 1
        for arm, model in reference._imp.arm_to_model.items():
            model.rng = SameNoise(arm, x)
        return reference.predict(x[None])

    ours, theirs = lockstep(policy, env, n_arms, select, mabwiser_updater(reference))
    assert ours == theirs
    assert len(set(ours)) > 2


def test_lin_thompson_ucb_reduces_to_lin_ts_and_to_linucb(simulator, table_bandit):
    env = table_bandit(6, 3, 60, 4, 3, shared_context=False)
    keys = run_keys(0, range(3), "mixture")
    mixture_as_ts = simulator("lin_thompson_ucb", {"alpha": 0.0, "nu": 0.7}, env, keys).arms
    lin_ts = simulator("lin_ts", {"nu": 0.7}, env, keys).arms
    assert torch.equal(mixture_as_ts, lin_ts)
    mixture_as_ucb = simulator("lin_thompson_ucb", {"alpha": 0.4, "nu": 0.0}, env, keys).arms
    linucb = simulator("linucb", {"alpha": 0.4}, env, keys).arms
    assert torch.equal(mixture_as_ucb, linucb)


@pytest.mark.parametrize("name", LINEAR)
def test_batched_runs_equal_runs_alone(name, default_params, batched_equals_unbatched):
    batched_equals_unbatched(name, default_params[name])


@pytest.mark.parametrize("name", ["lin_ts", "lin_thompson_ucb"])
def test_batched_runs_equal_runs_alone_with_parameter_sampling(name, default_params, batched_equals_unbatched):
    batched_equals_unbatched(name, {**default_params[name], "sampling": "parameter"})


def mabwiser_updater(reference):
    """``update(arm, reward, x)`` for a MABWiser model: ``fit`` on the first call, ``partial_fit`` after."""
    fitted = []

    def update(arm, reward, x):
        if fitted:
            reference.partial_fit(decisions=[arm], rewards=[reward], contexts=x[None])
        else:
            reference.fit(decisions=[arm], rewards=[reward], contexts=x[None])
            fitted.append(True)

    return update


def lockstep(policy, env, n_arms: int, reference_select, reference_update) -> tuple[list[int], list[int]]:
    """Warm both with one pull per arm, then feed both the reference's arm each round; return both sequences."""
    for arm in range(n_arms):
        current = env.round(arm)
        chosen = torch.tensor([arm])
        reward = current.reward(chosen)
        policy.update(current.observation, chosen, reward)
        reference_update(arm, float(reward), current.observation.contexts[0, 0].numpy())
    ours, reference = [], []
    for t in range(n_arms, env.horizon):
        current = env.round(t)
        x = current.observation.contexts[0, 0].numpy()
        ours.append(int(policy.select(current.observation)))
        reference.append(int(reference_select(x)))
        chosen = torch.tensor([reference[-1]])
        reward = current.reward(chosen)
        policy.update(current.observation, chosen, reward)
        reference_update(reference[-1], float(reward), x)
    return ours, reference


@pytest.mark.parametrize("alpha, lam", [(1.0, 1.0), (0.3, 1.0), (0.5, 2.0)])
def test_linucb_pulls_the_arms_mabwiser_pulls(alpha, lam, table_bandit):
    """MABWiser's LinUCB scores ``x^T A^{-1} b + alpha sqrt(x^T A^{-1} x)`` with ``A^{-1}`` from
    ``np.linalg.inv``; it starts untrained arms at ``A^{-1} = lam I`` (not ``I / lam``), so both
    start from one pull per arm, after which every arm has been refitted."""
    mab = importlib.import_module("mabwiser.mab")
    n_arms, dim = 5, 4
    env = table_bandit(9, 1, 400, n_arms, dim)
    policy = build_policy("linucb", {"alpha": alpha, "lam": lam}, env, run_keys(0, [0], "linucb"))
    reference = mab.MAB(
        arms=list(range(n_arms)), learning_policy=mab.LearningPolicy.LinUCB(alpha=alpha, l2_lambda=lam), seed=0
    )
    ours, theirs = lockstep(policy, env, n_arms, lambda x: reference.predict(x[None]), mabwiser_updater(reference))
    assert ours == theirs
    assert len(set(ours)) > 1


@pytest.mark.parametrize("alpha", [1.0, 0.2])
def test_linucb_pulls_the_arms_obp_pulls(alpha, table_bandit):
    """OBP's ``LinUCB(epsilon=alpha)`` is disjoint LinUCB with ``lam = 1`` and Sherman–Morrison
    updates; its ``argsort()[::-1]`` breaks ties by the last arm, so both start from one pull per arm."""
    obp_policy = importlib.import_module("obp.policy")
    n_arms, dim = 5, 4
    env = table_bandit(10, 1, 400, n_arms, dim)
    policy = build_policy("linucb", {"alpha": alpha}, env, run_keys(0, [0], "linucb"))
    reference = obp_policy.LinUCB(dim=dim, n_actions=n_arms, epsilon=alpha, random_state=0)
    ours, theirs = lockstep(
        policy,
        env,
        n_arms,
        lambda x: reference.select_action(x[None])[0],
        lambda arm, reward, x: reference.update_params(action=arm, reward=reward, context=x[None]),
    )
    assert ours == theirs
    assert len(set(ours)) > 1


@pytest.mark.parametrize("name", LINEAR)
def test_beats_random_on_the_synthetic_environment(name, sanity_regret):
    """Stated margin: at least 30% less cumulative pseudo-regret than uniform random play over 800 rounds."""
    assert sanity_regret(name) < 0.7 * sanity_regret("random")


def test_linucb_regret_grows_sublinearly():
    """Log-log slope of LinUCB's mean cumulative regret over T in {125, ..., 2000} is below 0.75
    on a realisable HARE-Sim instance (10 items, identity link)."""
    horizon, n_runs = 2000, 4
    env = SyntheticBandit(
        SyntheticConfig(n_items=10, n_clusters=5), n_runs, horizon, run_keys(1, range(n_runs), "slope-env")
    )
    policy = build_policy("linucb", {"alpha": 1.0}, env, run_keys(1, range(n_runs), "slope"))
    regret = torch.zeros(horizon, n_runs, dtype=torch.float64)
    for t in range(horizon):
        current = env.round(t)
        arms = policy.select(current.observation)
        policy.update(current.observation, arms, current.reward(arms))
        regret[t] = current.regret(arms)
    grid = np.array([125, 250, 500, 1000, 2000])
    cumulative = regret.cumsum(0).mean(1).numpy()[grid - 1]
    slope = np.polyfit(np.log(grid), np.log(cumulative), 1)[0]
    assert slope < 0.75, f"slope {slope:.3f}, cumulative regret {cumulative}"
