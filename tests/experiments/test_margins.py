"""Margins and tuning totals from tuning runs: the rule by hand on planted files, nothing read from reported runs, and
the verdicts the margins give a comparison."""

import math

import numpy as np
import pytest
from scipy import stats

from hare.experiments.grid import expand_jobs
from hare.experiments.job_spec import EnvironmentSpec
from hare.experiments.margins import (
    MARGIN_FRACTION,
    batch_input_files,
    batch_margins,
    comparison_margin,
    input_files,
    margins,
    resolution,
)
from hare.io import write_json, write_npz
from hare.theory.claims.decide import evaluate_claim
from hare.verdicts import decide


@pytest.fixture
def config():
    return {
        "base_seed": 7,
        "environments": {"mushroom": {"kind": "classification", "dataset": "mushroom"}},
        "experiments": {
            "regret": {
                "environments": ["mushroom"],
                "horizon": 100,
                "n_runs": 3,
                "n_tuning_runs": 4,
                "tune": True,
                "policies": {
                    "random": {},
                    "linucb": {"grid": {"alpha": [0.1, 1.0]}},
                    "hare": {"grid": {"alpha": [0.1, 1.0]}},
                },
            },
            "untuned": {
                "environments": ["mushroom"],
                "horizon": 100,
                "n_runs": 3,
                "n_tuning_runs": 2,
                "policies": {"linucb": {"grid": {"alpha": [0.1, 1.0]}}},
            },
        },
    }


def _plant(root, stem, totals, label):
    write_npz(root / f"results/{stem}.npz", total_regret=np.asarray(totals, dtype=float))
    write_json(root / f"results/{stem}.json", {"job": {"role": "tuning", "label": label, "params": {}}})


def _select(root, experiment, environment, label, points):
    from hare.experiments.selection import write_selection

    write_selection(
        [root / f"results/tuning/{experiment}/{environment}/{label}@alpha={a}.npz" for a in points],
        root / f"results/selected/{experiment}/{environment}/{label}.json",
    )


def test_margin_is_a_tenth_of_the_comparators_tuning_regret(config, tmp_path):
    """By hand: the selected points' tuning means are LinUCB 40, HARE 30, Random 100, so a comparison against
    LinUCB has delta 4, against HARE 3, against Random 10 (each above the classification floor of 1)."""
    planted = {
        "random": [100.0, 110.0, 90.0, 100.0],
        "linucb@alpha=0.1": [40.0, 44.0, 36.0, 40.0],
        "linucb@alpha=1.0": [60.0, 60.0, 60.0, 60.0],
        "hare@alpha=0.1": [50.0, 50.0, 50.0, 50.0],
        "hare@alpha=1.0": [30.0, 31.0, 29.0, 30.0],
    }
    for label, totals in planted.items():
        _plant(tmp_path, f"tuning/regret/mushroom/{label}", totals, label)
    for label in ("linucb", "hare"):
        _select(tmp_path, "regret", "mushroom", label, (0.1, 1.0))
    # a reported run that must not be read: margins come from tuning runs only
    write_npz(tmp_path / "results/runs/regret/mushroom/random.npz", total_regret=np.array([1e9]))
    entry = margins(config, tmp_path)["experiments"]["regret"]["mushroom"]
    assert entry["best"] == "hare" and entry["best_mean"] == pytest.approx(30.0)
    assert entry["resolution"] == 1.0
    policies = entry["policies"]
    assert MARGIN_FRACTION == 0.1
    assert {label: policies[label]["margin"] for label in policies} == pytest.approx(
        {"linucb": 4.0, "hare": 3.0, "random": 10.0}
    )
    assert policies["linucb"]["label"] == "linucb@alpha=0.1" and policies["linucb"]["mean"] == pytest.approx(40.0)
    assert policies["hare"]["totals"] == [30.0, 31.0, 29.0, 30.0]
    assert "untuned" not in margins(config, tmp_path)["experiments"]
    assert all("results/runs/" not in path for path in input_files(config))


