"""hare.theory.claims.decidable: a claim no outcome at its run count can decide is flagged before anything runs, named
UNDECIDABLE AT THIS SCALE with the runs that would decide it, and decided at those runs."""

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from hare.experiments.config import load_config
from hare.io import write_json, write_npz
from hare.statistics import clopper_pearson
from hare.theory.claims.decidable import (
    share_runs_needed,
    undecidable,
    undecidable_claims,
    undecidable_report,
)
from hare.theory.claims.decide import evaluate_register
from hare.theory.claims.documents import claims_markdown
from hare.theory.claims.expressions import zero_event_bound
from hare.theory.claims.register import load_register
from hare.verdicts import UNDECIDABLE, status_counts

ROOT = Path(__file__).resolve().parents[2]
RUN = "results/runs/exp/env/{}.npz"


def _run(root, label, regrets):
    path = root / RUN.format(label)
    regrets = np.asarray(regrets, dtype=float)
    write_npz(path, total_regret=regrets, total_reward=-regrets)
    job = {"experiment": "exp", "environment": {"name": "env"}, "base_seed": 1, "role": "report"}
    write_json(path.with_suffix(".json"), {"job": {**job, "n_runs": len(regrets), "regime": "cold"}})


def _share_claim(threshold=0.05):
    """The no-lock-in claim's form: the share of runs above 90% of Random's mean regret, at most ``threshold``."""
    level = "0.9 * mean(random.total_regret)"
    return {
        "key": "no_lock_in_policy",
        "family": "no_lock_in",
        "statement": "At most the threshold's share of the policy's runs lock in.",
        "inputs": {"ours": RUN.format("policy"), "random": RUN.format("random")},
        "measured": f"share_above(ours.total_regret, {level})",
        "interval": [f"share_above_low(ours.total_regret, {level})", f"share_above_high(ours.total_regret, {level})"],
        "compare": "<=",
        "threshold": threshold,
    }


def _plant_share(root, n_runs, locked=0):
    """``n_runs`` runs of a policy, ``locked`` of them at Random's regret, the others far below it."""
    _run(root, "random", np.full(n_runs, 100.0))
    _run(root, "policy", [100.0] * locked + [10.0] * (n_runs - locked))


def _evaluate(root, claim):
    path = root / "claims.yaml"
    path.write_text(yaml.safe_dump({"claims": [claim]}))
    (result,) = evaluate_register(path, root)
    return result


def test_the_zero_event_bound_and_the_runs_a_five_percent_share_needs():
    """1 - 0.025^(1/n): 11.6% at 30 runs, 20.6% at 16, below 5% from ceil(log(0.025) / log(0.95)) = 72 runs on."""
    assert zero_event_bound(30) == pytest.approx(1 - 0.025 ** (1 / 30)) == pytest.approx(0.1158, abs=1e-4)
    assert zero_event_bound(16) == pytest.approx(0.2059, abs=1e-4)
    assert zero_event_bound(30) == clopper_pearson(0, 30)[1]  # exactly share_above_high with no run above
    needed = share_runs_needed("<=", lambda n: 0.05, start=31)
    assert needed == math.ceil(math.log(0.025) / math.log(0.95)) == 72
    assert zero_event_bound(72) <= 0.05 < zero_event_bound(71)


def test_a_planted_zero_event_share_at_30_runs_is_undecidable_and_decided_at_the_runs_it_names(tmp_path):
    """At 30 runs with none locked in the claim cannot PASS 5%: flagged before anything runs (from the run count
    alone), UNDECIDABLE AT THIS SCALE after it ran, with 72 runs named; at 72 runs the same outcome PASSes, at 71 it
    is still undecidable."""
    claim = _share_claim()
    [flagged] = undecidable([claim], {RUN.format("policy"): 30, RUN.format("random"): 30})
    assert (flagged.key, flagged.kind, flagged.n_runs, flagged.runs_needed) == ("no_lock_in_policy", "share", 30, 72)
    assert "72 runs could" in flagged.text
    _plant_share(tmp_path, 30)
    result = _evaluate(tmp_path, claim)
    assert result.measured == 0 and result.high == pytest.approx(0.1158, abs=1e-4)
    assert result.status == result.adjusted_status == UNDECIDABLE and result.runs_needed == 72
    markdown = claims_markdown([result])
    assert f"**{UNDECIDABLE}**" in markdown and "72 runs could" in markdown and "0 [0, 0.116]" in markdown
    assert status_counts([result.adjusted_status])[UNDECIDABLE] == 1
    _plant_share(tmp_path, 71)
    assert _evaluate(tmp_path, claim).adjusted_status == UNDECIDABLE
    _plant_share(tmp_path, 72)
    decided = _evaluate(tmp_path, claim)
    assert decided.adjusted_status == "PASS" and decided.runs_needed is None
    assert undecidable([claim], {RUN.format("policy"): 72, RUN.format("random"): 72}) == []


