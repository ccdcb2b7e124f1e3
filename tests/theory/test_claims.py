import math
import re
import shutil
import subprocess

import numpy as np
import pytest
import yaml

from hare.io import write_json, write_npz
from hare.report.register import register_tex
from hare.statistics import t_interval
from hare.theory.claims.decide import evaluate_register
from hare.theory.claims.documents import claims_document, claims_markdown
from hare.theory.claims.expressions import evaluate_expression
from hare.theory.claims.register import load_register, not_produced
from hare.theory.claims.result import ClaimError
from hare.verdicts import UNDECIDABLE, decide


def claims_tex(results):
    """The paper's register as the workflow renders it: results -> claims.json document -> TeX."""
    return register_tex(claims_document(results))


def _sidecar(experiment="exp", environment="env", n_runs=3, base_seed=1, role="report"):
    return {
        "job": {
            "experiment": experiment,
            "environment": {"name": environment},
            "base_seed": base_seed,
            "role": role,
            "n_runs": n_runs,
            "regime": "cold",
        },
        "warm_start_digest": None,
    }


def _run(root, path, total_regret, **sidecar):
    write_npz(
        root / path,
        total_regret=np.asarray(total_regret, dtype=float),
        total_reward=-np.asarray(total_regret, dtype=float),
    )
    write_json((root / path).with_suffix(".json"), _sidecar(n_runs=len(total_regret), **sidecar))


@pytest.fixture
def fixture_results(tmp_path):
    _run(tmp_path, "runs/good.npz", [1.0, 2.0, 3.0])
    _run(tmp_path, "runs/bad.npz", [10.0, 12.0, 11.0])
    _run(tmp_path, "runs/close.npz", [1.5, 1.0, 3.8])
    write_json(
        tmp_path / "checks" / "bound.json",
        {
            "measured_max": [1.0, 5.0],
            "bound": [2.0, 4.0],
            "trivial": [3.0, 6.0],
            "exponent": {"estimate": 0.55, "ci_low": 0.4, "ci_high": 0.7},
        },
    )
    return tmp_path


def _register(tmp_path, claims, **extra):
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump({"claims": claims, **extra}))
    return path


def _paired(key, a, b, threshold=0, compare="<"):
    return {
        "key": key,
        "statement": f"{a} below {b}",
        "inputs": {"a": f"runs/{a}.npz", "b": f"runs/{b}.npz"},
        "per_run": "a.total_regret - b.total_regret",
        "compare": compare,
        "threshold": threshold,
    }


@pytest.mark.parametrize(
    ("low", "high", "compare", "threshold", "status"),
    [
        (-3, -1, "<", 0, "PASS"),
        (1, 3, "<", 0, "FAIL"),
        (-1, 1, "<", 0, "INCONCLUSIVE"),
        (0, 1, "<", 0, "INCONCLUSIVE"),
        (1e-9, 1, "<", 0, "FAIL"),
        (0, 0, ">=", 0, "PASS"),
        (0, 0, ">", 0, "INCONCLUSIVE"),
        (0, 1, "<=", 0, "INCONCLUSIVE"),
        (-1, 0, "<=", 0, "PASS"),
        (0.9, 1.0, ">=", 0.8, "PASS"),
        (0.7, 0.9, ">=", 0.8, "INCONCLUSIVE"),
        (math.nan, 1, "<", 0, "FAIL"),
    ],
)
def test_status_is_decided_on_the_whole_interval(low, high, compare, threshold, status):
    """An interval touching the threshold does not establish the opposite direction: not FAIL."""
    assert decide(low, high, compare, threshold) == status


def test_an_exact_tie_with_a_margin_is_equivalent():
    """Two policies that play identically (zero paired spread): the point interval [0, 0] is a tie, not a FAIL."""
    assert decide(0.0, 0.0, "<", 0.0, 0.0, margin=2.0) == "EQUIVALENT"


