"""The pool-scaling study (hare.experiments.studies.pool_scaling): the cluster rules, the memory it counts against
the tensors it holds, the skip rule, the per-item line, the regret comparison's pairing, the JSON's shape, and its
settings refused in one line naming the key."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy.stats import t

from hare.cli import main
from hare.experiments.config import REPOSITORY, check_config, resolve_config_file
from hare.experiments.settings import ConfigError
from hare.experiments.settings.pool_scaling import (
    CLUSTER_RULES,
    COVARIANCE_KINDS,
    PoolScalingSettings,
    cluster_count,
    settings_from_config,
)
from hare.experiments.studies.pool_scaling import (
    measure_cell,
    per_item_line,
    pool_bytes,
    round_bytes,
    run_pool_scaling,
    synthetic_pool,
)
from hare.io import write_json
from hare.model.attention import UncertaintyAttention
from hare.model.covariance_approx import covariance_bytes, make_cluster_covariance

CPU = torch.device("cpu")
ENV = {"n_items": 12, "n_clusters": 3, "item_dim": 6, "query_dim": 4, "user_dim": 2, "key_dim": 4, "n_users": 3}
REGRET = {
    "horizon": 15,
    "n_runs": 3,
    "env_params": ENV,
    "hare_params": {"projections": "random", "mean": "online", "online_lr": 0.05, "alpha": 0.5, "key_dim": 4},
}
TINY = {
    "pool_sizes": [20, 50],
    "fixed_clusters": 4,
    "rank": 2,
    "n_heads": 2,
    "n_runs": 2,
    "key_dim": 4,
    "rounds": 2,
    "warmup": 1,
    "regret": REGRET,
}


def tiny(**overrides) -> PoolScalingSettings:
    return settings_from_config({**TINY, **overrides})


# --------------------------------------------------------------------------
# Cluster rules
# --------------------------------------------------------------------------


def test_sqrt_rule_is_the_smallest_c_whose_square_reaches_n():
    for n in [*range(2, 3000), 10**6, 10**6 + 1, 10**12 - 1, 10**12, 10**12 + 1]:
        c = cluster_count("sqrt", n, 16)
        assert c * c >= n and (c - 1) * (c - 1) < n, n


def test_linear_and_fixed_rules_against_hand_values():
    assert [cluster_count("linear", n, 16) for n in (2, 99, 100, 101, 1000, 10**6, 10**6 + 1)] == [
        1,
        1,
        1,
        2,
        10,
        10_000,
        10_001,
    ]
    assert [cluster_count("fixed", n, 16) for n in (2, 15, 16, 17, 10**6)] == [2, 15, 16, 16, 16]
    assert cluster_count("sqrt", 10**6, 16) == 1000 and cluster_count("sqrt", 1000, 16) == 32


def test_every_rule_leaves_every_cluster_of_the_synthetic_pool_non_empty():
    for n in (2, 7, 100, 101, 1234):
        for rule in CLUSTER_RULES:
            c = cluster_count(rule, n, 16)
            assert 1 <= c <= n
            labels = synthetic_pool(1, n, 2, c, seed=3)["clusters"]
            sizes = torch.bincount(labels, minlength=c)
            assert sizes.min() >= n // c and sizes.max() <= -(-n // c)


# --------------------------------------------------------------------------
# Memory: the closed forms against the tensors held
# --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", COVARIANCE_KINDS)
@pytest.mark.parametrize(("n_runs", "n_groups"), [(1, 1), (2, 7), (3, 40)])
def test_the_closed_form_state_bytes_equal_the_state_built_at_that_size(kind, n_runs, n_groups):
    state = make_cluster_covariance(kind, n_runs, (n_groups,), 5, 1.0, 1000, 3)
    assert covariance_bytes(kind, n_runs * n_groups, 5, 3) == state.memory_bytes()


def test_full_state_holds_the_matrix_and_its_inverse():
    """``8 (B G (2 d^2 + 2 d + 1) + 1)``: A and A^{-1}, b, theta and the count of every group, and the update count."""
    b, g, d = 3, 11, 6
    assert covariance_bytes("full", b * g, d, 2) == 8 * (b * g * (2 * d * d + 2 * d + 1) + 1)


@pytest.mark.parametrize(("heads", "n", "d", "c"), [(1, 10, 3, 2), (2, 57, 4, 8), (3, 200, 5, 200)])
def test_pool_bytes_are_the_attention_buffers_other_than_the_covariance(heads, n, d, c):
    pool = synthetic_pool(heads, n, d, c, seed=0)
    attention = UncertaintyAttention(pool["keys"], pool["values"], pool["output"], pool["clusters"], 2, n_clusters=c)
    held = sum(x.numel() * x.element_size() for name, x in attention.named_buffers() if "covariance" not in name)
    assert pool_bytes(heads, n, d, c) == held


def test_round_bytes_are_the_select_pass_tensors():
    """Scores and weights ``(B, H, N)`` (and the logits and per-item bonus of the same shape and type), bonuses
    ``(B, H, C)`` (and the scaled bonuses)."""
    b, h, n, d, c = 3, 2, 40, 4, 5
    pool = synthetic_pool(h, n, d, c, seed=1)
    attention = UncertaintyAttention(pool["keys"], pool["values"], pool["output"], pool["clusters"], b, n_clusters=c)
    out = attention(torch.randn(b, h, d, dtype=torch.float64), 1.0)
    per_item = out.scores.nbytes + out.weights.nbytes + out.scores.index_select(-1, attention.clusters).nbytes * 2
    assert round_bytes(b, h, n, c) == per_item + 2 * out.bonuses.nbytes


@pytest.mark.parametrize("kind", COVARIANCE_KINDS)
def test_a_measured_cell_holds_exactly_its_prediction(kind):
    cell = measure_cell(tiny(), 50, "sqrt", kind, 8, CPU)
    assert cell["status"] == "measured"
    assert (
        cell["peak_bytes"] == cell["predicted_bytes"] == cell["state_bytes"] + cell["pool_bytes"] + cell["round_bytes"]
    )
    assert cell["select_ms"] > 0 and cell["update_ms"] > 0 and cell["cuda_peak_bytes"] is None


def test_low_rank_and_diagonal_states_are_smaller_than_full_by_their_closed_forms():
    b, h, c, d, r = 2, 2, 30, 16, 4
    full = covariance_bytes("full", b * h * c, d, r)
    assert covariance_bytes("diagonal", b * h * c, d, r) < full / 5
    assert covariance_bytes("low_rank", b * h * c, d, r) < full / 2


# --------------------------------------------------------------------------
# The skip rule and the per-item line
# --------------------------------------------------------------------------


def test_a_cell_over_the_cap_is_skipped_with_its_prediction():
    measured = measure_cell(tiny(), 50, "linear", "full", 1, CPU)
    cap_mb = (measured["predicted_bytes"] - 1) / 2**20
    skipped = measure_cell(tiny(memory_cap_mb=cap_mb), 50, "linear", "full", 1, CPU)
    assert skipped["status"] == "skipped"
    assert skipped["predicted_bytes"] == measured["predicted_bytes"] > tiny(memory_cap_mb=cap_mb).memory_cap_bytes
    assert "select_ms" not in skipped and str(skipped["predicted_bytes"]) in skipped["reason"]
    at_cap = measure_cell(tiny(memory_cap_mb=measured["predicted_bytes"] / 2**20), 50, "linear", "full", 1, CPU)
    assert at_cap["status"] == "measured"


def test_per_item_line_is_measured_under_the_cap_and_extrapolated_beyond():
    settings = tiny(pool_sizes=[20, 50, 400])
    small = measure_cell(settings, 50, "per_item", "full", 50, CPU)
    big = measure_cell(settings, 400, "per_item", "full", 400, CPU)
    cap_mb = (small["predicted_bytes"] + big["predicted_bytes"]) / 2 / 2**20
    line = per_item_line(tiny(pool_sizes=[20, 50, 400], memory_cap_mb=cap_mb), CPU)
    b, h, d = settings.n_runs, settings.n_heads, settings.key_dim
    assert [p["closed_form_bytes"] for p in line] == [8 * b * h * n * d * d for n in (20, 50, 400)]
    assert [p["per_head_and_run_bytes"] for p in line] == [8 * n * d * d for n in (20, 50, 400)]
    assert [p["extrapolated"] for p in line] == [False, False, True]
    assert line[1]["bytes"] == small["predicted_bytes"]
    ratio = line[1]["bytes"] / line[1]["closed_form_bytes"]
    assert line[2]["bytes"] == int(line[2]["closed_form_bytes"] * ratio)
    assert 2 <= ratio < 4  # the library's full state holds A and its inverse: about twice the closed form


# --------------------------------------------------------------------------
# The whole study: the JSON's shape, the regret comparison's pairing
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def result():
    return run_pool_scaling(tiny())


def test_the_json_has_every_cell_and_is_strict(result, tmp_path):
    path = tmp_path / "pool_scaling.json"
    write_json(path, result, allow_nan=False)
    loaded = json.loads(path.read_text())
    assert [(c["n_items"], c["rule"], c["kind"]) for c in loaded["cells"]] == [
        (n, rule, kind) for n in (20, 50) for rule in CLUSTER_RULES for kind in COVARIANCE_KINDS
    ]
    assert [c["n_clusters"] for c in loaded["cells"][::3]] == [4, 5, 1, 4, 8, 1]
    assert all(c["status"] == "measured" for c in loaded["cells"])
    assert [p["n_items"] for p in loaded["per_item"]] == [20, 50]
    assert set(loaded["regret"]["kinds"]) == set(COVARIANCE_KINDS)
    assert set(loaded["regret"]["difference_to_full"]) == {"diagonal", "low_rank"}
    assert loaded["settings"]["memory_cap_bytes"] == tiny().memory_cap_bytes
    assert loaded["study"] == "pool_scaling" and "memory_bytes()" in loaded["memory_counted"]


def test_the_regret_difference_is_paired_over_runs(result):
    kinds = result["regret"]["kinds"]
    full = np.array(kinds["full"]["per_run"])
    for kind, interval in result["regret"]["difference_to_full"].items():
        differences = np.array(kinds[kind]["per_run"]) - full
        assert interval["estimate"] == pytest.approx(differences.mean())
        half = (interval["ci_high"] - interval["ci_low"]) / 2
        assert half == pytest.approx(t.ppf(0.975, 2) * differences.std(ddof=1) / math.sqrt(3))
    assert kinds["full"]["estimate"] == pytest.approx(full.mean()) and kinds["full"]["n"] == 3


def test_a_low_rank_state_of_full_rank_plays_as_the_full_one():
    """With ``r = d_k`` the sketch is exact (hare.model.covariance_approx), so on the same rounds and keys HARE plays
    the same arms: the paired difference is zero to rounding."""
    settings = tiny(kinds=["full", "low_rank"], rank=4, regret={**REGRET, "horizon": 10})
    regret = run_pool_scaling(settings)["regret"]
    full = np.array(regret["kinds"]["full"]["per_run"])
    assert np.array(regret["kinds"]["low_rank"]["per_run"]) == pytest.approx(full, abs=1e-9)


# --------------------------------------------------------------------------
# Settings
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"pool_sizes": [100, 50]}, "pool_scaling.pool_sizes"),
        ({"pool_sizes": [1]}, "pool_scaling.pool_sizes"),
        ({"kinds": ["dense"]}, "pool_scaling.kinds"),
        ({"cluster_rules": ["sqrt", "sqrt"]}, "pool_scaling.cluster_rules"),
        ({"rank": 5}, "pool_scaling.rank"),
        ({"n_runs": 0}, "pool_scaling.n_runs"),
        ({"rounds": True}, "pool_scaling.rounds"),
        ({"memory_cap_mb": 0}, "pool_scaling.memory_cap_mb"),
        ({"device": "tpu"}, "pool_scaling.device"),
        ({"regret": {**REGRET, "n_runs": 1}}, "pool_scaling.regret.n_runs"),
        ({"regret": {**REGRET, "hare_params": {"covariance": "full"}}}, "pool_scaling.regret.hare_params.covariance"),
        ({"regret": {**REGRET, "hare_params": {"projections": "learned"}}}, "pool_scaling.regret.hare_params"),
        ({"regret": {**REGRET, "env_params": {"n_items": 0}}}, "pool_scaling.regret.env_params"),
        ({"regret": {**REGRET, "seed": 1}}, "pool_scaling.regret: unknown key(s) ['seed']"),
        ({"bogus": 1}, "pool_scaling: unknown key(s) ['bogus']"),
    ],
)
def test_a_bad_section_is_refused_in_one_line_naming_the_key(change, key):
    with pytest.raises(ValueError) as error:
        settings_from_config({**TINY, **change})
    message = str(error.value)
    assert message.startswith(key) and "\n" not in message


def test_the_config_check_refuses_a_bad_section_naming_the_key():
    config = resolve_config_file(REPOSITORY / "config" / "default.yaml")
    config["pool_scaling"]["regret"]["n_runs"] = 1
    with pytest.raises(ConfigError, match=r"pool_scaling\.regret\.n_runs"):
        check_config(config, memory=False)


def test_every_config_has_a_valid_section_and_the_paper_reaches_a_million_items():
    sections = {
        name: settings_from_config(resolve_config_file(REPOSITORY / "config" / f"{name}.yaml")["pool_scaling"])
        for name in ("default", "smoke", "paper-core", "paper")
    }
    assert max(sections["default"].pool_sizes) <= 10_000 and sections["default"].n_runs == 2
    assert sections["paper"].pool_sizes[0] == 1_000 and sections["paper"].pool_sizes[-1] >= 10**6


def test_the_cli_refuses_a_bad_section_in_one_line(tmp_path, capsys):
    status = main(
        [
            "pool-scaling",
            "--config-json",
            json.dumps({"rank": 0}),
            "--out-json",
            str(tmp_path / "a.json"),
            "--out-tex",
            str(tmp_path / "a.tex"),
        ]
    )
    error = capsys.readouterr().err.strip()
    assert status == 2 and error.startswith("hare pool-scaling: error: pool_scaling.rank:") and "\n" not in error
    assert not Path(tmp_path / "a.json").exists()
