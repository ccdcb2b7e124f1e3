"""Benchmark datasets: registry of pinned files, fetching with a vendored fallback, preparation."""

from hare.data.errors import DataFormatError, DataIntegrityError, DatasetUnavailable
from hare.data.registry import DATASETS, DatasetSpec, RemoteFile, get_dataset

__all__ = [
    "DATASETS",
    "DataFormatError",
    "DataIntegrityError",
    "DatasetSpec",
    "DatasetUnavailable",
    "RemoteFile",
    "get_dataset",
]
