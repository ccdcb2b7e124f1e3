"""Tables from run files: the chosen hyperparameters, the ties and the information regime are visible."""

import csv
import io
import json
import subprocess
import sys

import numpy as np
import pytest

from hare.experiments.tables.aggregate import summarise_run, write_table
from hare.io import write_json, write_npz

COLD = "Regime: cold, no policy sees a logged interaction."


def _run(
    folder,
    experiment,
    environment,
    label,
    totals,
    policy=None,
    params=None,
    regime="cold",
    n_logged=0,
    tuned=None,
    ties=None,
    fixed=None,
    record=True,
    horizon=100,
    dataset=None,
    preparation=None,
):
    """A report run file and its sidecar, as ``run_job`` writes them (``record=False``: an older file without regime
    keys)."""
    env = {
        "name": environment,
        **({"dataset": dataset} if dataset else {}),
        **({"preparation": preparation} if preparation else {}),
    }
    job = {
        "experiment": experiment,
        "environment": env,
        "label": label,
        "policy": policy or label,
        "params": dict(params or {}),
        "role": "report",
    }
    if tuned is not None:
        job["tuned_grid"] = tuned
        chosen = ",".join(f"{k}={job['params'][k]}" for k in sorted(tuned))
        job["selected_from"] = f"{label}@{chosen}"
        job["selection_ties"] = ties or [job["selected_from"]]
    if fixed is not None:
        job["fixed"] = fixed
    sidecar = {
        "job": job,
        "horizon": horizon,
        "wall_time_s": 1.5,
        "peak_memory": {"host_max_rss_mb": 300.0},
        "device": "cpu",
    }
    if record:
        job.update(regime=regime, n_logged=n_logged)
        sidecar.update(regime=regime, n_logged=n_logged, warm_start_digest=None if regime == "cold" else "abc")
    path = folder / experiment / environment / f"{label}.npz"
    path.parent.mkdir(parents=True, exist_ok=True)
    totals = np.asarray(totals, dtype=float)
    write_npz(path, total_regret=totals, total_reward=100.0 - totals)
    write_json(path.with_suffix(".json"), sidecar)
    return path


def _table(tmp_path, runs, kind="regret", **kwargs):
    rows = write_table(kind, runs, tmp_path / "t.csv", tmp_path / "t.tex", "My caption.", "tab:t", **kwargs)
    return rows, (tmp_path / "t.tex").read_text(), list(csv.DictReader(io.StringIO((tmp_path / "t.csv").read_text())))


def test_regret_table_shows_the_chosen_value_and_the_regime(tmp_path):
    runs = [
        _run(
            tmp_path,
            "cls",
            env,
            "linucb",
            [10.0, 12.0],
            params={"alpha": 0.1, "lam": 1.0},
            tuned={"alpha": [0.01, 0.1, 1.0]},
        )
        for env in ("adult", "magic")
    ] + [_run(tmp_path, "cls", env, "random", [50.0, 52.0]) for env in ("adult", "magic")]
    rows, tex, table = _table(tmp_path, runs)
    assert rf"\caption{{My caption. {COLD}}}" in tex
    linucb = next(line for line in tex.splitlines() if line.startswith("LinUCB"))
    assert r"$\alpha$=0.1 &" in linucb and "/" not in linucb and r"\dagger" not in tex
    assert next(line for line in tex.splitlines() if line.startswith("Random")).startswith("Random & -- &")
    assert "every tuned policy searched the same 3 grid points" in tex
    assert {r["regime"] for r in table} == {"cold"} and {r["n_logged"] for r in table} == {"0"}
    chosen = {r["policy"]: (r["choice"], json.loads(r["chosen"])) for r in table}
    assert chosen == {"linucb": ("tuned", {"alpha": 0.1}), "random": ("none", {})}
    assert json.loads(next(r for r in table if r["policy"] == "linucb")["tuned_grid"]) == {"alpha": [0.01, 0.1, 1.0]}


def test_choices_that_differ_per_dataset_are_listed_in_column_order(tmp_path):
    runs = [
        _run(tmp_path, "cls", env, "lin_ts", [10.0, 11.0], params={"nu": nu}, tuned={"nu": [0.01, 0.1, 1.0]})
        for env, nu in (("adult", 0.01), ("magic", 1.0), ("shuttle", 0.01), ("mushroom", 0.1))
    ]
    _, tex, _ = _table(tmp_path, runs)
    # columns are sorted: adult, magic, mushroom, shuttle
    assert r"$\nu$=0.01/1/0.1/0.01 &" in tex
    assert "values separated by / are per dataset, in column order" in tex


