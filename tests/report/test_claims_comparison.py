"""Two registers side by side (:mod:`hare.report.claims_comparison`, ``hare compare-claims``): each outcome on
planted registers, the page, and bad folders refused in one line."""

from __future__ import annotations

import json

import pytest

from hare.cli import main
from hare.report.claims_comparison import agreement_page, compare_registers, counts


def entry(key, status, headline=True, measured=1.0, low=0.5, high=1.5, n_runs=20, claim_id=None):
    return {
        "key": key,
        "id": claim_id or key.upper(),
        "headline": headline,
        "status": status,
        "adjusted_status": status,
        "measured": None if status == "NOT RUN" else measured,
        "low": None if status == "NOT RUN" else low,
        "high": None if status == "NOT RUN" else high,
        "n_runs": n_runs,
        "margin": 2.0,
    }


OLD = {
    "claims": [
        entry("same", "PASS"),
        entry("flips", "FAIL", measured=11.1, low=7.74, high=14.4, n_runs=30),
        entry("open", "INCONCLUSIVE"),
        entry("missing", "NOT RUN"),
        entry("tie", "EQUIVALENT"),
        entry("minor", "FAIL", headline=False),
    ]
}
NEW = {
    "claims": [
        entry("same", "PASS"),
        entry("flips", "PASS", measured=-69.8, low=-81.4, high=-58.1),
        entry("open", "PASS"),
        entry("missing", "PASS"),
        entry("tie", "FAIL"),
        entry("minor", "PASS", headline=False),
    ]
}


def test_each_pair_lands_in_its_outcome_and_headline_filter_drops_the_rest():
    pairs = compare_registers(OLD, NEW)
    assert {pair.key: pair.outcome for pair in pairs} == {
        "same": "agree",
        "flips": "differ",
        "open": "undecided",
        "missing": "not run",
        "tie": "differ",
    }
    assert counts(pairs) == {"agree": 1, "differ": 2, "undecided": 1, "not run": 1}
    assert {pair.key for pair in compare_registers(OLD, NEW, headline_only=False)} >= {"minor"}


def test_a_claim_absent_from_one_register_counts_as_not_run():
    pairs = compare_registers({"claims": [entry("only_old", "PASS")]}, {"claims": [entry("only_new", "FAIL")]})
    assert [(pair.key, pair.outcome) for pair in pairs] == [("only_old", "not run"), ("only_new", "not run")]


def test_page_lists_each_differing_claim_with_both_intervals():
    page = agreement_page(compare_registers(OLD, NEW), "default build", "paper-core", ["Command: `x`"])
    differing = page.split("## Claims whose verdict differs (2)")[1].split("## ")[0]
    assert "`flips` | FAIL 11.1 [7.74, 14.4], 30 runs, δ = 2 | PASS -69.8 [-81.4, -58.1], 20 runs, δ = 2 |" in differing
    assert "`tie`" in differing and "`same`" not in differing
    assert "5 claims: 3 decided in both default build and paper-core, 1 agree, 2 differ" in page
    assert "- Command: `x`" in page


def test_command_writes_the_page_and_refuses_a_folder_without_register(tmp_path, capsys):
    for name, register in (("old", OLD), ("new", NEW)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "claims.json").write_text(json.dumps(register))
    out = tmp_path / "page.md"
    assert main(["compare-claims", str(tmp_path / "old"), str(tmp_path / "new"), "--out", str(out)]) == 0
    assert "2 differ" in capsys.readouterr().out and "## Claims whose verdict differs (2)" in out.read_text()
    readings = tmp_path / "scale.json"
    argv = ["compare-claims", str(tmp_path / "old"), str(tmp_path / "new"), "--json", str(readings)]
    assert main([*argv, "--description", "paper-core at T = 10,000"]) == 0
    written = json.loads(readings.read_text())
    assert written["description"] == "paper-core at T = 10,000" and written["claims"]["flips"]["high"] == -58.1
    (tmp_path / "nowhere").mkdir()
    assert main(["compare-claims", str(tmp_path / "old"), str(tmp_path / "nowhere")]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "claims.json: no claims register" in line


@pytest.mark.parametrize("bad", ["[]", '{"claims": 3}'])
def test_a_file_that_is_not_a_register_is_refused(tmp_path, capsys, bad):
    (tmp_path / "claims.json").write_text(bad)
    assert main(["compare-claims", str(tmp_path), str(tmp_path)]) == 2
    assert "not a claims register" in capsys.readouterr().err


def test_scale_reference_keeps_the_second_builds_readings_and_differences_find_the_changed_verdicts():
    from hare.report.claims_comparison import scale_differences, scale_reference

    reference = scale_reference(compare_registers(OLD, NEW), "paper-core", "config/paper-core.yaml at T = 10,000")
    assert reference["label"] == "paper-core" and reference["description"].startswith("config/paper-core")
    assert reference["claims"]["flips"]["low"] == -81.4 and reference["claims"]["flips"]["adjusted_status"] == "PASS"
    changed = scale_differences(OLD["claims"], reference)
    # the undecided "open" claim differs too (INCONCLUSIVE here, PASS there); "missing" did not run here
    assert [claim["key"] for claim, _ in changed] == ["flips", "open", "tie"]
    assert scale_differences(NEW["claims"], reference) == []


def test_headline_table_marks_a_verdict_that_differs_at_scale_and_sets_both_readings_under_it():
    from hare.report.claims_comparison import scale_reference
    from hare.report.register_headline import headline_tex

    claims = [
        {**entry("flips", "FAIL", measured=11.1, low=7.74, high=14.4, n_runs=30), "statement": "s", "label": "l"},
        {**entry("same", "PASS"), "statement": "t", "label": "m"},
    ]
    reference = scale_reference(compare_registers(OLD, NEW), "paper-core", "paper-core (T = 10,000)")
    tex = headline_tex(claims, "95", reference)
    assert tex.count(r"$^{\dagger}$") == 2  # the marked verdict and the paragraph's mark
    paragraph = tex.split(r"\emph{Verdict at the paper's scale.}")[1]
    assert "paper-core (T = 10,000) reads 1 of these claims otherwise" in paragraph
    assert "FLIPS:" in paragraph and "here" in paragraph and "there (20 runs)" in paragraph
    assert r"\emph{Verdict at the paper's scale.}" not in headline_tex(claims, "95", None)
