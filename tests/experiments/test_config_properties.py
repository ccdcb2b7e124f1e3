"""Property tests: any mutation of the smoke config either validates or fails with a ConfigError naming a key path."""

import copy
import io
import json
import re
import subprocess
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hare import cli
from hare.experiments.config import check_config, resolve_config_file
from hare.experiments.settings import ConfigError

REPOSITORY = Path(__file__).resolve().parents[2]
SMOKE = resolve_config_file(REPOSITORY / "config" / "smoke.yaml")
"""config/smoke.yaml resolved onto its base (the file is an overlay of default.yaml)."""
KEY_PATH = re.compile(
    r"^((invalid config: |\S+\.yaml: )(<top level>|[\w$`;|&()' \"-]+(\.[^:]+)?): "
    r"|(experiments|environments|theory|data|paper|tables|personalization|bench|pool_scaling|cost_growth)\.\S+)"
)
"""A message naming a key path: the schema's and the finite-number check's (``invalid config: <path>: ``, or after the
file's name on the command line), or the cross-reference checks' (``<section>.<path>``)."""
NONFINITE = [float("nan"), float("inf"), float("-inf")]
WRONG_VALUES = [
    None,
    -1,
    -0.5,
    0,
    0.0,
    1e308,
    *NONFINITE,
    True,
    "",
    "$(touch PWNED)",
    "a; rm -rf x",
    "`id`",
    [],
    [None],
    {},
    {"x": 1},
    "no_such_policy",
    2**63,
    10**12,
]
ROUNDS_KEYS = ("horizon", "horizons", "budgets", "n_logged", "hare_rounds", "neural_rounds")
RUNS_KEYS = ("n_runs", "n_tuning_runs", "batch_sizes", "max_runs_per_simulation")
"""Sizes the schema bounds (config/schema.yaml): at most 10^8 rounds, 10,000 runs."""
NEW_KEYS = ["bogus", "$(touch PWNED)", "a b", "alpha", "grid", "policy", "environments", "horizon", "UPPER"]


def _paths(node, prefix=()):
    """Every key path of a nested mapping/list (lists by index)."""
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*prefix, index))


def _parent(config, path):
    node = config
    for key in path[:-1]:
        node = node[key]
    return node


@st.composite
def mutated_configs(draw, max_mutations=3):
    """The smoke config after 1..max_mutations random removals, additions and wrong-typed values."""
    config = copy.deepcopy(SMOKE)
    for _ in range(draw(st.integers(1, max_mutations))):
        paths = [p for p in _paths(config) if p]
        path = draw(st.sampled_from(paths))
        parent = _parent(config, path)
        action = draw(st.sampled_from(["remove", "replace", "add", "empty", "unknown_policy", "negate"]))
        if action == "remove":
            del parent[path[-1]]
        elif action == "replace":
            parent[path[-1]] = copy.deepcopy(draw(st.sampled_from(WRONG_VALUES)))
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(NEW_KEYS))] = copy.deepcopy(draw(st.sampled_from(WRONG_VALUES)))
        elif action == "empty":
            parent[path[-1]] = [] if isinstance(parent[path[-1]], list) else {}
        elif action == "unknown_policy":
            regret = (
                config.get("experiments", {}).get("regret") if isinstance(config.get("experiments"), dict) else None
            )
            if isinstance(regret, dict) and isinstance(regret.get("policies"), dict):
                regret["policies"][draw(st.sampled_from(["foo", "linucbb", "hare2"]))] = {}
        elif (
            action == "negate" and isinstance(parent[path[-1]], (int, float)) and not isinstance(parent[path[-1]], bool)
        ):
            parent[path[-1]] = -abs(parent[path[-1]]) - 1
    return config


def _check(config):
    """``True`` if ``config`` validates (with the pre-flight memory check, as ``hare jobs --table`` does); ``False`` if
    it
    fails with a ConfigError naming a key path; anything else fails the test."""
    try:
        check_config(config, memory=True)
    except ConfigError as error:
        assert KEY_PATH.match(str(error)), f"message names no key path: {error}"
        return False
    return True


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_configs())
def test_mutated_configs_validate_or_name_the_key(config):
    _check(config)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(sorted(SMOKE)), min_size=1, unique=True))
def test_removing_top_level_keys_names_them(removed):
    config = {k: v for k, v in copy.deepcopy(SMOKE).items() if k not in removed}
    with pytest.raises(ConfigError, match=r"<top level>: '\w+' is a required property"):
        check_config(config)