def test_a_tied_selection_gets_a_dagger_and_a_note(tmp_path):
    runs = [
        _run(
            tmp_path,
            "cls",
            "adult",
            "linucb",
            [10.0, 12.0],
            params={"alpha": 0.01},
            tuned={"alpha": [0.01, 0.1, 1.0]},
            ties=["linucb@alpha=0.01", "linucb@alpha=0.1"],
        ),
        _run(
            tmp_path, "cls", "magic", "linucb", [10.0, 12.0], params={"alpha": 0.01}, tuned={"alpha": [0.01, 0.1, 1.0]}
        ),
    ]
    _, tex, table = _table(tmp_path, runs)
    cells = next(line for line in tex.splitlines() if line.startswith("LinUCB")).split(" & ")
    assert cells[2].endswith(r"$^\dagger$") and not cells[3].rstrip(" \\").endswith(r"$^\dagger$")
    assert r"$^\dagger$: grid points tied on the tuning runs; the first in sorted label order was taken" in tex
    ties = {r["environment"]: json.loads(r["ties"]) for r in table}
    assert ties == {"adult": ["linucb@alpha=0.01", "linucb@alpha=0.1"], "magic": []}


def test_fixed_entries_show_their_values_and_reason(tmp_path):
    runs = [
        _run(tmp_path, "cls", "adult", "ucb1", [20.0, 21.0], fixed="the original rule (Auer et al. 2002)"),
        _run(
            tmp_path,
            "cls",
            "adult",
            "kernel_ucb",
            [20.0, 21.0],
            params={"alpha": 0.1, "max_points": 50},
            fixed="LNUCB-TA's value",
        ),
        _run(
            tmp_path, "cls", "adult", "linucb", [10.0, 12.0], params={"alpha": 1.0}, tuned={"alpha": [0.01, 0.1, 1.0]}
        ),
    ]
    _, tex, table = _table(tmp_path, runs)
    assert r"UCB1 & $\alpha$=1 (fixed$^{b}$)" in tex and r"KernelUCB & $\alpha$=0.1 (fixed$^{a}$)" in tex
    assert r"$^{a}$ LNUCB-TA's value; $^{b}$ the original rule (Auer et al. 2002)" in tex
    fixed = {r["policy"]: (r["choice"], r["fixed"], json.loads(r["chosen"])) for r in table}
    assert fixed["ucb1"] == ("fixed", "the original rule (Auer et al. 2002)", {"alpha": 1.0})
    assert fixed["kernel_ucb"] == ("fixed", "LNUCB-TA's value", {"alpha": 0.1})


def test_warm_runs_state_the_shared_log_size(tmp_path):
    runs = [_run(tmp_path, "cls_warm", "adult", "random", [5.0, 6.0], regime="warm", n_logged=1000)]
    _, tex, table = _table(tmp_path, runs)
    assert (
        r"\caption{My caption. Regime: warm, every policy first learns from the same $M = 1000$ logged interactions.}"
        in tex
    )
    assert "Regime &" not in tex and table[0]["regime"] == "warm" and table[0]["n_logged"] == "1000"


def test_runs_of_both_regimes_get_a_regime_column_and_both_sentences(tmp_path):
    runs = [
        _run(
            tmp_path,
            "online",
            "mushroom",
            "linucb",
            [10.0, 12.0],
            params={"alpha": 0.1},
            tuned={"alpha": [0.01, 0.1, 1.0]},
        ),
        _run(
            tmp_path,
            "online_warm",
            "mushroom",
            "linucb",
            [8.0, 9.0],
            params={"alpha": 0.01},
            tuned={"alpha": [0.01, 0.1, 1.0]},
            regime="warm",
            n_logged=500,
        ),
    ]
    _, tex, table = _table(tmp_path, runs)
    assert (
        "Regimes: cold (no policy sees a logged interaction) and warm (every policy first learns from the same "
        "$M = 500$ logged interactions); the Regime column gives each row's." in tex
    )
    lines = tex.splitlines()
    assert lines[lines.index(r"\toprule") + 1].startswith("Regime & Policy & Hyperparameters & Mushroom")
    cold = lines.index(next(line for line in lines if line.startswith("cold & LinUCB")))
    assert lines[cold + 1] == r"\midrule" and lines[cold + 2].startswith(r"warm & LinUCB & $\alpha$=0.01")
    assert sorted((r["experiment"], r["regime"]) for r in table) == [("online", "cold"), ("online_warm", "warm")]


def test_older_run_files_without_a_regime_are_cold(tmp_path):
    path = _run(tmp_path, "cls", "adult", "random", [5.0, 6.0], record=False)
    assert (summarise_run(path)["regime"], summarise_run(path)["n_logged"]) == ("cold", 0)
    _, tex, _ = _table(tmp_path, [path])
    assert COLD in tex


def test_two_runs_for_one_cell_are_an_error(tmp_path):
    runs = [_run(tmp_path, experiment, "adult", "random", [5.0, 6.0]) for experiment in ("a", "b")]
    with pytest.raises(
        ValueError, match=r"two runs of 'random' on 'adult' in the cold regime \(experiments 'a' and 'b'\)"
    ):
        _table(tmp_path, runs)


