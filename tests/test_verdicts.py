"""Verdicts that decide: p-values against closed forms, equivalence, Benjamini--Hochberg against its definition and
by simulation of planted families, and the power calculation."""

import math

import numpy as np
import pytest
import yaml
from scipy import stats

from hare import verdicts
from hare.io import write_json, write_npz
from hare.theory.claims.decide import adjust_families, evaluate_claim, evaluate_register
from hare.verdicts import decide


def test_t_p_values_match_scipy_one_sample_t_tests():
    x = np.array([-1.2, 0.3, -2.5, -0.7, -1.9, 0.4])
    p = verdicts.t_p_values(x, "<", 0.0, margin=3.0)
    assert p["PASS"] == pytest.approx(stats.ttest_1samp(x, 0.0, alternative="less").pvalue)
    assert p["FAIL"] == pytest.approx(stats.ttest_1samp(x, 0.0, alternative="greater").pvalue)
    tost = max(
        stats.ttest_1samp(x, -3.0, alternative="greater").pvalue, stats.ttest_1samp(x, 3.0, alternative="less").pvalue
    )
    assert p["EQUIVALENT"] == pytest.approx(tost)
    flipped = verdicts.t_p_values(x, ">", 0.0, margin=None)
    assert flipped["PASS"] == pytest.approx(p["FAIL"]) and math.isnan(flipped["EQUIVALENT"])


@pytest.mark.parametrize("seed", range(20))
def test_unadjusted_decisions_agree_with_the_95_percent_interval(seed):
    """A one-sided p below 2.5% is exactly the interval on one side; TOST below 2.5% exactly the interval inside
    +-delta."""
    rng = np.random.default_rng(seed)
    x = rng.normal(rng.normal(0, 1), rng.uniform(0.2, 3), size=rng.integers(3, 30))
    mean, se = x.mean(), x.std(ddof=1) / math.sqrt(x.size)
    half = stats.t.ppf(0.975, x.size - 1) * se
    low, high, margin = mean - half, mean + half, 1.0
    p = verdicts.t_p_values(x, "<", 0.0, margin)
    assert (p["PASS"] < 0.025) == (high < 0)
    assert (p["FAIL"] < 0.025) == (low > 0)
    assert (p["EQUIVALENT"] < 0.025) == verdicts.equivalent(low, high, 0.0, margin)


def test_benjamini_hochberg_matches_its_definition_by_brute_force():
    """Reject the largest k with p_(k) <= k q / m: the adjusted p-value is below q exactly for those."""
    rng = np.random.default_rng(1)
    for _ in range(200):
        m = rng.integers(1, 12)
        p = np.where(rng.random(m) < 0.5, rng.random(m) * 0.05, rng.random(m))
        q = 0.025
        order = np.sort(p)
        passing = [k for k in range(1, m + 1) if order[k - 1] <= k * q / m]
        k = max(passing) if passing else 0
        expected = p <= (order[k - 1] if k else -1)
        assert np.array_equal(verdicts.benjamini_hochberg(p) <= q, expected)


def test_benjamini_hochberg_ignores_undefined_p_values():
    adjusted = verdicts.benjamini_hochberg([0.01, math.nan, 0.04])
    assert math.isnan(adjusted[1]) and adjusted[0] == pytest.approx(0.02) and adjusted[2] == pytest.approx(0.04)


def _planted_family(rng, means, n_runs, sd=1.0):
    """One family of paired-difference claims ``mean(d) < 0`` with the given true means; its adjusted statuses."""
    from hare.theory.claims.result import ClaimResult

    results = []
    for i, mu in enumerate(means):
        d = rng.normal(mu, sd, n_runs)
        p = verdicts.t_p_values(d, "<", 0.0, margin=0.5)
        mean, se = d.mean(), d.std(ddof=1) / math.sqrt(n_runs)
        half = stats.t.ppf(0.975, n_runs - 1) * se
        status = decide(mean - half, mean + half, "<", 0.0, mean, 0.5)
        results.append(
            ClaimResult(
                f"m{i}",
                "",
                "",
                mean,
                mean - half,
                mean + half,
                "<",
                0.0,
                status,
                "t",
                (),
                family="f",
                margin=0.5,
                p_values=p,
                adjusted_status=status,
            )
        )
    return [r.adjusted_status for r in adjust_families(results)]


def test_a_family_of_true_nulls_rarely_passes_after_adjustment():
    """Planted families of 40 claims whose true difference is 0: the share of families with any adjusted PASS is at
    most 2.5% (plus Monte Carlo error), where unadjusted almost every family has one."""
    rng = np.random.default_rng(2)
    families = [_planted_family(rng, [0.0] * 40, n_runs=10) for _ in range(400)]
    any_pass = np.mean([("PASS" in f) for f in families])
    assert any_pass <= 0.025 + 3 * math.sqrt(0.025 * 0.975 / 400)


def test_the_false_discovery_share_of_a_mixed_family_is_controlled():
    """Families with 10 true effects (mean -1.5) and 30 true nulls: the mean share of PASS among nulls over all PASS
    (the false discovery rate) is at most 2.5% (plus Monte Carlo error), and the true effects are found."""
    rng = np.random.default_rng(3)
    shares, found = [], []
    for _ in range(300):
        statuses = _planted_family(rng, [-1.5] * 10 + [0.0] * 30, n_runs=10)
        passes = [i for i, s in enumerate(statuses) if s == "PASS"]
        shares.append(sum(i >= 10 for i in passes) / max(len(passes), 1))
        found.append(sum(i < 10 for i in passes) / 10)
    assert np.mean(shares) <= 0.025 + 3 * np.std(shares) / math.sqrt(len(shares))
    assert np.mean(found) > 0.5


