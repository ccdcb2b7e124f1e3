"""The code passes the project's linter (ruff, configured in pyproject.toml) with no exceptions beyond the configured ones."""

import subprocess
import sys


def test_ruff_finds_no_violations(repository):
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", str(repository)], capture_output=True, text=True, cwd=repository)
    assert result.returncode == 0, result.stdout + result.stderr
