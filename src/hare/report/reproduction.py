"""The reproduction table of LNUCB-TA and its generated paragraph per dataset (LaTeX), from its lines.

A line is a dict of :func:`hare.experiments.tables.reproduction.reproduction_rows` (the CSV's columns): per dataset,
LNUCB-TA's published row (``role`` ``published``), then each reading that was run (``role`` ``ours``): its mean
total regret with its 95% t interval ``[ci_low, ci_high]``, ``n_runs``, ``horizon``, ``sigma_difference`` =
(our mean - published mean) / published std, and the verdict code of the claims' rule. Which readings there are,
and which switches each sets, is the plain data of :class:`Readings`.

Length: one module because the table and its per-dataset paragraph render the same lines and must agree word for
word on every verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from hare.report.latex import booktabs_table, escape, format_number
from hare.report.names import PREPARATION_NAMES, display_name


class Reading(NamedTuple):
    """One reading of LNUCB-TA: its label in the ``published`` experiment (the label the claims register reads), the
    switches it sets to the public code's value (docs/lnucb_ta_reading.md) and its name in plain text."""

    label: str
    switches: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class Readings:
    """The readings in row order (the algorithm as written first, then the public code's reading), every switch,
    and the switch whose public value reads information a bandit does not have."""

    readings: tuple[Reading, ...]
    switches: tuple[str, ...]
    privileged: str

    def by_label(self) -> dict[str, Reading]:
        return {reading.label: reading for reading in self.readings}


NOT_A_BANDIT = "not available to a bandit"
READING_TEX = {
    "lnucb_ta": "as written",
    "lnucb_ta_public": "public-code reading",
    "lnucb_ta_distance_weights": "distance weights",
    "lnucb_ta_all_rewards": "$g$ from all rewards",
    "lnucb_ta_floor_k": "$k$ by floor",
    "lnucb_ta_uniform_theta": r"$\theta$ uniform at start",
}
"""A reading's name in LaTeX, by label (a reading not listed: its plain name, escaped)."""
VERDICT_MARKS = {
    "within 2 sd": r"$\checkmark$",
    "outside 2 sd": r"$\times$",
    "overlaps": r"$\sim$",
    "not comparable": r"$\dagger$",
    "no interval": "?",
    "no published row": "",
}
"""The mark a cell of the table carries for each verdict code (the notes give the legend)."""
REPRODUCTION_RULE = (
    r"Verdicts follow the rule of the claims register: within 2$\sigma$ when the whole 95\% $t$ interval of our mean "
    r"lies within the published mean $\pm$ two published standard deviations, outside 2$\sigma$ when it lies wholly "
    r"outside, overlaps otherwise, and not comparable at another horizon $T$ than the published one (our run count "
    r"$n$ is ours: the interval carries it)."
)


def reading_name(reading: Reading, readings: Readings, tex: bool = True) -> str:
    """The row label of a reading: ``as written``, ``public-code reading (all switches)``, ``<switch> alone``; the
    switch that reads the whole reward matrix is marked as not available to a bandit. LaTeX, or plain text (the
    CSV's) when ``tex`` is false."""
    name = READING_TEX.get(reading.label, escape(reading.text)) if tex else reading.text
    if len(reading.switches) == len(readings.switches):
        return f"{name} (all switches)"
    if len(reading.switches) == 1:
        return f"{name} alone" + (f" ({NOT_A_BANDIT})" if reading.switches[0] == readings.privileged else "")
    return name


def _signed(value: float) -> str:
    """A signed number in math mode (``$+1.2$``, ``$-0.4$``, ``$0.0$``); ``--`` when undefined."""
    text = format_number(abs(value)) if math.isfinite(value) else "--"
    if text == "--" or text == format_number(0.0):
        return text if text == "--" else f"${text}$"
    return f"${'+' if value > 0 else '-'}{text}$"


def _scale(row: dict, published: bool = False) -> str:
    horizon, n_runs = (
        (row["published_horizon"], row["published_n_runs"]) if published else (row["horizon"], row["n_runs"])
    )
    return f"$T={format_number(horizon, 0)}$, $n={n_runs}$"


