"""The calibration workload computes what it claims (checked against a brute-force LinUCB and direct solves), the
score is reference seconds over measured seconds, and ``hare calibrate --json`` writes every fact it prints."""

from __future__ import annotations

import json
import statistics
from itertools import count

import numpy as np
import torch

from hare import cli
from hare.experiments.studies import calibration
from hare.experiments.studies.calibration import (
    Workload,
    blas_backend,
    calibrate,
    format_calibration,
    make_inputs,
    play,
    score,
    time_workload,
)

SMALL = Workload(batch=3, dim=5, n_arms=4, rounds=12, small_dim=3, seed=7)


def brute_force(workload: Workload, inputs: dict[str, torch.Tensor]) -> dict[str, np.ndarray]:
    """LinUCB one run at a time with A formed and inverted every round, and S solved directly."""
    contexts, rewards, keys = (inputs[name].numpy() for name in ("contexts", "rewards", "keys"))
    w = workload
    arms = np.zeros((w.rounds, w.batch), dtype=np.int64)
    a_inv = np.zeros((w.batch, w.dim, w.dim))
    b = np.zeros((w.batch, w.dim))
    solutions = np.zeros((w.rounds, w.batch, w.small_dim))
    for run in range(w.batch):
        a, b_run, s = np.eye(w.dim), np.zeros(w.dim), np.eye(w.small_dim)
        for t in range(w.rounds):
            inverse = np.linalg.inv(a)
            x_all = contexts[t, run]
            ucb = x_all @ (inverse @ b_run) + w.alpha * np.sqrt(np.einsum("kd,de,ke->k", x_all, inverse, x_all))
            arm = int(np.argmax(ucb))
            arms[t, run] = arm
            a += np.outer(x_all[arm], x_all[arm])
            b_run += rewards[t, run, arm] * x_all[arm]
            s += np.outer(keys[t, run], keys[t, run])
            solutions[t, run] = np.linalg.solve(s, keys[t, run])
        a_inv[run], b[run] = np.linalg.inv(a), b_run
    return {"arms": arms, "a_inv": a_inv, "b": b, "solutions": solutions}


