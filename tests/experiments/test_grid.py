import copy

import pytest

from hare.experiments.grid import expand_jobs
from hare.experiments.settings import ConfigError, policy_points


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
                    "hare_oracle": {
                        "policy": "hare",
                        "params": {"projections": "oracle"},
                        "environments": ["synthetic_linear"],
                    },
                    "hare_random": {"policy": "hare", "params": {"projections": "random"}},
                },
            }
        },
    }


def test_grid_expands_to_the_cartesian_product():
    points = policy_points(
        "linucb", {"params": {"lam": 1.0}, "grid": {"alpha": [0.1, 1.0], "refactor_every": [10, 20, 30]}}
    )
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
    grid = [j for j in tuning if "@" in j.label]
    assert sorted(j.stem for j in grid if j.environment == "mushroom") == [
        f"tuning/regret/mushroom/linucb@alpha={a}" for a in (0.1, 1.0, 10.0)
    ]
    # entries without a grid get reference tuning runs on the same seeds (margins and run plans), never a selection
    assert sorted(j.stem for j in tuning if "@" not in j.label and j.environment == "mushroom") == [
        "tuning/regret/mushroom/hare_random",
        "tuning/regret/mushroom/random",
    ]
    report = next(j for j in jobs if j.stem == "runs/regret/mushroom/linucb")
    assert report.spec.as_dict()["tuned_grid"] == {"alpha": [0.1, 1.0, 10.0]}
    assert report.selection == "selected/regret/mushroom/linucb.json"
    assert {j.stem for j in tuning_jobs_of(jobs, report)} == {j.stem for j in grid if j.environment == "mushroom"}
    assert next(j for j in jobs if j.stem == "runs/regret/mushroom/random").selection is None
    assert all(j.spec.n_runs == 2 for j in tuning) and report.spec.n_runs == 3


def test_tuning_and_report_jobs_use_disjoint_seeds(smoke_config):
    from hare.experiments.job_setup import environment_keys, policy_keys

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
    assert {s for s in before if before[s] != after[s]} == {
        "runs/regret/synthetic_linear/linucb",
        "runs/regret/mushroom/linucb",
    }


def _budget_config(**policies):
    """A tuned experiment over the given policy entries (validated without the schema)."""
    return {
        "base_seed": 7,
        "environments": {"mushroom": {"kind": "classification", "dataset": "mushroom"}},
        "experiments": {
            "tuned": {
                "environments": ["mushroom"],
                "horizon": 50,
                "n_runs": 2,
                "n_tuning_runs": 2,
                "tune": True,
                "policies": dict(policies),
            }
        },
    }


def _validate(config):
    from hare.experiments.settings import validate_config

    validate_config(config)


def test_every_tunable_hyperparameter_is_a_field_of_its_config():
    import dataclasses

    from hare.policies.base import policy_class, policy_names

    for name in policy_names():
        config_class = policy_class(name).config_class
        assert set(config_class.tunable) <= {f.name for f in dataclasses.fields(config_class)}, name
        assert "tunable" not in {f.name for f in dataclasses.fields(config_class)}, name
    assert policy_class("random").config_class.tunable == ()
    assert policy_class("linucb").config_class.tunable == ("alpha",)
    assert policy_class("knn_kl_ucb").config_class.tunable == policy_class("knn_ucb").config_class.tunable == ("theta",)


def test_equal_grids_and_untunable_policies_pass():
    _validate(
        _budget_config(
            random={},
            linucb={"grid": {"alpha": [0.1, 1.0, 10.0]}},
            lin_ts={"grid": {"nu": [0.01, 0.1, 1.0]}},
            neural_ucb={"params": {"width": 8}, "grid": {"alpha": [0.1, 1.0, 10.0]}},
            ucb1={"fixed": "the original rule, alpha = 1"},
        )
    )


