"""The paper's matplotlib style: one look and one colour per method across all figures.

Vector PDF with embedded TrueType (Type 42) fonts, sizes for the paper's text width,
the Okabe–Ito colour-blind-safe palette, and byte-reproducible files (no creation
date; ``SOURCE_DATE_EPOCH`` is honoured by matplotlib's PDF backend).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TEXT_WIDTH_IN = 6.5
OKABE_ITO = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]
METHOD_COLORS = {
    "random": "#7F7F7F",
    "linucb": "#0072B2",
    "hare": "#D55E00",
    "hare_oracle": "#E69F00",
    "hare_random": "#AA4499",
    "lin_ts": "#56B4E9",
    "ucb1": "#F0E442",
    "eps_greedy": "#999933",
    "neural_ucb": "#009E73",
    "lnucb_ta": "#CC79A7",
    "rag_cosine": "#000000",
    # Beyond Okabe-Ito's eight: Paul Tol's muted scheme, also colour-blind safe.
    "knn_ucb": "#882255",
    "lin_knn_ucb": "#44AA99",
    "eps_greedy_enhanced": "#DDCC77",
}
HIGHLIGHT_PALETTE = [
    "#0072B2",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#000000",
    "#882255",
    "#44AA99",
    "#999933",
    "#AA4499",
    "#117733",
    "#332288",
    "#661100",
    "#6699CC",
    "#994F00",
    "#E69F00",
    "#D55E00",
]
"""Colours for lines that must stand apart on white (Okabe-Ito and Tol's muted scheme without their pale yellows and
cyan), oranges last: they are HARE's, so baselines take them only when every other colour is used."""
BACKGROUND_GREY = "#C8C8C8"
"""Colour of the policies a figure draws without a legend entry (behind the highlighted ones)."""


def color_for(method: str) -> str:
    """The method's colour; methods without a fixed colour get a stable palette entry from their name."""
    base = method.split("@")[0]
    if base in METHOD_COLORS:
        return METHOD_COLORS[base]
    return OKABE_ITO[int(hashlib.sha256(base.encode()).hexdigest(), 16) % len(OKABE_ITO)]


def is_hare_variant(label: str, policy: str | None = None) -> bool:
    """Whether a config label is HARE or one of its variants (its registered policy is ``hare``, or its name says
    so)."""
    base = label.split("@")[0]
    return policy == "hare" or base == "hare" or base.startswith("hare_")


def highlighted_policies(
    mean_regret: Mapping[str, float], policies: Mapping[str, str] | None = None, n_best: int = 3
) -> list[str]:
    """The labels a regret figure draws in colour: every HARE variant, LinUCB and the ``n_best`` baselines of lowest
    mean total regret (HARE variants excluded from that count); HARE first, then LinUCB, then by mean regret.

    ``mean_regret`` maps a label to its mean total regret; ``policies`` maps a label to its registered policy.
    """
    policies = policies or {}
    hare = sorted(
        (label for label in mean_regret if is_hare_variant(label, policies.get(label))),
        key=lambda label: mean_regret[label],
    )
    baselines = sorted(
        (label for label in mean_regret if label not in hare), key=lambda label: (mean_regret[label], label)
    )
    linucb = [label for label in baselines if policies.get(label, label.split("@")[0]) == "linucb"]
    best = [label for label in baselines[:n_best] if label not in linucb]
    return hare + linucb + best


def distinct_colors(labels: Iterable[str]) -> dict[str, str]:
    """One colour per label, no two alike while the palette lasts: first each label's fixed colour (from
    :data:`METHOD_COLORS`, in label order, where an earlier label has not taken it), then the first free entry of
    :data:`HIGHLIGHT_PALETTE` for the others (put the important labels first)."""
    labels = list(dict.fromkeys(labels))
    colors: dict[str, str] = {}
    for label in labels:
        fixed = METHOD_COLORS.get(label.split("@")[0])
        if fixed in HIGHLIGHT_PALETTE and fixed not in colors.values():
            colors[label] = fixed
    for label in labels:
        if label not in colors:
            free = [c for c in HIGHLIGHT_PALETTE if c not in colors.values()]
            colors[label] = free[0] if free else color_for(label)
    return {label: colors[label] for label in labels}


def apply_style() -> None:
    plt.rcParams.update(
        {
            "pdf.fonttype": 42,
            "ps.fonttype": 42,
            "font.family": "serif",
            "font.size": 8,
            "axes.titlesize": 8,
            "axes.labelsize": 8,
            "legend.fontsize": 7,
            "xtick.labelsize": 7,
            "ytick.labelsize": 7,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "lines.linewidth": 1.2,
            "figure.dpi": 150,
            "savefig.bbox": "tight",
            "savefig.pad_inches": 0.02,
        }
    )


def figure(n_cols: int = 1, height_in: float = 2.2, width_fraction: float = 1.0, n_rows: int = 1):
    """A figure of ``n_rows x n_cols`` panels spanning ``width_fraction`` of the text width."""
    return plt.subplots(
        n_rows, n_cols, figsize=(TEXT_WIDTH_IN * width_fraction, height_in), squeeze=False, constrained_layout=True
    )


PDF_METADATA = {"CreationDate": None, "ModDate": None, "Creator": "hare", "Producer": "matplotlib"}
"""No timestamps in a saved PDF: reproducible bytes."""


def save(fig, path: str | Path) -> None:
    """Save as PDF without timestamps (reproducible bytes)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, metadata=PDF_METADATA)
    plt.close(fig)


def save_pages(figs: list, path: str | Path) -> None:
    """Save figures as the pages of one PDF, in order, without timestamps (a figure too tall for one page of the paper,
    which includes every page)."""
    from matplotlib.backends.backend_pdf import PdfPages

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with PdfPages(path, metadata=PDF_METADATA) as pdf:
        for fig in figs:
            pdf.savefig(fig)
            plt.close(fig)
