"""The notebooks' shared helpers: each gap said once, only reported runs of the asked experiments and labels read,
and the macro file under its notebook's header."""

from __future__ import annotations

import numpy as np

from hare.io import write_result
from hare.report.notebook_kit import Notes, reported_runs, write_macros


def _run(path, experiment, label, role="report", total=1.0):
    job = {"experiment": experiment, "environment": {"name": "synthetic_linear"}, "label": label, "role": role}
    write_result(path, {"total_regret": np.array([total])}, {"job": job})
    return path


def test_notes_say_each_line_once_in_order_and_print_it_once(capsys):
    say = Notes()
    for line in ["b missing", "a missing", "b missing"]:
        say(line)
    assert say.lines == ["b missing", "a missing"]
    assert capsys.readouterr().out == "b missing\na missing\n"


def test_reported_runs_keeps_reported_runs_of_the_experiments_and_labels(tmp_path):
    _run(tmp_path / "kept.npz", "credit", "hare", total=3.0)
    _run(tmp_path / "tuning.npz", "credit", "hare", role="tune")
    _run(tmp_path / "other_experiment.npz", "synthetic", "hare")
    _run(tmp_path / "other_label.npz", "credit", "linucb")
    missing = tmp_path / "missing.npz"
    paths = sorted(tmp_path.glob("*.npz")) + [missing, tmp_path / "kept.json"]
    say = Notes()

    rows = list(reported_runs(paths, {"credit"}, say, labels={"hare", "random"}))

    assert [key for key, _, _ in rows] == [("credit", "synthetic_linear", "hare")]
    assert rows[0][1]["job"]["role"] == "report"
    np.testing.assert_array_equal(rows[0][2]["total_regret"], [3.0])
    assert say.lines == [f"skipped {missing}: no such run file or sidecar"]
    everything = list(reported_runs(paths, {"credit"}, Notes()))
    assert sorted(key[2] for key, *_ in everything) == ["hare", "linucb"]


def test_write_macros_names_its_notebook_and_defines_each_value(tmp_path):
    path = tmp_path / "deep" / "credit_macros.tex"
    write_macros(path, {"creditRegret": "1.5"}, "credit")
    text = path.read_text()
    assert text.splitlines()[0] == "% Written by notebooks/credit.py from the run files of its rule; do not edit."
    assert "\\newcommand{\\creditRegret}{1.5}" in text
