"""README.md reads like a README: under 250 lines, its first screen names the two commands, what they produce and how
long they take with the calibration figure; every ``docs/`` link of it (and every link between the docs) exists, down
to the heading an anchor names; the generated blocks each have their one pair of markers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hare.report.readme import BEGIN, END, RESULTS_PAGE, SUMMARY_BEGIN, SUMMARY_END

MAX_LINES = 250
FIRST_SCREEN = 60
LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation but ``-`` and ``_`` dropped, spaces as
    ``-``."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    body = re.sub(r"```.*?```", "", markdown, flags=re.DOTALL)
    return {slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", body, re.MULTILINE)}


def broken_links(page: Path, root: Path) -> list[str]:
    """Relative links of ``page`` into ``docs/`` (or between docs pages) whose file or heading does not exist."""
    broken = []
    for target in LINK.findall(page.read_text()):
        if "://" in target or target.startswith("#"):
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve()
        if (root / "docs").resolve() not in (resolved, *resolved.parents):
            continue
        if not resolved.is_file():
            broken.append(f"{page.name}: {target} (no such file)")
        elif anchor and anchor not in anchors(resolved.read_text()):
            broken.append(f"{page.name}: {target} (no such heading)")
    return broken


def test_slug_matches_the_anchors_github_makes():
    assert slug("On a Slurm cluster with GPUs") == "on-a-slurm-cluster-with-gpus"
    assert slug("`paper-core`: the core comparisons, on CPU") == "paper-core-the-core-comparisons-on-cpu"


def test_broken_links_finds_a_missing_page_and_a_missing_heading(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Title\n\n## Real heading\n")
    readme = tmp_path / "README.md"
    readme.write_text(
        "[ok](docs/a.md#real-heading) [gone](docs/b.md) [bad](docs/a.md#nowhere) [web](https://x.org/docs/c.md)\n"
    )
    assert broken_links(readme, tmp_path) == [
        "README.md: docs/b.md (no such file)",
        "README.md: docs/a.md#nowhere (no such heading)",
    ]


def test_readme_is_short(repository):
    n_lines = len((repository / "README.md").read_text().splitlines())
    assert n_lines < MAX_LINES, f"README.md has {n_lines} lines; move long material to docs/"


def test_every_docs_link_exists(repository):
    readme = repository / "README.md"
    links = [t for t in LINK.findall(readme.read_text()) if t.startswith("docs/")]
    assert len(links) >= 5, links
    pages = [readme, *sorted((repository / "docs").glob("*.md"))]
    assert [line for page in pages for line in broken_links(page, repository)] == []


def test_first_screen_says_what_how_and_how_long(repository):
    first = "\n".join((repository / "README.md").read_text().splitlines()[:FIRST_SCREEN])
    for needed in (
        "make all",
        "make test",
        "results/paper.pdf",
        "results/claims.md",
        "results/report.html",
        "calibration figure",
        "docs/build_time.md",
        "Where to look first",
    ):
        assert needed in first, needed


def test_build_time_comes_with_the_calibration_figure_and_how_to_scale_it(repository):
    text = (repository / "README.md").read_text()
    section = text.split("## How long it takes", 1)[1].split("\n## ", 1)[0]
    assert re.search(r"calibration figure[\w* ]*\d\.\d\d", section), "the reference machine's calibration figure"
    assert (
        re.search(r"\*\*\d+ min \d+ s\*\* wall and \*\*[\d,]+ CPU-seconds\*\*", section)
        or "<!-- build-time: to be measured -->" in section
    )
    assert "hare calibrate" in section and re.search(r"time ≈ the time above × [\d.]+\s+/\s+your\s+figure", section)


@pytest.mark.parametrize(
    ("path", "begin", "end"), [("README.md", SUMMARY_BEGIN, SUMMARY_END), (RESULTS_PAGE.as_posix(), BEGIN, END)]
)
def test_each_generated_block_has_one_pair_of_markers(repository, path, begin, end):
    text = (repository / path).read_text()
    assert text.count(begin) == 1 and text.count(end) == 1 and text.index(begin) < text.index(end)
