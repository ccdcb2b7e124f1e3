"""The benchmark datasets, one record each (:class:`DatasetSpec`): everything the package knows of a dataset.

A record holds the dataset's provenance (its pinned files, licence, citation and homepage), how it is used (``kind``,
``optional``), its readers (:mod:`hare.data.classification_readers`, :mod:`hare.data.open_bandit`), its shape (for the
pre-flight memory estimate, which reads no file) and its display name. Adding a dataset is one record here plus its
reader (``docs/adding_a_dataset.md``); ``tests/data/test_registry.py`` checks that every record is complete.

Every file has a canonical HTTPS URL, the sha256 of the bytes served there, and the path of
its copy in the vendored mirror (``hare/data/mirror``). Mirror copies of canonical files
larger than 2,000,000 bytes are stored gzip-compressed (``compressed='gzip'``); the pinned
sha256 is always that of the canonical, uncompressed bytes, which is what
:func:`hare.data.fetch.fetch_dataset` writes to disk.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, NamedTuple

from hare.data import classification_readers as readers
from hare.data.open_bandit import read_open_bandit

UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"
MNIST = "https://ossci-datasets.s3.amazonaws.com/mnist"
OBP_COMMIT = "8cbd5fa4558b7ad2ba4781546d6604e4cc3e07c4"
OBD = f"https://raw.githubusercontent.com/st-tech/zr-obp/{OBP_COMMIT}/obd"


@dataclass(frozen=True)
class RemoteFile:
    """One file of a dataset.

    Attributes:
        name: relative path of the file inside the dataset's download folder.
        url: canonical HTTPS URL.
        sha256: sha256 of the canonical bytes (as served by ``url``).
        mirror_path: path of the vendored copy, relative to the mirror folder; ``""`` if none.
        compressed: ``"gzip"`` if the vendored copy is gzip-compressed, else ``None``.
    """

    name: str
    url: str
    sha256: str
    mirror_path: str
    compressed: str | None = None


class DatasetShape(NamedTuple):
    """The size of a prepared dataset, the largest over its preparations (:data:`hare.data.encoding.PROTOCOLS`):
    ``rows`` (a logged dataset's events), ``features`` per row (a logged dataset's arm context, ``d_user + d_item``)
    and ``arms`` (classes, or a logged dataset's items)."""

    rows: int
    features: int
    arms: int


@dataclass(frozen=True)
class DatasetSpec:
    """A benchmark dataset: its files, licence and how it is used, its readers, shape and display name.

    ``kind='classification'`` datasets become contextual bandits with one arm per class;
    ``kind='logged'`` datasets hold logged bandit feedback. ``optional`` datasets may be
    skipped when they cannot be obtained.

    ``reader``: a classification dataset's project reader, ``raw_dir -> (features (n, d), labels (n,) int64, class
    names)`` (:mod:`hare.data.classification_readers`); a logged dataset's, ``(raw_dir, campaign) -> (arrays,
    summary)`` (:func:`hare.data.open_bandit.read_open_bandit`). ``reference_reader``: a classification dataset's
    reader of the reference's rows, ``raw_dir -> RawTable`` (``None`` for a logged dataset, which has the project
    preparation only). ``shape``: :class:`DatasetShape`. ``display_name``: the dataset's name as tables and the paper
    show it.
    """

    name: str
    files: tuple[RemoteFile, ...]
    licence: str
    citation: str
    homepage: str
    kind: Literal["classification", "logged"]
    optional: bool = False
    display_name: str = ""
    shape: DatasetShape | None = None
    reader: Callable | None = None
    reference_reader: Callable | None = None


UCI_LICENCE = "CC BY 4.0 (UCI Machine Learning Repository)"


def _obd_files(campaign: str, log_sha: str, context_sha: str) -> tuple[RemoteFile, RemoteFile]:
    folder = f"random/{campaign}"
    mirror = f"open_bandit_dataset/{folder}"
    return (
        RemoteFile(
            f"{folder}/{campaign}.csv", f"{OBD}/{folder}/{campaign}.csv", log_sha, f"{mirror}/{campaign}.csv.gz", "gzip"
        ),
        RemoteFile(
            f"{folder}/item_context.csv", f"{OBD}/{folder}/item_context.csv", context_sha, f"{mirror}/item_context.csv"
        ),
    )


DATASETS: dict[str, DatasetSpec] = {
    "adult": DatasetSpec(
        name="adult",
        files=(
            RemoteFile(
                "adult.data",
                f"{UCI}/adult/adult.data",
                "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
                "uci_adult/adult.data.gz",
                "gzip",
            ),
            RemoteFile(
                "adult.test",
                f"{UCI}/adult/adult.test",
                "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
                "uci_adult/adult.test.gz",
                "gzip",
            ),
        ),
        licence=UCI_LICENCE,
        citation="Becker, B. & Kohavi, R. (1996). Adult. UCI Machine Learning Repository. "
        "https://doi.org/10.24432/C5XW20",
        homepage="https://archive.ics.uci.edu/dataset/2/adult",
        kind="classification",
        display_name="Adult",
        shape=DatasetShape(48842, 108, 2),
        reader=readers.read_adult,
        reference_reader=readers.read_adult_reference,
    ),
    "mushroom": DatasetSpec(
        name="mushroom",
        files=(
            RemoteFile(
                "agaricus-lepiota.data",
                f"{UCI}/mushroom/agaricus-lepiota.data",
                "e65d082030501a3ebcbcd7c9f7c71aa9d28fdfff463bf4cf4716a3fe13ac360e",
                "uci_mushroom/agaricus-lepiota.data",
            ),
        ),
        licence=UCI_LICENCE,
        citation="Mushroom (1981). UCI Machine Learning Repository. https://doi.org/10.24432/C5959T",
        homepage="https://archive.ics.uci.edu/dataset/73/mushroom",
        kind="classification",
        display_name="Mushroom",
        shape=DatasetShape(8124, 117, 2),
        reader=readers.read_mushroom,
        reference_reader=readers.read_mushroom_reference,
    ),
    "magic": DatasetSpec(
        name="magic",
        files=(
            RemoteFile(
                "magic04.data",
                f"{UCI}/magic/magic04.data",
                "e9314b7ebd4b4b59a3b3d65f7316663963777b16a46786877651dbbaa640b36a",
                "uci_magic_gamma/magic04.data",
            ),
        ),
        licence=UCI_LICENCE,
        citation="Bock, R. (2004). MAGIC Gamma Telescope. UCI Machine Learning Repository. "
        "https://doi.org/10.24432/C52C8B",
        homepage="https://archive.ics.uci.edu/dataset/159/magic+gamma+telescope",
        kind="classification",
        display_name="Magic",
        shape=DatasetShape(19020, 10, 2),
        reader=readers.read_magic,
        reference_reader=readers.read_magic_reference,
    ),
    "shuttle": DatasetSpec(
        name="shuttle",
        files=(
            RemoteFile(
                "shuttle.trn.Z",
                f"{UCI}/statlog/shuttle/shuttle.trn.Z",
                "ffd2cbf221d4982ccc77c674621c23291447f3fd9484c00d8078858965e0e7ed",
                "uci_statlog_shuttle/shuttle.trn.Z",
            ),
            RemoteFile(
                "shuttle.tst",
                f"{UCI}/statlog/shuttle/shuttle.tst",
                "f776934a628d9b94c482cb058a76ddaa63823e0f74aec065813c9dff3b89d661",
                "uci_statlog_shuttle/shuttle.tst",
            ),
        ),
        licence=UCI_LICENCE,
        citation="Statlog (Shuttle). UCI Machine Learning Repository. https://doi.org/10.24432/C5WS31",
        homepage="https://archive.ics.uci.edu/dataset/148/statlog+shuttle",
        kind="classification",
        display_name="Shuttle",
        shape=DatasetShape(58000, 9, 7),
        reader=readers.read_shuttle,
        reference_reader=readers.read_shuttle_reference,
    ),
    "mnist": DatasetSpec(
        name="mnist",
        files=(
            RemoteFile(
                "t10k-images-idx3-ubyte.gz",
                f"{MNIST}/t10k-images-idx3-ubyte.gz",
                "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
                "mnist/t10k-images-idx3-ubyte.gz",
            ),
            RemoteFile(
                "t10k-labels-idx1-ubyte.gz",
                f"{MNIST}/t10k-labels-idx1-ubyte.gz",
                "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
                "mnist/t10k-labels-idx1-ubyte.gz",
            ),
        ),
        licence="CC BY-SA 3.0 (as stated in the TensorFlow/Keras documentation; the MNIST page states no licence)",
        citation="LeCun, Y., Cortes, C. & Burges, C. J. C. (2010). MNIST handwritten digit "
        "database. http://yann.lecun.com/exdb/mnist/",
        homepage="http://yann.lecun.com/exdb/mnist/",
        kind="classification",
        display_name="MNIST",
        shape=DatasetShape(10000, 784, 10),
        reader=readers.read_mnist,
        reference_reader=readers.read_mnist_reference,
    ),
    "covertype": DatasetSpec(
        name="covertype",
        files=(
            RemoteFile(
                "covtype.data.gz",
                f"{UCI}/covtype/covtype.data.gz",
                "614360d0257557dd1792834a85a1cdebfadc3c4f30b011d56afee7ffb5b15771",
                "",
            ),
        ),
        licence=UCI_LICENCE,
        citation="Blackard, J. (1998). Covertype. UCI Machine Learning Repository. https://doi.org/10.24432/C50K5N",
        homepage="https://archive.ics.uci.edu/dataset/31/covertype",
        kind="classification",
        optional=True,
        display_name="Covertype",
        shape=DatasetShape(581012, 54, 7),
        reader=readers.read_covertype,
        reference_reader=readers.read_covertype_reference,
    ),
    "open_bandit": DatasetSpec(
        name="open_bandit",
        files=(
            *_obd_files(
                "men",
                "ede6d08c6877f99cd3770f7d09e26c738e6aa6de4445ccccfb1356ba5d06b1eb",
                "6d855c2b7e917d0448d71bbe62c023147495882c0fdc8c41e86fef86abf9fe09",
            ),
            *_obd_files(
                "women",
                "e65f3bd3beb17664fa69cc129bf7bf852a775f8ffa630506e505fc905315bb34",
                "b1ca4905f97703d196004f2ad4552c1e90c2afad8b50688d333b0d2dc0b33147",
            ),
        ),
        licence="Apache-2.0 (st-tech/zr-obp repository; no separate data licence stated)",
        citation="Saito, Y., Aihara, S., Matsutani, M. & Narita, Y. (2021). Open Bandit Dataset "
        "and Pipeline: Towards Realistic and Reproducible Off-Policy Evaluation. "
        "NeurIPS Datasets and Benchmarks. arXiv:2008.07146",
        homepage="https://research.zozo.com/data.html",
        kind="logged",
        display_name="Open Bandit",
        shape=DatasetShape(10000, 26, 34),
        reader=read_open_bandit,
    ),
}


def get_dataset(name: str) -> DatasetSpec:
    """Return the spec of dataset ``name``; raise ``KeyError`` naming the valid choices."""
    try:
        return DATASETS[name]
    except KeyError:
        valid = ", ".join(sorted(DATASETS))
        raise KeyError(f"unknown dataset {name!r}; valid names: {valid}") from None
