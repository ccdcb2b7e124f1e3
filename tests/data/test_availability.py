"""Optional datasets: available from a fetched copy or the mirror, skipped with a reason otherwise."""

import gzip
import json

import pytest

from hare.data import availability
from hare.data.availability import dataset_availability, drop_unavailable_optional
from hare.data.registry import DATASETS, DatasetSpec, RemoteFile
from hare.report.paper import write_skipped

PAYLOAD = b"1,2,3\n"


@pytest.fixture
def optional_dataset(monkeypatch):
    """A one-file optional dataset ``toy`` with a mirror path, registered for the test only."""
    import hashlib

    spec = DatasetSpec(
        name="toy",
        files=(
            RemoteFile(
                "toy.csv",
                "http://example.invalid/toy.csv",
                hashlib.sha256(PAYLOAD).hexdigest(),
                "toy/toy.csv.gz",
                "gzip",
            ),
        ),
        licence="test",
        citation="test",
        homepage="http://example.invalid",
        kind="classification",
        optional=True,
    )
    monkeypatch.setitem(DATASETS, "toy", spec)
    return spec


def _config(mirror=None, offline=True):
    return {
        "data": {"offline": offline, "mirror": mirror},
        "environments": {
            "toy_env": {"kind": "classification", "dataset": "toy"},
            "mushroom": {"kind": "classification", "dataset": "mushroom"},
        },
        "experiments": {
            "classification": {
                "environments": ["mushroom", "toy_env"],
                "policies": {"linucb": {"environments": ["toy_env", "mushroom"]}},
            },
            "only_toy": {"environments": ["toy_env"], "policies": {"random": {}}},
        },
        "tables": {
            "classification": {"experiment": "classification"},
            "only_toy": {"experiment": "only_toy"},
            "compute": {"experiment": "all"},
        },
    }


def test_offline_without_mirror_copy_is_skipped_with_the_reason(optional_dataset, tmp_path):
    status = dataset_availability("toy", tmp_path / "raw", tmp_path / "mirror", offline=True)
    assert not status.available and "toy.csv" in status.reason and "data.offline is true" in status.reason


def test_mirror_copy_or_fetched_file_makes_it_available(optional_dataset, tmp_path):
    (tmp_path / "mirror" / "toy").mkdir(parents=True)
    (tmp_path / "mirror" / "toy" / "toy.csv.gz").write_bytes(gzip.compress(PAYLOAD))
    assert dataset_availability("toy", tmp_path / "raw", tmp_path / "mirror", offline=True).available
    (tmp_path / "raw" / "toy").mkdir(parents=True)
    (tmp_path / "raw" / "toy" / "toy.csv").write_bytes(PAYLOAD)
    status = dataset_availability("toy", tmp_path / "raw", tmp_path / "empty", offline=True)
    assert status.available and "already fetched" in status.reason
    (tmp_path / "raw" / "toy" / "toy.csv").write_bytes(b"corrupted")
    assert not dataset_availability("toy", tmp_path / "raw", tmp_path / "empty", offline=True).available


def test_unreachable_url_is_skipped_naming_it(optional_dataset, tmp_path, monkeypatch):
    import requests

    def refuse(*args, **kwargs):
        raise requests.exceptions.ConnectionError("no route")

    monkeypatch.setattr(availability.requests, "head", refuse)
    status = dataset_availability("toy", tmp_path / "raw", tmp_path / "mirror", offline=False)
    assert not status.available and "http://example.invalid/toy.csv unreachable" in status.reason


def test_unavailable_optional_dataset_leaves_every_experiment(optional_dataset, tmp_path, capsys):
    config = _config(mirror=str(tmp_path / "mirror"))
    pruned, skipped = drop_unavailable_optional(config, tmp_path / "raw")
    assert [s.dataset for s in skipped] == ["toy"]
    assert pruned["experiments"]["classification"]["environments"] == ["mushroom"]
    assert pruned["experiments"]["classification"]["policies"]["linucb"]["environments"] == ["mushroom"]
    assert "only_toy" not in pruned["experiments"] and sorted(pruned["tables"]) == ["classification", "compute"]
    assert config["experiments"]["classification"]["environments"] == ["mushroom", "toy_env"], (
        "the input config is not modified"
    )
    assert "optional dataset 'toy' skipped" in capsys.readouterr().err


def test_available_optional_dataset_keeps_the_config(optional_dataset, tmp_path):
    (tmp_path / "mirror" / "toy").mkdir(parents=True)
    (tmp_path / "mirror" / "toy" / "toy.csv.gz").write_bytes(gzip.compress(PAYLOAD))
    config = _config(mirror=str(tmp_path / "mirror"))
    assert drop_unavailable_optional(config, tmp_path / "raw") == (config, [])


def test_skipped_record_and_macro(tmp_path):
    write_skipped(
        {
            "skipped": [
                {"dataset": "covertype", "reason": "covtype.data.gz: no mirror copy, and data.offline is true"}
            ],
            "stems": [],
            "tables": [],
        },
        tmp_path / "s.json",
        tmp_path / "s.tex",
    )
    assert json.loads((tmp_path / "s.json").read_text())["skipped"][0]["dataset"] == "covertype"
    assert (
        r"\newcommand{\skippedDatasets}{covertype (covtype.data.gz: no mirror copy, and data.offline is true)}"
        in (tmp_path / "s.tex").read_text()
    )
    write_skipped({"skipped": [], "stems": [], "tables": []}, tmp_path / "n.json", tmp_path / "n.tex")
    assert r"\newcommand{\skippedDatasets}{none}" in (tmp_path / "n.tex").read_text()
    with pytest.raises(ValueError, match="keys dataset and reason"):
        write_skipped(
            {"skipped": [{"dataset": "x"}], "stems": [], "tables": []}, tmp_path / "b.json", tmp_path / "b.tex"
        )
