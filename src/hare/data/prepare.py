"""Turn raw dataset files into the arrays the bandit benchmarks consume.

Classification datasets follow the protocol of NeuralTS (Zhang et al., 2021, "Neural
Thompson Sampling", ICLR) that LNUCB-TA (§5.1) adopts: every class is an arm, categorical
attributes are one-hot encoded and every context row is L2-normalised to unit norm. In
addition, numeric attributes are standardised (zero mean, unit variance over all rows,
``ddof=0``) before normalisation so that no attribute dominates the norm by its unit alone.
Row order is the order of the raw files; shuffling is the benchmark's job (seeded per run).
This is the ``project`` protocol, the default.

The ``reference`` protocol (:data:`PROTOCOLS`) follows instead the NeuralTS reference
implementation behind LNUCB-TA's Table 2, which loads the OpenML versions of the datasets
(mushroom v1, adult v2, MagicTelescope v1, shuttle v1, mnist_784 v1, covertype v3): nominal
attributes stay ordinal codes (not one-hot), missing values (NaN there, ``?`` in the UCI files)
become -1, numeric attributes are kept raw (no standardisation) and every row is L2-normalised.
We read the UCI files of the same data, so the ordinal codes follow the sorted order of the
observed values rather than the order an OpenML ARFF header declares (see
:func:`ordinal_codes`), and MNIST is the 10,000-image test set only (OpenML mnist_784 has
the 70,000 images of both sets).

The reference's rows can also be prepared under each departure from its encoding
(:data:`PREPARATIONS`): nominal attributes one-hot instead of ordinal codes, numeric attributes
standardised or min-max scaled instead of raw, and their combinations; every one ends in unit rows.
A reader of the reference's rows returns the attributes as read (:class:`RawTable`);
:func:`encode` applies the preparation. The protocol name travels in the prepared file
(``protocol``) and its summary, so a job reads the file of its environment's preparation.

The Open Bandit Dataset is pre-processed as ``obp.dataset.OpenBanditDataset`` does by
default (Saito et al., 2021, arXiv:2008.07146; zr-obp ``obp/dataset/real.py``).

Outputs are ``.npz`` archives without pickled objects, written atomically and byte for
byte reproducibly (fixed zip timestamps, fixed member order).

Length: one module because the readers of both classification protocols and of the Open Bandit Dataset share
private parsing helpers (:func:`_records`, :func:`_numeric`, :func:`_labels`, :func:`one_hot`) whose
:class:`DataFormatError` messages name file and line, the reference readers reuse the project readers' raw
forms (``_magic_raw``, ``_shuttle_raw``, ...), and :func:`prepare_dataset` dispatches among all of them; split
by dataset kind, those private helpers would become a cross-module interface.
"""

from __future__ import annotations

import csv
import gzip
import io
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from hare.data.errors import DataFormatError
from hare.data.lzw import LZWError
from hare.data.lzw import decompress as lzw_decompress
from hare.data.registry import get_dataset
from hare.io import write_npz

ADULT_COLUMNS = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
)
ADULT_NUMERIC = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")
MUSHROOM_ATTRIBUTES = 22
COVERTYPE_NUMERIC = 10
COVERTYPE_BINARY = 44
OBD_REQUIRED = ("timestamp", "item_id", "position", "click", "propensity_score")
OBD_ITEM_REQUIRED = ("item_id", "item_feature_0")
DEFAULT_PREPARATION = "project"


def preparation_of(environment: dict) -> str:
    """The preparation protocol of an environment entry (config or job specification); default ``project``."""
    return environment.get("preparation", DEFAULT_PREPARATION)


MISSING = "?"
MISSING_CODE = -1.0


# --------------------------------------------------------------------------- reading


def _open_text(path: Path) -> io.TextIOBase:
    if not path.is_file():
        raise DataFormatError(f"{path}: file not found")
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
    if path.suffix == ".Z":
        try:
            raw = lzw_decompress(path.read_bytes())
        except LZWError as exc:
            raise DataFormatError(f"{path}: {exc}") from None
        return io.StringIO(raw.decode("utf-8"), newline="")
    return open(path, encoding="utf-8", newline="")