def test_paired_comparisons_give_pass_fail_and_inconclusive(fixture_results):
    register = _register(
        fixture_results,
        [
            _paired("good_vs_bad", "good", "bad"),
            _paired("bad_vs_good", "bad", "good"),
            _paired("good_vs_close", "good", "close"),
        ],
    )
    results = evaluate_register(register, fixture_results)
    assert [r.status for r in results] == ["PASS", "FAIL", "INCONCLUSIVE"]
    d = np.array([1.0, 2.0, 3.0]) - np.array([10.0, 12.0, 11.0])
    interval = t_interval(d)
    assert results[0].measured == pytest.approx(d.mean())
    assert (results[0].low, results[0].high) == pytest.approx((interval["ci_low"], interval["ci_high"]))
    markdown = claims_markdown(results)
    assert "1/3 PASS" in markdown and "**INCONCLUSIVE**" in markdown and "**FAIL**" in markdown


def test_a_planted_interval_straddling_the_threshold_is_inconclusive(tmp_path):
    """Means differ (HARE lower on average) but the runs' spread puts 0 inside the 95% interval."""
    _run(tmp_path, "runs/hare.npz", [10.0, 28.0, 14.0, 21.0, 9.0])
    _run(tmp_path, "runs/linucb.npz", [20.0, 12.0, 22.0, 15.0, 19.0])
    (result,) = evaluate_register(_register(tmp_path, [_paired("hare_vs_linucb", "hare", "linucb")]), tmp_path)
    assert result.measured < 0 < result.high and result.status == "INCONCLUSIVE"


def test_a_bound_above_the_trivial_bound_is_vacuous(fixture_results):
    bound = {
        "key": "bound_holds",
        "statement": "worst run below the bound",
        "inputs": {"c": "checks/bound.json"},
        "measured": "c.measured_max[-1]",
        "exact": "largest over runs",
        "compare": "<=",
        "threshold": "c.bound[-1]",
    }
    vacuous = {**bound, "key": "bound_vacuous", "threshold": 7.0, "trivial_bound": "c.trivial[-1]"}
    useful = {**bound, "key": "bound_useful", "trivial_bound": "c.trivial[-1]"}
    results = evaluate_register(_register(fixture_results, [bound, vacuous, useful]), fixture_results)
    assert [r.status for r in results] == ["FAIL", "VACUOUS", "FAIL"]
    assert r"\csname claimstatus@bound_vacuous\endcsname{VACUOUS}" in claims_tex(results)


def test_an_undefined_interval_of_a_defined_measurement_is_inconclusive():
    assert decide(math.nan, math.nan, "<", 0, measured=-3.0) == "INCONCLUSIVE"
    assert decide(math.nan, math.nan, "<", 0, measured=math.nan) == "FAIL"


def test_a_reported_interval_decides_the_claim(fixture_results):
    claim = {
        "key": "exponent_half",
        "statement": "exponent at most 0.5",
        "inputs": {"c": "checks/bound.json"},
        "measured": "c.exponent.estimate",
        "interval": ["c.exponent.ci_low", "c.exponent.ci_high"],
        "compare": "<=",
        "threshold": 0.5,
    }
    (result,) = evaluate_register(_register(fixture_results, [claim]), fixture_results)
    assert (result.measured, result.low, result.high, result.status) == (0.55, 0.4, 0.7, "INCONCLUSIVE")


def test_bootstrap_resamples_runs_jointly(tmp_path):
    """A statistic of two paired run files: a ratio of spreads. Joint resampling keeps the pairing: a file against
    itself gives exactly 1 in every resample."""
    rng = np.random.default_rng(0)
    _run(tmp_path, "runs/a.npz", rng.normal(0, 1, 8))
    _run(tmp_path, "runs/b.npz", rng.normal(0, 5, 8))
    claim = {
        "key": "spread",
        "statement": "a spreads less than b",
        "inputs": {"a": "runs/a.npz", "b": "runs/b.npz"},
        "bootstrap": "std(a.total_reward) / std(b.total_reward)",
        "compare": "<",
        "threshold": 1,
    }
    same = {**claim, "key": "same", "inputs": {"a": "runs/a.npz", "b": "runs/a.npz"}}
    spread, itself = evaluate_register(_register(tmp_path, [claim, same]), tmp_path)
    assert spread.low < spread.measured < spread.high < 1 and spread.status == "PASS"
    # exactly at the threshold: neither direction is established, and without a margin no tie can be declared
    assert itself.low == itself.high == 1.0 and itself.status == "INCONCLUSIVE"


