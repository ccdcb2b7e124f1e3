"""The benchmark tables and macros of the paper's appendix: batched LinUCB against its bandwidth ceiling and the peer
libraries, every policy's batching gain, NeuralUCB's exploration modes, HARE's latency and memory against
``N``, ``C``, ``H`` and ``d_k``, and the neural and kernel bandits against their dense references.

``results`` is the JSON of :func:`hare.experiments.studies.bench.run_bench` (``linucb_ceiling``, ``peer_ratios``,
``batching_gains``, ``policies``, ``environment`` and ``neural``, the record of
:func:`hare.experiments.studies.bench_neural.bench_neural`), of
:func:`hare.experiments.studies.bench_hare.run_bench_hare` (``cases``) or of
:func:`hare.experiments.studies.bench_baselines.run_bench_baselines` (``settings``,
``sizes``, ``environment``). A ratio is a :func:`hare.experiments.studies.timing.t_summary`: ``estimate`` with
``ci_low`` and ``ci_high``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hare.io import write_text
from hare.report.latex import booktabs_table, escape, macro_name, macros
from hare.report.names import display_name

PEER_LABELS = {"mabwiser": "MABWiser", "obp": "OBP"}
"""How the table names each peer library (:data:`hare.experiments.studies.bench.PEERS`)."""


def format_summary(summary: dict[str, Any] | None, digits: int = 2) -> str:
    """``estimate [ci_low, ci_high]`` of a :func:`t_summary` for a table cell (``--`` when undefined)."""
    if not summary or summary.get("estimate") is None:
        return "--"
    text = f"{summary['estimate']:.{digits}f}"
    if summary.get("ci_low") is not None:
        text += f" [{summary['ci_low']:.{digits}f}, {summary['ci_high']:.{digits}f}]"
    return text


def format_bytes(count: float) -> str:
    """Bytes for a table cell in kB/MB/GB (powers of 10)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:.3g}~{unit}"
    return f"{count:.0f}~B"


def bench_macros(results: dict[str, Any], device: str = "cpu") -> dict[str, str]:
    """Macros the appendix text uses: repeats, horizon, and the range of the ceiling fractions on ``device``."""
    fractions = [
        row["fraction"]["estimate"]
        for row in results.get("linucb_ceiling", [])
        if row["device"] == device and "fraction" in row
    ]
    env = results["environment"]
    values = {
        macro_name("bench", "comparison", "repeats"): str(env.get("comparison_repeats", 0)),
        macro_name("bench", "horizon"): str(env.get("horizon", "--")),
        macro_name("bench", "repeats"): str(env.get("repeats", 1)),
        macro_name("bench", "ceiling", "fraction", "min"): f"{min(fractions):.2f}" if fractions else "--",
        macro_name("bench", "ceiling", "fraction", "max"): f"{max(fractions):.2f}" if fractions else "--",
        macro_name("bench", "settings"): str(len(fractions)),
    }
    return values


