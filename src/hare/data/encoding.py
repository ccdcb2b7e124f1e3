"""The preparations of a classification dataset: how a table as read becomes features before the unit rows.

The ``project`` protocol (:data:`DEFAULT_PREPARATION`) is this project's rows, nominal attributes one-hot and numeric
ones standardised; its readers return features directly. The reference's rows (:class:`RawTable`) are encoded under
one of :data:`PREPARATIONS` by :func:`encode`: nominal attributes as ordinal codes or one-hot, numeric ones raw,
standardised or min-max scaled. Every preparation ends in unit rows (:func:`l2_normalise`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from hare.data.errors import DataFormatError
from hare.data.parsing import MISSING, MISSING_CODE, parse_numeric

DEFAULT_PREPARATION = "project"


def preparation_of(environment: dict) -> str:
    """The preparation protocol of an environment entry (config or job specification); default ``project``."""
    return environment.get("preparation", DEFAULT_PREPARATION)


def one_hot(column: Sequence[str], drop_first: bool = False) -> tuple[np.ndarray, list[str]]:
    """One-hot encode a categorical column over its observed values, sorted.

    Returns the (n, n_values) float64 indicator matrix (one column fewer with
    ``drop_first``, as ``pandas.get_dummies(drop_first=True)``) and the category list.
    """
    categories = sorted(set(column))
    codes = np.searchsorted(np.asarray(categories), np.asarray(column))
    matrix = np.zeros((len(column), len(categories)), dtype=np.float64)
    matrix[np.arange(len(column)), codes] = 1.0
    if drop_first:
        matrix = matrix[:, 1:]
    return matrix, categories


def ordinal_codes(column: Sequence[str], missing: str = MISSING) -> tuple[np.ndarray, list[str]]:
    """Ordinal codes of a nominal column (n,): the index of each value among the sorted values.

    The categories are the distinct observed values other than ``missing``, sorted as strings;
    a ``missing`` cell gets :data:`MISSING_CODE` (-1), as the NeuralTS reference implementation
    sets OpenML's NaN to -1. OpenML codes a nominal attribute in the order its ARFF header
    declares the values, which the UCI files do not carry: this sorted order is where our codes
    may differ from the reference's. Returns the float64 codes (n,) and the category list.
    """
    categories = sorted(set(column) - {missing})
    index = {value: float(k) for k, value in enumerate(categories)}
    codes = np.asarray([index.get(value, MISSING_CODE) for value in column], dtype=np.float64)
    return codes, categories


def numeric_or_missing(
    columns: Sequence[Sequence[str]], names: Sequence[str], path: Path, lines: Sequence[int]
) -> np.ndarray:
    """Numeric columns as float64 (n, len(columns)), each ``?`` cell read as -1 (OpenML NaN -> -1)."""
    cleaned = [[str(MISSING_CODE) if value == MISSING else value for value in col] for col in columns]
    return parse_numeric(cleaned, names, path, lines)


def standardise(x: np.ndarray) -> np.ndarray:
    """Z-score each column of ``x`` (n, d) with the population std; constant columns become 0."""
    std = x.std(axis=0)
    return (x - x.mean(axis=0)) / np.where(std > 0, std, 1.0)


def l2_normalise(x: np.ndarray, what: str) -> np.ndarray:
    """Scale each row of ``x`` (n, d) to unit L2 norm; a zero row is a format error."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    if (norms == 0).any():
        row = int(np.flatnonzero(norms[:, 0] == 0)[0])
        raise DataFormatError(f"{what}: row {row} has an all-zero feature vector")
    return x / norms


class RawTable(NamedTuple):
    """A dataset as read, before encoding: ``blocks`` in file order, each ``(kind, values)`` with kind ``numeric``
    (float64 (n, p), scaled by the preparation), ``nominal`` (one column of n strings, encoded by the preparation) or
    ``indicator`` (float64 (n, p) of 0/1, kept as read); ``labels`` int64 (n,) in ``0..K-1``; ``classes`` the K
    names."""

    blocks: list[tuple[str, Any]]
    labels: np.ndarray
    classes: tuple[str, ...]


