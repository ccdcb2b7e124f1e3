"""A content-addressed store of finished experiment jobs, from which a batch restores the jobs that nothing changed.

Snakemake reruns a batch when its specification or its code changed (rules/experiments.smk: the batch's ``code``
param) and deletes the batch's outputs first. The batch then plays only the jobs whose *key* is not in the store and
copies the others' run file and sidecar back byte for byte. A job's key (:func:`job_key`) is the sha256 of

- its specification (the config's job, label and seeds included),
- the digest of the code it runs (:func:`hare.experiments.run.job_record`: the round loop, its policy's and its
  environment's modules),
- the sha256 of its prepared dataset, and of its selection file (a tuned job plays the grid point it names),
- the versions of Python, torch, numpy and the other packages the sidecar records.

So a changed line in one policy module replays the jobs of the policies that module implements (or that import
it), and every other run file stays the same file. The store lives under ``results/store/`` (not in the manifest:
it is a cache, as ``results/logs`` is a log); an entry keeps the sha256 of its two files and is used only when they
still match, so a damaged entry is played again, not restored. Files are hard links where the file system allows
(results are written by atomic rename, never in place), copies elsewhere.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from hare.experiments.job_spec import JobSpec
from hare.io import file_sha256, package_versions, write_json

STORE = "store"
"""The store's folder under the results folder."""


def job_key(spec: JobSpec, code: str, dataset_sha256: str | None, selection: str | os.PathLike | None) -> str:
    """sha256 of what decides a job's run file and sidecar (module docstring): its specification's dict form
    (:meth:`hare.experiments.job_spec.JobSpec.as_dict`); ``code``: the digest of the code the job runs
    (:func:`hare.experiments.run.job_record`)."""
    payload = {
        "job": spec.as_dict(),
        "code": code,
        "dataset": dataset_sha256,
        "selection": file_sha256(selection) if selection else None,
        "versions": package_versions(),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def _place(source: Path, target: Path) -> None:
    """``target`` becomes ``source``'s content: a hard link where possible, else a copy (atomic either way)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.restore")
    temporary.unlink(missing_ok=True)
    try:
        os.link(source, temporary)
    except OSError:
        shutil.copyfile(source, temporary)
    os.replace(temporary, target)


class JobStore:
    """Finished jobs by key under ``folder`` (``<folder>/<key[:2]>/<key>/``: ``run.npz``, ``run.json``,
    ``entry.json`` with their sha256)."""

    def __init__(self, folder: str | os.PathLike):
        self.folder = Path(folder)

    def _entry(self, key: str) -> Path:
        return self.folder / key[:2] / key

    def holds(self, key: str) -> bool:
        """Whether the store has an intact entry for ``key`` (both files match the sha256 it recorded)."""
        entry = self._entry(key)
        try:
            recorded = json.loads((entry / "entry.json").read_text())
            return all(file_sha256(entry / name) == recorded[name] for name in ("run.npz", "run.json"))
        except (OSError, ValueError, KeyError):
            return False

    def restore(self, key: str, out: str | os.PathLike) -> dict[str, Any] | None:
        """Put the stored run file of ``key`` and its sidecar at ``out`` (``.npz``) and beside it, and return the
        sidecar; None (nothing written) when the store has no intact entry for ``key``."""
        if not self.holds(key):
            return None
        entry, out = self._entry(key), Path(out)
        _place(entry / "run.npz", out)
        _place(entry / "run.json", out.with_suffix(".json"))
        return json.loads(out.with_suffix(".json").read_text())

    def save(self, key: str, out: str | os.PathLike) -> None:
        """Keep the run file ``out`` and its sidecar under ``key``."""
        out = Path(out)
        entry = self._entry(key)
        entry.mkdir(parents=True, exist_ok=True)
        _place(out, entry / "run.npz")
        _place(out.with_suffix(".json"), entry / "run.json")
        write_json(entry / "entry.json", {name: file_sha256(entry / name) for name in ("run.npz", "run.json")})
