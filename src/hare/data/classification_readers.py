"""Readers of the classification datasets, one pair per dataset (recorded in its :mod:`hare.data.registry` record).

The project reader (``read_<name>``) returns this project's rows as features ``(n, d)``, labels ``(n,)`` int64 in
``0..K-1`` and the ``K`` class names: nominal attributes one-hot, numeric ones standardised (the ``project``
protocol, :mod:`hare.data.encoding`). The reference reader (``read_<name>_reference``) returns the reference's rows
(the NeuralTS reference implementation's OpenML versions) as a :class:`~hare.data.encoding.RawTable`, attributes as
read; :func:`hare.data.encoding.encode` applies a preparation. The unit rows follow in
:func:`hare.data.prepare.prepare_classification`. A reference reader reuses its project reader's raw form
(``read_<name>_raw``) where the two read the same rows.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from hare.data.encoding import RawTable, numeric_or_missing, one_hot, standardise
from hare.data.errors import DataFormatError
from hare.data.parsing import parse_labels, parse_numeric, read_records

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


def read_adult(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """UCI Adult, ``adult.data`` only (32,561 rows; ``adult.test`` is not used).

    Rows with a missing value (``?``) are dropped (2,399 rows), leaving 30,162. The 6 numeric
    attributes are standardised; the 8 categorical ones are one-hot encoded over the values
    observed in the kept rows. Arms: income ``<=50K`` / ``>50K``.
    """
    path = raw_dir / "adult.data"
    rows, lines = read_records(path, lambda t: [f.strip() for f in t.split(",")], len(ADULT_COLUMNS))
    kept = [(r, n) for r, n in zip(rows, lines, strict=True) if "?" not in r]
    rows, lines = [r for r, _ in kept], [n for _, n in kept]
    cols = {name: [r[j] for r in rows] for j, name in enumerate(ADULT_COLUMNS)}
    numeric = standardise(parse_numeric([cols[c] for c in ADULT_NUMERIC], ADULT_NUMERIC, path, lines))
    categorical = [one_hot(cols[c])[0] for c in ADULT_COLUMNS[:-1] if c not in ADULT_NUMERIC]
    classes = ("<=50K", ">50K")
    labels = parse_labels(cols["income"], classes, path, lines)
    return np.hstack([numeric, *categorical]), labels, classes


def read_mushroom(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """UCI Mushroom: all 22 attributes one-hot over their observed values.

    ``?`` (missing stalk-root) is kept as a category of its own. Arms: ``e`` / ``p``.
    """
    path = raw_dir / "agaricus-lepiota.data"
    rows, lines = read_records(path, lambda t: t.split(","), MUSHROOM_ATTRIBUTES + 1)
    blocks = [one_hot([r[j] for r in rows])[0] for j in range(1, MUSHROOM_ATTRIBUTES + 1)]
    classes = ("e", "p")
    return np.hstack(blocks), parse_labels([r[0] for r in rows], classes, path, lines), classes


def read_magic_raw(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """UCI MAGIC Gamma Telescope as read: 10 numeric attributes (n, 10), raw. Arms: ``g`` / ``h``."""
    path = raw_dir / "magic04.data"
    rows, lines = read_records(path, lambda t: t.split(","), 11)
    names = [f"attribute {j + 1}" for j in range(10)]
    x = parse_numeric([[r[j] for r in rows] for j in range(10)], names, path, lines)
    classes = ("g", "h")
    return x, parse_labels([r[10] for r in rows], classes, path, lines), classes


def read_magic(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """UCI MAGIC Gamma Telescope: 10 numeric attributes, standardised. Arms: ``g`` / ``h``."""
    x, labels, classes = read_magic_raw(raw_dir)
    return standardise(x), labels, classes


def read_shuttle_raw(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """UCI Statlog (Shuttle) as read: ``shuttle.trn`` then ``shuttle.tst`` (43,500 + 14,500 rows).

    9 numeric attributes (n, 9), raw. Arms: classes 1 to 7.
    """
    classes = tuple(str(k) for k in range(1, 8))
    xs, ys = [], []
    for path in (raw_dir / "shuttle.trn.Z", raw_dir / "shuttle.tst"):
        rows, lines = read_records(path, str.split, 10)
        names = [f"attribute {j + 1}" for j in range(9)]
        xs.append(parse_numeric([[r[j] for r in rows] for j in range(9)], names, path, lines))
        ys.append(parse_labels([r[9] for r in rows], classes, path, lines))
    return np.vstack(xs), np.concatenate(ys), classes


def read_shuttle(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """UCI Statlog (Shuttle): ``shuttle.trn`` then ``shuttle.tst`` (43,500 + 14,500 rows).

    9 numeric attributes, standardised over the 58,000 rows. Arms: classes 1 to 7.
    """
    x, labels, classes = read_shuttle_raw(raw_dir)
    return standardise(x), labels, classes


def read_idx(path: Path, magic: int, ndim: int) -> np.ndarray:
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


def read_mnist_raw(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """MNIST test set as read: 10,000 images flattened to 784 pixels in 0..255 (float64). Arms: digits."""
    images = read_idx(raw_dir / "t10k-images-idx3-ubyte.gz", 2051, 3)
    labels = read_idx(raw_dir / "t10k-labels-idx1-ubyte.gz", 2049, 1)
    if len(images) != len(labels):
        raise DataFormatError(f"{raw_dir}: {len(images)} MNIST images but {len(labels)} labels")
    if labels.max() > 9:
        raise DataFormatError(f"{raw_dir / 't10k-labels-idx1-ubyte.gz'}: label above 9")
    x = images.reshape(len(images), -1).astype(np.float64)
    return x, labels.astype(np.int64), tuple(str(k) for k in range(10))


def read_mnist(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """MNIST test set: 10,000 images flattened to 784 pixels scaled to [0, 1]. Arms: digits."""
    x, labels, classes = read_mnist_raw(raw_dir)
    return x / 255.0, labels, classes


def read_covertype_raw(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """UCI Covertype as read: 10 numeric then 44 binary attributes (n, 54), raw. Arms: 1 to 7."""
    path = raw_dir / "covtype.data.gz"
    width = COVERTYPE_NUMERIC + COVERTYPE_BINARY
    rows, lines = read_records(path, lambda t: t.split(","), width + 1)
    names = [f"attribute {j + 1}" for j in range(width)]
    x = parse_numeric([[r[j] for r in rows] for j in range(width)], names, path, lines)
    classes = tuple(str(k) for k in range(1, 8))
    return x, parse_labels([r[width] for r in rows], classes, path, lines), classes


def read_covertype(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """UCI Covertype: 10 numeric attributes standardised, 44 binary ones kept. Arms: 1 to 7."""
    x, labels, classes = read_covertype_raw(raw_dir)
    x[:, :COVERTYPE_NUMERIC] = standardise(x[:, :COVERTYPE_NUMERIC])
    return x, labels, classes


# --------------------------------------------------------------------------- reference row sets


def read_adult_reference(raw_dir: Path) -> RawTable:
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
         :func:`hare.data.prepare.prepare_classification`.
    """
    classes = ("<=50K", ">50K")
    numeric, nominal, labels = [], [], []
    for path in (raw_dir / "adult.data", raw_dir / "adult.test"):
        rows, lines = read_records(
            path, lambda t: [f.strip() for f in t.split(",")], len(ADULT_COLUMNS), skip=lambda t: t.startswith("|")
        )
        cols = {name: [r[j] for r in rows] for j, name in enumerate(ADULT_COLUMNS)}
        numeric.append(numeric_or_missing([cols[c] for c in ADULT_NUMERIC], ADULT_NUMERIC, path, lines))
        nominal.append(rows)
        income = cols["income"]
        if path.name == "adult.test":
            income = [value.removesuffix(".") for value in income]
        labels.append(parse_labels(income, classes, path, lines))
    numbers = np.vstack(numeric)  # (n, 6)
    rows = [r for part in nominal for r in part]
    blocks: list[tuple[str, Any]] = [
        ("numeric", numbers[:, [ADULT_NUMERIC.index(name)]])
        if name in ADULT_NUMERIC
        else ("nominal", [r[j] for r in rows])
        for j, name in enumerate(ADULT_COLUMNS[:-1])
    ]
    return RawTable(blocks, np.concatenate(labels), classes)


