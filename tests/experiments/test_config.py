import copy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hare.experiments.config import SCHEMA_PATH, check_config, load_config, resolve_config_file
from hare.experiments.grid import expand_jobs
from hare.experiments.settings import ConfigError
from hare.io import read_yaml


@pytest.fixture
def smoke_config(repository) -> dict:
    """config/smoke.yaml resolved onto its base, default.yaml (the file itself is an overlay)."""
    return resolve_config_file(repository / "config" / "smoke.yaml")


@pytest.mark.parametrize("name", ["default", "smoke", "paper-core", "paper"])
def test_shipped_configs_validate(repository, name):
    load_config([repository / "config" / f"{name}.yaml"])


def _set(config, path, value):
    node = config
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return config


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (
            ["experiments", "classification", "policies", "linucb"],
            {"params": {"alpha": "big"}},
            r"experiments\.classification\.policies\.linucb \(linucb\): LinUCBConfig\.alpha: "
            r"must be float \(got 'big', a str\)$",
        ),
        (
            ["experiments", "classification", "policies", "linucb"],
            {"params": {"alpha": -1.0}},
            r"^invalid config: experiments\.classification\.policies\.linucb\.params\.alpha: -1\.0 is less than the "
            r"minimum of 0$",
        ),
        (
            ["experiments", "classification", "policies", "bogus"],
            {},
            r"experiments\.classification\.policies\.bogus: unknown policy 'bogus'",
        ),
        (["experiments", "classification", "n_runs"], 0, r"experiments\.classification\.n_runs"),
        (["experiments", "classification", "environments"], [], r"experiments\.classification\.environments"),
        (
            ["experiments", "classification", "environments"],
            ["nowhere"],
            r"experiments\.classification\.environments: unknown environment 'nowhere'",
        ),
        (["device"], "tpu", r"device"),
        (
            ["experiments", "classification", "policies", "linucb", "grid"],
            {"alpha": [1.0, -2.0]},
            r"^experiments\.classification\.policies\.linucb\.grid\.alpha\[1\]: -2\.0 is less than the minimum of 0$",
        ),
        (
            ["experiments", "classification", "policies", "linucb", "grid"],
            {"alpha": [1.0, "x"]},
            r"experiments\.classification\.policies\.linucb \(linucb@alpha=x\): LinUCBConfig\.alpha: must be float",
        ),
        (
            ["tables", "classification", "experiment"],
            "nowhere",
            r"tables\.classification\.experiment: unknown experiment",
        ),
        (
            ["experiments", "classification", "policies", "linucb", "params", "gamma"],
            1.0,
            r"unknown hyperparameter.*gamma",
        ),
        (
            ["experiments", "classification", "policies", "hare", "params", "projections"],
            "oracle",
            r"policies\.hare.*projections.*synthetic",
        ),
        (["theory", "oful", "delta"], 1.5, r"theory\.oful\.delta"),
        (["theory", "decomposition_grid", "n_clusters"], [], r"theory\.decomposition_grid\.n_clusters"),
        (["theory", "decomposition_grid", "n_clusters"], [2, 0], r"theory\.decomposition_grid\.n_clusters\.1"),
        (["theory", "decomposition_grid", "key_dims"], [-4], r"theory\.decomposition_grid\.key_dims\.0"),
        (["theory", "decomposition_grid", "key_dims"], [], r"theory\.decomposition_grid\.key_dims"),
        (["theory", "decomposition_grid", "horizons"], [], r"theory\.decomposition_grid\.horizons"),
        (
            ["theory", "decomposition_grid", "n_clusters"],
            [2, 25],
            r"theory\.decomposition_grid\.n_clusters: \[25\] exceed the 24 items",
        ),
        (
            ["theory", "decomposition_grid"],
            {"n_clusters": [2], "key_dims": [4], "horizons": [10, 20], "n_runs": 2},
            r"theory\.decomposition_grid: 'base_seed' is a required property",
        ),
        # Every value of a non-policy section is typed by its dataclass's annotations (hare.typed).
        (
            ["environments", "synthetic_linear", "params", "n_items"],
            "many",
            r"environments\.synthetic_linear\.params\.n_items: must be int \(got 'many'",
        ),
        (
            ["environments", "synthetic_linear", "params", "noise_sigma"],
            "low",
            r"environments\.synthetic_linear\.params\.noise_sigma: must be float",
        ),
        (
            ["environments", "synthetic_linear", "params", "bogus"],
            1,
            r"environments\.synthetic_linear\.params\.bogus: unknown setting",
        ),
        (
            ["environments", "mushroom", "params", "logged_rows"],
            "300",
            r"environments\.mushroom\.params\.logged_rows: must be int \(got '300', a str\)",
        ),
        (
            ["environments", "mushroom", "params", "rows"],
            3,
            r"environments\.mushroom\.params\.rows: unknown setting of a classification environment",
        ),
        (
            ["environments", "open_bandit", "params"],
            {"logged_rows": 3},
            r"environments\.open_bandit\.params\.logged_rows: unknown setting of a replay environment",
        ),
        (
            ["theory", "decomposition", "hare_params", "fit_steps"],
            "fifty",
            r"theory\.decomposition\.hare_params.*HAREConfig\.fit_steps: must be int \(got 'fifty'",
        ),
        (
            ["theory", "decomposition", "env_params", "n_users"],
            2.5,
            r"theory\.decomposition\.env_params: SyntheticConfig\.n_users: must be int \(got 2\.5",
        ),
        (
            ["theory", "convergence", "env_params", "noise_sigma"],
            "x",
            r"theory\.convergence\.env_params: SyntheticConfig\.noise_sigma: must be float",
        ),
        (
            ["theory", "convergence", "hare_params", "alpha"],
            "big",
            r"theory\.convergence\.variants\.\w+\.params: HAREConfig\.alpha: must be float",
        ),
        (
            ["theory", "convergence", "variants"],
            {"v": {"regime": "cold", "params": {"projections": "learned"}}},
            r"theory\.convergence\.variants\.v\.params: .*learned",
        ),
        (["personalization", "text", "hash_dim"], "wide", r"personalization\.text\.hash_dim: must be int"),
    ],
)
def test_invalid_config_names_the_key(smoke_config, path, value, message):
    config = _set(copy.deepcopy(smoke_config), path, value)
    with pytest.raises(ConfigError, match=message):
        check_config(config)


