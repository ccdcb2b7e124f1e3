"""hare.report.register: the claims register's macros and its compact table, from a small hand-made document."""

import re
import shutil
import subprocess

import pytest

from hare.report.register import register_tex
from hare.report.register_cells import margin_tex
from hare.verdicts import STATUSES


def _claim(i, key, family, status, adjusted=None, headline=False, measured=-3.2, low=-10.1, high=3.7, **extra):
    return {
        "id": f"C{i}",
        "key": key,
        "family": family,
        "headline": headline,
        "section": "Table classification",
        "statement": extra.pop("statement", f"HARE has lower total regret than linucb on adult ({key})."),
        "binding": extra.pop("binding", {}),
        "measured": measured,
        "low": low,
        "high": high,
        "compare": extra.pop("compare", "<"),
        "threshold": extra.pop("threshold", 0),
        "margin": extra.pop("margin", 12.5),
        "status": status,
        "adjusted_status": adjusted or status,
        "p_value": 0.01,
        "p_adjusted": 0.02,
        "method": "t interval over 20 runs",
        "sources": [],
        "n_runs": 20,
        "planned_runs": 18,
        "half_width": 6.9,
        "note": "",
        **extra,
    }


def _baseline(i, baseline, environment, experiment, status, adjusted=None):
    return _claim(
        i,
        f"hare_vs_{baseline}_{environment}_{experiment}",
        "hare_vs_baselines",
        status,
        adjusted,
        statement=f"HARE has lower total regret than {baseline} on {environment} ({experiment}; paired over runs).",
        binding={"experiment": experiment, "environment": environment, "baseline": baseline},
    )


@pytest.fixture
def document():
    claims = [
        _claim(
            1,
            "hare_vs_linucb_adult_classification",
            "hare_vs_baselines",
            "INCONCLUSIVE",
            "EQUIVALENT",
            headline=True,
            statement="HARE has lower total regret than linucb on adult (classification; paired over runs).",
            binding={"experiment": "classification", "environment": "adult", "baseline": "linucb"},
        ),
        _baseline(2, "random", "adult", "classification", "PASS"),
        _baseline(3, "lnucb_ta", "adult", "classification", "PASS", "INCONCLUSIVE"),
        _baseline(4, "random", "mushroom", "classification_warm", "FAIL"),
        _claim(
            5,
            "oful_bound_holds",
            None,
            "VACUOUS",
            measured=0.5,
            low=None,
            high=None,
            compare="<=",
            threshold=1,
            margin=None,
            statement="LinUCB's regret stays below the OFUL bound (ratio <= 1; 100% & #1 ~ $x^2$ {a_b}).",
        ),
        _claim(
            6,
            "published_linucb_mnist_reproduced",
            "published",
            "NOT RUN",
            measured=None,
            low=None,
            high=None,
            margin=None,
            compare="within",
            threshold=[1.5, 2.5],
        ),
        _claim(
            7,
            "published_linucb_adult_reproduced",
            "published",
            "NOT RUN",
            measured=None,
            low=None,
            high=None,
            margin=None,
        ),
        _claim(8, "published_linucb_magic_reproduced", "published", "PASS", compare="within", threshold=[-20, 20]),
        _claim(
            9,
            "published_lin_ts_magic_reproduced",
            "published",
            "NOT RUN",
            measured=None,
            low=None,
            high=None,
            margin=None,
        ),
    ]
    return {"level": 0.95, "adjustment": "Holm's step-down method within each family (5% level)", "claims": claims}


def _defs(tex: str, name: str) -> dict[str, str]:
    return dict(re.findall(rf"\\expandafter\\def\\csname {name}@(\S+)\\endcsname\{{([^}}]*)\}}", tex))


def test_per_claim_macros(document):
    tex = register_tex(document)
    status = _defs(tex, "claimstatus")
    assert status["hare_vs_linucb_adult_classification"] == "EQUIVALENT"  # the adjusted status decides
    assert status["hare_vs_lnucb_ta_adult_classification"] == "INCONCLUSIVE"
    assert status["published_linucb_mnist_reproduced"] == "NOT RUN"
    codes = _defs(tex, "claimcode")
    words = {key: s.split(" (")[0] for key, s in status.items()}  # a difference within the margin is qualified
    assert {key: int(code) for key, code in codes.items()} == {key: STATUSES.index(s) for key, s in words.items()}
    assert codes["hare_vs_random_adult_classification"] == "0"
    assert _defs(tex, "claimid")["oful_bound_holds"] == "C5"
    assert _defs(tex, "claimunadjusted")["hare_vs_linucb_adult_classification"] == "INCONCLUSIVE"
    intervals = _defs(tex, "claiminterval")
    assert intervals["hare_vs_random_adult_classification"] == "-3.2 [-10.1, 3.7]"
    assert intervals["oful_bound_holds"] == "0.500"  # exact: no interval
    assert intervals["published_linucb_mnist_reproduced"] == "--"


