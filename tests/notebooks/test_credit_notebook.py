"""The notebook of credit assignment for novel outputs (notebooks/credit.py), on planted run files through papermill as
the workflow runs it: each rule's mean total regret and mean novelty against hand computations, the tuned alpha read
from the job, and every macro the paper's paragraphs read defined, also when an environment is missing."""

import re
from pathlib import Path

import numpy as np

from hare.io import write_json, write_npz
from notebook_runner import execute

REPOSITORY = Path(__file__).resolve().parents[2]
ROUNDS = np.arange(10, 101, 10)
RULES = ("dominant", "attention_weighted", "nearest_item", "gradient", "none")
# four runs per job: total regret and the share of novel outputs per run
TOTALS = {f"hare_credit_{rule}": [10.0 + i, 12.0 + i, 14.0 + i, 16.0 + i] for i, rule in enumerate(RULES)}
TOTALS["random"] = [50.0, 52.0, 48.0, 50.0]
NOVELTY = {f"hare_credit_{rule}": [0.5, 0.75, 1.0, 0.5] for rule in RULES}


def plant(root: Path, environments=("synthetic_linear", "synthetic_between")) -> list[str]:
    runs = []
    for experiment in ("synthesis_credit", "synthesis_credit_warm"):
        for environment in environments:
            for label, totals in TOTALS.items():
                relative = f"results/runs/{experiment}/{environment}/{label}.npz"
                totals = np.asarray(totals)
                arrays = {
                    "total_regret": totals,
                    "rounds": ROUNDS,
                    "cumulative_regret": totals[:, None] * ROUNDS[None, :] / 100.0,
                }
                if label in NOVELTY:
                    arrays["novelty"] = np.asarray(NOVELTY[label])
                write_npz(root / relative, **arrays)
                job = {
                    "experiment": experiment,
                    "role": "report",
                    "label": label,
                    "policy": "random" if label == "random" else "hare_synthesize",
                    "params": {} if label == "random" else {"alpha": 0.1, "credit": label.removeprefix("hare_credit_")},
                    "environment": {"name": environment},
                }
                write_json((root / relative).with_suffix(".json"), {"horizon": 100, "n_runs": 4, "job": job})
                runs.append(relative)
    return runs


def test_regret_and_novelty_per_rule_match_a_hand_computation(tmp_path):
    macros, document = execute(tmp_path, "credit", plant(tmp_path))
    assert macros["creditSynthesisCreditSyntheticBetweenHareCreditDominantRegret"] == "13.0"
    assert macros["creditSynthesisCreditSyntheticBetweenHareCreditNoneRegret"] == "17.0"
    assert macros["creditSynthesisCreditWarmSyntheticLinearRandomRegret"] == "50.0"
    assert macros["creditSynthesisCreditSyntheticBetweenHareCreditGradientNovelty"] == r"69\%"  # mean 0.6875
    assert macros["creditSynthesisCreditSyntheticBetweenRandomNovelty"] == "--"  # Random records no novelty
    assert macros["creditSynthesisCreditSyntheticBetweenHareCreditDominantAlpha"] == "0.10"
    assert macros["creditNoveltyThreshold"] == "0.9"
    # the rules' means 13, 14, 15, 16, 17 (i = 0..4 added to 10, 12, 14, 16): spread 4
    assert macros["creditSynthesisCreditSyntheticBetweenSpread"] == "4.00"
    rows = {(r["experiment"], r["environment"], r["label"]): r for r in document["rows"]}
    dominant = rows[("synthesis_credit", "synthetic_linear", "hare_credit_dominant")]
    assert dominant["n_runs"] == 4
    assert np.isclose(dominant["novelty"]["estimate"], 0.6875)


def test_every_macro_the_paper_reads_is_defined_when_an_environment_is_missing(tmp_path):
    macros, _ = execute(tmp_path, "credit", plant(tmp_path, environments=("synthetic_linear",)))
    text = "".join(
        (REPOSITORY / "paper" / "sections" / name).read_text() for name in ("exploration.tex", "appendix.tex")
    )
    used = set(re.findall(r"\\(credit[A-Z][A-Za-z]*)", text))
    assert used and used <= set(macros), sorted(used - set(macros))
    assert macros["creditSynthesisCreditSyntheticBetweenHareCreditDominantRegret"] == "--"
