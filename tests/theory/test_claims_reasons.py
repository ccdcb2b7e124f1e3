"""hare.theory.claims.reasons: every INCONCLUSIVE claim says why, from its numbers, with the runs that would settle it
after its family's adjustment (never fewer than ran); an EQUIVALENT verdict whose interval excludes 0 reads as a
difference smaller than delta."""

import math

import numpy as np
import pytest
import yaml
from scipy import stats

from hare import verdicts
from hare.io import write_json, write_npz
from hare.report.register import register_tex
from hare.theory.claims.decide import evaluate_register, finish_register
from hare.theory.claims.documents import claim_entry, claims_document, claims_markdown
from hare.theory.claims.result import ClaimResult
from hare.verdicts import EQUIVALENT_DIFFERENCE


def _run(root, path, regrets):
    regrets = np.asarray(regrets, dtype=float)
    write_npz(root / path, total_regret=regrets, total_reward=-regrets)
    job = {"experiment": "e", "environment": {"name": "x"}, "base_seed": 1, "role": "report", "regime": "cold"}
    write_json((root / path).with_suffix(".json"), {"job": {**job, "n_runs": len(regrets)}})


def _paired_claim(tmp_path, differences, margin=None, tuning_sd=None):
    """A paired comparison ``a - b < 0`` whose per-run differences are ``differences``; with ``tuning_sd``, tuning
    runs of that paired spread plan its run count against ``margin``."""
    base = np.linspace(100, 200, len(differences))
    _run(tmp_path, "runs/a.npz", base + np.asarray(differences))
    _run(tmp_path, "runs/b.npz", base)
    claim = {
        "key": "a_vs_b",
        "statement": "a below b",
        "inputs": {"a": "runs/a.npz", "b": "runs/b.npz"},
        "per_run": "a.total_regret - b.total_regret",
        "compare": "<",
        "threshold": 0,
    }
    if margin is not None:
        tuning = {"margin": margin}
        if tuning_sd is not None:
            noise = tuning_sd * np.array([-1.0, 1.0, -1.0, 1.0, 0.0, 0.0]) / np.std([-1, 1, -1, 1, 0, 0], ddof=1)
            tuning.update(a=list(50 + noise), b=[50.0] * 6)
            claim["power"] = ["plan.a", "plan.b"]
        write_json(tmp_path / "plan.json", tuning)
        claim["inputs"]["plan"] = "plan.json"
        claim["margin"] = "plan.margin"
    (tmp_path / "claims.yaml").write_text(yaml.safe_dump({"claims": [claim]}))
    (result,) = evaluate_register(tmp_path / "claims.yaml", tmp_path)
    return result


def test_too_few_runs(tmp_path):
    """A clear mean (well beyond one standard error of 0) over three spread-out runs: more runs would settle it."""
    result = _paired_claim(tmp_path, [-6.0, -3.0, 0.5])
    assert result.adjusted_status == "INCONCLUSIVE" and result.reason == "too few runs"
    assert result.runs_needed > 3 and f"about {result.runs_needed} runs would settle it" in result.note
    n, sd, mean = result.runs_needed, result.run_sd, result.measured
    assert stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n) <= abs(mean)  # at that count the interval excludes 0


def test_effect_at_the_margins_edge(tmp_path):
    """A mean within one standard error of 0 and no margin: the runs cannot tell its sign."""
    result = _paired_claim(tmp_path, [-1.0, 1.2, -0.9, 1.0, -0.1])
    assert result.adjusted_status == "INCONCLUSIVE" and result.reason == "effect at the margin's edge"
    assert "within one standard error" in result.note and "the threshold 0" in result.note


def test_spread_larger_than_planned(tmp_path):
    """The tuning runs' paired spread (1) plans a few runs for a half-width of delta / 2; the runs ran that many and
    more, but spread five times as much: the plan's premise did not hold."""
    differences = [-7.0, 5.0, -6.0, 6.5, 1.0, -3.0, 4.0, 2.0]
    result = _paired_claim(tmp_path, differences, margin=3.0, tuning_sd=1.0)
    assert result.planned_runs <= len(differences) and result.run_sd > 4 * result.sd
    assert result.adjusted_status == "INCONCLUSIVE" and result.reason == "spread larger than planned"
    assert f"planned {result.planned_runs}" in result.note
    entry = claim_entry(result)
    assert entry["reason"] == "spread larger than planned" and entry["runs_needed"] == result.runs_needed
    assert "spread larger than planned" in claims_markdown([result])


def _member(key, values, margin=None):
    values = np.asarray(values, dtype=float)
    mean, sd, n = values.mean(), values.std(ddof=1), values.size
    half = stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n)
    status = verdicts.decide(mean - half, mean + half, "<", 0.0, mean, margin)
    return ClaimResult(
        key,
        "",
        "",
        mean,
        mean - half,
        mean + half,
        "<",
        0.0,
        status,
        f"t interval over {n} runs",
        (),
        family="f",
        margin=margin,
        p_values=verdicts.t_p_values(values, "<", 0.0, margin),
        adjusted_status=status,
        n_runs=n,
        run_sd=sd,
        uncertainty="per_run",
    )