def test_every_kind_of_table_ends_its_caption_with_the_regime(tmp_path):
    runs = [
        _run(tmp_path, "sweep", "adult", "linucb@alpha=0.1", [5.0, 6.0], policy="linucb", params={"alpha": 0.1}),
        _run(
            tmp_path,
            "sweep_warm",
            "adult",
            "linucb@alpha=0.1",
            [4.0, 6.0],
            policy="linucb",
            params={"alpha": 0.1},
            regime="warm",
            n_logged=200,
        ),
    ]
    for kind in ("sensitivity", "scaling", "compute"):
        _, tex, table = _table(tmp_path, runs, kind=kind)
        assert (
            "Regimes: cold (no policy sees a logged interaction) and warm (every policy first learns from the same "
            "$M = 200$ logged" in tex
        ), kind
        assert "\nRegime & " in tex and {r["regime"] for r in table} == {"cold", "warm"}, kind
    _, tex, _ = _table(tmp_path, runs[:1], kind="sensitivity")
    assert COLD in tex and "Regime & " not in tex


def test_published_table_shows_the_chosen_value(tmp_path):
    published = tmp_path / "published.csv"
    published.write_text(
        "policy,environment,mean,std,n_runs,horizon,source\nlinucb,adult,2097.5,50.3,20,10000,LNUCB-TA Table 2\n"
    )
    runs = [
        _run(tmp_path, "cls", "adult", "linucb", [10.0, 12.0], params={"alpha": 0.1}, tuned={"alpha": [0.01, 0.1, 1.0]})
    ]
    _, tex, table = _table(tmp_path, runs, kind="published", published_csv=published)
    assert r"LinUCB & Adult & $\alpha$=0.1 &" in tex and COLD in tex
    assert json.loads(table[0]["chosen"]) == {"alpha": 0.1}


def test_published_table_compares_like_with_like(tmp_path):
    """Rows are matched by dataset; only a preparation of the reference rows at the published T is comparable; a
    project-preparation row of the same policy is listed beside it; there is no difference column."""
    published = tmp_path / "published.csv"
    published.write_text(
        "policy,environment,mean,std,n_runs,horizon,source\nlinucb,adult,2097.5,50.3,2,100,LNUCB-TA Table 2\n"
    )
    runs = [
        _run(tmp_path, "pub", "adult_reference", "linucb", [2000.0, 2100.0], dataset="adult", preparation="reference"),
        _run(tmp_path, "pub", "adult_onehot", "linucb", [1600.0, 1650.0], dataset="adult"),
        _run(
            tmp_path, "pub", "adult_short", "linucb", [20.0, 21.0], dataset="adult", preparation="reference", horizon=50
        ),
    ]
    _, tex, table = _table(tmp_path, runs, kind="published", published_csv=published)
    by_env = {row["environment"]: row for row in table}
    assert by_env["adult_reference"]["comparable"] == "True" and by_env["adult_onehot"]["comparable"] == "False"
    assert by_env["adult_short"]["comparable"] == "False" and by_env["adult_onehot"]["preparation"] == "project"
    assert "Verdict" in tex and "reference (ordinal, raw, unit rows), $T=100$, $n=2$" in tex
    assert by_env["adult_reference"]["verdict"] == "overlaps" and by_env["adult_short"]["verdict"] == "not comparable"


def test_cli_table_accepts_runs_of_several_experiments(tmp_path):
    from hare.cli import main

    runs = [
        _run(
            tmp_path,
            "online",
            "mushroom",
            "linucb",
            [10.0, 12.0],
            params={"alpha": 0.1},
            tuned={"alpha": [0.01, 0.1, 1.0]},
        ),
        _run(
            tmp_path,
            "online_warm",
            "mushroom",
            "linucb",
            [8.0, 9.0],
            params={"alpha": 0.01},
            tuned={"alpha": [0.01, 0.1, 1.0]},
            regime="warm",
            n_logged=500,
        ),
    ]
    code = main(
        [
            "table",
            *map(str, runs),
            "--kind",
            "regret",
            "--csv",
            str(tmp_path / "c.csv"),
            "--tex",
            str(tmp_path / "c.tex"),
            "--caption",
            "C.",
            "--label",
            "tab:c",
        ]
    )
    assert code == 0 and "Regime & Policy" in (tmp_path / "c.tex").read_text()


