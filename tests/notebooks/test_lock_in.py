"""The lock-in notebook on planted run files: the share of runs above 0.9 x Random's mean and the standard deviation one
locked-in run would imply, against hand computations; and the notebook end to end through papermill (as the workflow
runs it) with datasets, Random references and the tuning runs missing."""

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hare.io import write_json, write_npz

REPOSITORY = Path(__file__).resolve().parents[2]
NOTEBOOK = REPOSITORY / "notebooks" / "lock_in.py"
PARAMETERS = (
    'runs: list = []\nfigures: list = ["lock_in.pdf"]\n'
    'outputs: dict = {"json": "lock_in.json", "macros": "lock_in_macros.tex"}\n'
    'published_table: str = "paper/published/lnucb_ta_table2.csv"'
)
# Published rows (policy lnucb_ta): Adult as LNUCB-TA's Table 2 quotes it; Mushroom with a planted std wide enough
# for a lock-in.
PUBLISHED = {
    "adult": (1673.1, "12.07", 20, 10000),
    "mushroom": (19.85, "5000", 20, 8124),
    "magic": (1931.6, "31.22", 20, 10000),
}

# (experiment, role, environment, dataset, label, horizon) -> total regret per run
PLANTED = {
    ("published", "report", "adult_reference", "adult", "random", 1000): [
        500,
        480,
        520,
        510,
        490,
    ],  # mean 500, level 450
    ("published", "report", "adult_reference", "adult", "lnucb_ta", 1000): [200, 210, 190, 460, 205],  # 1 above
    ("published", "report", "adult_reference", "adult", "lnucb_ta_public", 1000): [300, 310, 455, 470, 290],  # 2 above
    ("published", "report", "mushroom_reference", "mushroom", "random", 1000): [400, 400, 400, 400, 400],  # level 360
    ("published", "report", "mushroom_reference", "mushroom", "lnucb_ta", 1000): [10, 12, 11, 9, 8],
    ("published", "report", "mushroom_reference", "mushroom", "lnucb_ta_public", 1000): [10, 12, 361, 9, 8],  # 1 above
    ("published", "report", "adult_onehot", "adult", "linucb", 1000): [100, 100, 100, 100, 100],  # not read
    ("published", "tuning", "adult_reference", "adult", "lnucb_ta@alpha_0=0.1", 1000): [460, 100],
    ("published", "tuning", "adult_reference", "adult", "lnucb_ta@alpha_0=1.0", 1000): [100, 100],
    ("published", "tuning", "adult_reference", "adult", "lnucb_ta@alpha_0=10.0", 1000): [451, 470],
    ("published", "tuning", "adult_reference", "adult", "lnucb_ta_public@alpha_0=0.1", 1000): [100, 100],
    ("published", "tuning", "adult_reference", "adult", "lnucb_ta_public@alpha_0=1.0", 1000): [100, 500],
    ("published", "tuning", "adult_reference", "adult", "lnucb_ta_public@alpha_0=10.0", 1000): [100, 100],
    ("classification", "report", "adult", "adult", "random", 500): [240, 260, 250, 250],  # mean 250, level 225
    ("classification", "report", "adult", "adult", "lnucb_ta", 500): [100, 230, 240, 90],  # 2 above
    ("classification", "report", "adult", "adult", "linucb", 500): [240, 240, 240, 240],  # not read
    ("classification", "report", "magic", "magic", "random", 500): [260, 260, 260, 260],  # level 234
    ("classification", "report", "magic", "magic", "lnucb_ta", 500): [100, 100, 100, 234],  # at the level: not above
    ("classification", "report", "mushroom", "mushroom", "lnucb_ta", 500): [5, 5, 5, 5],  # no Random: skipped
    ("exploration_sweep", "report", "adult", "adult", "lnucb_ta@alpha_0=0.1", 500): [230, 100, 100],  # 1/3
    ("exploration_sweep", "report", "adult", "adult", "lnucb_ta@alpha_0=1.0", 500): [100, 100, 100],
    ("exploration_sweep", "report", "adult", "adult", "lnucb_ta@alpha_0=10.0", 500): [226, 240, 250],  # 3/3
    ("exploration_sweep", "report", "adult", "adult", "linucb@alpha=0.1", 500): [300, 300, 300],  # not read
    ("exploration_sweep", "report", "magic", "magic", "lnucb_ta@alpha_0=0.1", 500): [100, 100, 100],
    ("exploration_sweep", "report", "magic", "magic", "lnucb_ta@alpha_0=1.0", 500): [100, 240, 100],  # 1/3
    ("exploration_sweep", "report", "magic", "magic", "lnucb_ta@alpha_0=10.0", 500): [100, 100, 100],
}


