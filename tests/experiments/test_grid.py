import copy

from hare.experiments.grid import expand_jobs, policy_points


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


def test_tuning_and_report_jobs_use_disjoint_seeds(smoke_config):
    from hare.experiments.run import environment_keys, policy_keys

    report = {j.stem: j for j in expand_jobs(smoke_config, "report")}
    tuning = {j.stem: j for j in expand_jobs(smoke_config, "tuning")}
    assert report.keys() == tuning.keys()
    for stem in report:
        for keys in (environment_keys, policy_keys):
            assert not set(keys(report[stem].spec).tolist()) & set(keys(tuning[stem].spec).tolist())


def test_job_spec_changes_only_with_its_own_config(smoke_config):
    changed = copy.deepcopy(smoke_config)
    changed["experiments"]["regret"]["policies"]["linucb"]["params"]["alpha"] = 2.0
    before = {j.stem: j.spec for j in expand_jobs(smoke_config)}
    after = {j.stem: j.spec for j in expand_jobs(changed)}
    assert {s for s in before if before[s] != after[s]} == {"runs/regret/synthetic_linear/linucb", "runs/regret/mushroom/linucb"}
