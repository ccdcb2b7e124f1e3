import os
import stat
import tempfile

import numpy as np
import pytest

from hare.io import UnreadableResultError, atomic_path, config_hash, read_npz, set_written_mode, write_npz, write_text


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


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_set_written_mode_gives_a_temporary_file_the_mode_of_a_plain_write(tmp_path, umask, mode):
    fd, name = tempfile.mkstemp(dir=tmp_path)
    os.close(fd)
    assert stat.S_IMODE(os.stat(name).st_mode) == 0o600
    previous = os.umask(umask)
    try:
        set_written_mode(name)
        left = os.umask(umask)
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(name).st_mode) == mode
    assert left == umask, "the umask is left as it was"


# -- YAML files and strict sidecars (issue 28) ------------------------------------------------------------------------


def test_read_yaml_refuses_a_duplicate_key_naming_the_file_and_both_lines(tmp_path):
    from hare.io import UnreadableYAMLError, read_yaml

    path = tmp_path / "twice.yaml"
    path.write_text("a: 1\nb:\n  c: 2\n  d: 3\n  c: 4\n")
    with pytest.raises(
        UnreadableYAMLError,
        match=rf"^{path}: not valid YAML at line 5, column 3: duplicate key 'c' \(first at line 3\)$",
    ):
        read_yaml(path)


def test_read_yaml_lets_a_merge_override_the_keys_it_brings(tmp_path):
    from hare.io import read_yaml

    path = tmp_path / "merge.yaml"
    path.write_text("base: &base {a: 1, b: 2}\nderived:\n  <<: *base\n  b: 3\n")
    assert read_yaml(path) == {"base": {"a": 1, "b": 2}, "derived": {"a": 1, "b": 3}}


def test_read_yaml_names_the_file_and_offset_of_a_byte_that_is_not_utf8(tmp_path):
    from hare.io import UnreadableYAMLError, read_yaml

    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"a: 1\nb: caf\xe9\n")
    with pytest.raises(
        UnreadableYAMLError,
        match=rf"^{path}: not UTF-8 text: byte 0xe9 at byte offset 11 \(line 2\): invalid continuation byte$",
    ):
        read_yaml(path)


def test_read_yaml_names_the_file_line_and_column_of_a_syntax_error_in_one_line(tmp_path):
    import re

    from hare.io import UnreadableYAMLError, read_yaml

    path = tmp_path / "broken.yaml"
    path.write_text("a: [1, 2\nb: 3\n")
    with pytest.raises(UnreadableYAMLError) as refused:
        read_yaml(path)
    assert re.fullmatch(
        rf"{re.escape(str(path))}: not valid YAML at line \d+, column \d+: .+", str(refused.value)
    ) and "\n" not in str(refused.value)


@pytest.mark.parametrize(
    ("payload", "where"),
    [
        ({"a": 1.0, "b": [2.0, float("nan")]}, "b[1]: .nan"),
        ({"job": {"params": {"alpha": float("inf")}}}, "job.params.alpha: .inf"),
        ({"x": np.float64(-np.inf)}, "x: -.inf"),
    ],
)
def test_first_nonfinite_names_the_key_path(payload, where):
    from hare.io import first_nonfinite, yaml_number

    path, value = first_nonfinite(payload)
    assert f"{path}: {yaml_number(value)}" == where
    assert first_nonfinite({"a": [1.0, {"b": 2}], "c": "inf", "d": None}) is None


def test_a_sidecar_with_a_nonfinite_number_is_refused_before_anything_is_written(tmp_path):
    """A run's sidecar is strict JSON: ``"alpha": Infinity`` never reaches a result file, and no ``.npz`` is left
    without its sidecar."""
    import json

    from hare.io import write_json, write_result

    out = tmp_path / "run.npz"
    with pytest.raises(ValueError, match=r"run\.json: job\.params\.alpha: \.inf is not a finite number$"):
        write_result(out, {"total_regret": np.zeros(2)}, {"job": {"params": {"alpha": float("inf")}}})
    assert list(tmp_path.iterdir()) == []
    sidecar = write_result(
        out, {"total_regret": np.zeros(2)}, {"job": {"params": {"alpha": 1.0}}, "mean": np.float64(0.5)}
    )
    assert json.loads(out.with_suffix(".json").read_text()) == sidecar
    write_json(tmp_path / "loose.json", {"std": float("nan")})
    assert "NaN" in (tmp_path / "loose.json").read_text(), "other JSON files keep their NaN (an undefined statistic)"


def test_run_files_yields_run_files_with_sidecars_and_says_what_it_skips(tmp_path):
    from hare.io import run_files

    complete, orphan, other = tmp_path / "a.npz", tmp_path / "b.npz", tmp_path / "c.json"
    complete.write_bytes(b"")
    complete.with_suffix(".json").write_text('{"job": {"label": "a"}}')
    orphan.write_bytes(b"")
    other.write_text("{}")
    said = []
    found = list(run_files([other, complete, orphan, tmp_path / "missing.npz"], said.append))
    assert found == [(complete, {"job": {"label": "a"}})]
    assert said == [
        f"skipped {orphan}: no such run file or sidecar",
        f"skipped {tmp_path / 'missing.npz'}: no such run file or sidecar",
    ]


def test_read_yaml_reads_with_the_loader_it_is_given_and_keeps_its_messages(tmp_path):
    """A subclass of :class:`UniqueKeyLoader` (the config boundary's) reads the file; errors name the file as before."""
    import yaml

    from hare.io import UniqueKeyLoader, UnreadableYAMLError, read_yaml

    class UpperLoader(UniqueKeyLoader):
        pass

    UpperLoader.add_constructor("!upper", lambda loader, node: loader.construct_scalar(node).upper())
    path = tmp_path / "tagged.yaml"
    path.write_text("a: !upper word\n")
    assert read_yaml(path, UpperLoader) == {"a": "WORD"}
    with pytest.raises(yaml.constructor.ConstructorError):
        yaml.load(path.read_text(), Loader=UniqueKeyLoader)  # noqa: S506 (a SafeLoader subclass)
    with pytest.raises(UnreadableYAMLError, match=rf"^{path}: not valid YAML at line 1, column 4: "):
        read_yaml(path)
    path.write_text("a: 1\na: 2\n")
    with pytest.raises(UnreadableYAMLError, match=rf"^{path}: not valid YAML at line 2, column 1: duplicate key 'a'"):
        read_yaml(path, UpperLoader)
