"""The one round loop (hare.experiments.simulation): it is the only loop that plays a policy, and its extension
points (observer, timer, stop, pre-built rounds, feedback, recorded rounds, play without accounts) behave."""

from __future__ import annotations

import ast
import itertools
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.experiments.run import simulate as simulate_from_run
from hare.experiments.simulation import RoundObserver, RoundTimer, SimulationOptions, simulate
from hare.policies import build_policy
from hare.random import run_keys

SOURCE = Path(__file__).resolve().parents[2] / "src"
CONFIG = SyntheticConfig(n_items=12, n_clusters=3, n_users=2)
HORIZON = 20

SELECT_LOOPS_ALLOWED = {
    ("hare.experiments.simulation", "simulate"): "the round loop itself",
    (
        "hare.experiments.studies.convergence",
        "probe_choices",
    ): "asks the frozen policy for its choice on each probe after a recorded round: "
    "no reward, no update, not rounds of play",
    (
        "hare.experiments.replay_job",
        "greedy_arms",
    ): "asks the final, frozen policy for its choice on every logged event (the "
    "fallback greedy rule for the off-policy estimates): no reward, no update",
}
LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _select_calls(node: ast.AST, function: str = "<module>", in_loop: bool = False):
    """Names of the functions holding a ``<x>.select(...)`` call nested in a loop or comprehension, under ``node``."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        function, in_loop = node.name, False
    in_loop = in_loop or isinstance(node, LOOPS)
    if in_loop and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "select":
        yield function
    for child in ast.iter_child_nodes(node):
        yield from _select_calls(child, function, in_loop)


def select_calls_in_loops() -> set[tuple[str, str]]:
    """(module, enclosing function) of every ``<x>.select(...)`` call nested in a loop or comprehension under
    src/hare."""
    found = set()
    for path in (SOURCE / "hare").rglob("*.py"):
        module = ".".join(path.relative_to(SOURCE).with_suffix("").parts)
        found.update((module, function) for function in _select_calls(ast.parse(path.read_text())))
    return found


def test_the_scan_finds_a_select_inside_a_loop():
    assert ("hare.experiments.simulation", "simulate") in select_calls_in_loops()


def test_only_the_simulation_module_calls_select_in_a_loop():
    """Every round loop goes through simulate; the two other loops over ``select`` query a frozen policy (allowed, with
    the reason). ``personalization``'s ``both.select(...)`` picks decoders from a batch, outside any loop."""
    assert select_calls_in_loops() == set(SELECT_LOOPS_ALLOWED)


def test_run_re_exports_the_one_simulate():
    assert simulate_from_run is simulate


def _play(horizon=HORIZON, n_runs=3, policy="linucb", params=None):
    env = SyntheticBandit(CONFIG, n_runs, horizon, run_keys(0, range(n_runs), "env"))
    return env, build_policy(
        policy, {"alpha": 0.5} if params is None else params, env, run_keys(0, range(n_runs), "pol")
    )


def test_pre_built_rounds_give_the_regret_of_the_environments_rounds():
    env, policy = _play()
    played = simulate(env, policy, SimulationOptions(record_every=5))
    env, policy = _play()
    prebuilt = simulate(env, policy, SimulationOptions(record_every=5, rounds=[env.round(t) for t in range(HORIZON)]))
    for key, value in played.items():
        np.testing.assert_array_equal(prebuilt[key], value)


def test_recorded_rounds_are_the_columns_of_every_round():
    env, policy = _play()
    every = simulate(env, policy, SimulationOptions(record_every=1))
    env, policy = _play()
    chosen = simulate(env, policy, SimulationOptions(record_at=[3, 17, 20]))
    np.testing.assert_array_equal(chosen["rounds"], [3, 17, 20])
    np.testing.assert_array_equal(chosen["cumulative_regret"], every["cumulative_regret"][:, [2, 16, 19]])
    with pytest.raises(ValueError, match="record_at"):
        simulate(env, policy, SimulationOptions(record_at=[0, 5]))


