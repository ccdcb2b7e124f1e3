import numpy as np
import pytest

from hare.io import atomic_path, config_hash, read_npz, write_npz


def test_npz_bytes_are_deterministic(tmp_path):
    arrays = {"b": np.arange(5.0), "a": np.eye(3, dtype=np.float32)}
    write_npz(tmp_path / "x.npz", **arrays)
    write_npz(tmp_path / "y.npz", **dict(reversed(list(arrays.items()))))
    assert (tmp_path / "x.npz").read_bytes() == (tmp_path / "y.npz").read_bytes()
    loaded = read_npz(tmp_path / "x.npz")
    np.testing.assert_array_equal(loaded["a"], arrays["a"])


def test_object_arrays_are_refused(tmp_path):
    with pytest.raises(TypeError, match="pickle"):
        write_npz(tmp_path / "x.npz", bad=np.array([{}, 1], dtype=object))
    assert not list(tmp_path.iterdir())


def test_failed_atomic_write_leaves_nothing(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("partial")
            raise RuntimeError("killed")
    assert not list(tmp_path.iterdir())


def test_config_hash_ignores_key_order():
    assert config_hash({"a": 1, "b": [1, 2]}) == config_hash({"b": [1, 2], "a": 1})
    assert config_hash({"a": 1}) != config_hash({"a": 2})