def plant(root: Path, keep=lambda key: True) -> list[str]:
    """Run files (npz and sidecar) of the planted runs ``keep`` accepts and the published table, relative to
    ``root``."""
    runs = []
    for key, totals in PLANTED.items():
        if not keep(key):
            continue
        experiment, role, environment, dataset, label, horizon = key
        policy, _, point = label.partition("@")
        params = {name: float(value) for name, value in (item.split("=") for item in point.split(","))} if point else {}
        relative = f"results/{'runs' if role == 'report' else 'tuning'}/{experiment}/{environment}/{label}.npz"
        write_npz(root / relative, total_regret=np.asarray(totals, dtype=np.float64))
        environment_entry = {
            "name": environment,
            "dataset": dataset,
            "kind": "classification",
            **({"preparation": "reference"} if environment.endswith("_reference") else {}),
        }
        write_json(
            (root / relative).with_suffix(".json"),
            {
                "horizon": horizon,
                "n_runs": len(totals),
                "job": {
                    "experiment": experiment,
                    "role": role,
                    "label": label,
                    "policy": "lnucb_ta" if policy.startswith("lnucb_ta") else policy,
                    "params": params,
                    "environment": environment_entry,
                },
            },
        )
        runs.append(relative)
    table = root / "published.csv"
    table.write_text(
        "policy,environment,mean,std,n_runs,horizon,source\n"
        + "".join(
            f"lnucb_ta,{dataset},{mean},{std},{n},{horizon},planted\n"
            for dataset, (mean, std, n, horizon) in PUBLISHED.items()
        )
        + "linucb,adult,2097.5,50.3,20,10000,planted\n"
    )
    return [*runs, "published.csv"]


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The notebook's namespace after running it on every planted run (absolute paths)."""
    root = tmp_path_factory.mktemp("lock_in")
    runs = [str(root / path) for path in plant(root)]
    source = NOTEBOOK.read_text()
    assert PARAMETERS in source
    figure, checks, tex = (
        root / "lock_in.pdf",
        root / "checks" / "lock_in.json",
        root / "generated" / "lock_in_macros.tex",
    )
    replaced = source.replace(
        PARAMETERS,
        f"runs = {runs!r}\nfigures = [{str(figure)!r}]\noutputs = {{'json': {str(checks)!r}, 'macros': {str(tex)!r}}}\n"
        f"published_table = {str(root / 'published.csv')!r}",
    )
    namespace: dict = {}
    exec(compile(replaced, str(NOTEBOOK), "exec"), namespace)
    assert figure.read_bytes().startswith(b"%PDF-")
    return {"namespace": namespace, "json": json.loads(checks.read_text()), "macros": tex.read_text()}


def _row(document, experiment, dataset, label, source="reported"):
    (row,) = [
        r
        for r in document["rows"]
        if (r["experiment"], r["dataset"], r["label"], r["source"]) == (experiment, dataset, label, source)
    ]
    return row


def _macros(text: str) -> dict[str, str]:
    return dict(re.findall(r"\\newcommand\{\\([A-Za-z]+)\}\{(.*)\}", text))