def test_family_counts_by_adjusted_status(document):
    tex = register_tex(document)
    family = {
        k: int(v)
        for k, v in re.findall(r"\\csname claimfamily@hare_vs_baselines@([A-Za-z ]+)\\endcsname\{(\d+)\}", tex)
    }
    assert family == {
        "PASS": 1,
        "FAIL": 1,
        "EQUIVALENT": 1,
        "INCONCLUSIVE": 1,
        "UNDECIDABLE AT THIS SCALE": 0,
        "VACUOUS": 0,
        "NOT RUN": 0,
        "total": 4,
    }
    assert "claimfamily@published@NOT RUN\\endcsname{3}" in tex
    assert "claimfamily@published@total\\endcsname{4}" in tex


def test_totals(document):
    tex = register_tex(document)
    values = dict(re.findall(r"\\newcommand\{\\(\w+)\}\{([^\n]*)\}\n", tex))
    assert values["claimsTotal"] == "9" and values["claimsPassed"] == "2" and values["claimsPass"] == "2"
    assert values["claimsNotRun"] == "3" and values["claimsEquivalent"] == "1" and values["claimsVacuous"] == "1"
    assert (
        values["claimsHeadlineTotal"] == "1"
        and values["claimsHeadlineEquivalent"] == "1"
        and values["claimsHeadlinePass"] == "0"
    )
    assert values["claimsLevel"] == "95\\%"
    assert values["claimsAdjustment"] == "Holm's step-down method within each family (5\\% level)"


def test_special_characters_are_escaped(document):
    tex = register_tex(document)
    assert r"(ratio <= 1; 100\% \& \#1 \textasciitilde{} \$x\textasciicircum{}2\$ \{a\_\allowbreak{}b\})" in tex
    assert "100% &" not in tex


def test_bad_keys_and_statuses_are_refused(document):
    document["claims"][1]["key"] = "a}b"
    with pytest.raises(ValueError, match=r"claim key 'a}b'"):
        register_tex(document)
    document["claims"][1]["key"] = "ok"
    document["claims"][1]["adjusted_status"] = "MAYBE"
    with pytest.raises(ValueError, match="claim ok: adjusted_status 'MAYBE'"):
        register_tex(document)


def test_headline_claims_in_their_own_table_then_single_claims_families_and_not_run_by_id(document):
    tex = register_tex(document)
    table, headline = tex.split(r"\newcommand{\claimsTable}", 1)[1].split(r"\newcommand{\claimsHeadlineTable}", 1)
    first, rest = table.split(r"\begin{longtable}")[1:3]
    assert r"\label{tab:claims}" in first and r"\label{tab:claims-all}" in rest
    assert r"\label{tab:headline}" in headline and r"\hypertarget{claim.C1}{C1}" in headline
    assert r"\hypertarget{claim.C1}" not in table and r"\hypertarget{claim.C5}{C5}" in first
    assert rest.index(r"\textbf{hare\_vs\_baselines}") < rest.index(r"\textbf{published}")
    for i in (2, 3, 4, 8):
        assert rf"\hypertarget{{claim.C{i}}}{{C{i}}}" in rest
    assert r"\textsc{pass} $\to$ \textsc{inconcl.}" in rest  # C3: the adjustment changed its status
    assert r"test $<$ 0; $\delta$ 12.5" in rest
    not_run = rest.split("NOT RUN in this configuration", 1)[1]
    assert "published (3: C6--C7, C9)" in not_run
    assert r"\hypertarget{claim.C6}{}" in not_run
    assert not re.search(r"\\hypertarget\{claim\.C6\}\{C6\}", tex)


def test_family_rows_share_a_statement_line(document):
    tex = register_tex(document)
    line = (
        r"HARE has lower total regret than \textit{$\langle$baseline$\rangle$} "
        r"on \textit{$\langle$environment$\rangle$}"
    )
    assert tex.count(line) == 1  # classification and classification_warm share it: the experiment is a placeholder
    after = tex.split(line, 1)[1]
    assert after.index("{C2}") < after.index("{C3}") < after.index("{C4}")
    assert "random, adult, classification" not in tex  # values follow the binding's order
    assert "classification, adult, random" in tex


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="needs pdflatex")
def test_register_compiles_without_overfull_boxes(document, tmp_path):
    from hare.report.paper import overfull_boxes

    (tmp_path / "claims.tex").write_text(register_tex(document))
    (tmp_path / "main.tex").write_text(
        "\\documentclass[11pt]{article}\\usepackage[margin=1in]{geometry}\\usepackage[T1]{fontenc}\\usepackage{lmodern}"
        "\\usepackage{booktabs,longtable,array,amssymb}\\usepackage{hyperref}\n"
        "\\begin{document}\\input{claims.tex}\\claimsTable\\end{document}\n"
    )
    result = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "main.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert overfull_boxes((tmp_path / "main.log").read_text(errors="replace"), 0.0) == []


