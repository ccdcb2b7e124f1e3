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
PROTOCOLS = ("project", "reference")
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


# --------------------------------------------------------------------------- reference protocol
# Readers of the ``reference`` protocol (NeuralTS reference implementation, OpenML versions).
# Each returns features (n, d) float64 before row normalisation, labels (n,) and class names.


def _adult_reference(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """Adult as OpenML adult v2: ``adult.data`` then ``adult.test``, 32,561 + 16,281 = 48,842 rows.

    Steps and sources:
      1. rows: every row of both UCI files (OpenML adult v2 is their union, 48,842 rows); the
         first line of ``adult.test`` (``|1x3 Cross validator``) is not data; no row is
         dropped for a missing value (unlike the project protocol).
      2. labels: the test file's labels end with a dot (``<=50K.``), removed; arms ``<=50K``
         / ``>50K`` (the reference's ``OrdinalEncoder`` over the class strings, sorted).
      3. the 6 numeric attributes: raw values, no standardisation (reference); a ``?`` would
         read as -1.
      4. the 8 nominal attributes: :func:`ordinal_codes`, one column each (the reference's
         OpenML codes; sorted order here, ARFF-declared order there), missing ``?``
         (workclass, occupation, native-country) -> -1 (reference: NaN -> -1).
      5. columns in the file's attribute order (14 columns); row L2 normalisation follows in
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
    columns = [
        numbers[:, ADULT_NUMERIC.index(name)] if name in ADULT_NUMERIC else ordinal_codes([r[j] for r in rows])[0]
        for j, name in enumerate(ADULT_COLUMNS[:-1])
    ]
    return np.column_stack(columns), np.concatenate(labels), classes


def _mushroom_reference(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """Mushroom as OpenML mushroom v1: 8,124 rows, 22 nominal attributes as ordinal codes.

    Steps and sources:
      1. rows: every row of ``agaricus-lepiota.data`` (OpenML mushroom v1 holds the same 8,124).
      2. labels: first field, arms ``e`` / ``p`` (sorted class strings, as the reference).
      3. each of the 22 attributes: :func:`ordinal_codes` (the reference's OpenML codes; sorted
         order here, ARFF-declared order there), missing stalk-root ``?`` (2,480 rows) -> -1
         (reference: NaN -> -1), not a category of its own as in the project protocol.
      4. columns in the file's attribute order (22 columns); row L2 normalisation follows in
         :func:`prepare_classification`.
    """
    path = raw_dir / "agaricus-lepiota.data"
    rows, lines = _records(path, lambda t: t.split(","), MUSHROOM_ATTRIBUTES + 1)
    codes = [ordinal_codes([r[j] for r in rows])[0] for j in range(1, MUSHROOM_ATTRIBUTES + 1)]
    classes = ("e", "p")
    return np.column_stack(codes), _labels([r[0] for r in rows], classes, path, lines), classes


def _magic_reference(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """MAGIC as OpenML MagicTelescope v1: 19,020 rows, the 10 numeric attributes raw.

    Steps and sources: every row of ``magic04.data`` (OpenML keeps the same rows; its row-id
    column is not a feature); the 10 attributes as read, no standardisation (reference); arms
    ``g`` / ``h``; row L2 normalisation follows in :func:`prepare_classification`.
    """
    return _magic_raw(raw_dir)


def _shuttle_reference(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """Shuttle as OpenML shuttle v1: the 58,000 rows of ``shuttle.trn`` then ``shuttle.tst``.

    Steps and sources: both UCI files (OpenML shuttle v1 is their union); the 9 numeric
    attributes as read, no standardisation (reference); arms classes 1 to 7; row L2
    normalisation follows in :func:`prepare_classification`.
    """
    return _shuttle_raw(raw_dir)


def _mnist_reference(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """MNIST: the 10,000 test images only; OpenML mnist_784 v1 has 70,000 (train + test).

    Steps and sources: the 784 pixels as OpenML serves them (0..255), no scaling (the row L2
    normalisation in :func:`prepare_classification` removes any common scale anyway, so only
    the row set differs from the reference); arms digits 0 to 9. The training images are not
    in our data, hence the smaller row set.
    """
    return _mnist_raw(raw_dir)


def _covertype_reference(raw_dir: Path) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """Covertype as OpenML covertype v3: 581,012 rows, all 54 attributes raw.

    Steps and sources: every row of ``covtype.data``; the 10 numeric and 44 binary (0/1)
    attributes as read, no standardisation (reference); arms cover types 1 to 7; row L2
    normalisation follows in :func:`prepare_classification`.
    """
    return _covertype_raw(raw_dir)


REFERENCE_READERS = {
    "adult": _adult_reference,
    "mushroom": _mushroom_reference,
    "magic": _magic_reference,
    "shuttle": _shuttle_reference,
    "mnist": _mnist_reference,
    "covertype": _covertype_reference,
}


def _check_protocol(protocol: str) -> str:
    """Return ``protocol`` if it is one of :data:`PROTOCOLS`; otherwise a ValueError naming it."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol: unknown preparation protocol {protocol!r}; valid: {', '.join(PROTOCOLS)}")
    return protocol


def prepare_classification(name: str, raw_dir: Path, out_path: Path, protocol: str = "project") -> dict:
    """Write the bandit arrays of classification dataset ``name`` to ``out_path`` (.npz).

    ``protocol`` is ``"project"`` (default: one-hot nominal, standardised numeric attributes)
    or ``"reference"`` (the NeuralTS reference implementation: ordinal codes, missing -> -1,
    raw numeric attributes); both L2-normalise every row. See the module docstring.

    Arrays: ``features`` float32 (n, d) with unit-L2-norm rows, ``labels`` int64 (n,) in
    ``0..K-1`` and ``class_names`` unicode (K,); the reference protocol adds ``protocol``
    (0-d unicode, ``"reference"``). Returns a summary with ``n_rows``, ``dim``, ``n_classes``
    and ``class_counts`` (list of K ints), plus ``protocol`` under the reference protocol.

    Raises:
        KeyError: ``name`` is not a classification dataset.
        ValueError: ``protocol`` is not one of :data:`PROTOCOLS`.
        DataFormatError: a raw file is missing or malformed (message names file and line).
    """
    readers = {"project": CLASSIFICATION_READERS, "reference": REFERENCE_READERS}[_check_protocol(protocol)]
    if name not in readers:
        raise KeyError(f"no classification reader for {name!r}; valid names: {', '.join(sorted(readers))}")
    features, labels, classes = readers[name](Path(raw_dir))
    features = l2_normalise(features, f"{name} features").astype(np.float32)
    class_names = np.asarray(classes, dtype=np.str_)
    arrays = {"features": features, "labels": labels, "class_names": class_names}
    if protocol != "project":
        arrays["protocol"] = np.asarray(protocol, dtype=np.str_)
    write_npz(Path(out_path), **arrays)
    summary = {
        "name": name,
        "n_rows": int(features.shape[0]),
        "dim": int(features.shape[1]),
        "n_classes": len(classes),
        "class_counts": np.bincount(labels, minlength=len(classes)).tolist(),
    }
    if protocol != "project":
        summary["protocol"] = protocol
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