@pytest.mark.parametrize(
    ("experiment", "dataset", "label", "source", "random", "above", "n"),
    [
        ("published", "adult", "lnucb_ta", "reported", [500, 480, 520, 510, 490], 1, 5),
        ("published", "adult", "lnucb_ta_public", "reported", [500, 480, 520, 510, 490], 2, 5),
        ("published", "mushroom", "lnucb_ta_public", "reported", [400] * 5, 1, 5),
        ("classification", "adult", "lnucb_ta", "reported", [240, 260, 250, 250], 2, 4),
        ("classification", "magic", "lnucb_ta", "reported", [260] * 4, 0, 4),
        (
            "exploration_sweep",
            "adult",
            "lnucb_ta@alpha_0=0.1",
            "reported",
            [240, 260, 250, 250],
            1,
            3,
        ),  # Random of classification
        ("exploration_sweep", "adult", "lnucb_ta@alpha_0=10.0", "reported", [240, 260, 250, 250], 3, 3),
        ("exploration_sweep", "magic", "lnucb_ta@alpha_0=1.0", "reported", [260] * 4, 1, 3),
        ("published", "adult", "lnucb_ta@alpha_0=10.0", "tuning", [500, 480, 520, 510, 490], 2, 2),
        ("published", "adult", "lnucb_ta_public@alpha_0=1.0", "tuning", [500, 480, 520, 510, 490], 1, 2),
    ],
)
def test_lock_in_share_against_a_hand_count(executed, experiment, dataset, label, source, random, above, n):
    row = _row(executed["json"], experiment, dataset, label, source)
    assert row["level"] == pytest.approx(0.9 * sum(random) / len(random))
    assert (row["n_runs"], row["n_above"]) == (n, above)
    assert row["share_above"] == pytest.approx(above / n)
    limit = max(0.05, 1 - 0.025 ** (1 / n))  # the claim's limit: 5%, or the zero-event exact bound of n runs
    assert row["limit"] == pytest.approx(limit, rel=1e-12)
    assert row["fails_no_lock_in"] == (above / n > 0.05)  # the observed share above 5%, as the text counts groups


def test_implied_std_against_a_hand_computation(executed):
    # Adult: level 0.9 x 500 = 450 at T = 1,000, scaled to the published T = 10,000; 19 runs at 1673.1 and one at 4500.
    adult = _row(executed["json"], "published", "adult", "lnucb_ta")["published"]
    level = 450 * 10000 / 1000
    assert adult["level_at_published_horizon"] == pytest.approx(level)
    assert adult["implied_std"] == pytest.approx(abs(level - 1673.1) / math.sqrt(20), rel=1e-12)
    mean = (19 * 1673.1 + level) / 20  # the same sample by hand, ddof = 1
    assert adult["implied_std"] == pytest.approx(
        math.sqrt((19 * (1673.1 - mean) ** 2 + (level - mean) ** 2) / 19), rel=1e-12
    )
    assert adult["implied_std_at_published_mean"] == pytest.approx(abs(level - 1673.1) * math.sqrt(20) / 19, rel=1e-12)
    assert adult["implied_std_at_our_n_runs"] == pytest.approx(abs(level - 1673.1) / math.sqrt(5), rel=1e-12)
    assert adult["compatible"] is False
    # Mushroom: level 360 scaled to T = 8,124; the planted published std (5000) is wide enough for one lock-in.
    mushroom = _row(executed["json"], "published", "mushroom", "lnucb_ta")["published"]
    assert mushroom["implied_std"] == pytest.approx(abs(360 * 8.124 - 19.85) / math.sqrt(20), rel=1e-12)
    assert mushroom["compatible"] is True
    assert "published" not in _row(executed["json"], "published", "adult", "lnucb_ta_public")
    macros = _macros(executed["macros"])
    assert macros["lockInImpliedStdAdult"] == "632.1" and macros["lockInPublishedStdAdult"] == "12.07"
    assert macros["lockInCompatibleAdult"] == "not compatible" and macros["lockInCompatibleMushroom"] == "compatible"
    assert macros["lockInCompatibleMagic"] == "untested for compatibility" and macros["lockInImpliedStdMagic"] == "--"
    assert macros["lockInLevelAdult"] == "4{,}500.0"


