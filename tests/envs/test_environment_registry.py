"""The environment registry (``hare.envs.registry``; the file is named apart from ``tests/data/test_registry.py``,
as pytest needs): every kind builds from a job's entry, and its class answers the config, the memory shape and the
facts other modules ask of a kind."""

from pathlib import Path

import pytest

from hare.data.fetch import fetch_dataset
from hare.data.prepare import prepare_dataset
from hare.envs.base import BanditEnvironment, EnvironmentShape
from hare.envs.registry import (
    environment_class,
    environment_kinds,
    environment_shape,
    register_environment,
)
from hare.random import run_keys

KEYS = run_keys(0, range(3), "registry-test")


def build_environment(spec: dict, n_runs: int, keys, dataset_path=None) -> BanditEnvironment:
    return environment_class(spec["kind"]).from_entry(spec, n_runs, keys, dataset_path=dataset_path)


def entry(kind: str, params: dict | None = None, dataset: str | None = None, horizon: int = 20, **extra) -> dict:
    """A job specification's ``environment`` entry."""
    return {"name": f"{kind}_env", "kind": kind, "params": params or {}, "dataset": dataset, "horizon": horizon} | extra


@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> dict[str, Path]:
    """Mushroom (project and reference preparations) and the Open Bandit sample, prepared from the mirror."""
    root = tmp_path_factory.mktemp("prepared")
    files = {}
    for name, protocol in (("mushroom", "project"), ("mushroom", "reference"), ("open_bandit", "project")):
        raw = root / "raw" / name
        if not raw.exists():
            fetch_dataset(name, raw, offline=True)
        files[f"{name}_{protocol}"] = root / f"{name}_{protocol}.npz"
        prepare_dataset(name, raw, files[f"{name}_{protocol}"], protocol)
    return files


def test_every_environment_module_registers_its_kind():
    assert environment_kinds() == ["classification", "replay", "synthetic", "text"]
    assert all(environment_class(kind).kind == kind for kind in environment_kinds())


def test_an_unknown_kind_lists_the_known_ones():
    with pytest.raises(KeyError, match="unknown environment kind 'bandit'; known kinds: classification, replay"):
        environment_class("bandit")


def test_a_kind_registers_once():
    with pytest.raises(ValueError, match="registered twice"):
        register_environment("synthetic")(type("Again", (BanditEnvironment,), {}))


@pytest.mark.parametrize(
    ("kind", "needs_dataset", "has_preparation", "serves_logs", "has_oracle", "has_reward_matrix", "replays"),
    [
        ("synthetic", False, False, True, True, True, False),
        ("text", False, False, True, False, True, False),
        ("classification", True, True, True, False, True, False),
        ("replay", True, False, False, False, False, True),
    ],
)
def test_the_facts_each_kind_answers(
    kind, needs_dataset, has_preparation, serves_logs, has_oracle, has_reward_matrix, replays
):
    cls = environment_class(kind)
    assert (cls.needs_dataset, cls.has_preparation, cls.serves_logs) == (needs_dataset, has_preparation, serves_logs)
    assert (cls.has_oracle, cls.has_reward_matrix, cls.replays_logged_data) == (has_oracle, has_reward_matrix, replays)


def test_params_are_typed_by_the_kind():
    """Each kind's ``params`` are its config class's fields: an unknown key is refused naming it and the known ones, a
    bad value by the config class."""
    assert environment_class("synthetic").make_config({"n_items": 7}).n_items == 7
    assert environment_class("classification").make_config(None).logged_rows == 0
    with pytest.raises(ValueError, match=r"n_items: unknown setting of a classification environment; known: \['logged"):
        environment_class("classification").make_config({"n_items": 3})
    with pytest.raises(ValueError, match="logged_rows"):
        environment_class("classification").make_config({"logged_rows": -1})
    with pytest.raises(ValueError, match="unknown setting of a replay environment; known: \\[\\]"):
        environment_class("replay").make_config({"logged_rows": 3})
    with pytest.raises(ValueError, match="SyntheticConfig.link"):
        environment_class("synthetic").make_config({"link": "cubic"})


def test_logged_capacity():
    classification = environment_class("classification")
    assert classification.logged_capacity(classification.make_config({"logged_rows": 40})) == 40
    assert environment_class("synthetic").logged_capacity(environment_class("synthetic").make_config({})) is None
    assert environment_class("replay").logged_capacity(environment_class("replay").make_config({})) == 0


def _agrees(shape: EnvironmentShape, env: BanditEnvironment) -> None:
    assert (shape.arms, shape.dim, shape.rounds) == (env.n_arms, env.dim, env.horizon)
    assert shape.clusters == env.pool.n_clusters


@pytest.mark.parametrize(
    ("kind", "params"),
    [
        ("synthetic", {}),
        ("synthetic", {"n_items": 9, "n_clusters": 3, "query_dim": 5, "n_users": 2}),
        ("text", {"n_topics": 3, "items_per_topic": 4, "n_queries": 5, "hash_dim": 32}),
    ],
)
def test_the_memory_shape_of_a_generated_environment_is_the_built_ones(kind, params):
    spec = entry(kind, params)
    env = build_environment(spec, 3, KEYS)
    assert type(env) is environment_class(kind) and env.n_runs == 3
    _agrees(environment_shape(spec), env)
    assert environment_shape(spec).rows == 0 and environment_shape(spec).run_bytes == 0


def test_a_dataset_environment_is_built_from_its_prepared_file(prepared):
    """A classification environment reads the file of its preparation and sets its ``logged_rows`` aside; its memory
    shape is its record's (rows, features, arms), its horizon capped by the online rows."""
    spec = entry("classification", {"logged_rows": 24}, "mushroom", horizon=10**6)
    env = build_environment(spec, 3, KEYS, dataset_path=prepared["mushroom_project"])
    assert env.logged_rows.numel() == 24 and env.horizon == 8124 - 24
    shape = environment_shape(spec)
    _agrees(shape, env)
    assert (shape.rows, shape.shared_bytes, shape.run_bytes) == (8124, 12 * 8124 * 117, 0)
    reference = entry("classification", {}, "mushroom", preparation="reference")
    assert build_environment(reference, 3, KEYS, dataset_path=prepared["mushroom_reference"]).dim == 22
    with pytest.raises(ValueError, match="declares preparation 'reference'"):
        build_environment(reference, 3, KEYS, dataset_path=prepared["mushroom_project"])
    with pytest.raises(ValueError, match="'classification_env' needs its prepared dataset"):
        build_environment(spec, 3, KEYS)


def test_a_replay_environment_is_built_from_its_logged_file(prepared):
    spec = entry("replay", {}, "open_bandit", horizon=50)
    env = build_environment(spec, 3, KEYS, dataset_path=prepared["open_bandit_project"])
    shape = environment_shape(spec)
    _agrees(shape, env)
    assert shape.run_bytes == 8 * shape.rows * shape.arms * shape.dim
    with pytest.raises(ValueError, match="needs its prepared logged dataset"):
        build_environment(spec, 3, KEYS)
    without_params = {key: value for key, value in spec.items() if key != "params"}  # a replay job's entry
    assert build_environment(without_params, 3, KEYS, dataset_path=prepared["open_bandit_project"]).n_arms == 34