def _records(
    path: Path, split: Callable[[str], list[str]], n_fields: int, skip: Callable[[str], bool] = lambda line: False
) -> tuple[list[list[str]], list[int]]:
    """Split every non-blank line of ``path`` into exactly ``n_fields`` fields.

    Returns the rows and their 1-based line numbers.
    """
    rows, lines = [], []
    with _open_text(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            text = line.strip()
            if not text or skip(text):
                continue
            fields = split(text)
            if len(fields) != n_fields:
                raise DataFormatError(f"{path}: line {lineno}: expected {n_fields} fields, got {len(fields)}")
            rows.append(fields)
            lines.append(lineno)
    if not rows:
        raise DataFormatError(f"{path}: file is empty (no data rows)")
    return rows, lines


def _numeric(columns: Sequence[Sequence[str]], names: Sequence[str], path: Path, lines: Sequence[int]) -> np.ndarray:
    """Parse string columns into a float64 matrix (n, len(columns)); name the bad cell."""
    out = np.empty((len(lines), len(columns)), dtype=np.float64)
    for j, (col, name) in enumerate(zip(columns, names, strict=True)):
        try:
            out[:, j] = np.asarray(col, dtype=np.float64)
        except ValueError:
            for i, value in enumerate(col):
                try:
                    float(value)
                except ValueError:
                    raise DataFormatError(
                        f"{path}: line {lines[i]}: column {name!r}: expected a number, got {value!r}"
                    ) from None
            raise
    if not np.isfinite(out).all():
        i = int(np.argwhere(~np.isfinite(out))[0, 0])
        raise DataFormatError(f"{path}: line {lines[i]}: non-finite number")
    return out


def _labels(values: Sequence[str], class_names: Sequence[str], path: Path, lines: Sequence[int]) -> np.ndarray:
    index = {name: k for k, name in enumerate(class_names)}
    out = np.empty(len(values), dtype=np.int64)
    for i, value in enumerate(values):
        if value not in index:
            raise DataFormatError(
                f"{path}: line {lines[i]}: unknown class label {value!r}; expected one of {list(class_names)}"
            )
        out[i] = index[value]
    return out


# --------------------------------------------------------------------------- transforms


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
    return _numeric(cleaned, names, path, lines)


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


# --------------------------------------------------------------------------- classification


def _adult(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """UCI Adult, ``adult.data`` only (32,561 rows; ``adult.test`` is not used).

    Rows with a missing value (``?``) are dropped (2,399 rows), leaving 30,162. The 6 numeric
    attributes are standardised; the 8 categorical ones are one-hot encoded over the values
    observed in the kept rows. Arms: income ``<=50K`` / ``>50K``.
    """
    path = raw_dir / "adult.data"
    rows, lines = _records(path, lambda t: [f.strip() for f in t.split(",")], len(ADULT_COLUMNS))
    kept = [(r, n) for r, n in zip(rows, lines, strict=True) if "?" not in r]
    rows, lines = [r for r, _ in kept], [n for _, n in kept]
    cols = {name: [r[j] for r in rows] for j, name in enumerate(ADULT_COLUMNS)}
    numeric = standardise(_numeric([cols[c] for c in ADULT_NUMERIC], ADULT_NUMERIC, path, lines))
    categorical = [one_hot(cols[c])[0] for c in ADULT_COLUMNS[:-1] if c not in ADULT_NUMERIC]
    classes = ("<=50K", ">50K")
    labels = _labels(cols["income"], classes, path, lines)
    return np.hstack([numeric, *categorical]), labels, classes


def _mushroom(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """UCI Mushroom: all 22 attributes one-hot over their observed values.

    ``?`` (missing stalk-root) is kept as a category of its own. Arms: ``e`` / ``p``.
    """
    path = raw_dir / "agaricus-lepiota.data"
    rows, lines = _records(path, lambda t: t.split(","), MUSHROOM_ATTRIBUTES + 1)
    blocks = [one_hot([r[j] for r in rows])[0] for j in range(1, MUSHROOM_ATTRIBUTES + 1)]
    classes = ("e", "p")
    return np.hstack(blocks), _labels([r[0] for r in rows], classes, path, lines), classes


def _magic_raw(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """UCI MAGIC Gamma Telescope as read: 10 numeric attributes (n, 10), raw. Arms: ``g`` / ``h``."""
    path = raw_dir / "magic04.data"
    rows, lines = _records(path, lambda t: t.split(","), 11)
    names = [f"attribute {j + 1}" for j in range(10)]
    x = _numeric([[r[j] for r in rows] for j in range(10)], names, path, lines)
    classes = ("g", "h")
    return x, _labels([r[10] for r in rows], classes, path, lines), classes


def _magic(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """UCI MAGIC Gamma Telescope: 10 numeric attributes, standardised. Arms: ``g`` / ``h``."""
    x, labels, classes = _magic_raw(raw_dir)
    return standardise(x), labels, classes


def _shuttle_raw(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """UCI Statlog (Shuttle) as read: ``shuttle.trn`` then ``shuttle.tst`` (43,500 + 14,500 rows).

    9 numeric attributes (n, 9), raw. Arms: classes 1 to 7.
    """
    classes = tuple(str(k) for k in range(1, 8))
    xs, ys = [], []
    for path in (raw_dir / "shuttle.trn.Z", raw_dir / "shuttle.tst"):
        rows, lines = _records(path, str.split, 10)
        names = [f"attribute {j + 1}" for j in range(9)]
        xs.append(_numeric([[r[j] for r in rows] for j in range(9)], names, path, lines))
        ys.append(_labels([r[9] for r in rows], classes, path, lines))
    return np.vstack(xs), np.concatenate(ys), classes


def _shuttle(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """UCI Statlog (Shuttle): ``shuttle.trn`` then ``shuttle.tst`` (43,500 + 14,500 rows).

    9 numeric attributes, standardised over the 58,000 rows. Arms: classes 1 to 7.
    """
    x, labels, classes = _shuttle_raw(raw_dir)
    return standardise(x), labels, classes


def _read_idx(path: Path, magic: int, ndim: int) -> np.ndarray:
    if not path.is_file():
        raise DataFormatError(f"{path}: file not found")
    try:
        data = gzip.decompress(path.read_bytes())
    except (OSError, EOFError) as exc:
        raise DataFormatError(f"{path}: not a valid gzip file ({exc})") from None
    header = 4 + 4 * ndim
    if len(data) < header or int.from_bytes(data[:4], "big") != magic:
        raise DataFormatError(f"{path}: not an IDX file with magic number {magic}")
    shape = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    if len(data) != header + int(np.prod(shape)):
        raise DataFormatError(
            f"{path}: expected {header + int(np.prod(shape))} bytes for shape {shape}, got {len(data)}"
        )
    return np.frombuffer(data, dtype=np.uint8, offset=header).reshape(shape)


def _mnist_raw(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """MNIST test set as read: 10,000 images flattened to 784 pixels in 0..255 (float64). Arms: digits."""
    images = _read_idx(raw_dir / "t10k-images-idx3-ubyte.gz", 2051, 3)
    labels = _read_idx(raw_dir / "t10k-labels-idx1-ubyte.gz", 2049, 1)
    if len(images) != len(labels):
        raise DataFormatError(f"{raw_dir}: {len(images)} MNIST images but {len(labels)} labels")
    if labels.max() > 9:
        raise DataFormatError(f"{raw_dir / 't10k-labels-idx1-ubyte.gz'}: label above 9")
    x = images.reshape(len(images), -1).astype(np.float64)
    return x, labels.astype(np.int64), tuple(str(k) for k in range(10))


def _mnist(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """MNIST test set: 10,000 images flattened to 784 pixels scaled to [0, 1]. Arms: digits."""
    x, labels, classes = _mnist_raw(raw_dir)
    return x / 255.0, labels, classes


def _covertype_raw(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """UCI Covertype as read: 10 numeric then 44 binary attributes (n, 54), raw. Arms: 1 to 7."""
    path = raw_dir / "covtype.data.gz"
    width = COVERTYPE_NUMERIC + COVERTYPE_BINARY
    rows, lines = _records(path, lambda t: t.split(","), width + 1)
    names = [f"attribute {j + 1}" for j in range(width)]
    x = _numeric([[r[j] for r in rows] for j in range(width)], names, path, lines)
    classes = tuple(str(k) for k in range(1, 8))
    return x, _labels([r[width] for r in rows], classes, path, lines), classes


def _covertype(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """UCI Covertype: 10 numeric attributes standardised, 44 binary ones kept. Arms: 1 to 7."""
    x, labels, classes = _covertype_raw(raw_dir)
    x[:, :COVERTYPE_NUMERIC] = standardise(x[:, :COVERTYPE_NUMERIC])
    return x, labels, classes


CLASSIFICATION_READERS = {
    "adult": _adult,
    "mushroom": _mushroom,
    "magic": _magic,
    "shuttle": _shuttle,
    "mnist": _mnist,
    "covertype": _covertype,
}


# --------------------------------------------------------------------------- reference row sets
# Readers of the reference row set (NeuralTS reference implementation, OpenML versions). Each returns a RawTable: the
# attributes in file order, not yet encoded or scaled; :func:`encode` turns it into features under one preparation.


class RawTable(NamedTuple):
    """A dataset as read, before encoding: ``blocks`` in file order, each ``(kind, values)`` with kind ``numeric``
    (float64 (n, p), scaled by the preparation), ``nominal`` (one column of n strings, encoded by the preparation) or
    ``indicator`` (float64 (n, p) of 0/1, kept as read); ``labels`` int64 (n,) in ``0..K-1``; ``classes`` the K
    names."""

    blocks: list[tuple[str, Any]]
    labels: np.ndarray
    classes: tuple[str, ...]


def _adult_reference(raw_dir: Path) -> RawTable:
    """Adult as OpenML adult v2: ``adult.data`` then ``adult.test``, 32,561 + 16,281 = 48,842 rows.

    Steps and sources:
      1. rows: every row of both UCI files (OpenML adult v2 is their union, 48,842 rows); the
         first line of ``adult.test`` (``|1x3 Cross validator``) is not data; no row is
         dropped for a missing value (unlike the project protocol).
      2. labels: the test file's labels end with a dot (``<=50K.``), removed; arms ``<=50K``
         / ``>50K`` (the reference's ``OrdinalEncoder`` over the class strings, sorted).
      3. the 6 numeric attributes: numbers as read (a ``?`` would read as -1); the preparation
         scales them (the reference keeps them raw).
      4. the 8 nominal attributes: strings as read, missing ``?`` (workclass, occupation,
         native-country) kept; the preparation encodes them (the reference: :func:`ordinal_codes`,
         ``?`` -> -1).
      5. attributes in the file's order (14); row L2 normalisation follows in
         :func:`prepare_classification`.
    """
    classes = ("<=50K", ">50K")
    numeric, nominal, labels = [], [], []
    for path in (raw_dir / "adult.data", raw_dir / "adult.test"):
        rows, lines = _records(
            path, lambda t: [f.strip() for f in t.split(",")], len(ADULT_COLUMNS), skip=lambda t: t.startswith("|")
        )
        cols = {name: [r[j] for r in rows] for j, name in enumerate(ADULT_COLUMNS)}
        numeric.append(numeric_or_missing([cols[c] for c in ADULT_NUMERIC], ADULT_NUMERIC, path, lines))
        nominal.append(rows)
        income = cols["income"]
        if path.name == "adult.test":
            income = [value.removesuffix(".") for value in income]
        labels.append(_labels(income, classes, path, lines))
    numbers = np.vstack(numeric)  # (n, 6)
    rows = [r for part in nominal for r in part]
    blocks: list[tuple[str, Any]] = [
        ("numeric", numbers[:, [ADULT_NUMERIC.index(name)]])
        if name in ADULT_NUMERIC
        else ("nominal", [r[j] for r in rows])
        for j, name in enumerate(ADULT_COLUMNS[:-1])
    ]
    return RawTable(blocks, np.concatenate(labels), classes)


def _mushroom_reference(raw_dir: Path) -> RawTable:
    """Mushroom as OpenML mushroom v1: 8,124 rows, 22 nominal attributes.

    Steps and sources:
      1. rows: every row of ``agaricus-lepiota.data`` (OpenML mushroom v1 holds the same 8,124).
      2. labels: first field, arms ``e`` / ``p`` (sorted class strings, as the reference).
      3. each of the 22 attributes: strings as read, the preparation encodes them (the reference:
         :func:`ordinal_codes`, sorted order here, ARFF-declared order there; missing stalk-root
         ``?`` (2,480 rows) -> -1, as the reference's NaN -> -1).
      4. attributes in the file's order (22); row L2 normalisation follows in
         :func:`prepare_classification`.
    """
    path = raw_dir / "agaricus-lepiota.data"
    rows, lines = _records(path, lambda t: t.split(","), MUSHROOM_ATTRIBUTES + 1)
    blocks: list[tuple[str, Any]] = [("nominal", [r[j] for r in rows]) for j in range(1, MUSHROOM_ATTRIBUTES + 1)]
    classes = ("e", "p")
    return RawTable(blocks, _labels([r[0] for r in rows], classes, path, lines), classes)


def _numeric_reference(reader: Callable[[Path], tuple[np.ndarray, np.ndarray, tuple[str, ...]]]) -> Callable:
    def read(raw_dir: Path) -> RawTable:
        x, labels, classes = reader(raw_dir)
        return RawTable([("numeric", x)], labels, classes)

    read.__doc__ = reader.__doc__
    return read


_magic_reference = _numeric_reference(_magic_raw)
"""MAGIC as OpenML MagicTelescope v1: every row of ``magic04.data`` (OpenML keeps the same 19,020 rows; its row-id
column is not a feature), the 10 numeric attributes as read; arms ``g`` / ``h``."""
_shuttle_reference = _numeric_reference(_shuttle_raw)
"""Shuttle as OpenML shuttle v1: both UCI files (their union, 58,000 rows), the 9 numeric attributes as read."""
_mnist_reference = _numeric_reference(_mnist_raw)
"""MNIST: the 10,000 test images only (OpenML mnist_784 v1 has the 70,000 of both sets), 784 pixels in 0..255 as
OpenML serves them (the row L2 normalisation removes any common scale, so under the reference preparation only the row
set differs from the reference); arms digits 0 to 9."""


def _covertype_reference(raw_dir: Path) -> RawTable:
    """Covertype as OpenML covertype v3: 581,012 rows; the 10 numeric attributes (scaled by the preparation) and the
    44 binary ones (wilderness area, soil type: already one-hot, kept as read); arms cover types 1 to 7."""
    x, labels, classes = _covertype_raw(raw_dir)
    return RawTable([("numeric", x[:, :COVERTYPE_NUMERIC]), ("indicator", x[:, COVERTYPE_NUMERIC:])], labels, classes)


REFERENCE_READERS = {
    "adult": _adult_reference,
    "mushroom": _mushroom_reference,
    "magic": _magic_reference,
    "shuttle": _shuttle_reference,
    "mnist": _mnist_reference,
    "covertype": _covertype_reference,
}


# --------------------------------------------------------------------------- preparations


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


def _check_protocol(protocol: str) -> str:
    """Return ``protocol`` if it is one of :data:`PROTOCOLS`; otherwise a ValueError naming it."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol: unknown preparation protocol {protocol!r}; valid: {', '.join(PROTOCOLS)}")
    return protocol


def prepare_classification(name: str, raw_dir: Path, out_path: Path, protocol: str = "project") -> dict:
    """Write the bandit arrays of classification dataset ``name`` to ``out_path`` (.npz).

    ``protocol`` is ``"project"`` (default: this project's rows, one-hot nominal, standardised numeric attributes) or
    one of :data:`PREPARATIONS` (the reference's rows, encoded and scaled as it names: ``"reference"`` is the
    NeuralTS reference implementation's ordinal codes, missing -> -1, raw numeric attributes); every one
    L2-normalises every row. See the module docstring.

    Arrays: ``features`` float32 (n, d) with unit-L2-norm rows, ``labels`` int64 (n,) in ``0..K-1`` and
    ``class_names`` unicode (K,); every preparation but the project's adds ``protocol`` (0-d unicode, its name).
    Returns a summary with ``n_rows``, ``dim``, ``n_classes`` and ``class_counts`` (list of K ints), plus, but under
    the project protocol, ``protocol`` (the name) and ``preparation`` (:data:`PREPARATION_TEXT`): the provenance.

    Raises:
        KeyError: ``name`` is not a classification dataset.
        ValueError: ``protocol`` is not one of :data:`PROTOCOLS`.
        DataFormatError: a raw file is missing or malformed (message names file and line).
    """
    readers = CLASSIFICATION_READERS if _check_protocol(protocol) == DEFAULT_PREPARATION else REFERENCE_READERS
    if name not in readers:
        raise KeyError(f"no classification reader for {name!r}; valid names: {', '.join(sorted(readers))}")
    if protocol == DEFAULT_PREPARATION:
        features, labels, classes = readers[name](Path(raw_dir))
    else:
        table = readers[name](Path(raw_dir))
        features, labels, classes = encode(table, protocol), table.labels, table.classes
    features = l2_normalise(features, f"{name} features").astype(np.float32)
    class_names = np.asarray(classes, dtype=np.str_)
    arrays = {"features": features, "labels": labels, "class_names": class_names}
    if protocol != DEFAULT_PREPARATION:
        arrays["protocol"] = np.asarray(protocol, dtype=np.str_)
    write_npz(Path(out_path), **arrays)
    summary = {
        "name": name,
        "n_rows": int(features.shape[0]),
        "dim": int(features.shape[1]),
        "n_classes": len(classes),
        "class_counts": np.bincount(labels, minlength=len(classes)).tolist(),
    }
    if protocol != DEFAULT_PREPARATION:
        summary["protocol"] = protocol
        summary["preparation"] = PREPARATION_TEXT[protocol]
    return summary


# --------------------------------------------------------------------------- logged feedback


def _read_csv(path: Path, required: Sequence[str]) -> tuple[list[str], list[list[str]], list[int]]:
    """Header, rows and 1-based line numbers of a CSV file; check columns and row widths."""
    with _open_text(path) as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None:
            raise DataFormatError(f"{path}: file is empty")
        missing = [c for c in required if c not in header]
        if missing:
            raise DataFormatError(f"{path}: missing column(s) {missing}")
        rows, lines = [], []
        for row in reader:
            if not row:
                continue
            if len(row) != len(header):
                raise DataFormatError(f"{path}: line {reader.line_num}: expected {len(header)} fields, got {len(row)}")
            rows.append(row)
            lines.append(reader.line_num)
    if not rows:
        raise DataFormatError(f"{path}: file has a header but no data rows")
    return header, rows, lines


def _column(header: list[str], rows: list[list[str]], name: str) -> list[str]:
    j = header.index(name)
    return [r[j] for r in rows]


def _label_encode(values: Sequence[str]) -> np.ndarray:
    """Codes of ``values`` in their sorted unique order (``sklearn`` ``LabelEncoder``)."""
    categories = np.asarray(sorted(set(values)))
    return np.searchsorted(categories, np.asarray(values)).astype(np.float64)


def _timestamps(values: Sequence[str], path: Path, lines: Sequence[int]) -> np.ndarray:
    out = np.empty(len(values), dtype=np.float64)
    for i, value in enumerate(values):
        try:
            out[i] = datetime.fromisoformat(value).timestamp()
        except ValueError:
            raise DataFormatError(
                f"{path}: line {lines[i]}: column 'timestamp': expected an ISO date-time, got {value!r}"
            ) from None
    return out


def _item_features(path: Path) -> np.ndarray:
    """OBP's ``action_context``: item_id, label-encoded item_feature_1.., then item_feature_0.

    (OBP label-encodes item_id too; for ids 0..n_items-1 that is the identity.)
    Rows are ordered by item id, so row ``a`` describes action ``a``. Shape (n_items, d_item).
    """
    header, rows, lines = _read_csv(path, OBD_ITEM_REQUIRED)
    item_id = _numeric([_column(header, rows, "item_id")], ["item_id"], path, lines)[:, 0]
    if sorted(item_id.tolist()) != list(range(len(rows))):
        raise DataFormatError(f"{path}: item_id must list 0..{len(rows) - 1} exactly once each")
    categorical = [c for c in header[1:] if c.startswith("item_feature_") and c != "item_feature_0"]
    feature_0 = _numeric([_column(header, rows, "item_feature_0")], ["item_feature_0"], path, lines)
    blocks = [_label_encode(_column(header, rows, c))[:, None] for c in categorical]
    matrix = np.hstack([item_id[:, None], *blocks, feature_0])
    return matrix[np.argsort(item_id, kind="stable")]


def prepare_logged(name: str, raw_dir: Path, out_path: Path, campaign: str = "men") -> dict:
    """Write the logged bandit feedback of the Open Bandit Dataset ``random/<campaign>`` log.

    Pre-processing as OBP's ``OpenBanditDataset`` (``load_raw_data`` + ``pre_process``):
    records sorted by timestamp (stable); ``contexts`` = one-hot of the ``user_feature_*``
    columns over their sorted values with the first value of each dropped
    (``pandas.get_dummies(drop_first=True)``); the ``user-item_affinity_*`` columns are not
    part of the context (as in OBP's default) but are stored as ``affinities``;
    ``positions`` = dense rank of ``position`` minus 1; ``rewards`` = ``click``;
    ``pscores`` = ``propensity_score``; ``item_features`` as :func:`_item_features`.

    Arrays written: ``contexts`` float32 (n, d), ``actions`` int64 (n,), ``positions`` int64
    (n,), ``rewards`` float32 (n,), ``pscores`` float32 (n,), ``affinities`` float32
    (n, n_items), ``item_features`` float32 (n_items, d_item), ``n_actions`` int64 scalar.

    Raises:
        DataFormatError: a missing column, a non-numeric value where a number is expected,
            an out-of-range value or an empty file (message names file and line).
    """
    spec = get_dataset(name)
    if spec.kind != "logged":
        raise KeyError(f"{name!r} is not a logged-feedback dataset")
    folder = Path(raw_dir) / "random" / campaign
    log_path = folder / f"{campaign}.csv"
    item_features = _item_features(folder / "item_context.csv")
    n_actions = item_features.shape[0]

    header, rows, lines = _read_csv(log_path, OBD_REQUIRED)
    user_cols = [c for c in header if c.startswith("user_feature_")]
    if not user_cols:
        raise DataFormatError(f"{log_path}: missing column(s) ['user_feature_*']")
    affinity_cols = [c for c in header if c.startswith("user-item_affinity_")]
    numeric_cols = ["item_id", "position", "click", "propensity_score", *affinity_cols]
    numbers = _numeric([_column(header, rows, c) for c in numeric_cols], numeric_cols, log_path, lines)
    _check_logged(numbers[:, :4], n_actions, log_path, lines)

    times = _timestamps(_column(header, rows, "timestamp"), log_path, lines)
    order = np.argsort(times, kind="stable")
    contexts = np.hstack([one_hot(_column(header, rows, c), drop_first=True)[0] for c in user_cols])
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
    write_npz(Path(out_path), **arrays)
    return {
        "name": name,
        "campaign": campaign,
        "n_rounds": len(rows),
        "dim_context": int(contexts.shape[1]),
        "n_actions": int(n_actions),
        "dim_item": int(item_features.shape[1]),
        "n_clicks": int(numbers[:, 2].sum()),
        "n_positions": int(positions.max()) + 1,
    }


def _check_logged(values: np.ndarray, n_actions: int, path: Path, lines: Sequence[int]) -> None:
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


# --------------------------------------------------------------------------- output


def prepare_dataset(name: str, raw_dir: Path, out_path: Path, protocol: str = "project") -> dict:
    """Prepare dataset ``name`` according to its registry ``kind``; return the summary.

    ``protocol`` selects the classification preparation (:data:`PROTOCOLS`); logged-feedback
    datasets have only the ``project`` one (OBP's), so ``reference`` is refused for them.
    """
    _check_protocol(protocol)
    spec = get_dataset(name)
    if spec.kind == "logged":
        if protocol != "project":
            raise ValueError(
                f"protocol: {protocol!r} applies to classification datasets only; {name!r} is a logged-feedback dataset"
            )
        return prepare_logged(name, raw_dir, out_path)
    return prepare_classification(name, raw_dir, out_path, protocol)
