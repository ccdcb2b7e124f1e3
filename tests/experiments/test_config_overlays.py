"""One config and its overlays (issue 29): ``config/default.yaml`` is the base; ``smoke``, ``paper-core`` and ``paper``
state only what differs from it (``base: default.yaml`` and overrides,
:func:`hare.experiments.config.resolve_config_file`).

The fixture ``data/config_overlays.json`` holds, for each of the four configs as they were before they became
overlays, the validated config and a digest of its job table (``hare jobs CONFIG --table``, what the workflow reads
first): every batch's digest, dataset and job stems, the order of the jobs and the claims. The resolved configs must
equal it, but for :data:`INTENDED`. To accept an intended change later, record it below and regenerate the fixture::

    .venv/bin/python tests/experiments/test_config_overlays.py --write
"""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from hare import cli
from hare.experiments.config import load_config, merge_overlay, resolve_config_file
from hare.experiments.settings import ConfigError

REPOSITORY = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).parent / "data" / "config_overlays.json"
CONFIGS = ("default", "smoke", "paper-core", "paper")
REGISTER = REPOSITORY / "paper" / "claims.yaml"

INTENDED: dict[str, set[tuple[str, ...]]] = {}
"""Key paths whose values differ on purpose from the fixture: each takes default.yaml's value. Empty since the fixture
was recorded again with every source system in the default build (the earlier intended captions are in it)."""

SET_SINCE: dict[str, dict[tuple[str, ...], str]] = {}
"""Key paths an overlay set on purpose after the fixture was recorded, each with why: the fixture's value must differ
from the config's, and the config's own value is expected there. Empty since the fixture was recorded again with the
sweeps' tuning runs for margins (plan: true) and the credit experiment (synthesis_credit)."""

ORDER_MAY_CHANGE = {"smoke", "paper-core", "paper"}
"""Configs whose policies now come in default.yaml's order (an overlay's new policies after them): the same jobs,
batches, digests and claims, listed in another order (the batch digests sort their jobs; the tables sort their rows)."""


