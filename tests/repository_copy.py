"""Helpers for tests that run the workflow in a temporary copy of the repository."""

import shutil
import subprocess
import sys
from pathlib import Path

SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def copy_repository(repository: Path, dest: Path) -> Path:
    """Tracked and untracked-but-not-ignored files of ``repository`` copied into ``dest``."""
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=repository, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    for name in files:
        source = repository / name
        if source.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return dest
