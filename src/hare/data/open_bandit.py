"""Reader of the Open Bandit Dataset's logged feedback, pre-processed as ``obp.dataset.OpenBanditDataset`` does by
default (Saito et al., 2021, arXiv:2008.07146; zr-obp ``obp/dataset/real.py``); recorded in the dataset's
:mod:`hare.data.registry` record and written by :func:`hare.data.prepare.prepare_logged`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from hare.data.encoding import one_hot
from hare.data.errors import DataFormatError
from hare.data.parsing import csv_column, parse_numeric, read_csv

OBD_REQUIRED = ("timestamp", "item_id", "position", "click", "propensity_score")
OBD_ITEM_REQUIRED = ("item_id", "item_feature_0")


def label_encode(values: Sequence[str]) -> np.ndarray:
    """Codes of ``values`` in their sorted unique order (``sklearn`` ``LabelEncoder``)."""
    categories = np.asarray(sorted(set(values)))
    return np.searchsorted(categories, np.asarray(values)).astype(np.float64)


def parse_timestamps(values: Sequence[str], path: Path, lines: Sequence[int]) -> np.ndarray:
    out = np.empty(len(values), dtype=np.float64)
    for i, value in enumerate(values):
        try:
            out[i] = datetime.fromisoformat(value).timestamp()
        except ValueError:
            raise DataFormatError(
                f"{path}: line {lines[i]}: column 'timestamp': expected an ISO date-time, got {value!r}"
            ) from None
    return out


def read_item_features(path: Path) -> np.ndarray:
    """OBP's ``action_context``: item_id, label-encoded item_feature_1.., then item_feature_0.

    (OBP label-encodes item_id too; for ids 0..n_items-1 that is the identity.)
    Rows are ordered by item id, so row ``a`` describes action ``a``. Shape (n_items, d_item).
    """
    header, rows, lines = read_csv(path, OBD_ITEM_REQUIRED)
    item_id = parse_numeric([csv_column(header, rows, "item_id")], ["item_id"], path, lines)[:, 0]
    if sorted(item_id.tolist()) != list(range(len(rows))):
        raise DataFormatError(f"{path}: item_id must list 0..{len(rows) - 1} exactly once each")
    categorical = [c for c in header[1:] if c.startswith("item_feature_") and c != "item_feature_0"]
    feature_0 = parse_numeric([csv_column(header, rows, "item_feature_0")], ["item_feature_0"], path, lines)
    blocks = [label_encode(csv_column(header, rows, c))[:, None] for c in categorical]
    matrix = np.hstack([item_id[:, None], *blocks, feature_0])
    return matrix[np.argsort(item_id, kind="stable")]


def read_open_bandit(raw_dir: Path, campaign: str = "men") -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The logged bandit feedback of the Open Bandit Dataset ``random/<campaign>`` log, as arrays and their summary.

    Pre-processing as OBP's ``OpenBanditDataset`` (``load_raw_data`` + ``pre_process``):
    records sorted by timestamp (stable); ``contexts`` = one-hot of the ``user_feature_*``
    columns over their sorted values with the first value of each dropped
    (``pandas.get_dummies(drop_first=True)``); the ``user-item_affinity_*`` columns are not
    part of the context (as in OBP's default) but are stored as ``affinities``;
    ``positions`` = dense rank of ``position`` minus 1; ``rewards`` = ``click``;
    ``pscores`` = ``propensity_score``; ``item_features`` as :func:`read_item_features`.

    Arrays: ``contexts`` float32 (n, d), ``actions`` int64 (n,), ``positions`` int64
    (n,), ``rewards`` float32 (n,), ``pscores`` float32 (n,), ``affinities`` float32
    (n, n_items), ``item_features`` float32 (n_items, d_item), ``n_actions`` int64 scalar.
    Summary: ``campaign``, ``n_rounds``, ``dim_context``, ``n_actions``, ``dim_item``, ``n_clicks``,
    ``n_positions``.

    Raises:
        DataFormatError: a missing column, a non-numeric value where a number is expected,
            an out-of-range value or an empty file (message names file and line).
    """
    folder = Path(raw_dir) / "random" / campaign
    log_path = folder / f"{campaign}.csv"
    item_features = read_item_features(folder / "item_context.csv")
    n_actions = item_features.shape[0]

    header, rows, lines = read_csv(log_path, OBD_REQUIRED)
    user_cols = [c for c in header if c.startswith("user_feature_")]
    if not user_cols:
        raise DataFormatError(f"{log_path}: missing column(s) ['user_feature_*']")
    affinity_cols = [c for c in header if c.startswith("user-item_affinity_")]
    numeric_cols = ["item_id", "position", "click", "propensity_score", *affinity_cols]
    numbers = parse_numeric([csv_column(header, rows, c) for c in numeric_cols], numeric_cols, log_path, lines)
    check_logged(numbers[:, :4], n_actions, log_path, lines)

    times = parse_timestamps(csv_column(header, rows, "timestamp"), log_path, lines)
    order = np.argsort(times, kind="stable")
    contexts = np.hstack([one_hot(csv_column(header, rows, c), drop_first=True)[0] for c in user_cols])
    _, positions = np.unique(numbers[:, 1], return_inverse=True)
    arrays = {
        "contexts": contexts[order].astype(np.float32),
        "actions": numbers[order, 0].astype(np.int64),
        "positions": positions[order].astype(np.int64),
        "rewards": numbers[order, 2].astype(np.float32),
        "pscores": numbers[order, 3].astype(np.float32),
        "affinities": numbers[order, 4:].astype(np.float32),
        "item_features": item_features.astype(np.float32),
        "n_actions": np.asarray(n_actions, dtype=np.int64),
    }
    summary = {
        "campaign": campaign,
        "n_rounds": len(rows),
        "dim_context": int(contexts.shape[1]),
        "n_actions": int(n_actions),
        "dim_item": int(item_features.shape[1]),
        "n_clicks": int(numbers[:, 2].sum()),
        "n_positions": int(positions.max()) + 1,
    }
    return arrays, summary


def check_logged(values: np.ndarray, n_actions: int, path: Path, lines: Sequence[int]) -> None:
    """Validate columns item_id, position, click, propensity_score of a log (n, 4)."""
    checks = (
        (
            "item_id",
            (values[:, 0] >= 0) & (values[:, 0] < n_actions) & (values[:, 0] == np.round(values[:, 0])),
            f"an integer in 0..{n_actions - 1}",
        ),
        ("position", values[:, 1] == np.round(values[:, 1]), "an integer"),
        ("click", np.isin(values[:, 2], (0.0, 1.0)), "0 or 1"),
        ("propensity_score", (values[:, 3] > 0) & (values[:, 3] <= 1), "in (0, 1]"),
    )
    for j, (column, ok, expected) in enumerate(checks):
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise DataFormatError(
                f"{path}: line {lines[i]}: column {column!r}: expected {expected}, got {values[i, j]:g}"
            )