def test_unpaired_run_files_are_refused(fixture_results):
    _run(fixture_results, "runs/other_env.npz", [1.0, 2.0, 3.0], environment="elsewhere")
    with pytest.raises(ClaimError, match=r"not paired runs \(they differ in \['environment'\]\)"):
        evaluate_register(_register(fixture_results, [_paired("k", "other_env", "bad")]), fixture_results)


def test_a_claim_needs_exactly_one_kind_of_uncertainty(fixture_results):
    point = {
        "key": "p",
        "statement": "s",
        "inputs": {"g": "runs/good.npz"},
        "measured": "mean(g.total_regret)",
        "compare": "<",
        "threshold": 5,
    }
    with pytest.raises(ClaimError, match=r"claim 'p': give exactly one of"):
        evaluate_register(_register(fixture_results, [point]), fixture_results)


def test_an_undefined_measurement_fails_the_claim(fixture_results):
    write_json(fixture_results / "checks" / "exponent.json", {"exponent": None, "low": 0.1, "high": 0.2})
    claim = {
        "key": "exponent_small",
        "statement": "exponent at most 0.6",
        "inputs": {"c": "checks/exponent.json"},
        "measured": "c.exponent",
        "interval": ["c.low", "c.high"],
        "compare": "<=",
        "threshold": 0.6,
    }
    (result,) = evaluate_register(_register(fixture_results, [claim]), fixture_results)
    assert result.status == "FAIL" and math.isnan(result.measured)


def test_claims_on_inputs_the_config_does_not_produce_are_not_run(fixture_results):
    register = _register(
        fixture_results, [_paired("good_vs_missing", "good", "missing"), _paired("good_vs_bad", "good", "bad")]
    )
    results = evaluate_register(register, fixture_results, frozenset({"runs/missing.npz"}))
    assert [r.status for r in results] == ["NOT RUN", "PASS"]
    assert "| `good_vs_missing` | good below missing | -- | < |  | NOT RUN | NOT RUN |" in claims_markdown(results)
    tex = claims_tex(results)
    assert r"\paragraph{NOT RUN in this configuration.}" in tex
    assert r"\csname claimstatus@good_vs_missing\endcsname{NOT RUN}" in tex
    with pytest.raises(ClaimError, match="missing.npz"):
        evaluate_register(register, fixture_results)


def test_missing_input_file_is_an_error_naming_it(fixture_results):
    with pytest.raises(ClaimError, match=r"claim 'k'.*runs/absent\.npz"):
        evaluate_register(_register(fixture_results, [_paired("k", "absent", "good")]), fixture_results)


@pytest.mark.parametrize("expression", ["__import__('os')", "g.__class__", "lambda: 1", "[x for x in g]", "open('f')"])
def test_evaluator_rejects_anything_outside_the_whitelist(expression):
    with pytest.raises((ValueError, NameError, KeyError, TypeError)):
        evaluate_expression(expression, {"g": {"a": 1}})


def test_duplicate_keys_are_rejected(tmp_path):
    claim = {"key": "k", "statement": "s", "measured": 1, "exact": "constant", "compare": "<", "threshold": 2}
    with pytest.raises(ClaimError, match="duplicate"):
        evaluate_register(_register(tmp_path, [claim, claim]), tmp_path)


FAMILY = {
    "for_each": {"policy": ["good", "bad"], "split": ["a", "b"]},
    "key": "{policy}_below_{split}",
    "statement": "{policy} below {split}",
    "inputs": {"x": "runs/{split}/{policy}.npz", "c": "checks/bound.json"},
    "per_run": "x.total_regret",
    "compare": "<",
    "threshold": 5,
}


def test_family_expands_to_one_claim_per_combination(tmp_path):
    claims = load_register(
        _register(
            tmp_path,
            [FAMILY, {"key": "plain", "statement": "s", "measured": 1, "exact": "c", "compare": "<", "threshold": 2}],
        )
    )
    assert [c["key"] for c in claims] == ["good_below_a", "good_below_b", "bad_below_a", "bad_below_b", "plain"]
    assert claims[1]["inputs"] == {"x": "runs/b/good.npz", "c": "checks/bound.json"}
    assert claims[2]["statement"] == "bad below a" and "for_each" not in claims[2]


