"""The config schema takes its dataset names from the dataset registry (one record per dataset)."""

from __future__ import annotations

from hare.data.registry import DATASETS
from hare.experiments.settings.schema import SCHEMA_PATH, schema_errors


def test_the_schema_file_names_no_dataset():
    text = SCHEMA_PATH.read_text()
    assert not [name for name in DATASETS if f" {name}," in text or f"[{name}," in text or f" {name}]" in text]


def test_a_dataset_is_accepted_by_its_record_and_an_unknown_one_refused_naming_its_key():
    config = {"environments": {"x": {"kind": "classification", "dataset": "mnist"}}}
    assert not [e for e in schema_errors(config) if e.startswith("environments.x.dataset")]
    config["environments"]["x"]["dataset"] = "iris"
    errors = [e for e in schema_errors(config) if e.startswith("environments.x.dataset")]
    assert errors and "'iris' is not one of" in errors[0] and "'mushroom'" in errors[0]
