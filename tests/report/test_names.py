"""The display-name registry covers every label the configs and the policy registry use."""

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from hare.experiments.config import resolve_config_file
from hare.policies.base import policy_names
from hare.report.names import DISPLAY_NAMES, display_name

CONFIGS = sorted(p for p in (Path(__file__).resolve().parents[2] / "config").glob("*.yaml") if p.name != "schema.yaml")


def config_labels(config: Mapping[str, Any]) -> set[str]:
    """Every label a workflow config shows to readers: environments, experiments' policy keys and the registered
    policies they name, tables' policy lists, the theory checks' baselines, policies and variants, and benchmarked
    policies."""
    labels = set(config.get("environments") or {})
    for experiment in (config.get("experiments") or {}).values():
        for label, entry in (experiment.get("policies") or {}).items():
            labels.add(label)
            labels.add((entry or {}).get("policy", label))
    for table in (config.get("tables") or {}).values():
        labels.update(table.get("policies") or [])
    theory = config.get("theory") or {}
    labels.update((theory.get("decomposition") or {}).get("baselines") or [])
    if "policy" in (theory.get("oful") or {}):
        labels.add(theory["oful"]["policy"])
    variants = (theory.get("convergence") or {}).get("variants") or {}
    labels.update(label for label, variant in variants.items() if "name" not in (variant or {}))
    labels.update((config.get("bench") or {}).get("policies") or [])
    return labels


def missing_display_names(labels: Iterable[str]) -> list[str]:
    """The labels (grid points stripped) that have no entry in :data:`DISPLAY_NAMES`, sorted."""
    return sorted({label.partition("@")[0] for label in labels} - set(DISPLAY_NAMES))


def test_the_configs_are_found():
    assert {p.name for p in CONFIGS} >= {"default.yaml", "smoke.yaml"}


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_every_config_label_has_a_display_name(path):
    labels = config_labels(resolve_config_file(path))
    assert "linucb" in labels
    assert missing_display_names(labels) == [], f"{path.name}: add these labels to hare.report.names.DISPLAY_NAMES"


def test_every_registered_policy_has_a_display_name():
    assert missing_display_names(policy_names()) == []


def test_a_label_without_a_name_is_reported():
    config = {
        "environments": {"mushroom": {}, "new_dataset": {}},
        "experiments": {"study": {"policies": {"linucb": {}, "linucb_wide": {"policy": "linucb"}, "new_policy": {}}}},
        "tables": {"t": {"policies": ["linucb", "table_only"]}},
        "theory": {
            "decomposition": {"baselines": ["linucb"]},
            "convergence": {"variants": {"named": {"name": "Named"}, "unnamed": {}}},
        },
        "bench": {"policies": ["bench_only"]},
    }
    labels = config_labels(config)
    assert "named" not in labels
    assert missing_display_names(labels) == [
        "bench_only",
        "linucb_wide",
        "new_dataset",
        "new_policy",
        "table_only",
        "unnamed",
    ]


def test_grid_points_are_shown_beside_the_display_name():
    assert missing_display_names(["hare@alpha=0.1"]) == []
    assert display_name("hare@alpha=0.1") == "HARE [alpha=0.1]"
