"""The paper's number macros from the run files: run counts, horizons, regimes, mean total regrets and versions.

Here rather than in :mod:`hare.report`, because the numbers come from the run files through
:func:`hare.experiments.aggregate.summarise_run`; :mod:`hare.report.latex` renders them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from hare.experiments.aggregate import summarise_run
from hare.io import write_text
from hare.report.latex import escape, format_number, macro_name, macros


def paper_macros(run_files: Iterable[str | Path]) -> str:
    """``\\regret<Exp><Env><Policy>`` (mean total regret), ``\\regretStd...``, ``\\nRunsAboveHalf<Exp><Env><Policy>``
    (runs whose total regret exceeds half the horizon: on two arms, more than uniform random's expectation), ``\\nRuns<Exp>``, ``\\horizon<Exp><Env>``,
    the information regime ``\\regime<Exp>`` (cold or warm) and its ``\\nLogged<Exp>`` (``M``, 0 when cold), and versions."""
    values: dict[str, str] = {}
    versions: dict[str, str] = {}
    for path in run_files:
        row = summarise_run(path)
        sidecar = json.loads(Path(path).with_suffix(".json").read_text())
        versions = sidecar["versions"]
        env, policy, exp = row["environment"], row["policy"], row["experiment"]
        values[macro_name("regret", exp, env, policy)] = format_number(row["mean"])
        values[macro_name("regret", "std", exp, env, policy)] = format_number(row["std"])
        if "runs_above_half" in row:  # simulated runs (a replay run has no regret)
            values[macro_name("n", "runs", "above", "half", exp, env, policy)] = str(row["runs_above_half"])
        values[macro_name("n", "runs", exp)] = str(row["n_runs"])
        values[macro_name("horizon", exp, env)] = f"{row['horizon']:,}".replace(",", "{,}")
        values[macro_name("regime", exp)] = row["regime"]
        values[macro_name("n", "logged", exp)] = f"{row['n_logged']:,}".replace(",", "{,}")
    for package, version in versions.items():
        values[macro_name("version", package)] = escape(version)
    return macros(values)


def write_paper_macros(run_files: Iterable[str | Path], out: str | Path) -> None:
    write_text(out, paper_macros(run_files))
