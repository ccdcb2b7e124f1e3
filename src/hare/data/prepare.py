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

The package by concern: :mod:`hare.data.parsing` (raw files), :mod:`hare.data.encoding` (the preparations),
:mod:`hare.data.classification_readers` and :mod:`hare.data.open_bandit` (one reader per dataset, recorded in its
:mod:`hare.data.registry` record); this module writes the prepared files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hare.data.encoding import (
    DEFAULT_PREPARATION,
    PREPARATION_TEXT,
    PREPARATIONS,
    PROTOCOLS,
    check_protocol,
    encode,
    l2_normalise,
    preparation_of,
)
from hare.data.registry import DATASETS, get_dataset
from hare.io import write_npz

__all__ = [
    "DEFAULT_PREPARATION",
    "PREPARATIONS",
    "PREPARATION_TEXT",
    "PROTOCOLS",
    "encode",
    "prepare_classification",
    "prepare_dataset",
    "prepare_logged",
    "preparation_of",
]

CLASSIFICATION = tuple(sorted(name for name, spec in DATASETS.items() if spec.kind == "classification"))
"""The classification datasets, sorted: the ones :func:`prepare_classification` reads."""


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
    check_protocol(protocol)
    if name not in CLASSIFICATION:
        raise KeyError(f"no classification reader for {name!r}; valid names: {', '.join(CLASSIFICATION)}")
    spec = DATASETS[name]
    if protocol == DEFAULT_PREPARATION:
        features, labels, classes = spec.reader(Path(raw_dir))
    else:
        table = spec.reference_reader(Path(raw_dir))
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


def prepare_logged(name: str, raw_dir: Path, out_path: Path, campaign: str = "men") -> dict:
    """Write the logged bandit feedback of logged-feedback dataset ``name`` (the Open Bandit Dataset's
    ``random/<campaign>`` log) as its record's reader returns it (:func:`hare.data.open_bandit.read_open_bandit`:
    the arrays, OBP's pre-processing), and return its summary with ``name`` first.

    Raises:
        KeyError: ``name`` is not a logged-feedback dataset.
        DataFormatError: a missing column, a non-numeric value where a number is expected,
            an out-of-range value or an empty file (message names file and line).
    """
    spec = get_dataset(name)
    if spec.kind != "logged":
        raise KeyError(f"{name!r} is not a logged-feedback dataset")
    arrays, summary = spec.reader(Path(raw_dir), campaign)
    write_npz(Path(out_path), **arrays)
    return {"name": name, **summary}


def prepare_dataset(name: str, raw_dir: Path, out_path: Path, protocol: str = "project") -> dict:
    """Prepare dataset ``name`` according to its registry ``kind``; return the summary.

    ``protocol`` selects the classification preparation (:data:`PROTOCOLS`); logged-feedback
    datasets have only the ``project`` one (OBP's), so ``reference`` is refused for them.
    """
    check_protocol(protocol)
    spec = get_dataset(name)
    if spec.kind == "logged":
        if protocol != "project":
            raise ValueError(
                f"protocol: {protocol!r} applies to classification datasets only; {name!r} is a logged-feedback dataset"
            )
        return prepare_logged(name, raw_dir, out_path)
    return prepare_classification(name, raw_dir, out_path, protocol)
