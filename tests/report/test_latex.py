"""LaTeX fragments and display names the tables use."""

import pytest

from hare.report.latex import booktabs_table, macro_name
from hare.report.names import DISPLAY_NAMES, display_name, parameter_symbol


def test_an_empty_row_is_a_midrule_between_groups():
    tex = booktabs_table(["A", "B"], [["1", "2"], [], ["3", "4"]], "lr", "Caption.", "tab:x")
    lines = tex.splitlines()
    assert lines[lines.index(r"1 & 2 \\") + 1] == r"\midrule"
    assert lines[lines.index(r"1 & 2 \\") + 2] == r"3 & 4 \\"


def test_hyperparameter_symbols():
    assert (
        parameter_symbol("alpha") == r"$\alpha$"
        and parameter_symbol("alpha_0") == r"$\alpha_0$"
        and parameter_symbol("lam") == r"$\lambda$"
    )
    assert parameter_symbol("max_points") == r"\texttt{max\_points}"


def test_every_registered_policy_and_its_tunable_hyperparameters_have_a_readable_name():
    from hare.policies.base import policy_class, policy_names

    for name in policy_names():
        assert name in DISPLAY_NAMES or name == "hare_synthesize", name
        for parameter in policy_class(name).config_class.tunable:
            assert parameter_symbol(parameter).startswith("$"), (name, parameter)
    assert display_name("linucb@alpha=0.1") == "LinUCB [alpha=0.1]"


@pytest.mark.parametrize(
    "parts, name",
    [
        # The bounds' macros (once hare.theory.bounds' own macro_name: "bound" + the key, digits spelled out).
        (("bound", "linucb_oful"), "boundLinucbOful"),
        (("bound", "hare_approx"), "boundHareApprox"),
        (("bound", "hare_explore_oful"), "boundHareExploreOful"),
        (("bound", "hare_total_oful"), "boundHareTotalOful"),
        (("bound", "lnucbta_theorem1"), "boundLnucbtaTheoremOne"),
        # The report's own callers (the decomposition, its grid, the budget, heads x alpha, OFUL).
        (
            ("decomposition", "exponent", "explore_minus_selection_gap", "ci low"),
            "decompositionExponentExploreMinusSelectionGapCiLow",
        ),
        (
            ("decomposition", "check", "approx_exponent_ge_linear_threshold"),
            "decompositionCheckApproxExponentGeLinearThreshold",
        ),
        (("decomposition", "epsilon", "attn"), "decompositionEpsilonAttn"),
        (("decomposition", "grid", "n", "cells"), "decompositionGridNCells"),
        (("approx", "budget", "eps", "slope"), "approxBudgetEpsSlope"),
        (("heads", "alpha", "exponent", "factor", "ci high"), "headsAlphaExponentFactorCiHigh"),
        (("oful", "premise", "fraction"), "ofulPremiseFraction"),
        (("oful", "n", "runs"), "ofulNRuns"),
        (("regret", "lin_ucb"), "regretLinUcb"),
        (("table", "top10"), "tableTopOneZero"),
    ],
)
def test_macro_name_gives_todays_names(parts, name):
    assert macro_name(*parts) == name


def test_macro_name_needs_a_letter():
    with pytest.raises(ValueError, match="no letters"):
        macro_name("_", "")
