"""Parsing of raw dataset files, shared by every reader: text files (plain, gzip, Unix ``compress``), records of a
fixed number of fields, numeric columns, class labels and CSV files. Every :class:`DataFormatError` names the file
and the line.
"""

from __future__ import annotations

import csv
import gzip
import io
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from hare.data.errors import DataFormatError
from hare.data.lzw import LZWError
from hare.data.lzw import decompress as lzw_decompress

MISSING = "?"
MISSING_CODE = -1.0


def open_text(path: Path) -> io.TextIOBase:
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


def read_records(
    path: Path, split: Callable[[str], list[str]], n_fields: int, skip: Callable[[str], bool] = lambda line: False
) -> tuple[list[list[str]], list[int]]:
    """Split every non-blank line of ``path`` into exactly ``n_fields`` fields.

    Returns the rows and their 1-based line numbers.
    """
    rows, lines = [], []
    with open_text(path) as fh:
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


def parse_numeric(
    columns: Sequence[Sequence[str]], names: Sequence[str], path: Path, lines: Sequence[int]
) -> np.ndarray:
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


def parse_labels(values: Sequence[str], class_names: Sequence[str], path: Path, lines: Sequence[int]) -> np.ndarray:
    index = {name: k for k, name in enumerate(class_names)}
    out = np.empty(len(values), dtype=np.int64)
    for i, value in enumerate(values):
        if value not in index:
            raise DataFormatError(
                f"{path}: line {lines[i]}: unknown class label {value!r}; expected one of {list(class_names)}"
            )
        out[i] = index[value]
    return out


def read_csv(path: Path, required: Sequence[str]) -> tuple[list[str], list[list[str]], list[int]]:
    """Header, rows and 1-based line numbers of a CSV file; check columns and row widths."""
    with open_text(path) as fh:
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


def csv_column(header: list[str], rows: list[list[str]], name: str) -> list[str]:
    j = header.index(name)
    return [r[j] for r in rows]
