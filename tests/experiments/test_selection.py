import numpy as np
import pytest

from hare.experiments.selection import apply_selection, select_point, write_selection
from hare.io import write_json, write_npz


def _tuning_run(folder, label, params, totals, role="tuning"):
    path = folder / f"{label}.npz"
    write_npz(path, total_regret=np.asarray(totals, dtype=float))
    write_json(path.with_suffix(".json"), {"job": {"label": label, "params": params, "role": role}})
    return path


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


def test_reported_runs_cannot_be_used_for_selection(tmp_path):
    with pytest.raises(ValueError, match="not a tuning run"):
        select_point([_tuning_run(tmp_path, "p@a=1", {"a": 1}, [1.0], role="report")])


def test_apply_selection_fills_the_tuned_parameters(tmp_path):
    write_selection([_tuning_run(tmp_path, "p@alpha=0.5", {"alpha": 0.5, "lam": 2.0}, [1.0])], tmp_path / "sel.json")
    spec = {"label": "p", "params": {"lam": 2.0}, "tuned_grid": {"alpha": [0.5, 1.0]}}
    assert apply_selection(spec, tmp_path / "sel.json")["params"] == {"lam": 2.0, "alpha": 0.5}
    with pytest.raises(ValueError, match="pass its selection file"):
        apply_selection(spec, None)
    with pytest.raises(ValueError, match="not tuned"):
        apply_selection({"label": "q", "params": {}}, tmp_path / "sel.json")
