"""The pool-scaling notebook on a study file of a tiny grid with a cap that skips the largest per-item point: one line
per (kind, rule) in every panel, the per-item line dashed, measured points filled and the extrapolated one open."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from hare.experiments.settings.pool_scaling import settings_from_config
from hare.experiments.studies.pool_scaling import measure_cell, run_pool_scaling
from hare.io import write_json

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "pool_scaling.py"
PARAMETERS = 'runs: list = []\npool_scaling_json: str = ""\nfigures: list = ["pool_scaling.pdf"]'
SECTION = {
    "pool_sizes": [20, 50, 400],
    "fixed_clusters": 4,
    "rank": 2,
    "key_dim": 4,
    "rounds": 1,
    "warmup": 0,
    "regret": {
        "horizon": 6,
        "n_runs": 2,
        "env_params": {"n_items": 12, "n_clusters": 3, "key_dim": 4, "n_users": 3},
        "hare_params": {"projections": "random", "mean": "online", "online_lr": 0.05, "key_dim": 4},
    },
}


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pool_scaling")
    probe = settings_from_config(SECTION)
    big = measure_cell(probe, 400, "per_item", "full", 400, torch.device("cpu"))["predicted_bytes"]
    result = run_pool_scaling(settings_from_config({**SECTION, "memory_cap_mb": (big - 1) / 2**20}))
    document = folder / "pool_scaling.json"
    write_json(document, result, allow_nan=False)
    figure = folder / "pool_scaling.pdf"
    source = NOTEBOOK.read_text()
    assert PARAMETERS in source
    replaced = source.replace(
        PARAMETERS,
        f"runs = [{str(document)!r}]\npool_scaling_json = {str(document)!r}\nfigures = [{str(figure)!r}]",
    )
    namespace: dict = {}
    exec(compile(replaced, str(NOTEBOOK), "exec"), namespace)
    assert figure.read_bytes().startswith(b"%PDF-")
    return namespace, json.loads(document.read_text())


def test_one_line_per_kind_and_rule_in_every_panel(executed):
    namespace, result = executed
    for ax in namespace["axes"][0]:
        drawn = [line for line in ax.get_lines() if len(line.get_xdata()) > 0]
        kind_rule = [line for line in drawn if line.get_color() != "black"]
        assert len(kind_rule) == 9
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"


def test_the_per_item_line_is_dashed_and_its_extrapolated_point_open(executed):
    namespace, result = executed
    memory = namespace["axes"][0][2]
    line = result["per_item"]
    assert [p["extrapolated"] for p in line] == [False, False, True]
    dashed = [drawn for drawn in memory.get_lines() if drawn.get_color() == "black" and drawn.get_linestyle() == "--"]
    assert len(dashed) == 1
    assert np.allclose(dashed[0].get_ydata(), [p["bytes"] * 1e-6 for p in line])
    points = [
        drawn
        for drawn in memory.get_lines()
        if drawn.get_color() == "black" and drawn.get_marker() == "D" and len(drawn.get_xdata())
    ]
    assert [drawn.get_markerfacecolor() for drawn in points] == ["black", "black", "white"]
    select = namespace["axes"][0][0]
    measured = [drawn for drawn in select.get_lines() if drawn.get_color() == "black" and len(drawn.get_xdata())]
    assert len(measured) == 1 and list(measured[0].get_xdata()) == [20, 50]  # latency only where measured
