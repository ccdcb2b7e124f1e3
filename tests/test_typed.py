"""Configuration dataclasses check every field's type from its annotation before their own checks (hare.typed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import pytest

from hare.typed import (
    TypedFields,
    at_least,
    each,
    field_constraints,
    nonnegative,
    one_of,
    positive,
    unit_interval,
    value_has_type,
    within,
)


@dataclass(frozen=True)
class Base(TypedFields):
    count: int = 1
    rate: float = 0.5
    name: str = "a"
    flag: bool = False
    sizes: tuple[int, ...] = (1,)
    limit: float | None = None

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ValueError("Base.count: must be >= 1")


@dataclass(frozen=True)
class Derived(Base):
    extra: int = 0


@dataclass(frozen=True)
class Unchecked(TypedFields):
    size: int = 1


@pytest.mark.parametrize(
    ("cls", "field", "value", "expected"),
    [
        (Base, "count", "many", "int"),
        (Base, "count", 2.0, "int"),
        (Base, "count", True, "int"),
        (Base, "rate", "0.1", "float"),
        (Base, "name", 3, "str"),
        (Base, "flag", 1, "bool"),
        (Base, "sizes", [1, "2"], "tuple"),
        (Base, "limit", "none", "float"),
        (Derived, "extra", "1", "int"),
        (Derived, "count", "x", "int"),
        (Unchecked, "size", "x", "int"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_by_name_before_the_own_checks(cls, field, value, expected):
    with pytest.raises(
        ValueError,
        match=rf"^{cls.__name__}\.{field}: must be {expected}.*\(got {value!r}, a {type(value).__name__}\)$".replace(
            "[", r"\["
        ).replace("]", r"\]"),
    ):
        cls(**{field: value})


def test_values_of_the_right_type_pass_and_the_own_checks_still_run():
    assert Derived(count=2, rate=1, sizes=[1, 2], limit=0.5, extra=3).rate == 1
    assert Unchecked(size=3).size == 3
    with pytest.raises(ValueError, match=r"Base\.count: must be >= 1"):
        Derived(count=0)


@pytest.mark.parametrize(
    ("value", "annotation", "fits"),
    [
        (1, int, True),
        (True, int, False),
        (1, float, True),
        (1.5, int, False),
        (None, int | None, True),
        ("x", int | None, False),
        ([1, 2], tuple[int, ...], True),
        ((1, 2.5), tuple[int, ...], False),
        ({"a": 1}, dict, True),
    ],
)
def test_value_has_type(value, annotation, fits):
    assert value_has_type(value, annotation) is fits


@dataclass(frozen=True)
class Rates(TypedFields):
    rate: float = 0.5
    rates: tuple[float, ...] = (0.5,)
    limit: float | None = None


@pytest.mark.parametrize(
    ("field", "value", "shown"),
    [
        ("rate", float("nan"), "nan"),
        ("rate", float("inf"), "inf"),
        ("rate", -float("inf"), "-inf"),
        ("rates", (1.0, float("nan")), "nan"),
        ("limit", float("inf"), "inf"),
    ],
)
def test_a_nonfinite_number_is_refused_by_name_in_every_float_field(field, value, shown):
    """NaN passes every comparison check (``nan < 0`` is false) and an infinity every lower bound; the base refuses
    both."""
    with pytest.raises(ValueError, match=rf"^Rates\.{field}: must be a finite number \(got {shown}\)$"):
        Rates(**{field: value})


def test_a_dataclass_of_the_package_refuses_a_nonfinite_value():
    from hare.envs.synthetic import SyntheticConfig
    from hare.policies.base import make_config

    with pytest.raises(ValueError, match=r"^SyntheticConfig\.noise_sigma: must be a finite number \(got nan\)$"):
        SyntheticConfig(noise_sigma=float("nan"))
    with pytest.raises(ValueError, match=r"^HAREConfig\.alpha: must be a finite number \(got inf\)$"):
        make_config("hare", {"alpha": float("inf")})
    assert make_config("hare", {"alpha": 1e300}).alpha == 1e300


@dataclass(frozen=True)
class Bounded(TypedFields):
    rate: Annotated[float, nonnegative] = 0.0
    scale: Annotated[float, positive] = 1.0
    count: Annotated[int, at_least(2)] = 2
    share: Annotated[float, unit_interval] = 0.5
    probability: Annotated[float, within(0, 1, open_low=True)] = 1.0
    mode: Annotated[str, one_of(("a", "b"))] = "a"
    weights: Annotated[tuple[float, ...] | None, each(nonnegative)] = None
    clusters: Annotated[int, nonnegative.noting("0: all")] = 0
    optional: Annotated[float | None, positive] = None

    def __post_init__(self) -> None:
        if self.count > 5:
            raise ValueError("Bounded.count: own check")


@dataclass(frozen=True)
class Redeclared(Bounded):
    scale: Annotated[float, at_least(2)] = 3.0
    mode: str = "b"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("rate", -0.5, "Bounded.rate: must be >= 0 (got -0.5)"),
        ("scale", 0.0, "Bounded.scale: must be > 0 (got 0.0)"),
        ("count", 1, "Bounded.count: must be >= 2 (got 1)"),
        ("share", 1.5, "Bounded.share: must be in [0, 1] (got 1.5)"),
        ("share", -0.1, "Bounded.share: must be in [0, 1] (got -0.1)"),
        ("probability", 0.0, "Bounded.probability: must be in (0, 1] (got 0.0)"),
        ("mode", "c", "Bounded.mode: must be one of ('a', 'b') (got 'c')"),
        ("weights", [1.0, -1.0], "Bounded.weights: must all be >= 0 (got [1.0, -1.0])"),
        ("clusters", -1, "Bounded.clusters: must be >= 0 (0: all) (got -1)"),
        ("optional", -2.0, "Bounded.optional: must be > 0 (got -2.0)"),
    ],
)
def test_a_planted_value_outside_each_kind_of_bound_is_refused_in_one_line_naming_the_field(field, value, message):
    with pytest.raises(ValueError) as error:
        Bounded(**{field: value})
    assert str(error.value) == message


def test_bounds_pass_their_edge_values_and_none_and_run_after_the_type_check_before_the_own_checks():
    Bounded(rate=0, scale=1e-9, count=2, share=1, probability=1, mode="b", weights=(0.0, 2.0), clusters=0)
    assert Bounded(optional=None, weights=None).optional is None
    with pytest.raises(ValueError, match=r"^Bounded\.rate: must be float"):
        Bounded(rate="-1")
    with pytest.raises(ValueError, match=r"^Bounded\.count: own check$"):
        Bounded(count=6)
    with pytest.raises(ValueError, match=r"^Bounded\.rate: must be >= 0"):
        Bounded(rate=-1.0, count=6)


def test_a_redeclared_field_keeps_its_bases_bounds_first_and_adds_its_own():
    assert [name for name, _ in field_constraints(Redeclared)] == [name for name, _ in field_constraints(Bounded)]
    with pytest.raises(ValueError, match=r"^Redeclared\.scale: must be > 0 \(got -1\.0\)$"):
        Redeclared(scale=-1.0)
    with pytest.raises(ValueError, match=r"^Redeclared\.scale: must be >= 2 \(got 1\.5\)$"):
        Redeclared(scale=1.5)
    with pytest.raises(ValueError, match=r"^Redeclared\.mode: must be one of \('a', 'b'\)"):
        Redeclared(mode="z")