def test_a_flagged_claim_keeps_the_decision_its_runs_take_anyway(tmp_path):
    """Flagged at 30 runs (it cannot PASS), but 12 of 30 runs lock in: the interval lies above 5%, a FAIL the runs
    establish, and it stays FAIL."""
    _plant_share(tmp_path, 30, locked=12)
    result = _evaluate(tmp_path, _share_claim())
    assert result.adjusted_status == "FAIL" and result.runs_needed == 72


def test_the_restated_threshold_is_decided_by_zero_events_at_any_run_count(tmp_path):
    """The register's restatement, at most the larger of 5% and the zero-event bound at the claim's run count: never
    flagged, PASS with no run locked in at 30 runs, not PASS with one."""
    claim = _share_claim("max(0.05, zero_event_bound(n_runs))")
    for n in (5, 16, 30, 71, 72, 200):
        assert undecidable([claim], {RUN.format("policy"): n, RUN.format("random"): n}) == []
    _plant_share(tmp_path, 30)
    result = _evaluate(tmp_path, claim)
    assert result.adjusted_status == "PASS" and result.threshold == pytest.approx(0.1158, abs=1e-4)
    assert result.threshold_rule == "max(0.05, zero_event_bound(n_runs))"
    _plant_share(tmp_path, 30, locked=1)
    assert _evaluate(tmp_path, claim).adjusted_status == "INCONCLUSIVE"
    _plant_share(tmp_path, 100)
    assert _evaluate(tmp_path, claim).threshold == 0.05


def _paper(config):
    return ROOT / "paper" / "claims.yaml", load_config([ROOT / "config" / config])


@pytest.mark.parametrize("config", ["default.yaml", "smoke.yaml"])
def test_no_claim_of_the_register_is_inconclusive_by_construction(config):
    """Before anything runs, every share claim the configuration plays can be decided at its run counts; with the
    former threshold, 5%, every no-lock-in member could not, and each names 72 runs."""
    register, config = _paper(config)
    assert [u.key for u in undecidable_claims(register, config)] == []
    claims = load_register(register, [config])
    former = [{**c, "threshold": 0.05} for c in claims if c.get("family") == "no_lock_in"]
    from hare.theory.claims.decidable import run_counts

    flagged = undecidable(former, run_counts([config]))
    assert len(flagged) >= 5 and {u.runs_needed for u in flagged} == {72}


def test_validate_config_prints_the_count_and_the_first_keys(tmp_path):
    """``hare validate-config``'s lines: the count of undecidable claims, then one line per key (the first ten), and
    how many run plans wait for the tuning runs."""
    register, config = _paper("default.yaml")
    lines = undecidable_report(register, config)
    assert lines[0].startswith("claims: 0 of the ") and "run plans are checked once" in lines[-1]
    claims = yaml.safe_load(register.read_text())["claims"]
    lock_in = [c for c in claims if c.get("family") == "no_lock_in"]
    planted = tmp_path / "claims.yaml"
    planted.write_text(yaml.safe_dump({"claims": [{**c, "threshold": 0.05} for c in lock_in]}, sort_keys=False))
    lines = undecidable_report(planted, config, limit=3)
    assert lines[0].startswith("claims: ") and "cannot be decided at its run counts" in lines[0]
    assert int(lines[0].split()[1]) > 10
    assert all(line.startswith("  no_lock_in_") and "72 runs could" in line for line in lines[1:4])
    assert lines[4].startswith("  ... and ")