def test_grids_of_different_sizes_are_rejected_naming_the_odd_entry():
    config = _budget_config(
        linucb={"grid": {"alpha": [0.1, 1.0, 10.0]}},
        eps_greedy={"grid": {"epsilon": [0.01, 0.1, 0.2]}},
        lin_ts={"grid": {"nu": [0.1, 1.0]}},
    )
    with pytest.raises(
        ConfigError,
        match=(
            r"^experiments\.tuned\.policies\.lin_ts\.grid: 2 points, "
            r"but experiments\.tuned\.policies\.linucb\.grid and 1 other.* have 3"
        ),
    ):
        _validate(config)


def test_grid_sizes_must_agree_across_experiments():
    config = _budget_config(linucb={"grid": {"alpha": [0.1, 1.0, 10.0]}})
    config["experiments"]["other"] = copy.deepcopy(config["experiments"]["tuned"])
    config["experiments"]["other"]["policies"] = {"lin_ts": {"grid": {"nu": [0.1, 1.0]}}}
    with pytest.raises(
        ConfigError,
        match=(
            r"experiments\.other\.policies\.lin_ts\.grid: 2 points, "
            r"but experiments\.tuned\.policies\.linucb\.grid has 3"
        ),
    ):
        _validate(config)


def test_a_product_grid_counts_its_points():
    config = _budget_config(
        linucb={"grid": {"alpha": [0.1, 1.0, 10.0, 100.0]}},
        neural_ucb={"params": {"width": 8}, "grid": {"alpha": [0.1, 1.0], "lam": [0.1, 1.0]}},
    )
    _validate(config)
    config["experiments"]["tuned"]["policies"]["neural_ucb"]["grid"]["lam"] = [0.01, 0.1, 1.0]
    with pytest.raises(ConfigError, match=r"policies\.(neural_ucb\.grid: 6|linucb\.grid: 4) points"):
        _validate(config)


def test_a_tunable_policy_without_grid_needs_a_fixed_reason():
    config = _budget_config(linucb={"grid": {"alpha": [0.1, 1.0]}}, kernel_ucb={"params": {"alpha": 0.1}})
    with pytest.raises(
        ConfigError,
        match=r"^experiments\.tuned\.policies\.kernel_ucb\.grid: required in a tuned experiment.*\['alpha'\].*fixed",
    ):
        _validate(config)
    config["experiments"]["tuned"]["policies"]["kernel_ucb"]["fixed"] = "kept at LNUCB-TA's value"
    _validate(config)


def test_fixed_beside_a_grid_or_empty_is_rejected():
    with pytest.raises(
        ConfigError, match=r"^experiments\.tuned\.policies\.linucb\.fixed: an entry with a grid is tuned"
    ):
        _validate(_budget_config(linucb={"grid": {"alpha": [0.1, 1.0]}, "fixed": "no"}))
    with pytest.raises(ConfigError, match=r"^experiments\.tuned\.policies\.linucb\.fixed: must be a non-empty reason"):
        _validate(_budget_config(linucb={"fixed": " "}))


def test_a_grid_over_an_untunable_hyperparameter_is_rejected():
    with pytest.raises(
        ConfigError, match=r"^experiments\.tuned\.policies\.linucb\.grid: \['lam'\] is not tunable for policy 'linucb'"
    ):
        _validate(_budget_config(linucb={"grid": {"alpha": [0.1, 1.0], "lam": [1.0]}}))
    with pytest.raises(
        ConfigError,
        match=r"^experiments\.tuned\.policies\.eps\.grid: \['decay'\] is not tunable.*'eps_greedy'.*\['epsilon'\]",
    ):
        _validate(_budget_config(eps={"policy": "eps_greedy", "grid": {"epsilon": [0.1, 0.2], "decay": [0.0]}}))


