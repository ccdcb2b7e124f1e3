"""The results the README and ``docs/results.md`` show, filled from a finished build (never typed by hand).

``hare readme`` rewrites two generated blocks from the results tree of one build:

* in ``docs/results.md`` (beside the README), everything between ``<!-- results:begin -->`` and
  ``<!-- results:end -->``: the main tables (total regret, mean ± std over the reported runs, from
  ``results/tables/<table>.csv``, each headed by its information regime and ``M`` as the run files record them), the
  claims summary (passed / total, counts per status, every claim that does not pass), a figure (the first page of a
  notebook's PDF, rendered to PNG with ``pdftoppm`` into ``paper/readme/``) and the measured wall time of the build, as
  given (``--wall-seconds``, measured by the caller around ``snakemake``) with the machine it ran on and, when the build
  left ``results/logs/calibration.json`` (``make all`` does), that machine's calibration figure;
* in ``README.md``, everything between ``<!-- results-summary:begin -->`` and ``<!-- results-summary:end -->``: the
  build's commit, the claims' counts, the headline claims and the figure, with a link to the page.

The claims are read from ``results/claims.json`` when the build wrote it (statuses, the family-adjusted verdicts, the
headline claims), else from the table of ``results/claims.md``.

    hare readme --results results --table classification,classification_warm --figure paper/figures/regret_curves.pdf \
        --wall-seconds 1012 --machine "2 CPU cores, idle" --config config/default.yaml
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from hare.io import write_text
from hare.report.names import display_name
from hare.report.readme_claims import ClaimLine, Claims, load_claims
from hare.report.table_cells import regime_sentence as table_regime_sentence
from hare.verdicts import status_counts

BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"
SUMMARY_BEGIN, SUMMARY_END = "<!-- results-summary:begin -->", "<!-- results-summary:end -->"
RESULTS_PAGE = Path("docs") / "results.md"
"""Where the full results block lives, relative to the README's folder."""

NOT_LISTED = ("PASS", "NOT RUN")
"""Verdicts of claims the summaries do not list one by one."""
MAX_HEADLINE = 12
"""Headline claims listed in the README's block; the rest are on the results page."""


