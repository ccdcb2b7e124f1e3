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
    ],
)
def test_invalid_synthetic_configs(params, match):
    with pytest.raises(ValueError, match=match):
        SyntheticConfig(**params)