def test_the_settle_estimate_never_asks_for_fewer_runs_than_ran():
    """C14's case: a claim the unadjusted interval decides (PASS at 10 runs) left INCONCLUSIVE by its family's
    adjustment. The unadjusted estimate asks for fewer runs than ran; the register's asks for more, and at its count
    the one-sided p-value meets the level the adjustment asks of it."""
    rng = np.random.default_rng(7)
    values = -1.0 + 1.2 * rng.standard_normal(10)
    values = -1.0 + 1.2 * (values - values.mean()) / values.std(ddof=1)  # mean -1, sd 1.2 exactly
    nulls = [_member(f"null{i}", rng.normal(0, 1, 10)) for i in range(9)]
    claim = _member("c14", values)
    assert claim.status == "PASS"
    assert verdicts.runs_to_settle(claim.measured, claim.run_sd, 0.0, None) <= 10  # the former estimate
    finished = {r.key: r for r in finish_register([claim, *nulls])}
    settled = finished["c14"]
    assert settled.adjusted_status == "INCONCLUSIVE" and settled.runs_needed > 10
    assert f"({settled.n_runs} ran)" in settled.note and "after the family's adjustment" in settled.note
    n = settled.runs_needed
    p = stats.t.cdf(-1.0 / (1.2 / math.sqrt(n)), n - 1)
    taken = sum(r.adjusted_status == "PASS" for r in finished.values())
    assert p <= verdicts.ALPHA_ONE_SIDED * (taken + 1) / 10


@pytest.mark.parametrize("seed", range(30))
def test_no_inconclusive_claim_asks_for_fewer_runs_than_ran(seed):
    """Planted families of mixed effects, margins and run counts: every INCONCLUSIVE member has a reason and asks for
    more runs than ran."""
    rng = np.random.default_rng(seed)
    members = [
        _member(
            f"m{i}",
            rng.normal(rng.choice([0.0, -0.5, -1.5]), rng.uniform(0.5, 3), int(rng.integers(3, 25))),
            margin=rng.choice([None, 0.5, 2.0]),
        )
        for i in range(12)
    ]
    for r in finish_register(members):
        if r.adjusted_status == "INCONCLUSIVE":
            assert r.reason in verdicts.REASONS and r.note.startswith(r.reason)
            assert r.runs_needed is None or r.runs_needed > r.n_runs, r


def test_verdicts_runs_to_settle_is_never_below_ran_plus_one():
    assert verdicts.runs_to_settle(-1.0, 1.0, 0.0, None) < 20
    assert verdicts.runs_to_settle(-1.0, 1.0, 0.0, None, ran=20) == 21
    assert verdicts.runs_to_settle(-1.0, 1.0, 0.0, None, alpha_exclude=0.001) > verdicts.runs_to_settle(
        -1.0, 1.0, 0.0, None
    )
    assert verdicts.runs_to_settle(0.0, 1.0, 0.0, None) is None


def test_a_restated_share_with_one_locked_run_says_how_many_runs_would_settle_it(tmp_path):
    """One of 30 runs locked in against the restated threshold (the zero-event bound at the run count): INCONCLUSIVE
    for too few runs, and at the runs it names the exact interval of the same share decides it."""
    _run(tmp_path, "runs/random.npz", np.full(30, 100.0))
    _run(tmp_path, "runs/policy.npz", [100.0] + [10.0] * 29)
    level = "0.9 * mean(random.total_regret)"
    claim = {
        "key": "no_lock_in",
        "statement": "few runs lock in",
        "inputs": {"ours": "runs/policy.npz", "random": "runs/random.npz"},
        "measured": f"share_above(ours.total_regret, {level})",
        "interval": [f"share_above_low(ours.total_regret, {level})", f"share_above_high(ours.total_regret, {level})"],
        "compare": "<=",
        "threshold": "max(0.05, zero_event_bound(n_runs))",
    }
    (tmp_path / "claims.yaml").write_text(yaml.safe_dump({"claims": [claim]}))
    (result,) = evaluate_register(tmp_path / "claims.yaml", tmp_path)
    assert result.adjusted_status == "INCONCLUSIVE" and result.reason == "too few runs"
    n = result.runs_needed
    assert n > 30
    k = round(n / 30)
    assert stats.beta.ppf(0.975, k + 1, n - k) <= max(0.05, 1 - 0.025 ** (1 / n)) + 1e-12


def _equivalent(low, high):
    return ClaimResult(
        "tie",
        "",
        "HARE vs LinUCB",
        (low + high) / 2,
        low,
        high,
        "<",
        0.0,
        "PASS",
        "t interval over 10 runs",
        (),
        family="f",
        margin=12.5,
        adjusted_status="EQUIVALENT",
        claim_id="C14",
        headline=True,
    )


def test_an_equivalent_verdict_whose_interval_excludes_zero_reads_as_a_difference_within_the_margin():
    """-4.83 [-8.50, -1.15], EQUIVALENT after the adjustment: a difference smaller than delta, in claims.md, the JSON
    and the paper's tables; an interval that holds 0 keeps the plain word."""
    differs = _equivalent(-8.50, -1.15)
    assert differs.verdict == EQUIVALENT_DIFFERENCE == "EQUIVALENT (a difference smaller than δ)"
    assert f"**{EQUIVALENT_DIFFERENCE}**" in claims_markdown([differs])
    assert claim_entry(differs)["verdict"] == EQUIVALENT_DIFFERENCE and claim_entry(differs)["adjusted_status"] == (
        "EQUIVALENT"
    )
    tex = register_tex(claims_document([differs]))
    assert r"\textsc{equivalent} (a difference smaller than $\delta$)" in tex  # headline table
    assert r"claimstatus@tie\endcsname{EQUIVALENT (a difference smaller than $\delta$)}" in tex  # \claimref
    member = register_tex(claims_document([ClaimResult(**{**differs.__dict__, "headline": False})]))
    assert r"\textsc{equiv.} (diff.\,${<}\,\delta$)" in member  # the family table's short form
    plain = _equivalent(-8.50, 1.15)
    assert plain.verdict == "EQUIVALENT"
    rows = register_tex(claims_document([plain])).split(r"\label{tab:headline}")[1]
    assert r"\textsc{equivalent}" in rows and "(a difference smaller than" not in rows
