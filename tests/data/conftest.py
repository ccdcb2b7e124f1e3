from pathlib import Path

import pytest

from hare.data.fetch import fetch_dataset

OFFLINE_DATASETS = ("adult", "mushroom", "magic", "shuttle", "mnist", "open_bandit")


@pytest.fixture(scope="session")
def raw_dir(tmp_path_factory) -> Path:
    """All mirrored datasets fetched once, offline, into a session temp folder."""
    root = tmp_path_factory.mktemp("raw")
    for name in OFFLINE_DATASETS:
        fetch_dataset(name, root, offline=True)
    return root
