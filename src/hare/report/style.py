"""The paper's matplotlib style: one look and one colour per method across all figures.

Vector PDF with embedded TrueType (Type 42) fonts, sizes for the paper's text width,
the Okabe–Ito colour-blind-safe palette, and byte-reproducible files (no creation
date; ``SOURCE_DATE_EPOCH`` is honoured by matplotlib's PDF backend).
"""

from __future__ import annotations

import hashlib
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
    "hare_oracle": "#D55E00",
    "hare_random": "#E69F00",
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


def color_for(method: str) -> str:
    """The method's colour; methods without a fixed colour get a stable palette entry from their name."""
    base = method.split("@")[0]
    if base in METHOD_COLORS:
        return METHOD_COLORS[base]
    return OKABE_ITO[int(hashlib.sha256(base.encode()).hexdigest(), 16) % len(OKABE_ITO)]


def apply_style() -> None:
    plt.rcParams.update({
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
    })


def figure(n_cols: int = 1, height_in: float = 2.2, width_fraction: float = 1.0, n_rows: int = 1):
    """A figure of ``n_rows x n_cols`` panels spanning ``width_fraction`` of the text width."""
    return plt.subplots(n_rows, n_cols, figsize=(TEXT_WIDTH_IN * width_fraction, height_in), squeeze=False, constrained_layout=True)


def save(fig, path: str | Path) -> None:
    """Save as PDF without timestamps (reproducible bytes)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, metadata={"CreationDate": None, "ModDate": None, "Creator": "hare", "Producer": "matplotlib"})
    plt.close(fig)
