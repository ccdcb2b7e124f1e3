"""Every fixed list of ``config/schema.yaml`` is the list of the code that owns it.

The schema keeps its enums written out, so that a reader of the file (or an editor validating against it) sees the
names a key takes; this test binds each to its one definition in the package, so that a name added to a registry
and not to the schema, or the reverse, fails here, naming the key. The dataset names are not written in the schema:
they are filled in from the dataset registry when it is read (``test_schema_datasets.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest

from hare.data.encoding import PROTOCOLS
from hare.envs.registry import environment_kinds
from hare.experiments.settings.pool_scaling import CLUSTER_RULES
from hare.experiments.settings.schema import SCHEMA_PATH
from hare.experiments.tables.aggregate import TABLE_KINDS
from hare.io import read_yaml
from hare.model.covariance_approx import COVARIANCE_KINDS
from hare.regimes import REGIMES
from hare.theory.decomposition_comparisons import BASELINES

KINDS_NOT_IN_CONFIGS = {
    "text": "HARE-Text is built by the personalization study from its own section (personalization.text), "
    "not from an environments entry",
}
"""Registered environment kinds that an ``environments`` entry may not name, each with its reason."""

REGISTRIES: dict[str, Callable[[], Iterable[str]]] = {
    "environments.*.kind": lambda: set(environment_kinds()) - set(KINDS_NOT_IN_CONFIGS),
    "environments.*.preparation": lambda: PROTOCOLS,
    "experiments.*.regime": lambda: REGIMES,
    "theory.convergence.variants.*.regime": lambda: REGIMES,
    "tables.*.kind": lambda: TABLE_KINDS,
    "pool_scaling.cluster_rules[]": lambda: CLUSTER_RULES,
    "pool_scaling.kinds[]": lambda: COVARIANCE_KINDS,
    "theory.decomposition.baselines[]": lambda: BASELINES,
}
"""The config key path of each enum (``*``: any name of a mapping, ``[]``: every item of a list) -> the names of its
one definition: the environment registry (:func:`hare.envs.registry.environment_kinds`), the preparations
(:data:`hare.data.encoding.PROTOCOLS`), the information regimes (:data:`hare.regimes.REGIMES`), the table builder's
kinds (:data:`hare.experiments.tables.aggregate.TABLE_KINDS`), the pool-scaling study's cluster rules and the
covariance kinds (:data:`hare.model.covariance_approx.COVARIANCE_KINDS`), and the decomposition's baselines
(:data:`hare.theory.decomposition_comparisons.BASELINES`)."""

SUBSETS: dict[str, Callable[[], Iterable[str]]] = {
    "experiments.*.table": lambda: TABLE_KINDS,
}
"""Enums that list some of a definition's names: an experiment's own ``table`` (which no config of the repository sets
and no module reads; the ``tables`` section builds the tables) names one of the first three table kinds."""

SCHEMA_OWNED = {
    "device": "the devices a config may name; hare.experiments.job_setup.resolve_device reads any torch device",
}
"""Enums that the schema itself defines (no registry lists them), each with its reason."""


def enums(node: Any, path: str = "") -> dict[str, list]:
    """Every ``enum`` of a schema document by the config key path it constrains: ``properties`` add the key,
    ``additionalProperties`` a ``*``, ``items`` ``[]``; other keywords of the schema (``$defs``, ``oneOf``) keep
    their names, a list its indices."""
    found: dict[str, list] = {}
    if isinstance(node, list):
        for i, item in enumerate(node):
            found.update(enums(item, f"{path}[{i}]"))
        return found
    if not isinstance(node, dict):
        return found
    for key, value in node.items():
        if key == "enum":
            found[path] = value
        elif key == "properties":
            for name, child in value.items():
                found.update(enums(child, f"{path}.{name}" if path else name))
        elif key == "additionalProperties":
            found.update(enums(value, f"{path}.*" if path else "*"))
        elif key == "items":
            found.update(enums(value, f"{path}[]"))
        else:
            found.update(enums(value, f"{path}.{key}" if path else key))
    return found


SCHEMA_ENUMS = enums(read_yaml(SCHEMA_PATH))


def test_the_walker_names_every_enum_by_its_key_path():
    schema = {
        "properties": {
            "a": {"enum": [1]},
            "b": {"additionalProperties": {"properties": {"c": {"type": "array", "items": {"enum": ["x"]}}}}},
        },
        "$defs": {"d": {"oneOf": [{"enum": [2]}, {"type": "string"}]}},
    }
    assert enums(schema) == {"a": [1], "b.*.c[]": ["x"], "$defs.d.oneOf[0]": [2]}


def test_every_enum_of_the_schema_has_an_owner():
    """A new enum in the schema names its registry here (or says why the schema owns it); one removed goes too."""
    assert sorted(SCHEMA_ENUMS) == sorted({*REGISTRIES, *SUBSETS, *SCHEMA_OWNED})


@pytest.mark.parametrize("path", sorted(REGISTRIES))
def test_an_enum_lists_its_registry(path):
    listed = SCHEMA_ENUMS[path]
    names = sorted(REGISTRIES[path]())
    assert len(set(listed)) == len(listed), f"config/schema.yaml {path}: a name listed twice"
    assert sorted(listed) == names, (
        f"config/schema.yaml {path}: missing {sorted(set(names) - set(listed))}, "
        f"not registered {sorted(set(listed) - set(names))}"
    )


@pytest.mark.parametrize("path", sorted(SUBSETS))
def test_a_partial_enum_lists_names_of_its_registry(path):
    listed = SCHEMA_ENUMS[path]
    assert len(set(listed)) == len(listed), f"config/schema.yaml {path}: a name listed twice"
    assert sorted(set(listed) - set(SUBSETS[path]())) == [], f"config/schema.yaml {path}: not registered"


def test_the_kinds_left_out_of_the_configs_are_registered():
    assert sorted(set(KINDS_NOT_IN_CONFIGS) - set(environment_kinds())) == []
