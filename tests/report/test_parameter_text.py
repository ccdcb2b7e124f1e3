"""Tables print the paper's symbols and the variants' names, never config strings (``alpha=0.1,
projections=learned``): the one registry, hare.report.names, and the cells that read it."""

import json

from hare.report.names import PARAMETER_VALUES, parameter_text, parameters_text, with_symbols
from hare.report.table_cells import choice_cell, hyperparameter_note, params_text
from hare.report.tables import sensitivity_table_tex, table_tex


def test_a_setting_reads_as_the_paper_writes_it():
    assert parameter_text("alpha", 0.1) == r"$\alpha$=0.1"
    assert parameter_text("lam", 1.0) == r"$\lambda$=1"
    assert parameter_text("projections", "learned") == "learned projections"
    assert parameter_text("n_heads", 2) == "$H$=2"
    assert parameter_text("key_dim", 16) == "$d_k$=16"
    assert parameter_text("online_lr", 0.05) == "projection step 0.05"
    assert parameter_text("attention", False) == "no temporal attention"
    assert parameter_text("unknown_knob", "a_b") == r"\texttt{unknown\_knob}=a\_b"
    assert parameters_text({"alpha": 0.1, "projections": "learned"}) == r"$\alpha$=0.1, learned projections"
    assert parameters_text({}) == "--"


def test_every_categorical_value_of_the_policies_has_a_name():
    from hare.policies import hare, lnucb_ta, neural

    known = {
        "projections": hare.PROJECTION_KINDS,
        "mean": hare.MEANS,
        "user_state": hare.USER_STATES,
        "alpha_schedule": hare.ALPHA_SCHEDULES,
        "covariance_update": hare.COVARIANCE_UPDATES,
        "pool": hare.POOLS,
        "knn_weights": lnucb_ta.KNN_WEIGHTS,
        "global_mean": lnucb_ta.GLOBAL_MEANS,
        "k_rounding": lnucb_ta.K_ROUNDINGS,
        "theta_init": lnucb_ta.THETA_INITS,
        "exploration": neural.EXPLORATION_MODES,
        "encoding": neural.ENCODINGS,
    }
    for name, values in known.items():
        assert set(values) <= set(PARAMETER_VALUES[name]), name


def _row(params, **extra):
    row = {
        "environment": "synthetic_linear",
        "policy": "hare_alpha@alpha=0.1",
        "regime": "warm",
        "n_logged": 1000,
        "params": json.dumps(params),
        "ties": "[]",
        "mean": 10.0,
        "std": 1.0,
        "n_runs": 3,
        "horizon": 500,
        "mean_reward": 250.0,
    }
    row.update(extra)
    return row


def test_no_table_cell_prints_a_config_string():
    row = _row({"alpha": 0.1, "projections": "learned"})
    assert params_text(row) == r"$\alpha$=0.1, learned projections"
    tex = sensitivity_table_tex([row], "HARE ablations: one switch at a time.", "tab:x")
    assert "projections=learned" not in tex and "alpha=" not in tex and r"\texttt" not in tex
    assert r"$\alpha$=0.1, learned projections" in tex


def test_a_chosen_variant_and_a_fixed_reason_read_as_symbols():
    cells = [
        {"chosen": json.dumps({"alpha": 0.1, "projections": "random"}), "choice": "tuned"},
        {"chosen": json.dumps({"alpha": 1.0, "projections": "random"}), "choice": "tuned"},
    ]
    text, per_dataset = choice_cell(cells, {})
    assert text == r"$\alpha$=0.1/1, random projections" and per_dataset
    rows = [{"choice": "fixed", "fixed": "the alpha = 0 ablation", "ties": "[]"}]
    assert r"the $\alpha$ = 0 ablation" in hyperparameter_note(rows)


def test_captions_typeset_the_symbols_they_spell_out():
    assert with_symbols("at alpha_0 = 1, kappa and (theta_min, theta_max); alphabet a_b") == (
        r"at $\alpha_0$ = 1, $\kappa$ and ($\theta_{\min}$, $\theta_{\max}$); alphabet a\_b"
    )
    tex = table_tex("sensitivity", [_row({"alpha": 0.1})], "LNUCB-TA ablation at alpha_0 = 1.", "tab:y")
    assert r"at $\alpha_0$ = 1." in tex
