"""Download dataset files from their canonical URL, falling back to the vendored mirror.

Every file ends up in ``dest_dir / RemoteFile.name`` with exactly the sha256 pinned in
:mod:`hare.data.registry`. Files are written atomically: a failed attempt leaves neither a
partial nor a temporary file behind.
"""

from __future__ import annotations

import gzip
import logging
import os
import re
import shutil
import tempfile
import zlib
from pathlib import Path

import pooch
import requests

from hare.data.errors import DataIntegrityError, DatasetUnavailable
from hare.data.registry import RemoteFile, get_dataset
from hare.io import file_sha256, set_written_mode

log = logging.getLogger(__name__)

DEFAULT_MIRROR = Path(__file__).parent / "mirror"
_CHUNK = 1 << 20


def fetch_dataset(
    name: str,
    dest_dir: Path,
    mirror_dir: Path | None = None,
    offline: bool = False,
    timeout: float = 10.0,
) -> list[Path]:
    """Make every file of dataset ``name`` present and verified under ``dest_dir``.

    For each file: keep it if it already exists with the pinned sha256; otherwise download it
    from the canonical URL (skipped when ``offline``; each network operation is bounded by
    ``timeout`` seconds); if that fails for a network reason, copy it from the mirror.

    Returns the paths of the files, in registry order.

    Raises:
        KeyError: unknown dataset.
        DataIntegrityError: downloaded or mirrored bytes do not match the pinned sha256.
        DatasetUnavailable: neither the URL nor a mirror copy could provide a file.
    """
    spec = get_dataset(name)
    dest_dir = Path(dest_dir)
    mirror_dir = DEFAULT_MIRROR if mirror_dir is None else Path(mirror_dir)
    return [_fetch_file(f, dest_dir, mirror_dir, offline, timeout) for f in spec.files]


def _fetch_file(rf: RemoteFile, dest_dir: Path, mirror_dir: Path, offline: bool, timeout: float) -> Path:
    target = dest_dir / rf.name
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        if file_sha256(target) == rf.sha256:
            log.info("%s: already present with the pinned sha256 at %s", rf.name, target)
            return target
        log.warning("%s: existing file at %s has the wrong sha256; replacing it", rf.name, target)
        target.unlink()

    reason = "offline mode"
    if not offline:
        try:
            _download(rf, target, timeout)
            log.info("%s: downloaded from %s", rf.name, rf.url)
            return target
        except (requests.exceptions.RequestException, OSError) as exc:
            reason = f"download from {rf.url} failed: {_short(exc)}"

    if not rf.mirror_path:
        raise DatasetUnavailable(
            f"{rf.name}: not available ({reason}) and there is no mirror copy; "
            f"download {rf.url} manually into {target.parent} or retry when online"
        )
    source = mirror_dir / rf.mirror_path
    if not source.is_file():
        raise DatasetUnavailable(f"{rf.name}: not available ({reason}) and mirror copy {source} does not exist")
    _copy_verified(source, target, rf)
    log.info("%s: copied from mirror %s (%s)", rf.name, source, reason)
    return target


def _download(rf: RemoteFile, target: Path, timeout: float) -> None:
    downloader = pooch.HTTPDownloader(timeout=timeout, progressbar=False)
    try:
        pooch.retrieve(
            rf.url, known_hash=f"sha256:{rf.sha256}", fname=target.name, path=target.parent, downloader=downloader
        )
    except ValueError as exc:
        match = re.search(r"but got ([0-9a-fA-F]{64})", str(exc))
        if match is None:
            raise
        raise DataIntegrityError(_mismatch(rf, rf.url, match.group(1))) from None
    set_written_mode(target)  # pooch moves its 0o600 temporary file into place


def _copy_verified(source: Path, target: Path, rf: RemoteFile) -> None:
    """Copy (decompressing if needed) ``source`` to ``target`` via a verified temporary file."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        try:
            with os.fdopen(fd, "wb") as out, _open_source(source, rf.compressed) as src:
                shutil.copyfileobj(src, out, _CHUNK)
        except (OSError, EOFError, zlib.error) as exc:
            raise DataIntegrityError(
                f"{rf.name}: mirror copy {source} cannot be decompressed ({exc}); expected sha256 {rf.sha256}"
            ) from None
        actual = file_sha256(tmp)
        if actual != rf.sha256:
            raise DataIntegrityError(_mismatch(rf, str(source), actual))
        set_written_mode(tmp)  # mkstemp created it 0o600
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _open_source(source: Path, compressed: str | None):
    if compressed is None:
        return open(source, "rb")
    if compressed == "gzip":
        return gzip.open(source, "rb")
    raise ValueError(f"unsupported mirror compression {compressed!r} for {source}")


def _short(exc: BaseException, limit: int = 200) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _mismatch(rf: RemoteFile, source: str, actual: str) -> str:
    return f"sha256 mismatch for {rf.name} from {source}: expected {rf.sha256}, got {actual}"
