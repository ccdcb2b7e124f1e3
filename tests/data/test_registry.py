import dataclasses
import gzip
import hashlib
from pathlib import Path

import pytest

from hare.data.encoding import PREPARATIONS, encode
from hare.data.fetch import DEFAULT_MIRROR
from hare.data.registry import DATASETS, DatasetShape, DatasetSpec, RemoteFile, get_dataset

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


def incomplete_fields(spec: DatasetSpec) -> list[str]:
    """The fields of a record that are missing or malformed: its provenance, its display name, its shape (the memory
    estimate's) and its readers (a classification dataset's two, a logged dataset's one)."""
    shape_ok = isinstance(spec.shape, DatasetShape) and all(isinstance(n, int) and n >= 1 for n in spec.shape)
    checks = {
        "files": bool(spec.files),
        "licence": bool(spec.licence),
        "citation": bool(spec.citation),
        "homepage": bool(spec.homepage),
        "kind": spec.kind in ("classification", "logged"),
        "display_name": isinstance(spec.display_name, str) and bool(spec.display_name.strip()),
        "shape": shape_ok and (spec.kind != "classification" or spec.shape.arms >= 2),
        "reader": callable(spec.reader),
        "reference_reader": callable(spec.reference_reader)
        if spec.kind == "classification"
        else spec.reference_reader is None,
    }
    return [field for field, ok in checks.items() if not ok]


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_every_record_is_complete(name):
    """Adding a dataset is one record plus its reader (docs/adding_a_dataset.md): the record says all of it."""
    assert DATASETS[name].name == name
    assert incomplete_fields(DATASETS[name]) == []


def test_an_incomplete_record_is_caught():
    planted = dataclasses.replace(get_dataset("magic"), display_name="", shape=None, reference_reader=None)
    assert incomplete_fields(planted) == ["display_name", "shape", "reference_reader"]
    assert incomplete_fields(dataclasses.replace(get_dataset("open_bandit"), reader=None)) == ["reader"]


def _read_shape(spec: DatasetSpec, raw: Path) -> DatasetShape:
    """The shape of a dataset's prepared files, from its readers (no file written): the most rows, features and arms
    over its preparations."""
    if spec.kind == "logged":
        arrays, _ = spec.reader(raw)
        features = arrays["contexts"].shape[1] + arrays["item_features"].shape[1]
        return DatasetShape(len(arrays["actions"]), features, int(arrays["n_actions"]))
    features, labels, classes = spec.reader(raw)
    table = spec.reference_reader(raw)
    widths = [encode(table, preparation).shape[1] for preparation in PREPARATIONS]
    return DatasetShape(
        max(len(labels), len(table.labels)), max(features.shape[1], *widths), max(len(classes), len(table.classes))
    )


@pytest.mark.parametrize("name", [name for name, spec in DATASETS.items() if all(f.mirror_path for f in spec.files)])
def test_recorded_shapes_match_the_vendored_files(name, raw_dir):
    """The shape a record states (read by the memory estimate instead of the file) is that of its prepared files, for
    every dataset the mirror holds (Covertype, download-only, is checked when it is prepared)."""
    assert _read_shape(DATASETS[name], raw_dir) == DATASETS[name].shape


def test_the_report_shows_each_dataset_by_its_record():
    """The report's display name of a dataset environment is its record's, read from the record (no copy)."""
    from hare.report.names import display_name

    assert {name: display_name(name) for name in DATASETS} == {
        name: spec.display_name for name, spec in DATASETS.items()
    }
