import pytest
import torch

from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.policies import build_policy, make_config
from hare.random import run_keys

SMALL = SyntheticConfig(n_items=24, n_clusters=4, n_users=3)
# Noise-free and well separated: items sit within 0.02 of their cluster centre, so the
# cluster with the best mean score is the cluster of the best item.
SEPARATED = SyntheticConfig(n_items=24, n_clusters=4, n_users=3, cluster_spread=0.02, noise_sigma=0.0)


def environment(config, runs, horizon=40):
    return SyntheticBandit(config, len(runs), horizon, run_keys(0, runs, "env"))


def play(name, params, config, runs, horizon=40):
    """Arms ``(horizon, n_runs)`` and total regret ``(n_runs,)`` of policy ``name`` on runs ``runs``."""
    env = environment(config, runs, horizon)
    policy = build_policy(name, params, env, run_keys(0, runs, "policy"))
    arms, regret = [], torch.zeros(len(runs), dtype=torch.float64)
    for t in range(horizon):
        round_ = env.round(t)
        chosen = policy.select(round_.observation)
        policy.update(round_.observation, chosen, round_.reward(chosen))
        arms.append(chosen)
        regret += round_.regret(chosen)
    return torch.stack(arms), regret


def play_synthesis(params, config, runs, horizon=30):
    env = environment(config, runs, horizon)
    policy = build_policy("hare_synthesize", params, env, run_keys(0, runs, "policy"))
    outputs, regret = [], torch.zeros(len(runs), dtype=torch.float64)
    for t in range(horizon):
        observation = env.round(t).observation
        z = policy.synthesize(observation)
        reward, _, round_regret = env.synthesis_outcome(t, z)
        policy.update_synthesis(observation, z, reward)
        outputs.append(z)
        regret += round_regret
    return torch.stack(outputs), regret


def test_oracle_projections_and_true_users_pick_the_oracle_item():
    _, regret = play("hare", {"alpha": 0.0, "user_state": "oracle"}, SEPARATED, [0, 1, 2], horizon=60)
    assert torch.equal(regret, torch.zeros_like(regret))


@pytest.mark.parametrize("params", [
    {},
    {"alpha_schedule": "inverse_sqrt", "covariance_update": "attention_weighted"},
    {"alpha_schedule": "lnucb_ta", "user_state": "off", "n_clusters": 24},
    {"projections": "random", "n_heads": 2, "alpha_schedule": "per_head", "alphas": (0.5, 2.0), "n_clusters": 1, "online_lr": 0.1},
])
def test_batched_equals_unbatched_select(params):
    batched, _ = play("hare", params, SMALL, [0, 1, 2])
    for i in range(3):
        alone, _ = play("hare", params, SMALL, [i])
        assert torch.equal(alone[:, 0], batched[:, i])


@pytest.mark.parametrize("params", [{}, {"covariance_update": "attention_weighted", "alpha_schedule": "inverse_sqrt"}])
def test_batched_equals_unbatched_synthesize(params):
    """``z`` is continuous: matrix products over the run dimension may round differently with
    the batch size (last bit), so ``z`` agrees to 1e-12 and its dominant cluster exactly."""
    env = environment(SMALL, [0])
    clusters = build_policy("hare_synthesize", {}, env, run_keys(0, [0], "p")).clusters
    batched, _ = play_synthesis(params, SMALL, [0, 1])
    for i in range(2):
        alone, _ = play_synthesis(params, SMALL, [i])
        torch.testing.assert_close(alone[:, 0], batched[:, i], rtol=0, atol=1e-12)
        nearest = lambda z: clusters[(z @ env.pool.embeddings.T).argmax(-1)]  # noqa: E731
        assert torch.equal(nearest(alone[:, 0]), nearest(batched[:, i]))


def test_synthesize_mode_outputs_convex_combinations_with_bounded_regret():
    outputs, regret = play_synthesis({"alpha": 0.5}, SMALL, [0, 1], horizon=20)
    assert outputs.shape == (20, 2, SMALL.item_dim)
    assert (regret >= 0).all()
    env = environment(SMALL, [0])
    with pytest.raises(RuntimeError, match="synthesize"):
        build_policy("hare_synthesize", {}, env, run_keys(0, [0], "p")).select(env.round(0).observation)


def test_covariance_routes_to_the_pulled_cluster_and_alpha_schedules():
    env = environment(SMALL, [0, 1])
    policy = build_policy("hare", {"alpha_schedule": "lnucb_ta", "alpha": 2.0}, env, run_keys(0, [0, 1], "p"))
    round_ = env.round(0)
    arms = policy.select(round_.observation)
    q = policy.queries(round_.observation)
    policy.update(round_.observation, arms, round_.reward(arms))
    clusters = policy.clusters[arms]
    eye = torch.eye(policy.key_dim, dtype=torch.float64)
    for b in range(2):
        for j in range(policy.n_clusters):
            expected = eye + (torch.outer(q[b, 0], q[b, 0]) if j == clusters[b] else 0)
            torch.testing.assert_close(policy.attention.covariance.precision[b, 0, j], expected)
    reward = round_.reward(arms)
    expected_alpha = (2.0 / 2.0 * reward).clamp_min(0.0)  # kappa g + (1 - kappa) n_j = r for the one pulled cluster
    alpha = policy.alpha(1)[:, 0]  # (n_runs, C)
    torch.testing.assert_close(alpha[torch.arange(2), clusters], expected_alpha)


def test_hare_beats_random_and_rag_cosine_is_deterministic():
    _, hare_regret = play("hare", {}, SMALL, [0, 1], horizon=80)
    _, random_regret = play("random", {}, SMALL, [0, 1], horizon=80)
    assert hare_regret.mean() < 0.5 * random_regret.mean()
    first, _ = play("rag_cosine", {}, SMALL, [0, 1], horizon=10)
    second, _ = play("rag_cosine", {}, SMALL, [0, 1], horizon=10)
    assert torch.equal(first, second)


@pytest.mark.parametrize("params, match", [
    ({"alpha": -1.0}, "alpha"),
    ({"mode": "generate"}, "mode"),
    ({"alpha_schedule": "cosine"}, "alpha_schedule"),
    ({"alpha_schedule": "per_head", "n_heads": 2, "alphas": (1.0,)}, "alphas"),
    ({"alphas": (1.0,)}, "alphas"),
    ({"kappa": 1.5}, "kappa"),
    ({"n_heads": 0}, "n_heads"),
    ({"key_dim": 0}, "key_dim"),
    ({"n_clusters": -1}, "n_clusters"),
    ({"lam": 0.0}, "lam"),
    ({"covariance_update": "all"}, "covariance_update"),
    ({"projections": "pretrained"}, "projections"),
    ({"user_state": "oracle", "projections": "learned"}, "user_state"),
    ({"user_state": "maybe"}, "user_state"),
    ({"online_lr": -0.1}, "online_lr"),
    ({"noise_sigma": 0.0}, "noise_sigma"),
    ({"random_init_std": 0.0}, "random_init_std"),
    ({"heads": 2}, "unknown hyperparameter"),
])
def test_invalid_configs(params, match):
    with pytest.raises(ValueError, match=match):
        make_config("hare", params)


def test_too_many_clusters_is_an_error():
    env = environment(SMALL, [0])
    with pytest.raises(ValueError, match="n_clusters"):
        build_policy("hare", {"n_clusters": 25}, env, run_keys(0, [0], "p"))
