"""A tuning grid played as one batch (:func:`hare.policies.base.build_grid_policy`): every run of the grid
simulation plays the arms it plays in a simulation of its own grid point alone, for every policy that declares
per-run hyperparameters, cold and warm. Regret and reward agree to 1e-12, not bit for bit: a matrix product over
``P n`` rows may round its last bit differently from one over ``n`` (a different BLAS blocking); a different arm
anywhere would move them by a reward gap."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.experiments.simulation import SimulationOptions, simulate
from hare.policies import build_policy
from hare.policies.base import build_grid_policy, grid_differences, policy_class, policy_names
from hare.random import run_keys

SMALL_NEURAL = {"width": 8, "exploration": "diagonal", "train_steps": 2, "dense_training_rounds": 5, "train_every": 5}
SMALL_KERNEL = {"max_points": 24, "refactor_every": 10}

# (policy, fixed params, per-run hyperparameter, two values): each variant exercises one code path of the policy.
VARIANTS = [
    ("ucb1", {}, "alpha", (0.1, 2.0)),
    ("kl_ucb", {}, "c", (0.0, 3.0)),
    ("eps_greedy", {"decay": 0.1}, "epsilon", (0.05, 0.6)),
    ("linucb", {}, "alpha", (0.01, 3.0)),
    ("lin_ts", {}, "nu", (0.01, 2.0)),
    ("lin_ts", {"sampling": "parameter"}, "nu", (0.01, 2.0)),
    ("lin_thompson_ucb", {"nu": 0.1}, "alpha", (0.01, 3.0)),
    ("kernel_ucb", SMALL_KERNEL, "alpha", (0.01, 3.0)),
    ("kernel_ts", SMALL_KERNEL, "nu", (0.01, 2.0)),
    ("neural_ucb", SMALL_NEURAL, "alpha", (0.01, 3.0)),
    ("neural_ts", SMALL_NEURAL, "nu", (0.01, 2.0)),
    ("knn_ucb", {}, "theta", (0.1, 10.0)),
    ("knn_kl_ucb", {}, "theta", (0.1, 10.0)),
    ("lin_knn_ucb", {}, "alpha", (0.01, 3.0)),
    ("lnucb_ta", {}, "alpha_0", (0.1, 10.0)),
    ("lnucb_ta", {"attention": False}, "alpha_0", (0.1, 10.0)),
    ("lnucb_ta", {"global_mean": "arms"}, "alpha_0", (0.1, 10.0)),
    ("eps_greedy_enhanced", {}, "epsilon", (0.05, 0.6)),
    ("lin_thompson_enhanced", {}, "v", (0.01, 2.0)),
    ("hare", {"projections": "oracle"}, "alpha", (0.01, 3.0)),
    ("hare", {"projections": "oracle", "alpha_schedule": "inverse_sqrt"}, "alpha", (0.01, 3.0)),
    ("hare", {"projections": "oracle", "alpha_schedule": "lnucb_ta"}, "alpha", (0.0, 30.0)),
    ("hare", {"projections": "random", "online_lr": 0.05, "mean": "frozen"}, "alpha", (0.01, 3.0)),
    ("hare", {"projections": "learned", "fit_steps": 20}, "alpha", (0.01, 3.0)),
    ("hare", {"projections": "learned", "fit_steps": 20, "pool": "log_prototypes", "key_dim": 4}, "alpha", (0.01, 3.0)),
]
WARM_ONLY = ("learned", "log_prototypes")
"""Settings built from the warm start's logs: they run in the warm regime only."""
CASES = [
    (*variant, regime)
    for variant in VARIANTS
    for regime in ("cold", "warm")
    if regime == "warm" or not set(WARM_ONLY) & set(map(str, variant[1].values()))
]
CONFIG = SyntheticConfig(n_items=6, n_clusters=3, n_users=2)
N_RUNS, HORIZON, N_LOGGED = 2, 40, 20


def play(build, n_copies: int, warm: bool) -> dict:
    """The result arrays of policy ``build(env)`` on HARE-Sim with ``n_copies`` copies of the same runs, every
    round recorded; the warm start's logs are taken before the policy is built, as a job does."""
    env = environment(n_copies)
    logs = env.logged(N_LOGGED) if warm else None
    return simulate(env, build(env), SimulationOptions(record_every=1), logs=logs)


def environment(n_copies: int) -> SyntheticBandit:
    keys = run_keys(11, range(N_RUNS), "grid-env")
    return SyntheticBandit(CONFIG, N_RUNS * n_copies, HORIZON, torch.cat([keys] * n_copies))


def point_keys(i: int) -> torch.Tensor:
    return run_keys(11, range(N_RUNS), "grid-policy", i)


@pytest.mark.parametrize(
    ("name", "params", "field", "values", "regime"),
    CASES,
    ids=[f"{c[0]}-{'-'.join(map(str, c[1].values())) or 'default'}-{c[4]}" for c in CASES],
)
def test_grid_simulation_equals_each_point_alone(name, params, field, values, regime):
    points = [{**params, field: value} for value in values]
    warm = regime == "warm"
    alone = [
        play(lambda env, i=i, point=point: build_policy(name, point, env, point_keys(i)), 1, warm)
        for i, point in enumerate(points)
    ]
    keys = torch.cat([point_keys(i) for i in range(len(points))])
    together = play(lambda env: build_grid_policy(name, points, env, keys), len(points), warm)
    for key in ("cumulative_regret", "cumulative_reward"):
        np.testing.assert_allclose(together[key], np.concatenate([a[key] for a in alone]), rtol=0, atol=1e-12)
    assert not np.array_equal(alone[0]["cumulative_reward"], alone[1]["cumulative_reward"]), (
        "the two points should play differently"
    )


def test_every_policy_with_per_run_hyperparameters_is_covered():
    covered = {name for name, *_ in VARIANTS}
    declared = {name for name in policy_names() if policy_class(name).per_run_hyperparameters}
    assert declared == covered
    for name in declared:
        assert set(policy_class(name).per_run_hyperparameters) <= set(policy_class(name).config_class.tunable)


def test_points_that_differ_in_other_hyperparameters_do_not_batch():
    points = [{"alpha": 0.1, "lam": 1.0}, {"alpha": 0.1, "lam": 2.0}]
    assert grid_differences("linucb", points) == ["lam"] and grid_differences(
        "linucb", [{"alpha": 0.1}, {"alpha": 1.0}]
    ) == ["alpha"]
    with pytest.raises(ValueError, match=r"differ in \['lam'\]"):
        build_grid_policy("linucb", points, environment(2), torch.cat([point_keys(0), point_keys(1)]))


def test_runs_must_split_into_the_points():
    with pytest.raises(ValueError, match="do not split"):
        build_grid_policy(
            "linucb",
            [{"alpha": 0.1}, {"alpha": 1.0}, {"alpha": 2.0}],
            environment(2),
            torch.cat([point_keys(0), point_keys(1)]),
        )
