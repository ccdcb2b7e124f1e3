import json

import numpy as np
import pytest

from hare.experiments.job_spec import EnvironmentSpec, JobSpec
from hare.experiments.selection import TIE_RULE, apply_selection, select_point, write_selection
from hare.io import write_json, write_npz


def _tuning_run(folder, label, params, totals, role="tuning"):
    path = folder / f"{label}.npz"
    write_npz(path, total_regret=np.asarray(totals, dtype=float))
    write_json(path.with_suffix(".json"), {"job": {"label": label, "params": params, "role": role}})
    return path


def _job(label, params, tuned_grid=None):
    """A report job of policy ``p`` (the rest of its specification does not matter to the selection)."""
    environment = EnvironmentSpec(name="sim", kind="synthetic", params={}, dataset=None, horizon=10)
    return JobSpec(
        experiment="regret",
        environment=environment,
        label=label,
        policy="linucb",
        params=params,
        n_runs=2,
        role="report",
        base_seed=0,
        device="cpu",
        record_every=1,
        regime="cold",
        n_logged=0,
        tuned_grid=tuned_grid,
    )


def test_the_point_with_the_lowest_mean_regret_is_chosen(tmp_path):
    runs = [
        _tuning_run(tmp_path, "linucb@alpha=0.1", {"alpha": 0.1, "lam": 1.0}, [10, 12]),
        _tuning_run(tmp_path, "linucb@alpha=1.0", {"alpha": 1.0, "lam": 1.0}, [5, 9]),
        _tuning_run(tmp_path, "linucb@alpha=10.0", {"alpha": 10.0, "lam": 1.0}, [7, 8]),
    ]
    selection = select_point(runs)
    assert selection["label"] == "linucb@alpha=1.0" and selection["params"] == {"alpha": 1.0, "lam": 1.0}
    assert [p["mean_total_regret"] for p in selection["points"]] == [11.0, 7.0, 7.5]


def test_ties_go_to_the_first_point_in_sorted_order(tmp_path):
    runs = [_tuning_run(tmp_path, "p@a=2", {"a": 2}, [1.0]), _tuning_run(tmp_path, "p@a=1", {"a": 1}, [1.0])]
    assert select_point(runs)["label"] == "p@a=1"


def test_a_tied_selection_lists_every_tied_label_and_the_rule(tmp_path):
    runs = [
        _tuning_run(tmp_path, "linucb@alpha=1.0", {"alpha": 1.0}, [6.0, 8.0]),
        _tuning_run(tmp_path, "linucb@alpha=0.1", {"alpha": 0.1}, [5.0, 9.0]),
        _tuning_run(tmp_path, "linucb@alpha=10.0", {"alpha": 10.0}, [7.0, 9.0]),
    ]
    selection = select_point(runs)
    assert selection["label"] == "linucb@alpha=0.1" and selection["params"] == {"alpha": 0.1}
    assert selection["ties"] == ["linucb@alpha=0.1", "linucb@alpha=1.0"]
    assert selection["tie_rule"] == TIE_RULE and "sorted label order" in TIE_RULE


def test_ties_within_a_relative_tolerance_go_to_the_first_label(tmp_path):
    """A mean lower by rounding noise only still ties, and the rule (not the noise) picks the point."""
    runs = [
        _tuning_run(tmp_path, "p@a=1", {"a": 1}, [1000.0]),
        _tuning_run(tmp_path, "p@a=2", {"a": 2}, [1000.0 * (1 - 1e-14)]),
        _tuning_run(tmp_path, "p@a=3", {"a": 3}, [1000.0 * (1 - 1e-9)]),
    ]
    selection = select_point(runs)
    assert selection["label"] == "p@a=3" and selection["ties"] == ["p@a=3"] and selection["tie_rule"] is None
    runs.pop()
    selection = select_point(runs)
    assert selection["label"] == "p@a=1" and selection["ties"] == ["p@a=1", "p@a=2"]


def test_an_untied_selection_lists_only_its_choice(tmp_path):
    selection = select_point(
        [_tuning_run(tmp_path, "p@a=1", {"a": 1}, [1.0]), _tuning_run(tmp_path, "p@a=2", {"a": 2}, [2.0])]
    )
    assert selection["ties"] == ["p@a=1"] and selection["tie_rule"] is None


def test_a_non_finite_point_is_never_chosen(tmp_path):
    selection = select_point(
        [_tuning_run(tmp_path, "p@a=1", {"a": 1}, [float("nan")]), _tuning_run(tmp_path, "p@a=2", {"a": 2}, [2.0])]
    )
    assert selection["label"] == "p@a=2"
    with pytest.raises(ValueError, match="finite"):
        select_point([_tuning_run(tmp_path, "p@a=1", {"a": 1}, [float("nan")])])


def test_the_report_spec_records_the_tied_labels(tmp_path):
    write_selection(
        [
            _tuning_run(tmp_path, "p@alpha=0.5", {"alpha": 0.5}, [1.0]),
            _tuning_run(tmp_path, "p@alpha=1.0", {"alpha": 1.0}, [1.0]),
        ],
        tmp_path / "sel.json",
    )
    spec = apply_selection(_job("p", {}, {"alpha": [0.5, 1.0]}), tmp_path / "sel.json")
    assert spec.selected_from == "p@alpha=0.5" and spec.selection_ties == ("p@alpha=0.5", "p@alpha=1.0")
    assert list(spec.as_dict())[-2:] == ["selected_from", "selection_ties"]


def test_cli_select_names_the_tie(tmp_path, capsys):
    from hare.cli import main

    runs = [_tuning_run(tmp_path, "p@a=1", {"a": 1}, [1.0]), _tuning_run(tmp_path, "p@a=2", {"a": 2}, [1.0])]
    assert main(["select", *map(str, runs), "--out", str(tmp_path / "sel.json")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("selected p@a=1 (") and f"tied with p@a=2, broken by {TIE_RULE}" in out
    assert json.loads((tmp_path / "sel.json").read_text())["ties"] == ["p@a=1", "p@a=2"]


def test_reported_runs_cannot_be_used_for_selection(tmp_path):
    with pytest.raises(ValueError, match="not a tuning run"):
        select_point([_tuning_run(tmp_path, "p@a=1", {"a": 1}, [1.0], role="report")])


def test_apply_selection_fills_the_tuned_parameters(tmp_path):
    write_selection([_tuning_run(tmp_path, "p@alpha=0.5", {"alpha": 0.5, "lam": 2.0}, [1.0])], tmp_path / "sel.json")
    spec = _job("p", {"lam": 2.0}, {"alpha": [0.5, 1.0]})
    assert apply_selection(spec, tmp_path / "sel.json").params == {"lam": 2.0, "alpha": 0.5}
    assert spec.params == {"lam": 2.0}  # a new spec; the given one is unchanged
    with pytest.raises(ValueError, match=r"tuned over \{'alpha': \[0.5, 1.0\]\}: pass its selection file"):
        apply_selection(spec, None)
    with pytest.raises(ValueError, match="not tuned"):
        apply_selection(_job("q", {}), tmp_path / "sel.json")
