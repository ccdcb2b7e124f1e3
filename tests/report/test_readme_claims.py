"""The claims a build decided, read for the README's blocks (hare.report.readme_claims): from claims.json when the
build wrote it, else from the tables of claims.md, columns found by their header."""

import json

import pytest

from hare.report.readme_claims import ClaimLine, claims_from_json, claims_from_markdown, load_claims

MARKDOWN = """# Claims

| id | claim | threshold | measured | status |
|---|---|---|---|---|
| C1 | `fast` | > 2 | 3.1 [2.5, 3.7] | PASS |
| C2 | `small` | < 1 | 1.4 [1.1, 1.7] | FAIL |

## Again, reordered, with an adjusted column

| status | claim | adjusted |
|---|---|---|
| FAIL | `small` | FAIL |
| INCONCLUSIVE | `new` | INCONCLUSIVE |
"""


def test_markdown_columns_are_found_by_their_header_and_a_repeated_claim_counts_once(tmp_path):
    path = tmp_path / "claims.md"
    path.write_text(MARKDOWN)
    claims = claims_from_markdown(path)
    assert [line.key for line in claims.lines] == ["`fast`", "`small`", "`new`"]
    assert claims.lines[0] == ClaimLine("`fast`", "PASS", "3.1 [2.5, 3.7]", "> 2", claim_id="C1")
    assert claims.lines[2].verdict == "INCONCLUSIVE"


def test_a_markdown_file_without_a_claims_table_is_refused_by_name(tmp_path):
    path = tmp_path / "claims.md"
    path.write_text("| a | b |\n|---|---|\n| 1 | 2 |\n")
    with pytest.raises(ValueError, match=rf"{path}: no table with a claim and a status column"):
        claims_from_markdown(path)


def test_json_claims_render_their_interval_threshold_and_adjusted_verdict_and_win_over_the_markdown(tmp_path):
    payload = {
        "level": 0.9,
        "adjustment": "Holm",
        "claims": [
            {
                "id": "C1",
                "key": "fast",
                "status": "PASS",
                "adjusted_status": "FAIL",
                "measured": 3.14159,
                "low": 2.5,
                "high": 3.7,
                "compare": ">",
                "threshold": 2,
                "headline": True,
            },
            {"key": "exact", "status": "PASS", "measured": 1.0, "compare": "==", "threshold": [0.5, 1.5]},
            {"key": "same", "status": "EQUIVALENT", "measured": None, "compare": "~", "threshold": 0, "margin": 0.1},
        ],
    }
    (tmp_path / "claims.json").write_text(json.dumps(payload))
    (tmp_path / "claims.md").write_text(MARKDOWN)
    claims = load_claims(tmp_path / "claims.md")
    assert claims == claims_from_json(tmp_path / "claims.json")
    assert (claims.level, claims.adjustment) == (0.9, "Holm")
    assert claims.lines[0] == ClaimLine("`fast`", "PASS", "3.14 [2.5, 3.7]", "> 2", "FAIL", "C1", True)
    assert claims.lines[0].verdict == "FAIL"
    assert (claims.lines[1].value, claims.lines[1].needed) == ("1 (exact)", "== [0.5, 1.5]")
    assert (claims.lines[2].value, claims.lines[2].needed) == ("--", "~ 0 (margin 0.1)")
    (tmp_path / "claims.json").write_text(json.dumps({"claims": [{"status": "PASS"}]}))
    with pytest.raises(ValueError, match=r"claims\.json: a claim lacks 'key'"):
        load_claims(tmp_path / "claims.md")
