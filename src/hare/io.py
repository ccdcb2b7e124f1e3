"""Atomic, deterministic result files and their provenance sidecars.

Every file the library writes goes to a temporary name in the destination folder
(``.<name>.<random>.tmp``) and is renamed into place, so a killed job never leaves a
file that looks complete. A process killed by SIGKILL cannot delete its temporary
file; :func:`remove_stale_temporaries` removes those of one destination before it is
written again.
``.npz`` files are written with fixed zip timestamps, so the same arrays give the
same bytes; nothing is ever read with ``allow_pickle=True``. A run's sidecar is strict JSON: a NaN or an
infinity never reaches it (:func:`write_result`).

Configs and registers are read by :func:`read_yaml`: safe YAML whose mappings may not repeat a key, with
one-line errors naming the file and where in it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import math
import os
import platform
import subprocess
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import yaml

_FIXED_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        set_written_mode(tmp_path)
        os.replace(tmp_path, path)
    finally:
        tmp_path.unlink(missing_ok=True)


def current_umask() -> int:
    """The process's umask (read by setting and restoring it): written files get ``0o666 & ~umask``, as ``open``
    would give them, instead of the ``0o600`` of a temporary file."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def temporary_names(path: str | os.PathLike) -> list[Path]:
    """Temporary files :func:`atomic_path` left next to ``path`` (by a killed writer), sorted."""
    path = Path(path)
    if not path.parent.is_dir():
        return []
    return sorted(path.parent.glob(f".{glob_escape(path.name)}.*.tmp"))


def glob_escape(name: str) -> str:
    """``name`` with the glob metacharacters ``*?[`` made literal."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def remove_stale_temporaries(path: str | os.PathLike) -> list[Path]:
    """Delete the temporary files a killed writer of ``path`` left behind; return them.

    Only call this while no other process writes ``path`` (the workflow runs one job per output).
    """
    stale = temporary_names(path)
    for tmp in stale:
        tmp.unlink(missing_ok=True)
    return stale


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` atomically, as UTF-8 whatever the locale."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(path: str | os.PathLike, payload: Any, allow_nan: bool = True) -> None:
    """Write ``payload`` as sorted, indented JSON, atomically. ``allow_nan=False``: strict JSON, a NaN or an infinity
    raises ``ValueError`` naming its key path (:func:`first_nonfinite`) and nothing is written."""
    if not allow_nan:
        refuse_nonfinite(payload, f"{path}: ")
    write_text(path, json.dumps(payload, indent=2, sort_keys=True, default=_json_default, allow_nan=allow_nan) + "\n")


def _json_default(value: Any) -> Any:
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot serialise {type(value).__name__} to JSON")


def first_nonfinite(value: Any, path: str = "") -> tuple[str, float] | None:
    """``(key path, number)`` of the first NaN or infinity in ``value`` (mappings, lists and tuples walked in order;
    a float or a numpy floating point number), or ``None``. Key paths read ``a.b[2].c``."""
    if isinstance(value, (float, np.floating)):
        return None if math.isfinite(value) else (path or "<top level>", float(value))
    if isinstance(value, dict):
        items = ((f"{path}.{key}" if path else str(key), item) for key, item in value.items())
    elif isinstance(value, (list, tuple)):
        items = ((f"{path}[{index}]", item) for index, item in enumerate(value))
    else:
        return None
    for where, item in items:
        found = first_nonfinite(item, where)
        if found is not None:
            return found
    return None


def yaml_number(value: float) -> str:
    """A non-finite number as YAML spells it (``.nan``, ``.inf``, ``-.inf``); a finite one as ``repr``."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    return repr(value)


def refuse_nonfinite(value: Any, where: str = "") -> None:
    """Raise ``ValueError`` ``<where><key path>: .inf is not a finite number`` for the first NaN or infinity of
    ``value``."""
    found = first_nonfinite(value)
    if found is not None:
        raise ValueError(f"{where}{found[0]}: {yaml_number(found[1])} is not a finite number")


class UnreadableYAMLError(ValueError):
    """A YAML file that cannot be read as one mapping of unique keys: not UTF-8, not YAML, or a key given twice.
    The message is one line naming the file and where in it."""


class UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a mapping with a key given twice (PyYAML keeps the last silently).

    Keys are compared as written with their resolved tags (``a`` and ``'a'`` are the same string); a merge
    (``<<: *anchor``) is not a key, so the keys it brings may be overridden as YAML intends."""

    def compose_mapping_node(self, anchor: str | None) -> yaml.MappingNode:
        node = super().compose_mapping_node(anchor)
        seen: dict[tuple[str, str], yaml.Mark] = {}
        for key, _ in node.value:
            if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
                continue
            first = seen.setdefault((key.tag, key.value), key.start_mark)
            if first is not key.start_mark:
                raise yaml.composer.ComposerError(
                    None, None, f"duplicate key {key.value!r} (first at line {first.line + 1})", key.start_mark
                )
        return node


def read_yaml(path: str | os.PathLike, loader: type[yaml.SafeLoader] = UniqueKeyLoader) -> Any:
    """The YAML document of ``path``, read with ``loader`` (:class:`UniqueKeyLoader`, or a subclass of it such as the
    config boundary's loader).

    Raises :class:`UnreadableYAMLError` in one line naming the file: a byte that is not UTF-8 (its byte offset and
    line), a syntax error or a duplicate key (line and column). A missing file stays a ``FileNotFoundError``.
    """
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise UnreadableYAMLError(
            f"{path}: not UTF-8 text: byte 0x{data[error.start]:02x} at byte offset {error.start} "
            f"(line {line}): {error.reason}"
        ) from error
    try:
        return yaml.load(text, Loader=loader)  # noqa: S506 (a SafeLoader subclass)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error)
        raise UnreadableYAMLError(f"{path}: not valid YAML{where}: {' '.join(str(problem).split())}") from error


def write_npz(path: str | os.PathLike, **arrays: np.ndarray) -> None:
    """Deterministic compressed ``.npz``: same arrays, same bytes (fixed zip timestamps, sorted names)."""
    with atomic_path(path) as tmp, zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(arrays):
            array = np.asarray(arrays[name])
            if array.dtype == object:
                raise TypeError(f"array {name!r} has dtype object, which would need pickle")
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, array, allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_FIXED_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, buffer.getvalue())


class UnreadableResultError(ValueError):
    """A result file exists but cannot be read (truncated, corrupted, not an ``.npz``), or differs from the sha256
    its sidecar recorded when it was written."""


SIDECAR_HASH_KEY = "npz_sha256"
"""The sidecar field holding the sha256 of its ``.npz``, written with it (:func:`write_result`)."""

REBUILD_HINT = (
    "remove it with `hare verify --repair` (or delete it) and run snakemake again to rebuild it and everything after it"
)


def write_result(npz_path: str | os.PathLike, arrays: dict[str, np.ndarray], sidecar: dict[str, Any]) -> dict[str, Any]:
    """Write a result: the ``.npz`` of ``arrays``, then its sidecar ``.json`` (last, so a complete sidecar means a
    complete result) with :data:`SIDECAR_HASH_KEY`, the sha256 of the ``.npz`` bytes; returns the sidecar. The sidecar
    is strict JSON: a NaN or an infinity in it raises ``ValueError`` naming its key path before anything is written."""
    npz_path = Path(npz_path)
    refuse_nonfinite(sidecar, f"{npz_path.with_suffix('.json')}: ")  # before the .npz: no result without its sidecar
    write_npz(npz_path, **arrays)
    sidecar = {**sidecar, SIDECAR_HASH_KEY: file_sha256(npz_path)}
    write_json(npz_path.with_suffix(".json"), sidecar, allow_nan=False)
    return sidecar


def sidecar_mismatch(npz_path: str | os.PathLike, digest: str | None = None) -> str | None:
    """Why ``npz_path`` disagrees with the sha256 its sidecar recorded, or ``None`` (no sidecar, no recorded hash,
    or equal). An unreadable sidecar is a mismatch. ``digest``: the file's sha256 when the caller has it already."""
    npz_path = Path(npz_path)
    sidecar_path = npz_path.with_suffix(".json")
    if not sidecar_path.is_file():
        return None
    try:
        expected = json.loads(sidecar_path.read_text()).get(SIDECAR_HASH_KEY)
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError) as error:
        return f"its sidecar {sidecar_path} is unreadable ({error})"
    if expected is None:
        return None
    actual = digest or file_sha256(npz_path)
    return None if actual == expected else f"sha256 {actual} differs from the {expected} its sidecar recorded"


def run_files(paths: Iterable[str | os.PathLike], say: Callable[[str], None]) -> Iterator[tuple[Path, dict]]:
    """``(path, sidecar)`` for every ``.npz`` run file among ``paths`` that has its ``.json`` sidecar, in order; a run
    file or sidecar that is missing is reported through ``say`` and skipped, and any other suffix is passed over. The
    notebooks read their run files through it."""
    for path in map(Path, paths):
        if path.suffix != ".npz":
            continue
        if not path.is_file() or not path.with_suffix(".json").is_file():
            say(f"skipped {path}: no such run file or sidecar")
            continue
        yield path, json.loads(path.with_suffix(".json").read_text())


def read_npz(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Every array of an ``.npz`` file, loaded without pickle, after checking it against the sha256 its sidecar
    recorded (:func:`sidecar_mismatch`). A file that cannot be read or that changed since it was written raises
    :class:`UnreadableResultError` naming it and how to rebuild it (a missing file stays a ``FileNotFoundError``)."""
    if Path(path).is_file():
        problem = sidecar_mismatch(path)
        if problem:
            raise UnreadableResultError(f"{path}: {problem}; {REBUILD_HINT}")
    try:
        with np.load(path, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except FileNotFoundError:
        raise
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, KeyError) as error:
        raise UnreadableResultError(
            f"{path}: not a readable .npz ({type(error).__name__}: {error}); {REBUILD_HINT}"
        ) from error


def config_hash(payload: Any) -> str:
    """sha256 of the canonical JSON of ``payload`` (first 16 hex digits)."""
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=_json_default)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def file_sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@functools.lru_cache(maxsize=8)
def git_commit(root: str | os.PathLike | None = None) -> str:
    """The checkout's commit, with ``+dirty`` when tracked files differ; ``unknown`` outside git. Asked once per
    process and root (every job of a batch records the same)."""
    cwd = Path(root) if root else Path(__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + ("+dirty" if dirty else "")


def package_versions(
    names: tuple[str, ...] = ("torch", "numpy", "scipy", "sympy", "snakemake", "hare"),
) -> dict[str, str]:
    """``{"python": version, name: version or "not installed"}``, read once per process and ``names``."""
    return dict(_package_versions(tuple(names)))


@functools.lru_cache(maxsize=8)
def _package_versions(names: tuple[str, ...]) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    versions = {"python": platform.python_version()}
    for name in names:
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def set_written_mode(path: str | os.PathLike) -> None:
    """Give ``path`` the mode a plain ``open(path, "w")`` would have given it, ``0o666 & ~umask``: for a file
    written under a temporary name (``tempfile.mkstemp`` and pooch create ``0o600`` files) before it is renamed
    into place."""
    os.chmod(path, 0o666 & ~current_umask())
