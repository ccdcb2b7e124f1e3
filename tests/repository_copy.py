"""Helpers for tests that run the workflow in a temporary copy of the repository."""

import re
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


def job_stats(log: str) -> dict[str, int]:
    """``{rule: job count}`` from the first "Job stats:" table of a Snakemake log or dry run (the total left out)."""
    table = log.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    return {name: int(count) for name, count in re.findall(r"^(\w+)\s+(\d+)$", table, re.MULTILINE) if name != "total"}
