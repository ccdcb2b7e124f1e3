"""``hare run --job`` reads a job through the config boundary (:mod:`hare.experiments.job_boundary`): every job of the
shipped configs parses as it is (to the :class:`hare.experiments.job_spec.JobSpec` the round loop reads), and a
specification no config makes is refused in one line naming ``job.<key>``, before anything runs or is written."""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path

import pytest

from hare.cli import main
from hare.experiments.config import load_config
from hare.experiments.grid import expand_jobs
from hare.experiments.job_boundary import parse_job
from hare.experiments.job_spec import JobSpec
from hare.experiments.settings import ConfigError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def smoke_jobs() -> dict[str, dict]:
    config = load_config([ROOT / "config" / "smoke.yaml"], memory=False)
    return {job.stem: job.spec.as_dict() for job in expand_jobs(config)}


def test_every_job_of_the_smoke_config_parses_as_it_is(smoke_jobs):
    """The boundary accepts what the config makes: tuning points, tuned report jobs, fixed entries, warm and cold."""
    roles = set()
    for spec in smoke_jobs.values():
        given = json.loads(json.dumps(spec))
        parsed = parse_job(given)
        assert isinstance(parsed, JobSpec) and parsed.as_dict() == spec
        roles.add((spec["role"], "tuned_grid" in spec, spec["regime"]))
    assert {("tuning", False, "cold"), ("report", True, "cold"), ("report", True, "warm")} <= roles


def _planted(spec: dict, path: tuple, value) -> dict:
    planted = copy.deepcopy(spec)
    target = planted
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return planted


HARE = "runs/synthetic/synthetic_linear/hare"
LINUCB_POINT = "tuning/classification/mushroom/linucb@alpha=0.1"


@pytest.mark.parametrize(
    ("stem", "path", "value", "key"),
    [
        (HARE, ("params", "alpha"), 1e308, "job.params.alpha"),
        (HARE, ("environment", "horizon"), 10**9, "job.environment.horizon"),
        (HARE, ("n_runs",), -3, "job.n_runs"),
        (HARE, ("n_runs",), 10**9, "job.n_runs"),
        (HARE, ("record_every",), 0, "job.record_every"),
        (HARE, ("policy",), "nope", "job.policy: unknown policy"),
        (HARE, ("regime",), "tepid", "job.regime"),
        (HARE, ("n_logged",), 10**12, "job.n_logged"),
        (HARE, ("surprise",), 1, "job.surprise"),
        (HARE, ("environment",), KeyError, "job.environment"),
        (HARE, ("environment", "kind"), "quantum", "job.environment.kind"),
        (HARE, ("environment", "params", "n_items"), -1, "job.environment.params.n_items"),
        (HARE, ("tuned_grid", "alpha"), [1e308], "job.tuned_grid.alpha"),
        (HARE, ("role",), "judge", "job.role"),
        (HARE, ("base_seed",), 2**64, "job.base_seed"),
        (LINUCB_POINT, ("params", "alpha"), float("nan"), "job.params.alpha"),
        (LINUCB_POINT, ("environment", "params", "logged_rows"), 10**6, "job.environment.params.logged_rows"),
        (LINUCB_POINT, ("label",), "linucb@alpha=0.1/../../x", "job.label"),
        (HARE, ("label",), "hare-1", "job.label"),
    ],
)
def test_a_job_no_config_makes_is_refused_in_one_line_naming_its_key(smoke_jobs, stem, path, value, key):
    start = time.perf_counter()
    with pytest.raises((ConfigError, ValueError)) as caught:
        parse_job(_planted(smoke_jobs[stem], path, value))
    message = str(caught.value)
    assert time.perf_counter() - start < 1.0
    assert "\n" not in message and message.startswith(key), message


def test_an_empty_job_and_a_job_that_is_not_an_object_are_refused():
    with pytest.raises(ConfigError, match=r"^job.experiment: missing"):
        parse_job({})
    with pytest.raises(ConfigError, match=r"^job: must be a JSON object"):
        parse_job([1, 2])


def test_hare_run_refuses_a_bad_job_before_writing_anything(smoke_jobs, tmp_path, capsys, monkeypatch):
    """The command line: exit 2, one line, no output file (the run never starts)."""
    monkeypatch.chdir(tmp_path)
    job = _planted(smoke_jobs[HARE], ("params", "alpha"), 1e308)
    job.pop("tuned_grid")
    status = main(["run", "--job", json.dumps(job), "--out", "out.npz"])
    lines = capsys.readouterr().err.strip().splitlines()
    assert status == 2
    assert len(lines) == 1 and lines[0].startswith("hare run: error: job.params.alpha: "), lines
    assert list(tmp_path.iterdir()) == []
