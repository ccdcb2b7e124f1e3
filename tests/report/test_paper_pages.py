"""The paper's page budget (paper.max_pages, paper.max_body_pages): the log's page count, the body's last page from
the .aux, the one-line failure, and build-paper on a planted long document and a planted short one."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hare.experiments.config import load_config, resolve_config_file, schema_errors
from hare.report.paper import BODY_END_LABEL, check_pages, label_page, pdf_pages

REPOSITORY = Path(__file__).resolve().parents[2]

# TeX wraps its log at 79 characters, so a long output path splits the line.
LOG = (
    "Output written on /tmp/a/very/long/output/directory/of/the/build/results/latex/main.pdf (52 pag\n"
    "es, 1234567 bytes).\n"
)
AUX_HYPERREF = (
    r"\newlabel{sec:limitations}{{6}{24}{Limitations}{section.6}{}}"
    + "\n"
    + (r"\newlabel{body:end}{{6}{25}{Limitations}{section.6}{}}" + "\n")
)
AUX_PLAIN = r"\newlabel{body:end}{{6}{3}}" + "\n"


def test_the_page_count_is_read_from_the_log_even_when_tex_wrapped_the_line():
    assert pdf_pages(LOG) == 52
    assert pdf_pages("Output written on main.pdf (1 page, 3000 bytes).\n") == 1
    assert (
        pdf_pages("first run\nOutput written on main.pdf (2 pages, 1 bytes).\nOutput written on main.pdf (3 pages") == 3
    )
    assert pdf_pages("No pages of output.\n") is None


def test_the_body_end_is_the_page_of_its_label_in_the_aux():
    assert BODY_END_LABEL == "body:end"
    assert label_page(AUX_HYPERREF) == 25
    assert label_page(AUX_PLAIN) == 3
    assert label_page(AUX_HYPERREF, "sec:limitations") == 24
    assert label_page(r"\newlabel{body:end}{{\relax 6}{12}{A {nested} title}{x}{}}") == 12
    assert label_page(r"\newlabel{body:endless}{{6}{25}}") is None
    assert label_page("") is None


def test_within_budget_passes_and_over_budget_fails_in_one_line_naming_budget_and_pages():
    check_pages(LOG, AUX_HYPERREF, "main.pdf", max_pages=52, max_body_pages=25)
    check_pages(LOG, AUX_HYPERREF, "main.pdf")  # no budget, nothing checked
    with pytest.raises(RuntimeError) as over:
        check_pages(LOG, AUX_HYPERREF, "results/latex/main.pdf", max_pages=40, max_body_pages=16)
    assert str(over.value) == (
        "results/latex/main.pdf: over the page budget: 52 pages against a budget of 40 (paper.max_pages); "
        "the body ends on page 25 against a budget of 16 (paper.max_body_pages)"
    )
    with pytest.raises(RuntimeError, match=r"the body ends on page 25 against a budget of 24 \(paper.max_body_pages\)"):
        check_pages(LOG, AUX_HYPERREF, "main.pdf", max_pages=60, max_body_pages=24)
    with pytest.raises(RuntimeError, match=r"^main.pdf: over the page budget: 52 pages against a budget of 51"):
        check_pages(LOG, AUX_HYPERREF, "main.pdf", max_pages=51)


def test_a_budget_that_cannot_be_measured_fails():
    with pytest.raises(RuntimeError, match="no 'Output written on' line"):
        check_pages("", AUX_HYPERREF, "main.pdf", max_pages=40)
    with pytest.raises(RuntimeError, match=r"no \\label\{body:end\} in the .aux"):
        check_pages(LOG, "", "main.pdf", max_pages=60, max_body_pages=16)


def test_every_config_carries_the_budget_and_the_schema_refuses_a_page_count_below_one():
    for name in ("default", "smoke", "paper-core", "paper"):
        paper = load_config([REPOSITORY / "config" / f"{name}.yaml"], memory=False)["paper"]
        assert paper["max_pages"] == 40 and paper["max_body_pages"] == 16, name
    config = resolve_config_file(REPOSITORY / "config" / "default.yaml")
    for key, value in (("max_pages", 0), ("max_body_pages", 0), ("max_pages", 40.5)):
        bad = {**config, "paper": {**config["paper"], key: value}}
        assert any("max_pages" in error or "max_body_pages" in error for error in schema_errors(bad)), (key, value)
    missing = {**config, "paper": {"build_pdf": True}}
    assert schema_errors(missing)
    assert "\\label{body:end}" in (REPOSITORY / "paper" / "main.tex").read_text()


def build_document(tmp_path: Path, body: str, *budget: str) -> subprocess.CompletedProcess:
    """``hare build-paper`` on a one-file article whose document body is ``body``, with budget arguments ``budget``
    (also used by the overfull-box test)."""
    main = tmp_path / "main.tex"
    main.write_text("\\documentclass{article}\\begin{document}" + body + "\\end{document}\n")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "hare",
            "build-paper",
            "--main",
            str(main),
            "--outdir",
            str(tmp_path / "out"),
            "--pdf",
            str(tmp_path / "paper.pdf"),
            *budget,
        ],
        capture_output=True,
        text=True,
    )


@pytest.mark.skipif(shutil.which("latexmk") is None, reason="needs latexmk")
def test_build_paper_fails_on_a_planted_long_document_and_passes_a_short_one(tmp_path):
    short = build_document(tmp_path, "One page.\\label{body:end}", "--max-pages", "1", "--max-body-pages", "1")
    assert short.returncode == 0, short.stderr
    assert (tmp_path / "paper.pdf").exists()

    long = build_document(tmp_path, "One.\\newpage Two.\\newpage Three.", "--max-pages", "1")
    assert long.returncode != 0
    lines = [line for line in long.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "over the page budget: 3 pages against a budget of 1 (paper.max_pages)" in lines[0], (
        long.stderr
    )
    assert not (tmp_path / "paper.pdf").exists(), "a failed budget leaves no PDF behind (the earlier one removed)"

    body = build_document(
        tmp_path, "One.\\newpage Two.\\label{body:end}\\newpage Refs.", "--max-pages", "3", "--max-body-pages", "1"
    )
    assert body.returncode != 0
    lines = [line for line in body.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "the body ends on page 2 against a budget of 1 (paper.max_body_pages)" in lines[0], (
        body.stderr
    )
    assert not (tmp_path / "paper.pdf").exists()