def test_a_stop_ends_the_play_after_its_round_and_keeps_the_curves_reached():
    env, policy = _play()
    every = simulate(env, policy, SimulationOptions(record_every=1))
    env, policy = _play()
    stopped = simulate(env, policy, SimulationOptions(record_every=4, stop=lambda t: t == 9))
    np.testing.assert_array_equal(stopped["rounds"], [4, 8])
    np.testing.assert_array_equal(stopped["cumulative_regret"], every["cumulative_regret"][:, [3, 7]])
    np.testing.assert_array_equal(stopped["total_regret"], every["cumulative_regret"][:, 9])
    env, policy = _play()
    assert int(simulate(env, policy, SimulationOptions(account=False, stop=lambda t: t == 9))["rounds_played"]) == 10


def test_the_timer_measures_every_round_and_its_budget_stops_the_play():
    env, policy = _play()
    logs = env.logged(30)
    timer = RoundTimer(split=True)
    simulate(env, policy, SimulationOptions(observer=timer), logs=logs)
    for seconds in (timer.round_seconds, timer.policy_seconds, timer.select_seconds, timer.update_seconds):
        assert len(seconds) == HORIZON and all(s > 0 for s in seconds)
    np.testing.assert_allclose(timer.policy_seconds, np.add(timer.select_seconds, timer.update_seconds), rtol=1e-9)
    assert all(p <= r for p, r in zip(timer.policy_seconds, timer.round_seconds, strict=True))
    assert timer.warm_start_seconds > 0

    ticks = itertools.count()
    env, policy = _play()
    budget = RoundTimer(budget_s=30.0, clock=lambda: float(next(ticks)))  # every clock read takes one second
    played = int(
        simulate(env, policy, SimulationOptions(account=False, observer=budget, stop=budget.over_budget))[
            "rounds_played"
        ]
    )
    assert 1 <= played < HORIZON and len(budget.round_seconds) == played and budget.warm_start_seconds == 0.0
    assert budget.clock() - budget.first_round_at > 30.0


class _Events(RoundObserver):
    def __init__(self):
        self.events = []

    def warm_starting(self):
        self.events.append("warm_starting")

    def warm_started(self):
        self.events.append("warm_started")

    def round_started(self, t):
        self.events.append(("round_started", t))

    def selecting(self, t, round_, observation):
        self.events.append(("selecting", t, observation.t))

    def selected(self, t, arms):
        self.events.append(("selected", t))

    def updated(self, t, arms, rewards):
        self.events.append(("updated", t))

    def round_ended(self, t):
        self.events.append(("round_ended", t))


def test_the_observer_sees_each_round_in_order_and_the_warm_start_shift():
    env, policy = _play(horizon=2)
    events = _Events()
    simulate(
        env,
        policy,
        SimulationOptions(record_every=2, observer=events, on_record=lambda t, p: events.events.append(("record", t))),
        logs=env.logged(5),
    )
    assert events.events == [
        "warm_starting",
        "warm_started",
        ("round_started", 0),
        ("selecting", 0, 5),
        ("selected", 0),
        ("updated", 0),
        ("round_ended", 0),
        ("round_started", 1),
        ("selecting", 1, 6),
        ("selected", 1),
        ("updated", 1),
        ("record", 1),
        ("round_ended", 1),
    ]


def test_playing_without_accounts_leaves_the_policy_where_a_job_leaves_it():
    env, policy = _play()
    simulate(env, policy, SimulationOptions(record_every=5))
    env, bare = _play()
    assert simulate(env, bare, SimulationOptions(account=False)).keys() == {"rounds_played"}
    for (name, value), (_, other) in zip(policy.state_dict().items(), bare.state_dict().items(), strict=True):
        torch.testing.assert_close(other, value, rtol=0, atol=0, msg=name)