@pytest.mark.workflow
@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(mutated_configs(max_mutations=2))
def test_a_config_that_validates_gives_a_valid_dag(tmp_path_factory, config):
    """What ``check_config`` accepts, Snakemake accepts too (dry run); what it rejects, Snakemake rejects.

    The Snakefile loads the embedded default only when no ``--configfile`` is given, so the
    given config alone is the one checked.
    """
    valid = _check(config)
    path = tmp_path_factory.mktemp("config") / "mutated.yaml"
    path.write_text(yaml.safe_dump(config))
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "1", "--configfile", str(path), "--dry-run", "--quiet"],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
    )
    assert (result.returncode == 0) == valid, (
        f"check_config says {'valid' if valid else 'invalid'}:\n{yaml.safe_dump(config)}\n{result.stderr[-3000:]}"
    )
    assert not (REPOSITORY / "PWNED").exists()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_configs())
def test_the_command_line_answers_a_mutated_config_in_one_line_and_writes_nothing(config):
    """`hare validate-config` on any mutation: exit 0, or exit 2 with one line naming the key (no traceback: any other
    exception fails this test), and no file written beside the config."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "mutated.yaml"
        path.write_text(yaml.safe_dump(config))
        err, out = io.StringIO(), io.StringIO()
        with redirect_stderr(err), redirect_stdout(out):
            code = cli.main(["validate-config", str(path)])
        assert sorted(Path(folder).iterdir()) == [path]
    lines = err.getvalue().strip().splitlines()
    assert code in (0, 2), err.getvalue()
    if code == 2:
        assert len(lines) == 1 and lines[0].startswith("hare validate-config: error: "), lines
        assert KEY_PATH.match(lines[0].removeprefix("hare validate-config: error: ")), lines[0]
    else:
        assert out.getvalue().startswith("config OK")


def _unaliased(config):
    """A deep copy that shares no node (smoke.yaml's merges make two experiments share their policy entries)."""
    return json.loads(json.dumps(config))


def _dotted(path) -> str:
    """A key path as the finite-number check names it: ``a.b[2].c``."""
    return "".join(f"[{key}]" if isinstance(key, int) else f".{key}" for key in path).lstrip(".")


def _size_paths(node, prefix=()):
    """Every bounded size of a config (a key of ROUNDS_KEYS or RUNS_KEYS, or an item of such a list), with its
    maximum."""
    for path in _paths(node, prefix):
        names = [key for key in path if isinstance(key, str)]
        if names and names[-1] in ROUNDS_KEYS + RUNS_KEYS and isinstance(_parent(node, path)[path[-1]], int):
            yield path, 10**8 if names[-1] in ROUNDS_KEYS else 10**4


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([p for p in _paths(SMOKE) if p]), st.sampled_from(NONFINITE))
def test_a_nonfinite_number_anywhere_is_refused_naming_its_key(path, value):
    """NaN, +inf or -inf in place of any value of any section (a number, a string, a whole section): one message naming
    its key path, before the schema or any dataclass sees it."""
    config = _unaliased(SMOKE)
    _parent(config, path)[path[-1]] = value
    spelling = ".nan" if value != value else ".inf" if value > 0 else "-.inf"
    with pytest.raises(ConfigError) as refused:
        check_config(config)
    assert str(refused.value) == f"invalid config: {_dotted(path)}: {spelling} is not a finite number"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(list(_size_paths(SMOKE))), st.integers(1, 10**30))
def test_a_size_far_too_large_is_refused_naming_its_key(size, excess):
    """Any round count above 10^8 or run count above 10,000, of any section: refused naming its key path."""
    path, maximum = size
    config = _unaliased(SMOKE)
    _parent(config, path)[path[-1]] = maximum + excess
    with pytest.raises(ConfigError) as refused:
        check_config(config)
    assert f"{'.'.join(map(str, path))}: {maximum + excess} is greater than the maximum of {maximum}" in str(
        refused.value
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([p for p in _paths(SMOKE) if p]), st.sampled_from([*NONFINITE, 10**12]))
def test_the_command_line_answers_a_nonfinite_or_huge_value_in_one_line_naming_the_file_or_key(path, value):
    """The same through ``hare validate-config`` on a YAML file: exit 2, one line naming the key path (after the file's
    name for a non-finite number); a huge value where a size belongs is refused likewise, elsewhere it may be valid."""
    config = _unaliased(SMOKE)
    _parent(config, path)[path[-1]] = value
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "huge.yaml"
        file.write_text(yaml.safe_dump(config))
        err, out = io.StringIO(), io.StringIO()
        with redirect_stderr(err), redirect_stdout(out):
            code = cli.main(["validate-config", str(file)])
    lines = err.getvalue().strip().splitlines()
    if isinstance(value, float):
        assert code == 2 and lines == [
            f"hare validate-config: error: {file}: {_dotted(path)}: {yaml.safe_dump(value).split()[0]} "
            "is not a finite number"
        ]
    elif code == 2:
        assert len(lines) == 1 and KEY_PATH.match(lines[0].removeprefix("hare validate-config: error: ")), lines
    else:
        assert out.getvalue().startswith("config OK")