NOTES = (
    "A cell: our mean total pseudo-regret over $n$ independent runs of $T$ rounds on the reference's rows under the "
    "column's preparation (reference: ordinal codes, raw numbers; one-hot: nominal attributes one-hot; standardised, "
    "min-max: numeric attributes scaled; every one with unit rows); in parentheses (our mean $-$ published mean) / "
    "published standard deviation, at the published horizon only; then the verdict: $\\checkmark$ within 2$\\sigma$, "
    "$\\times$ outside 2$\\sigma$, $\\sim$ overlaps, $\\dagger$ not comparable (another $T$ than the published one), "
    "? no interval ($n<2$). The 95\\% Student $t$ intervals that decide the verdicts are in the table's CSV (LNUCB-TA "
    "as written's also in the paragraphs below). Published: mean $\\pm$ standard deviation as LNUCB-TA's Table~2 "
    "quotes them. Every reading is tuned on $\\alpha_0$ over tuning runs with disjoint seeds, like LNUCB-TA as "
    "written; a switch alone departs from the algorithm as written in that one place, the public-code reading in all "
    "of them. $g$ from all rewards, and so the public-code reading, reads the environment's whole reward matrix: "
    "information a bandit does not have."
)


def _cell_label(r: dict, readings: Readings) -> str:
    """A cell's row label: the reading's name for LNUCB-TA, the policy's display name otherwise."""
    reading = readings.by_label().get(r["policy"])
    return reading_name(reading, readings) if reading is not None else escape(display_name(r["policy"]))


def _span(values: list) -> str:
    """One value, or the range of several (``16--51``)."""
    low, high = min(values), max(values)
    return format_number(low, 0) if low == high else f"{format_number(low, 0)}--{format_number(high, 0)}"


def _cell(r: dict) -> str:
    """A cell: the mean total regret, its distance from the published mean in published standard deviations (at the
    published scale) and its verdict's mark."""
    sigma = f" ({_signed(r['sigma_difference'])})" if r["comparable"] and math.isfinite(r["sigma_difference"]) else ""
    mark = VERDICT_MARKS.get(r["verdict"], "")
    return f"{format_number(r['mean'])}{sigma}" + (f"\\,{mark}" if mark else "")


def reproduction_table_tex(lines: list[dict], readings: Readings, caption: str, label: str, regime: str = "") -> str:
    """One row per dataset and reading of LNUCB-TA (or published policy), one column per preparation of the
    reference's rows: the published mean ± std of the row's policy, our horizon T and run counts n, then per
    preparation our mean total regret, (mean - published mean) / published std and the verdict's mark (the 95% t
    intervals that decide them are in the CSV and the paragraphs of :func:`reproduction_text`). The caption (plain
    text, escaped here) states the verdict rule (the claims') and ends with ``regime``. Without a line, a one-cell
    table says that no cell was run."""
    caption = escape(caption)
    if not lines:
        message = "no reading of LNUCB-TA under the reference's rows in this configuration"
        return booktabs_table(["Reading"], [[message]], "l", f"{caption} {regime}", label)
    ours = [r for r in lines if r["role"] != "published"]
    published = {(r["dataset"], r["policy"]): r for r in lines if r["role"] == "published"}
    order = list(PREPARATION_NAMES)
    preparations = sorted(
        {r.get("preparation", "") for r in ours}, key=lambda p: (p not in order, order.index(p) if p in order else 0, p)
    )
    rows: dict[str, dict[str, list[dict]]] = {}
    for r in ours:
        rows.setdefault(r["dataset"], {}).setdefault(r["policy"], []).append(r)
    by_label = readings.by_label()
    body: list[list[str]] = []
    for dataset, policies in rows.items():
        if body:
            body.append([])
        horizon = f"$T$ = {_span([r['horizon'] for cells in policies.values() for r in cells])}"
        # The dataset's name and under it our horizon T (beside it where the dataset has one row).
        name = escape(display_name(dataset))
        names = [name, horizon] if len(policies) > 1 else [f"{name}, {horizon}"]
        for i, (policy, cells) in enumerate(policies.items()):
            reference = published.get((dataset, "lnucb_ta" if policy in by_label else policy))
            by_preparation = {r.get("preparation", ""): r for r in cells}
            body.append(
                [
                    names[i] if i < len(names) else "",
                    _cell_label(cells[0], readings),
                    f"{format_number(reference['mean'])} $\\pm$ {format_number(reference['std'])}"
                    if reference
                    else "--",
                    _span([r["n_runs"] for r in cells]),
                    *(_cell(by_preparation[p]) if p in by_preparation else "" for p in preparations),
                ]
            )
    notes = NOTES
    if any(r["verdict"] == "no published row" for r in lines):
        notes += " A dataset without a published LNUCB-TA row has no published row and no verdict."
    header = ["Dataset", "Reading of LNUCB-TA, or policy", "Published", "$n$"]
    stacked = [PREPARATION_NAMES.get(p, escape(p)).replace(", ", ",\\\\ ") for p in preparations]
    header += [rf"\shortstack[r]{{{name}}}" for name in stacked]
    return booktabs_table(
        header,
        body,
        "llrr" + "r" * len(preparations),
        f"{caption} {REPRODUCTION_RULE} {regime}".rstrip(),
        label,
        notes,
        resize=True,
    )


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"