def test_a_feedback_without_learners_leaves_the_policy_untouched():
    env, policy = _play()
    before = {name: value.clone() for name, value in policy.state_dict().items()}
    out = simulate(
        env,
        policy,
        SimulationOptions(
            feedback=lambda round_, arms: (round_.reward(arms), torch.zeros(env.n_runs, dtype=torch.bool))
        ),
    )
    assert np.all(out["total_regret"] >= 0)
    for name, value in policy.state_dict().items():
        torch.testing.assert_close(value, before[name], rtol=0, atol=0, msg=name)


def test_a_horizon_shorter_than_the_rounds_plays_their_prefix():
    env, policy = _play()
    every = simulate(env, policy, SimulationOptions(record_every=1))
    env, policy = _play()
    prefix = simulate(env, policy, SimulationOptions(horizon=7))
    np.testing.assert_array_equal(prefix["rounds"], [7])
    np.testing.assert_array_equal(prefix["total_regret"], every["cumulative_regret"][:, 6])
    with pytest.raises(ValueError, match="horizon"):
        simulate(env, policy, SimulationOptions(horizon=HORIZON + 1))


# -- synthesize mode -------------------------------------------------------------------------------------------------

BETWEEN = SyntheticConfig(n_items=12, n_clusters=3, n_users=2, variant="between")
SYNTHESIZERS = [
    ("hare_synthesize", {"alpha": 0.1, "projections": "random", "online_lr": 0.05}),
    ("hare_synthesize", {"alpha": 0.1, "projections": "oracle", "credit": "gradient"}),
    ("hare_synthesize", {"alpha": 0.1, "projections": "random", "credit": "nearest_item"}),
    ("random", {"mode": "synthesize"}),
]


def _synthesis_env(runs, config=BETWEEN, horizon=HORIZON):
    return SyntheticBandit(config, len(runs), horizon, run_keys(3, list(runs), "env"))


def _synthesizer(policy, params, env, runs):
    return build_policy(policy, params, env, run_keys(3, list(runs), "pol"))


class Outputs(RoundObserver):
    def __init__(self):
        self.z = []

    def selected(self, t, arms):
        self.z.append(arms.clone())


@pytest.mark.parametrize(("policy", "params"), SYNTHESIZERS)
def test_a_synthesize_job_is_the_hand_written_loop(policy, params):
    """simulate's synthesize mode: synthesize, the environment's reward of z, update_synthesis; the sums and curves
    of those regrets and rewards, and the share of novel outputs."""
    env = _synthesis_env(range(3))
    played = simulate(env, _synthesizer(policy, params, env, range(3)), SimulationOptions(record_every=7))
    hand = _synthesizer(policy, params, env, range(3))
    regret = reward = novel = torch.zeros(3, dtype=torch.float64)
    curve = []
    for t in range(HORIZON):
        observation = env.round(t).observation
        z = hand.synthesize(observation)
        rewards, _, round_regret = env.synthesis_outcome(t, z)
        hand.update_synthesis(observation, z, rewards)
        regret, reward = regret + round_regret, reward + rewards
        normal = torch.nn.functional.normalize
        novel = novel + ((normal(z, dim=-1) @ normal(env.pool.embeddings, dim=-1).T).max(-1).values < 0.9)
        if (t + 1) % 7 == 0 or t + 1 == HORIZON:
            curve.append(regret.clone())
    assert set(played) == {
        "rounds",
        "cumulative_regret",
        "cumulative_reward",
        "total_regret",
        "total_reward",
        "novelty",
    }
    np.testing.assert_array_equal(played["rounds"], [7, 14, 20])
    np.testing.assert_array_equal(played["cumulative_regret"], torch.stack(curve, 1).numpy())
    np.testing.assert_array_equal(played["total_regret"], regret.numpy())
    np.testing.assert_array_equal(played["total_reward"], reward.numpy())
    np.testing.assert_array_equal(played["novelty"], (novel / HORIZON).numpy())
    assert (played["total_regret"] >= 0).all()


