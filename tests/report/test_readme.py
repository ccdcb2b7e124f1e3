"""The README results block: built from a table CSV and the claims report, replaced in place."""

import pytest

from hare.report.readme import BEGIN, END, claims_summary, regret_markdown, results_block, update_readme

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
    assert "Regime: cold, no policy saw a logged interaction." in table


def test_regret_markdown_names_the_warm_start(results):
    warm = results / "tables" / "warm.csv"
    lines = CSV.splitlines()
    warm.write_text("\n".join([lines[0] + ",regime,n_logged", *(line + ",warm,1000" for line in lines[1:])]) + "\n")
    assert "Regime: warm, every policy first learned from the same M = 1000 logged interactions." in regret_markdown(warm)


def test_claims_summary_lists_every_claim_that_does_not_pass(results):
    summary = claims_summary(results / "claims.md")
    assert "**1/4 PASS** (1 PASS, 1 FAIL, 1 INCONCLUSIVE, 1 NOT RUN)" in summary
    assert "- FAIL `c_beats_d`: 3 [2, 4], needed < 0" in summary and "- INCONCLUSIVE `e_beats_f`: -1 [-3, 1], needed < 0" in summary
    assert "a_beats_b" not in summary and "g_beats_h" not in summary


def test_update_replaces_only_the_block(results, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{BEGIN}\nSTALE\n{END}\noutro\n")
    (results / "tables" / "other.csv").write_text(CSV)
    update_readme(readme, results_block(results, "classification,other", "paper/readme/x.png", 754, "2 CPU cores", "config/default.yaml"))
    text = readme.read_text()
    assert "#### Table `classification`" in text and "#### Table `other`" in text
    assert text.startswith("intro\n") and text.endswith("outro\n") and "STALE" not in text
    assert "**12 min 34 s**" in text and "![Regret curves" in text and "| LinUCB |" in text


def test_readme_without_markers_is_an_error(results, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("no markers\n")
    with pytest.raises(ValueError, match="needs exactly one"):
        update_readme(readme, "block")