def bench_table_tex(
    results: dict[str, Any] | str | Path,
    device: str = "cpu",
    label: str = "tab:bench",
    peers: Sequence[str] = tuple(PEER_LABELS),
) -> str:
    """Macros (:func:`bench_macros`) and two booktabs tables of ratios measured in one run on ``device``.

    ``tab:bench``: per benchmarked setting (dataset, ``B``), the bytes a round must move, batched
    LinUCB's fraction of the bandwidth ceiling and its rate over each peer's, each a geometric mean over
    back-to-back repeats with its t interval. ``tab:bench-batching``: every policy's rounds·runs/s at
    the largest ``B`` over that at the smallest, timed in turn.
    """
    if not isinstance(results, dict):
        results = json.loads(Path(results).read_text())
    text = macros(bench_macros(results, device))
    ceilings = [row for row in results.get("linucb_ceiling", []) if row["device"] == device]
    ratios = {
        (row["dataset"], row["n_runs"], row["library"]): row
        for row in results.get("peer_ratios", [])
        if row["device"] == device
    }
    body = [
        [
            escape(row["dataset"]),
            str(row["n_runs"]),
            str(row["dim"]),
            str(row["n_arms"]),
            format_bytes(row["bytes_per_round"]),
            format_summary(row.get("fraction")),
            *(
                format_summary(ratios.get((row["dataset"], row["n_runs"], library), {}).get("ratio"), 1)
                for library in peers
            ),
        ]
        for row in ceilings
    ]
    machine = escape(results["environment"]["devices"].get(device, device))
    caption = (
        rf"Batched LinUCB on {device.upper()} ({machine}): fraction of the memory-bandwidth ceiling, "
        r"$\bigl(B\cdot 8(K{+}3)d^2 / \text{read rate}\bigr) / \text{seconds per round}$, "
        r"and rounds$\cdot$runs/s over each peer's."
    )
    notes = (
        r"Each value is the geometric mean over \benchComparisonRepeats{} repeats, each timing LinUCB, the read of a "
        r"state of its size and the peers back to back in one process on the same rounds, with its 95\% $t$ interval "
        r"(of the log ratio) over repeats. Peers play one sequential run. ``--'': not run."
    )
    text += booktabs_table(
        [
            "Dataset",
            "$B$",
            "$d$",
            "$K$",
            "Bytes/round",
            "Fraction of ceiling",
            *(f"vs.\\ {PEER_LABELS[lib]}" for lib in peers),
        ],
        body,
        "lrrrrrrr",
        caption,
        label,
        notes,
        resize=True,
    )
    gains = [row for row in results.get("batching_gains", []) if row["device"] == device]
    if gains:
        datasets = list(dict.fromkeys(row["dataset"] for row in gains))
        cell = {(row["policy"], row["dataset"]): f"{row['gain']:.1f}" for row in gains}
        names = list(dict.fromkeys(row["policy"] for row in results["policies"] if row["device"] == device))
        names = [name for name in names if any((name, d) in cell for d in datasets)]
        low, high = gains[0]["n_runs_low"], gains[0]["n_runs_high"]
        body = [[name.replace("_", r"\_"), *(cell.get((name, d), "--") for d in datasets)] for name in names]
        caption = (
            rf"Batching gain on {device.upper()}: rounds$\cdot$runs/s with $B{{=}}{high}$ runs over that with "
            rf"$B{{=}}{low}$, the two timed in turn in one process."
        )
        text += booktabs_table(
            ["Policy", *(escape(d) for d in datasets)],
            body,
            "l" + "r" * len(datasets),
            caption,
            f"{label}-batching",
            r"``--'': not run on that dataset (missing oracle, memory).",
        )
    return text


def bench_neural_table_tex(results: dict[str, Any] | str | Path, label: str = "tab:bench-neural") -> str:
    """Macros and a booktabs table of NeuralUCB's exploration modes: select and whole-round speed over
    ``loop``, each a geometric mean over repeats of back-to-back ratios (``results["neural"]``, from
    :func:`hare.experiments.studies.bench_neural.bench_neural`)."""
    if not isinstance(results, dict):
        results = json.loads(Path(results).read_text())
    neural = results["neural"]
    ratios = neural["ratios"]
    body = [
        [
            mode,
            format_summary(ratios[f"select_{mode}_over_loop"], 1),
            format_summary(ratios[f"round_{mode}_over_loop"], 1),
        ]
        for mode in ("jacobian", "diagonal")
    ]
    s = neural["settings"]
    values = {
        macro_name("bench", "neural", "select", "ratio"): f"{ratios['select_jacobian_over_loop']['estimate']:.1f}",
        macro_name("bench", "neural", "round", "ratio"): f"{ratios['round_jacobian_over_loop']['estimate']:.1f}",
        macro_name("bench", "neural", "repeats"): str(s.get("repeats", 1)),
        macro_name("bench", "neural", "rounds"): str(s["rounds"]),
    }
    caption = (
        rf"NeuralUCB exploration modes with training off ({s['arms']} arms, $d={s['dim']}$, "
        rf"$m={s['width']}$, $p={neural['n_parameters']}$, $B={s['runs']}$, {s['device']}): "
        r"speed over the $K$-pass loop of the selection "
        r"alone (every arm's mean and bonus) and of the whole round (selection and the update of $Z^{-1}$)."
    )
    notes = (
        r"Geometric mean over \benchNeuralRepeats{} repeats, each timing the three modes in turn on the same rounds "
        r"(\benchNeuralRounds{} timed rounds per mode), with its 95\% $t$ interval (of the log ratio) over repeats."
    )
    return macros(values) + booktabs_table(
        ["Mode", "Select vs.\\ loop", "Round vs.\\ loop"], body, "lrr", caption, label, notes
    )


