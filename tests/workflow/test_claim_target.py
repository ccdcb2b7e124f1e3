"""`make claim KEY=<key>`: the Snakemake target behind it builds only what that claim's inputs need."""

import subprocess

import pytest

from repository_copy import SNAKEMAKE, copy_repository, job_stats


def _planned_rules(workdir, *targets):
    dry = subprocess.run(
        [
            *SNAKEMAKE,
            "--cores",
            "1",
            "--configfile",
            "config/smoke.yaml",
            "--dry-run",
            *(f"results/claims/{t}.md" for t in targets),
        ],
        cwd=workdir,
        capture_output=True,
        text=True,
    )
    assert dry.returncode == 0, dry.stdout[-2000:] + dry.stderr[-2000:]
    return job_stats(dry.stdout)


@pytest.fixture(scope="module")
def fresh_clone(repository, tmp_path_factory):
    return copy_repository(repository, tmp_path_factory.mktemp("claim"))


def test_a_comparison_claim_needs_only_its_experiment_and_dataset(fresh_clone):
    rules = _planned_rules(fresh_clone, "hare_vs_linucb_mushroom_classification")
    # its margin comes from the same batch's tuning runs (the batch writes it after its jobs), nothing else
    assert set(rules) == {"fetch_dataset", "prepare_dataset", "run_classification_mushroom", "claim"}
    assert (
        rules["fetch_dataset"]
        == rules["prepare_dataset"]
        == rules["run_classification_mushroom"]
        == rules["claim"]
        == 1
    )


def test_a_check_claim_needs_only_its_check_and_the_runs_it_reads(fresh_clone):
    rules = _planned_rules(fresh_clone, "oful_bound_holds")
    assert set(rules) == {"oful_check", "run_synthetic_synthetic_linear", "claim"}


def test_a_claim_the_config_does_not_run_needs_nothing_but_its_verdict(fresh_clone):
    assert _planned_rules(fresh_clone, "hare_vs_linucb_adult_classification") == {"claim": 1}
