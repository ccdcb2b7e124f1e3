import dataclasses
import functools
import hashlib
import http.server
import logging
import os
import shutil
import stat
import threading
from pathlib import Path

import pytest

from hare.data import registry
from hare.data.errors import DataIntegrityError, DatasetUnavailable
from hare.data.fetch import DEFAULT_MIRROR, fetch_dataset
from hare.io import file_sha256 as sha256_of

MUSHROOM_SHA = "e65d082030501a3ebcbcd7c9f7c71aa9d28fdfff463bf4cf4716a3fe13ac360e"


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def _flip_byte(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.chmod(0o644)
    path.write_bytes(bytes(data))


def _with_url(monkeypatch, name: str, url: str) -> None:
    spec = registry.DATASETS[name]
    files = tuple(dataclasses.replace(f, url=url) for f in spec.files)
    monkeypatch.setitem(registry.DATASETS, name, dataclasses.replace(spec, files=files))


@pytest.fixture
def corrupt_mirror(tmp_path) -> Path:
    mirror = tmp_path / "mirror"
    shutil.copytree(DEFAULT_MIRROR / "uci_mushroom", mirror / "uci_mushroom")
    shutil.copytree(DEFAULT_MIRROR / "uci_adult", mirror / "uci_adult")
    _flip_byte(mirror / "uci_mushroom" / "agaricus-lepiota.data", 1000)
    _flip_byte(mirror / "uci_adult" / "adult.data.gz", 5000)
    return mirror


def test_offline_fetch_from_mirror_is_idempotent(tmp_path, caplog):
    dest = tmp_path / "raw"
    with caplog.at_level(logging.INFO, logger="hare.data.fetch"):
        (path,) = fetch_dataset("mushroom", dest, offline=True)
    assert path == dest / "agaricus-lepiota.data"
    assert sha256_of(path) == MUSHROOM_SHA
    assert "from mirror" in caplog.text
    mtime = path.stat().st_mtime_ns

    caplog.clear()
    with caplog.at_level(logging.INFO, logger="hare.data.fetch"):
        assert fetch_dataset("mushroom", dest, offline=True) == [path]
    assert path.stat().st_mtime_ns == mtime
    assert "already present" in caplog.text
    assert _files(dest) == ["agaricus-lepiota.data"]


def test_gzip_mirror_copy_is_decompressed(tmp_path):
    paths = fetch_dataset("adult", tmp_path, offline=True)
    assert [p.name for p in paths] == ["adult.data", "adult.test"]
    assert [sha256_of(p) for p in paths] == [f.sha256 for f in registry.DATASETS["adult"].files]
    assert paths[1].read_text().startswith("|1x3 Cross validator")


def test_corrupted_mirror_raises_and_leaves_nothing(tmp_path, corrupt_mirror):
    dest = tmp_path / "raw"
    mirror_file = corrupt_mirror / "uci_mushroom" / "agaricus-lepiota.data"
    with pytest.raises(DataIntegrityError) as info:
        fetch_dataset("mushroom", dest, mirror_dir=corrupt_mirror, offline=True)
    message = str(info.value)
    assert "agaricus-lepiota.data" in message
    assert MUSHROOM_SHA in message
    assert hashlib.sha256(mirror_file.read_bytes()).hexdigest() in message
    assert str(mirror_file) in message
    assert _files(dest) == []


def test_undecodable_gzip_mirror_raises_and_leaves_nothing(tmp_path, corrupt_mirror):
    dest = tmp_path / "raw"
    with pytest.raises(DataIntegrityError, match="adult.data"):
        fetch_dataset("adult", dest, mirror_dir=corrupt_mirror, offline=True)
    assert _files(dest) == []


def test_wrong_existing_file_is_replaced(tmp_path):
    (tmp_path / "magic04.data").write_text("not the data\n")
    (path,) = fetch_dataset("magic", tmp_path, offline=True)
    assert sha256_of(path) == registry.DATASETS["magic"].files[0].sha256


def test_unreachable_url_falls_back_to_mirror(tmp_path, monkeypatch, caplog):
    _with_url(monkeypatch, "mushroom", "https://127.0.0.1:9/x")
    with caplog.at_level(logging.INFO, logger="hare.data.fetch"):
        (path,) = fetch_dataset("mushroom", tmp_path, timeout=2.0)
    assert sha256_of(path) == MUSHROOM_SHA
    assert "https://127.0.0.1:9/x" in caplog.text and "from mirror" in caplog.text
    assert _files(tmp_path) == ["agaricus-lepiota.data"]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def http_root(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_download_from_url(tmp_path, monkeypatch, http_root, caplog):
    root, base = http_root
    shutil.copy(DEFAULT_MIRROR / "uci_mushroom" / "agaricus-lepiota.data", root / "m.data")
    _with_url(monkeypatch, "mushroom", f"{base}/m.data")
    dest = tmp_path / "raw"
    with caplog.at_level(logging.INFO, logger="hare.data.fetch"):
        (path,) = fetch_dataset("mushroom", dest, mirror_dir=tmp_path / "no-mirror")
    assert sha256_of(path) == MUSHROOM_SHA
    assert f"downloaded from {base}/m.data" in caplog.text


def test_download_with_wrong_hash_raises_and_leaves_nothing(tmp_path, monkeypatch, http_root):
    root, base = http_root
    (root / "m.data").write_text("tampered\n")
    _with_url(monkeypatch, "mushroom", f"{base}/m.data")
    dest = tmp_path / "raw"
    with pytest.raises(DataIntegrityError) as info:
        fetch_dataset("mushroom", dest)
    message = str(info.value)
    assert MUSHROOM_SHA in message and f"{base}/m.data" in message
    assert hashlib.sha256(b"tampered\n").hexdigest() in message
    assert _files(dest) == []


def test_optional_dataset_without_mirror_is_unavailable(tmp_path):
    with pytest.raises(DatasetUnavailable, match="covtype.data.gz.*no mirror copy"):
        fetch_dataset("covertype", tmp_path, offline=True)
    assert _files(tmp_path) == []


def test_unknown_dataset(tmp_path):
    with pytest.raises(KeyError, match="valid names"):
        fetch_dataset("iris", tmp_path, offline=True)


@pytest.fixture
def umask_022():
    """The umask 0o022 for the test (written files then get 0o644), restored after it."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_mirror_copies_get_the_mode_of_a_plain_write(tmp_path, umask_022):
    paths = fetch_dataset("mushroom", tmp_path / "raw", offline=True) + fetch_dataset(
        "adult", tmp_path / "raw", offline=True
    )
    assert {path.name: _mode(path) for path in paths} == {path.name: 0o644 for path in paths}


def test_downloads_get_the_mode_of_a_plain_write(tmp_path, monkeypatch, http_root, umask_022):
    root, base = http_root
    shutil.copy(DEFAULT_MIRROR / "uci_mushroom" / "agaricus-lepiota.data", root / "m.data")
    _with_url(monkeypatch, "mushroom", f"{base}/m.data")
    (path,) = fetch_dataset("mushroom", tmp_path / "raw", mirror_dir=tmp_path / "no-mirror")
    assert _mode(path) == 0o644
