import os
import stat

import numpy as np
import pytest

from hare.io import UnreadableResultError, atomic_path, config_hash, read_npz, write_npz, write_text


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


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_written_files_follow_the_umask(tmp_path, umask, mode):
    previous = os.umask(umask)
    try:
        write_text(tmp_path / "a.txt", "x")
        write_npz(tmp_path / "a.npz", x=np.zeros(2))
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == mode
    assert stat.S_IMODE((tmp_path / "a.npz").stat().st_mode) == mode


@pytest.mark.parametrize("damage", ["truncated", "not a zip", "empty"])
def test_an_unreadable_result_file_is_named(tmp_path, damage):
    path = tmp_path / "run.npz"
    write_npz(path, total_regret=np.arange(5.0))
    data = path.read_bytes()
    path.write_bytes({"truncated": data[: len(data) // 2], "not a zip": b"hello" * 20, "empty": b""}[damage])
    with pytest.raises(UnreadableResultError, match=str(path)):
        read_npz(path)
    with pytest.raises(FileNotFoundError):
        read_npz(tmp_path / "missing.npz")


def test_recorded_versions_are_a_fresh_mapping_each_time():
    """package_versions is read once per process; a caller changing its answer changes no later sidecar."""
    from hare.io import package_versions

    first = package_versions()
    first["torch"] = "edited"
    assert package_versions()["torch"] != "edited" and "python" in package_versions()
