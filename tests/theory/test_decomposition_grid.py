"""The regret decomposition over a (C, d_k) grid (hare.theory.decomposition_grid) and its table."""

from __future__ import annotations

import json

import pytest

from hare import cli
from hare.report.theory_tables import GRID_BOUNDS, write_grid
from hare.theory.decomposition_grid import run_decomposition_grid

ENV = {"n_items": 24, "n_clusters": 4, "item_dim": 8, "query_dim": 6, "user_dim": 3, "key_dim": 4, "n_users": 3}
HARE = {"fit_steps": 40}
N_LOGGED = 300
SEED = 7


def test_grid_over_clusters_and_key_dim():
    grid = run_decomposition_grid(
        ENV, HARE, [2, 3], [4], [10, 20], 2, SEED, n_boot=20, baselines=False, n_eps_queries=64, n_logged=N_LOGGED
    )
    cells = {(cell["n_clusters"], cell["key_dim"]): cell for cell in grid["cells"]}
    assert set(cells) == {(2, 4), (3, 4)}
    for (clusters, key_dim), cell in cells.items():
        assert cell["constants"]["n_clusters"] == clusters and cell["constants"]["key_dim"] == key_dim
        assert {row["T"] for row in cell["rows"]} == {20}
        assert set(cell["approx_by_mean"]) == {
            "R_approx_online",
            "R_approx_frozen",
            "removed_by_online_mean",
            "removed_fraction",
        }
    json.dumps(grid)


@pytest.fixture(scope="module")
def grid():
    return run_decomposition_grid(
        ENV, HARE, [2, 3], [4, 2], [10, 20], 2, SEED, n_boot=20, baselines=False, n_eps_queries=64, n_logged=N_LOGGED
    )


def test_grid_table_has_one_row_per_cell_and_term(grid, tmp_path):
    write_grid(grid, tmp_path / "checks" / "grid.json", tmp_path / "grid.tex")
    payload = json.loads((tmp_path / "checks" / "grid.json").read_text())
    assert [(c["n_clusters"], c["key_dim"]) for c in payload["cells"]] == [(2, 4), (2, 2), (3, 4), (3, 2)]
    tex = (tmp_path / "grid.tex").read_text()
    body = tex.split(r"\midrule")[1].split(r"\bottomrule")[0].strip().splitlines()
    assert len(body) == 4 * len(GRID_BOUNDS)
    first = {(row["term"], row["bound_key"]): row for row in grid["cells"][0]["rows"]}[
        ("explore", GRID_BOUNDS["explore"])
    ]
    cells = [c.strip() for c in body[2].rstrip("\\ ").split(" & ")]
    assert cells[:3] == ["2", "4", r"$R_{\mathrm{explore}}$"]
    assert cells[5] == f"{first['ratio']:.3g}"
    assert cells[6] == ("pass" if first["holds"] else "fail") and cells[7] == ("yes" if first["vacuous"] else "no")
    assert r"\newcommand{\decompositionGridNCells}{4}" in tex and r"\newcommand{\decompositionGridNRuns}{2}" in tex
    assert "over 2 runs per cell" in tex and r"\label{tab:regret-terms-grid}" in tex


def test_grid_main_writes_json_and_tex(tmp_path):
    config = {
        "n_clusters": [2],
        "key_dims": [4],
        "horizons": [10, 20],
        "n_runs": 2,
        "base_seed": 1,
        "n_boot": 10,
        "n_eps_queries": 64,
        "env_params": ENV,
        "hare_params": HARE,
        "n_logged": 100,
    }
    out_json, out_tex = tmp_path / "g.json", tmp_path / "g.tex"
    assert (
        cli.main(
            [
                "decomposition-grid",
                "--config-json",
                json.dumps(config),
                "--out-json",
                str(out_json),
                "--out-tex",
                str(out_tex),
            ]
        )
        == 0
    )
    payload = json.loads(out_json.read_text())
    assert payload["config"] == config and payload["horizons"] == [10, 20]
    assert {row["T"] for row in payload["cells"][0]["rows"]} == {20}
    assert r"\toprule" in out_tex.read_text()
