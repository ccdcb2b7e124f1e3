"""LaTeX fragments and display names the tables use."""

from hare.report.latex import booktabs_table
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