def test_family_expands_over_the_running_and_reference_configs(tmp_path):
    """A config reference unites the running config with the register's reference configs: a dataset only the reference
    config runs is still a member, NOT RUN in the smaller build."""
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "big.yaml").write_text(
        yaml.safe_dump(
            {
                "experiments": {
                    "cls": {"environments": ["mushroom", "adult"], "policies": {"hare": {}, "linucb": {}, "random": {}}}
                }
            }
        )
    )
    family = {
        "for_each": {
            "environment": {"config": "experiments.cls.environments"},
            "baseline": {"config": "experiments.cls.policies", "exclude": ["hare"]},
        },
        "key": "hare_vs_{baseline}_{environment}",
        "statement": "s",
        "inputs": {
            "a": "results/runs/cls/{environment}/hare.npz",
            "b": "results/runs/cls/{environment}/{baseline}.npz",
        },
        "per_run": "a.total_regret - b.total_regret",
        "compare": "<",
        "threshold": 0,
    }
    register = tmp_path / "paper" / "claims.yaml"
    register.parent.mkdir()
    register.write_text(yaml.safe_dump({"reference_configs": ["config/big.yaml"], "claims": [family]}, sort_keys=False))
    running = {
        "experiments": {"cls": {"environments": ["shuttle", "mushroom"], "policies": {"hare": {}, "lnucb_ta": {}}}}
    }
    keys = [c["key"] for c in load_register(register, [running])]
    assert keys == [
        f"hare_vs_{b}_{e}" for e in ("shuttle", "mushroom", "adult") for b in ("lnucb_ta", "linucb", "random")
    ]


def test_bad_config_reference_is_an_error_naming_the_claim(tmp_path):
    family = {**FAMILY, "for_each": {"policy": {"config": "experiments.none.policies"}, "split": ["a"]}}
    with pytest.raises(
        ClaimError,
        match=r"claim '\{policy\}_below_\{split\}', for_each.policy: \['experiments.none.policies'\] name nothing",
    ):
        load_register(_register(tmp_path, [family]), [{"experiments": {}}])


def test_family_members_are_evaluated(fixture_results):
    family = {
        **FAMILY,
        "for_each": {"policy": ["good", "bad"], "split": ["runs"]},
        "inputs": {"x": "{split}/{policy}.npz"},
    }
    results = evaluate_register(_register(fixture_results, [family]), fixture_results)
    assert [(r.key, r.status) for r in results] == [("good_below_runs", "PASS"), ("bad_below_runs", "FAIL")]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"statement": "{policy} below {seed}"},
            r"claim '\{policy\}_below_\{split\}': unknown placeholder\(s\) \['seed'\]",
        ),
        ({"inputs": {"x": "runs/{env}.npz"}}, r"unknown placeholder\(s\) \['env'\]"),
        (
            {"key": "{policy}_below"},
            r"claim '\{policy\}_below': for_each variable\(s\) \['split'\] do not appear in the key",
        ),
        ({"for_each": {"policy": []}}, r"for_each.policy must be a non-empty list"),
    ],
)
def test_bad_family_is_an_error_naming_the_claim(tmp_path, change, message):
    with pytest.raises(ClaimError, match=message):
        load_register(_register(tmp_path, [{**FAMILY, **change}]))


def test_family_member_colliding_with_a_claim_is_a_duplicate(tmp_path):
    plain = {"key": "good_below_a", "statement": "s", "measured": 1, "exact": "c", "compare": "<", "threshold": 2}
    with pytest.raises(ClaimError, match=r"duplicate claim keys \['good_below_a'\]"):
        load_register(_register(tmp_path, [FAMILY, plain]))


