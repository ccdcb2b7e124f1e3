"""What every job does around its rounds: the environment of a job specification."""

import torch

from hare.envs.registry import environment_class
from hare.experiments.job_setup import build_environment as job_environment
from hare.experiments.job_setup import environment_keys
from hare.experiments.job_spec import EnvironmentSpec, JobSpec


def test_a_job_builds_its_environment_through_the_registry():
    """A job's environment is its kind's (:func:`hare.envs.registry.build_environment`) with the job's keys; with
    ``copies`` every copy of run ``r`` draws what run ``r`` draws."""
    environment = EnvironmentSpec(name="sim", kind="synthetic", params={"n_items": 6}, dataset=None, horizon=9)
    spec = JobSpec(
        experiment="e",
        environment=environment,
        label="random",
        policy="random",
        params={},
        n_runs=2,
        role="report",
        base_seed=1,
        device="cpu",
        record_every=1,
        regime="cold",
        n_logged=0,
    )
    once = job_environment(spec, torch.device("cpu"))
    twice = job_environment(spec, torch.device("cpu"), copies=2)
    direct = environment_class("synthetic").from_entry(environment.as_dict(), 2, environment_keys(spec))
    assert torch.equal(once.round(3).rewards, direct.round(3).rewards)
    first, copied = once.round(3), twice.round(3)
    assert twice.n_runs == 4 and torch.equal(copied.observation.users, first.observation.users.repeat(2))
    assert torch.allclose(copied.rewards, first.rewards.repeat(2, 1))
