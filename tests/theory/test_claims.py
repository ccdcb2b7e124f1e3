import re
import shutil
import subprocess

import numpy as np
import pytest
import yaml

from hare.io import write_json, write_npz
from hare.theory.claims import (
    ClaimError,
    claims_markdown,
    claims_tex,
    evaluate_expression,
    evaluate_register,
    load_register,
)


@pytest.fixture
def fixture_results(tmp_path):
    write_npz(tmp_path / "runs" / "good.npz", total_regret=np.array([1.0, 2.0, 3.0]))
    write_npz(tmp_path / "runs" / "bad.npz", total_regret=np.array([10.0, 12.0]))
    write_json(tmp_path / "checks" / "bound.json", {"measured_max": [1.0, 5.0], "bound": [2.0, 4.0]})
    return tmp_path


def _register(tmp_path, claims):
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump({"claims": claims}))
    return path


def test_claims_give_the_expected_pass_and_fail_rows(fixture_results):
    register = _register(fixture_results, [
        {"key": "good_beats_bad", "statement": "good < bad", "inputs": {"g": "runs/good.npz", "b": "runs/bad.npz"},
         "measured": "mean(g.total_regret)", "compare": "<", "threshold": "mean(b.total_regret)"},
        {"key": "bound_holds", "statement": "bound holds at T", "inputs": {"c": "checks/bound.json"}, "measured": "c.measured_max[-1]", "compare": "<=", "threshold": "c.bound[-1]"},
        {"key": "ratio", "statement": "ratio", "inputs": {"g": "runs/good.npz"}, "measured": "max(g.total_regret) / 3", "compare": "==", "threshold": 1},
    ])
    results = evaluate_register(register, fixture_results)
    assert [(r.key, r.passed) for r in results] == [("good_beats_bad", True), ("bound_holds", False), ("ratio", True)]
    assert results[0].measured == 2.0 and results[0].threshold == 11.0
    assert "**FAIL**" in claims_markdown(results) and "2/3 PASS" in claims_markdown(results)
    tex = claims_tex(results)
    assert r"\newcommand{\claimStatusBoundHolds}{\textbf{FAIL}}" in tex
    assert r"\newcommand{\claimsPassed}{2}" in tex


def test_an_undefined_measurement_fails_the_claim(fixture_results):
    """A check that could not define its quantity (null in its JSON, e.g. the exponent of a non-positive curve) fails."""
    write_json(fixture_results / "checks" / "exponent.json", {"exponent": None})
    register = _register(fixture_results, [
        {"key": "exponent_small", "statement": "exponent at most 0.6", "inputs": {"c": "checks/exponent.json"}, "measured": "c.exponent", "compare": "<=", "threshold": 0.6},
    ])
    (result,) = evaluate_register(register, fixture_results)
    assert not result.passed and result.measured != result.measured
    assert "**FAIL**" in claims_markdown(result and [result])


def test_claims_on_inputs_the_config_does_not_produce_are_not_run(fixture_results):
    register = _register(fixture_results, [
        {"key": "good_beats_missing", "statement": "good < missing", "inputs": {"g": "runs/good.npz", "m": "runs/missing.npz"},
         "measured": "mean(g.total_regret)", "compare": "<", "threshold": "mean(m.total_regret)"},
        {"key": "good_beats_bad", "statement": "good < bad", "inputs": {"g": "runs/good.npz", "b": "runs/bad.npz"},
         "measured": "mean(g.total_regret)", "compare": "<", "threshold": "mean(b.total_regret)"},
    ])
    results = evaluate_register(register, fixture_results, frozenset({"runs/missing.npz"}))
    assert [r.status for r in results] == ["NOT RUN", "PASS"]
    markdown = claims_markdown(results)
    assert "1/2 PASS" in markdown and "| `good_beats_missing` | good < missing | -- | < | NOT RUN |" in markdown
    assert r"\newcommand{\claimStatusGoodBeatsMissing}{NOT RUN}" in claims_tex(results)
    with pytest.raises(ClaimError, match="missing.npz"):
        evaluate_register(register, fixture_results)


def test_missing_input_file_is_an_error_naming_it(fixture_results):
    register = _register(fixture_results, [{"key": "k", "statement": "s", "inputs": {"x": "runs/absent.npz"}, "measured": "mean(x.total_regret)", "compare": "<", "threshold": 1}])
    with pytest.raises(ClaimError, match=r"claim 'k'.*runs/absent\.npz"):
        evaluate_register(register, fixture_results)


@pytest.mark.parametrize("expression", ["__import__('os')", "g.__class__", "lambda: 1", "[x for x in g]", "open('f')"])
def test_evaluator_rejects_anything_outside_the_whitelist(expression):
    with pytest.raises((ValueError, NameError, KeyError, TypeError)):
        evaluate_expression(expression, {"g": {"a": 1}})


def test_duplicate_keys_are_rejected(tmp_path):
    claim = {"key": "k", "statement": "s", "measured": 1, "compare": "<", "threshold": 2}
    with pytest.raises(ClaimError, match="duplicate"):
        evaluate_register(_register(tmp_path, [claim, claim]), tmp_path)


