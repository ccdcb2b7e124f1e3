"""The README's results block, filled from a finished build (never typed by hand).

``hare readme`` replaces everything between ``<!-- results:begin -->`` and ``<!-- results:end -->``
in ``README.md`` with, from the results tree of one build: the main tables (total regret, mean ± std
over the reported runs, from ``results/tables/<table>.csv``, each headed by its information regime
and ``M`` as the run files record them),
the claims summary (``results/claims.md``: passed / total, counts per status, every claim that does not pass), a figure
(the first page of a notebook's PDF, rendered to PNG with ``pdftoppm`` into ``paper/readme/``) and
the measured wall time of the build, as given (``--wall-seconds``, measured by the caller around
``snakemake``) with the machine it ran on.

    hare readme --results results --table classification,classification_warm --figure paper/figures/regret_curves.pdf \
        --wall-seconds 1012 --machine "2 CPU cores, idle" --config config/default.yaml
"""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from hare.io import write_text
from hare.report.names import display_name

BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


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
    return "\n".join(lines) + f"\n\nTotal pseudo-regret, mean ± std over reported runs ({runs}); best mean per column in bold. {regime_sentence(rows)}\n"


def regime_sentence(rows: list[dict[str, str]]) -> str:
    """What every policy of the table knew before round 1, from the CSV's ``regime`` and ``n_logged`` columns
    (tables of files without them are cold)."""
    regimes = sorted({(r.get("regime") or "cold", int(r.get("n_logged") or 0)) for r in rows})
    parts = [f"warm, every policy first learned from the same M = {m} logged interactions" if regime == "warm"
             else "cold, no policy saw a logged interaction" for regime, m in regimes]
    return ("Regime: " if len(parts) == 1 else "Regimes: ") + "; ".join(parts) + "."


def claims_summary(claims_md: Path) -> str:
    """``N/M PASS``, the counts per status, and every claim that is neither PASS nor NOT RUN (key, measured value
    [95% interval], threshold, status) in a collapsed list, from ``results/claims.md``."""
    text = claims_md.read_text()
    header = re.search(r"^# Claims: (\d+)/(\d+) PASS", text, re.MULTILINE)
    if header is None:
        raise ValueError(f"{claims_md}: no '# Claims: N/M PASS' header")
    counts = re.search(r"^(\d+ [A-Z][A-Z ]*(?:, \d+ [A-Z][A-Z ]*)*)\.$", text, re.MULTILINE)
    others = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 6 and cells[5].startswith("**") and cells[5] != "**status**":
            others.append(f"- {cells[5].strip('*')} {cells[0]}: {cells[3]}, needed {cells[4]}")
    summary = (f"Claims: **{header.group(1)}/{header.group(2)} PASS**" + (f" ({counts.group(1)})" if counts else "")
               + "; each decided on its 95% interval (every claim with its source files in `results/claims.md` and the paper's appendix).")
    if others:
        summary += f"\n\n<details><summary>The {len(others)} claims that do not pass</summary>\n\n" + "\n".join(others) + "\n\n</details>"
    return summary + "\n"


def render_png(pdf: Path, png: Path, dpi: int = 110) -> None:
    """First page of ``pdf`` as ``png`` (``pdftoppm``), written atomically."""
    if shutil.which("pdftoppm") is None:
        raise RuntimeError("pdftoppm (poppler-utils) is needed to render the README figure")
    png.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=png.parent) as tmp:
        subprocess.run(["pdftoppm", "-png", "-r", str(dpi), "-singlefile", str(pdf), str(Path(tmp) / "page")], check=True)
        Path(tmp, "page.png").replace(png)


def build_commit(results: Path) -> str:
    """The commit recorded in the build's run sidecars (``git_commit``), or ``unknown``."""
    import json

    for sidecar in sorted((results / "runs").rglob("*.json")):
        commit = json.loads(sidecar.read_text()).get("git_commit")
        if commit:
            return str(commit)[:12]
    return "unknown"


def results_block(results: Path, table: str, figure_png: str, wall_seconds: float, machine: str, config: str) -> str:
    """The block; ``table`` is one table name or several, comma-separated, each rendered under its name."""
    tables = [name.strip() for name in table.split(",") if name.strip()]
    minutes, seconds = divmod(round(wall_seconds), 60)
    return "\n".join([
        BEGIN,
        f"### Results of the default build (`{config}`, commit `{build_commit(results)}`)",
        "",
        f"Measured wall time of `snakemake --cores all` from a fresh clone on {machine}: **{minutes} min {seconds:02d} s**.",
        "",
        f"![Regret curves of the default build]({figure_png})",
        "",
        *(f"#### Table `{name}`\n\n" + regret_markdown(results / "tables" / f"{name}.csv") for name in tables),
        claims_summary(results / "claims.md"),
        "This block is written by `hare readme` from the build's own files (see `src/hare/report/readme.py`).",
        END,
    ])


def update_readme(readme: Path, block: str) -> None:
    text = readme.read_text()
    if text.count(BEGIN) != 1 or text.count(END) != 1:
        raise ValueError(f"{readme}: needs exactly one {BEGIN} ... {END} block")
    start, end = text.index(BEGIN), text.index(END) + len(END)
    write_text(readme, text[:start] + block + text[end:])


def fill_readme(*, wall_seconds: float, machine: str, readme: str | Path = "README.md", results: str | Path = "results",
                table: str = "classification,classification_warm,synthetic,synthetic_warm", figure: str | Path = "paper/figures/regret_curves.pdf",
                png: str | Path = "paper/readme/regret_curves.png", config: str = "config/default.yaml") -> None:
    """Replace the results block of ``readme`` with :func:`results_block` of the build under ``results`` (``table``: table
    names, comma-separated) and render the first page of ``figure`` to ``png``, the image the block shows."""
    png = Path(png)
    block = results_block(Path(results), table, png.as_posix(), wall_seconds, machine, config)
    render_png(Path(figure), png)
    update_readme(Path(readme), block)
