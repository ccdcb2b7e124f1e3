"""hare.report.register_families: the statement a family's rows share."""

from hare.report.register_families import template


def test_template_replaces_values_on_word_boundaries():
    claim = {
        "statement": "At rate 1.0 HARE beats knn_ucb on synthetic_linear (synthetic), not at 10.0.",
        "binding": {"rate": "1.0", "baseline": "knn_ucb", "environment": "synthetic_linear", "experiment": "synthetic"},
    }
    text = template(claim)
    assert "10.0" in text and text.count(r"$\langle$") == 4