def test_paper_claim_keys_exist_in_the_register(repository):
    """Every claim the prose names (\\claimStatus<Key>, \\claim{key}) is in the register."""
    import re

    from hare.report.latex import macro_name

    keys = {c["key"] for c in load_register(repository / "paper" / "claims.yaml")}
    macros = {macro_name("claim", kind, k) for k in keys for kind in ("status", "measured", "threshold")}
    lines = [line for p in (repository / "paper").rglob("*.tex") if "generated" not in p.parts for line in p.read_text().splitlines()]
    tex = "\n".join(line for line in lines if not line.lstrip().startswith("%") and "newcommand" not in line and "DeclareUrlCommand" not in line)
    used_macros = set(re.findall(r"\\(claim(?:Status|Measured|Threshold)[A-Za-z]+)", tex))
    used_keys = {k.replace(r"\_", "_") for k in re.findall(r"\\claim\{([^}]*)\}", tex)}
    assert used_macros <= macros, used_macros - macros
    assert used_keys <= keys, used_keys - keys
    assert used_keys, "the prose refers to no claim"


FAMILY = {
    "for_each": {"policy": ["good", "bad"], "split": ["a", "b"]},
    "key": "{policy}_below_{split}",
    "statement": "{policy} below {split}",
    "inputs": {"x": "runs/{split}/{policy}.npz", "c": "checks/bound.json"},
    "measured": "mean(x.total_regret)",
    "compare": "<",
    "threshold": 5,
}


def test_family_expands_to_one_claim_per_combination(tmp_path):
    claims = load_register(_register(tmp_path, [FAMILY, {"key": "plain", "statement": "s", "measured": 1, "compare": "<", "threshold": 2}]))
    assert [c["key"] for c in claims] == ["good_below_a", "good_below_b", "bad_below_a", "bad_below_b", "plain"]
    assert claims[1]["inputs"] == {"x": "runs/b/good.npz", "c": "checks/bound.json"}
    assert claims[2]["statement"] == "bad below a" and "for_each" not in claims[2]


def test_family_members_are_evaluated(fixture_results):
    family = {**FAMILY, "for_each": {"policy": ["good", "bad"], "split": ["runs"]}, "inputs": {"x": "{split}/{policy}.npz"}}
    results = evaluate_register(_register(fixture_results, [family]), fixture_results)
    assert [(r.key, r.passed, r.sources) for r in results] == [("good_below_runs", True, ("runs/good.npz",)), ("bad_below_runs", False, ("runs/bad.npz",))]


@pytest.mark.parametrize(("change", "message"), [
    ({"statement": "{policy} below {seed}"}, r"claim '\{policy\}_below_\{split\}': unknown placeholder\(s\) \['seed'\]"),
    ({"inputs": {"x": "runs/{env}.npz"}}, r"unknown placeholder\(s\) \['env'\]"),
    ({"key": "{policy}_below"}, r"claim '\{policy\}_below': for_each variable\(s\) \['split'\] do not appear in the key"),
    ({"for_each": {"policy": []}}, r"for_each must map each placeholder to a non-empty list"),
])
def test_bad_family_is_an_error_naming_the_claim(tmp_path, change, message):
    with pytest.raises(ClaimError, match=message):
        load_register(_register(tmp_path, [{**FAMILY, **change}]))


def test_family_member_colliding_with_a_claim_is_a_duplicate(tmp_path):
    plain = {"key": "good_below_a", "statement": "s", "measured": 1, "compare": "<", "threshold": 2}
    with pytest.raises(ClaimError, match=r"duplicate claim keys \['good_below_a'\]"):
        load_register(_register(tmp_path, [FAMILY, plain]))


@pytest.fixture
def many_claims(fixture_results):
    family = {**FAMILY, "for_each": {"policy": ["good"], "split": [f"s{i}" for i in range(80)]}, "inputs": {"x": "runs/good.npz"}}
    return claims_tex(evaluate_register(_register(fixture_results, [family]), fixture_results))


def test_claims_table_lists_every_claim_with_breakable_keys(many_claims):
    assert r"\begin{longtable}" in many_claims and r"\endhead" in many_claims
    assert many_claims.count(r"\texttt{good\_\allowbreak{}below\_\allowbreak{}s") == 80


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex not installed")
def test_long_claims_table_compiles_across_pages(many_claims, tmp_path):
    """In the paper's page geometry, without overfull lines."""
    (tmp_path / "claims.tex").write_text(many_claims)
    (tmp_path / "main.tex").write_text(
        "\\documentclass{article}\n\\usepackage[margin=1in]{geometry}\n\\usepackage{amsmath,booktabs,longtable}\n\\input{claims.tex}\n"
        "\\begin{document}\n\\claimsTable{}\n\\end{document}\n"
    )
    completed = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "main.tex"],
                               cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert completed.returncode == 0, completed.stdout[-2000:]
    pages = re.search(r"Output written on main\.pdf \((\d+) pages?", completed.stdout)
    assert pages and int(pages.group(1)) >= 2
    assert "Overfull \\hbox" not in (tmp_path / "main.log").read_text()
