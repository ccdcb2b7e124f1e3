"""The typed job specification: every job of the project's configs goes to a :class:`JobSpec` and back to the same
dict, key for key and in the same order (so its JSON, its hash and every digest stay what they were); the spec is
frozen."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
from pathlib import Path

import pytest

from hare.experiments.config import load_config
from hare.experiments.grid import expand_jobs
from hare.experiments.job_spec import ENVIRONMENT_KEYS, JOB_KEYS, EnvironmentSpec, JobSpec

CONFIGS = ("smoke", "default", "paper-core", "paper")


@pytest.fixture(scope="module", params=CONFIGS)
def config_specs(request, repository: Path) -> list[dict]:
    """The dict form of every job of one config (loading ``paper.yaml`` asks for no GPU)."""
    config = load_config([repository / "config" / f"{request.param}.yaml"], memory=False)
    return [job.spec.as_dict() for job in expand_jobs(config)]


def test_every_job_of_the_configs_round_trips(config_specs):
    for spec in config_specs:
        assert list(spec) == [key for key in JOB_KEYS if key in spec]
        assert list(spec["environment"]) == [key for key in ENVIRONMENT_KEYS if key in spec["environment"]]
        typed = JobSpec.from_dict(spec)
        assert typed.as_dict() == spec
        assert json.dumps(typed.as_dict()) == json.dumps(spec)
        assert JobSpec.from_dict(typed.as_dict()) == typed


def test_expanded_jobs_carry_optional_keys_only_when_set(config_specs):
    for spec in config_specs:
        typed = JobSpec.from_dict(spec)
        for key in ("max_runs_per_simulation", "tuned_grid", "fixed"):
            assert (key in spec) == (getattr(typed, key) is not None)
        assert ("preparation" in spec["environment"]) == (typed.environment.preparation is not None)


def _smoke_job(smoke_config: dict, stem: str) -> JobSpec:
    return next(job.spec for job in expand_jobs(smoke_config) if job.stem == stem)


def test_a_job_spec_is_frozen(smoke_config):
    spec = next(job.spec for job in expand_jobs(smoke_config))
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.n_runs = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.environment.horizon = 1
    with pytest.raises(TypeError):
        spec.params["alpha"] = 2.0
    with pytest.raises(TypeError):
        spec.environment.params["n_items"] = 2


def test_the_dict_form_is_a_copy(smoke_config):
    """Neither the dict a spec was made from nor the dicts it gives back reach its values."""
    given = next(job.spec for job in expand_jobs(smoke_config) if job.spec.params).as_dict()
    spec = JobSpec.from_dict(given)
    key = next(iter(given["params"]))
    given["params"][key] = "changed"
    given["environment"]["params"]["changed"] = True
    out = spec.as_dict()
    out["params"][key] = "again"
    assert spec.params[key] not in ("changed", "again")
    assert "changed" not in spec.environment.params


def test_a_tuned_and_selected_spec_round_trips(smoke_config):
    """The selection's keys come last, after the tuned grid, as :func:`hare.experiments.selection.apply_selection`
    adds them; a grid's values and the ties are tuples in the spec, lists in its dict form."""
    report = next(job.spec for job in expand_jobs(smoke_config) if job.spec.tuned)
    assert all(isinstance(values, tuple) for values in report.tuned_grid.values())
    selected = dataclasses.replace(report, selected_from="x@alpha=1.0", selection_ties=["x@alpha=1.0"])
    given = {**report.as_dict(), "selected_from": "x@alpha=1.0", "selection_ties": ["x@alpha=1.0"]}
    assert selected.selection_ties == ("x@alpha=1.0",)
    assert json.dumps(selected.as_dict()) == json.dumps(given)
    assert JobSpec.from_dict(given) == selected


def test_copies_and_pickles_go_through_the_dict_form(smoke_config):
    spec = next(job.spec for job in expand_jobs(smoke_config) if job.spec.tuned)
    assert copy.deepcopy(spec) == spec and pickle.loads(pickle.dumps(spec)) == spec
    assert copy.deepcopy(spec.environment) == spec.environment


def test_a_key_the_dict_form_lacks_is_refused(smoke_config):
    spec = next(job.spec for job in expand_jobs(smoke_config)).as_dict()
    with pytest.raises(ValueError, match=r"job\.colour"):
        JobSpec.from_dict({**spec, "colour": "red"})
    with pytest.raises(ValueError, match=r"environment\.colour"):
        EnvironmentSpec.from_dict({**spec["environment"], "colour": "red"})