def test_the_floor_is_one_mistake_on_a_classification_dataset(config, tmp_path):
    """A comparator that almost never errs on the tuning runs (mean 0.25) gets delta 1, one wrong arm in the
    horizon, not 0.025: a margin below the measure's resolution could declare no tie at all."""
    for label, totals in {
        "random": [50.0] * 4,
        "linucb@alpha=0.1": [0.0, 0.0, 1.0, 0.0],
        "linucb@alpha=1.0": [3.0] * 4,
        "hare@alpha=0.1": [12.0] * 4,
        "hare@alpha=1.0": [20.0] * 4,
    }.items():
        _plant(tmp_path, f"tuning/regret/mushroom/{label}", totals, label)
    for label in ("linucb", "hare"):
        _select(tmp_path, "regret", "mushroom", label, (0.1, 1.0))
    policies = margins(config, tmp_path)["experiments"]["regret"]["mushroom"]["policies"]
    assert policies["linucb"]["mean"] == pytest.approx(0.25) and policies["linucb"]["margin"] == 1.0
    assert policies["hare"]["margin"] == pytest.approx(1.2)


def test_the_floor_on_hare_sim_is_the_mean_gap_from_randoms_tuning_runs(tmp_path):
    """HARE-Sim with K = 5 arms and T = 100 rounds: Random's mean tuning regret 40 is 0.4 a round, the mean gap over
    all arms (the best arm's 0 included), so one mistake costs 0.4 * 5 / 4 = 0.5 on average."""
    config = {
        "base_seed": 7,
        "environments": {"sim": {"kind": "synthetic", "params": {"variant": "linear", "n_items": 5, "n_clusters": 1}}},
        "experiments": {
            "regret": {
                "environments": ["sim"],
                "horizon": 100,
                "n_runs": 3,
                "n_tuning_runs": 2,
                "tune": True,
                "policies": {"random": {}, "linucb": {"grid": {"alpha": [0.1, 1.0]}}},
            }
        },
    }
    for label, totals in {
        "random": [38.0, 42.0],
        "linucb@alpha=0.1": [2.0, 2.0],
        "linucb@alpha=1.0": [3.0, 3.0],
    }.items():
        _plant(tmp_path, f"tuning/regret/sim/{label}", totals, label)
    _select(tmp_path, "regret", "sim", "linucb", (0.1, 1.0))
    entry = margins(config, tmp_path)["experiments"]["regret"]["sim"]
    assert entry["resolution"] == pytest.approx(0.5)
    assert entry["policies"]["linucb"]["margin"] == pytest.approx(0.5)  # 10% of 2 is below the floor
    assert entry["policies"]["random"]["margin"] == pytest.approx(4.0)


def test_resolution_and_margin_by_hand():
    spec = EnvironmentSpec(name="sim", kind="synthetic", params={"n_items": 60}, dataset=None, horizon=1000)
    assert resolution(spec, 332.3) == pytest.approx(332.3 / 1000 * 60 / 59)
    assert resolution(spec, None) is None
    mushroom = EnvironmentSpec(name="mushroom", kind="classification", params={}, dataset="mushroom", horizon=500)
    assert resolution(mushroom, None) == 1.0
    obd = EnvironmentSpec(name="obd", kind="replay", params={}, dataset="open_bandit", horizon=500)
    assert resolution(obd, 100.0) is None
    assert comparison_margin(88.3, 1.0) == pytest.approx(8.83)
    assert comparison_margin(0.4, 1.0) == 1.0
    assert comparison_margin(0.0, None) is None
    assert comparison_margin(50.0, None) == pytest.approx(5.0)


