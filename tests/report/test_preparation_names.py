"""A preparation's name is declared once in the report layer, for each preparation the data layer defines, and an
environment named after a dataset and a preparation shows both records' names."""

from __future__ import annotations

from hare.data.encoding import PROTOCOLS
from hare.data.registry import DATASETS
from hare.experiments.tables.reproduction import PREPARATION_ORDER
from hare.report.names import PREPARATION_NAMES, display_name


def test_every_preparation_has_a_name_and_no_other():
    assert sorted(PREPARATION_NAMES) == sorted(PROTOCOLS)


def test_the_names_are_in_the_tables_order():
    assert tuple(PREPARATION_NAMES) == PREPARATION_ORDER


def test_an_environment_of_a_dataset_under_a_preparation_shows_both_names():
    assert display_name("adult_onehot_standardised") == "Adult (one-hot, standardised preparation)"
    assert display_name("magic_minmax") == "Magic (min-max preparation)"
    assert display_name("mnist_reference@alpha=0.1") == "MNIST (reference preparation) [alpha=0.1]"
    assert display_name("open_bandit") == DATASETS["open_bandit"].display_name


def test_a_logged_dataset_has_no_preparation_names():
    assert display_name("open_bandit_reference") == "open_bandit_reference"
