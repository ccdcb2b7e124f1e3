"""HARE's bonus weights learned online (hare.policies.alpha_learning; paper, eq:alpha-surrogate): the meta-gradient
against a finite-difference gradient of its surrogate, EXP3's weights against a hand-computed update, and the
meta-gradient at learning rate 0 against fixed alpha, bit for bit."""

import math

import pytest
import torch

from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.policies import build_policy, make_config
from hare.policies.alpha_learning import (
    exp3_draw,
    exp3_probabilities,
    exp3_update,
    meta_gradient_step,
    surrogate,
    surrogate_log_alpha_gradient,
    unit_rewards,
)
from hare.random import run_keys

SMALL = SyntheticConfig(n_items=24, n_clusters=4, n_users=3)


def random_round(seed: int, n_runs: int = 3, n_heads: int = 2, n_items: int = 12, n_clusters: int = 4):
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(n_runs, n_heads, n_items, generator=g, dtype=torch.float64)
    bonuses = torch.rand(n_runs, n_heads, n_clusters, generator=g, dtype=torch.float64) * 2
    critic = torch.randn(n_runs, n_heads, n_clusters, generator=g, dtype=torch.float64)
    clusters = torch.arange(n_items) % n_clusters
    alpha = torch.rand(n_runs, n_heads, generator=g, dtype=torch.float64) + 0.05
    return scores, bonuses, clusters, alpha, critic


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_meta_gradient_matches_a_finite_difference_of_the_surrogate(seed):
    scores, bonuses, clusters, alpha, critic = random_round(seed)
    weights = torch.softmax(scores + alpha[..., None] * bonuses.index_select(-1, clusters), dim=-1)
    gradient = surrogate_log_alpha_gradient(weights, bonuses, clusters, alpha, critic)
    step = 1e-6
    for h in range(alpha.shape[1]):
        shift = torch.zeros_like(alpha)
        shift[:, h] = step
        up = surrogate(scores, bonuses, clusters, alpha * torch.exp(shift), critic)
        down = surrogate(scores, bonuses, clusters, alpha * torch.exp(-shift), critic)
        torch.testing.assert_close(gradient[:, h], (up - down) / (2 * step), rtol=1e-6, atol=1e-10)


def test_meta_gradient_matches_autograd_and_the_step_is_multiplicative():
    scores, bonuses, clusters, alpha, critic = random_round(5)
    log_alpha = alpha.log().requires_grad_(True)
    surrogate(scores, bonuses, clusters, log_alpha.exp(), critic).sum().backward()
    weights = torch.softmax(scores + alpha[..., None] * bonuses.index_select(-1, clusters), dim=-1)
    gradient = surrogate_log_alpha_gradient(weights, bonuses, clusters, alpha, critic)
    torch.testing.assert_close(gradient, log_alpha.grad, rtol=1e-10, atol=1e-14)
    torch.testing.assert_close(meta_gradient_step(alpha, gradient, 0.3), torch.exp(alpha.log() + 0.3 * gradient))
    assert torch.equal(meta_gradient_step(alpha, gradient, 0.0), alpha)


def test_exp3_update_matches_a_hand_computation():
    """One run, one head, K = 3, gamma = 0.1; weights (1, 2, 1): p = 0.9 w / 4 + 0.1 / 3; point 1 drawn with reward
    0.6 gains exp(0.1 x 0.6 / (p_1 x 3))."""
    gamma = 0.1
    log_w = torch.tensor([[[0.0, math.log(2.0), 0.0]]], dtype=torch.float64)
    p = exp3_probabilities(log_w, gamma)
    hand_p = [0.9 * w / 4 + 0.1 / 3 for w in (1.0, 2.0, 1.0)]
    torch.testing.assert_close(p[0, 0], torch.tensor(hand_p, dtype=torch.float64), rtol=1e-15, atol=0)
    updated = exp3_update(log_w, p, torch.tensor([[1]]), torch.tensor([0.6], dtype=torch.float64), gamma)
    hand_w = [1.0, 2.0 * math.exp(gamma * 0.6 / (hand_p[1] * 3)), 1.0]
    hand_new = [w / sum(hand_w) for w in hand_w]
    torch.testing.assert_close(torch.softmax(updated, -1)[0, 0], torch.tensor(hand_new, dtype=torch.float64))
    assert updated.max() == 0.0  # shifted: the probabilities only read differences


def test_exp3_draws_follow_the_probabilities_and_rewards_are_rescaled_to_the_seen_range():
    probabilities = torch.tensor([[[0.2, 0.5, 0.3]]], dtype=torch.float64).expand(4, 1, 3)
    uniforms = torch.tensor([[0.1], [0.25], [0.69], [0.99]], dtype=torch.float64)
    assert exp3_draw(probabilities, uniforms).flatten().tolist() == [0, 1, 1, 2]
    rewards = torch.tensor([0.5, 2.0, 1.0], dtype=torch.float64)
    low = torch.tensor([0.5, 0.0, 1.0], dtype=torch.float64)
    high = torch.tensor([1.5, 2.0, 1.0], dtype=torch.float64)
    assert unit_rewards(rewards, low, high).tolist() == [0.0, 1.0, 0.5]


