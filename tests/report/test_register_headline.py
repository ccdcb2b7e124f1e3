"""hare.report.register_headline: the headline claims in the names a reader knows."""

from hare.report.register_headline import readable_statement


def test_headline_statements_name_policies_and_datasets_as_readers_know_them():
    claim = {
        "statement": "HARE has lower total regret than lnucb_ta on mushroom (classification_warm; paired over runs).",
        "binding": {"experiment": "classification_warm", "environment": "mushroom", "baseline": "lnucb_ta"},
    }
    assert (
        readable_statement(claim)
        == "HARE has lower total regret than LNUCB-TA on Mushroom (classification, warm; paired over runs)."
    )
    claim = {
        "statement": "online_mean wins on synthetic_linear (hare_online).",
        "binding": {"environment": "synthetic_linear", "experiment": "hare_online"},
    }
    assert readable_statement(claim) == r"online\_mean wins on HARE-Sim (linear) (hare online)."
