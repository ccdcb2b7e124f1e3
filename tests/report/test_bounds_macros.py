"""The bounds' macro file (hare.report.bounds): names, the non-finite guard, and the real bounds' file."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from hare.report.bounds import bound_macro, bounds_tex, write_bounds_tex
from hare.theory.bound_table import bound_latex

TODAY = {
    "linucb_oful": "boundLinucbOful",
    "elliptical_potential": "boundEllipticalPotential",
    "hare_multihead": "boundHareMultihead",
    "hare_explore": "boundHareExplore",
    "hare_explore_oful": "boundHareExploreOful",
    "hare_user": "boundHareUser",
    "hare_approx": "boundHareApprox",
    "hare_total": "boundHareTotal",
    "hare_total_oful": "boundHareTotalOful",
    "hare_simplified": "boundHareSimplified",
    "lnucbta_theorem1": "boundLnucbtaTheoremOne",
}
"""Every bound's macro as ``paper/generated/bounds.tex`` names it today (the paper cites them)."""


def test_every_bound_keeps_its_macro_name():
    assert list(bound_latex()) == list(TODAY)
    assert {key: bound_macro(key) for key in TODAY} == TODAY


def test_bounds_tex_on_plain_data_is_the_header_and_one_line_per_bound():
    text = bounds_tex({"hare_approx": r"L_{f} T \epsilon_{attn}", "lnucbta_theorem1": "b"})
    assert text == (
        "% Regret bounds (hare.theory.bounds); use inside math mode, e.g. $\\boundLinucbOful$.\n"
        "\\newcommand{\\boundHareApprox}{L_{f} T \\epsilon_{attn}}\n"
        "\\newcommand{\\boundLnucbtaTheoremOne}{b}\n"
    )


@pytest.mark.parametrize("body", ["zoo", "x + nan", r"\frac{1}{oo}"])
def test_a_non_finite_bound_is_refused(body):
    with pytest.raises(ValueError, match="'hare_approx' renders to a non-finite"):
        bounds_tex({"hare_approx": body})


def test_a_finite_bound_that_contains_the_letters_is_kept():
    assert bounds_tex({"hare_approx": r"\sqrt{zoom}"}).endswith("{\\sqrt{zoom}}\n")


def test_write_bounds_tex(tmp_path):
    target = tmp_path / "bounds.tex"
    write_bounds_tex(target, bound_latex())
    text = target.read_text()
    assert not list(tmp_path.glob("*.tmp"))
    for name in TODAY.values():
        assert f"\\newcommand{{\\{name}}}{{" in text
    assert text.count("{") == text.count("}")
    depth = 0
    for character in text:
        depth += {"{": 1, "}": -1}.get(character, 0)
        assert depth >= 0
    assert not re.search(r"\b(zoo|nan)\b", text)


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex not installed")
def test_written_macros_compile_with_pdflatex(tmp_path):
    write_bounds_tex(tmp_path / "bounds.tex", bound_latex())
    uses = "\n\n".join(f"$\\{name}$" for name in TODAY.values())
    document = (
        "\\documentclass{article}\n\\usepackage{amsmath}\n\\input{bounds.tex}\n"
        f"\\begin{{document}}\n{uses}\n\\end{{document}}\n"
    )
    (tmp_path / "main.tex").write_text(document)
    completed = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "main.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 0, completed.stdout[-2000:]
