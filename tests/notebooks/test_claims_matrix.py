"""The claims-matrix notebook on a hand-made claims document: one cell per claim of a large family, coloured by its
adjusted status and labelled with its measured value; rows are baselines, columns dataset and regime."""

import json
import re
from pathlib import Path

import matplotlib.colors as mcolors
import pytest

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "claims_matrix.py"
PARAMETERS = (
    'runs: list = []\nclaims_json: str = "results/claims.json"\n'
    'family: str = "hare_vs_baselines"\nmin_members: int = 12\n'
    'figures: list = ["claims_matrix.pdf", "claims_matrix_families.pdf"]'
)
BASELINES = ["random", "linucb", "lin_ts", "knn_ucb", "lnucb_ta"]
STATUS_CYCLE = ["PASS", "FAIL", "EQUIVALENT", "INCONCLUSIVE"]


def claims_document() -> dict:
    """``hare_vs_baselines`` over 5 baselines x (2 datasets x 2 regimes) plus 3 replay claims without a baseline binding
    (row from the key), one NOT RUN; ``published`` with 14 members (large) and ``small`` with 2 (not drawn)."""
    claims = []

    def add(key, family, binding, status, measured):
        claims.append(
            {
                "id": f"C{len(claims) + 1}",
                "key": key,
                "family": family,
                "headline": False,
                "section": "",
                "statement": key,
                "binding": binding,
                "measured": measured,
                "low": None if measured is None else measured - 1,
                "high": None if measured is None else measured + 1,
                "compare": "<",
                "threshold": 0,
                "margin": 5.0,
                "status": status,
                "adjusted_status": status,
            }
        )

    for experiment in ("classification", "classification_warm"):
        for environment in ("mushroom", "adult"):
            for baseline in BASELINES:
                status = (
                    "NOT RUN"
                    if environment == "adult" and experiment == "classification_warm" and baseline == "random"
                    else STATUS_CYCLE[len(claims) % 4]
                )
                add(
                    f"hare_vs_{baseline}_{environment}_{experiment}",
                    "hare_vs_baselines",
                    {"experiment": experiment, "environment": environment, "baseline": baseline},
                    status,
                    None if status == "NOT RUN" else -12.345 + len(claims),
                )
    for rate in ("0.1", "1.0", "10.0"):
        add(
            f"hare_vs_lnucb_ta_open_bandit_replay_rate_{rate}",
            "hare_vs_baselines",
            {"rate": rate},
            "INCONCLUSIVE",
            0.0012,
        )
    for i in range(14):
        add(
            f"published_{i}",
            "published",
            {"policy": f"p{i % 7}", "dataset": ["adult", "magic"][i // 7]},
            "FAIL",
            100.0 * i,
        )
    add("small_a", "small", {"environment": "a"}, "PASS", 1.0)
    add("small_b", "small", {"environment": "b"}, "PASS", 1.0)
    return {"level": 0.95, "adjustment": "Holm within each family", "claims": claims}


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("claims")
    document = folder / "claims.json"
    document.write_text(json.dumps(claims_document()))
    figures = [str(folder / "claims_matrix.pdf"), str(folder / "claims_matrix_families.pdf")]
    source = NOTEBOOK.read_text()
    assert PARAMETERS in source
    namespace: dict = {}
    replaced = source.replace(
        PARAMETERS,
        f"runs = [{str(document)!r}]\nclaims_json = {str(document)!r}\nfamily = 'hare_vs_baselines'\n"
        f"min_members = 12\nfigures = {figures!r}",
    )
    exec(compile(replaced, str(NOTEBOOK), "exec"), namespace)
    for figure in figures:
        assert Path(figure).read_bytes().startswith(b"%PDF-")
    return namespace


def test_rows_are_baselines_and_columns_dataset_and_regime(executed):
    members = [c for c in claims_document()["claims"] if c["family"] == "hare_vs_baselines"]
    rows, columns, cells = executed["matrix"](members)
    assert rows == BASELINES  # the replay claims' row (lnucb_ta) comes from their keys
    assert columns[:4] == ["Mushroom\ncold", "Mushroom\nwarm", "Adult\ncold", "Adult\nwarm"]
    assert columns[4:] == ["replay\n$\\alpha=0.1$", "replay\n$\\alpha=1.0$", "replay\n$\\alpha=10.0$"]
    assert len(cells) == len(members)
    assert cells[("lnucb_ta", 5)]["key"] == "hare_vs_lnucb_ta_open_bandit_replay_rate_1.0"


def test_cells_carry_status_colour_and_measured_value(executed):
    members = [c for c in claims_document()["claims"] if c["family"] == "hare_vs_baselines"]
    text = executed["cell_text"]
    assert [text({"measured": v, "status": "PASS"}) for v in (-12.345, 3.14159, 1234.5, 0.0012, 0.0)] == [
        "-12.3",
        "3.1",
        "1234",
        "1e-3",
        "0",
    ]
    not_run = next(c for c in members if c["status"] == "NOT RUN")
    assert executed["cell_text"](not_run) == ""
    colors = executed["STATUS_COLORS"]
    assert len({mcolors.to_hex(colors[s]) for s in executed["STATUSES"]}) == len(executed["STATUSES"])


def test_only_large_families_get_a_panel(executed):
    assert set(executed["others"]) == {"published"}


def test_families_figure_pages_fit_the_text_block_and_hold_only_the_claims_that_ran(tmp_path):
    """Eight large families of 20 members, 5 NOT RUN each: the NOT RUN members are left out of the panels and the
    panels are split over as many PDF pages as it takes for each to fit the page height the paper leaves."""
    document = claims_document()
    for f in range(8):
        for i in range(20):
            document["claims"].append(
                document["claims"][0]
                | {
                    "id": f"F{f}_{i}",
                    "key": f"fam{f}_{i}",
                    "family": f"fam{f}",
                    "binding": {"policy": f"p{i % 20}", "dataset": "adult"},
                    "status": "NOT RUN" if i % 4 == 0 else "PASS",
                    "adjusted_status": "NOT RUN" if i % 4 == 0 else "PASS",
                }
            )
    (tmp_path / "claims.json").write_text(json.dumps(document))
    figures = [str(tmp_path / "main.pdf"), str(tmp_path / "families.pdf")]
    namespace: dict = {}
    source = NOTEBOOK.read_text().replace(
        PARAMETERS,
        f"runs = []\nclaims_json = {str(tmp_path / 'claims.json')!r}\nfamily = 'hare_vs_baselines'\n"
        f"min_members = 12\nfigures = {figures!r}",
    )
    exec(compile(source, str(NOTEBOOK), "exec"), namespace)
    assert all(len(members) == 15 for name, members in namespace["others"].items() if name.startswith("fam"))
    pages = namespace["pages"]
    assert len(pages) > 1 and sum(len(page) for page in pages) == 9
    for page in pages:
        assert sum(namespace["panel_height"](members) for _, members in page) <= namespace["PAGE_HEIGHT_IN"]
    data = (tmp_path / "families.pdf").read_bytes()
    assert len(re.findall(rb"/Type\s*/Page\b(?!s)", data)) == len(pages)
