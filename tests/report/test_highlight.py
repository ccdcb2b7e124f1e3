"""Which policies a regret figure draws in colour, and their colours."""

from hare.report.style import BACKGROUND_GREY, distinct_colors, highlighted_policies, is_hare_variant

PLANTED = {
    "random": 500.0,
    "ucb1": 300.0,
    "kl_ucb": 90.0,
    "eps_greedy": 250.0,
    "beta_thompson": 80.0,
    "linucb": 200.0,
    "lin_ts": 70.0,
    "kernel_ucb": 400.0,
    "neural_ucb": 260.0,
    "lnucb_ta": 150.0,
    "hare": 120.0,
    "hare_oracle": 60.0,
}
POLICIES = {label: ("hare" if label == "hare_oracle" else label) for label in PLANTED}


def test_hare_linucb_and_the_three_best_baselines_are_highlighted_and_no_other():
    shown = highlighted_policies(PLANTED, POLICIES)
    assert shown == ["hare_oracle", "hare", "linucb", "lin_ts", "beta_thompson", "kl_ucb"]


def test_linucb_among_the_best_is_not_counted_twice():
    table = {**PLANTED, "linucb": 10.0}
    shown = highlighted_policies(table, POLICIES)
    assert shown == ["hare_oracle", "hare", "linucb", "lin_ts", "beta_thompson"]


def test_the_best_are_decided_by_the_data_not_the_name():
    table = {**PLANTED, "random": 1.0}
    assert "random" in highlighted_policies(table, POLICIES)
    assert "kl_ucb" not in highlighted_policies(table, POLICIES)


def test_hare_variants_are_found_by_registered_policy_or_label():
    assert is_hare_variant("hare@alpha=0.1") and is_hare_variant("hare_oracle") and is_hare_variant("oracle_w", "hare")
    assert not is_hare_variant("rag_cosine", "rag_cosine") and not is_hare_variant("linucb")


def test_highlighted_colours_are_distinct_and_not_grey():
    labels = ["hare", "hare_oracle", "linucb", "lin_ts", "ucb1", "kl_ucb", "beta_thompson", "eps_greedy"]
    colors = distinct_colors(labels)
    assert len(set(colors.values())) == len(labels)
    assert BACKGROUND_GREY not in colors.values()
    assert distinct_colors(["hare"])["hare"] == colors["hare"] == distinct_colors(["hare", "linucb"])["hare"]
