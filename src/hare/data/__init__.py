"""Benchmark datasets: one registry record per dataset (files, readers, shape, display name), fetching with a
vendored fallback, preparation."""

from hare.data.errors import DataFormatError, DataIntegrityError, DatasetUnavailable
from hare.data.registry import DATASETS, DatasetShape, DatasetSpec, RemoteFile, get_dataset

__all__ = [
    "DATASETS",
    "DataFormatError",
    "DataIntegrityError",
    "DatasetShape",
    "DatasetSpec",
    "DatasetUnavailable",
    "RemoteFile",
    "get_dataset",
]
