import numpy as np
import pytest
import torch

from hare.data.errors import DataFormatError
from hare.envs.base import Observation
from hare.envs.replay import LOGGED_FIELDS, LoggedData, ReplayBandit, masked_update, run_state
from hare.experiments.replay_job import run_replay
from hare.policies import build_policy
from hare.policies.base import Policy, PolicyConfig
from hare.random import CounterRNG, run_keys


def _logged(n=600, n_actions=6, d_user=4, d_item=3, seed=0) -> LoggedData:
    """Uniform-random logged data whose click probability depends on user and item."""
    rng = CounterRNG(torch.tensor([seed], dtype=torch.int64))
    users = rng.normal("users", 0, (n, d_user))[0]
    items = rng.normal("items", 0, (n_actions, d_item))[0]
    actions = rng.randint("actions", 0, n_actions, (n,))[0]
    weights = rng.normal("weights", 0, (n_actions, d_user))[0]
    p_click = torch.sigmoid((users * weights[actions]).sum(-1) - 1.0)
    rewards = (rng.uniform("clicks", 0, (n,))[0] < p_click).to(torch.float64)
    return LoggedData(
        users,
        actions,
        torch.zeros(n, dtype=torch.int64),
        rewards,
        torch.full((n,), 1.0 / n_actions, dtype=torch.float64),
        items,
    )


def _env(logged, runs, horizon=None, seed=1):
    keys = run_keys(seed, range(4), "replay-env")[runs]
    return ReplayBandit(logged, len(runs), horizon or logged.n_rows, keys)


class _CopyLogged(Policy):
    """Test policy that plays the logged arm of whatever row its run is shown."""

    config_class = PolicyConfig

    def __init__(self, env, keys):
        super().__init__(PolicyConfig(), env, keys)
        self.env = env

    def select(self, observation):
        return self.env.round(observation.t).logged_actions

    def update(self, observation, arms, rewards):
        pass


def test_copying_the_logged_arm_accepts_every_round_and_earns_the_logged_rewards():
    logged = _logged()
    env = _env(logged, [0, 1, 2])
    out = run_replay(env, _CopyLogged(env, run_keys(0, range(3), "p")), record_every=100)
    np.testing.assert_array_equal(out["total_accepted"], [logged.n_rows] * 3)
    np.testing.assert_allclose(out["total_reward"], float(logged.rewards.sum()), rtol=0, atol=1e-9)
    np.testing.assert_array_equal(out["accepted"][:, -1], out["total_accepted"])
    np.testing.assert_allclose(out["accepted_cumulative_reward"][:, -1], out["total_reward"])


def test_uniform_random_policy_accepts_about_one_round_in_k():
    """Accepted counts are Binomial(n_runs * n, 1/K) = Bin(4800, 1/6): mean 800, sd 25.8; the band is +-5 sd."""
    logged = _logged(n=1200, n_actions=6)
    env = _env(logged, [0, 1, 2, 3])
    out = run_replay(env, build_policy("random", {}, env, run_keys(0, range(4), "p")), record_every=1200)
    total = int(out["total_accepted"].sum())
    assert abs(total - 800) <= 5 * 25.8, total
    assert out["accepted_cumulative_reward"].shape == (4, out["total_accepted"].max())


def test_permutations_of_a_run_do_not_depend_on_the_batch():
    logged = _logged(n=50)
    together = _env(logged, [0, 1, 2, 3])
    for run in range(4):
        torch.testing.assert_close(_env(logged, [run]).order[0], together.order[run], rtol=0, atol=0)
    assert not torch.equal(together.order[0], together.order[1])
    assert sorted(together.order[2].tolist()) == list(range(50))


