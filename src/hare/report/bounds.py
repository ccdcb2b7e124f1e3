"""The regret bounds as LaTeX macros: ``\\newcommand{\\boundXxx}{<latex>}``, one per bound of
:data:`hare.theory.bound_table.BOUNDS`.

The theory side hands over plain data, ``{bound key: LaTeX of its expression}``
(:func:`hare.theory.bound_table.bound_latex`, the strings ``sympy.latex`` produced), so this module needs neither sympy
nor the bounds' symbols; it names each macro (:func:`hare.report.latex.macro_name` of ``("bound", key)``, e.g.
``hare_approx`` -> ``boundHareApprox``), refuses a non-finite expression and writes the file.
"""

from __future__ import annotations

import re
from pathlib import Path

from hare.io import write_text
from hare.report.latex import macro_name

NON_FINITE = re.compile(r"\b(zoo|nan|oo)\b")
"""What ``sympy.latex`` prints for a non-finite expression (complex infinity, NaN, infinity)."""

HEADER = "% Regret bounds (hare.theory.bounds); use inside math mode, e.g. $\\boundLinucbOful$."


def bound_macro(bound_key: str) -> str:
    """The macro name of a bound: ``linucb_oful`` -> ``boundLinucbOful`` (letters only, digits spelled out)."""
    return macro_name("bound", bound_key)


def bounds_tex(latex_by_key: dict[str, str]) -> str:
    """The header line and one ``\\newcommand`` per bound, in the order of ``latex_by_key``; ``ValueError`` naming the
    bound whose LaTeX is non-finite. The macros expand to math-mode material (``$\\boundLinucbOful$``)."""
    lines = [HEADER]
    for key, body in latex_by_key.items():
        if NON_FINITE.search(body):
            raise ValueError(f"bound {key!r} renders to a non-finite expression: {body}")
        lines.append(f"\\newcommand{{\\{bound_macro(key)}}}{{{body}}}")
    return "\n".join(lines) + "\n"


def write_bounds_tex(path: str | Path, latex_by_key: dict[str, str]) -> None:
    """Write :func:`bounds_tex` of ``latex_by_key`` to ``path``, atomically."""
    write_text(path, bounds_tex(latex_by_key))
