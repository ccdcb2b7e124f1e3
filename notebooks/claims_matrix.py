# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Claims matrices
#
# One matrix per large family of the claims register (`results/claims.json`, written by `hare claims`): rows are
# the family's baselines (or whichever bound value varies most), columns the rest of each claim's binding (dataset
# and regime, or the replay's exploration rate), the cell's colour its adjusted status and its text the measured
# value (for the comparisons, the paired difference HARE minus the baseline). The first figure is the family named
# by `family`; the second stacks every other family with more than `min_members` members, its members that ran,
# on as many pages as fit the paper's text block.
# Reads only the claims document; never re-runs a claim.

# %% tags=["parameters"]
runs: list = []
claims_json: str = "results/claims.json"
family: str = "hare_vs_baselines"
min_members: int = 12
figures: list = ["claims_matrix.pdf", "claims_matrix_families.pdf"]

# %%
import json
import math
from pathlib import Path

import matplotlib.colors as mcolors
import matplotlib.pyplot as plt
from matplotlib.patches import Patch, Rectangle

from hare.report.names import DISPLAY_NAMES
from hare.report.style import BACKGROUND_GREY, TEXT_WIDTH_IN, apply_style, figure, save, save_pages
from hare.verdicts import STATUSES, UNDECIDABLE

apply_style()
document = json.loads(Path(claims_json).read_text())
claims = document["claims"]

# %%
STATUS_COLORS = {
    "PASS": "#009E73",
    "FAIL": "#D55E00",
    "EQUIVALENT": "#56B4E9",
    "INCONCLUSIVE": BACKGROUND_GREY,
    UNDECIDABLE: "#CC79A7",
    "VACUOUS": "#F0E442",
    "NOT RUN": "#FFFFFF",
}
assert tuple(STATUS_COLORS) == STATUSES, "a colour for every status of the register"


def short(status: str) -> str:
    """A status as the legend names it: lower case, ``undecidable`` without its scale."""
    return status.lower().removesuffix(" at this scale")


ROW_VARIABLES = ("baseline", "policy")
ORDER = ("experiment", "dataset", "environment", "rate")


def status(claim: dict) -> str:
    return claim.get("adjusted_status") or claim["status"]


def name(value: str) -> str:
    return DISPLAY_NAMES.get(value, value)


def row_variable(members: list[dict]) -> str:
    """``baseline`` or ``policy`` where the bindings have it, else the variable with the most distinct values."""
    variables = {}
    for claim in members:
        for var, value in (claim.get("binding") or {}).items():
            variables.setdefault(var, set()).add(str(value))
    for var in ROW_VARIABLES:
        if var in variables:
            return var
    return max(sorted(variables), key=lambda var: len(variables[var])) if variables else ""


def row_of(claim: dict, var: str, known: list[str]) -> str:
    """The claim's row; a binding without the row variable gets the longest known row that its key names."""
    binding = claim.get("binding") or {}
    if var in binding:
        return str(binding[var])
    named = [row for row in known if f"_{row}_" in f"_{claim['key']}_"]
    return max(named, key=len) if named else "other"


def column_label(binding: dict, var: str) -> str:
    rest = {k: str(v) for k, v in binding.items() if k != var}
    lines = []
    if "environment" in rest or "dataset" in rest:
        lines.append(name(rest.get("environment", rest.get("dataset", ""))))
    if "experiment" in rest:
        lines.append("warm" if rest["experiment"].endswith("_warm") else "cold")
    if "rate" in rest:
        lines.append(rf"$\alpha={rest['rate']}$")
    lines += [f"{k} {v}" for k, v in rest.items() if k not in ("environment", "dataset", "experiment", "rate")]
    if (
        "experiment" in rest
        and rest["experiment"].startswith("replay")
        or ("rate" in rest and "environment" not in rest)
    ):
        lines.insert(0, "replay")
    return "\n".join(lines)


def column_key(binding: dict, var: str, first_seen: dict) -> tuple:
    """Columns: by experiment (regimes of one experiment side by side), then environment, then the rest."""
    experiment = str(binding.get("experiment", ""))
    base = experiment.removesuffix("_warm")
    environment = str(binding.get("environment", binding.get("dataset", "")))
    rest = tuple(str(v) for k, v in sorted(binding.items()) if k not in (var, "experiment", "environment", "dataset"))
    return (
        first_seen.setdefault(("experiment", base), len(first_seen)),
        first_seen.setdefault(("environment", environment), len(first_seen)),
        experiment.endswith("_warm"),
        rest,
    )


def cell_text(claim: dict) -> str:
    value = claim.get("measured")
    if status(claim) == "NOT RUN" or value is None or not math.isfinite(value):
        return ""
    magnitude = abs(value)
    if magnitude >= 100:
        return f"{value:.0f}"
    if magnitude >= 10:
        return f"{value:.1f}".rstrip("0").rstrip(".")
    return f"{value:.2g}" if magnitude >= 0.01 or magnitude == 0 else f"{value:.0e}".replace("e-0", "e-")


def matrix(members: list[dict]) -> tuple[list[str], list[str], dict]:
    """Row names, column labels and ``{(row, column): claim}`` of one family."""
    var = row_variable(members)
    known = sorted({str((c.get("binding") or {}).get(var)) for c in members if var in (c.get("binding") or {})})
    rows = list(dict.fromkeys(row_of(c, var, known) for c in members))
    first_seen: dict = {}
    keyed = {}
    for claim in members:
        binding = claim.get("binding") or {"claim": claim["id"]}
        keyed[(row_of(claim, var, known), column_key(binding, var, first_seen))] = (claim, column_label(binding, var))
    columns = sorted({key for _, key in keyed})
    labels = {key: label for (_, key), (_, label) in keyed.items()}
    cells = {(row, columns.index(key)): claim for (row, key), (claim, _) in keyed.items()}
    return rows, [labels[key] for key in columns], cells


