"""The paper's number macros of the run files: run counts, horizons, regimes, mean total regrets and versions.

A row is a summary of one run file (:func:`hare.experiments.tables.aggregate.summarise_run`): ``experiment``,
``environment``, ``policy`` (the config label), ``mean`` and ``std`` of the total pseudo-regret over its
``n_runs`` runs, ``runs_above_half`` (simulated runs only), ``horizon``, ``regime`` and ``n_logged``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from hare.io import write_text
from hare.report.latex import escape, format_number, macro_name, macros


def paper_macros(rows: Iterable[Mapping], versions: Mapping[str, str]) -> str:
    """``\\regret<Exp><Env><Policy>`` (mean total regret), ``\\regretStd...``, ``\\nRunsAboveHalf<Exp><Env><Policy>``
    (runs whose total regret exceeds half the horizon: on two arms, more than uniform random's expectation),
    ``\\nRuns<Exp>``, ``\\horizon<Exp><Env>``, the information regime ``\\regime<Exp>`` (cold or warm) and its
    ``\\nLogged<Exp>`` (``M``, 0 when cold), and ``\\version<Package>`` of ``versions`` (package -> version)."""
    values: dict[str, str] = {}
    for row in rows:
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


def write_paper_macros(path: str | Path, rows: Iterable[Mapping], versions: Mapping[str, str]) -> None:
    """:func:`paper_macros` written atomically to ``path``."""
    write_text(path, paper_macros(rows, versions))


def code_state_macros(commit: str, dirty: bool | None, digest: str, modules: int) -> str:
    """``\\codeCommit`` (the commit, short), ``\\codeDirty`` (``clean``, ``dirty`` or ``unknown``: whether tracked
    files or the package's sources differed from it), ``\\codeDigest`` (the first 16 hex characters of the sha256
    over every module's docstring-free syntax tree, :func:`hare.source_digest.combined_digest`) and
    ``\\codeModules`` (how many modules it covers): the code state the reproducibility appendix prints."""
    state = "unknown" if dirty is None else "dirty" if dirty else "clean"
    return macros(
        {
            "codeCommit": escape(commit[:12]),
            "codeDirty": state,
            "codeDigest": escape(digest[:16]),
            "codeModules": str(modules),
        }
    )
