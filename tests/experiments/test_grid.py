import copy

import pytest

from hare.experiments.grid import expand_jobs, policy_points


@pytest.fixture
def smoke_config():
    """A small config of its own, so these tests do not move with config/smoke.yaml."""
    return {
        "base_seed": 7,
        "environments": {
            "synthetic_linear": {"kind": "synthetic", "params": {"n_items": 24, "n_clusters": 4}},
            "mushroom": {"kind": "classification", "dataset": "mushroom"},
        },
        "experiments": {
            "regret": {
                "environments": ["synthetic_linear", "mushroom"],
                "horizon": 200,
                "n_runs": 3,
                "n_tuning_runs": 2,
                "policies": {
                    "random": {},
                    "linucb": {"params": {"alpha": 1.0, "lam": 1.0}},
                    "hare_oracle": {"policy": "hare", "params": {"projections": "oracle"}, "environments": ["synthetic_linear"]},
                    "hare_random": {"policy": "hare", "params": {"projections": "random"}},
                },
            }
        },
    }


def test_grid_expands_to_the_cartesian_product():
    points = policy_points("linucb", {"params": {"lam": 1.0}, "grid": {"alpha": [0.1, 1.0], "refactor_every": [10, 20, 30]}})
    assert len(points) == 6
    assert points[0] == ("linucb@alpha=0.1,refactor_every=10", {"lam": 1.0, "alpha": 0.1, "refactor_every": 10})
    assert len({label for label, _ in points}) == 6


def test_job_count_of_the_smoke_config(smoke_config):
    jobs = expand_jobs(smoke_config)
    # 2 environments x (random, linucb, hare_random) + hare_oracle on the synthetic environment only
    assert len(jobs) == 7
    assert {j.label for j in jobs if j.environment == "mushroom"} == {"random", "linucb", "hare_random"}


def _tuned(config):
    config = copy.deepcopy(config)
    exp = config["experiments"]["regret"]
    exp["tune"] = True
    exp["policies"]["linucb"]["grid"] = {"alpha": [0.1, 1.0, 10.0]}
    return config


def test_tuned_experiment_has_tuning_jobs_and_one_report_job(smoke_config):
    from hare.experiments.grid import tuning_jobs_of

    jobs = expand_jobs(_tuned(smoke_config))
    tuning = [j for j in jobs if j.role == "tuning"]
    assert sorted(j.stem for j in tuning if j.environment == "mushroom") == [f"tuning/regret/mushroom/linucb@alpha={a}" for a in (0.1, 1.0, 10.0)]
    report = next(j for j in jobs if j.stem == "runs/regret/mushroom/linucb")
    assert report.spec["tuned_grid"] == {"alpha": [0.1, 1.0, 10.0]}
    assert report.selection == "selected/regret/mushroom/linucb.json"
    assert {j.stem for j in tuning_jobs_of(jobs, report)} == {j.stem for j in tuning if j.environment == "mushroom"}
    assert all(j.spec["n_runs"] == 2 for j in tuning) and report.spec["n_runs"] == 3


def test_tuning_and_report_jobs_use_disjoint_seeds(smoke_config):
    from hare.experiments.run import environment_keys, policy_keys

    jobs = expand_jobs(_tuned(smoke_config))
    report = next(j for j in jobs if j.stem == "runs/regret/mushroom/linucb")
    for tuning in (j for j in jobs if j.role == "tuning"):
        for keys in (environment_keys, policy_keys):
            assert not set(keys(report.spec).tolist()) & set(keys(tuning.spec).tolist())


def test_job_spec_changes_only_with_its_own_config(smoke_config):
    changed = copy.deepcopy(smoke_config)
    changed["experiments"]["regret"]["policies"]["linucb"]["params"]["alpha"] = 2.0
    before = {j.stem: j.spec for j in expand_jobs(smoke_config)}
    after = {j.stem: j.spec for j in expand_jobs(changed)}
    assert {s for s in before if before[s] != after[s]} == {"runs/regret/synthetic_linear/linucb", "runs/regret/mushroom/linucb"}
