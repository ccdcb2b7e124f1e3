"""The timed outputs of the build: each producer's files that differ between two runs by design, declared per
producer, and :data:`PROVENANCE_FILES`, their union, which the manifest's comparisons take
(:func:`hare.experiments.manifest.reproducible_part`, :func:`~hare.experiments.manifest.compare_builds`).

A file is timed when it carries wall times, memory peaks, commits or execution timestamps. Every other covered file
is bit-reproducible on the same device and software versions: ``runs/**.npz``, ``data/``, ``tables/`` but the timed
ones, ``checks/`` but the personalization, pool-scaling and cost-growth timings, ``paper/generated/`` but the timed
tables, the benchmark, study and claims tables, ``paper/figures/`` but the figures of the timed notebooks. The other
notebooks, their HTML, their figures and every ``.source.ipynb`` are byte-identical too: cell ids are fixed and
execution timestamps dropped (:mod:`hare.report.notebooks`).

A producer that writes a timed file declares it here, as one :class:`TimedOutputs`, with the reason; this module sits
above the manifest (a study ranks above :mod:`hare.experiments`), so the manifest is handed the union and never
imports the producers. Patterns are globs relative to ``results/``, ``*`` crossing folders, generated paper files as
``../paper/generated/<name>`` and ``../paper/figures/<name>`` (:data:`hare.experiments.manifest.PAPER_DIRS`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TimedOutputs:
    """The timed files of one producer: ``producer`` (what writes them), ``why`` (what in them is measured) and
    ``patterns`` (manifest globs)."""

    producer: str
    why: str
    patterns: tuple[str, ...]


def notebook_outputs(name: str) -> tuple[str, ...]:
    """The executed notebook ``name``, its HTML and its figure."""
    return f"notebooks/{name}.ipynb", f"notebooks/{name}.html", f"../paper/figures/{name}.pdf"


def table_outputs(name: str) -> tuple[str, ...]:
    """The config table ``name``: its CSV and its LaTeX."""
    return f"tables/{name}.csv", f"../paper/generated/table_{name}.tex"


RUN_SIDECARS = TimedOutputs(
    "the jobs and the tuning (hare.experiments.run, hare.experiments.tuning)",
    "a sidecar records wall time and peak memory (and the git commit, if it moved)",
    ("runs/*.json", "tuning/*.json"),
)

BENCHMARKS = TimedOutputs(
    "the benchmarks (hare.experiments.studies.bench and the bench_* modules of its families)",
    "milliseconds per round",
    ("bench/*", "../paper/generated/table_bench*.tex"),
)

TIMED_TABLE_NAMES = ("compute", "scaling", "exploration_sweep", "replay")
"""The configs' tables of the timed kinds (``compute``, ``scaling``, ``replay``)."""

TIMED_TABLES = TimedOutputs(
    "the tables of the timed kinds (hare.experiments.tables)",
    "ms per round or compute used",
    tuple(pattern for name in TIMED_TABLE_NAMES for pattern in table_outputs(name)),
)

PERSONALIZATION = TimedOutputs(
    "the personalization study (hare.experiments.studies.personalization)",
    "its timings",
    ("checks/personalization.json",),
)

POOL_SCALING = TimedOutputs(
    "the pool-scaling study (hare.experiments.studies.pool_scaling) and its notebook",
    "select and update latencies per round",
    ("checks/pool_scaling.json", "../paper/generated/pool_scaling.tex", *notebook_outputs("pool_scaling")),
)

COST_GROWTH = TimedOutputs(
    "the cost-growth study (hare.experiments.studies.cost_growth) and its notebook",
    "seconds per round",
    ("checks/cost_growth.json", "../paper/generated/cost_growth.tex", *notebook_outputs("cost_growth")),
)

RUNTIME = TimedOutputs("the runtime notebook", "it prints and plots wall times", notebook_outputs("runtime"))

CLAIMS = TimedOutputs(
    "the claims register (hare.theory.claims)",
    "the claims on LNUCB-TA's Table 7 quote measured wall-time ratios",
    ("claims.md", "claims.json", "../paper/generated/claims.tex"),
)

PAPER = TimedOutputs("the PDF build", "it prints the measured tables and claims", ("paper.pdf",))

TIMED_OUTPUTS = (
    RUN_SIDECARS,
    BENCHMARKS,
    TIMED_TABLES,
    PERSONALIZATION,
    POOL_SCALING,
    COST_GROWTH,
    RUNTIME,
    CLAIMS,
    PAPER,
)
"""Every producer's timed files."""

PROVENANCE_FILES = tuple(pattern for outputs in TIMED_OUTPUTS for pattern in outputs.patterns)
"""The manifest patterns of every timed file (:data:`TIMED_OUTPUTS`), producer by producer."""
