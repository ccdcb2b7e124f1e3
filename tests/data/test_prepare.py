import gzip
import hashlib
from pathlib import Path

import numpy as np
import pytest

from hare.data.errors import DataFormatError
from hare.data.lzw import LZWError, decompress
from hare.data.prepare import prepare_classification, prepare_dataset, prepare_logged

MIRROR = Path(__file__).resolve().parents[2] / "src" / "hare" / "data" / "mirror"

ADULT_CATEGORICAL = (1, 3, 5, 6, 7, 8, 9, 13)


def _adult_width(raw_dir: Path) -> int:
    rows = [[f.strip() for f in line.split(",")]
            for line in (raw_dir / "adult.data").read_text().splitlines() if line.strip()]
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
    "mnist": (10000, 784, [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009],
              [str(k) for k in range(10)]),
}


@pytest.fixture(scope="module")
def prepared(raw_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("prepared")
    return {name: (prepare_dataset(name, raw_dir, out / f"{name}.npz"), out / f"{name}.npz")
            for name in (*EXPECTED, "open_bandit")}


def test_one_hot_widths_follow_the_attribute_values(raw_dir):
    assert _mushroom_width(raw_dir) == 117
    assert _adult_width(raw_dir) == 104


@pytest.mark.parametrize("name", list(EXPECTED))
def test_classification_arrays(prepared, name):
    n, d, counts, classes = EXPECTED[name]
    summary, path = prepared[name]
    assert summary == {"name": name, "n_rows": n, "dim": d, "n_classes": len(counts),
                       "class_counts": counts}
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
    assert summary == {"name": "open_bandit", "campaign": "men", "n_rounds": 10000,
                       "dim_context": 21, "n_actions": 34, "dim_item": 5, "n_clicks": 46,
                       "n_positions": 3}
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
    (tmp_path / "t10k-labels-idx1-ubyte.gz").write_bytes(
        (raw_dir / "t10k-labels-idx1-ubyte.gz").read_bytes())
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
    assert summary == {"name": "covertype", "n_rows": 7, "dim": 54, "n_classes": 7,
                       "class_counts": [1] * 7}