def regret_markdown(csv_path: Path) -> str:
    """Policies as rows, environments as columns (both by display name), ``mean ± std`` of total regret; the best mean
    per column in bold."""
    with open(csv_path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    if not rows:
        raise ValueError(f"{csv_path}: no rows")
    environments = list(dict.fromkeys(r["environment"] for r in rows))
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    cell = {(r["policy"], r["environment"]): r for r in rows}
    best = {env: min(float(r["mean"]) for r in rows if r["environment"] == env) for env in environments}
    lines = ["| policy | " + " | ".join(map(display_name, environments)) + " |", "|---|" + "---:|" * len(environments)]
    for policy in policies:
        cells = []
        for env in environments:
            row = cell.get((policy, env))
            if row is None:
                cells.append("")
                continue
            text = f"{float(row['mean']):.1f} ± {float(row['std']):.1f}"
            cells.append(f"**{text}**" if float(row["mean"]) == best[env] else text)
        lines.append(f"| {display_name(policy)} | " + " | ".join(cells) + " |")
    counts = sorted({(r["n_runs"], r["horizon"]) for r in rows})
    runs = ", ".join(f"{n} runs of T = {t}" for n, t in counts)
    return (
        "\n".join(lines)
        + f"\n\nTotal pseudo-regret, mean ± std over reported runs ({runs}); best mean per column in bold. "
        + f"{regime_sentence(rows)}\n"
    )


def regime_sentence(rows: list[dict[str, str]]) -> str:
    """What every policy of the table knew before round 1 (:func:`hare.report.table_cells.regime_sentence`, the
    tables' caption sentence, without math markup), from the CSV's ``regime`` and ``n_logged`` columns (tables of
    files without them are cold)."""
    regimes = [{"regime": r.get("regime") or "cold", "n_logged": int(r.get("n_logged") or 0)} for r in rows]
    return table_regime_sentence(regimes).replace("$", "")


def counts_text(statuses: list[str]) -> str:
    """``3 PASS, 1 FAIL, ...`` in the order of :data:`hare.verdicts.STATUSES` (:func:`hare.verdicts.status_counts`),
    zero counts left out."""
    return ", ".join(f"{n} {status}" for status, n in status_counts(statuses).items() if n)


def claims_headline(claims: Claims) -> str:
    """``Claims: **N/M PASS** (counts)``, with the adjusted counts when the build adjusted its verdicts."""
    statuses = [c.status for c in claims.lines]
    text = f"Claims: **{statuses.count('PASS')}/{len(statuses)} PASS** ({counts_text(statuses)})"
    if any(c.adjusted for c in claims.lines):
        text += f"; family-adjusted: {counts_text([c.verdict for c in claims.lines])}"
    return text


def _claim_item(c: ClaimLine) -> str:
    label = f"{c.claim_id} {c.key}" if c.claim_id else c.key
    unadjusted = f" (unadjusted {c.status})" if c.adjusted and c.adjusted != c.status else ""
    return f"- {c.verdict}{unadjusted} {label}: {c.value}, needed {c.needed}"


def claims_summary(claims_md: Path) -> str:
    """The counts per status (and per adjusted verdict), and every claim whose verdict is neither PASS nor NOT RUN
    (key, measured value [interval], threshold, verdict) in a collapsed list; from ``results/claims.json`` beside
    ``claims_md`` when present, else from ``claims_md``."""
    claims = load_claims(claims_md)
    others = [_claim_item(c) for c in claims.lines if c.verdict not in NOT_LISTED]
    summary = (
        claims_headline(claims)
        + f"; each decided on its {100 * claims.level:g}% interval"
        + (f", adjusted as follows: {claims.adjustment}" if claims.adjustment else "")
        + " (every claim with its source files in `results/claims.md` and the paper's appendix)."
    )
    if others:
        summary += (
            f"\n\n<details><summary>The {len(others)} claims that do not pass</summary>\n\n"
            + "\n".join(others)
            + "\n\n</details>"
        )
    return summary + "\n"


def headline_claims(claims_md: Path, limit: int = MAX_HEADLINE) -> str:
    """The counts, then each headline claim (at most ``limit``) with its verdict, value and threshold; from the same
    source as :func:`claims_summary`."""
    claims = load_claims(claims_md)
    headline = [c for c in claims.lines if c.headline]
    text = claims_headline(claims) + "."
    if headline:
        text += "\n\nHeadline claims:\n\n" + "\n".join(_claim_item(c) for c in headline[:limit])
        if len(headline) > limit:
            text += f"\n- and {len(headline) - limit} more on the results page"
    return text + "\n"


def render_png(pdf: Path, png: Path, dpi: int = 110) -> None:
    """First page of ``pdf`` as ``png`` (``pdftoppm``), written atomically."""
    if shutil.which("pdftoppm") is None:
        raise RuntimeError("pdftoppm (poppler-utils) is needed to render the README figure")
    png.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=png.parent) as tmp:
        subprocess.run(
            ["pdftoppm", "-png", "-r", str(dpi), "-singlefile", str(pdf), str(Path(tmp) / "page")], check=True
        )
        Path(tmp, "page.png").replace(png)


def build_commit(results: Path) -> str:
    """The commit recorded in the build's run sidecars (``git_commit``), or ``unknown``."""
    for sidecar in sorted((results / "runs").rglob("*.json")):
        commit = json.loads(sidecar.read_text()).get("git_commit")
        if commit:
            return str(commit)[:12]
    return "unknown"


def calibration_note(results: Path) -> str:
    """``, calibration figure 1.02`` from the build's ``logs/calibration.json`` (``hare calibrate``), or nothing."""
    path = results / "logs" / "calibration.json"
    if not path.is_file():
        return ""
    figure = json.loads(path.read_text()).get("score")
    return "" if figure is None else f", calibration figure {figure:.2f} (`hare calibrate`)"