def test_the_workload_plays_linucb_and_solves_the_small_covariance():
    inputs = make_inputs(SMALL)
    assert inputs["contexts"].dtype == torch.float64 and inputs["contexts"].shape == (12, 3, 4, 5)
    got = {name: value.numpy() for name, value in play(SMALL, inputs).items()}
    expected = brute_force(SMALL, inputs)
    np.testing.assert_array_equal(got["arms"], expected["arms"])
    assert len(np.unique(got["arms"])) > 1
    np.testing.assert_allclose(got["a_inv"], expected["a_inv"], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got["b"], expected["b"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got["solutions"], expected["solutions"], rtol=1e-9, atol=1e-12)


def test_the_inputs_are_fixed_by_the_seed():
    first, second = make_inputs(SMALL), make_inputs(SMALL)
    assert all(torch.equal(first[name], second[name]) for name in first)
    assert not torch.equal(first["contexts"], make_inputs(Workload(**{**SMALL.__dict__, "seed": 8}))["contexts"])


def fake_clock(step: float):
    """A clock whose every read advances by ``step`` seconds (so each timed play lasts ``step``)."""
    ticks = count()
    return lambda: step * next(ticks)


def test_time_workload_takes_one_sample_per_repeat_and_restores_the_threads():
    threads = torch.get_num_threads()
    samples = time_workload(SMALL, make_inputs(SMALL), 1, 3, fake_clock(0.25))
    assert samples == [0.25, 0.25, 0.25]
    assert torch.get_num_threads() == threads


def test_time_workload_starts_no_play_once_its_budget_is_spent():
    assert time_workload(SMALL, make_inputs(SMALL), 1, 5, fake_clock(1.0), max_seconds=2.5) == [1.0, 1.0, 1.0]
    assert time_workload(SMALL, make_inputs(SMALL), 1, 5, fake_clock(10.0), max_seconds=2.5) == [10.0]


def test_the_score_is_reference_over_measured():
    assert score(2.0, 3.0) == 1.5
    assert score(0.5, 1.0) == 2.0
    assert score(1.0, 0.0) is None and score(0.0, 1.0) is None
    assert calibration.REFERENCE_SECONDS > 0, "the reference machine's seconds must be recorded"


def test_calibrate_reports_the_medians_and_their_score():
    facts = calibrate(SMALL, repeats=3, reference_seconds=2.0, clock=fake_clock(0.5))
    assert facts["one_thread_seconds"] == 0.5 and facts["default_threads_seconds"] == 0.5
    assert (
        facts["seconds"]
        == statistics.median(facts["samples"]["one_thread"]) + statistics.median(facts["samples"]["default_threads"])
        == 1.0
    )
    assert facts["score"] == 2.0
    assert facts["workload"]["dim"] == 5 and facts["cores"] >= 1 and facts["default_threads"] == torch.get_num_threads()
    assert facts["plays"] == {"one_thread": 3, "default_threads": 3}


def test_a_busy_machine_is_named_in_the_printed_lines():
    facts = calibrate(SMALL, repeats=1, reference_seconds=1.0, clock=fake_clock(0.5), busy=lambda: 0.6)
    assert facts["busy_share"] == 0.6
    quiet = format_calibration({**facts, "busy_share": 0.1})
    loaded = format_calibration(facts)
    assert len(quiet) == 3 and "calibration: 1.00 (1.00 = the reference machine" in quiet[1]
    assert loaded[:3] == quiet and "other work took 60% of the CPU" in loaded[3]
    assert format_calibration({**facts, "busy_share": None}) == quiet
    assert "n/a" in format_calibration({**facts, "score": None})[1]


def test_busy_share_is_the_non_idle_share_of_the_window(monkeypatch):
    readings = iter([(100, 400), (130, 440)])
    monkeypatch.setattr(calibration, "cpu_times", lambda: next(readings))
    assert calibration.busy_share(0.0) == 0.25
    monkeypatch.setattr(calibration, "cpu_times", lambda: None)
    assert calibration.busy_share(0.0) is None


def test_blas_backend_reads_torch_build_settings():
    assert blas_backend("  - Build settings: BLAS_INFO=mkl, BUILD_TYPE=Release") == "MKL"
    assert blas_backend("Build settings: BLAS_INFO=open, LAPACK_INFO=open") == "OpenBLAS"
    assert blas_backend("Build settings: BUILD_TYPE=Release") == "unknown"
    assert blas_backend() != "unknown" or not torch.backends.mkl.is_available()


def test_hare_calibrate_prints_and_writes_the_facts(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(
        calibration,
        "calibrate",
        lambda repeats: calibrate(SMALL, repeats, reference_seconds=4.0, clock=fake_clock(1.0), budget_seconds=100.0),
    )
    out = tmp_path / "logs" / "calibration.json"
    out.parent.mkdir()  # the command creates no folder
    assert cli.main(["calibrate", "--json", str(out), "--repeats", "2"]) == 0
    printed = capsys.readouterr().out
    facts = json.loads(out.read_text())
    assert {
        "cpu_model",
        "cores",
        "busy_share",
        "torch",
        "blas",
        "one_thread_seconds",
        "default_threads_seconds",
        "seconds",
        "reference_seconds",
        "score",
    } <= set(facts)
    assert facts["repeats"] == 2 and facts["seconds"] == 2.0 and facts["score"] == 2.0
    assert (
        "calibration: 2.00 (1.00 = the reference machine" in printed
        and facts["cpu_model"] in printed
        and facts["blas"] in printed
    )


def test_hare_calibrate_refuses_zero_repeats(capsys):
    assert cli.main(["calibrate", "--repeats", "0"]) == 2
    assert "argument --repeats: must be an integer >= 1" in capsys.readouterr().err
