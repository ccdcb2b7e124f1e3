"""Configuration dataclasses check every field's type from its annotation before their own checks (hare.typed)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from hare.typed import TypedFields, value_has_type


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
    """NaN passes every comparison check (``nan < 0`` is false) and an infinity every lower bound; the base refuses both."""
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