def test_family_counts_per_status_are_macros(fixture_results):
    """Counted on the adjusted statuses: good (mean 2, sd 1, 3 runs) is below 6 and bad (mean 11) above it, each
    at p < 0.0125 (the Benjamini--Hochberg bar of the first of two)."""
    family = {
        **FAMILY,
        "family": "below",
        "threshold": 6,
        "for_each": {"policy": ["good", "bad"], "split": ["runs"]},
        "inputs": {"x": "{split}/{policy}.npz"},
    }
    tex = claims_tex(evaluate_register(_register(fixture_results, [family]), fixture_results))
    assert (
        r"\csname claimfamily@below@PASS\endcsname{1}" in tex and r"\csname claimfamily@below@FAIL\endcsname{1}" in tex
    )
    assert r"\csname claimfamily@below@total\endcsname{2}" in tex


# --- the paper's register ---------------------------------------------------------------------------------------


def _paper_register(repository):
    from hare.theory.claims.register import load_configs

    configs = load_configs([repository / "config" / "default.yaml"])
    return repository / "paper" / "claims.yaml", configs


MARGINS = "results/checks/margins/"
RUNS = "results/runs/"


def test_no_comparison_in_the_register_passes_when_every_policy_plays_alike(repository, tmp_path):
    """Plant every run file the register reads with the same per-run regrets (every policy plays like Random, on the
    same draws): no claim on run files may pass. A comparison that passes here could not fail."""
    register, configs = _paper_register(repository)
    claims = load_register(register, configs)
    regrets = np.random.default_rng(0).uniform(200, 260, size=5)
    run_claims = [c for c in claims if all(str(p).startswith((RUNS, MARGINS)) for p in c["inputs"].values())]
    assert any(str(p).startswith(MARGINS) for c in run_claims for p in c["inputs"].values())
    # margins from planted tuning runs: every policy alike on them, each a comparator with its margin
    _plant_margins(tmp_path, run_claims, lambda label: regrets)
    for path in {p for c in run_claims for p in c["inputs"].values() if p.startswith(RUNS)}:
        experiment, environment = path.split("/")[2:4]
        npz = (tmp_path / path).with_suffix(".npz")
        write_npz(npz, total_regret=regrets, total_reward=500 - regrets, total_mean_reward=(500 - regrets) / 500)
        write_json(npz.with_suffix(".json"), {**_sidecar(experiment, environment, n_runs=5), "wall_time_s": 1.0})
    (tmp_path / "claims.yaml").write_text(yaml.safe_dump({"claims": run_claims}))
    results = evaluate_register(tmp_path / "claims.yaml", tmp_path)
    assert len(results) > 100
    assert [r.key for r in results if r.status == "PASS"] == []
    assert [r.key for r in results if r.adjusted_status == "PASS"] == []


def _plant_margins(root, claims, tuning_totals):
    """The margins file of every experiment and dataset the claims read, as hare.experiments.margins writes it
    (classification's floor of one mistake; HARE-Sim's from Random's tuning totals; the replay environment's on the
    replay reward, ``(500 - regret) / 500`` as the run files below plant it, without a floor), from
    ``tuning_totals(label)`` of the entry's label (a planned sweep's grid points keyed by their whole label)."""
    from hare.experiments.margins import comparison_margin

    files: dict[str, dict] = {}
    for path in {p for c in claims for p in c["inputs"].values() if p.startswith(RUNS)}:
        experiment, environment, label = path.split("/")[2:5]
        label = label.removesuffix(".npz")
        totals = np.asarray(tuning_totals(label.split("@")[0]), dtype=float)
        if experiment == "replay":
            totals = (500 - totals) / 500
        entry = files.setdefault(f"{MARGINS}{experiment}/{environment}.json", {"policies": {}})
        entry["policies"][label] = {"totals": list(totals), "mean": float(totals.mean())}
    for path, entry in files.items():
        synthetic = "synthetic" in path
        random = entry["policies"].get("random")
        floor = (random["mean"] / 1000 * 60 / 59 if random else None) if synthetic else 1.0
        floor = None if "/replay/" in path else floor
        for policy in entry["policies"].values():
            policy["margin"] = comparison_margin(policy["mean"], floor)
        write_json(root / path, entry)


