import gzip
import hashlib
from pathlib import Path

import numpy as np
import pytest

from hare.data.errors import DataFormatError
from hare.data.lzw import LZWError, decompress
from hare.data.prepare import (
    PREPARATION_TEXT,
    PREPARATIONS,
    PROTOCOLS,
    prepare_classification,
    prepare_dataset,
    prepare_logged,
)

MIRROR = Path(__file__).resolve().parents[2] / "src" / "hare" / "data" / "mirror"

ADULT_CATEGORICAL = (1, 3, 5, 6, 7, 8, 9, 13)


def _adult_width(raw_dir: Path) -> int:
    rows = [
        [f.strip() for f in line.split(",")]
        for line in (raw_dir / "adult.data").read_text().splitlines()
        if line.strip()
    ]
    rows = [r for r in rows if "?" not in r]
    return 6 + sum(len({r[j] for r in rows}) for j in ADULT_CATEGORICAL)


def _mushroom_width(raw_dir: Path) -> int:
    rows = [line.split(",") for line in (raw_dir / "agaricus-lepiota.data").read_text().split()]
    return sum(len({r[j] for r in rows}) for j in range(1, 23))


EXPECTED = {
    "adult": (30162, 104, [22654, 7508], ["<=50K", ">50K"]),
    "mushroom": (8124, 117, [4208, 3916], ["e", "p"]),
    "magic": (19020, 10, [12332, 6688], ["g", "h"]),
    "shuttle": (58000, 9, [45586, 50, 171, 8903, 3267, 10, 13], [str(k) for k in range(1, 8)]),
    "mnist": (10000, 784, [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009], [str(k) for k in range(10)]),
}


