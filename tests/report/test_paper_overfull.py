"""The paper build's check of overfull boxes: the log parser on sample lines, and build-paper's one-line failure."""

import shutil

import pytest
from test_paper_pages import build_document

from hare.report.paper import check_overfull, overfull_boxes

LOG = r"""(./sections/experiments.tex
Overfull \hbox (0.86382pt too wide) in paragraph at lines 12--15
[]\T1/lmr/m/n/10.95 HARE adds a bonus to the log-its of
Overfull \hbox (24.5pt too wide) in alignment at lines 40--52
 [] [] [] []
Underfull \hbox (badness 10000) in paragraph at lines 60--61
Overfull \hbox (3.0pt too wide) detected at line 77
\T1/lmr/m/n/10.95 regret_of_the_table
Overfull \vbox (12.0pt too high) has occurred while \output is active
"""


def test_parser_keeps_only_hboxes_wider_than_the_tolerance_widest_first():
    boxes = overfull_boxes(LOG)
    assert [excess for excess, _ in boxes] == [24.5, 3.0]
    assert boxes[0][1] == "in alignment at lines 40--52"
    assert boxes[1][1] == "detected at line 77: regret_of_the_table"
    assert [excess for excess, _ in overfull_boxes(LOG, 0.5)] == [24.5, 3.0, 0.86382]
    assert overfull_boxes("Overfull \\hbox (1pt too wide) in paragraph at lines 1--2\n") == []  # 1 pt is tolerated
    assert overfull_boxes("no boxes here\n") == []


def test_check_fails_with_one_line_naming_the_widest_box():
    with pytest.raises(RuntimeError) as error:
        check_overfull(LOG, "results/latex/main.log")
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(
        "results/latex/main.log: 2 overfull \\hbox wider than 1pt; the widest by 24.5pt in alignment at lines 40--52"
    )
    check_overfull(LOG.replace("24.5", "0.5").replace("3.0pt", "0.9pt"), "x.log")


@pytest.mark.skipif(shutil.which("latexmk") is None, reason="needs latexmk")
def test_build_paper_fails_on_an_overfull_box(tmp_path):
    result = build_document(tmp_path, "\\noindent\\rule{1.2\\linewidth}{1pt}")
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "overfull \\hbox wider than 1pt" in lines[0], result.stderr
    assert not (tmp_path / "paper.pdf").exists()
    result = build_document(tmp_path, "\\noindent\\rule{0.5\\linewidth}{1pt}")
    assert result.returncode == 0, result.stderr


def test_a_float_too_tall_for_its_page_fails_naming_the_file_and_line():
    from hare.report.paper import check_too_tall

    log = (
        "(./sections/appendix.tex [17] (./generated/table_a.tex)\n(./sections/figures_extra.tex\n"
        "LaTeX Warning: Float too large for page by 1026.01065pt on input line 8.\n) (./generated/table_b.tex\n"
        "LaTeX Warning: Float too large for page by 163.70166pt on input line 86.\n)"
    )
    with pytest.raises(RuntimeError) as error:
        check_too_tall(log, "main.log")
    assert str(error.value) == (
        "main.log: 2 float(s) too large for their page; the tallest by 1026.01pt (./sections/figures_extra.tex line "
        "8): its bottom is cut off"
    )
    check_too_tall(log.replace("Float too large", "Float fine"), "main.log")


@pytest.mark.skipif(shutil.which("latexmk") is None, reason="needs latexmk")
def test_build_paper_fails_on_a_float_taller_than_the_page(tmp_path):
    result = build_document(tmp_path, "\\begin{figure}\\rule{1pt}{1.2\\textheight}\\caption{Tall.}\\end{figure}")
    assert result.returncode != 0
    assert "too large for their page" in result.stderr and not (tmp_path / "paper.pdf").exists()
    result = build_document(tmp_path, "\\begin{figure}\\rule{1pt}{0.5\\textheight}\\caption{Short.}\\end{figure}")
    assert result.returncode == 0, result.stderr