def test_cli_reports_bad_config_in_one_line(repository, smoke_config, tmp_path):
    bad = _set(
        copy.deepcopy(smoke_config),
        ["experiments", "classification", "policies", "linucb"],
        {"params": {"alpha": -1.0}},
    )
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(bad))
    result = subprocess.run(
        [sys.executable, "-m", "hare", "validate-config", str(path)], capture_output=True, text=True, cwd=repository
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert (
        "experiments.classification.policies.linucb.params.alpha: -1.0 is less than the minimum of 0" in result.stderr
    )


def test_invalid_yaml_names_the_file_and_line(tmp_path):
    bad = tmp_path / "broken.yaml"
    bad.write_text("device: cpu\nenvironments:\n  a: {kind: synthetic\n")
    with pytest.raises(ConfigError, match=rf"{bad}: not valid YAML at line \d+, column \d+"):
        load_config([bad])


def test_experiment_scope_checks_what_a_batch_reads(smoke_config):
    """An experiment batch (scope "experiments") still refuses a bad policy value, and leaves the theory sections,
    which the whole-config validation of the job table checks, alone."""
    bad_policy = _set(
        copy.deepcopy(smoke_config),
        ["experiments", "classification", "policies", "linucb"],
        {"params": {"alpha": -1.0}},
    )
    with pytest.raises(
        ConfigError, match=r"experiments\.classification\.policies\.linucb\.params\.alpha: -1\.0 is less"
    ):
        check_config(bad_policy, scope="experiments")
    bad_theory = _set(copy.deepcopy(smoke_config), ["theory", "decomposition_grid", "n_clusters"], [2, 25])
    check_config(copy.deepcopy(bad_theory), scope="experiments")
    with pytest.raises(ConfigError, match=r"theory\.decomposition_grid\.n_clusters"):
        check_config(bad_theory)
    with pytest.raises(ValueError, match="scope"):
        check_config(copy.deepcopy(smoke_config), scope="theory")


ALL_REWARDS_REFUSAL = (
    "'all_rewards' reads the whole reward matrix, information a bandit does not have; it is allowed only in the "
    "published experiment"
)


def test_all_rewards_global_mean_is_allowed_only_in_the_published_experiment(smoke_config):
    """LNUCB-TA's ``global_mean: all_rewards`` (its public code's global mean) is refused, in one line naming the key
    path,
    in the params or the grid of any other experiment, and accepted in ``published`` (LNUCB-TA's Table 2)."""
    cases = [
        (
            ["experiments", "classification", "policies", "lnucb_ta", "params"],
            {"global_mean": "all_rewards"},
            "experiments.classification.policies.lnucb_ta.params.global_mean",
        ),
        (
            ["experiments", "sensitivity", "policies", "lnucb_ta_kappa", "grid", "global_mean"],
            ["rounds", "all_rewards"],
            "experiments.sensitivity.policies.lnucb_ta_kappa.grid.global_mean",
        ),
    ]
    for path, value, key in cases:
        config = _set(copy.deepcopy(smoke_config), path, value)
        with pytest.raises(ConfigError) as refused:
            check_config(config, scope="experiments")
        assert str(refused.value) == f"{key}: {ALL_REWARDS_REFUSAL}"
    published = copy.deepcopy(smoke_config)
    published["experiments"]["published"]["policies"]["lnucb_ta"] = {
        "params": {"global_mean": "all_rewards"},
        "grid": {"alpha_0": [0.1, 1.0]},
    }
    check_config(published)
    jobs = [job for job in expand_jobs(published) if job.experiment == "published" and job.spec.policy == "lnucb_ta"]
    assert jobs and all(job.spec.params["global_mean"] == "all_rewards" for job in jobs)


# Issue 28: every number finite, every size bounded, every expected failure one line (each case below was accepted,
# or failed late without naming its key, before).

SMOKE_CLASSIFICATION_HARE = "hare: {params: {key_dim: null}, grid: {alpha: [0.01, 0.1]}}"


def _smoke_variant(repository, tmp_path, old: str, new: str, name: str = "variant.yaml") -> Path:
    """A copy of config/smoke.yaml with the first ``old`` replaced by ``new``, beside a copy of its base."""
    text = (repository / "config" / "smoke.yaml").read_text()
    assert old in text
    path = tmp_path / name
    path.write_text(text.replace(old, new, 1))
    (tmp_path / "default.yaml").write_bytes((repository / "config" / "default.yaml").read_bytes())
    return path


@pytest.mark.parametrize(
    ("old", "new", "key", "spelling"),
    [
        (
            SMOKE_CLASSIFICATION_HARE,
            SMOKE_CLASSIFICATION_HARE.replace("key_dim: null}", "key_dim: null, alpha: .inf}").replace(
                ", grid: {alpha: [0.01, 0.1]}", ""
            ),
            "experiments.classification.policies.hare.params.alpha",
            ".inf",
        ),
        (
            "linucb: {params: {lam: 1.0}",
            "linucb: {params: {lam: .inf}",
            "experiments.classification.policies.linucb.params.lam",
            ".inf",
        ),
        ("noise_sigma: 0.1", "noise_sigma: .nan", "environments.synthetic_linear.params.noise_sigma", ".nan"),
        (
            "grid: {alpha: [0.01, 0.1]}",
            "grid: {alpha: [0.01, -.inf]}",
            "experiments.classification.policies.hare.grid.alpha[1]",
            "-.inf",
        ),
        ("max_seconds: 5", "max_seconds: .NaN", "bench.max_seconds", ".nan"),
    ],
)
def test_a_nonfinite_number_is_refused_naming_the_file_and_its_key(repository, tmp_path, old, new, key, spelling):
    path = _smoke_variant(repository, tmp_path, old, new)
    with pytest.raises(ConfigError) as refused:
        load_config([path])
    assert str(refused.value) == f"{path}: {key}: {spelling} is not a finite number"


def test_a_nonfinite_number_in_a_mapping_is_refused_before_the_schema(smoke_config):
    config = _set(copy.deepcopy(smoke_config), ["theory", "oful", "delta"], float("inf"))
    with pytest.raises(ConfigError, match=r"^invalid config: theory\.oful\.delta: \.inf is not a finite number$"):
        check_config(config)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "horizon: 80\n    n_runs: 2",
            "horizon: 1000000000000\n    n_runs: 2",
            r"experiments\.synthetic\.horizon: 1000000000000 is greater than the maximum of 100000000",
        ),
        (
            "horizon: 80\n    n_runs: 2",
            "horizon: 80\n    n_runs: 100000000",
            r"experiments\.synthetic\.n_runs: 100000000 is greater than the maximum of 10000",
        ),
        (
            "n_logged: 100\n    environments: [synthetic_linear]",
            "n_logged: 1000000000\n    environments: [synthetic_linear]",
            r"experiments\.synthetic_warm\.n_logged: 1000000000 is greater",
        ),
        (
            "n_items: 24, n_clusters: 4, n_users: 3, noise",
            "n_items: 10000000, n_clusters: 4, n_users: 3, noise",
            r"environments\.synthetic_linear\.params\.n_items: 10000000 is greater",
        ),
    ],
)
def test_an_absurd_size_is_refused_naming_its_key(repository, tmp_path, old, new, message):
    with pytest.raises(ConfigError, match=message):
        load_config([_smoke_variant(repository, tmp_path, old, new)])