def _sha256(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


ADDED_POLICIES = {
    "hare_online": ("hare_alpha_meta", "hare_alpha_exp3"),
    "hare_online_warm": ("hare_alpha_meta", "hare_alpha_exp3"),
}
"""Policies added to existing experiments after the fixture was recorded (issue 31: alpha learned online), with the
claim families that read them (:data:`ADDED_CLAIM_PREFIXES`) and the caption that states their tuning budget
(:data:`AMENDED`). :func:`as_recorded` plans each config without them, so the fixture still pins every job, batch
digest and claim that was there before; :func:`test_the_added_policies_are_planned` checks that they are planned."""
ADDED_CLAIM_PREFIXES = ("exploration_tails_", "learned_alpha_")
"""Claim families added after the fixture was recorded (issue 31); :func:`record` leaves their members out."""
AMENDED = {("tables", "hare_online", "caption"): "issue 31: the caption states each row's tuning budget"}
"""Values of default.yaml changed on purpose after the fixture was recorded: :func:`as_recorded` sets them back to the
fixture's default value."""


def as_recorded(name: str, folder: Path) -> Path:
    """An overlay of ``config/NAME.yaml`` in ``folder`` that removes :data:`ADDED_POLICIES` and sets :data:`AMENDED`
    back: the config as the fixture recorded it."""
    recorded = json.loads(FIXTURE.read_text())["configs"]["default"]["config"]
    overlay: dict = {
        "base": str(REPOSITORY / "config" / f"{name}.yaml"),
        "experiments": {
            experiment: {"policies": {label: None for label in labels}} for experiment, labels in ADDED_POLICIES.items()
        },
    }
    for path in AMENDED:
        node = overlay
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = _get(recorded, path)
    target = folder / f"{name}.yaml"
    target.write_text(yaml.safe_dump(overlay))
    return target


def _table_output(name: str) -> str:
    """What the workflow reads first: ``hare jobs config/NAME.yaml --table --register paper/claims.yaml``, for the
    config as the fixture recorded it (:func:`as_recorded`)."""
    folder = Path(tempfile.mkdtemp(prefix="config_overlays_"))
    command = [
        sys.executable,
        "-m",
        "hare",
        "jobs",
        str(as_recorded(name, folder)),
        "--table",
        "--register",
        "paper/claims.yaml",
    ]
    answer = subprocess.run(
        command,
        cwd=REPOSITORY,
        env={"PYTHONPATH": str(REPOSITORY / "src"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    return answer.stdout


ADDED_SECTIONS = {
    "pool_scaling": "issue 30: HARE against the pool size per covariance kind (seed 000's third question)",
    "cost_growth": "issue 30: every policy family's cost per round against t, K, d and B",
}
"""Top-level config sections added after the fixture was recorded: a study of their own, which plans no job of the
table. :func:`record` leaves them out of the config and of the table's digest (the table carries the config), so the
fixture still pins everything that was there before; :func:`test_the_added_sections_are_in_every_config` checks
that every config has them."""


ADDED_KEYS = {
    ("paper", "max_pages"): "the page budget of the whole PDF, checked by the paper rule",
    ("paper", "max_body_pages"): "the page budget of the body (sections 1-6), checked by the paper rule",
}
"""Keys added to an existing section after the fixture was recorded, which plan no job: :func:`record` and the
resolved config leave them out (:func:`without_added_keys`), so the fixture still pins everything that was there
before."""


def without_added_keys(config: dict) -> dict:
    """``config`` less :data:`ADDED_KEYS` (changed in place, and returned)."""
    for path in ADDED_KEYS:
        _get(config, path[:-1]).pop(path[-1], None)
    return config


def record(name: str) -> dict:
    """The fixture entry of one config: the config the job table carries (less :data:`ADDED_SECTIONS`) and the
    digests of the table (``hare jobs`` writes ``json.dump(table, sort_keys=True)``, re-serialised here the same way
    without the added sections)."""
    table = json.loads(_table_output(name))
    for section in ADDED_SECTIONS:
        table["config"].pop(section, None)
    without_added_keys(table["config"])
    table["claims"] = [claim for claim in table["claims"] if not claim["key"].startswith(ADDED_CLAIM_PREFIXES)]
    table.pop("code")  # the digests of the code (docs/workflow.md, "Code is an input"): they move with every edit
    for entry in table["batches"].values():
        entry.pop("plugins")  # the policies and environments a batch runs, for its code digest (added with it)
    output = json.dumps(table, sort_keys=True)
    return {
        "config": table["config"],
        "table_sha256": hashlib.sha256(output.encode()).hexdigest(),
        "job_order_sha256": _sha256([row["stem"] for row in table["jobs"]]),
        "jobs_sha256": _sha256(sorted(table["jobs"], key=lambda row: row["stem"])),
        "batches": {
            batch: {
                "dataset": entry["dataset"],
                "digest": entry["digest"],
                "n_jobs": len(entry["jobs"]),
                "jobs_sha256": _sha256(entry["jobs"]),
            }
            for batch, entry in table["batches"].items()
        },
        "optional_datasets": table["optional_datasets"],
        "claims_order_sha256": _sha256([claim["key"] for claim in table["claims"]]),
        "claims_sha256": _sha256(sorted(table["claims"], key=lambda claim: claim["key"])),
        "n_claims": len(table["claims"]),
    }


def write_fixture() -> None:
    entries = {name: record(name) for name in CONFIGS}
    about = (
        "The four configs as the job table (hare jobs CONFIG --table) carried them before they became overlays of "
        "default.yaml, with digests of their job tables; regenerate: "
        ".venv/bin/python tests/experiments/test_config_overlays.py --write"
    )
    FIXTURE.write_text(json.dumps({"about": about, "configs": entries}, indent=1) + "\n")


# -- the four configs against the fixture ---------------------------------------------------------------------------

OVERLAY_CAPTIONS = {
    "smoke": {"published", "lnucb_ta_reproduction", "synthetic", "replay"},
    "paper-core": {"enhanced", "classification", "classification_warm", "lnucb_ta_reproduction"},
    "paper": {"classification", "classification_warm"},
}
"""The tables whose caption an overlay states: those whose rows differ from what default.yaml's caption describes."""


@pytest.fixture(scope="module")
def fixture() -> dict:
    return json.loads(FIXTURE.read_text())["configs"]


def _get(config: dict, path: tuple[str, ...]):
    for key in path:
        config = config[key]
    return config


def _set(config: dict, path: tuple[str, ...], value) -> None:
    _get(config, path[:-1])[path[-1]] = value


def _raw(name: str) -> dict:
    return yaml.safe_load((REPOSITORY / "config" / f"{name}.yaml").read_text())


@pytest.mark.parametrize("name", CONFIGS)
def test_each_config_resolves_to_its_recorded_values_but_the_intended_ones(fixture, name):
    """The resolved config, as the job table carries it, equals the config as it was before the overlays, key for key
    and value for value (types included: 1 is not 1.0), but :data:`INTENDED`, which take default.yaml's value."""
    folder = Path(tempfile.mkdtemp(prefix="config_overlays_"))
    resolved = json.loads(json.dumps(load_config([as_recorded(name, folder)], memory=False)))
    for section in ADDED_SECTIONS:
        resolved.pop(section)
    without_added_keys(resolved)
    default = fixture["default"]["config"]
    expected = copy.deepcopy(fixture[name]["config"])
    for path in INTENDED.get(name, ()):
        assert _get(expected, path) != _get(default, path), (
            f"{name}: {path} is listed as intended but already has default's value"
        )
        _set(expected, path, _get(default, path))
    for path in SET_SINCE.get(name, {}):
        recorded = _get(expected, path[:-1]).get(path[-1])
        assert recorded != _get(resolved, path), f"{name}: {path} is listed as set since but has the fixture's value"
        _set(expected, path, _get(resolved, path))
    assert json.dumps(resolved, sort_keys=True) == json.dumps(expected, sort_keys=True)


@pytest.mark.parametrize("name", CONFIGS)
def test_the_added_sections_are_in_every_config(name):
    resolved = load_config([REPOSITORY / "config" / f"{name}.yaml"], memory=False)
    assert set(ADDED_SECTIONS) <= set(resolved)


@pytest.mark.parametrize("name", CONFIGS)
def test_the_added_policies_are_planned(name):
    resolved = load_config([REPOSITORY / "config" / f"{name}.yaml"], memory=False)
    for experiment, labels in ADDED_POLICIES.items():
        if experiment in resolved["experiments"]:
            assert set(labels) <= set(resolved["experiments"][experiment]["policies"]), (name, experiment)


@pytest.mark.parametrize("name", CONFIGS)
def test_each_job_table_plans_the_recorded_jobs(fixture, name):
    """``hare jobs CONFIG --table``: the same batches (digest, dataset, job stems), the same job rows and claims; the
    default config's table is byte-identical, the overlays' may list the same jobs and claims in another order."""
    now, before = record(name), fixture[name]
    assert now["batches"] == before["batches"]
    for key in ("jobs_sha256", "optional_datasets", "claims_sha256", "n_claims"):
        assert now[key] == before[key], key
    if name not in ORDER_MAY_CHANGE:
        assert now["job_order_sha256"] == before["job_order_sha256"]
        assert now["claims_order_sha256"] == before["claims_order_sha256"]
    if name not in ORDER_MAY_CHANGE and name not in INTENDED:
        assert now["table_sha256"] == before["table_sha256"]
        assert now["config"] == before["config"]


def test_default_is_the_base_and_the_others_are_short_overlays_of_it():
    assert "base" not in _raw("default")
    for name in ("smoke", "paper-core", "paper"):
        assert _raw(name)["base"] == "default.yaml", name
    assert len((REPOSITORY / "config" / "paper.yaml").read_text().splitlines()) < 250


@pytest.mark.parametrize("name", sorted(OVERLAY_CAPTIONS))
def test_a_caption_is_stated_once_and_overridden_only_where_the_table_differs(name):
    """Captions live in default.yaml beside the table definitions; an overlay states one only for the tables of
    :data:`OVERLAY_CAPTIONS`, and never default's text again."""
    default_tables = _raw("default")["tables"]
    tables = _raw(name).get("tables") or {}
    stated = {table for table, entry in tables.items() if isinstance(entry, dict) and "caption" in entry}
    assert stated == OVERLAY_CAPTIONS[name]
    for table in stated:
        assert tables[table]["caption"] != default_tables[table]["caption"], table


# -- how an overlay is resolved -------------------------------------------------------------------------------------


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_mappings_merge_lists_and_scalars_replace_and_null_removes():
    base = {"a": {"x": 1, "y": [1, 2], "z": {"deep": True}}, "b": 2, "c": {"gone": 1, "kept": 2}}
    overlay = {"a": {"y": [3], "z": {"new": 1}, "w": 0}, "b": 3.0, "c": {"gone": None}, "d": {"n": None}}
    merged = merge_overlay(base, overlay)
    assert merged == {
        "a": {"x": 1, "y": [3], "z": {"deep": True, "new": 1}, "w": 0},
        "b": 3.0,
        "c": {"kept": 2},
        "d": {"n": None},
    }
    assert list(merged["a"]) == ["x", "y", "z", "w"], "a new key comes after the base's keys"
    assert base == {"a": {"x": 1, "y": [1, 2], "z": {"deep": True}}, "b": 2, "c": {"gone": 1, "kept": 2}}, (
        "the base is not changed"
    )
    merged["a"]["z"]["deep"] = False
    assert base["a"]["z"]["deep"] is True, "the merge copies"


def test_an_overlay_changes_one_place_of_a_yaml_anchor_only():
    """A base whose two places cite one YAML anchor (warm policies = cold policies) holds one object twice: removing or
    changing a key under one place must leave the other as the base has it."""
    base = yaml.safe_load(
        "cold: {policies: &p {linucb: {grid: [1], environments: [a]}}}\nwarm: {policies: {<<: *p, hare: {}}}\n"
    )
    assert base["cold"]["policies"]["linucb"] is base["warm"]["policies"]["linucb"]
    merged = merge_overlay(base, {"cold": {"policies": {"linucb": {"environments": None, "grid": [2]}}}})
    assert merged["cold"]["policies"]["linucb"] == {"grid": [2]}
    assert merged["warm"]["policies"]["linucb"] == {"grid": [1], "environments": ["a"]}


def test_null_for_a_key_the_base_lacks_is_refused_naming_the_key():
    with pytest.raises(
        ConfigError,
        match=r"^over\.yaml: experiments\.e\.policies\.typo: null removes a key of the base config, which has none$",
    ):
        merge_overlay(
            {"experiments": {"e": {"policies": {"linucb": {}}}}},
            {"experiments": {"e": {"policies": {"typo": None}}}},
            "over.yaml: ",
        )


def test_a_base_is_relative_to_the_overlay_and_may_itself_be_an_overlay(tmp_path, monkeypatch):
    _write(tmp_path / "a" / "root.yaml", "device: cpu\nbase_seed: 1\ndata: {offline: true, mirror: null}\n")
    _write(tmp_path / "a" / "middle.yaml", "base: root.yaml\nbase_seed: 2\n")
    top = _write(tmp_path / "b" / "top.yaml", "base: ../a/middle.yaml\ndata: {offline: false}\n")
    monkeypatch.chdir(tmp_path / "b")
    assert resolve_config_file(top) == {"device": "cpu", "base_seed": 2, "data": {"offline": False, "mirror": None}}
    assert resolve_config_file(Path("top.yaml")) == resolve_config_file(top)


def test_a_missing_base_is_refused_in_one_line_naming_the_overlay(tmp_path):
    overlay = _write(tmp_path / "over.yaml", "base: nowhere.yaml\ndevice: cpu\n")
    with pytest.raises(ConfigError) as refused:
        resolve_config_file(overlay)
    assert (
        str(refused.value)
        == f"{overlay}: base: {tmp_path / 'nowhere.yaml'} does not exist (a base is relative to the overlay's folder)"
    )


@pytest.mark.parametrize(
    "files",
    [
        {"a.yaml": "base: a.yaml\n"},
        {"a.yaml": "base: b.yaml\n", "b.yaml": "base: c.yaml\n", "c.yaml": "base: a.yaml\n"},
    ],
)
def test_a_cycle_of_bases_is_refused_in_one_line_naming_the_file(tmp_path, files):
    for name, text in files.items():
        _write(tmp_path / name, text)
    with pytest.raises(ConfigError) as refused:
        resolve_config_file(tmp_path / "a.yaml")
    message = str(refused.value)
    assert "\n" not in message and "makes a cycle of bases" in message and message.endswith(f"-> {tmp_path / 'a.yaml'}")
    assert message.startswith(f"{tmp_path / sorted(files)[-1]}: base: ")


@pytest.mark.parametrize("value", ["3", "[default.yaml]", "''", "null"])
def test_a_base_that_is_not_a_file_name_is_refused(tmp_path, value):
    overlay = _write(tmp_path / "over.yaml", f"base: {value}\ndevice: cpu\n")
    with pytest.raises(ConfigError, match=rf"^{overlay}: base: must be the file name of the config this one overrides"):
        resolve_config_file(overlay)


def test_the_file_at_fault_is_named_whether_overlay_or_base(tmp_path):
    _write(tmp_path / "base.yaml", "device: cpu\nrecord_every: 1\nrecord_every: 2\n")
    overlay = _write(tmp_path / "over.yaml", "base: base.yaml\nbase_seed: .nan\n")
    with pytest.raises(ConfigError, match=rf"^{overlay}: base_seed: \.nan is not a finite number$"):
        resolve_config_file(overlay)
    overlay.write_text("base: base.yaml\nbase_seed: 1\n")
    with pytest.raises(
        ConfigError,
        match=rf"^{tmp_path / 'base.yaml'}: not valid YAML at line 3, column 1: duplicate key 'record_every'",
    ):
        resolve_config_file(overlay)


def test_an_overlay_is_validated_once_resolved_and_the_command_line_says_so_in_one_line(tmp_path, capsys):
    shutil.copy(REPOSITORY / "config" / "default.yaml", tmp_path / "default.yaml")
    overlay = _write(tmp_path / "over.yaml", "base: default.yaml\nexperiments:\n  synthetic: {n_runs: 0}\n")
    with pytest.raises(ConfigError, match=r"experiments\.synthetic\.n_runs"):
        load_config([overlay])
    assert cli.main(["validate-config", str(overlay)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "experiments.synthetic.n_runs" in line
    overlay.write_text("base: default.yaml\nexperiments:\n  synthetic: {n_runs: 3}\n")
    resolved = load_config([overlay], memory=False)
    assert "base" not in resolved and resolved["experiments"]["synthetic"]["n_runs"] == 3
    assert (
        resolved["experiments"]["synthetic"]["policies"]
        == load_config([tmp_path / "default.yaml"], memory=False)["experiments"]["synthetic"]["policies"]
    )
    (tmp_path / "default.yaml").unlink()
    assert cli.main(["jobs", str(overlay), "--table"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert f"{overlay}: base: " in line and "does not exist" in line


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(__doc__)
    write_fixture()