def test_experiments_without_tuning_are_free_to_sweep():
    config = _budget_config(linucb={"grid": {"alpha": [0.1, 1.0, 10.0]}})
    config["experiments"]["sweep"] = {
        "environments": ["mushroom"],
        "horizon": 50,
        "n_runs": 2,
        "n_tuning_runs": 2,
        "policies": {
            "lnucb_ta": {"grid": {"kappa": [0.0, 0.5, 1.0, 0.25, 0.75]}},
            "linucb": {"params": {"alpha": 1.0}},
        },
    }
    _validate(config)


def test_the_fixed_reason_travels_in_the_job_spec():
    config = _budget_config(
        linucb={"grid": {"alpha": [0.1, 1.0]}}, kernel_ucb={"params": {"alpha": 0.1}, "fixed": "LNUCB-TA's value"}
    )
    jobs = {j.stem: j for j in expand_jobs(config)}
    assert jobs["runs/tuned/mushroom/kernel_ucb"].spec.fixed == "LNUCB-TA's value"
    assert "fixed" not in jobs["runs/tuned/mushroom/linucb"].spec.as_dict()


def test_schema_accepts_fixed_and_a_list_of_experiments_for_a_table(repository):
    from hare.experiments.config import resolve_config_file, schema_errors

    config = resolve_config_file(repository / "config" / "smoke.yaml")
    experiments = sorted(config["experiments"])
    config["tables"]["classification"]["experiment"] = experiments[:2]
    config["tables"]["synthetic"]["experiment"] = "all"
    first = next(iter(config["experiments"][experiments[0]]["policies"].values()))
    first.pop("grid", None)
    first["fixed"] = "a reason"
    assert not [e for e in schema_errors(config) if e.startswith(("tables.", f"experiments.{experiments[0]}.policies"))]
    for bad in ([], [experiments[0], experiments[0]], 3, "Not-a-name"):
        config["tables"]["classification"]["experiment"] = bad
        assert any(e.startswith("tables.classification.experiment") for e in schema_errors(config)), bad
    config["tables"]["classification"]["experiment"] = experiments[:2]
    first["fixed"] = ""
    assert any(".fixed" in e for e in schema_errors(config))


def test_a_table_naming_a_policy_its_experiment_lacks_is_refused(smoke_config):
    from hare.experiments.settings import validate_config

    smoke_config["tables"] = {
        "regret": {
            "experiment": "regret",
            "kind": "regret",
            "caption": "c",
            "policies": ["linucb", "hare", "hare_random"],
        }
    }
    validate_config(smoke_config)
    smoke_config["tables"]["regret"]["policies"].append("lin_ucb")
    with pytest.raises(ConfigError, match=r"tables\.regret\.policies: \['lin_ucb'\]"):
        validate_config(smoke_config)


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("experiment", "nope", r"theory\.oful\.experiment: unknown experiment 'nope'"),
        ("environment", "mushroom_x", r"theory\.oful\.environment: 'mushroom_x' is not an environment"),
        ("policy", "lin_ucb", r"theory\.oful\.policy: 'lin_ucb' is not a policy label"),
        ("policy", "random", r"theory\.oful\.policy: 'random' must be a LinUCB entry"),
    ],
)
def test_the_oful_check_names_a_run_the_config_produces(smoke_config, key, value, message):
    from hare.experiments.settings import validate_config

    smoke_config["theory"] = {
        "oful": {"experiment": "regret", "environment": "synthetic_linear", "policy": "linucb", "delta": 0.05}
    }
    validate_config(smoke_config)
    smoke_config["theory"]["oful"][key] = value
    with pytest.raises(ConfigError, match=message):
        validate_config(smoke_config)


def test_a_hyperparameter_in_both_params_and_grid_is_rejected():
    """The grid overrides params, so a value in both would be silently dropped (and never bounds-checked)."""
    with pytest.raises(
        ConfigError,
        match=r"^experiments\.tuned\.policies\.linucb\.params: \['alpha'\] is also in the grid, which overrides",
    ):
        _validate(_budget_config(linucb={"params": {"alpha": -1.0}, "grid": {"alpha": [0.1, 1.0]}}))
    _validate(_budget_config(linucb={"params": {"lam": 1.0}, "grid": {"alpha": [0.1, 1.0]}}))