def read_mushroom_reference(raw_dir: Path) -> RawTable:
    """Mushroom as OpenML mushroom v1: 8,124 rows, 22 nominal attributes.

    Steps and sources:
      1. rows: every row of ``agaricus-lepiota.data`` (OpenML mushroom v1 holds the same 8,124).
      2. labels: first field, arms ``e`` / ``p`` (sorted class strings, as the reference).
      3. each of the 22 attributes: strings as read, the preparation encodes them (the reference:
         :func:`ordinal_codes`, sorted order here, ARFF-declared order there; missing stalk-root
         ``?`` (2,480 rows) -> -1, as the reference's NaN -> -1).
      4. attributes in the file's order (22); row L2 normalisation follows in
         :func:`hare.data.prepare.prepare_classification`.
    """
    path = raw_dir / "agaricus-lepiota.data"
    rows, lines = read_records(path, lambda t: t.split(","), MUSHROOM_ATTRIBUTES + 1)
    blocks: list[tuple[str, Any]] = [("nominal", [r[j] for r in rows]) for j in range(1, MUSHROOM_ATTRIBUTES + 1)]
    classes = ("e", "p")
    return RawTable(blocks, parse_labels([r[0] for r in rows], classes, path, lines), classes)


def numeric_reference(reader: Callable[[Path], tuple[np.ndarray, np.ndarray, tuple[str, ...]]]) -> Callable:
    def read(raw_dir: Path) -> RawTable:
        x, labels, classes = reader(raw_dir)
        return RawTable([("numeric", x)], labels, classes)

    read.__doc__ = reader.__doc__
    return read


read_magic_reference = numeric_reference(read_magic_raw)
"""MAGIC as OpenML MagicTelescope v1: every row of ``magic04.data`` (OpenML keeps the same 19,020 rows; its row-id
column is not a feature), the 10 numeric attributes as read; arms ``g`` / ``h``."""
read_shuttle_reference = numeric_reference(read_shuttle_raw)
"""Shuttle as OpenML shuttle v1: both UCI files (their union, 58,000 rows), the 9 numeric attributes as read."""
read_mnist_reference = numeric_reference(read_mnist_raw)
"""MNIST: the 10,000 test images only (OpenML mnist_784 v1 has the 70,000 of both sets), 784 pixels in 0..255 as
OpenML serves them (the row L2 normalisation removes any common scale, so under the reference preparation only the row
set differs from the reference); arms digits 0 to 9."""


def read_covertype_reference(raw_dir: Path) -> RawTable:
    """Covertype as OpenML covertype v3: 581,012 rows; the 10 numeric attributes (scaled by the preparation) and the
    44 binary ones (wilderness area, soil type: already one-hot, kept as read); arms cover types 1 to 7."""
    x, labels, classes = read_covertype_raw(raw_dir)
    return RawTable([("numeric", x[:, :COVERTYPE_NUMERIC]), ("indicator", x[:, COVERTYPE_NUMERIC:])], labels, classes)
