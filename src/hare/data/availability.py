"""Which optional datasets (``DatasetSpec.optional``, e.g. Covertype) this build can obtain.

An optional dataset is used only when every one of its files is already fetched with its pinned
sha256, present in the mirror, or (unless ``data.offline``) answered by its canonical URL. Otherwise
the workflow drops it from every experiment *before* building the job graph, says so on standard
error with the reason, and records it (:data:`SKIPPED_FILE`) so the paper states what was left out.
A required dataset is never dropped: its absence is an error of the fetch rule.
"""

from __future__ import annotations

import copy
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from hare.data.fetch import DEFAULT_MIRROR
from hare.data.registry import DATASETS, RemoteFile
from hare.io import file_sha256

SKIPPED_FILE = "results/data/skipped.json"


@dataclass(frozen=True)
class Availability:
    """``available`` and, either way, how it was decided (``reason``)."""

    dataset: str
    available: bool
    reason: str


def file_reachable(rf: RemoteFile, raw_dir: Path, mirror_dir: Path, offline: bool, timeout: float) -> tuple[bool, str]:
    """Whether one file can be had, and from where (or why not)."""
    target = raw_dir / rf.name
    if target.is_file() and file_sha256(target) == rf.sha256:
        return True, f"{rf.name} already fetched"
    if rf.mirror_path and (mirror_dir / rf.mirror_path).is_file():
        return True, f"{rf.name} in the mirror"
    where = f"not in the mirror {mirror_dir}" if rf.mirror_path else "no mirror copy"
    if offline:
        return False, f"{rf.name}: {where}, and data.offline is true"
    try:
        response = requests.head(rf.url, timeout=timeout, allow_redirects=True)
        if response.ok:
            return True, f"{rf.name} at {rf.url}"
        return False, f"{rf.name}: {rf.url} answered HTTP {response.status_code}, {where}"
    except requests.exceptions.RequestException as error:
        return False, f"{rf.name}: {rf.url} unreachable ({type(error).__name__}), {where}"


def dataset_availability(
    name: str, raw_root: Path, mirror_dir: Path | None, offline: bool, timeout: float = 10.0
) -> Availability:
    """Availability of dataset ``name`` (all of its files) for a build whose raw files live in ``raw_root / name``."""
    mirror = DEFAULT_MIRROR if mirror_dir is None else Path(mirror_dir)
    reasons = []
    for rf in DATASETS[name].files:
        ok, reason = file_reachable(rf, Path(raw_root) / name, mirror, offline, timeout)
        if not ok:
            return Availability(name, False, reason)
        reasons.append(reason)
    return Availability(name, True, "; ".join(reasons))


def drop_unavailable_optional(
    config: dict[str, Any], raw_root: Path = Path("results/data/raw"), timeout: float = 10.0
) -> tuple[dict[str, Any], list[Availability]]:
    """The config without the environments of unavailable optional datasets, and what was dropped.

    Every experiment loses those environments; an experiment left with none is removed, with the
    tables that read it. The input config is not modified.
    """
    environments = config.get("environments", {})
    used = {
        env.get("dataset")
        for name, env in environments.items()
        if any(name in experiment.get("environments", []) for experiment in config.get("experiments", {}).values())
    }
    data = config.get("data", {})
    skipped = [
        status
        for status in (
            dataset_availability(dataset, raw_root, data.get("mirror"), bool(data.get("offline")), timeout)
            for dataset in sorted(d for d in used if d in DATASETS and DATASETS[d].optional)
        )
        if not status.available
    ]
    if not skipped:
        return config, []
    gone = {status.dataset for status in skipped}
    dropped_envs = {name for name, env in environments.items() if env.get("dataset") in gone}
    pruned = copy.deepcopy(config)
    for name in list(pruned["experiments"]):
        experiment = pruned["experiments"][name]
        experiment["environments"] = [env for env in experiment["environments"] if env not in dropped_envs]
        for entry in experiment.get("policies", {}).values():
            if isinstance(entry, dict) and "environments" in entry:
                entry["environments"] = [env for env in entry["environments"] if env not in dropped_envs]
        if not experiment["environments"]:
            del pruned["experiments"][name]
    kept = (*pruned["experiments"], "all")
    for table in pruned.get("tables", {}).values():
        if isinstance(table.get("experiment"), list):
            table["experiment"] = [name for name in table["experiment"] if name in kept]
    pruned["tables"] = {
        name: table
        for name, table in pruned.get("tables", {}).items()
        if (table.get("experiment") or None)
        and all(
            name in kept
            for name in (table["experiment"] if isinstance(table["experiment"], list) else [table["experiment"]])
        )
    }
    for status in skipped:
        print(
            f"hare: optional dataset {status.dataset!r} skipped: {status.reason}. "
            "Its environments "
            f"({', '.join(sorted(e for e in dropped_envs if environments[e].get('dataset') == status.dataset))}) "
            f"are left out of every table; see {SKIPPED_FILE}.",
            file=sys.stderr,
        )
    return pruned, skipped
