"""The config boundary (:mod:`hare.experiments.settings`): every section refuses a planted bad value in one line
naming its key path, and the bad inputs that used to pass validation (then crashed Snakemake or ran silently) are
refused."""

from __future__ import annotations

import copy
import re
import time
from pathlib import Path

import pytest
import yaml

from hare.experiments.config import check_config, resolve_config_file
from hare.experiments.settings import ConfigError
from hare.experiments.settings.reader import (
    MAX_BYTES,
    MAX_DEPTH,
    MAX_NODES,
    ConfigLoader,
    expanded_size,
    read_config_yaml,
)

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def smoke() -> dict:
    return resolve_config_file(ROOT / "config" / "smoke.yaml")


def _refusal(config: dict) -> str:
    with pytest.raises(ConfigError) as caught:
        check_config(config)
    message = str(caught.value)
    assert "\n" not in message
    return message


def _planted(config: dict, path: tuple, value) -> dict:
    planted = copy.deepcopy(config)
    target = planted
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return planted


def _names_key(message: str, key_path: str) -> bool:
    """The message names ``key_path`` as its subject: at its start, or after ``invalid config: ``."""
    return re.search(rf"(^|invalid config: ){re.escape(key_path)}($|[.:\[ ])", message) is not None


SECTIONS = {
    "device": (("device",), "gpu9", "device"),
    "base_seed": (("base_seed",), -1, "base_seed"),
    "record_every": (("record_every",), 0, "record_every"),
    "data": (("data", "offline"), "yes", "data.offline"),
    "environments": (
        ("environments", "synthetic_linear", "params", "noise_sigma"),
        1e300,
        "environments.synthetic_linear.params.noise_sigma",
    ),
    "experiments": (
        ("experiments", "classification", "policies", "linucb", "params", "lam"),
        1e300,
        "experiments.classification.policies.linucb.params.lam",
    ),
    "theory.decomposition": (("theory", "decomposition", "horizons"), [100, 120], "theory.decomposition.horizons"),
    "theory.decomposition_grid": (
        ("theory", "decomposition_grid", "hare_params", "alpha"),
        1e308,
        "theory.decomposition_grid.hare_params.alpha",
    ),
    "theory.oful": (("theory", "oful", "policy"), "hare", "theory.oful.policy"),
    "personalization": (("personalization", "fit_lr"), 1e300, "personalization.fit_lr"),
    "pool_scaling": (("pool_scaling", "lam"), 1e-320, "pool_scaling.lam"),
    "cost_growth": (("cost_growth", "window"), 10**6, "cost_growth.window"),
    "bench": (("bench", "max_seconds"), 1e300, "bench.max_seconds"),
    "paper": (("paper", "max_pages"), 0, "paper.max_pages"),
}
"""Section -> (key path, planted value, the key path the refusal names)."""

OPTIONAL_THEORY = {
    "theory.approx_budget": (("theory", "approx_budget", "budgets"), [100, 200], "theory.approx_budget.budgets"),
    "theory.heads_alpha": (("theory", "heads_alpha", "hare_params", "n_heads"), 2, "theory.heads_alpha.hare_params"),
    "theory.convergence": (
        ("theory", "convergence", "hare_params", "online_lr"),
        1e6,
        "theory.convergence.hare_params.online_lr",
    ),
}
"""The theory sections a config may leave out (the default config has them all)."""


@pytest.mark.parametrize("section", sorted({**SECTIONS, **OPTIONAL_THEORY}))
def test_a_planted_bad_value_in_each_section_is_refused_in_one_line_with_its_key_path(smoke, section):
    path, value, key_path = {**SECTIONS, **OPTIONAL_THEORY}[section]
    config = smoke
    if section in OPTIONAL_THEORY and path[1] not in smoke["theory"]:
        config = resolve_config_file(ROOT / "config" / "default.yaml")
    check_config(copy.deepcopy(config))  # the config itself passes
    message = _refusal(_planted(config, path, value))
    assert _names_key(message, key_path), message


def test_every_section_of_the_schema_has_a_planted_value():
    """A section added to the schema joins the parametrised test above."""
    schema = yaml.safe_load((ROOT / "config" / "schema.yaml").read_text())
    covered = {name.split(".")[0] for name in {**SECTIONS, **OPTIONAL_THEORY}}
    assert set(schema["required"]) - {"tables"} <= covered | {"resources"}
    assert set(schema["properties"]["theory"]["properties"]) == {
        name.split(".")[1] for name in {**SECTIONS, **OPTIONAL_THEORY} if name.startswith("theory.")
    }