def bench_hare_table_tex(results: dict, label: str = "tab:bench-hare") -> str:
    """Per-round latency of HARE select mode relative to the first case of the same run, and state memory, against
    N, C, H and d_k.

    The latency column is ``seconds_per_round / seconds_per_round(first case)``, both timed in one
    process; state memory is exact (the policy's buffers): cluster-level covariance costs
    ``O(H C d_k^2)`` and per-item covariance (``C = N``) ``O(H N d_k^2)``.
    """
    cases = results["cases"]
    reference = cases[0]["seconds_per_round"] if cases else 1.0
    body = [
        [
            str(c["n_items"]),
            str(c["n_clusters"]),
            str(c["n_heads"]),
            str(c["key_dim"]),
            f"{c['seconds_per_round'] / reference:.2f}",
            f"{c['state_bytes'] / 2**20:.2f}",
        ]
        for c in cases
    ]
    device = cases[0]["device"] if cases else "cpu"
    means = sorted({c.get("mean", "online") for c in cases}) or ["online"]
    caption = (
        f"HARE select mode ({' and '.join(means)} mean): median latency per round relative to the first row, "
        f"timed in the same process, and policy state memory ({device}, one run)."
    )
    notes = (
        "State: every buffer of the policy (covariances, inverses, keys, user posteriors), exact; "
        "latency includes select and update."
    )
    return booktabs_table(
        ["$N$", "$C$", "$H$", "$d_k$", "latency vs.\\ row 1", "state (MiB)"], body, "rrrrrr", caption, label, notes
    )


BASELINE_SIZE_MACROS = {
    "n_runs": "runs",
    "width": "width",
    "train_steps": "train steps",
    "batch_size": "batch size",
    "n_networks": "networks",
    "max_points": "max points",
    "history": "history",
    "rounds": "rounds",
    "repeats": "repeats",
}
"""The benchmark sizes the appendix names by macro (``benchBaselines`` + the words)."""


def format_seconds(seconds: float) -> str:
    """Seconds for a table cell, three significant digits (whole seconds from 1,000 on)."""
    return f"{seconds:.0f}" if seconds >= 1000 else f"{seconds:.3g}"


def speedup_range(settings: list[dict[str, Any]], family: str, measure: str) -> tuple[str, str]:
    """The smallest and largest speed-up estimate of ``family``'s ``measure`` settings, two decimals (``--`` when
    none was timed)."""
    found = [
        row["speedup"]["estimate"]
        for row in settings
        if row.get("family") == family and row["measure"] == measure and "speedup" in row
    ]
    return (f"{min(found):.2f}", f"{max(found):.2f}") if found else ("--", "--")


def bench_baselines_macros(results: dict[str, Any]) -> dict[str, str]:
    """The sizes (:data:`BASELINE_SIZE_MACROS`), the thread count, and the range of the speed-ups of one neural
    training, one neural round and one kernel round."""
    sizes = results["sizes"]
    values = {macro_name("bench", "baselines", words): str(sizes[key]) for key, words in BASELINE_SIZE_MACROS.items()}
    values[macro_name("bench", "baselines", "threads")] = str(results["environment"]["threads"])
    for family, measure in (("neural", "training"), ("neural", "round"), ("kernel", "round")):
        low, high = speedup_range(results["settings"], family, measure)
        values[macro_name("bench", "baselines", family, measure, "min")] = low
        values[macro_name("bench", "baselines", family, measure, "max")] = high
    return values