def test_margins_without_random(config, tmp_path):
    """Without a Random entry a classification dataset still has its floor of one mistake and every comparator its
    margin (the rule needs the comparator's tuning runs, not Random's)."""
    del config["experiments"]["regret"]["policies"]["random"]
    for label in ("linucb", "hare"):
        for a, total in ((0.1, 5.0), (1.0, 60.0)):
            _plant(tmp_path, f"tuning/regret/mushroom/{label}@alpha={a}", [total, total], f"{label}@alpha={a}")
        _select(tmp_path, "regret", "mushroom", label, (0.1, 1.0))
    entry = margins(config, tmp_path)["experiments"]["regret"]["mushroom"]
    assert entry["resolution"] == 1.0 and entry["policies"]["hare"]["margin"] == 1.0
    assert not math.isnan(entry["best_mean"])


def test_reference_tuning_runs_share_the_tuning_seeds(config):
    """Random's reference tuning job plays the tuning seeds of the grid points (same role, base seed and run count)."""
    jobs = [j for j in expand_jobs(config) if j.experiment == "regret" and j.role == "tuning"]
    reference = next(j for j in jobs if j.label == "random")
    point = next(j for j in jobs if j.label == "linucb@alpha=0.1")
    for field in ("base_seed", "role", "n_runs", "environment"):
        assert getattr(reference.spec, field) == getattr(point.spec, field)


def test_one_batch_file_and_a_batch_the_config_does_not_tune(config, tmp_path):
    from hare.experiments.margins import MARGIN_RULE, batch_input_files

    for label, totals in {
        "random": [9.0, 11.0, 10.0, 10.0],
        "linucb@alpha=0.1": [20.0] * 4,
        "linucb@alpha=1.0": [40.0] * 4,
        "hare@alpha=0.1": [30.0] * 4,
        "hare@alpha=1.0": [50.0] * 4,
    }.items():
        _plant(tmp_path, f"tuning/regret/mushroom/{label}", totals, label)
    for label in ("linucb", "hare"):
        _select(tmp_path, "regret", "mushroom", label, (0.1, 1.0))
    entry = batch_margins(config, "regret", "mushroom", tmp_path)
    assert entry["policies"]["linucb"]["margin"] == pytest.approx(MARGIN_FRACTION * 20.0)
    assert entry["experiment"] == "regret" and entry["rule"] == MARGIN_RULE
    assert all("/regret/mushroom/" in path for path in batch_input_files(config, "regret", "mushroom"))
    untuned = batch_margins(config, "untuned", "mushroom", tmp_path)
    assert untuned["policies"] == {} and untuned["resolution"] is None
    with pytest.raises(ValueError, match="nope/mushroom"):
        batch_margins(config, "nope", "mushroom", tmp_path)


def _paired(mean, half, n=5):
    """``n`` paired differences whose Student-t 95% interval is exactly ``mean +- half``."""
    z = np.arange(n) - (n - 1) / 2
    z = z / z.std(ddof=1)
    return mean + half / (stats.t.ppf(0.975, n - 1) / math.sqrt(n)) * z


SHUTTLE = {"random": [250.0, 246.0, 254.0, 252.0], "linucb": [88.3] * 4, "lnucb_ta": [9.2] * 4, "hare": [90.0] * 4}
"""Tuning totals of Shuttle, warm, as the default build measured them: LinUCB 88.3, LNUCB-TA 9.2."""


