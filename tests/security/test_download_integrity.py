"""A download cut off half-way never leaves a file that later passes as valid."""

import dataclasses
import http.server
import threading
from pathlib import Path

import pytest

from hare.data import registry
from hare.data.errors import DataIntegrityError, DatasetUnavailable
from hare.data.fetch import DEFAULT_MIRROR, fetch_dataset

MUSHROOM = DEFAULT_MIRROR / "uci_mushroom" / "agaricus-lepiota.data"


class _TruncatingHandler(http.server.BaseHTTPRequestHandler):
    """Announces the full length, sends half of the bytes, then drops the connection."""

    def do_GET(self):
        data = MUSHROOM.read_bytes()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[: len(data) // 2])
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, *args):
        pass


@pytest.fixture
def truncating_url(monkeypatch):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _TruncatingHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/m.data"
    spec = registry.DATASETS["mushroom"]
    monkeypatch.setitem(
        registry.DATASETS,
        "mushroom",
        dataclasses.replace(spec, files=tuple(dataclasses.replace(f, url=url) for f in spec.files)),
    )
    yield url
    server.shutdown()
    server.server_close()


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_truncated_download_without_mirror_leaves_nothing(tmp_path, truncating_url):
    dest = tmp_path / "raw"
    with pytest.raises((DataIntegrityError, DatasetUnavailable)):
        fetch_dataset("mushroom", dest, mirror_dir=tmp_path / "no-mirror", timeout=5.0)
    assert _files(dest) == []


def test_truncated_download_falls_back_to_the_verified_mirror(tmp_path, truncating_url):
    dest = tmp_path / "raw"
    (path,) = fetch_dataset("mushroom", dest, timeout=5.0)
    assert path.read_bytes() == MUSHROOM.read_bytes()
    assert _files(dest) == ["agaricus-lepiota.data"]
