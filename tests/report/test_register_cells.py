"""hare.report.register_cells: the register's column widths, intervals and id ranges."""

import re

import pytest

from hare.report.register_cells import COLUMNS, FAMILY_COLUMNS, column_spec, id_ranges, interval_tex


@pytest.mark.parametrize("columns", [COLUMNS, FAMILY_COLUMNS], ids=["headline", "families"])
def test_column_widths_fit_the_line(columns):
    assert sum(fraction for _, fraction in columns) <= 1.0 + 1e-12
    widths = [
        float(w) for w in re.findall(r"p\{\\dimexpr([0-9.]+)\\linewidth-2\\tabcolsep\\relax\}", column_spec(columns))
    ]
    assert len(widths) == len(columns) and sum(widths) <= 1.0 + 1e-12
    assert all(width >= 0.05 for width in widths)


def test_interval_digits_and_ranges():
    assert interval_tex({"measured": 1234.5, "low": 1000.2, "high": 1500.9}) == "1{,}234 [1{,}000, 1{,}501]"
    assert interval_tex({"measured": 0.0123, "low": 0.001, "high": 0.02}) == "0.012 [0.001, 0.020]"
    assert interval_tex({"measured": float("nan"), "low": None, "high": None}) == "--"
    assert id_ranges(["C1", "C2", "C3", "C7", "C9", "C10"]) == "C1--C3, C7, C9--C10"
