"""A batch with a job store (:mod:`hare.experiments.job_store`): a second play of the same batch restores every job
byte for byte and plays none; a changed point of a grid plays with its whole grid (its results are a fresh build's),
the unchanged points keep their stored files; a damaged entry is played again, never restored."""

from __future__ import annotations

import json
from pathlib import Path

from hare.experiments.job_spec import JobSpec
from hare.experiments.job_store import JobStore
from hare.experiments.run import run_batch


def _entries(folder: Path, alphas=(0.1, 1.0, 10.0)) -> list[dict]:
    entries = []
    for alpha in alphas:
        spec = {
            "experiment": "test",
            "label": f"linucb@alpha={alpha}",
            "policy": "linucb",
            "params": {"alpha": alpha},
            "environment": {
                "name": "sim",
                "kind": "synthetic",
                "params": {"n_items": 8, "n_clusters": 2, "n_users": 2},
                "dataset": None,
                "horizon": 30,
            },
            "n_runs": 2,
            "role": "tuning",
            "base_seed": 3,
            "device": "cpu",
            "record_every": 5,
            "regime": "cold",
            "n_logged": 0,
        }
        entries.append(
            {"job": JobSpec.from_dict(spec), "out": str(folder / f"linucb@alpha={alpha}.npz"), "selected": None}
        )
    return entries


def _files(entries: list[dict]) -> dict[str, bytes]:
    return {
        str(path): path.read_bytes()
        for entry in entries
        for path in (Path(entry["out"]), Path(entry["out"]).with_suffix(".json"))
    }


def test_a_second_play_restores_every_job_byte_for_byte(tmp_path, caplog):
    store = tmp_path / "store"
    entries = _entries(tmp_path / "runs")
    run_batch(entries, progress=False, store=store)
    first = _files(entries)
    for path in first:
        Path(path).unlink()
    with caplog.at_level("INFO", logger="hare.experiments.run"):
        run_batch(_entries(tmp_path / "runs"), progress=False, store=store)
    assert _files(entries) == first
    assert "0 job(s) played, 3 restored from the store" in caplog.text


def test_a_changed_grid_point_is_played_with_its_grid_and_the_others_keep_their_files(tmp_path, caplog):
    store = tmp_path / "store"
    run_batch(_entries(tmp_path / "old"), progress=False, store=store)
    kept = _files(_entries(tmp_path / "old", alphas=(0.1, 1.0)))
    changed = _entries(tmp_path / "new", alphas=(0.1, 1.0, 5.0))
    with caplog.at_level("INFO", logger="hare.experiments.run"):
        run_batch(changed, progress=False, store=store)
    assert "1 job(s) played, 2 restored from the store" in caplog.text
    renamed = {path.replace(f"{tmp_path}/old", f"{tmp_path}/new"): data for path, data in kept.items()}
    assert {path: data for path, data in _files(changed).items() if "5.0" not in path} == renamed
    whole = _entries(tmp_path / "whole", alphas=(0.1, 1.0, 5.0))
    run_batch(whole, progress=False)
    import numpy as np

    alone, together = np.load(changed[2]["out"]), np.load(whole[2]["out"])
    assert all(np.array_equal(alone[key], together[key]) for key in together.files)


def test_a_damaged_entry_is_played_again(tmp_path):
    store = tmp_path / "store"
    entries = _entries(tmp_path / "runs", alphas=(1.0,))
    run_batch(entries, progress=False, store=store)
    (stored,) = list(store.glob("*/*/run.npz"))
    key = stored.parent.name
    Path(entries[0]["out"]).unlink()
    data = stored.read_bytes()
    stored.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))  # a flipped last byte, in the store only
    assert JobStore(store).restore(key, tmp_path / "elsewhere.npz") is None
    run_batch(_entries(tmp_path / "runs", alphas=(1.0,)), progress=False, store=store)
    sidecar = json.loads(Path(entries[0]["out"]).with_suffix(".json").read_text())
    assert sidecar["code"]["modules"]["hare.policies.linear"]
    assert JobStore(store).restore(key, tmp_path / "again.npz") == sidecar