def test_arm_contexts_concatenate_user_and_standardised_item_features():
    logged = _logged(n=10, n_actions=5, d_user=4, d_item=3)
    x = logged.arm_contexts(torch.tensor([[3, 7]]))
    assert x.shape == (1, 2, 5, 7)
    torch.testing.assert_close(x[0, 1, :, :4], logged.contexts[7].expand(5, 4))
    z = x[0, 0, :, 4:]
    torch.testing.assert_close(z.mean(0), torch.zeros(3, dtype=torch.float64), atol=1e-12, rtol=0)
    torch.testing.assert_close(z.std(0, unbiased=False), torch.ones(3, dtype=torch.float64))


@pytest.mark.parametrize(("policy", "params"), [("linucb", {"alpha": 0.5, "refactor_every": 10_000}), ("ucb1", {})])
def test_masked_update_equals_updating_the_accepted_runs_alone(policy, params):
    logged = _logged(n=40)
    env = _env(logged, [0, 1, 2])
    keys = run_keys(0, range(3), "p")
    batch = build_policy(policy, params, env, keys)
    solo = [build_policy(policy, params, _env(logged, [b]), keys[[b]]) for b in range(3)]
    for t in range(30):
        round_ = env.round(t)
        arms = torch.tensor([t % env.n_arms, (t * 5) % env.n_arms, (t * 2 + 1) % env.n_arms])
        mask = torch.tensor([t % 2 == 0, t % 3 == 0, True])
        masked_update(batch, round_.observation, arms, round_.logged_rewards, mask)
        for b in range(3):
            if mask[b]:
                obs = Observation(t, round_.observation.contexts[[b]], None, round_.observation.queries[[b]])
                solo[b].update(obs, arms[[b]], round_.logged_rewards[[b]])
    for name, tensor in run_state(batch).items():
        for b in range(3):
            torch.testing.assert_close(tensor[b], run_state(solo[b])[name][0], rtol=1e-12, atol=1e-12, msg=name)


@pytest.mark.parametrize(("policy", "params"), [("linucb", {"alpha": 0.3}), ("ucb1", {}), ("lin_ts", {"nu": 0.1})])
def test_batched_replay_equals_each_run_replayed_alone(policy, params):
    """Different runs accept different rounds; the masked batch must still give each run's own replay."""
    logged = _logged(n=300)
    keys = run_keys(0, range(3), "p")

    def play(runs):
        env = _env(logged, runs)
        return run_replay(env, build_policy(policy, params, env, keys[runs]), record_every=50)

    together = play([0, 1, 2])
    assert len(set(together["total_accepted"].tolist())) > 1
    for run in range(3):
        alone = play([run])
        np.testing.assert_array_equal(together["accepted"][run], alone["accepted"][0])
        np.testing.assert_allclose(
            together["cumulative_reward"][run], alone["cumulative_reward"][0], rtol=0, atol=1e-12
        )
        n = alone["total_accepted"][0]
        np.testing.assert_allclose(
            together["accepted_cumulative_reward"][run, :n], alone["accepted_cumulative_reward"][0], rtol=0, atol=1e-12
        )


def test_target_accepted_stops_a_run_accepting():
    logged = _logged(n=300)
    env = _env(logged, [0, 1])
    out = run_replay(
        env, build_policy("random", {}, env, run_keys(0, range(2), "p")), record_every=100, target_accepted=20
    )
    np.testing.assert_array_equal(out["total_accepted"], [20, 20])


def test_missing_field_is_an_error_naming_the_file_and_the_field(tmp_path):
    logged = _logged(n=20)
    arrays = {f: getattr(logged, f).numpy() for f in LOGGED_FIELDS if f != "pscores"}
    path = tmp_path / "prepared_obd.npz"
    np.savez(path, **arrays)
    with pytest.raises(DataFormatError, match=r"prepared_obd\.npz.*'pscores'"):
        LoggedData.from_npz(path)


def test_horizon_longer_than_the_log_is_an_error():
    with pytest.raises(ValueError, match="exceeds the 20 logged rows"):
        _env(_logged(n=20), [0], horizon=21)
