"""Exceptions raised while fetching and preparing datasets."""


class DataIntegrityError(RuntimeError):
    """A file's sha256 differs from the pinned value."""


class DatasetUnavailable(RuntimeError):
    """A dataset file cannot be obtained from its URL nor from the mirror."""


class DataFormatError(ValueError):
    """A raw data file does not have the expected layout or content."""
