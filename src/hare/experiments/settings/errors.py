"""The one error of the config boundary, and the reading of a settings dataclass with it.

Every refusal of a config value is a :class:`ConfigError` whose message is one line that starts with the key path at
fault (``experiments.synthetic.horizon: ...``), or with the file at fault for a problem of the file itself.
:func:`dataclass_from` builds a settings dataclass from a config mapping: the dataclass checks its own fields (types,
declared bounds, rules between fields, :mod:`hare.typed`) and the error names the config's key path instead of the
class.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class ConfigError(ValueError):
    """A configuration value is invalid; the message names its key path."""


def one_line(error: BaseException) -> str:
    """An error's message with every line break and run of spaces as one space."""
    return " ".join(str(error).split())


def dataclass_from(cls: type[T], values: Any, where: str) -> T:
    """``cls(**values)`` with errors that name the key path (``where.<field>``): a value that is not a mapping, an
    unknown key, or a field the dataclass refuses (its message ``<Class>.<field>: ...`` or ``<where>.<field>: ...``
    becomes ``<where>.<field>: ...``)."""
    if not isinstance(values, dict):
        raise ConfigError(f"{where}: must be a mapping, got {type(values).__name__}")
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}: unknown setting; known: {sorted(known)}")
    return reading(cls.__name__, where, lambda: cls(**values))


def reading(name: str, where: str, build: Callable[[], T]) -> T:
    """``build()``, its ``TypeError`` or ``ValueError`` raised again as :class:`ConfigError` naming the key path: a
    message that already starts with ``<where>`` is kept, one that starts ``<name>.`` (a dataclass naming its field)
    reads ``<where>.`` instead, and any other is put after ``<where>: ``."""
    try:
        return build()
    except ConfigError:
        raise
    except (TypeError, ValueError) as error:
        text = one_line(error)
        if text.startswith((f"{where}.", f"{where}:", f"{where} ")):
            raise ConfigError(text) from error
        if text.startswith(f"{name}."):
            raise ConfigError(f"{where}.{text.removeprefix(name + '.')}") from error
        raise ConfigError(f"{where}: {text}") from error