def test_a_table_naming_an_unknown_experiment_is_refused(smoke):
    name = next(iter(smoke["tables"]))
    message = _refusal(_planted(smoke, ("tables", name, "experiment"), "no_such_experiment"))
    assert message.startswith(f"tables.{name}.experiment: unknown experiment"), message


LONG = "x" * 300


@pytest.mark.parametrize("section", ["environments", "experiments", "tables"])
def test_a_300_character_name_is_refused_before_it_becomes_a_file_name(smoke, section):
    """Used to pass validation and crash Snakemake with ``OSError: [Errno 36] File name too long``."""
    config = copy.deepcopy(smoke)
    config[section][LONG] = copy.deepcopy(next(iter(config[section].values())))
    message = _refusal(config)
    assert message.startswith(f"invalid config: {section}: '{LONG}' is too long"), message


def test_a_400_digit_alpha_is_refused(smoke):
    message = _refusal(
        _planted(smoke, ("experiments", "classification", "policies", "hare", "grid", "alpha"), [10**400])
    )
    assert message.startswith("experiments.classification.policies.hare.grid.alpha[0]: "), message
    assert "is greater than the maximum of 1000000" in message


def test_a_job_label_longer_than_a_file_name_is_refused(smoke):
    """A grid value with no range of its own (an integer size) still cannot make a label too long for a file."""
    config = _planted(
        smoke, ("experiments", "classification", "policies", "kernel_ucb", "grid", "max_points"), [10**200]
    )
    message = _refusal(config)
    assert message.startswith("experiments.classification.policies.kernel_ucb.grid: the job label"), message
    assert "at most 128" in message


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (
            ("experiments", "classification", "policies", "linucb", "params", "alpha"),
            1e308,
            "is greater than the maximum",
        ),
        (
            ("experiments", "classification", "policies", "linucb", "params", "lam"),
            1e300,
            "is greater than the maximum",
        ),
        (("experiments", "classification", "policies", "linucb", "params", "lam"), 1e-320, "is less than the minimum"),
        (("environments", "synthetic_linear", "params", "noise_sigma"), 1e300, "is greater than the maximum"),
        (("experiments", "classification", "policies", "hare", "grid", "alpha"), [0.1, 1e308], "is greater than"),
    ],
)
def test_a_float_outside_its_physical_range_is_refused_naming_its_key(smoke, path, value, expected):
    """alpha = 1e308, lambda = 1e300 or 1e-320 ran silently to finite regrets; noise_sigma = 1e300 failed later in a
    Cholesky factorisation without naming the key."""
    message = _refusal(_planted(smoke, path, value))
    key_path = ".".join(path)
    assert _names_key(message, key_path), message
    assert expected in message


def test_every_float_field_of_a_policy_or_an_environment_has_a_range_in_the_schema():
    """Declared once, in the schema's policy_params, env_params and text_params, for every float field."""
    import dataclasses
    import typing

    from hare.envs.synthetic import SyntheticConfig
    from hare.envs.text import TextConfig
    from hare.policies.base import policy_class, policy_names
    from hare.typed import field_hints

    defs = yaml.safe_load((ROOT / "config" / "schema.yaml").read_text())["$defs"]

    def floats(cls) -> set[str]:
        hints = field_hints(cls)
        return {f.name for f in dataclasses.fields(cls) if "float" in str(hints[f.name]) or hints[f.name] is float}

    def bounded(definition: str) -> set[str]:
        return {key for key, value in defs[definition]["properties"].items() if "$ref" in value}

    missing = {
        name: sorted(floats(policy_class(name).config_class) - bounded("policy_params")) for name in policy_names()
    }
    assert {name: fields for name, fields in missing.items() if fields} == {}
    assert floats(SyntheticConfig) - bounded("env_params") == set()
    assert floats(TextConfig) - bounded("text_params") == set()
    for definition in ("weight", "signed_weight", "ridge", "probability", "learning_rate", "megabytes", "seconds"):
        assert {"minimum", "maximum"} <= set(defs[definition]) or {"exclusiveMinimum", "maximum"} <= set(
            defs[definition]
        ), definition
    assert typing  # imported for the annotations' evaluation