@pytest.fixture(scope="module")
def prepared(raw_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("prepared")
    return {
        name: (prepare_dataset(name, raw_dir, out / f"{name}.npz"), out / f"{name}.npz")
        for name in (*EXPECTED, "open_bandit")
    }


def test_one_hot_widths_follow_the_attribute_values(raw_dir):
    assert _mushroom_width(raw_dir) == 117
    assert _adult_width(raw_dir) == 104


@pytest.mark.parametrize("name", list(EXPECTED))
def test_classification_arrays(prepared, name):
    n, d, counts, classes = EXPECTED[name]
    summary, path = prepared[name]
    assert summary == {"name": name, "n_rows": n, "dim": d, "n_classes": len(counts), "class_counts": counts}
    with np.load(path) as z:
        assert sorted(z.files) == ["class_names", "features", "labels"]
        x, y, names = z["features"], z["labels"], z["class_names"]
    assert x.shape == (n, d) and x.dtype == np.float32
    assert y.shape == (n,) and y.dtype == np.int64
    assert names.dtype.kind == "U" and names.tolist() == classes
    assert y.min() == 0 and y.max() == len(counts) - 1
    assert np.bincount(y).tolist() == counts
    assert np.abs(np.linalg.norm(x.astype(np.float64), axis=1) - 1).max() < 1e-5


def test_mushroom_rows_are_pure_one_hot(prepared):
    with np.load(prepared["mushroom"][1]) as z:
        x = z["features"]
    assert np.allclose(np.unique(x), [0.0, 1 / np.sqrt(22)])


def test_mnist_first_row_matches_raw_pixels(prepared, raw_dir):
    raw = gzip.decompress((raw_dir / "t10k-images-idx3-ubyte.gz").read_bytes())
    pixels = np.frombuffer(raw, np.uint8, count=784, offset=16).astype(np.float64) / 255
    with np.load(prepared["mnist"][1]) as z:
        assert np.allclose(z["features"][0], pixels / np.linalg.norm(pixels), atol=1e-6)


@pytest.mark.parametrize("name", [*EXPECTED, "open_bandit"])
def test_output_is_byte_identical_on_rerun(prepared, raw_dir, tmp_path, name):
    again = tmp_path / f"{name}.npz"
    prepare_dataset(name, raw_dir, again)
    assert again.read_bytes() == prepared[name][1].read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{name}.npz"]


def test_open_bandit_men(prepared):
    summary, path = prepared["open_bandit"]
    assert summary == {
        "name": "open_bandit",
        "campaign": "men",
        "n_rounds": 10000,
        "dim_context": 21,
        "n_actions": 34,
        "dim_item": 5,
        "n_clicks": 46,
        "n_positions": 3,
    }
    with np.load(path) as z:
        a = {k: z[k] for k in z.files}
    assert a["contexts"].shape == (10000, 21) and a["contexts"].dtype == np.float32
    assert set(np.unique(a["contexts"])) == {0.0, 1.0}
    assert a["actions"].dtype == np.int64 and a["actions"].min() >= 0 and a["actions"].max() < 34
    assert set(a["positions"].tolist()) == {0, 1, 2}
    assert a["rewards"].dtype == np.float32 and a["rewards"].sum() == 46
    assert np.allclose(a["pscores"], 1 / 34)
    assert a["affinities"].shape == (10000, 34)
    assert a["item_features"].shape == (34, 5)
    assert a["item_features"][:, 0].tolist() == list(range(34))
    assert int(a["n_actions"]) == 34


def test_open_bandit_women(raw_dir, tmp_path):
    summary = prepare_logged("open_bandit", raw_dir, tmp_path / "w.npz", campaign="women")
    assert summary["n_rounds"] == 10000 and summary["n_actions"] == 46
    assert summary["n_clicks"] == 46


def test_lzw_reproduces_uncompressed_shuttle_training_set():
    data = decompress((MIRROR / "uci_statlog_shuttle" / "shuttle.trn.Z").read_bytes())
    expected = (MIRROR / "uci_statlog_shuttle" / "shuttle.trn").read_bytes()
    assert hashlib.sha256(data).hexdigest() == hashlib.sha256(expected).hexdigest()
    with pytest.raises(LZWError, match="magic"):
        decompress(b"not compressed")


# --------------------------------------------------------------------------- malformed input


def _copy_lines(src: Path, dest: Path, edit) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    lines = src.read_text().splitlines(keepends=True)
    edit(lines)
    (dest / src.name).write_text("".join(lines))
    return dest


def _assert_no_output(out: Path) -> None:
    assert not out.exists()
    assert list(out.parent.glob("*.part")) == []


def test_wrong_field_count_names_file_and_line(raw_dir, tmp_path):
    def edit(lines):
        lines[41] = "p,x,s\n"

    bad = _copy_lines(raw_dir / "agaricus-lepiota.data", tmp_path / "bad", edit)
    out = tmp_path / "out.npz"
    with pytest.raises(DataFormatError, match=r"agaricus-lepiota\.data: line 42: expected 23"):
        prepare_classification("mushroom", bad, out)
    _assert_no_output(out)


def test_non_numeric_value_names_file_line_and_column(raw_dir, tmp_path):
    def edit(lines):
        fields = lines[99].split(",")
        fields[2] = "a?c"
        lines[99] = ",".join(fields)

    bad = _copy_lines(raw_dir / "magic04.data", tmp_path / "bad", edit)
    pattern = r"magic04\.data: line 100: column 'attribute 3'.*'a\?c'"
    with pytest.raises(DataFormatError, match=pattern):
        prepare_classification("magic", bad, tmp_path / "out.npz")


def test_unknown_label_names_file_and_line(raw_dir, tmp_path):
    def edit(lines):
        lines[4] = lines[4].rstrip("\n")[:-1] + "x\n"

    bad = _copy_lines(raw_dir / "magic04.data", tmp_path / "bad", edit)
    with pytest.raises(DataFormatError, match=r"magic04\.data: line 5: unknown class label 'x'"):
        prepare_classification("magic", bad, tmp_path / "out.npz")


def test_empty_file(tmp_path):
    (tmp_path / "agaricus-lepiota.data").write_text("")
    with pytest.raises(DataFormatError, match=r"agaricus-lepiota\.data: file is empty"):
        prepare_classification("mushroom", tmp_path, tmp_path / "out.npz")


def test_missing_file(tmp_path):
    with pytest.raises(DataFormatError, match=r"magic04\.data: file not found"):
        prepare_classification("magic", tmp_path, tmp_path / "out.npz")


def test_truncated_mnist(raw_dir, tmp_path):
    data = gzip.decompress((raw_dir / "t10k-images-idx3-ubyte.gz").read_bytes())[:-5]
    (tmp_path / "t10k-images-idx3-ubyte.gz").write_bytes(gzip.compress(data))
    (tmp_path / "t10k-labels-idx1-ubyte.gz").write_bytes((raw_dir / "t10k-labels-idx1-ubyte.gz").read_bytes())
    with pytest.raises(DataFormatError, match=r"t10k-images-idx3-ubyte\.gz: expected 7840016"):
        prepare_classification("mnist", tmp_path, tmp_path / "out.npz")


def _obd_copy(raw_dir: Path, tmp_path: Path, edit) -> Path:
    folder = raw_dir / "random" / "men"
    dest = tmp_path / "random" / "men"
    _copy_lines(folder / "men.csv", dest, edit)
    (dest / "item_context.csv").write_bytes((folder / "item_context.csv").read_bytes())
    return tmp_path


def test_obd_missing_column(raw_dir, tmp_path):
    def edit(lines):
        lines[0] = lines[0].replace("click", "clicks")

    bad = _obd_copy(raw_dir, tmp_path, edit)
    with pytest.raises(DataFormatError, match=r"men\.csv: missing column\(s\) \['click'\]"):
        prepare_logged("open_bandit", bad, tmp_path / "out.npz")
    _assert_no_output(tmp_path / "out.npz")


def test_obd_non_numeric_value(raw_dir, tmp_path):
    def edit(lines):
        fields = lines[7].split(",")
        fields[4] = "yes"
        lines[7] = ",".join(fields)

    bad = _obd_copy(raw_dir, tmp_path, edit)
    with pytest.raises(DataFormatError, match=r"men\.csv: line 8: column 'click'.*'yes'"):
        prepare_logged("open_bandit", bad, tmp_path / "out.npz")


def test_obd_out_of_range_action(raw_dir, tmp_path):
    def edit(lines):
        fields = lines[3].split(",")
        fields[2] = "99"
        lines[3] = ",".join(fields)

    bad = _obd_copy(raw_dir, tmp_path, edit)
    with pytest.raises(DataFormatError, match=r"men\.csv: line 4: column 'item_id'"):
        prepare_logged("open_bandit", bad, tmp_path / "out.npz")


def test_obd_empty_log(raw_dir, tmp_path):
    bad = _obd_copy(raw_dir, tmp_path, lambda lines: lines.clear())
    with pytest.raises(DataFormatError, match=r"men\.csv: file is empty"):
        prepare_logged("open_bandit", bad, tmp_path / "out.npz")


def test_obd_header_only(raw_dir, tmp_path):
    bad = _obd_copy(raw_dir, tmp_path, lambda lines: lines.__delitem__(slice(1, None)))
    with pytest.raises(DataFormatError, match=r"men\.csv: file has a header but no data rows"):
        prepare_logged("open_bandit", bad, tmp_path / "out.npz")


def test_prepare_dataset_rejects_unknown_name(tmp_path):
    with pytest.raises(KeyError, match="valid names"):
        prepare_dataset("iris", tmp_path, tmp_path / "out.npz")


def test_obd_bad_timestamp_line_counts_blank_lines(raw_dir, tmp_path):
    def edit(lines):
        lines.insert(1, "\n")
        fields = lines[10].split(",")
        fields[1] = "yesterday"
        lines[10] = ",".join(fields)

    bad = _obd_copy(raw_dir, tmp_path, edit)
    with pytest.raises(DataFormatError, match=r"men\.csv: line 11: column 'timestamp'"):
        prepare_logged("open_bandit", bad, tmp_path / "out.npz")


def test_covertype_layout_on_a_synthetic_file(tmp_path):
    rows = []
    for k in range(1, 8):
        numeric = [str(100 * k + j) for j in range(10)]
        binary = ["1" if j == k else "0" for j in range(44)]
        rows.append(",".join([*numeric, *binary, str(k)]))
    (tmp_path / "covtype.data.gz").write_bytes(gzip.compress("\n".join(rows).encode() + b"\n"))
    summary = prepare_classification("covertype", tmp_path, tmp_path / "c.npz")
    assert summary == {"name": "covertype", "n_rows": 7, "dim": 54, "n_classes": 7, "class_counts": [1] * 7}


# --------------------------------------------------------------------------- reference protocol


def _write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def _load(path: Path) -> dict:
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _unit_rows(rows: list[list[float]]) -> np.ndarray:
    x = np.asarray(rows, dtype=np.float64)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _planted_mushroom(folder: Path) -> Path:
    """3 rows; attribute 1 takes b/a/c, attribute 11 (stalk-root) ?/c/b, every other one x."""

    def row(label, first, stalk_root):
        attrs = ["x"] * 22
        attrs[0], attrs[10] = first, stalk_root
        return ",".join([label, *attrs])

    return _write(folder / "agaricus-lepiota.data", [row("e", "b", "?"), row("p", "a", "c"), row("e", "c", "b")])


def test_reference_mushroom_ordinal_codes_and_missing(tmp_path):
    summary = prepare_classification(
        "mushroom", _planted_mushroom(tmp_path).parent, tmp_path / "m.npz", protocol="reference"
    )
    expected = np.zeros((3, 22))
    # attribute 1: sorted a, b, c -> codes 1, 0, 2; stalk-root: sorted b, c -> ?=-1, c=1, b=0
    expected[:, 0] = [1, 0, 2]
    expected[:, 10] = [-1, 1, 0]
    expected = expected / np.linalg.norm(expected, axis=1, keepdims=True)
    z = _load(tmp_path / "m.npz")
    assert sorted(z) == ["class_names", "features", "labels", "protocol"]
    assert str(z["protocol"]) == "reference"
    assert np.allclose(z["features"], expected, atol=1e-7)
    assert np.allclose(z["features"][0], [2**-0.5] + [0] * 9 + [-(2**-0.5)] + [0] * 11)
    assert z["labels"].tolist() == [0, 1, 0]
    assert summary == {
        "name": "mushroom",
        "n_rows": 3,
        "dim": 22,
        "n_classes": 2,
        "class_counts": [2, 1],
        "protocol": "reference",
        "preparation": PREPARATION_TEXT["reference"],
    }


def test_project_protocol_unchanged_on_the_same_input(tmp_path):
    """Same planted file, project protocol: one-hot over observed values (? its own category)."""
    _planted_mushroom(tmp_path)
    summary = prepare_classification("mushroom", tmp_path, tmp_path / "p.npz")
    assert prepare_dataset("mushroom", tmp_path, tmp_path / "d.npz", protocol="project") == summary
    z = _load(tmp_path / "p.npz")
    assert sorted(z) == ["class_names", "features", "labels"]
    # 20 constant attributes -> 1 column each; attribute 1 -> [a, b, c]; stalk-root -> [?, b, c]
    one_hot = np.zeros((3, 26))
    one_hot[[0, 1, 2], [1, 0, 2]] = 1  # attribute 1
    one_hot[:, 3:12] = 1  # attributes 2..10
    one_hot[[0, 1, 2], [12, 14, 13]] = 1  # stalk-root
    one_hot[:, 15:] = 1  # attributes 12..22
    assert np.allclose(z["features"], one_hot / np.sqrt(22), atol=1e-7)
    assert summary == {"name": "mushroom", "n_rows": 3, "dim": 26, "n_classes": 2, "class_counts": [2, 1]}
    assert (tmp_path / "d.npz").read_bytes() == (tmp_path / "p.npz").read_bytes()


def test_project_mushroom_file_is_pinned(prepared):
    """The project protocol's real Mushroom output, byte for byte (exact arithmetic: 1/sqrt(22))."""
    digest = hashlib.sha256(prepared["mushroom"][1].read_bytes()).hexdigest()
    assert digest == "07522d552dd4b1e3fc51f9a08f108653fa17a1444d0c299a1941ccebfa43a865"


def _adult_line(values: list[str]) -> str:
    return ", ".join(values)


def test_reference_adult_uses_both_files_keeps_missing_rows(tmp_path):
    #              age workclass   fnlwgt edu  edu-num marital occupation rel race sex   gain loss hours country label
    a = ["3", "Private", "0", "HS", "0", "M", "?", "R", "W", "Male", "0", "0", "4", "US", "<=50K"]
    b = ["1", "?", "2", "HS", "0", "M", "Tech", "R", "W", "Female", "0", "0", "2", "US", ">50K"]
    c = ["0", "Gov", "0", "HS", "0", "M", "Tech", "R", "W", "Male", "0", "0", "0", "US", "<=50K."]
    _write(tmp_path / "adult.data", [_adult_line(a), _adult_line(b), ""])
    _write(tmp_path / "adult.test", ["|1x3 Cross validator", _adult_line(c), ""])
    summary = prepare_classification("adult", tmp_path, tmp_path / "a.npz", protocol="reference")
    # workclass: sorted [Gov, Private] -> 1, -1, 0; occupation [Tech] -> -1, 0, 0;
    # sex [Female, Male] -> 1, 0, 1; single-valued attributes -> 0; numbers raw.
    expected = _unit_rows(
        [
            [3, 1, 0, 0, 0, 0, -1, 0, 0, 1, 0, 0, 4, 0],
            [1, -1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0],
            [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0],
        ]
    )
    z = _load(tmp_path / "a.npz")
    assert np.allclose(z["features"], expected, atol=1e-7)
    assert np.isclose(z["features"][0, 0], 3 / np.sqrt(28))
    assert z["labels"].tolist() == [0, 1, 0]
    assert summary["n_rows"] == 3 and summary["dim"] == 14


def test_reference_adult_dot_label_only_in_the_test_file(tmp_path):
    row = ["1", "Gov", "0", "HS", "0", "M", "Tech", "R", "W", "Male", "0", "0", "1", "US", "<=50K."]
    _write(tmp_path / "adult.data", [_adult_line(row)])
    _write(tmp_path / "adult.test", ["|1x3 Cross validator", _adult_line(row)])
    with pytest.raises(DataFormatError, match=r"adult\.data: line 1: unknown class label '<=50K\.'"):
        prepare_classification("adult", tmp_path, tmp_path / "a.npz", protocol="reference")


def test_reference_numeric_files_are_raw_not_standardised(tmp_path):
    _write(tmp_path / "magic04.data", ["3,4,0,0,0,0,0,0,0,0,g", "0,0,0,0,0,0,0,0,0,-2,h"])
    prepare_classification("magic", tmp_path, tmp_path / "m.npz", protocol="reference")
    z = _load(tmp_path / "m.npz")
    expected = np.zeros((2, 10))
    expected[0, :2] = [0.6, 0.8]
    expected[1, 9] = -1.0
    assert np.allclose(z["features"], expected, atol=1e-7)
    assert z["labels"].tolist() == [0, 1]


def test_reference_mnist_and_covertype_on_planted_files(tmp_path):
    images = np.zeros((2, 28, 28), dtype=np.uint8)
    images[0, 0, :2] = [3, 4]
    images[1, 27, 27] = 255
    header = (2051).to_bytes(4, "big") + b"".join(v.to_bytes(4, "big") for v in (2, 28, 28))
    (tmp_path / "t10k-images-idx3-ubyte.gz").write_bytes(gzip.compress(header + images.tobytes()))
    label_header = (2049).to_bytes(4, "big") + (2).to_bytes(4, "big")
    (tmp_path / "t10k-labels-idx1-ubyte.gz").write_bytes(gzip.compress(label_header + bytes([7, 2])))
    prepare_classification("mnist", tmp_path, tmp_path / "d.npz", protocol="reference")
    z = _load(tmp_path / "d.npz")
    expected = np.zeros((2, 784))
    expected[0, :2] = [0.6, 0.8]
    expected[1, 783] = 1.0
    assert np.allclose(z["features"], expected, atol=1e-7) and z["labels"].tolist() == [7, 2]

    rows = [",".join(["300", "400", *["0"] * 52, "1"]), ",".join(["0"] * 10 + ["1"] + ["0"] * 43 + ["7"])]
    (tmp_path / "covtype.data.gz").write_bytes(gzip.compress("\n".join(rows).encode()))
    prepare_classification("covertype", tmp_path, tmp_path / "c.npz", protocol="reference")
    z = _load(tmp_path / "c.npz")
    expected = np.zeros((2, 54))
    expected[0, :2] = [0.6, 0.8]
    expected[1, 10] = 1.0
    assert np.allclose(z["features"], expected, atol=1e-7) and z["labels"].tolist() == [0, 6]


REFERENCE_EXPECTED = {  # rows and classes of the OpenML versions (MNIST: test set only)
    "adult": (48842, 14, [37155, 11687]),
    "mushroom": (8124, 22, [4208, 3916]),
    "magic": (19020, 10, [12332, 6688]),
    "shuttle": (58000, 9, [45586, 50, 171, 8903, 3267, 10, 13]),
    "mnist": (10000, 784, [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]),
}


@pytest.mark.parametrize("name", list(REFERENCE_EXPECTED))
def test_reference_protocol_on_the_mirrored_data(raw_dir, tmp_path, name):
    n, d, counts = REFERENCE_EXPECTED[name]
    summary = prepare_dataset(name, raw_dir, tmp_path / f"{name}.npz", protocol="reference")
    assert summary == {
        "name": name,
        "n_rows": n,
        "dim": d,
        "n_classes": len(counts),
        "class_counts": counts,
        "protocol": "reference",
        "preparation": PREPARATION_TEXT["reference"],
    }
    z = _load(tmp_path / f"{name}.npz")
    assert z["features"].shape == (n, d) and z["features"].dtype == np.float32
    assert np.abs(np.linalg.norm(z["features"].astype(np.float64), axis=1) - 1).max() < 1e-5


def test_reference_shuttle_first_row_is_the_raw_row_normalised(raw_dir, tmp_path):
    prepare_dataset("shuttle", raw_dir, tmp_path / "s.npz", protocol="reference")
    first = (MIRROR / "uci_statlog_shuttle" / "shuttle.trn").read_text().split("\n", 1)[0].split()
    raw = np.asarray(first[:9], dtype=np.float64)
    assert np.allclose(_load(tmp_path / "s.npz")["features"][0], raw / np.linalg.norm(raw), atol=1e-6)


def test_unknown_protocol_is_refused(tmp_path):
    with pytest.raises(
        ValueError,
        match=r"protocol: unknown preparation protocol 'openml'; valid: project, reference, onehot, standardised",
    ):
        prepare_classification("magic", tmp_path, tmp_path / "out.npz", protocol="openml")
    with pytest.raises(ValueError, match=r"protocol: 'reference' applies to classification datasets only"):
        prepare_dataset("open_bandit", tmp_path, tmp_path / "out.npz", protocol="reference")


def test_cli_protocol(raw_dir, tmp_path, capsys):
    from hare.cli import main

    base = ["prepare", "--dataset", "magic", "--raw", str(raw_dir)]
    assert main([*base, "--out", str(tmp_path / "x.npz"), "--protocol", "bogus"]) == 2
    assert "argument --protocol: invalid choice: 'bogus'" in capsys.readouterr().err
    assert not (tmp_path / "x.npz").exists()
    out = tmp_path / "prepared_reference" / "magic.npz"
    out.parent.mkdir()  # the command creates no folder
    assert main([*base, "--out", str(out), "--summary", str(out.with_suffix(".json")), "--protocol", "reference"]) == 0
    assert str(_load(out)["protocol"]) == "reference"
    assert '"protocol": "reference"' in out.with_suffix(".json").read_text()


# --------------------------------------------------------------------------- the preparations of the reference rows


def _planted_adult(folder: Path) -> None:
    """Three rows over both files: numeric age (3, 1, 0), fnlwgt (0, 2, 0) and hours (4, 2, 0); workclass
    Private/?/Gov, occupation ?/Tech/Tech, sex Male/Female/Male; every other attribute single-valued."""
    a = ["3", "Private", "0", "HS", "0", "M", "?", "R", "W", "Male", "0", "0", "4", "US", "<=50K"]
    b = ["1", "?", "2", "HS", "0", "M", "Tech", "R", "W", "Female", "0", "0", "2", "US", ">50K"]
    c = ["0", "Gov", "0", "HS", "0", "M", "Tech", "R", "W", "Male", "0", "0", "0", "US", "<=50K."]
    _write(folder / "adult.data", [_adult_line(a), _adult_line(b)])
    _write(folder / "adult.test", ["|1x3 Cross validator", _adult_line(c)])


ADULT_RAW = {
    "age": [3.0, 1.0, 0.0],
    "workclass": ["Private", "?", "Gov"],
    "fnlwgt": [0.0, 2.0, 0.0],
    "education": ["HS"] * 3,
    "education-num": [0.0] * 3,
    "marital-status": ["M"] * 3,
    "occupation": ["?", "Tech", "Tech"],
    "relationship": ["R"] * 3,
    "race": ["W"] * 3,
    "sex": ["Male", "Female", "Male"],
    "capital-gain": [0.0] * 3,
    "capital-loss": [0.0] * 3,
    "hours-per-week": [4.0, 2.0, 0.0],
    "native-country": ["US"] * 3,
}
"""The planted Adult rows attribute by attribute, as read (brute-force side of the encoding tests)."""


def _brute_force(columns: dict, nominal: str, numeric: str) -> np.ndarray:
    """The features of ``columns`` by hand, one attribute at a time: an ordinal code (sorted values, ``?`` -> -1) or
    one indicator per sorted observed value (``?`` included); numbers raw, z-scored (population std) or scaled to
    [0, 1]; then each row over its Euclidean norm."""
    out = []
    for values in columns.values():
        if isinstance(values[0], str):
            levels = sorted(set(values))
            if nominal == "onehot":
                out.extend([[1.0 if v == level else 0.0 for v in values] for level in levels])
            else:
                known = [level for level in levels if level != "?"]
                out.append([-1.0 if v == "?" else float(known.index(v)) for v in values])
            continue
        x = np.asarray(values, dtype=np.float64)
        if numeric == "standardised":
            sd = np.sqrt(np.mean((x - x.mean()) ** 2))
            x = (x - x.mean()) / sd if sd > 0 else x * 0.0
        elif numeric == "minmax":
            span = x.max() - x.min()
            x = (x - x.min()) / span if span > 0 else x * 0.0
        out.append(list(x))
    features = np.asarray(out).T
    return features / np.sqrt((features**2).sum(axis=1, keepdims=True))


@pytest.mark.parametrize("preparation", list(PREPARATIONS))
def test_each_preparation_of_adult_against_brute_force(tmp_path, preparation):
    _planted_adult(tmp_path)
    summary = prepare_classification("adult", tmp_path, tmp_path / "a.npz", protocol=preparation)
    how = PREPARATIONS[preparation]
    expected = _brute_force(ADULT_RAW, how.nominal, how.numeric)
    z = _load(tmp_path / "a.npz")
    assert z["features"].shape == expected.shape
    assert np.allclose(z["features"], expected, atol=1e-7)
    assert np.allclose(np.linalg.norm(z["features"].astype(np.float64), axis=1), 1.0, atol=1e-6)
    assert z["labels"].tolist() == [0, 1, 0] and str(z["protocol"]) == preparation
    assert summary["protocol"] == preparation and summary["preparation"] == PREPARATION_TEXT[preparation]
    # one-hot: 6 numeric columns + 2 workclass values and ? + occupation ? and Tech + 2 sex values + 5 single values
    assert summary["dim"] == (6 + 3 + 2 + 2 + 5 if how.nominal == "onehot" else 14)


def test_one_hot_columns_moments_and_ranges_before_the_unit_rows(tmp_path):
    """The blocks of each preparation before normalisation: indicator columns with exactly one 1 per attribute and
    row, numeric columns of mean 0 and population std 1 after standardisation, of range [0, 1] after min-max."""
    from hare.data.encoding import encode
    from hare.data.registry import get_dataset

    _planted_adult(tmp_path)
    table = get_dataset("adult").reference_reader(tmp_path)
    onehot = encode(table, "onehot")
    nominal_columns = onehot[:, 1:4]  # workclass: ?, Gov, Private
    assert nominal_columns.tolist() == [[0, 0, 1], [1, 0, 0], [0, 1, 0]]
    numeric = [0, 4, 6, 14, 15, 16]  # age, fnlwgt, education-num, gain, loss, hours in the one-hot layout
    standard = encode(table, "standardised")[:, [0, 2, 12]]  # age, fnlwgt, hours in file order
    assert np.allclose(standard.mean(axis=0), 0.0) and np.allclose(standard.std(axis=0), 1.0)
    scaled = encode(table, "onehot_minmax")[:, numeric]
    varying = scaled[:, [0, 1, 5]]
    assert np.allclose(varying.min(axis=0), 0.0) and np.allclose(varying.max(axis=0), 1.0)
    assert np.allclose(scaled[:, [2, 3, 4]], 0.0)
    assert np.array_equal(encode(table, "reference")[:, 1], [1.0, -1.0, 0.0])


def test_preparations_that_change_nothing_on_a_dataset_give_the_reference_file(tmp_path):
    """Mushroom has no numeric attribute: standardised and minmax are the reference features; MAGIC has no nominal
    one: onehot is the reference. One-hot Mushroom is the project preparation's Mushroom (same rows, ``?`` a value)."""
    _planted_mushroom(tmp_path)
    _write(tmp_path / "magic04.data", ["3,4,0,0,0,0,0,0,0,0,g", "0,1,0,0,0,0,0,0,0,-2,h"])
    for name, same in (("mushroom", ("standardised", "minmax")), ("magic", ("onehot",))):
        prepare_classification(name, tmp_path, tmp_path / f"{name}_reference.npz", protocol="reference")
        for preparation in same:
            prepare_classification(name, tmp_path, tmp_path / f"{name}_{preparation}.npz", protocol=preparation)
            assert np.array_equal(
                _load(tmp_path / f"{name}_{preparation}.npz")["features"],
                _load(tmp_path / f"{name}_reference.npz")["features"],
            )
    prepare_classification("mushroom", tmp_path, tmp_path / "project.npz")
    prepare_classification("mushroom", tmp_path, tmp_path / "onehot.npz", protocol="onehot")
    assert np.array_equal(_load(tmp_path / "project.npz")["features"], _load(tmp_path / "onehot.npz")["features"])


def test_cli_choices_are_the_protocols():
    from hare.cli import build_parser

    parser = build_parser()
    prepare = next(a for a in parser._subparsers._group_actions[0].choices["prepare"]._actions if a.dest == "protocol")
    assert tuple(prepare.choices) == PROTOCOLS


def test_the_preparation_is_part_of_the_batch_digest(smoke_config):
    """A job's specification names its preparation, so the batch digest (a rule parameter) changes with it and the
    workflow reruns exactly the batches that read the other file."""
    from hare.experiments.grid import expand_jobs
    from hare.experiments.plan import batch_digest, batches

    def digests(preparation):
        config = _smoke_with(smoke_config, "mushroom_reference", preparation=preparation)
        return {name: batch_digest(jobs) for name, jobs in batches(expand_jobs(config)).items()}

    reference, onehot = digests("reference"), digests("onehot")
    changed = {name for name in reference if reference[name] != onehot[name]}
    assert changed == {name for name in reference if name.endswith("/mushroom_reference")} and changed


# --------------------------------------------------------------------------- config and workflow


def _smoke_with(smoke_config: dict, env: str, **values) -> dict:
    import copy

    config = copy.deepcopy(smoke_config)
    config["environments"][env].update(values)
    return config


def test_config_preparation_is_validated(smoke_config):
    from hare.experiments.config import check_config
    from hare.experiments.settings import ConfigError, validate_config

    with pytest.raises(ConfigError, match=r"environments\.mushroom\.preparation"):
        check_config(_smoke_with(smoke_config, "mushroom", preparation="bogus"))
    with pytest.raises(ConfigError, match=r"environments\.mushroom\.preparation: unknown preparation 'bogus'"):
        validate_config(_smoke_with(smoke_config, "mushroom", preparation="bogus"))
    with pytest.raises(ConfigError, match=r"environments\.open_bandit\.preparation: only a classification environment"):
        check_config(_smoke_with(smoke_config, "open_bandit", preparation="reference"))


def test_environment_spec_carries_preparation(smoke_config):
    from hare.experiments.grid import environment_spec, prepared_dataset

    plain = environment_spec(smoke_config, "mushroom", 60)
    assert plain.preparation is None and "preparation" not in plain.as_dict()
    assert prepared_dataset(plain) == "data/prepared/mushroom.npz"
    explicit = environment_spec(_smoke_with(smoke_config, "mushroom", preparation="project"), "mushroom", 60)
    assert explicit == plain
    reference = environment_spec(_smoke_with(smoke_config, "mushroom", preparation="reference"), "mushroom", 60)
    assert reference.preparation == "reference" and reference.as_dict()["preparation"] == "reference"
    assert prepared_dataset(reference) == "data/prepared_reference/mushroom.npz"
    assert prepared_dataset(environment_spec(smoke_config, "synthetic_linear", 60)) is None


def test_runner_refuses_a_file_of_the_other_preparation(tmp_path):
    from hare.envs.classification import check_preparation

    _planted_mushroom(tmp_path)
    prepare_classification("mushroom", tmp_path, tmp_path / "project.npz")
    prepare_classification("mushroom", tmp_path, tmp_path / "reference.npz", protocol="reference")
    env = {"name": "mushroom", "kind": "classification", "dataset": "mushroom", "preparation": "reference"}
    check_preparation(env, tmp_path / "reference.npz")
    with pytest.raises(
        ValueError, match=r"'mushroom' declares preparation 'reference', but .*project\.npz was prepared with 'project'"
    ):
        check_preparation(env, tmp_path / "project.npz")
    check_preparation({"name": "mushroom"}, tmp_path / "project.npz")
    with pytest.raises(ValueError, match=r"declares preparation 'project'"):
        check_preparation({"name": "mushroom"}, tmp_path / "reference.npz")


def test_smoke_dry_run_plans_the_reference_file(repository, smoke_config, tmp_path):
    import shutil
    import subprocess
    import sys

    import yaml

    work = tmp_path / "repo"
    shutil.copytree(
        repository,
        work,
        ignore=shutil.ignore_patterns(".venv", ".git", ".snakemake", "results", "__pycache__", ".pytest_cache"),
    )
    config = _smoke_with(smoke_config, "mushroom", preparation="reference")
    (work / "config" / "smoke_reference.yaml").write_text(yaml.safe_dump(config))
    target = "results/runs/classification/mushroom/random.npz"
    dry = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "--cores",
            "1",
            "--configfile",
            "config/smoke_reference.yaml",
            "--dry-run",
            target,
        ],
        cwd=work,
        capture_output=True,
        text=True,
    )
    assert dry.returncode == 0, dry.stdout[-2000:] + dry.stderr[-2000:]
    assert "results/data/prepared_reference/mushroom.npz" in dry.stdout
    assert "prepare_dataset_reference" in dry.stdout
    assert "results/data/prepared/mushroom.npz" not in dry.stdout