def test_a_duplicate_key_is_refused_naming_the_file_and_line(repository, tmp_path):
    path = _smoke_variant(repository, tmp_path, "base_seed: 7\n", "base_seed: 7\nrecord_every: 5\nbase_seed: 8\n")
    with pytest.raises(
        ConfigError,
        match=rf"^{path}: not valid YAML at line 5, column 1: duplicate key 'base_seed' \(first at line 3\)$",
    ):
        load_config([path])


def test_a_byte_that_is_not_utf8_is_refused_naming_the_file_and_offset(repository, tmp_path):
    text = (repository / "config" / "smoke.yaml").read_bytes()
    path = tmp_path / "latin1.yaml"
    path.write_bytes(text.replace(b"# Smoke", b"# Sm\xe9ke", 1))
    with pytest.raises(ConfigError, match=rf"^{path}: not UTF-8 text: byte 0xe9 at byte offset 4 \(line 1\)"):
        load_config([path])


def test_the_shipped_configs_respect_the_documented_bounds(repository):
    """No shipped config comes near the schema's maxima of sizes (10^8 rounds, 10,000 runs)."""
    from hare.experiments.config import schema_errors

    for path in sorted((repository / "config").glob("*.yaml")):
        if path.name != "schema.yaml":
            assert schema_errors(resolve_config_file(path)) == [], path.name


SCHEMA_BOUNDS = {"type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "enum", "const", "multipleOf"}


def test_policy_hyperparameters_are_bounded_by_their_dataclass_not_by_the_schema():
    """The schema or the dataclass, not both: a policy's hyperparameter is typed and bounded on its field
    (hare.typed), which also checks every grid point; the schema only names the keys."""
    named = read_yaml(SCHEMA_PATH)["$defs"]["policy_params"]["properties"]
    assert named, "the schema names the common hyperparameters"
    for key, rule in named.items():
        assert not SCHEMA_BOUNDS & set(rule), f"schema policy_params.{key} restates the dataclass: {rule}"
    planted = {"type": "number", "minimum": 0}
    assert SCHEMA_BOUNDS & set(planted)