def test_every_comparison_takes_its_margin_from_its_comparator(repository):
    """A comparison ``a - b`` reads delta, the comparator's regret and the second power series from ``b``, the policy
    it subtracts: a margin taken from the other policy (or from Random) would no longer say how close to the
    comparator a tie is."""
    register, configs = _paper_register(repository)
    compared = [c for c in load_register(register, configs) if str(c.get("margin", "")).startswith("m.")]
    assert len(compared) > 100
    for claim in compared:
        # m.policies.b.margin, or a planned sweep's grid point by item access: m.policies["b@alpha=0.1"].margin
        match = re.fullmatch(r'(m\.policies(?:\.(\w+)|\["([^"]+)"\]))\.margin', claim["margin"])
        assert match, claim["key"]
        accessor, comparator = match.group(1), match.group(2) or match.group(3)
        assert claim["comparator_regret"] == f"{accessor}.mean", claim["key"]
        if "power" in claim:
            assert claim["power"][1] == f"{accessor}.totals", claim["key"]
        expression = claim.get("per_run") or claim.get("bootstrap")
        subtracted = re.search(r" - (?:cvar\()?(\w+)\.total_(?:regret|reward|mean_reward)\b", expression).group(1)
        assert claim["inputs"][subtracted].endswith(f"/{comparator}.npz"), claim["key"]


def test_random_is_never_equivalent_to_a_policy_that_does_not_lock_in(repository, tmp_path):
    """Every policy of every batch plays just below the lock-in level, 90% of Random's regret (one mistake less on
    average), with a spread that makes every interval hold 0; tuning and reported runs alike. Then no comparison
    with Random may be a tie: the difference, a tenth of Random's regret and one mistake more, exceeds delta. A margin
    of a quarter of the comparator's regret would call all of them EQUIVALENT."""
    register, configs = _paper_register(repository)
    claims = load_register(register, configs)
    random_regret = np.full(5, 230.0)
    noise = 14.0 * np.array([-2.0, -1.0, 0.0, 1.0, 2.0])  # intervals about [-51.5, 3.5]: they hold 0, barely

    def totals(label):
        return random_regret if label == "random" else 0.9 * random_regret - 1 + noise

    # regret claims only: the lock-in level is a share of Random's regret, and the replay environment has none
    with_random = [
        c
        for c in claims
        if "per_run" in c
        and ".total_regret" in c["per_run"]
        and "margin" in c
        and any(str(p).endswith("/random.npz") for p in c["inputs"].values())
        and all(str(p).startswith((RUNS, MARGINS)) for p in c["inputs"].values())
    ]
    assert {c["key"].split("_")[0] for c in with_random} >= {"hare", "linucb"}
    _plant_margins(tmp_path, with_random, totals)
    for path in {p for c in with_random for p in c["inputs"].values() if p.startswith(RUNS)}:
        experiment, environment, label = path.split("/")[2:5]
        npz = (tmp_path / path).with_suffix(".npz")
        regrets = totals(label.split("@")[0].removesuffix(".npz"))
        write_npz(npz, total_regret=regrets, total_reward=500 - regrets, total_mean_reward=(500 - regrets) / 500)
        write_json(npz.with_suffix(".json"), {**_sidecar(experiment, environment, n_runs=5), "wall_time_s": 1.0})
    (tmp_path / "claims.yaml").write_text(yaml.safe_dump({"claims": with_random}))
    results = evaluate_register(tmp_path / "claims.yaml", tmp_path)
    # the intervals hold 0: undecided, and at 5 runs against the 17 the tuning runs plan, undecidable at this scale
    assert len(results) > 10 and any(r.status in ("INCONCLUSIVE", UNDECIDABLE) for r in results)
    assert [r.key for r in results if "EQUIVALENT" in (r.status, r.adjusted_status)] == []
    assert all(r.margin < abs(r.measured) for r in results)


def test_every_register_claim_names_its_source_section(repository):
    register, configs = _paper_register(repository)
    claims = load_register(register, configs)
    assert all(c.get("section") for c in claims), [c["key"] for c in claims if not c.get("section")]


def test_the_smoke_config_lists_what_it_skips_as_not_run(repository):
    from hare.theory.claims.register import load_configs

    register = repository / "paper" / "claims.yaml"
    smoke = load_configs([repository / "config" / "smoke.yaml"])
    claims = load_register(register, smoke)
    skipped = not_produced(register, smoke)
    assert "results/runs/classification/adult/hare.npz" in skipped
    assert any(c["key"] == "hare_vs_lnucb_ta_adult_classification" for c in claims)
    assert "results/runs/classification/mushroom/hare.npz" not in skipped


