"""Figure 1 on planted runs of 21 policies: HARE, LinUCB and each panel's three best baselines in colour, the rest
grey."""

import json
from pathlib import Path

import numpy as np
import pytest

from hare.io import write_npz
from hare.report.names import display_name
from hare.report.style import BACKGROUND_GREY

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "regret_curves.py"
BASELINES = [
    "random",
    "ucb1",
    "kl_ucb",
    "eps_greedy",
    "beta_thompson",
    "linucb",
    "lin_ts",
    "lin_thompson_ucb",
    "kernel_ucb",
    "kernel_ts",
    "neural_ucb",
    "neural_ts",
    "bootstrap_nn",
    "knn_ucb",
    "knn_kl_ucb",
    "lin_knn_ucb",
    "lnucb_ta",
    "beta_thompson_enhanced",
    "eps_greedy_enhanced",
    "lin_thompson_enhanced",
]
# Final mean regret per environment: a different set of three best baselines in each.
BEST = {"mushroom": ["kl_ucb", "lin_ts", "knn_ucb"], "adult": ["lnucb_ta", "kernel_ts", "ucb1"]}


def plant_runs(folder: Path) -> list[str]:
    """Run files of 20 baselines and HARE on two environments, 3 runs of 50 rounds each."""
    paths = []
    rounds = np.arange(10, 60, 10)
    for env, best in BEST.items():
        for rank, label in enumerate(["hare", *BASELINES]):
            slope = 0.5 if label == "hare" else 1.0 + best.index(label) * 0.1 if label in best else 3.0 + rank * 0.1
            regret = np.outer([0.9, 1.0, 1.1], slope * rounds)
            path = folder / env / f"{label}.npz"
            write_npz(path, rounds=rounds, cumulative_regret=regret)
            path.with_suffix(".json").write_text(
                json.dumps({"job": {"label": label, "policy": label, "environment": {"name": env}}})
            )
            paths.append(str(path))
    return paths


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The notebook's namespace after running it on the planted runs."""
    folder = tmp_path_factory.mktemp("runs")
    source = NOTEBOOK.read_text()
    parameters = 'runs: list = []\nfigures: list = ["regret_curves.pdf"]'
    assert parameters in source
    figure = folder / "regret_curves.pdf"
    namespace: dict = {}
    exec(
        compile(
            source.replace(parameters, f"runs = {plant_runs(folder)!r}\nfigures = [{str(figure)!r}]"),
            str(NOTEBOOK),
            "exec",
        ),
        namespace,
    )
    assert figure.read_bytes().startswith(b"%PDF-")
    return namespace


def test_each_panel_colours_hare_linucb_and_its_three_best(executed):
    for ax in executed["axes"].flat:
        env = next(env for env in BEST if ax.get_title().startswith(display_name(env)))
        coloured = {line.get_label() for line in ax.get_lines() if line.get_color() != BACKGROUND_GREY}
        grey = [line for line in ax.get_lines() if line.get_color() == BACKGROUND_GREY]
        assert coloured == {display_name(label) for label in ["hare", "linucb", *BEST[env]]}
        assert len(grey) == 21 - len(coloured)
        assert all(line.get_label().startswith("_") for line in grey)


def test_one_legend_of_display_names_and_colours_shared_across_panels(executed):
    (legend,) = executed["fig"].legends
    names = [text.get_text() for text in legend.get_texts()]
    expected = {display_name(label) for label in ["hare", "linucb", *BEST["mushroom"], *BEST["adult"]]}
    assert names[0] == "HARE" and set(names[:-1]) == expected and names[-1] == "other policies"
    colours = {}
    for ax in executed["axes"].flat:
        for line in ax.get_lines():
            if line.get_color() != BACKGROUND_GREY:
                assert colours.setdefault(line.get_label(), line.get_color()) == line.get_color()
    assert len(set(colours.values())) == len(colours)