def _shuttle_claim(tmp_path, comparator, differences):
    """The register's comparison of HARE against ``comparator`` (its form in paper/claims.yaml), on margins written
    by :func:`batch_margins` from planted tuning runs and reported runs whose paired differences are ``differences``."""
    config = {
        "base_seed": 7,
        "environments": {"shuttle": {"kind": "classification", "dataset": "shuttle"}},
        "experiments": {
            "warm": {
                "environments": ["shuttle"],
                "horizon": 500,
                "n_runs": len(differences),
                "n_tuning_runs": 4,
                "tune": True,
                "policies": {label: {} for label in SHUTTLE},
            }
        },
    }
    for label, totals in SHUTTLE.items():
        _plant(tmp_path, f"tuning/warm/shuttle/{label}", totals, label)
    write_json(tmp_path / "m.json", batch_margins(config, "warm", "shuttle", tmp_path))
    base = np.linspace(80.0, 96.0, len(differences))
    for label, totals in (("hare", base + differences), (comparator, base)):
        write_npz(tmp_path / f"{label}.npz", total_regret=totals, total_reward=500 - totals)
        write_json(tmp_path / f"{label}.json", {"job": {"experiment": "warm", "environment": "shuttle", "n_runs": 5}})
    claim = {
        "key": f"hare_vs_{comparator}",
        "statement": f"HARE has lower total regret than {comparator}.",
        "inputs": {"m": "m.json", "hare": "hare.npz", "other": f"{comparator}.npz"},
        "per_run": "hare.total_regret - other.total_regret",
        "compare": "<",
        "threshold": 0,
        "margin": f"m.policies.{comparator}.margin",
        "comparator_regret": f"m.policies.{comparator}.mean",
        "power": ["m.policies.hare.totals", f"m.policies.{comparator}.totals"],
    }
    return evaluate_claim(claim, tmp_path)


def test_a_tie_within_a_tenth_of_the_comparator_is_equivalent(tmp_path):
    """HARE against LinUCB (88.3 on the tuning runs, so delta 8.83): an interval [-3, 7] lies inside it."""
    result = _shuttle_claim(tmp_path, "linucb", _paired(2.0, 5.0))
    assert (result.low, result.high) == pytest.approx((-3.0, 7.0))
    assert result.margin == pytest.approx(8.83) and result.margin_share == pytest.approx(0.1)
    assert result.status == "EQUIVALENT"


def test_the_shuttle_interval_is_no_longer_a_tie(tmp_path):
    """The measured case: HARE against LinUCB on Shuttle, warm, interval [-1.8, 12.0]. The old margin, a tenth of the
    gap between Random (250.5) and the best policy (LNUCB-TA, 9.2), was 24.1 and called it EQUIVALENT; a tenth of
    LinUCB's regret, 8.83, leaves it open: 12 more regret than 88 may be a real difference."""
    result = _shuttle_claim(tmp_path, "linucb", _paired(5.1, 6.9))
    old_margin = 0.1 * (np.mean(SHUTTLE["random"]) - 9.2)
    assert decide(result.low, result.high, "<", 0.0, result.measured, old_margin) == "EQUIVALENT"
    assert result.margin == pytest.approx(8.83) and result.status == "INCONCLUSIVE"


@pytest.mark.parametrize(("mean", "half"), [(12.0, 13.0), (12.0, 2.0), (-12.0, 11.0)])
def test_a_difference_beyond_a_tenth_of_the_comparator_is_not_equivalent(tmp_path, mean, half):
    """A difference of 12 against LinUCB's 88.3 (14%, more than delta = 8.83): INCONCLUSIVE when the interval
    straddles 0, FAIL or PASS when it does not; never EQUIVALENT."""
    result = _shuttle_claim(tmp_path, "linucb", _paired(mean, half))
    assert result.status == ("INCONCLUSIVE" if half > abs(mean) else "FAIL" if mean > 0 else "PASS")


def test_against_a_comparator_near_zero_the_margin_is_one_mistake(tmp_path):
    """Against LNUCB-TA (9.2 on the tuning runs) delta is the floor, one mistake, not a tenth (0.92) and not the old
    24.1 that exceeded five times LNUCB-TA's regret; shown as 11% of the comparator's regret."""
    result = _shuttle_claim(tmp_path, "lnucb_ta", _paired(0.2, 0.5))
    assert result.margin == pytest.approx(1.0) and result.margin_share == pytest.approx(1 / 9.2)
    assert result.status == "EQUIVALENT"
    assert _shuttle_claim(tmp_path, "lnucb_ta", _paired(0.2, 1.0)).status == "INCONCLUSIVE"