def test_nesting_deeper_than_the_limit_is_refused_in_one_line_naming_the_file(tmp_path):
    """5,000 levels ended in ``maximum recursion depth exceeded`` without naming the file."""
    path = tmp_path / "deep.yaml"
    path.write_text("deep: " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(ConfigError) as caught:
        read_config_yaml(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: not valid YAML at line 1, column ") and "\n" not in message
    assert f"nested deeper than {MAX_DEPTH} levels" in message


def _laughs(levels: int) -> str:
    lines = ["a0: &a0 [" + ", ".join(['"lol"'] * 9) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "text",
    [
        _laughs(9),  # a billion laughs: 9^10 strings once the aliases are followed
        # a chain of aliases: about 180,000 values
        "\n".join(["c0: &c0 [1]"] + [f"c{i}: &c{i} [*c{i - 1}]" for i in range(1, 600)]),
    ],
    ids=["billion-laughs", "alias-chain"],
)
def test_an_alias_bomb_is_refused_in_one_line_before_anything_walks_it(tmp_path, text):
    path = tmp_path / "bomb.yaml"
    path.write_text(text)
    start = time.perf_counter()
    with pytest.raises(ConfigError) as caught:
        read_config_yaml(path)
    assert time.perf_counter() - start < 1.0
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    assert f"expands to more than {MAX_NODES:,} values" in message


def test_a_config_file_too_large_is_refused_in_one_line(tmp_path):
    path = tmp_path / "large.yaml"
    path.write_text("# " + "x" * MAX_BYTES + "\nseed: 1\n")
    with pytest.raises(ConfigError, match=r"bytes, more than a config file may hold"):
        read_config_yaml(path)


def test_the_expanded_size_counts_each_citation_of_an_anchor():
    node = yaml.compose("a: &x [1, 2]\nb: *x\nc: [*x, *x]\n")
    # root, 3 keys, 3 values of which x (3 nodes) is cited 4 times: 1 + 3 + 3 + 3 + (1 + 3 + 3)
    assert expanded_size(node, 10**6) == 17
    assert expanded_size(node, 5) == 6


def test_the_shipped_configs_expand_well_within_the_limits():
    for path in sorted((ROOT / "config").glob("*.yaml")):
        assert path.stat().st_size <= MAX_BYTES // 10, path
        assert expanded_size(yaml.compose(path.read_text()), MAX_NODES) <= MAX_NODES // 10, path


def test_the_shipped_configs_nest_well_within_the_limit():
    def depth(value) -> int:
        if isinstance(value, dict):
            return 1 + max(map(depth, value.values()), default=0)
        if isinstance(value, list):
            return 1 + max(map(depth, value), default=0)
        return 0

    for path in sorted((ROOT / "config").glob("*.yaml")):
        assert depth(read_config_yaml(path)) <= MAX_DEPTH // 2, path


@pytest.mark.parametrize(
    ("text", "value"),
    [("1.0e308", 1.0e308), ("1e-3", 0.001), ("2E5", 200000.0), ("-1.5e+2", -150.0), ("1.", 1.0), (".5", 0.5)],
)
def test_the_reader_reads_every_exponent_form_as_a_float(text, value):
    """``1.0e308`` (no sign in the exponent) was a string, refused with a message about types."""
    assert yaml.load(f"x: {text}", Loader=ConfigLoader) == {"x": value}


@pytest.mark.parametrize(("text", "value"), [("12", 12), ("-3", -3), ("1_000", 1000), ("0x10", 16), ("1e", "1e")])
def test_the_reader_keeps_integers_and_strings(text, value):
    loaded = yaml.load(f"x: {text}", Loader=ConfigLoader)["x"]
    assert loaded == value and type(loaded) is type(value)


def test_1e308_in_a_file_is_refused_by_its_range_not_its_type(tmp_path):
    text = (ROOT / "config" / "smoke.yaml").read_text()
    assert "linucb: {params: {lam: 1.0}" in text
    path = tmp_path / "smoke.yaml"
    path.write_text(text.replace("linucb: {params: {lam: 1.0}", "linucb: {params: {lam: 1.0e308}", 1))
    (tmp_path / "default.yaml").write_bytes((ROOT / "config" / "default.yaml").read_bytes())
    message = _refusal(resolve_config_file(path))
    assert message.startswith(
        "invalid config: experiments.classification.policies.linucb.params.lam: 1e+308 is greater"
    )


@pytest.mark.parametrize(
    ("path", "value", "key", "words"),
    [
        (("theory", "decomposition", "n_boot"), 10**12, "theory.decomposition.n_boot", "maximum"),
        (("theory", "decomposition_grid", "n_eps_queries"), 10**12, "theory.decomposition_grid.n_eps_queries", "max"),
        (("theory", "convergence", "n_probes"), 10**12, "theory.convergence.n_probes", "maximum"),
        (("personalization", "text", "items_per_topic"), 10**9, "personalization.text.items_per_topic", "maximum"),
        (("bench", "baselines", "history"), 10**12, "bench.baselines.history", "maximum"),
        (("pool_scaling", "base_seed"), 2**64, "pool_scaling.base_seed", "maximum"),
        (("base_seed",), 2**32, "base_seed", "maximum"),
    ],
)
def test_a_size_whose_memory_or_time_is_unbounded_is_refused_at_the_boundary(smoke, path, value, key, words):
    """Sizes that used to pass and then ran out of memory, overflowed or never answered (a bootstrap of 10^12
    resamples, 10^12 probes, a 2^64 seed) are refused by their documented maxima, in one line naming the key."""
    start = time.perf_counter()
    message = _refusal(_planted(smoke, path, value))
    assert time.perf_counter() - start < 1.0
    assert _names_key(message, key), message
    assert words in message, message


@pytest.mark.parametrize(
    ("path", "value", "key", "words"),
    [
        (("personalization", "n_eval_queries"), 10**6, "personalization.n_eval_queries", "text bank"),
        (
            ("environments", "mushroom", "params", "logged_rows"),
            10**6,
            "environments.mushroom.params.logged_rows",
            "none",
        ),
        (("record_every",), 10**6, "record_every", "last round only"),
        (("paper", "max_body_pages"), 41, "paper.max_body_pages", "exceeds paper.max_pages"),
        (("tables", "synthetic", "caption"), "Total regret.\n\nOn HARE-Sim.", "tables.synthetic.caption", "blank line"),
        (("tables", "published", "published"), "paper/published/missing.csv", "tables.published.published", "does not"),
    ],
)
def test_a_value_that_fails_against_another_field_or_a_file_is_refused_at_the_boundary(smoke, path, value, key, words):
    """Cross-field and cross-file facts: queries beyond the text bank, logged rows beyond the dataset, curves of one
    point, a body longer than the PDF, a caption LaTeX cannot take, a published table that is not there."""
    message = _refusal(_planted(smoke, path, value))
    assert _names_key(message, key), message
    assert words in message, message


def test_a_horizon_beyond_the_dataset_is_stated_as_one_full_pass(smoke):
    """A horizon above a dataset's online rows is cut to them; the boundary says so, one line per environment."""
    from hare.experiments.settings.experiments import full_pass_notes, played_rounds

    config = _planted(smoke, ("experiments", "classification", "horizon"), 100_000)
    check_config(config)
    rows = 8124 - config["environments"]["mushroom"]["params"]["logged_rows"]
    assert played_rounds(config, "classification", "mushroom") == rows
    notes = [note for note in full_pass_notes(config) if note.startswith("experiments.classification:")]
    assert notes == [
        f"experiments.classification: horizon 100000 on 'mushroom' exceeds the {rows} online rows of dataset "
        f"'mushroom'; it plays one full pass, {rows} rounds"
    ]
    assert not [note for note in full_pass_notes(smoke) if note.startswith("experiments.classification:")]


def test_cuda_on_a_machine_without_it_is_refused_before_any_batch(smoke, monkeypatch):
    import torch

    from hare.experiments.config import check_devices

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    cuda = check_config(_planted(smoke, ("device",), "cuda"))  # read and planned on any machine
    with pytest.raises(ConfigError, match=r"^device: 'cuda', but torch finds no CUDA device"):
        check_devices(cuda)
    check_devices(_planted(smoke, ("device",), "auto"))


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "empty (a config is a YAML mapping"),
        ("base: .\n", "is a folder, not a config file"),
        ("record_every: 1" + "0" * 400 + "\n", "a number written with 401 digits"),
        ("base_seed: 1" + "0" * 400 + ".5\n", "a number written with 402 digits"),
    ],
)
def test_an_empty_file_a_folder_base_and_a_400_digit_number_are_named_as_such(tmp_path, text, words):
    """The unclear messages of before: an empty file was "'device' is a required property", a folder as a base "does
    not exist", a 400-digit number ".inf is not a finite number" in a 1,047-character line."""
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        resolve_config_file(path)
    message = str(caught.value)
    assert words in message and "\n" not in message and len(message) - len(str(path)) < 150, message


@pytest.mark.parametrize(
    "entry", [{"policy": "hare_synthesize"}, {"policy": "random", "params": {"mode": "synthesize"}}]
)
def test_a_synthesize_mode_policy_on_an_environment_that_rewards_no_output_is_refused(smoke, entry):
    """A synthesize-mode job needs ``synthesis_outcome`` (HARE-Sim, HARE-Text); a classification environment rewards
    pool items only, so such an entry is refused at the boundary, in one line naming the entry and the reason."""
    experiment = next(
        name
        for name, exp in smoke["experiments"].items()
        if any(smoke["environments"][env]["kind"] == "classification" for env in exp["environments"])
    )
    policies = {**smoke["experiments"][experiment]["policies"], "synthesizer": entry}
    message = _refusal(_planted(smoke, ("experiments", experiment, "policies"), policies))
    assert _names_key(message, f"experiments.{experiment}.policies.synthesizer"), message
    assert "'synthesize' needs an environment that rewards an output z (synthesis_outcome)" in message, message
