"""LaTeX fragments the paper inputs: booktabs tables and number macros."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

_LATEX_SPECIALS = {
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "\\": r"\textbackslash{}",
}


def escape(text: str) -> str:
    """Escape LaTeX special characters in plain text."""
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in str(text))


DIGIT_WORDS = dict(
    zip("0123456789", ("Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine"), strict=True)
)


def macro_name(*parts: str) -> str:
    """A valid LaTeX command name (letters only) from free-form parts: ``('regret', 'lin_ucb') -> 'regretLinUcb'``.

    The one macro namer of the package (the bounds' ``('bound', 'hare_approx') -> 'boundHareApprox'`` too): every
    digit is spelled out (``'1' -> 'One'``), the parts are split into words at every non-letter, the first word keeps
    its case but starts lower-case, every later word starts upper-case (``('table', 'top10') -> 'tableTopOneZero'``).
    """
    spelled = ["".join(DIGIT_WORDS.get(character, character) for character in str(part)) for part in parts]
    words = [w for text in spelled for w in re.split(r"[^A-Za-z]+", text) if w]
    if not words:
        raise ValueError(f"no letters in macro parts {parts!r}")
    return words[0][0].lower() + words[0][1:] + "".join(w[0].upper() + w[1:] for w in words[1:])


def format_number(value: float, digits: int = 1) -> str:
    """Fixed-point number for tables; non-finite values print as '--'."""
    if value is None or not math.isfinite(value):
        return "--"
    if abs(value) >= 1e5:
        return f"{value:.3g}".replace("e+0", "e").replace("e+", "e")
    return f"{value:,.{digits}f}".replace(",", "{,}")


def macros(values: dict[str, str]) -> str:
    """``\\newcommand`` lines, one per (name, already formatted value)."""
    return "".join(f"\\newcommand{{\\{name}}}{{{value}}}\n" for name, value in sorted(values.items()))


def booktabs_table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    align: str,
    caption: str,
    label: str,
    notes: str = "",
    resize: bool = False,
) -> str:
    """A ``table`` float with a booktabs ``tabular``; cells are inserted verbatim (already escaped).

    An empty row is a ``\\midrule`` (between groups of rows). ``resize`` scales a wide tabular
    down to the text width (never up).
    """
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{{caption}}}",
        rf"\label{{{label}}}",
        r"\small",
        r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%" if resize else "",
        rf"\begin{{tabular}}{{{align}}}",
        r"\toprule",
        " & ".join(header) + r" \\",
        r"\midrule",
        *(" & ".join(row) + r" \\" if row else r"\midrule" for row in rows),
        r"\bottomrule",
        r"\end{tabular}" + ("}" if resize else ""),
    ]
    lines = [line for line in lines if line]
    if notes:
        lines.append(rf"\par\smallskip\footnotesize {notes}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def longtable(header: Sequence[str], body: Sequence[str], align: str, caption: str, label: str) -> str:
    """A booktabs ``longtable`` (needs ``\\usepackage{longtable}``) of ready ``body`` lines: it breaks across pages,
    repeating the header."""
    head = " & ".join(header) + r" \\"
    return "\n".join(
        [
            rf"\begin{{longtable}}{{{align}}}",
            rf"\caption{{{caption}}}\label{{{label}}}\\",
            r"\toprule",
            head,
            r"\midrule",
            r"\endfirsthead",
            r"\toprule",
            head,
            r"\midrule",
            r"\endhead",
            r"\bottomrule",
            r"\endlastfoot",
            *body,
            r"\end{longtable}",
        ]
    )


def booktabs_longtable(
    header: Sequence[str], rows: Sequence[Sequence[str]], align: str, caption: str, label: str
) -> str:
    """:func:`longtable` of ``rows`` (cells joined by ``&``) in small type (the claims register and the notation
    table may hold any number of rows)."""
    body = [" & ".join(row) + r" \\" for row in rows]
    return r"{\small" + longtable(header, body, align, caption, label) + "}\n"