def text_color(background: str) -> str:
    r, g, b = mcolors.to_rgb(background)
    return "white" if 0.299 * r + 0.587 * g + 0.114 * b < 0.5 else "black"


CROWDED = 8
"""More columns than this and the column labels stand on end (:func:`draw`), which takes more height."""


def draw(ax, members: list[dict], title: str) -> None:
    rows, columns, cells = matrix(members)
    fontsize = 6 if len(columns) <= 12 else 5
    for (row, j), claim in cells.items():
        i = rows.index(row)
        color = STATUS_COLORS[status(claim)]
        ax.add_patch(
            Rectangle(
                (j, i),
                1,
                1,
                facecolor=color,
                edgecolor="white" if color != "#FFFFFF" else BACKGROUND_GREY,
                linewidth=0.6,
            )
        )
        ax.text(
            j + 0.5, i + 0.5, cell_text(claim), ha="center", va="center", fontsize=fontsize, color=text_color(color)
        )
    ax.set_xlim(0, len(columns))
    ax.set_ylim(len(rows), 0)
    # Many columns: upright labels would run into each other, so they stand on end.
    crowded = len(columns) > CROWDED
    ax.set_xticks(
        [j + 0.5 for j in range(len(columns))],
        [column.replace("\n", " ") for column in columns] if crowded else columns,
        fontsize=6,
        rotation=90 if crowded else 0,
    )
    ax.xaxis.tick_top()
    ax.set_yticks([i + 0.5 for i in range(len(rows))], [name(row) for row in rows], fontsize=6)
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.xaxis.set_label_position("top")
    ax.set_xlabel(title, loc="left", labelpad=4)


def legend(fig, members: list[dict]) -> None:
    counts = {s: sum(status(c) == s for c in members) for s in STATUSES}
    handles = [
        Patch(
            facecolor=STATUS_COLORS[s],
            edgecolor=BACKGROUND_GREY,
            linewidth=0.5,
            label=f"{s.lower().removesuffix(' at this scale')} ({counts[s]})",
        )
        for s in STATUSES
    ]
    fig.legend(
        handles=handles, frameon=False, loc="upper center", ncol=len(STATUSES), bbox_to_anchor=(0.5, 0.0), fontsize=6
    )


def panel_height(members: list[dict]) -> float:
    rows, columns, _ = matrix(members)
    return 0.55 + 0.12 * len(rows) + (0.4 if len(columns) > CROWDED else 0.0)


families = {}
for claim in claims:
    if claim.get("family"):
        families.setdefault(claim["family"], []).append(claim)

# %%
main = families.get(family, [])
fig, axes = figure(height_in=panel_height(main) if main else 1.0)
if main:
    draw(axes[0, 0], main, f"{family.replace('_', ' ')}: {len(main)} claims")
    legend(fig, main)
else:
    axes[0, 0].axis("off")
    axes[0, 0].text(0.5, 0.5, f"no claims of family {family} in this build", ha="center", va="center")
save(fig, figures[0])

# %%
# The other large families, each drawn with the members that ran (the register lists those NOT RUN apart), split into
# pages that fit the paper's text block: the paper includes every page of the PDF.
PAGE_HEIGHT_IN = 8.3
"""The most height one page of the families figure takes (the text block is 9 in; the caption takes the rest)."""
others = {
    name_: ran
    for name_, members in families.items()
    if name_ != family and len(members) > min_members
    for ran in [[c for c in members if status(c) != "NOT RUN"]]
    if ran
}
pages: list = []
for name_, members in others.items():
    if not pages or sum(panel_height(m) for _, m in pages[-1]) + panel_height(members) > PAGE_HEIGHT_IN:
        pages.append([])
    pages[-1].append((name_, members))
figs = []
for number, page in enumerate(pages, start=1):
    heights = [panel_height(members) for _, members in page]
    fig, axes = plt.subplots(
        len(page),
        1,
        figsize=(TEXT_WIDTH_IN, sum(heights) + (0.3 if number == len(pages) else 0.0)),
        squeeze=False,
        constrained_layout=True,
        gridspec_kw={"height_ratios": heights},
    )
    for ax, (name_, members) in zip(axes[:, 0], page, strict=True):
        draw(ax, members, f"{name_.replace('_', ' ')}: {len(members)} claims that ran")
    if number == len(pages):
        legend(fig, [c for members in others.values() for c in members])
    figs.append(fig)
if not figs:
    fig, axes = figure(height_in=0.6)
    axes[0, 0].axis("off")
    axes[0, 0].text(
        0.5, 0.5, f"no other family has more than {min_members} members in this build", ha="center", va="center"
    )
    figs.append(fig)
save_pages(figs, figures[1])
print(f"{len(figs)} pages of families: " + "; ".join(", ".join(name_ for name_, _ in page) for page in pages))

# %%
for name_, members in families.items():
    counts = {s: sum(status(c) == s for c in members) for s in STATUSES}
    print(f"{name_:28s} {len(members):4d} " + " ".join(f"{s} {n}" for s, n in counts.items() if n))