def _run(root, path, total_regret):
    write_npz(
        root / path,
        total_regret=np.asarray(total_regret, dtype=float),
        total_reward=-np.asarray(total_regret, dtype=float),
    )
    sidecar = {
        "job": {
            "experiment": "e",
            "environment": {"name": "x"},
            "base_seed": 1,
            "role": "report",
            "n_runs": len(total_regret),
            "regime": "cold",
        },
        "warm_start_digest": None,
    }
    write_json((root / path).with_suffix(".json"), sidecar)


def test_a_planted_tie_inside_the_margin_is_equivalent(tmp_path):
    """Two policies whose paired differences are small against a margin computed from a tuning file: EQUIVALENT,
    not INCONCLUSIVE; the same data without a margin stay INCONCLUSIVE."""
    rng = np.random.default_rng(4)
    base = rng.uniform(100, 200, 40)
    _run(tmp_path, "runs/a.npz", base + rng.normal(0, 1, 40))
    _run(tmp_path, "runs/b.npz", base)
    write_json(tmp_path / "plan.json", {"x": {"margin": 2.0}})
    claim = {
        "key": "a_vs_b",
        "statement": "a below b",
        "inputs": {"a": "runs/a.npz", "b": "runs/b.npz", "plan": "plan.json"},
        "per_run": "a.total_regret - b.total_regret",
        "compare": "<",
        "threshold": 0,
        "margin": "plan.x.margin",
    }
    result = evaluate_claim(claim, tmp_path)
    assert result.status == "EQUIVALENT" and result.margin == 2.0
    bare = evaluate_claim({k: v for k, v in claim.items() if k != "margin"}, tmp_path)
    assert bare.status == "INCONCLUSIVE"


def test_power_rule_plans_the_runs_and_a_claim_given_fewer_is_undecidable_at_this_scale(tmp_path):
    rng = np.random.default_rng(5)
    tuning_a, tuning_b = rng.normal(10, 4, 6), rng.normal(10, 4, 6)
    write_json(tmp_path / "plan.json", {"margin": 3.0, "a": list(tuning_a), "b": list(tuning_b)})
    _run(tmp_path, "runs/a.npz", [10.0, 14.0, 9.0])
    _run(tmp_path, "runs/b.npz", [11.0, 9.0, 12.0])
    claim = {
        "key": "a_vs_b",
        "statement": "a below b",
        "inputs": {"a": "runs/a.npz", "b": "runs/b.npz", "plan": "plan.json"},
        "per_run": "a.total_regret - b.total_regret",
        "compare": "<",
        "threshold": 0,
        "margin": "plan.margin",
        "power": ["plan.a", "plan.b"],
    }
    (tmp_path / "claims.yaml").write_text(yaml.safe_dump({"claims": [claim], "headline": ["a_*"]}))
    (result,) = evaluate_register(tmp_path / "claims.yaml", tmp_path)
    sd = np.std(tuning_a - tuning_b, ddof=1)
    n = result.planned_runs
    assert stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n) <= 1.5 < stats.t.ppf(0.975, n - 2) * sd / math.sqrt(n - 1)
    # 3 runs against the planned n: no outcome of 3 runs was planned to decide it, so it is not INCONCLUSIVE but
    # undecidable at this scale, with the planned runs as the runs that would decide it
    assert result.headline and result.claim_id == "C1" and result.adjusted_status == verdicts.UNDECIDABLE
    assert result.runs_needed == n > 3 and f"plans {n} runs" in result.note


@pytest.mark.parametrize(("sd", "target"), [(1.0, 0.5), (10.0, 1.0), (3.0, 2.9)])
def test_planned_runs_is_the_smallest_n_reaching_the_half_width(sd, target):
    n = verdicts.planned_runs(sd, target)

    def half(k):
        return stats.t.ppf(0.975, k - 1) * sd / math.sqrt(k)

    assert half(n) <= target and (n == 2 or half(n - 1) > target)


def _step_up(p: np.ndarray) -> np.ndarray:
    """The hand-written step-up adjustment the register used before it took scipy's: an independent implementation."""
    adjusted = np.full(p.shape, math.nan)
    finite = np.flatnonzero(np.isfinite(p))
    if finite.size:
        order = finite[np.argsort(p[finite], kind="stable")]
        scaled = p[order] * finite.size / np.arange(1, finite.size + 1)
        adjusted[order] = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    return adjusted


def test_scipys_adjustment_agrees_with_the_hand_written_one_on_register_shaped_p_values():
    """Families of 1 to 120 p-values with ties, exact ones and zeros, NaN (a decision a claim cannot take): scipy's
    ``false_discovery_control`` equals the former step-up to the last bit, so no verdict moves."""
    rng = np.random.default_rng(52)
    for _ in range(500):
        m = int(rng.integers(1, 121))
        p = rng.random(m) ** rng.uniform(0.2, 5)
        p[rng.random(m) < 0.1] = 1.0
        p[rng.random(m) < 0.05] = 0.0
        p[rng.random(m) < 0.1] = math.nan
        if rng.random() < 0.3:
            p = np.round(p, 2)
        np.testing.assert_allclose(verdicts.benjamini_hochberg(p), _step_up(p), rtol=0, atol=4e-16)