def results_block(results: Path, table: str, figure_png: str, wall_seconds: float, machine: str, config: str) -> str:
    """The results page's block; ``table`` is one table name or several, comma-separated, each rendered under its
    name."""
    tables = [name.strip() for name in table.split(",") if name.strip()]
    minutes, seconds = divmod(round(wall_seconds), 60)
    return "\n".join(
        [
            BEGIN,
            f"### Results of the default build (`{config}`, commit `{build_commit(results)}`)",
            "",
            f"Measured wall time of `snakemake --cores all` from a fresh clone on {machine}"
            f"{calibration_note(results)}: **{minutes} min {seconds:02d} s**.",
            "",
            f"![Regret curves of the default build]({figure_png})",
            "",
            *(f"#### Table `{name}`\n\n" + regret_markdown(results / "tables" / f"{name}.csv") for name in tables),
            claims_summary(results / "claims.md"),
            "This block is written by `hare readme` from the build's own files (see `src/hare/report/readme.py`).",
            END,
        ]
    )


def summary_block(results: Path, figure_png: str, config: str, page: str) -> str:
    """The README's block: the build, its claims' counts and headline claims, the figure, a link to ``page``."""
    return "\n".join(
        [
            SUMMARY_BEGIN,
            f"Default build (`{config}`, commit `{build_commit(results)}`); tables, the figure and every claim that "
            f"does not pass: [{page}]({page}).",
            "",
            headline_claims(results / "claims.md"),
            f"![Regret curves of the default build]({figure_png})",
            SUMMARY_END,
        ]
    )


def update_readme(readme: Path, block: str, begin: str = BEGIN, end: str = END) -> None:
    """Replace the one ``begin`` ... ``end`` block of ``readme`` with ``block`` (which carries its markers)."""
    text = readme.read_text()
    if text.count(begin) != 1 or text.count(end) != 1:
        raise ValueError(f"{readme}: needs exactly one {begin} ... {end} block")
    start, stop = text.index(begin), text.index(end) + len(end)
    write_text(readme, text[:start] + block + text[stop:])


def relative_link(target: Path, page: Path) -> str:
    """``target`` (relative to the working folder) as a link from a Markdown file at ``page``."""
    return Path(os.path.relpath(target, page.parent)).as_posix()


def fill_readme(
    *,
    wall_seconds: float,
    machine: str,
    readme: str | Path = "README.md",
    results: str | Path = "results",
    table: str = "classification,classification_warm,synthetic,synthetic_warm",
    figure: str | Path = "paper/figures/regret_curves.pdf",
    png: str | Path = "paper/readme/regret_curves.png",
    config: str = "config/default.yaml",
    page: str | Path | None = None,
) -> None:
    """Replace the results block of ``page`` (default ``docs/results.md`` beside ``readme``) with :func:`results_block`
    and the summary block of ``readme`` with :func:`summary_block`, from the build under ``results`` (``table``: table
    names, comma-separated), and render the first page of ``figure`` to ``png``, the image both show. Both files are
    checked for their markers before anything is written."""
    readme, png, results = Path(readme), Path(png), Path(results)
    page = readme.parent / RESULTS_PAGE if page is None else Path(page)
    for path, (begin, end) in ((page, (BEGIN, END)), (readme, (SUMMARY_BEGIN, SUMMARY_END))):
        text = path.read_text()
        if text.count(begin) != 1 or text.count(end) != 1:
            raise ValueError(f"{path}: needs exactly one {begin} ... {end} block")
    block = results_block(results, table, relative_link(png, page), wall_seconds, machine, config)
    summary = summary_block(results, relative_link(png, readme), config, relative_link(page, readme))
    render_png(Path(figure), png)
    update_readme(page, block)
    update_readme(readme, summary, SUMMARY_BEGIN, SUMMARY_END)