class Preparation(NamedTuple):
    """How a preparation turns a :class:`RawTable` into features before the unit rows: ``nominal`` ``ordinal`` (one
    column of :func:`ordinal_codes`, missing -> -1) or ``onehot`` (:func:`one_hot` over the observed values, a missing
    ``?`` a category of its own, as one-hot coding after the reference's NaN -> -1 does); ``numeric`` ``raw``,
    ``standardised`` (:func:`standardise`) or ``minmax`` (:func:`min_max`), each column over every row of the set."""

    nominal: str
    numeric: str


PREPARATIONS = {
    "reference": Preparation("ordinal", "raw"),
    "onehot": Preparation("onehot", "raw"),
    "standardised": Preparation("ordinal", "standardised"),
    "minmax": Preparation("ordinal", "minmax"),
    "onehot_standardised": Preparation("onehot", "standardised"),
    "onehot_minmax": Preparation("onehot", "minmax"),
}
"""The preparations of the reference row set: the reference one, each departure from it alone (nominal attributes
one-hot; numeric attributes standardised; numeric attributes min-max scaled) and the two encodings combined with each
scaling. A preparation changes nothing on a dataset without attributes of the kind it changes (``onehot`` on MAGIC is
``reference``; ``standardised`` and ``minmax`` on Mushroom are ``reference``). Every one ends in unit rows."""
PROTOCOLS = (DEFAULT_PREPARATION, *PREPARATIONS)
PREPARATION_TEXT = {
    "project": "this project's rows, nominal attributes one-hot, numeric attributes standardised, unit rows",
    "reference": "the reference's rows, nominal attributes as ordinal codes, numeric attributes raw, unit rows",
    "onehot": "the reference's rows, nominal attributes one-hot, numeric attributes raw, unit rows",
    "standardised": "the reference's rows, nominal attributes as ordinal codes, numeric attributes standardised, "
    "unit rows",
    "minmax": "the reference's rows, nominal attributes as ordinal codes, numeric attributes min-max scaled to [0, 1], "
    "unit rows",
    "onehot_standardised": "the reference's rows, nominal attributes one-hot, numeric attributes standardised, "
    "unit rows",
    "onehot_minmax": "the reference's rows, nominal attributes one-hot, numeric attributes min-max scaled to [0, 1], "
    "unit rows",
}
"""Each preparation in words: the provenance a prepared file's summary carries."""


def min_max(x: np.ndarray) -> np.ndarray:
    """Scale each column of ``x`` (n, d) to [0, 1]: ``(x - min) / (max - min)``; constant columns become 0."""
    low = x.min(axis=0)
    span = x.max(axis=0) - low
    return (x - low) / np.where(span > 0, span, 1.0)


SCALINGS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "raw": lambda x: np.asarray(x, dtype=np.float64),
    "standardised": standardise,
    "minmax": min_max,
}


def encode(table: RawTable, preparation: str) -> np.ndarray:
    """The features of ``table`` under ``preparation`` (:data:`PREPARATIONS`), float64 (n, d), blocks in file order,
    before the unit rows: ``d`` = numeric and indicator columns + one per nominal attribute (ordinal) or one per
    observed value of each nominal attribute (one-hot)."""
    how = PREPARATIONS[preparation]
    parts = []
    for kind, values in table.blocks:
        if kind == "numeric":
            parts.append(SCALINGS[how.numeric](values))
        elif kind == "indicator":
            parts.append(np.asarray(values, dtype=np.float64))
        elif how.nominal == "onehot":
            parts.append(one_hot(values)[0])
        else:
            parts.append(ordinal_codes(values)[0][:, None])
    return np.hstack(parts)


def check_protocol(protocol: str) -> str:
    """Return ``protocol`` if it is one of :data:`PROTOCOLS`; otherwise a ValueError naming it."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol: unknown preparation protocol {protocol!r}; valid: {', '.join(PROTOCOLS)}")
    return protocol