@pytest.fixture
def many_claims(fixture_results):
    family = {
        **FAMILY,
        "for_each": {"policy": ["good"], "split": [f"s{i}" for i in range(80)]},
        "inputs": {"x": "runs/good.npz"},
    }
    return claims_tex(evaluate_register(_register(fixture_results, [family]), fixture_results))


def test_claims_table_lists_every_claim_by_its_id(many_claims):
    assert r"\begin{longtable}" in many_claims and r"\endhead" in many_claims
    assert all(rf"\hypertarget{{claim.C{i}}}{{C{i}}}" in many_claims for i in range(1, 81))


PREAMBLE = (
    "\\documentclass{article}\n\\usepackage[margin=1in]{geometry}\n\\usepackage[T1]{fontenc}\n\\usepackage{lmodern}\n"
    "\\usepackage{amsmath,array,booktabs,longtable}\n\\usepackage[hidelinks]{hyperref}\n"
)


def _paper_macros(repository):
    """The claim macros of paper/main.tex's preamble (from its \\claim declaration to \\makeatother)."""
    main = (repository / "paper" / "main.tex").read_text()
    start = main.index("\\DeclareUrlCommand\\claim")
    return main[start : main.index("\\makeatother", start) + len("\\makeatother")]


def _pdflatex(tmp_path, body):
    (tmp_path / "main.tex").write_text(body)
    return subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "main.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex not installed")
def test_long_claims_table_compiles_across_pages(many_claims, tmp_path):
    """In the paper's page geometry, without overfull lines."""
    (tmp_path / "claims.tex").write_text(many_claims)
    completed = _pdflatex(
        tmp_path, PREAMBLE + "\\input{claims.tex}\n\\begin{document}\n\\claimsTable{}\n\\end{document}\n"
    )
    assert completed.returncode == 0, completed.stdout[-2000:]
    pages = re.search(r"Output written on main\.pdf \((\d+) pages?", completed.stdout)
    assert pages and int(pages.group(1)) >= 2
    assert "Overfull \\hbox" not in (tmp_path / "main.log").read_text()


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex not installed")
def test_prose_asserting_a_claim_that_does_not_pass_fails_the_build(repository, fixture_results, tmp_path):
    """\\claimverdict picks the verb from the status; \\asserts on a claim that is not PASS stops the compilation."""
    results = evaluate_register(
        _register(fixture_results, [_paired("good_vs_bad", "good", "bad"), _paired("good_vs_close", "good", "close")]),
        fixture_results,
    )
    (tmp_path / "claims.tex").write_text(claims_tex(results))
    head = PREAMBLE + "\\input{claims.tex}\n" + _paper_macros(repository) + "\n\\begin{document}\n"
    fine = _pdflatex(
        tmp_path,
        head + "Good \\claimverdict{good_vs_bad}{beats}{does not beat} bad (\\claimref{good_vs_bad}); "
        "good \\claimverdict{good_vs_close}{beats}{may not beat} close "
        "(\\claimref{good_vs_close}).\\asserts{good_vs_bad}\n\\end{document}\n",
    )
    assert fine.returncode == 0, fine.stdout[-2000:]
    text = subprocess.run(
        ["pdftotext", "main.pdf", "-"], cwd=tmp_path, capture_output=True, text=True, check=False
    ).stdout
    assert "beats bad" in " ".join(text.split()) and "may not beat close" in " ".join(text.split())
    broken = _pdflatex(tmp_path, head + "Good beats close.\\asserts{good_vs_close}\n\\end{document}\n")
    assert (
        broken.returncode != 0
        and "the prose asserts claim good_vs_close, whose status is INCONCLUSIVE" in broken.stdout
    )
    unknown = _pdflatex(tmp_path, head + "\\claimref{no_such_claim}\n\\end{document}\n")
    assert unknown.returncode != 0 and "unknown claim key no_such_claim" in unknown.stdout


