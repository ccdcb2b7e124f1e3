import numpy as np
import pytest
import yaml

from hare.io import write_json, write_npz
from hare.theory.claims import ClaimError, claims_markdown, claims_tex, evaluate_expression, evaluate_register


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
        {"key": "good_beats_bad", "statement": "good < bad", "inputs": {"g": "runs/good.npz", "b": "runs/bad.npz"}, "measured": "mean(g.total_regret)", "compare": "<", "threshold": "mean(b.total_regret)"},
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

    register = yaml.safe_load((repository / "paper" / "claims.yaml").read_text())["claims"]
    keys = {c["key"] for c in register}
    macros = {macro_name("claim", kind, k) for k in keys for kind in ("status", "measured", "threshold")}
    lines = [line for p in (repository / "paper").rglob("*.tex") if "generated" not in p.parts for line in p.read_text().splitlines()]
    tex = "\n".join(line for line in lines if not line.lstrip().startswith("%") and "newcommand" not in line and "DeclareUrlCommand" not in line)
    used_macros = set(re.findall(r"\\(claim(?:Status|Measured|Threshold)[A-Za-z]+)", tex))
    used_keys = {k.replace(r"\_", "_") for k in re.findall(r"\\claim\{([^}]*)\}", tex)}
    assert used_macros <= macros, used_macros - macros
    assert used_keys <= keys, used_keys - keys
    assert used_keys, "the prose refers to no claim"
