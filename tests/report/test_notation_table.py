"""hare.report.notation: the glossary as a longtable, one escaped row per entry (symbol, meaning, config field), and
whole as Markdown for the report; ``hare notation`` writes both.

(Named ``test_notation_table`` because ``tests/test_notation.py``, the glossary's own checks, takes the basename:
the test folders are not packages, so two test modules may not share a name.)"""

from __future__ import annotations

import re

from hare.cli import main
from hare.notation import GLOSSARY, GlossaryEntry
from hare.report.notation import (
    COLUMNS,
    PAPER_COLUMNS,
    breakable_tt,
    math_cell,
    notation_markdown,
    notation_row,
    notation_table,
    write_notation,
)

PLANTED = (
    GlossaryEntry("d_k", "key dimension & 100% of it", ("theory.decomposition_grid.key_dims",), ("a.b:C.key_dim",)),
    GlossaryEntry("x, y", "two symbols", (), ("m:f", "m:g"), ("results/x.json: a_b",)),
)
ROW_END = re.compile(r" \\\\$")


def _rows(text: str) -> list[str]:
    """The body rows of a longtable: the lines between ``\\endlastfoot`` and ``\\end{longtable}``."""
    lines = text.splitlines()
    return lines[lines.index(r"\endlastfoot") + 1 : lines.index(r"\end{longtable}}")]


def test_the_table_begins_and_ends_a_longtable_with_one_row_per_entry():
    text = notation_table(PLANTED)
    assert text.startswith(r"{\small\begin{longtable}{")
    assert text.endswith("\\end{longtable}}\n")
    assert r"\label{tab:notation}" in text and r"\caption{" in text
    assert text.count(" & ".join(PAPER_COLUMNS) + r" \\") == 2  # first head and repeated head
    rows = _rows(text)
    assert len(rows) == len(PLANTED) and all(ROW_END.search(row) for row in rows)
    assert [row.count(" & ") for row in rows] == [len(PAPER_COLUMNS) - 1] * len(PLANTED)
    assert len(_rows(notation_table())) == len(GLOSSARY)


def test_cells_are_escaped_and_breakable():
    first, second = (notation_row(entry) for entry in PLANTED)
    assert first[0] == "$d_k$"
    assert first[1] == r"key dimension \& 100\% of it"
    assert first[2] == r"\texttt{theory.\allowbreak{}decomposition\_grid.\allowbreak{}key\_dims}"
    assert first[3] == r"\texttt{a.\allowbreak{}b:\allowbreak{}C.\allowbreak{}key\_dim}"
    assert first[4] == "--"
    assert second[0] == "$x$, $y$"
    assert second[2] == "--"
    assert second[3] == r"\texttt{m:\allowbreak{}f}\newline \texttt{m:\allowbreak{}g}"
    assert second[4] == r"\texttt{results/\allowbreak{}x.\allowbreak{}json:\allowbreak{} a\_b}"
    assert breakable_tt("SYMBOLS[K]") == r"\texttt{SYMBOLS[\allowbreak{}K]}"
    assert math_cell(r"\Sigma_{h,j}") == r"$\Sigma_{h,j}$"  # a comma inside a symbol does not split it


def test_every_symbol_reaches_the_table_and_every_identifier_the_markdown():
    text = notation_table()
    markdown = notation_markdown()
    assert markdown.count("\n| $") == len(GLOSSARY)
    assert "| " + " | ".join(COLUMNS) + " |" in markdown
    for entry in GLOSSARY:
        assert math_cell(entry.symbol) in text
        for value in (*entry.config, *entry.code, *entry.results):
            assert f"`{value}`" in markdown
    for row in _rows(text):
        text_cells = row.split(" & ")[1:]  # every cell but the symbol, which is maths
        assert not [cell for cell in text_cells if re.search(r"(?<!\\)[_&%#]", cell)]


def test_write_notation_and_the_command_write_the_same_files(tmp_path):
    write_notation(tmp_path / "direct.tex", markdown=tmp_path / "direct.md")
    assert main(["notation", "--out", str(tmp_path / "notation.tex"), "--markdown", str(tmp_path / "notation.md")]) == 0
    assert (tmp_path / "notation.tex").read_text() == (tmp_path / "direct.tex").read_text() == notation_table()
    assert (tmp_path / "notation.md").read_text() == (tmp_path / "direct.md").read_text() == notation_markdown()
