"""The convergence check's macros (hare.report.convergence)."""

from __future__ import annotations

import math

from hare.report.convergence import HEADER, convergence_macros, write_convergence_macros

RESULT = {
    "variants": {
        "cold_online": {"final_stability": 0.876, "final_agreement": 0.5, "last_half_slope": math.nan},
    },
    "settings": {"horizon": 2000, "n_runs": 5, "n_probes": 64, "n_logged": 1000, "record_every": 20},
}


def test_macros_round_to_two_digits_and_name_undefined_slopes():
    values = convergence_macros(RESULT, 1.25)
    assert values["convergenceColdOnlineStability"] == "0.88"
    assert values["convergenceColdOnlineAgreement"] == "0.50"
    assert values["convergenceColdOnlineSlope"] == "--"
    assert values["convergenceSlopeWindow"] == "1.25" and values["convergenceRecordEvery"] == "20"
    assert values["convergenceNLogged"] == "1000"


def test_the_macro_file_starts_with_its_header(tmp_path):
    write_convergence_macros(tmp_path / "c.tex", RESULT, 1.25)
    text = (tmp_path / "c.tex").read_text()
    assert text.startswith(HEADER) and r"\newcommand{\convergenceHorizon}{2000}" in text
