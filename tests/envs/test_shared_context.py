"""The environments whose arms share the context ``[x, onehot(user)]``: their rounds and their uniform logging, which
returns the one logged type every environment returns (:mod:`hare.envs.logged`)."""

import pytest
import torch

import hare.envs.classification
import hare.envs.synthetic
import hare.envs.text
from hare.envs.base import BanditRound, LoggedDataUnavailable, Observation
from hare.envs.logged import LoggedInteractions
from hare.envs.shared_context import SharedContextBandit
from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.envs.text import TextBandit, TextConfig
from hare.random import CounterRNG, run_keys


class Planted(SharedContextBandit):
    """Two users, three items: item ``n`` has mean ``n + 10 user`` whatever the query; queries are constant."""

    def __init__(self, noise_sigma: float):
        self.config = type("Config", (), {"noise_sigma": noise_sigma})()
        self.device = torch.device("cpu")
        self.n_runs, self.n_arms, self.n_users, self.horizon, self.query_dim, self.dim = 1, 3, 2, 4, 2, 4

    def logged_queries(self, rng: CounterRNG, n_samples: int) -> torch.Tensor:
        return torch.ones(rng.keys.shape[0], n_samples, 2, dtype=torch.float64)

    def logged_means(self, queries, users, items):
        return items.to(torch.float64) + 10.0 * users

    def round(self, t: int) -> BanditRound:
        mean = torch.tensor([[0.0, 1.0, 2.0]], dtype=torch.float64)
        return BanditRound(Observation(t, torch.zeros(1, 3, 4, dtype=torch.float64)), mean, mean)


def test_the_environments_share_one_type_from_one_module():
    """No environment defines its own logged type or imports another environment to get it."""
    for module in (hare.envs.synthetic, hare.envs.text, hare.envs.classification):
        assert "LoggedInteractions" not in vars(module) or module.LoggedInteractions is LoggedInteractions
    assert issubclass(SyntheticBandit, SharedContextBandit) and issubclass(TextBandit, SharedContextBandit)


def test_uniform_logging_draws_users_and_items_and_adds_noise_to_the_mean():
    env = Planted(noise_sigma=0.0)
    logs = env.sample_logged(400, run_keys(0, [0, 1], "planted"))
    assert isinstance(logs, LoggedInteractions)
    assert logs.queries.shape == (2, 400, 2) and logs.users.shape == logs.items.shape == (2, 400)
    assert set(logs.users.unique().tolist()) == {0, 1} and set(logs.items.unique().tolist()) == {0, 1, 2}
    assert torch.equal(logs.rewards, logs.items.to(torch.float64) + 10.0 * logs.users)
    noisy = Planted(noise_sigma=0.5).sample_logged(400, run_keys(0, [0, 1], "planted"))
    assert torch.equal(noisy.items, logs.items) and 0.3 < (noisy.rewards - logs.rewards).std() < 0.7


def test_the_warm_start_shares_the_context_and_counts_as_served():
    env = Planted(noise_sigma=0.0)
    logs = env.logged(5)
    assert logs.contexts.shape == (5, 3, 4) and env.warm_rounds == 5 and env.logged_reads == 1
    assert torch.equal(logs.contexts[:, 0, 2:], torch.nn.functional.one_hot(logs.users, 2).to(torch.float64))
    env.logs_allowed = False
    with pytest.raises(LoggedDataUnavailable):
        env.logged(5)


def test_a_round_shares_the_context_and_adds_noise():
    env = SyntheticBandit(SyntheticConfig(n_items=5, n_clusters=1, n_users=3), 2, 4, run_keys(0, range(2), "e"))
    r = env.round(1)
    x, users = env.queries(1), env.active_users(1)
    assert torch.equal(r.observation.queries, x) and torch.equal(r.observation.users, users)
    assert r.observation.contexts.shape == (2, 5, env.dim) and torch.equal(r.mean_rewards, env.mean_rewards(x, users))
    assert torch.equal(r.observation.contexts[:, 3], torch.cat([x, torch.nn.functional.one_hot(users, 3)], 1))
    assert torch.equal(r.rewards, r.mean_rewards + 0.1 * env.rng.normal("noise", 1, (5,)))


def test_the_mean_of_the_whole_reward_matrix_is_the_rounds_mean():
    assert torch.equal(Planted(0.0).mean_reward_all_rounds(), torch.tensor([1.0], dtype=torch.float64))


@pytest.mark.parametrize(
    "env",
    [
        SyntheticBandit(SyntheticConfig(n_items=8, n_clusters=2), 2, 5, run_keys(0, range(2), "e")),
        TextBandit(TextConfig(n_topics=2, items_per_topic=4, n_queries=5), 2, 5, run_keys(0, range(2), "e")),
    ],
    ids=["synthetic", "text"],
)
def test_each_environment_logs_its_own_item_rewards(env):
    """A logged reward without noise is the logged item's mean reward for the logged query and user."""
    env.config = type(env.config)(**{**vars(env.config), "noise_sigma": 0.0})
    logs = env.sample_logged(7, run_keys(3, [0], "logs"))
    means = env.mean_rewards(logs.queries[0], logs.users[0]).gather(1, logs.items[0][:, None]).squeeze(1)
    assert torch.allclose(logs.rewards[0], means)
