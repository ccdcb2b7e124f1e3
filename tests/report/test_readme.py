"""The results blocks of docs/results.md and the README: built from a table CSV and the claims report (its JSON when
the build wrote one, else its Markdown), replaced in place."""

import json

import pytest

from hare.report import readme as readme_module
from hare.report.readme import (
    BEGIN,
    END,
    SUMMARY_BEGIN,
    SUMMARY_END,
    claims_summary,
    fill_readme,
    headline_claims,
    regret_markdown,
    results_block,
    update_readme,
)

CSV = """experiment,environment,policy,policy_name,params,n_runs,horizon,mean,std,std_over_mean_pct,mean_reward
classification,adult,linucb,linucb,{},5,500,120.5,3.25,2.7,0.7
classification,adult,random,random,{},5,500,250,10,4,0.5
classification,mushroom,linucb,linucb,{},5,500,30,2,6.7,0.9
classification,mushroom,random,random,{},5,500,20,1,5,0.95
"""

CLAIMS = """# Claims: 1/4 PASS

1 PASS, 1 FAIL, 1 INCONCLUSIVE, 1 NOT RUN.

| claim | section | statement | measured [95% interval] | threshold | status | method | source |
|---|---|---|---|---|---|---|---|
| `a_beats_b` | Table x | a < b | -1 [-2, -0.5] | < 0 | PASS | t interval over 5 runs | `x.npz` |
| `c_beats_d` | Table x | c < d | 3 [2, 4] | < 0 | **FAIL** | t interval over 5 runs | `y.npz` |
| `e_beats_f` | Table x | e < f | -1 [-3, 1] | < 0 | **INCONCLUSIVE** | t interval over 5 runs | `z.npz` |
| `g_beats_h` | Table x | g < h | -- | < | NOT RUN | per_run | `w.npz` |
"""


@pytest.fixture
def results(tmp_path):
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "classification.csv").write_text(CSV)
    (tmp_path / "claims.md").write_text(CLAIMS)
    return tmp_path


def test_regret_markdown_bolds_the_best_mean_per_column(results):
    table = regret_markdown(results / "tables" / "classification.csv")
    assert "| policy | Adult | Mushroom |" in table
    assert "| LinUCB | **120.5 ± 3.2** | 30.0 ± 2.0 |" in table
    assert "| Random | 250.0 ± 10.0 | **20.0 ± 1.0** |" in table
    assert "5 runs of T = 500" in table
    assert "Regime: cold, no policy sees a logged interaction." in table


def test_regret_markdown_names_the_warm_start(results):
    warm = results / "tables" / "warm.csv"
    lines = CSV.splitlines()
    warm.write_text("\n".join([lines[0] + ",regime,n_logged", *(line + ",warm,1000" for line in lines[1:])]) + "\n")
    assert "Regime: warm, every policy first learns from the same M = 1000 logged interactions." in regret_markdown(
        warm
    )


def test_claims_summary_lists_every_claim_that_does_not_pass(results):
    summary = claims_summary(results / "claims.md")
    assert "**1/4 PASS** (1 PASS, 1 FAIL, 1 INCONCLUSIVE, 1 NOT RUN)" in summary
    assert (
        "- FAIL `c_beats_d`: 3 [2, 4], needed < 0" in summary
        and "- INCONCLUSIVE `e_beats_f`: -1 [-3, 1], needed < 0" in summary
    )
    assert "a_beats_b" not in summary and "g_beats_h" not in summary