def test_macros_count_the_runs(executed):
    macros = _macros(executed["macros"])
    assert (
        macros["lockInCountPublishedAdultLnucbTa"],
        macros["lockInRunsPublishedAdultLnucbTa"],
        macros["lockInSharePublishedAdultLnucbTa"],
    ) == ("1", "5", r"20\%")
    assert (
        macros["lockInCountClassificationAdultLnucbTa"] == "2"
        and macros["lockInShareClassificationAdultLnucbTa"] == r"50\%"
    )
    assert macros["lockInCountClassificationMushroomLnucbTa"] == "--"  # no Random there
    # LNUCB-TA as written, published and classification pooled: 1 + 0 + 2 + 0 of 5 + 5 + 4 + 4; 2 of 4 groups above 5%
    assert (
        macros["lockInCountLnucbTa"],
        macros["lockInRunsLnucbTa"],
        macros["lockInFailingLnucbTa"],
        macros["lockInGroupsLnucbTa"],
    ) == ("3", "18", "2", "4")
    assert (macros["lockInSweepCount"], macros["lockInSweepRuns"]) == ("5", "18")
    assert (macros["lockInSweepCountAlphaZeroOne"], macros["lockInSweepCountAlphaOneZero"]) == ("1", "3")
    assert (macros["lockInLevel"], macros["lockInMaxShare"]) == ("0.9", r"5\%")


def test_figure_panels(executed):
    namespace = executed["namespace"]
    ax_runs, ax_share = namespace["ax_runs"], namespace["ax_share"]
    ticks = [t.get_text() for t in ax_runs.get_xticklabels()]
    assert ticks == [
        "Adult, $n$=5",
        "Mushroom, $n$=5",
        "Adult, $n$=4",
        "Magic, $n$=4",
    ]  # published block, then classification
    assert sum(len(c.get_offsets()) for c in ax_runs.collections) == 5 + 5 + 5 + 5 + 4 + 4  # every run a point
    assert any(line.get_linestyle() == "--" and list(line.get_ydata()) == [0.9, 0.9] for line in ax_runs.get_lines())
    (legend_box,) = namespace["fig"].legends  # one legend below both panels
    legend = [text.get_text() for text in legend_box.get_texts()]
    assert legend[:3] == ["LNUCB-TA", "LNUCB-TA (public code's reading)", "lock-in level: 0.9 × Random's mean"]
    share_entries = [
        "5% of runs (the claim's limit from 72 runs)",
        "Adult",
        "Magic",
        "exploration sweep, reported runs ($n=3$)",
        "published protocol, tuning runs ($n=2$)",
        "public code's reading, tuning runs ($n=2$)",
    ]
    assert legend[-len(share_entries) :] == share_entries  # after panel (a)'s markers and levels
    sweep = next(line for line in ax_share.get_lines() if line.get_label() == "adult: exploration sweep, reported runs")
    assert list(sweep.get_ydata()) == pytest.approx([1 / 3, 0.0, 1.0])
    tuning = next(
        line for line in ax_share.get_lines() if line.get_label() == "adult: public code's reading, tuning runs"
    )
    assert list(tuning.get_ydata()) == pytest.approx([0.0, 0.5, 0.0])
    colors = {line.get_color() for line in ax_share.get_lines() if ":" in line.get_label()}
    assert len(colors) == 2 and not colors & set(namespace["label_colors"].values())


