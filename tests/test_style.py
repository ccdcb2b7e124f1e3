"""The code passes the project's linter and formatter (ruff, configured in pyproject.toml) with no exceptions beyond
the configured ones, no module of ``src/hare`` runs over 400 lines without its docstring saying why (a paragraph
starting ``Length:``), and none runs over 500 lines at all, whatever its docstring says."""

import ast
import re
import subprocess
import sys

MAX_LINES = 400
HARD_MAX_LINES = 500
"""No module of ``src/hare`` is longer, a ``Length:`` paragraph or not: one that grows past it is split by concern."""


def test_ruff_finds_no_violations(repository):
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", str(repository)],
        capture_output=True,
        text=True,
        cwd=repository,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_code_is_formatted(repository):
    """``ruff format`` (120 characters, pyproject.toml) would change nothing."""
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "--no-cache", str(repository)],
        capture_output=True,
        text=True,
        cwd=repository,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def states_length_reason(source: str) -> bool:
    """Does the module docstring hold a paragraph (blank-line separated) that starts with ``Length:``?"""
    docstring = ast.get_docstring(ast.parse(source)) or ""
    return any(paragraph.lstrip().startswith("Length:") for paragraph in re.split(r"\n\s*\n", docstring))


def test_states_length_reason_reads_paragraphs():
    assert states_length_reason('"""Summary.\n\nLength: one algorithm.\n"""\n')
    assert not states_length_reason('"""Summary. Length: inline, not a paragraph."""\n')
    assert not states_length_reason("x = 1\n")


def test_long_modules_state_why(repository):
    offenders = []
    for path in sorted((repository / "src" / "hare").rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        n_lines = len(source.splitlines())
        if n_lines > MAX_LINES and not states_length_reason(source):
            offenders.append(f"{path.relative_to(repository)} ({n_lines} lines)")
    assert not offenders, (
        f"modules over {MAX_LINES} lines without a 'Length:' paragraph in their docstring "
        "saying why they are one module "
        f"(split them, or add the reason): {', '.join(offenders)}"
    )


def modules_over(root, limit: int) -> list[str]:
    """``<path> (<n> lines)`` of every module under ``root`` longer than ``limit`` lines, sorted by path."""
    found = []
    for path in sorted(root.rglob("*.py")):
        n_lines = len(path.read_text(encoding="utf-8").splitlines())
        if n_lines > limit:
            found.append(f"{path.relative_to(root).as_posix()} ({n_lines} lines)")
    return found


def test_the_hard_cap_finds_a_long_module_even_with_a_length_reason(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "short.py").write_text("x = 1\n" * HARD_MAX_LINES)
    (tmp_path / "pkg" / "long.py").write_text('"""Long.\n\nLength: one algorithm."""\n' + "x = 1\n" * HARD_MAX_LINES)
    assert modules_over(tmp_path, HARD_MAX_LINES) == [f"pkg/long.py ({HARD_MAX_LINES + 3} lines)"]


def test_no_module_exceeds_the_hard_cap(repository):
    offenders = modules_over(repository / "src" / "hare", HARD_MAX_LINES)
    assert not offenders, f"modules over {HARD_MAX_LINES} lines (split them by concern): {', '.join(offenders)}"