def _sweep_config():
    """An untuned sweep with ``plan: true`` on a classification dataset and on the replay environment."""
    return {
        "base_seed": 7,
        "environments": {
            "mushroom": {"kind": "classification", "dataset": "mushroom"},
            "obd": {"kind": "replay", "dataset": "open_bandit", "horizon": 500},
        },
        "experiments": {
            "sweep": {
                "environments": ["mushroom", "obd"],
                "horizon": 100,
                "n_runs": 5,
                "n_tuning_runs": 4,
                "plan": True,
                "policies": {"random": {}, "linucb": {"grid": {"alpha": [0.1, 1.0]}}},
            }
        },
    }


def test_a_planned_sweep_has_a_margin_for_every_reported_point(tmp_path):
    """By hand, from the tuning runs of every reported job (plan: true), keyed by the report's label: Random 100,
    LinUCB at alpha 0.1 40, at alpha 1.0 5 (a tenth, 0.5, is below the classification floor of one mistake); nothing
    is selected and no reported run is read."""
    config = _sweep_config()
    planted = {
        "random": [100.0, 110.0, 90.0, 100.0],
        "linucb@alpha=0.1": [40.0, 44.0, 36.0, 40.0],
        "linucb@alpha=1.0": [5.0, 6.0, 4.0, 5.0],
    }
    for label, totals in planted.items():
        _plant(tmp_path, f"tuning/sweep/mushroom/{label}", totals, label)
    write_npz(tmp_path / "results/runs/sweep/mushroom/random.npz", total_regret=np.array([1e9]))
    entry = batch_margins(config, "sweep", "mushroom", tmp_path)
    policies = entry["policies"]
    assert set(policies) == set(planted)
    assert {label: p["margin"] for label, p in policies.items()} == pytest.approx(
        {"random": 10.0, "linucb@alpha=0.1": 4.0, "linucb@alpha=1.0": 1.0}
    )
    assert {label: p["mean"] for label, p in policies.items()} == pytest.approx(
        {"random": 100.0, "linucb@alpha=0.1": 40.0, "linucb@alpha=1.0": 5.0}
    )
    assert policies["linucb@alpha=0.1"]["totals"] == planted["linucb@alpha=0.1"]
    assert policies["linucb@alpha=0.1"]["source"] == "results/tuning/sweep/mushroom/linucb@alpha=0.1.npz"
    assert entry["measure"] == "total_regret" and entry["resolution"] == 1.0 and entry["n_tuning_runs"] == 4
    assert entry["best"] == "linucb@alpha=1.0" and entry["best_mean"] == pytest.approx(5.0)
    assert not (tmp_path / "results/selected").exists()
    assert batch_input_files(config, "sweep", "mushroom") == sorted(
        f"results/tuning/sweep/mushroom/{label}.npz" for label in planted
    )
    assert all("results/runs/" not in path for path in input_files(config))


def test_a_replay_margin_is_a_tenth_of_the_comparators_replay_reward(tmp_path):
    """The replay environment has no regret: the margins are read off total_mean_reward, a tenth of the comparator's
    mean replay reward on the tuning runs (no floor), and the best policy earns the most."""
    config = _sweep_config()
    planted = {
        "random": [0.02, 0.04, 0.03, 0.03],
        "linucb@alpha=0.1": [0.05, 0.06, 0.04, 0.05],
        "linucb@alpha=1.0": [0.04, 0.04, 0.04, 0.04],
    }
    for label, rates in planted.items():
        write_npz(tmp_path / f"results/tuning/sweep/obd/{label}.npz", total_mean_reward=np.asarray(rates))
    entry = batch_margins(config, "sweep", "obd", tmp_path)
    assert entry["measure"] == "total_mean_reward" and entry["resolution"] is None
    assert {label: p["margin"] for label, p in entry["policies"].items()} == pytest.approx(
        {"random": 0.003, "linucb@alpha=0.1": 0.005, "linucb@alpha=1.0": 0.004}
    )
    assert entry["best"] == "linucb@alpha=0.1"


