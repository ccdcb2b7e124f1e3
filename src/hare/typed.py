"""Configuration dataclasses whose fields are checked against their annotations before their own checks.

A subclass of :class:`TypedFields` (a dataclass) refuses a value of the wrong type at construction with one
message naming the class and the field (``SyntheticConfig.n_items: must be int (got 'many', a str)``), before its
own ``__post_init__`` compares it with anything: a string where a number belongs never reaches a ``>=``, and a NaN
or an infinity is refused in every field (``SyntheticConfig.noise_sigma: must be a finite number (got nan)``). The
check is derived from the annotations, so no list of typed fields is kept by hand.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from typing import Any


def value_has_type(value: Any, annotation: Any) -> bool:
    """Whether a config value fits a dataclass field's annotation: ``int`` (not bool), ``float`` (an int too),
    ``bool``, ``str``, ``X | None``, ``tuple[X, ...]`` (a list or tuple of X); other annotations are not checked."""
    if annotation is bool:
        return isinstance(value, bool)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if annotation is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if annotation is str:
        return isinstance(value, str)
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        return any(value_has_type(value, option) for option in typing.get_args(annotation))
    if annotation is type(None):
        return value is None
    if typing.get_origin(annotation) is tuple:
        inner = typing.get_args(annotation)[0]
        return isinstance(value, (list, tuple)) and all(value_has_type(v, inner) for v in value)
    return True


def type_name(annotation: Any) -> str:
    return getattr(annotation, "__name__", None) or str(annotation)


def nonfinite_number(value: Any) -> float | None:
    """The first NaN or infinity of a field's value (a float, or a list or tuple of them, nested), or ``None``."""
    if isinstance(value, float):
        return None if math.isfinite(value) else value
    if isinstance(value, (list, tuple)):
        return next((found for found in map(nonfinite_number, value) if found is not None), None)
    return None


@functools.cache
def field_hints(cls: type) -> dict[str, Any]:
    """``typing.get_type_hints(cls)``, evaluated once per class (a config's fields are checked at every construction)."""
    return typing.get_type_hints(cls)


def check_field_types(instance: Any) -> None:
    """Raise ``ValueError`` naming the first field of dataclass ``instance`` whose value does not fit its annotation,
    or holds a NaN or an infinity: no field of a configuration is a non-finite number (``-1 < nan`` is false, so a
    range check alone would let it through)."""
    cls = type(instance)
    hints = field_hints(cls)
    for field in dataclasses.fields(cls):
        value = getattr(instance, field.name)
        if not value_has_type(value, hints[field.name]):
            raise ValueError(
                f"{cls.__name__}.{field.name}: must be {type_name(hints[field.name])} (got {value!r}, a {type(value).__name__})"
            )
        bad = nonfinite_number(value)
        if bad is not None:
            raise ValueError(f"{cls.__name__}.{field.name}: must be a finite number (got {bad!r})")


class TypedFields:
    """Base of configuration dataclasses: every subclass's ``__post_init__`` first checks every field's type
    (:func:`check_field_types`), then runs the subclass's own checks."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("__post_init__")

        def __post_init__(self) -> None:
            check_field_types(self)
            if own is not None:
                own(self)
            else:
                super(cls, self).__post_init__()

        cls.__post_init__ = __post_init__

    def __post_init__(self) -> None:
        """Nothing beyond the type check."""