def _planned(config):
    """The fixture's experiment as a sweep with ``plan: true``: every grid point reported, each also on tuning runs."""
    config = copy.deepcopy(config)
    exp = config["experiments"]["regret"]
    exp["plan"] = True
    exp["policies"]["linucb"]["grid"] = {"alpha": [0.1, 1.0, 10.0]}
    del exp["policies"]["linucb"]["params"]["alpha"]
    return config


def test_a_planned_experiment_plays_every_report_job_on_the_tuning_seeds(smoke_config):
    """plan: true adds one tuning job per report job (same label, n_tuning_runs runs, under tuning/), on seeds
    disjoint from the reported ones; the report jobs stay what they are without plan, and nothing is selected."""
    from hare.experiments.job_setup import environment_keys, policy_keys

    config = _planned(smoke_config)
    unplanned = copy.deepcopy(config)
    del unplanned["experiments"]["regret"]["plan"]
    jobs = expand_jobs(config)
    report = [j for j in jobs if j.role == "report"]
    tuning = [j for j in jobs if j.role == "tuning"]
    assert [j.spec for j in report] == [j.spec for j in expand_jobs(unplanned)]
    assert not [j for j in expand_jobs(unplanned) if j.role == "tuning"]
    assert sorted((j.environment, j.label) for j in tuning) == sorted((j.environment, j.label) for j in report)
    assert len(report) == 3 * 2 + 2 + 1 + 2  # linucb's 3 points and random, hare_random on both; hare_oracle on one
    assert "tuning/regret/mushroom/linucb@alpha=10.0" in {j.stem for j in tuning}
    for job in tuning:
        twin = next(r for r in report if (r.environment, r.label) == (job.environment, job.label))
        assert job.spec.n_runs == 2 and twin.spec.n_runs == 3
        assert job.spec.params == twin.spec.params and job.spec.policy == twin.spec.policy
        assert job.selection is None and not job.spec.tuned and twin.selection is None and not twin.spec.tuned
        for keys in (environment_keys, policy_keys):
            assert not set(keys(twin.spec).tolist()) & set(keys(job.spec).tolist())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"tune": True}, r"^experiments\.regret\.plan: a tuned experiment \(tune: true\) has tuning runs"),
        ({"n_tuning_runs": None}, r"^experiments\.regret\.n_tuning_runs: plan: true plays every reported job"),
    ],
)
def test_plan_is_refused_beside_tune_and_without_tuning_runs(smoke_config, change, message):
    config = _planned(smoke_config)
    exp = config["experiments"]["regret"]
    for key, value in change.items():
        if value is None:
            del exp[key]
        else:
            exp[key] = value
    with pytest.raises(ConfigError, match=message) as refused:
        _validate(config)
    assert "\n" not in str(refused.value)


def test_the_schema_names_plan_and_its_tuning_runs(repository):
    """In a shipped config: plan is a boolean of the schema, and an experiment without n_tuning_runs is refused naming
    the key, before the boundary's own check."""
    from hare.experiments.config import check_config, resolve_config_file

    config = resolve_config_file(repository / "config" / "smoke.yaml")
    assert config["experiments"]["exploration_sweep"]["plan"] is True
    config["experiments"]["exploration_sweep"]["plan"] = "yes"
    with pytest.raises(ConfigError, match=r"experiments\.exploration_sweep\.plan: 'yes' is not of type 'boolean'"):
        check_config(copy.deepcopy(config))
    config["experiments"]["exploration_sweep"]["plan"] = True
    del config["experiments"]["exploration_sweep"]["n_tuning_runs"]
    with pytest.raises(ConfigError, match=r"experiments\.exploration_sweep: 'n_tuning_runs' is a required property"):
        check_config(config)
