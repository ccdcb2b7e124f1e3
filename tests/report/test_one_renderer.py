"""One renderer: every LaTeX fragment of the paper is written by ``hare.report``.

Outside ``src/hare/report`` no module imports the LaTeX primitives (``hare.report.latex``), holds a string constant
that spells a LaTeX command of a table, a macro file or formatted maths (docstrings aside), or defines its own
``macro_name``. The computing modules return numbers and plain data; the command line hands them to a renderer.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "src" / "hare"
RENDERER = SOURCE / "report"

LATEX = re.compile(
    r"\\(newcommand|renewcommand|toprule|midrule|bottomrule|cmidrule|begin\{|end\{|textbf|textsc|textit|emph|"
    r"multicolumn|multirow|mathrm|mathbf|pm\b|num\{|hline|caption|label\{|ref\{|input\{)"
)


def docstring_nodes(tree: ast.AST) -> set[int]:
    """``id`` of every docstring constant of ``tree`` (module, class and function docstrings)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def latex_offences(source: str) -> list[str]:
    """What in ``source`` formats LaTeX: an import of ``hare.report.latex``, a ``macro_name`` definition, or a string
    constant (not a docstring) that spells a LaTeX command. Returns ``"line N: why"`` strings."""
    tree = ast.parse(source)
    docstrings = docstring_nodes(tree)
    offences = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "hare.report.latex":
            offences.append(f"line {node.lineno}: imports hare.report.latex")
        elif isinstance(node, ast.Import) and any(alias.name == "hare.report.latex" for alias in node.names):
            offences.append(f"line {node.lineno}: imports hare.report.latex")
        elif isinstance(node, ast.FunctionDef) and node.name == "macro_name":
            offences.append(f"line {node.lineno}: defines its own macro_name")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            match = LATEX.search(node.value)
            if match:
                offences.append(f"line {node.lineno}: LaTeX {match.group(0)!r} in a string")
    return offences


def test_the_checker_finds_planted_latex():
    assert latex_offences('"""A docstring may say \\\\toprule."""\nx = 1\n') == []
    assert latex_offences("from hare.report.latex import macros\n")
    assert latex_offences("def macro_name(key):\n    return key\n")
    assert latex_offences('row = r"a & b \\\\ \\midrule"\n')
    assert latex_offences('line = f"\\\\newcommand{{\\\\{name}}}{{{value}}}"\n')
    assert not latex_offences('label = "R_approx"\n')


def test_only_the_report_package_formats_latex():
    offenders = []
    for path in sorted(SOURCE.rglob("*.py")):
        if RENDERER in path.parents:
            continue
        offenders += [f"{path.relative_to(SOURCE.parent)} {why}" for why in latex_offences(path.read_text("utf-8"))]
    assert not offenders, "LaTeX outside hare.report:\n" + "\n".join(offenders)


def test_one_macro_name():
    definitions = [
        path.relative_to(SOURCE.parent)
        for path in SOURCE.rglob("*.py")
        if re.search(r"^def macro_name\(", path.read_text("utf-8"), re.MULTILINE)
    ]
    assert [str(path) for path in definitions] == ["hare/report/latex.py"]
