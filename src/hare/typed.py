"""Configuration dataclasses whose fields are checked against their annotations before their own checks.

A subclass of :class:`TypedFields` (a dataclass) refuses a value of the wrong type at construction with one
message naming the class and the field (``SyntheticConfig.n_items: must be int (got 'many', a str)``), before its
own ``__post_init__`` compares it with anything: a string where a number belongs never reaches a ``>=``, and a NaN
or an infinity is refused in every field (``SyntheticConfig.noise_sigma: must be a finite number (got nan)``). The
check is derived from the annotations, so no list of typed fields is kept by hand.

A field's bound is declared once, on its annotation: ``alpha: Annotated[float, nonnegative] = 1.0``. The vocabulary
is :data:`nonnegative` (``v >= 0``), :data:`positive` (``v > 0``), :func:`at_least` (``v >= low``),
:data:`unit_interval` (``0 <= v <= 1``), :func:`within` (``low <= v <= high``, or ``low < v`` with ``open_low``),
:func:`one_of` (``v`` among the given values) and :func:`each` (every element of a tuple). After every field's type,
:func:`check_field_constraints` checks every declared bound, in field order, and refuses the first violated one in
one line naming the class and the field (``LinUCBConfig.alpha: must be >= 0 (got -1.0)``). ``None`` (an optional
field left unset) satisfies every bound. A subclass that redeclares a field (a new default) keeps its bases' bounds
on it and may add its own; the bases' are checked first. Rules between fields stay in the class's ``__post_init__``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from collections.abc import Callable
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
    """``typing.get_type_hints(cls)``, evaluated once per class (a config's fields are checked at every
    construction)."""
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
                f"{cls.__name__}.{field.name}: must be {type_name(hints[field.name])} "
                f"(got {value!r}, a {type(value).__name__})"
            )
        bad = nonfinite_number(value)
        if bad is not None:
            raise ValueError(f"{cls.__name__}.{field.name}: must be a finite number (got {bad!r})")


@dataclasses.dataclass(frozen=True)
class Constraint:
    """A bound on one field's value: ``holds(value)`` is the check, ``text`` the message's verb phrase
    (``must be >= 0``). Declared on the field's annotation, ``Annotated[float, nonnegative]``."""

    holds: Callable[[Any], bool]
    text: str

    def noting(self, note: str) -> Constraint:
        """The same check, its message followed by ``(note)``: ``must be >= 0 (0: the environment's clusters)``."""
        return Constraint(self.holds, f"{self.text} ({note})")


def at_least(low: int | float) -> Constraint:
    """``v >= low``."""
    return Constraint(lambda value: value >= low, f"must be >= {low}")


def within(low: int | float, high: int | float, open_low: bool = False) -> Constraint:
    """``low <= v <= high``, or ``low < v <= high`` with ``open_low``: ``[low, high]`` or ``(low, high]``."""
    if open_low:
        return Constraint(lambda value: low < value <= high, f"must be in ({low}, {high}]")
    return Constraint(lambda value: low <= value <= high, f"must be in [{low}, {high}]")


def one_of(values: tuple[Any, ...]) -> Constraint:
    """``v in values``."""
    return Constraint(lambda value: value in values, f"must be one of {values}")


def each(bound: Constraint) -> Constraint:
    """``bound`` on every element of a tuple: ``must all be >= 0``."""
    return Constraint(
        lambda value: all(bound.holds(element) for element in value), bound.text.replace("must be", "must all be", 1)
    )


nonnegative = Constraint(lambda value: value >= 0, "must be >= 0")
"""``v >= 0``."""
positive = Constraint(lambda value: value > 0, "must be > 0")
"""``v > 0``."""
unit_interval = within(0, 1)
"""``0 <= v <= 1``."""


@functools.cache
def field_constraints(cls: type) -> tuple[tuple[str, tuple[Constraint, ...]], ...]:
    """``((field, bounds), ...)`` of dataclass ``cls`` in field order: the :class:`Constraint` s of each field's
    ``Annotated`` annotation in every class of the MRO that annotates it, bases first. Evaluated once per class."""
    found: dict[str, list[Constraint]] = {field.name: [] for field in dataclasses.fields(cls)}
    for klass in reversed(cls.__mro__):
        own = klass.__dict__.get("__annotations__", {})
        if not own or not dataclasses.is_dataclass(klass):
            continue
        hints = typing.get_type_hints(klass, include_extras=True)
        for name in own:
            if name in found and typing.get_origin(hints[name]) is typing.Annotated:
                found[name].extend(c for c in hints[name].__metadata__ if isinstance(c, Constraint))
    return tuple((name, tuple(bounds)) for name, bounds in found.items() if bounds)


def check_field_constraints(instance: Any) -> None:
    """Raise ``ValueError`` ``<Class>.<field>: <text> (got <value>)`` for the first declared bound (field order,
    :func:`field_constraints`) that a non-``None`` value of dataclass ``instance`` violates."""
    cls = type(instance)
    for name, bounds in field_constraints(cls):
        value = getattr(instance, name)
        if value is None:
            continue
        for bound in bounds:
            if not bound.holds(value):
                raise ValueError(f"{cls.__name__}.{name}: {bound.text} (got {value!r})")


class TypedFields:
    """Base of configuration dataclasses: every subclass's ``__post_init__`` first checks every field's type
    (:func:`check_field_types`), then every field's declared bounds (:func:`check_field_constraints`), then runs the
    subclass's own checks."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("__post_init__")

        def __post_init__(self) -> None:
            check_field_types(self)
            check_field_constraints(self)
            if own is not None:
                own(self)
            else:
                super(cls, self).__post_init__()

        cls.__post_init__ = __post_init__

    def __post_init__(self) -> None:
        """Nothing beyond the type check."""