def test_update_replaces_only_the_block(results, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{BEGIN}\nSTALE\n{END}\noutro\n")
    (results / "tables" / "other.csv").write_text(CSV)
    update_readme(
        readme,
        results_block(results, "classification,other", "paper/readme/x.png", 754, "2 CPU cores", "config/default.yaml"),
    )
    text = readme.read_text()
    assert "#### Table `classification`" in text and "#### Table `other`" in text
    assert text.startswith("intro\n") and text.endswith("outro\n") and "STALE" not in text
    assert "**12 min 34 s**" in text and "![Regret curves" in text and "| LinUCB |" in text


def test_readme_without_markers_is_an_error(results, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("no markers\n")
    with pytest.raises(ValueError, match="needs exactly one"):
        update_readme(readme, "block")


CLAIMS_JSON = {
    "level": 0.95,
    "adjustment": "Benjamini-Hochberg within each family",
    "claims": [
        {
            "id": "C1",
            "key": "hare_beats_linucb",
            "headline": True,
            "status": "PASS",
            "adjusted_status": "INCONCLUSIVE",
            "measured": -12.345,
            "low": -20.0,
            "high": -1.5,
            "compare": "<",
            "threshold": 0,
            "margin": 2.0,
        },
        {
            "id": "C2",
            "key": "hare_equals_lnucb",
            "headline": True,
            "status": "EQUIVALENT",
            "adjusted_status": "EQUIVALENT",
            "measured": 0.5,
            "low": -1.0,
            "high": 2.0,
            "compare": "<",
            "threshold": 0,
            "margin": 3.0,
        },
        {
            "id": "C3",
            "key": "published_row",
            "headline": False,
            "status": "FAIL",
            "adjusted_status": "FAIL",
            "measured": 124.5,
            "low": 120.0,
            "high": 129.0,
            "compare": "within",
            "threshold": [15.89, 23.81],
            "margin": None,
        },
        {
            "id": "C4",
            "key": "passes_anyway",
            "headline": False,
            "status": "PASS",
            "adjusted_status": "PASS",
            "measured": 1.0,
            "low": 0.5,
            "high": 1.5,
            "compare": ">",
            "threshold": 0,
            "margin": None,
        },
        {
            "id": "C5",
            "key": "not_run_here",
            "headline": False,
            "status": "NOT RUN",
            "adjusted_status": "",
            "measured": None,
            "low": None,
            "high": None,
            "compare": "<",
            "threshold": 0,
            "margin": None,
        },
    ],
}


def test_claims_summary_prefers_the_json_with_its_adjusted_verdicts(results):
    (results / "claims.json").write_text(json.dumps(CLAIMS_JSON))
    summary = claims_summary(results / "claims.md")
    assert (
        "**2/5 PASS** (2 PASS, 1 FAIL, 1 EQUIVALENT, 1 NOT RUN); "
        "family-adjusted: 1 PASS, 1 FAIL, 1 EQUIVALENT, 1 INCONCLUSIVE, 1 NOT RUN" in summary
    )
    assert "adjusted as follows: Benjamini-Hochberg within each family" in summary
    assert "- INCONCLUSIVE (unadjusted PASS) C1 `hare_beats_linucb`: -12.3 [-20, -1.5], needed < 0" in summary
    assert "- EQUIVALENT C2 `hare_equals_lnucb`: 0.5 [-1, 2], needed < 0 (margin 3)" in summary
    assert "- FAIL C3 `published_row`: 124 [120, 129], needed within [15.89, 23.81]" in summary
    assert "The 3 claims that do not pass" in summary
    assert "passes_anyway" not in summary and "not_run_here" not in summary and "c_beats_d" not in summary


def test_headline_claims_lists_only_the_headline_ones(results):
    (results / "claims.json").write_text(json.dumps(CLAIMS_JSON))
    text = headline_claims(results / "claims.md")
    assert text.startswith("Claims: **2/5 PASS**")
    assert "C1 `hare_beats_linucb`" in text and "C2 `hare_equals_lnucb`" in text and "published_row" not in text
    assert "and 1 more" in headline_claims(results / "claims.md", limit=1)


def test_a_claims_json_without_claims_is_an_error(results):
    (results / "claims.json").write_text(json.dumps({"level": 0.95}))
    with pytest.raises(ValueError, match="list 'claims'"):
        claims_summary(results / "claims.md")


def test_markdown_columns_are_found_by_their_header_and_each_claim_counts_once(results):
    (results / "claims.md").write_text("""# Claims

## Headline claims

| id | claim | measured [95% interval] | threshold | status | adjusted |
|---|---|---|---|---|---|
| C1 | `c_beats_d` | 3 [2, 4] | < 0 | **FAIL** | **FAIL** |

## Every claim

| id | claim | section | measured [95% interval] | threshold | status | adjusted | method |
|---|---|---|---|---|---|---|---|
| C1 | `c_beats_d` | Table x | 3 [2, 4] | < 0 | **FAIL** | **FAIL** | t |
| C2 | `a_beats_b` | Table x | -1 [-2, -0.5] | < 0 | PASS | **INCONCLUSIVE** | t |
| C3 | `e_equals_f` | Table x | 0 [-1, 1] | < 0 | **EQUIVALENT** | **EQUIVALENT** | t |
""")
    summary = claims_summary(results / "claims.md")
    assert (
        "**1/3 PASS** (1 PASS, 1 FAIL, 1 EQUIVALENT); family-adjusted: 1 FAIL, 1 EQUIVALENT, 1 INCONCLUSIVE" in summary
    )
    assert "- FAIL C1 `c_beats_d`: 3 [2, 4], needed < 0" in summary
    assert "- INCONCLUSIVE (unadjusted PASS) C2 `a_beats_b`: -1 [-2, -0.5], needed < 0" in summary
    assert "The 3 claims that do not pass" in summary


def test_claims_markdown_without_a_claims_table_is_an_error(results):
    (results / "claims.md").write_text("# Claims\n\nnothing here\n")
    with pytest.raises(ValueError, match="no table"):
        claims_summary(results / "claims.md")


def test_fill_readme_writes_the_page_and_the_summary(results, tmp_path, monkeypatch):
    rendered = []
    monkeypatch.setattr(readme_module, "render_png", lambda pdf, png: rendered.append((pdf, png)))
    (results / "claims.json").write_text(json.dumps(CLAIMS_JSON))
    (results / "logs").mkdir()
    (results / "logs" / "calibration.json").write_text(json.dumps({"score": 1.234}))
    readme, page = tmp_path / "README.md", tmp_path / "docs" / "results.md"
    page.parent.mkdir()
    readme.write_text(f"intro\n{SUMMARY_BEGIN}\nSTALE\n{SUMMARY_END}\noutro\n")
    page.write_text(f"# Results\n{BEGIN}\nSTALE\n{END}\n")
    fill_readme(
        wall_seconds=376,
        machine="2 CPU cores",
        readme=readme,
        results=results,
        table="classification",
        figure=tmp_path / "f.pdf",
        png=tmp_path / "paper" / "readme" / "x.png",
    )
    summary, full = readme.read_text(), page.read_text()
    assert rendered == [(tmp_path / "f.pdf", tmp_path / "paper" / "readme" / "x.png")]
    assert "STALE" not in summary and "STALE" not in full and summary.endswith("outro\n")
    assert (
        "(paper/readme/x.png)" in summary
        and "[docs/results.md](docs/results.md)" in summary
        and "C1 `hare_beats_linucb`" in summary
    )
    assert "| LinUCB |" not in summary and "published_row" not in summary
    assert "(../paper/readme/x.png)" in full and "| LinUCB |" in full and "**6 min 16 s**" in full
    assert "calibration figure 1.23" in full and "C3 `published_row`" in full


def test_fill_readme_writes_nothing_when_a_block_is_missing(results, tmp_path, monkeypatch):
    monkeypatch.setattr(readme_module, "render_png", lambda pdf, png: None)
    readme, page = tmp_path / "README.md", tmp_path / "docs" / "results.md"
    page.parent.mkdir()
    readme.write_text("no summary markers\n")
    page.write_text(f"{BEGIN}\nKEPT\n{END}\n")
    with pytest.raises(ValueError, match="results-summary"):
        fill_readme(
            wall_seconds=1,
            machine="m",
            readme=readme,
            results=results,
            table="classification",
            figure="f.pdf",
            png=tmp_path / "x.png",
        )
    assert "KEPT" in page.read_text()


def test_markdown_columns_may_be_renamed_and_reordered(results):
    (results / "claims.md").write_text("""| needed | adjusted | key | measured | unadjusted |
|---|---|---|---|---|
| > 0 | **FAIL** | `g_h` | -2 [-3, -1] | **FAIL** |
| > 0 | PASS | `i_j` | 2 [1, 3] | PASS |

| policy | status |
|---|---|
| not a claim | PASS |
""")
    summary = claims_summary(results / "claims.md")
    assert "**1/2 PASS** (1 PASS, 1 FAIL); family-adjusted: 1 PASS, 1 FAIL" in summary
    assert "- FAIL `g_h`: -2 [-3, -1], needed > 0" in summary and "not a claim" not in summary
