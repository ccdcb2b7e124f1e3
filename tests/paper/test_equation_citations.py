"""From an equation of the paper to its code in one grep: every ``\\label{eq:...}`` of the method and theory sections
is cited by at least one docstring of ``src/hare`` (module, class or function), and every equation label a docstring
cites exists in the paper."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
SECTIONS = ["method", "theory"]
LABEL = re.compile(r"\\label\{(eq:[A-Za-z0-9:_-]+)\}")
CITED = re.compile(r"\beq:[A-Za-z0-9_-]*[A-Za-z0-9]")


def equation_labels(sections: list[str]) -> set[str]:
    return {
        label
        for name in sections
        for label in LABEL.findall((REPOSITORY / "paper" / "sections" / f"{name}.tex").read_text())
    }


def docstrings() -> str:
    """Every module, class and function docstring of the library, one after the other."""
    texts = []
    for path in sorted((REPOSITORY / "src" / "hare").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                texts.append(ast.get_docstring(node) or "")
    return "\n".join(texts)


@pytest.mark.parametrize("label", sorted(equation_labels(SECTIONS)))
def test_every_equation_of_the_method_and_theory_is_cited_by_a_docstring(label):
    assert re.search(rf"\b{re.escape(label)}\b(?![A-Za-z0-9_-])", docstrings()), (
        f"no docstring of src/hare cites {label}"
    )


def test_every_cited_equation_exists():
    every_label = {label for path in (REPOSITORY / "paper").rglob("*.tex") for label in LABEL.findall(path.read_text())}
    assert set(CITED.findall(docstrings())) <= every_label


def test_the_method_and_theory_have_equations():
    assert {"eq:select", "eq:scores", "eq:oful"} <= equation_labels(SECTIONS)
