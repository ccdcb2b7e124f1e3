"""The paper's notation table: :data:`hare.notation.GLOSSARY` as a booktabs longtable.

:func:`notation_table` renders one row per glossary entry, in the glossary's order: the symbol in math mode, its
meaning (escaped), its config key paths, its code identifiers and its result-file keys, each in ``\\texttt``,
escaped and breakable after ``.``, ``:``, ``/`` and ``[``, several to a cell one per line, ``--`` where
there are none. :func:`write_notation` writes it atomically to ``paper/generated/notation.tex`` (``hare notation``),
which the paper's notation appendix inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hare.io import write_text
from hare.notation import GLOSSARY, GlossaryEntry
from hare.report.latex import booktabs_longtable, escape

__all__ = [
    "CAPTION",
    "COLUMNS",
    "LABEL",
    "breakable_tt",
    "math_cell",
    "notation_row",
    "notation_table",
    "write_notation",
]

COLUMNS = ("Symbol", "Meaning", "Config field", "Code identifier", "Result key")
"""The table's header, one per :class:`hare.notation.GlossaryEntry` field."""
WIDTHS = ("1.5cm", "2.3cm", "3.2cm", "3.7cm", "3.7cm")
"""Column widths; their sum plus the column separation fits the text width."""
LABEL = "tab:notation"
CAPTION = (
    "Notation: each symbol of the paper, what it means, the configuration field that sets it (\\texttt{*}: any "
    "name), the code identifier that implements it (\\texttt{module:qualified.name}) and the key under which it "
    "reaches a result file."
)
BREAK_AFTER = frozenset(".:/[")
"""Characters after which a ``\\texttt`` identifier may break across lines."""
EMPTY = "--"


def breakable_tt(text: str) -> str:
    """``text`` in ``\\texttt``, escaped, with a break point after every character of :data:`BREAK_AFTER`."""
    return r"\texttt{" + "".join(escape(ch) + (r"\allowbreak{}" if ch in BREAK_AFTER else "") for ch in str(text)) + "}"


def _cell(values: Sequence[str]) -> str:
    """Several identifiers, one per line (``\\newline``), or ``--``."""
    return r"\newline ".join(breakable_tt(value) for value in values) if values else EMPTY


def math_cell(symbol: str) -> str:
    """``symbol`` in math mode; a list of symbols (``a, b``) as one formula each, so the line may break after a
    comma."""
    return ", ".join(f"${part}$" for part in symbol.split(", "))


def notation_row(entry: GlossaryEntry) -> list[str]:
    """The five cells of one entry: the symbol in math mode, the escaped meaning, config paths, code identifiers and
    result keys."""
    return [
        math_cell(entry.symbol),
        escape(entry.meaning),
        _cell(entry.config),
        _cell(entry.code),
        _cell(entry.results),
    ]


def notation_table(entries: Sequence[GlossaryEntry] = GLOSSARY) -> str:
    """The longtable of ``entries``, one row each, ragged-right columns of :data:`WIDTHS`."""
    align = "".join(rf">{{\raggedright\arraybackslash}}p{{{width}}}" for width in WIDTHS)
    return booktabs_longtable(COLUMNS, [notation_row(entry) for entry in entries], align, CAPTION, LABEL)


def write_notation(path: str | Path, entries: Sequence[GlossaryEntry] = GLOSSARY) -> None:
    """Write :func:`notation_table` of ``entries`` to ``path``, atomically."""
    write_text(path, notation_table(entries))