def test_every_inconclusive_headline_claim_says_what_would_settle_it(document):
    from hare.report.register_headline import headline_tex

    claims = [dict(c) for c in document["claims"]]
    claims[0].update(
        headline=True,
        adjusted_status="INCONCLUSIVE",
        note="about 40 runs would settle it at the observed mean and spread (5 ran)",
    )
    tex = headline_tex(claims, "95")
    assert "What would settle the inconclusive headline claims" in tex and "C1: about 40 runs would settle it" in tex
    claims[0].update(adjusted_status="PASS")
    assert "What would settle" not in headline_tex(claims, "95")


def test_a_family_drawn_as_a_claims_matrix_gets_one_line_not_a_row_per_member():
    from hare.report.register_families import MATRIX_MIN_MEMBERS

    members = [_baseline(i, f"b{i}", "adult", "classification", "PASS") for i in range(1, MATRIX_MIN_MEMBERS + 2)]
    small = [_claim(20 + i, f"small_{i}", "small", "FAIL") for i in range(3)]
    tex = register_tex({"level": 0.95, "claims": members + small})
    family_line = tex[tex.index(r"\textbf{hare\_vs\_baselines}") :]
    assert r"Figure~\ref{fig:claims-matrix}" in family_line and f"C1--C{MATRIX_MIN_MEMBERS + 1}" in family_line
    assert all(rf"\hypertarget{{claim.C{i}}}{{}}" in tex for i in range(1, MATRIX_MIN_MEMBERS + 2))
    assert r"\hypertarget{claim.C2}{C2}" not in tex  # no member row
    assert r"\hypertarget{claim.C21}{C21}" in tex  # a small family keeps its rows


def test_delta_is_shown_in_regret_and_as_a_percentage_of_the_comparators_regret(document):
    """Beside the verdict, delta in regret and as a share of the comparator's mean tuning regret; a margin that is
    not a share of a regret (one on a share of runs) is shown alone; the rule is one macro from the document."""
    document["claims"][0].update(margin=8.83, margin_share=0.1, comparator_regret=88.3)
    document["margin_rule"] = "10% of the comparator's mean total regret on the tuning runs"
    tex = register_tex(document)
    headline = tex.split(r"\newcommand{\claimsHeadlineTable}", 1)[1]
    row = next(line for line in headline.splitlines() if r"\hypertarget{claim.C1}{C1}" in line)
    assert r"& 8.83 (10\%) &" in row and row.index("8.83") < row.index(r"\textsc{equivalent}")
    assert margin_tex({"margin": 1.0, "margin_share": 1 / 9.2}) == r"1.00 (11\%)"
    assert margin_tex({"margin": 0.05, "margin_share": None}) == "0.050"
    assert margin_tex({"margin": None}) == "--"
    values = dict(re.findall(r"\\newcommand\{\\(\w+)\}\{([^\n]*)\}\n", tex))
    assert values["claimsMarginRule"] == r"10\% of the comparator's mean total regret on the tuning runs"


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="needs pdflatex")
def test_qualified_verdicts_compile_without_overfull_boxes(tmp_path):
    """The longest verdicts a row can carry: an adjusted PASS turned INCONCLUSIVE with its reason, a difference within
    the margin, an UNDECIDABLE one with its runs, in the family table, the table of single claims and the headline
    table."""
    from hare.report.paper import overfull_boxes
    from hare.verdicts import UNDECIDABLE

    claims = [
        _baseline(1, "lnucb_ta", "adult", "classification", "PASS", "INCONCLUSIVE"),
        _baseline(2, "linucb", "adult", "classification", "PASS", "EQUIVALENT"),
        _baseline(3, "eps_greedy", "adult", "classification_warm", UNDECIDABLE),
        _claim(4, "single", None, "PASS", "EQUIVALENT", low=-8.5, high=-1.15),
        _claim(5, "single_open", None, "INCONCLUSIVE", reason="spread larger than planned"),
        _claim(6, "head", "hare_vs_baselines", UNDECIDABLE, headline=True, runs_needed=1234),
        _claim(7, "head_eq", "hare_vs_baselines", "PASS", "EQUIVALENT", headline=True, low=-8.5, high=-1.15),
    ]
    claims[0]["reason"] = "effect at the margin's edge"
    claims[1].update(low=-8.5, high=-1.15)
    claims[2]["runs_needed"] = 72
    tex = register_tex({"level": 0.95, "claims": claims})
    assert r"\textsc{pass} $\to$ \textsc{inconcl.} (edge)" in tex and r"\textsc{undecid.} (72)" in tex
    assert r"\textsc{equiv.} (diff.\,${<}\,\delta$)" in tex
    assert r"\textsc{undecidable at this scale} (1234 runs would decide it)" in tex
    (tmp_path / "claims.tex").write_text(tex)
    (tmp_path / "main.tex").write_text(
        "\\documentclass[11pt]{article}\\usepackage[margin=1in]{geometry}\\usepackage[T1]{fontenc}\\usepackage{lmodern}"
        "\\usepackage{booktabs,longtable,array,amssymb}\\usepackage{hyperref}\n"
        "\\begin{document}\\input{claims.tex}\\claimsTable\\claimsHeadlineTable\\end{document}\n"
    )
    result = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "main.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert overfull_boxes((tmp_path / "main.log").read_text(errors="replace"), 0.0) == []