def test_a_band_claim_reads_a_published_table_and_needs_the_published_scale(tmp_path):
    """compare: within [low, high] from a CSV of published numbers; a run at another horizon is NOT RUN
    (requires_equal)."""
    (tmp_path / "pub.csv").write_text(
        "policy,environment,mean,std,horizon\nlinucb,adult,100,5,3\nlinucb,magic,50,1,3\n"
    )
    _run(tmp_path, "runs/adult.npz", [95.0, 101.0, 110.0])
    _run(tmp_path, "runs/magic.npz", [60.0, 61.0, 59.0])
    for name in ("adult", "magic"):
        car = {**_sidecar(environment=name), "horizon": 3 if name == "adult" else 7}
        write_json(tmp_path / f"runs/{name}.json", car)
    family = {
        "for_each": {"env": ["adult", "magic"]},
        "key": "reproduced_{env}",
        "statement": "s",
        "inputs": {"ours": "runs/{env}.npz", "meta": "runs/{env}.json", "pub": "pub.csv"},
        "per_run": "ours.total_regret",
        "compare": "within",
        "threshold": [
            "lookup(pub, 'policy', 'linucb', 'environment', '{env}', 'mean') - 2 * lookup(pub, 'policy', 'linucb', "
            "'environment', '{env}', 'std')",
            "lookup(pub, 'policy', 'linucb', 'environment', '{env}', 'mean') + 2 * lookup(pub, 'policy', 'linucb', "
            "'environment', '{env}', 'std')",
        ],
        "requires_equal": [["meta.horizon", "lookup(pub, 'policy', 'linucb', 'environment', '{env}', 'horizon')"]],
    }
    adult, magic = evaluate_register(_register(tmp_path, [family]), tmp_path)
    assert adult.threshold == (90.0, 110.0) and adult.status == "INCONCLUSIVE"
    assert magic.status == "NOT RUN" and "meta.horizon" in magic.method
    assert decide(95, 105, "within", (90.0, 110.0)) == "PASS" and decide(120, 130, "within", (90.0, 110.0)) == "FAIL"


def test_one_claim_alone_keeps_its_register_id_and_headline_mark(fixture_results):
    """`make claim KEY=` evaluates one claim: it carries the id and headline status it has in the whole register
    (headline claims numbered first), and the summary says so instead of "0/0 PASS"."""
    claims = [
        _paired("good_vs_bad", "good", "bad"),
        _paired("bad_vs_good", "bad", "good"),
        _paired("good_vs_close", "good", "close"),
    ]
    register = _register(fixture_results, claims, headline=["good_vs_close"])
    whole = {r.key: (r.claim_id, r.headline) for r in evaluate_register(register, fixture_results)}
    assert whole == {"good_vs_close": ("C1", True), "good_vs_bad": ("C2", False), "bad_vs_good": ("C3", False)}
    for key, (claim_id, headline) in whole.items():
        (alone,) = evaluate_register(register, fixture_results, keys=[key])
        assert (alone.claim_id, alone.headline) == (claim_id, headline)
    (headline_alone,) = evaluate_register(register, fixture_results, keys=["good_vs_close"])
    markdown = claims_markdown([headline_alone])
    assert "Headline claims: 0/1 PASS, 1 INCONCLUSIVE." in markdown and "| C1 | `good_vs_close`" in markdown
    (other_alone,) = evaluate_register(register, fixture_results, keys=["good_vs_bad"])
    assert "No headline claim among these." in claims_markdown([other_alone])


def test_claims_markdown_shows_delta_in_regret_and_as_a_share_of_the_comparator():
    from dataclasses import replace

    from hare.experiments.margins import MARGIN_RULE
    from hare.theory.claims.documents import margin_text
    from hare.theory.claims.result import ClaimResult

    base = ClaimResult("a_vs_b", "s", "a below b", 5.1, -1.8, 12.0, "<", 0.0, "INCONCLUSIVE", "t", ())
    compared = replace(base, margin=8.83, comparator_regret=88.3)
    assert compared.margin_share == pytest.approx(0.1)
    assert margin_text(compared) == "8.83 (10% of 88.3)"
    assert margin_text(replace(base, margin=0.05)) == "0.05" and margin_text(base) == ""
    text = claims_markdown([compared])
    assert "| 8.83 (10% of 88.3) |" in text and f"Margins: δ is {MARGIN_RULE}." in text
