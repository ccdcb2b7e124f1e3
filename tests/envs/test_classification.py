import os

import numpy as np
import torch

from hare.envs.classification import ClassificationBandit
from hare.random import run_keys


def _write(path, features, labels):
    np.savez(path, features=np.asarray(features, dtype=np.float32), labels=np.asarray(labels, dtype=np.int64))


def test_a_prepared_dataset_is_read_again_when_the_file_changes(tmp_path):
    """The jobs of a batch share one read of the dataset, but a rewritten file (new size or time) is read anew."""
    path = tmp_path / "data.npz"
    _write(path, np.eye(4)[:, :2] + 1.0, [0, 1, 0, 1])
    keys = run_keys(0, range(2), "env")
    first = ClassificationBandit.from_npz(path, 2, 3, keys)
    again = ClassificationBandit.from_npz(path, 2, 3, keys)
    assert torch.equal(first.features, again.features) and first.n_arms == 2
    _write(path, np.full((6, 3), 0.5), [0, 1, 2, 0, 1, 2])
    os.utime(path, ns=(os.stat(path).st_atime_ns, os.stat(path).st_mtime_ns + 10**9))
    changed = ClassificationBandit.from_npz(path, 2, 3, keys)
    assert changed.features.shape == (6, 3) and changed.n_arms == 3
    assert torch.equal(changed.features, torch.full((6, 3), 0.5, dtype=torch.float64))