def test_horizon_and_run_count_go_to_the_notes_when_shared_else_under_each_dataset(tmp_path):
    runs = [_run(tmp_path, "cls", env, "random", [5.0, 6.0]) for env in ("adult", "magic")]
    _, tex, _ = _table(tmp_path, runs)
    assert (
        "Policy & Hyperparameters & Adult & Magic \\\\" in tex
        and "Total pseudo-regret ($T=100$, $n=2$ for every dataset)" in tex
    )
    runs.append(_run(tmp_path, "cls", "shuttle", "random", [5.0, 6.0], horizon=80))
    _, tex, _ = _table(tmp_path, runs)
    assert r"\begin{tabular}[b]{@{}c@{}}Shuttle\\ $T=80$, $n=2$\end{tabular}" in tex and "for every dataset" not in tex


def test_warm_runs_fed_different_logs_are_refused():
    from hare.experiments.tables.aggregate import check_same_warm_start

    row = {"experiment": "x_warm", "environment": "mushroom", "regime": "warm"}
    same = [
        {**row, "policy": "linucb", "warm_start_digest": "aa"},
        {**row, "policy": "hare", "warm_start_digest": "aa"},
    ]
    check_same_warm_start(same)
    check_same_warm_start([*same, {**row, "environment": "adult", "policy": "hare", "warm_start_digest": "bb"}])
    with pytest.raises(
        ValueError,
        match=r"'x_warm', environment 'mushroom': the warm runs were fed different logs \(aa: hare; bb: linucb\)",
    ):
        check_same_warm_start([same[1], {**same[0], "warm_start_digest": "bb"}])


def test_config_captions_are_escaped_for_latex(tmp_path):
    """A caption is plain text from the config: TeX specials (10%, R&D) are typeset, not interpreted, and a
    hyperparameter's name (theta_min) is printed as the paper's symbol."""
    runs = [_run(tmp_path, "cls", "adult", "random", [50.0, 52.0])]
    write_table(
        "regret", runs, tmp_path / "t.csv", tmp_path / "t.tex", "Range (theta_min, theta_max), 10% & more.", "tab:t"
    )
    assert r"\caption{Range ($\theta_{\min}$, $\theta_{\max}$), 10\% \& more." in (tmp_path / "t.tex").read_text()


@pytest.mark.parametrize(
    ("policy", "params", "expected"),
    [
        ("linucb", {"alpha": 0.5}, {"alpha": 0.5}),
        ("linucb", {}, {"alpha": 1.0}),
        ("random", {}, {}),
        ("lnucb_ta", {"kappa": 0.25}, {"alpha_0": 1.0}),
    ],
)
def test_recorded_tunable_values_equal_those_the_policy_config_gives(tmp_path, policy, params, expected):
    """A sidecar records the tunable hyperparameters as played, so tables need not import the policies: the row
    equals the one derived from the policy's config class (an older sidecar without the record)."""
    from hare.experiments.job_spec import JobSpec
    from hare.experiments.run import run_job

    spec = {
        "experiment": "cls",
        "label": policy,
        "policy": policy,
        "params": params,
        "role": "report",
        "base_seed": 1,
        "device": "cpu",
        "environment": {
            "name": "sim",
            "kind": "synthetic",
            "params": {"n_items": 6, "n_clusters": 2, "n_users": 2},
            "dataset": None,
            "horizon": 5,
        },
        "n_runs": 2,
        "record_every": 5,
        "regime": "cold",
        "n_logged": 0,
    }
    out = tmp_path / "cls" / "sim" / f"{policy}.npz"
    out.parent.mkdir(parents=True)
    run_job(JobSpec.from_dict(spec), out, progress=False)
    sidecar = json.loads(out.with_suffix(".json").read_text())
    assert sidecar["tunable"] == expected
    recorded = summarise_run(out)
    del sidecar["tunable"]
    write_json(out.with_suffix(".json"), sidecar)
    derived = summarise_run(out)
    assert {k: recorded[k] for k in ("choice", "chosen")} == {k: derived[k] for k in ("choice", "chosen")}
    assert recorded["choice"] == ("set" if policy != "random" else "none")


def test_a_table_process_does_not_import_torch(tmp_path, repository):
    """Fifteen table processes would pay torch's import (about 1 s each) for nothing: the rows come from the files."""
    runs = [_run(tmp_path, "cls", "adult", "linucb", [10.0, 12.0], params={"alpha": 0.1}, tuned={"alpha": [0.01, 0.1]})]
    json_path = runs[0].with_suffix(".json")
    sidecar = json.loads(json_path.read_text())
    write_json(json_path, {**sidecar, "tunable": {"alpha": 0.1}})
    probe = (
        "import sys\nfrom hare.cli import main\n"
        f"code = main(['table', {str(runs[0])!r}, '--kind', 'regret', '--csv', {str(tmp_path / 't.csv')!r}, "
        f"'--tex', {str(tmp_path / 't.tex')!r}, "
        "'--caption', 'C.', '--label', 'tab:t'])\n"
        "print(code, 'torch' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True, cwd=repository
    ).stdout.split()
    assert out == ["0", "False"]