def _sweep_claim(tmp_path, environment, measure, compare, differences, comparator="linucb@alpha=0.1"):
    """A register comparison of LinUCB at alpha 1.0 against the grid point ``comparator`` of a planned sweep, its
    margin read by item access from the margins file :func:`batch_margins` writes."""
    config = _sweep_config()
    write_json(tmp_path / "m.json", batch_margins(config, "sweep", environment, tmp_path))
    base = np.linspace(0.5, 0.7, len(differences)) if measure == "total_mean_reward" else np.linspace(30, 50, 5)
    job = {"experiment": "sweep", "environment": environment, "n_runs": len(differences)}
    for name, values in (("ours", base + differences), ("other", base)):
        write_npz(tmp_path / f"{name}.npz", **{measure: values})
        write_json(tmp_path / f"{name}.json", {"job": job})
    claim = {
        "key": "sweep_point",
        "statement": "LinUCB at alpha 1.0 against alpha 0.1.",
        "inputs": {"m": "m.json", "ours": "ours.npz", "other": "other.npz"},
        "per_run": f"ours.{measure} - other.{measure}",
        "compare": compare,
        "threshold": 0,
        "margin": f'm.policies["{comparator}"].margin',
        "comparator_regret": f'm.policies["{comparator}"].mean',
        "power": ['m.policies["linucb@alpha=1.0"].totals', f'm.policies["{comparator}"].totals'],
    }
    return evaluate_claim(claim, tmp_path)


def test_a_claim_on_a_grid_point_reads_its_margin_and_decides_a_tie(tmp_path):
    """A tie planted within the comparator point's delta (4, a tenth of 40) is EQUIVALENT; the same interval without
    the margin could only be INCONCLUSIVE; the paired tuning totals plan the run count."""
    for label, totals in {
        "random": [100.0] * 4,
        "linucb@alpha=0.1": [40.0, 44.0, 36.0, 40.0],
        "linucb@alpha=1.0": [41.0, 43.0, 37.0, 39.0],
    }.items():
        _plant(tmp_path, f"tuning/sweep/mushroom/{label}", totals, label)
    result = _sweep_claim(tmp_path, "mushroom", "total_regret", "<", _paired(0.5, 3.0))
    assert (result.low, result.high) == pytest.approx((-2.5, 3.5))
    assert result.margin == pytest.approx(4.0) and result.comparator_regret == pytest.approx(40.0)
    assert result.status == "EQUIVALENT"
    assert decide(result.low, result.high, "<", 0.0, result.measured, None) == "INCONCLUSIVE"
    assert result.planned_runs is not None and result.sd == pytest.approx(np.std([1.0, -1.0, 1.0, -1.0], ddof=1))


def test_a_replay_claim_on_a_grid_point_is_equivalent_within_a_tenth_of_the_reward(tmp_path):
    """HARE-style replay comparison (reward difference, compare >): delta 0.005, a tenth of the comparator's 0.05."""
    for label, rates in {
        "random": [0.03] * 4,
        "linucb@alpha=0.1": [0.05, 0.06, 0.04, 0.05],
        "linucb@alpha=1.0": [0.05, 0.05, 0.05, 0.05],
    }.items():
        write_npz(tmp_path / f"results/tuning/sweep/obd/{label}.npz", total_mean_reward=np.asarray(rates))
    result = _sweep_claim(tmp_path, "obd", "total_mean_reward", ">", _paired(0.001, 0.002))
    assert result.margin == pytest.approx(0.005) and result.status == "EQUIVALENT"
    assert _sweep_claim(tmp_path, "obd", "total_mean_reward", ">", _paired(0.003, 0.004)).status == "INCONCLUSIVE"