def _move(delta: float, numbers: bool, sigma: float | None = None) -> tuple[str, str, str]:
    """``(verb, participle, amount)`` of a move of the mean by ``delta``: lowers/raises/leaves unchanged, and (with
    ``numbers``) `` by |delta|`` plus its size in published standard deviations when ``sigma`` is given."""
    if delta == 0:
        return "leaves unchanged", "leaving it unchanged", ""
    verb, participle = ("raises", "raising") if delta > 0 else ("lowers", "lowering")
    amount = f" by {format_number(abs(delta))}" if numbers else ""
    if numbers and sigma is not None and math.isfinite(sigma) and sigma > 0:
        amount += f" ({format_number(abs(delta) / sigma)} published standard deviations)"
    return verb, participle, amount


def _reading_subject(reading: Reading, readings: Readings) -> str:
    """A reading as the paragraph names it: LNUCB-TA as written, the public-code reading, or the switch alone."""
    if not reading.switches:
        return "LNUCB-TA as written"
    if len(reading.switches) == len(readings.switches):
        return f"the {READING_TEX.get(reading.label, escape(reading.text))}"
    return reading_name(reading, readings)


def _opening(name: str, published: dict | None, written: dict | None, scale: dict, comparable: bool) -> str:
    """The first sentence of a dataset's paragraph: LNUCB-TA as written against the published mean."""
    if published is None:
        return f"On {name}, LNUCB-TA has no published row, so no reading gets a verdict" + (
            f"; as written it reaches a mean total regret of {format_number(written['mean'])} (95\\% interval "
            f"[{format_number(written['ci_low'])}, {format_number(written['ci_high'])}]; {_scale(written)})."
            if written
            else "."
        )
    if not comparable:
        return (
            f"On {name}, our runs ({_scale(scale)}) are not at the published scale ({_scale(scale, published=True)}): "
            "the verdicts need the published scale (\\texttt{config/paper.yaml}), so only the directions of the "
            "moves are reported."
        )
    if written is not None:
        gap = written["mean"] - published["mean"]
        where = (
            "level with it"
            if _signed(written["sigma_difference"]) == f"${format_number(0.0)}$"
            else (
                f"{format_number(abs(written['sigma_difference']))} published standard deviations "
                f"{'above' if gap > 0 else 'below'} it"
            )
        )
        return (
            f"On {name}, LNUCB-TA as written reaches a mean total regret of {format_number(written['mean'])} (95\\% "
            f"interval [{format_number(written['ci_low'])}, {format_number(written['ci_high'])}]) against the "
            f"published {format_number(published['mean'])} $\\pm$ {format_number(published['std'])}, {where}."
        )
    return (
        f"On {name}, LNUCB-TA as written was not run; the published mean is {format_number(published['mean'])} "
        f"$\\pm$ {format_number(published['std'])}."
    )


def _moves(ours: dict, readings: Readings, numbers: bool, sigma: float | None) -> str:
    """The sentence on how far the public-code reading and the switch alone that moves most move LNUCB-TA as
    written (``ours``: the lines of our readings by label, the algorithm as written among them)."""
    order = readings.readings
    written = ours[order[0].label]
    clauses = []
    public = ours.get(order[1].label)
    if public is not None:
        verb, _, amount = _move(public["mean"] - written["mean"], numbers, sigma)
        target = f" to {format_number(public['mean'])}" if numbers and verb != "leaves unchanged" else ""
        clauses.append(f"the public-code reading {verb} the mean total regret of LNUCB-TA as written{amount}{target}")
    alone = [ours[r.label] for r in order if len(r.switches) == 1 and r.label in ours]
    it = "it" if clauses else "the mean total regret of LNUCB-TA as written"
    if alone:
        most = max(alone, key=lambda r: abs(r["mean"] - written["mean"]))
        delta = most["mean"] - written["mean"]
        if delta == 0:
            clauses.append(f"no switch alone moves {it}")
        else:
            _, participle, amount = _move(delta, numbers, sigma)
            switch = readings.by_label()[most["policy"]]
            mark = f" ({NOT_A_BANDIT})" if switch.switches == (readings.privileged,) else ""
            name = READING_TEX.get(switch.label, escape(switch.text))
            clauses.append(f"of the switches alone, {name}{mark} moves {it} the most, {participle} it{amount}")
    else:
        clauses.append(
            "no switch was run alone" if clauses else "neither the public-code reading nor a switch alone was run"
        )
    text = "; ".join(clauses)
    return text[0].upper() + text[1:] + "."