def test_a_warm_synthesize_job_is_the_hand_written_loop_shown_the_shifted_rounds():
    env = _synthesis_env(range(2))
    logs = env.logged(40)
    params = {"alpha": 0.1, "projections": "learned", "fit_steps": 20}
    played = simulate(env, _synthesizer("hare_synthesize", params, env, range(2)), logs=logs)
    hand = _synthesizer("hare_synthesize", params, env, range(2))
    hand.warm_start(logs)
    regret = torch.zeros(2, dtype=torch.float64)
    for t in range(HORIZON):
        observation = replace(env.round(t).observation, t=t + 40)
        z = hand.synthesize(observation)
        rewards, _, round_regret = env.synthesis_outcome(t, z)
        hand.update_synthesis(observation, z, rewards)
        regret = regret + round_regret
    np.testing.assert_array_equal(played["total_regret"], regret.numpy())


@pytest.mark.parametrize(("policy", "params"), SYNTHESIZERS)
def test_synthesize_runs_played_together_equal_the_runs_played_alone(policy, params):
    def play(runs):
        env = _synthesis_env(runs, horizon=40)
        return simulate(env, _synthesizer(policy, params, env, runs), SimulationOptions(record_every=10))

    together = play([0, 1, 2])
    for run in range(3):
        alone = play([run])
        # Same outputs in every round; matrix products may round the last bit differently with the batch size.
        for key in ("cumulative_regret", "cumulative_reward"):
            np.testing.assert_allclose(together[key][run], alone[key][0], rtol=1e-12, atol=1e-12)
        assert together["novelty"][run] == alone["novelty"][0]


def test_novelty_is_the_brute_force_share_of_outputs_far_from_every_item():
    env = _synthesis_env(range(4), horizon=30)
    outputs = Outputs()
    policy = _synthesizer("hare_synthesize", {"alpha": 0.1, "projections": "oracle"}, env, range(4))
    played = simulate(env, policy, SimulationOptions(observer=outputs))
    items = env.pool.embeddings.tolist()
    counts = [0] * 4
    for z in outputs.z:
        for r, row in enumerate(z.tolist()):
            cosines = [
                sum(a * b for a, b in zip(row, item, strict=True))
                / (math.sqrt(sum(a * a for a in row)) * math.sqrt(sum(b * b for b in item)))
                for item in items
            ]
            counts[r] += max(cosines) < 0.9
    np.testing.assert_array_equal(played["novelty"], np.array(counts) / 30)
    assert 0 < played["novelty"].mean() < 1, "the outputs should be a mix of novel and item-like ones"


def test_random_in_synthesize_mode_outputs_the_item_it_draws_and_is_never_novel():
    env = _synthesis_env(range(3), config=CONFIG)
    played = simulate(env, _synthesizer("random", {"mode": "synthesize"}, env, range(3)))
    selected = simulate(env, _synthesizer("random", {}, env, range(3)))
    np.testing.assert_array_equal(played["novelty"], np.zeros(3))
    # On the linear variant the reward of z = e_n is the item's: the same regret as pulling the arm.
    np.testing.assert_allclose(played["total_regret"], selected["total_regret"], rtol=1e-12, atol=1e-12)
    assert "novelty" not in selected


def test_a_synthesize_policy_on_an_environment_that_rewards_no_output_is_refused():
    env = _synthesis_env(range(2))
    policy = _synthesizer("hare_synthesize", {"projections": "random"}, env, range(2))

    class ItemsOnly:
        def __init__(self, env):
            self.env, self.n_runs, self.horizon = env, env.n_runs, env.horizon

        def round(self, t):
            return self.env.round(t)

    with pytest.raises(ValueError, match="does not reward synthesized outputs"):
        simulate(ItemsOnly(env), policy, SimulationOptions(name="items_only"))
