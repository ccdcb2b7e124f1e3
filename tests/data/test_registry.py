import dataclasses
import gzip
import hashlib
from pathlib import Path

import pytest

from hare.data.fetch import DEFAULT_MIRROR
from hare.data.registry import DATASETS, DatasetSpec, RemoteFile, get_dataset

ALL_FILES = [(name, f) for name, spec in DATASETS.items() for f in spec.files]


def _canonical_sha256(path: Path, compressed: str | None) -> str:
    data = path.read_bytes()
    if compressed == "gzip":
        data = gzip.decompress(data)
    return hashlib.sha256(data).hexdigest()


def test_dataset_keys():
    assert set(DATASETS) == {"adult", "mushroom", "magic", "shuttle", "mnist", "covertype", "open_bandit"}
    assert all(spec.name == name for name, spec in DATASETS.items())


@pytest.mark.parametrize(
    ("name", "rf"),
    [(n, f) for n, f in ALL_FILES if f.mirror_path],
    ids=lambda x: x.name if isinstance(x, RemoteFile) else x,
)
def test_registry_sha256_matches_mirror(name, rf):
    path = DEFAULT_MIRROR / rf.mirror_path
    assert path.is_file(), f"{name}: mirror file {path} missing"
    assert _canonical_sha256(path, rf.compressed) == rf.sha256


def test_mirror_sha256sums_file_is_accurate():
    lines = (DEFAULT_MIRROR / "SHA256SUMS").read_text().splitlines()
    assert len(lines) == 20
    for line in lines:
        digest, rel = line.split(maxsplit=1)
        assert hashlib.sha256((DEFAULT_MIRROR / rel).read_bytes()).hexdigest() == digest, rel


def test_every_mirror_folder_has_provenance():
    folders = [p for p in DEFAULT_MIRROR.iterdir() if p.is_dir()]
    assert len(folders) == 6
    for folder in folders:
        assert (folder / "PROVENANCE.md").is_file()


def test_files_are_https_and_sha256_pinned():
    for _, rf in ALL_FILES:
        assert rf.url.startswith("https://")
        assert len(rf.sha256) == 64 and int(rf.sha256, 16) >= 0
        assert rf.compressed in (None, "gzip")


def test_covertype_is_optional_without_mirror():
    spec = get_dataset("covertype")
    assert spec.optional and spec.kind == "classification"
    (rf,) = spec.files
    assert rf.mirror_path == ""
    assert rf.sha256 == "614360d0257557dd1792834a85a1cdebfadc3c4f30b011d56afee7ffb5b15771"
    assert rf.url.startswith("https://archive.ics.uci.edu/")


def test_kinds_and_metadata():
    assert get_dataset("open_bandit").kind == "logged"
    for spec in DATASETS.values():
        assert isinstance(spec, DatasetSpec)
        assert spec.licence and spec.citation and spec.homepage
        assert spec.optional == (spec.name == "covertype")


def test_specs_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        get_dataset("magic").name = "other"


def test_unknown_name_lists_valid_names():
    with pytest.raises(KeyError, match="mushroom") as info:
        get_dataset("iris")
    assert "iris" in str(info.value) and "open_bandit" in str(info.value)