def test_notes_name_what_is_skipped(executed):
    notes = executed["json"]["notes"]
    assert "skipped classification/mushroom: no Random runs of classification there" in notes
    assert any(
        note.startswith("published/adult: lock-in level 450.0 at our T=1000 scaled to the published T=10000")
        for note in notes
    )
    assert "published: no runs of LNUCB-TA with a Random reference on magic (skipped)" in notes


def _hare(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY / "src"), "SOURCE_DATE_EPOCH": "0", "OMP_NUM_THREADS": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "hare", *args], cwd=root, capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def test_notebook_runs_with_datasets_missing_through_papermill(tmp_path):
    """As the smoke configuration: Mushroom only (no Adult, no Magic), no tuning runs, and no sweep; the notebook says
    what it skips, writes the figure, the JSON and every macro the paper's paragraph reads."""
    runs = plant(
        tmp_path, keep=lambda key: key[3] == "mushroom" and key[1] == "report" and key[0] != "exploration_sweep"
    )
    out = "results/notebooks"
    parameters = {
        "runs": runs,
        "published_table": "published.csv",
        "figures": ["paper/figures/lock_in.pdf"],
        "outputs": {"json": "results/checks/lock_in.json", "macros": "paper/generated/lock_in_macros.tex"},
    }
    (tmp_path / out).mkdir(parents=True)  # the commands create no folder
    _hare(tmp_path, "notebook-source", str(NOTEBOOK), "--out", f"{out}/lock_in.source.ipynb")
    _hare(
        tmp_path,
        "notebook-execute",
        f"{out}/lock_in.source.ipynb",
        "--out",
        f"{out}/lock_in.ipynb",
        "--parameters",
        json.dumps(parameters),
    )
    assert (tmp_path / "paper" / "figures" / "lock_in.pdf").read_bytes().startswith(b"%PDF-")
    executed = json.loads((tmp_path / out / "lock_in.ipynb").read_text())
    printed = "".join(
        text for cell in executed["cells"] for output in cell.get("outputs", []) for text in output.get("text", [])
    )
    assert "skipped classification/mushroom: no Random runs of classification there" in printed
    assert "skipped exploration_sweep: no runs of LNUCB-TA with a Random reference among the inputs" in printed
    assert "no tuning runs of the published experiment among the inputs" in printed
    assert "skipped the implied standard deviation on adult" in printed
    document = json.loads((tmp_path / "results" / "checks" / "lock_in.json").read_text())
    assert {(r["experiment"], r["dataset"], r["label"]) for r in document["rows"]} == {
        ("published", "mushroom", "lnucb_ta"),
        ("published", "mushroom", "lnucb_ta_public"),
    }
    macros = _macros((tmp_path / "paper" / "generated" / "lock_in_macros.tex").read_text())
    assert macros["lockInImpliedStdAdult"] == "--" and macros["lockInCompatibleAdult"] == "untested for compatibility"
    assert macros["lockInCountPublishedMushroomLnucbTaPublic"] == "1"
    section = (REPOSITORY / "paper" / "sections" / "lock_in.tex").read_text()
    used = set(re.findall(r"\\(lockIn[A-Za-z]+)", section))
    assert used and used <= set(macros), (
        f"the paragraph reads macros the notebook does not define: {sorted(used - set(macros))}"
    )


def test_the_workflow_declares_the_notebook_and_its_outputs():
    smk = (REPOSITORY / "rules" / "notebooks.smk").read_text()
    assert '"lock_in": ["paper/figures/lock_in.pdf"]' in smk
    assert (
        'LOCK_IN_JSON = "results/checks/lock_in.json"' in smk
        and 'LOCK_IN_MACROS = "paper/generated/lock_in_macros.tex"' in smk
    )
    assert '"lock_in": {"json": LOCK_IN_JSON, "macros": LOCK_IN_MACROS}' in smk
    assert "others=list(NOTEBOOK_OUTPUTS.get(_notebook, {}).values())" in smk