def _closing(ours: dict, readings: Readings) -> str:
    """Which readings reach the published mean within two published standard deviations, or that none does."""
    by_label = readings.by_label()
    within = [_reading_subject(by_label[r["policy"]], readings) for r in ours.values() if r["verdict"] == "within 2 sd"]
    if within:
        return (
            f"Of the readings, {_join(within)} {'reaches' if len(within) == 1 else 'reach'} the published mean "
            "within two published standard deviations."
        )
    overlapping = [
        _reading_subject(by_label[r["policy"]], readings) for r in ours.values() if r["verdict"] == "overlaps"
    ]
    note = (
        f" ({_join(overlapping)} {'overlaps' if len(overlapping) == 1 else 'overlap'} the band, undecided at this "
        "run count)"
        if overlapping
        else ""
    )
    return (
        "No reading reaches the published mean within two published standard deviations: the remaining gap is "
        f"unexplained{note}."
    )


def _dataset_paragraph(lines: list[dict], readings: Readings) -> str:
    """About three sentences on one dataset's readings of LNUCB-TA under the reference preparation, from the numbers
    of its lines (see :func:`reproduction_text`)."""
    name = escape(display_name(lines[0]["dataset"]))
    published = next((r for r in lines if r["role"] == "published"), None)
    ours = {r["policy"]: r for r in lines if r["role"] == "ours"}
    written = ours.get(readings.readings[0].label)
    comparable = published is not None and all(r["comparable"] for r in ours.values())
    numbers = published is None or comparable
    sigma = published["std"] if comparable else None
    scale = written if written is not None or published is None or comparable else next(iter(ours.values()))
    sentences = [_opening(name, published, written, scale, comparable)]
    if written is not None:
        sentences.append(_moves(ours, readings, numbers, sigma))
    if comparable:
        sentences.append(_closing(ours, readings))
    return " ".join(sentences)


def _cell_text(r: dict, readings: Readings) -> str:
    reading = readings.by_label().get(r["policy"])
    what = _reading_subject(reading, readings) if reading is not None else escape(display_name(r["policy"]))
    return f"{what} under the {PREPARATION_NAMES.get(r['preparation'], escape(r['preparation']))} preparation"


def _fit_sentence(published: dict, cells: list[dict], readings: Readings) -> str:
    """Which cells reproduce one published row within two published standard deviations, with their means, or that
    none does (and which overlap the band, undecided)."""
    who = escape(display_name(published["policy"]))
    head = f"{who}'s published {format_number(published['mean'])} $\\pm$ {format_number(published['std'])}"
    comparable = [c for c in cells if c["comparable"]]
    if not comparable:
        return f"{head} has no cell at its horizon in this configuration."
    within = [c for c in comparable if c["verdict"] == "within 2 sd"]
    overlapping = [c for c in comparable if c["verdict"] == "overlaps"]

    def listed(group: list[dict]) -> str:
        return _join([f"{_cell_text(c, readings)} ({format_number(c['mean'])})" for c in group])

    if within:
        text = f"{head} is reproduced within two published standard deviations by {listed(within)}"
    else:
        text = f"{head} is reproduced by no cell within two published standard deviations"
    if overlapping:
        text += f"; {listed(overlapping)} {'overlaps' if len(overlapping) == 1 else 'overlap'} the band, undecided"
    outside = [c for c in comparable if c["verdict"] == "outside 2 sd"]
    if outside:
        text += f"; outside it: {listed(outside)}"
    return text + "."


def _fits_paragraph(lines: list[dict], readings: Readings) -> str:
    """Per published row of one dataset, the cells that reproduce it (:func:`_fit_sentence`)."""
    sentences = []
    for published in (r for r in lines if r["role"] == "published"):
        cells = [
            r
            for r in lines
            if r["role"] == "ours"
            and r.get("published_policy") == published["policy"]
            and (r["policy"] == published["policy"] or r["policy"] in (x.label for x in readings.readings[:2]))
        ]
        sentences.append(_fit_sentence(published, cells, readings))
    return " ".join(sentences)