def bench_baselines_table_tex(results: dict[str, Any] | str | Path, label: str = "tab:bench-baselines") -> str:
    """Macros (:func:`bench_baselines_macros`) and a booktabs table: per policy and timed unit (one training, one
    round), on each dataset, the dense reference's seconds and the registered class's speed-up over it (reference
    seconds over registered seconds, each repeat timing both in turn), a geometric mean with its t interval."""
    if not isinstance(results, dict):
        results = json.loads(Path(results).read_text())
    settings = results["settings"]
    datasets = list(dict.fromkeys(row["dataset"] for row in settings))
    cells = {(row["policy"], row["measure"], row["dataset"]): row for row in settings}
    body = []
    for policy in dict.fromkeys(row["policy"] for row in settings):
        for measure in ("training", "round"):
            found = [cells.get((policy, measure, dataset)) for dataset in datasets]
            if not any(found):
                continue
            row = [escape(display_name(policy)), measure]
            for entry in found:
                if entry is None or "speedup" not in entry:
                    row += ["--", "--"]
                else:
                    seconds = entry["reference_seconds"] / entry["rounds"]
                    row += [format_seconds(seconds), format_summary(entry["speedup"])]
            body.append(row)
    env = results["environment"]
    caption = (
        r"Neural and kernel bandits against their dense references, timed in turn in one process on "
        rf"{escape(env['device']).upper()} ({escape(env['machine'])}, \benchBaselinesThreads{{}} thread(s)): "
        r"$B=\benchBaselinesRuns{}$ runs; one training is \benchBaselinesTrainSteps{} SGD steps on minibatches of "
        r"\benchBaselinesBatchSize{} points from a history of \benchBaselinesHistory{} points, "
        r"$m=\benchBaselinesWidth{}$ hidden units, \benchBaselinesNetworks{} networks for BootstrapNN; "
        r"a round is a selection and an update "
        r"(its training apart), for the kernel bandits once \benchBaselinesMaxPoints{} points have entered the "
        r"dictionary. Dense: the reference's seconds per unit (median); speed-up: its seconds over the new code's."
    )
    notes = (
        r"Geometric mean over up to \benchBaselinesRepeats{} repeats, the order of the two alternating, each timing "
        r"\benchBaselinesRounds{} rounds and one training of each, with its 95\% $t$ interval (of the log ratio) over "
        r"repeats. ``--'': not run."
    )
    header = ["Policy", "Timed"]
    for dataset in datasets:
        header += [rf"{escape(display_name(dataset))}: dense (s)", "speed-up"]
    return macros(bench_baselines_macros(results)) + booktabs_table(
        header, body, "ll" + "rr" * len(datasets), caption, label, notes, resize=True
    )


def write_bench_baselines_table(path: str | Path, results: dict[str, Any]) -> None:
    """:func:`bench_baselines_table_tex` written atomically to ``path``."""
    write_text(path, bench_baselines_table_tex(results))


def write_bench_tables(
    results: dict[str, Any],
    device: str,
    tex: str | Path | None = None,
    tex_neural: str | Path | None = None,
    peers: Sequence[str] = tuple(PEER_LABELS),
) -> None:
    """:func:`bench_table_tex` on ``device`` (one column per library of ``peers``) to ``tex`` and
    :func:`bench_neural_table_tex` to ``tex_neural`` (when the results hold the NeuralUCB modes), each written
    atomically where a path is given."""
    if tex:
        write_text(tex, bench_table_tex(results, device, peers=peers))
    if tex_neural and "neural" in results:
        write_text(tex_neural, bench_neural_table_tex(results))


def write_bench_hare_table(path: str | Path, results: dict) -> None:
    """:func:`bench_hare_table_tex` written atomically to ``path``."""
    write_text(path, bench_hare_table_tex(results))
