import pytest
import torch

from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.random import run_keys


def environment(config=None, runs=(0, 1, 2)):
    config = SyntheticConfig() if config is None else config
    return SyntheticBandit(config, len(runs), 10, run_keys(0, list(runs), "env"))


def test_synthesis_reward_of_an_item_is_its_item_reward():
    env = environment()
    round_ = env.round(3)
    items = env.pool.embeddings[torch.tensor([4, 17, 30])]
    _, mean, regret = env.synthesis_outcome(3, items)
    torch.testing.assert_close(mean, round_.mean_rewards[torch.arange(3), torch.tensor([4, 17, 30])])
    torch.testing.assert_close(regret, round_.regret(torch.tensor([4, 17, 30])))


def test_logged_sampler_is_uniform_and_keyed():
    env = environment()
    logged = env.sample_logged(6000, run_keys(1, [0, 1], "logged"))
    assert logged.queries.shape == (2, 6000, env.config.query_dim)
    counts = torch.bincount(logged.items[0], minlength=env.n_arms).to(torch.float64)
    assert (counts - 100).abs().max() < 45
    assert torch.bincount(logged.users[0], minlength=env.n_users).min() > 1000
    alone = env.sample_logged(6000, run_keys(1, [1], "logged"))
    assert torch.equal(alone.rewards[0], logged.rewards[1])
    mean = env.mean_rewards(logged.queries[0], logged.users[0]).gather(1, logged.items[0][:, None]).squeeze(1)
    residual = logged.rewards[0] - mean
    assert abs(float(residual.std()) - env.config.noise_sigma) < 0.01


def test_true_user_states_and_oracle_scores():
    env = environment()
    users = torch.tensor([0, 3, 4])
    torch.testing.assert_close(env.user_states(users).norm(dim=-1), torch.ones(3, dtype=torch.float64))
    x = env.queries(0)
    scores = env.true_scores(x, env.user_states(users))
    torch.testing.assert_close(env.mean_rewards(x, users), scores)


def test_nonlinear_variant_adds_an_interaction_of_comparable_size():
    linear = environment()
    nonlinear = environment(SyntheticConfig(variant="nonlinear"))
    gap = nonlinear.round(0).mean_rewards - linear.round(0).mean_rewards
    spread = linear.round(0).mean_rewards.std()
    assert 0.1 * spread < gap.std() < spread


@pytest.mark.parametrize(
    "params, match",
    [
        ({"n_items": 0}, "n_items"),
        ({"n_clusters": 100}, "n_clusters"),
        ({"noise_sigma": -1.0}, "noise_sigma"),
        ({"link": "probit"}, "link"),
        ({"variant": "cubic"}, "variant"),
        ({"variant": "between", "n_clusters": 1}, "n_clusters"),
    ],
)
def test_invalid_synthetic_configs(params, match):
    with pytest.raises(ValueError, match=match):
        SyntheticConfig(**params)


BETWEEN = SyntheticConfig(
    n_items=4,
    n_clusters=2,
    item_dim=3,
    query_dim=2,
    user_dim=2,
    key_dim=2,
    n_users=2,
    variant="between",
    reward_scale=1.5,
)


def _between_by_hand(env, t):
    """The ``between`` target of every run at round ``t``, by a loop over runs and items: ``a`` the best item by
    ``s*``, ``b`` the best item of another cluster, ``t = (e_a + e_b) / 2``."""
    x, users = env.queries(t), env.active_users(t)
    scores = env.true_scores(x, env.user_states(users))
    clusters = env.pool.clusters.tolist()
    targets, pairs = [], []
    for r in range(env.n_runs):
        row = scores[r].tolist()
        a = max(range(env.n_arms), key=lambda n: row[n])
        b = max((n for n in range(env.n_arms) if clusters[n] != clusters[a]), key=lambda n: row[n])
        targets.append((env.pool.embeddings[a] + env.pool.embeddings[b]) / 2)
        pairs.append((a, b))
    return torch.stack(targets), pairs


@pytest.mark.parametrize("link", ["identity", "logistic"])
def test_between_rewards_and_regret_are_the_closed_form_on_a_tiny_instance(link):
    from dataclasses import replace

    env = environment(replace(BETWEEN, link=link), runs=range(6))
    g = torch.sigmoid if link == "logistic" else (lambda v: v)
    for t in (0, 3):
        target, pairs = _between_by_hand(env, t)
        torch.testing.assert_close(env.between_targets(env.queries(t), env.active_users(t)), target, rtol=0, atol=0)
        z = torch.randn(6, 3, generator=torch.Generator().manual_seed(t), dtype=torch.float64)
        _, mean, regret = env.synthesis_outcome(t, z)
        expected = g(1.5 * (1 - ((z - target) ** 2).sum(-1) / 2))
        torch.testing.assert_close(mean, expected, rtol=1e-14, atol=1e-14)
        torch.testing.assert_close(regret, g(torch.tensor(1.5, dtype=torch.float64)) - expected, rtol=1e-14, atol=1e-14)
        # Item rewards (select mode, logs) are mu(e_n) under the same formula.
        items = env.pool.embeddings
        by_item = g(1.5 * (1 - ((items[None] - target[:, None]) ** 2).sum(-1) / 2))
        torch.testing.assert_close(env.round(t).mean_rewards, by_item, rtol=1e-14, atol=1e-14)


def test_between_target_is_the_midpoint_of_two_items_of_different_clusters_and_the_best_output():
    env = environment(SyntheticConfig(variant="between"), runs=range(8))
    clusters = env.pool.clusters
    for t in range(5):
        target, pairs = _between_by_hand(env, t)
        for r, (a, b) in enumerate(pairs):
            assert clusters[a] != clusters[b]
            # A convex combination (weights 1/2, 1/2) of the two items, exactly.
            assert torch.equal(target[r], 0.5 * env.pool.embeddings[a] + 0.5 * env.pool.embeddings[b])
        _, mean, regret = env.synthesis_outcome(t, target)
        assert torch.equal(regret, torch.zeros(8, dtype=torch.float64))
        assert torch.equal(mean, torch.full((8,), env.config.reward_scale, dtype=torch.float64))
        # Any other output, a pool item or a random point, has positive regret; the best item falls short of z = t.
        others = torch.cat(
            [
                env.pool.embeddings[None].expand(8, -1, -1),
                torch.randn(
                    8, 20, env.config.item_dim, generator=torch.Generator().manual_seed(t), dtype=torch.float64
                ),
            ],
            dim=1,
        )
        for k in range(others.shape[1]):
            assert bool((env.synthesis_outcome(t, others[:, k])[2] > 0).all())
        best_item = env.round(t).mean_rewards.max(1).values
        assert bool((best_item < env.config.reward_scale).all())


def test_between_leaves_linear_and_nonlinear_synthesis_as_they_were():
    """The linear variant's synthesis reward is still ``g(scale <z, target>)``."""
    env = environment()
    z = env.pool.embeddings[:3] * 0.5 + env.pool.embeddings[3:6] * 0.5
    x, users = env.queries(2), env.active_users(2)
    expected = env.config.reward_scale * (z * env.synthesis_targets(x, users)).sum(-1)
    assert torch.equal(env.synthesis_outcome(2, z)[1], expected)