VERDICT_WORDS = {"PASS": "LNUCB-TA better", "FAIL": "LNUCB-TA worse", "INCONCLUSIVE": "undecided"}


def comparison_text(comparison: list[dict]) -> str:
    """Table 2's comparison restated, one sentence per dataset: the improvement Table 2 reports (best baseline minus
    LNUCB-TA, with its interval and share of the baseline's regret), then the same comparison with both policies under
    each one preparation that ran, and with each under the preparation closest to its own published row when those
    differ, each with its 95% interval and verdict."""
    out = []
    for dataset in dict.fromkeys(r["dataset"] for r in comparison):
        rows = [r for r in comparison if r["dataset"] == dataset]
        pub = next((r for r in rows if r["side"] == "published"), None)
        if pub is None:
            continue
        name = escape(display_name(dataset))

        def amount(r: dict) -> str:
            return (
                f"{_signed(r['improvement'])} [{format_number(r['ci_low'])}, {format_number(r['ci_high'])}], "
                f"{format_number(r['relative_pct'])}\\% of {escape(display_name(r['baseline']))}'s regret, "
                f"{VERDICT_WORDS.get(r['verdict'], escape(r['verdict']))}"
            )

        text = f"On {name}, Table~2 reports LNUCB-TA's improvement over its best baseline as {amount(pub)}"
        ours = [r for r in rows if r["side"] == "ours"]
        if ours:
            both = _join(
                [
                    f"{amount(r)} under the {PREPARATION_NAMES.get(r['preparation'], escape(r['preparation']))} "
                    f"preparation ($n={r['n_runs']}$)"
                    for r in ours
                ]
            )
            missing = sorted({r["baseline"] for r in ours} - {pub["baseline"]})
            instead = (
                f" ({escape(display_name(pub['baseline']))} is not run in this configuration: the best baseline "
                f"that is, {_join([escape(display_name(b)) for b in missing])}, stands in for it)"
                if missing
                else ""
            )
            text += f"; with both policies under one preparation{instead}, it is {both}"
        else:
            text += "; no preparation of this configuration ran both at the published horizon"
        for r in (r for r in rows if r["side"] == "mixed"):
            mine, theirs = r["preparation"].split(" / ")
            text += (
                f"; with each under the preparation closest to its own published row (LNUCB-TA "
                f"{PREPARATION_NAMES.get(mine, escape(mine))}, {escape(display_name(r['baseline']))} "
                f"{PREPARATION_NAMES.get(theirs, escape(theirs))}), it is {amount(r)}"
            )
        out.append(text + ".")
    return "\n\n".join(out)


def reproduction_text(lines: list[dict], readings: Readings, comparison: list[dict] | None = None) -> str:
    """The generated text of the reproduction table, every number from its lines. Per dataset: a paragraph on
    LNUCB-TA's readings under the reference preparation (LNUCB-TA as written against the published mean; how far the
    public-code reading moves it and in which direction; which switch alone moves it most; which readings reach the
    published mean within two published standard deviations, or that none does and the gap is unexplained; rows at
    another horizon give the directions of the moves only), then, per published row, the cells (reading or policy x
    preparation) that reproduce it. Then Table 2's comparison restated (:func:`comparison_text`)."""
    head = "% Generated by `hare table --kind reproduction` from the run files; do not edit.\n"
    datasets = list(dict.fromkeys(r["dataset"] for r in lines))
    if not datasets:
        return head + "No reading of LNUCB-TA was run under the reference's rows in this configuration.\n"
    paragraphs = []
    for dataset in datasets:
        mine = [r for r in lines if r["dataset"] == dataset]
        reference = [
            r
            for r in mine
            if r.get("published_policy", "lnucb_ta") == readings.readings[0].label
            and (r["role"] == "published" or r.get("preparation", "reference") == "reference")
        ]
        text = _dataset_paragraph(reference, readings) if any(r["role"] == "ours" for r in reference) else ""
        fits = _fits_paragraph(mine, readings)
        paragraphs.append(" ".join(t for t in (text, fits) if t))
    restated = comparison_text(comparison or [])
    if restated:
        paragraphs.append("\\paragraph{Table~2's comparison, restated.} " + restated)
    return head + "\n\n".join(paragraphs) + "\n"