def play(params, runs=(0, 1, 2), horizon=40, n_heads=2):
    env = SyntheticBandit(SMALL, len(runs), horizon, run_keys(0, runs, "env"))
    policy = build_policy(
        "hare",
        {"projections": "random", "n_heads": n_heads, "online_lr": 0.05, **params},
        env,
        run_keys(0, runs, "policy"),
    )
    arms, alphas = [], []
    for t in range(horizon):
        round_ = env.round(t)
        chosen = policy.select(round_.observation)
        policy.update(round_.observation, chosen, round_.reward(chosen))
        arms.append(chosen)
        alphas.append(policy.trajectories().get("alpha_trajectory"))
    return policy, torch.stack(arms), alphas


def test_meta_gradient_at_learning_rate_zero_is_fixed_alpha_bit_for_bit():
    fixed, fixed_arms, _ = play({"alpha": 0.3})
    learned, learned_arms, alphas = play({"alpha": 0.3, "alpha_schedule": "meta_gradient", "alpha_lr": 0.0})
    assert torch.equal(fixed_arms, learned_arms)
    state = learned.state_dict()
    for name, value in fixed.state_dict().items():
        assert torch.equal(value, state[name]), name
    assert torch.equal(learned.alpha_schedule.learned_alpha, torch.full((3, 2), 0.3, dtype=torch.float64))
    assert learned.alpha_schedule.alpha_gradient_square.gt(0).all()  # the gradient was computed, and not applied


def test_learned_alpha_moves_per_head_and_run_and_batched_equals_alone():
    _, arms, alphas = play({"alpha": 0.3, "alpha_schedule": "meta_gradient", "alpha_lr": 0.05})
    last = alphas[-1]
    assert last.shape == (3, 2) and not torch.equal(last, torch.full_like(last, 0.3))
    assert len({round(v, 12) for v in last.flatten().tolist()}) == 6
    for params in (
        {"alpha": 0.3, "alpha_schedule": "meta_gradient"},
        {"alpha_schedule": "exp3", "alpha_grid": (0.0, 0.3, 1.0)},
    ):
        _, batched, traj = play(params)
        for i in range(3):
            _, alone, traj_alone = play(params, runs=(i,))
            assert torch.equal(alone[:, 0], batched[:, i])
            torch.testing.assert_close(traj_alone[-1][0], traj[-1][i], rtol=1e-12, atol=0)


def test_exp3_learns_online_only_and_reports_its_probabilities():
    policy, _, alphas = play({"alpha_schedule": "exp3", "alpha_grid": (0.0, 0.3, 1.0)})
    probabilities = policy.trajectories()["alpha_grid_probabilities"]
    assert probabilities.shape == (3, 2, 3)
    torch.testing.assert_close(probabilities.sum(-1), torch.ones(3, 2, dtype=torch.float64))
    assert not torch.equal(
        policy.alpha_schedule.exp3_log_weights, torch.zeros_like(policy.alpha_schedule.exp3_log_weights)
    )
    # an update without a select of the same observation (a logged interaction) leaves the learner as it is
    env = SyntheticBandit(SMALL, 2, 5, run_keys(0, [0, 1], "env"))
    fresh = build_policy(
        "hare",
        {"projections": "random", "alpha_schedule": "exp3", "alpha_grid": (0.0, 1.0)},
        env,
        run_keys(0, [0, 1], "policy"),
    )
    round_ = env.round(0)
    fresh.update(
        round_.observation, torch.zeros(2, dtype=torch.int64), round_.reward(torch.zeros(2, dtype=torch.int64))
    )
    assert torch.equal(fresh.alpha_schedule.exp3_log_weights, torch.zeros_like(fresh.alpha_schedule.exp3_log_weights))


@pytest.mark.parametrize(
    "params, message",
    [
        ({"alpha_schedule": "exp3"}, "alpha_grid"),
        ({"alpha_schedule": "exp3", "alpha_grid": (0.1,)}, "at least two"),
        ({"alpha_grid": (0.1, 1.0)}, "only used by alpha_schedule='exp3'"),
        ({"alpha_schedule": "meta_gradient", "alpha": 0.0}, "alpha > 0"),
        ({"alpha_lr": -1.0}, "alpha_lr"),
        ({"exp3_gamma": 1.5}, "exp3_gamma"),
        ({"alpha_schedule": "exp3", "alpha_grid": (0.1, -1.0)}, "alpha_grid"),
    ],
)
def test_invalid_learned_alpha_settings_name_the_field(params, message):
    with pytest.raises(ValueError, match=message):
        make_config("hare", params)
