"""The paper's notation table: :data:`hare.notation.GLOSSARY` as a booktabs longtable, and the whole glossary as
Markdown for the report.

:func:`notation_table` renders one row per glossary entry, in the glossary's order: the symbol in math mode, its
meaning (escaped). :func:`notation_row` also renders the config key paths, code identifiers and result-file keys, each
in ``\\texttt``, escaped and breakable after ``.``, ``:``, ``/`` and ``[``, several to a cell one per line, ``--``
where there are none; :func:`notation_markdown` gives every field of every entry (the columns the paper leaves to the
report, ``results/notation.md``).
:func:`write_notation` writes the table atomically to ``paper/generated/notation.tex`` (``hare notation``), which the
paper's notation appendix inputs, and, given a path, the Markdown.
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
    "PAPER_COLUMNS",
    "LABEL",
    "breakable_tt",
    "math_cell",
    "notation_markdown",
    "notation_row",
    "notation_table",
    "write_notation",
]

COLUMNS = ("Symbol", "Meaning", "Config field", "Code identifier", "Result key")
"""The glossary's columns, one per :class:`hare.notation.GlossaryEntry` field (all of them in the Markdown)."""
PAPER_COLUMNS = COLUMNS[:2]
"""The paper's table: symbol and meaning; the config fields, code identifiers and result keys are in the report."""
WIDTHS = ("3.4cm", "11.8cm")
"""Column widths of the paper's table; their sum plus the column separation fits the text width."""
LABEL = "tab:notation"
CAPTION = (
    "Notation: each symbol of the paper and what it means. The configuration field that sets each symbol, the code "
    "identifier that implements it and the key under which it reaches a result file are in the report's notation "
    "page (\\texttt{results/notation.md})."
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
    """The longtable of ``entries``, one row each, the :data:`PAPER_COLUMNS` of :func:`notation_row`, ragged-right
    columns of :data:`WIDTHS`."""
    align = "".join(rf">{{\raggedright\arraybackslash}}p{{{width}}}" for width in WIDTHS)
    rows = [notation_row(entry)[: len(PAPER_COLUMNS)] for entry in entries]
    return booktabs_longtable(PAPER_COLUMNS, rows, align, CAPTION, LABEL)


def _markdown_cell(values: Sequence[str]) -> str:
    return "<br>".join(f"`{value}`" for value in values) if values else EMPTY


def notation_markdown(entries: Sequence[GlossaryEntry] = GLOSSARY) -> str:
    """The whole glossary as a Markdown table, every :data:`COLUMNS` field: the symbol in ``$...$``, the meaning, and
    the config paths, code identifiers and result keys in backticks, several to a cell separated by ``<br>``."""
    lines = [
        "# Notation",
        "",
        "Every symbol of the paper (its notation table, Appendix A), with the configuration field that sets it, the "
        "code identifier that implements it (`module:qualified.name`) and the key under which it reaches a result "
        "file. Generated from `hare.notation.GLOSSARY`; do not edit.",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    for entry in entries:
        cells = [
            f"${entry.symbol}$",
            entry.meaning.replace("|", "\\|"),
            _markdown_cell(entry.config),
            _markdown_cell(entry.code),
            _markdown_cell(entry.results),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_notation(
    path: str | Path, entries: Sequence[GlossaryEntry] = GLOSSARY, markdown: str | Path | None = None
) -> None:
    """Write :func:`notation_table` of ``entries`` to ``path`` and, with ``markdown``, :func:`notation_markdown` to
    that path, atomically."""
    write_text(path, notation_table(entries))
    if markdown is not None:
        write_text(markdown, notation_markdown(entries))
