"""The README's regret table names rows by config label through the display-name registry."""

from hare.report.readme import regret_markdown

CSV = """experiment,environment,policy,policy_name,params,n_runs,horizon,mean,std,std_over_mean_pct,mean_reward
synthetic,synthetic_linear,hare,hare,{},5,1000,40,2,5,0.9
synthetic,synthetic_linear,hare_oracle,hare,{},5,1000,20,1,5,0.95
synthetic,synthetic_linear,linucb,linucb,{},5,1000,60,3,5,0.8
"""


def test_variants_of_one_policy_keep_their_own_rows_and_names(tmp_path):
    path = tmp_path / "synthetic.csv"
    path.write_text(CSV)
    table = regret_markdown(path)
    assert "| policy | HARE-Sim (linear) |" in table
    assert "| HARE | 40.0 ± 2.0 |" in table
    assert "| HARE (oracle W) | **20.0 ± 1.0** |" in table
    assert "| LinUCB | 60.0 ± 3.0 |" in table
