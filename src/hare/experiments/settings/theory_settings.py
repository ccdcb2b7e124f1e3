"""The config's ``theory`` sections as frozen typed settings (:data:`THEORY_SETTINGS`: :class:`DecompositionSettings`,
:class:`DecompositionGridSettings`, :class:`ApproxBudgetSettings`, :class:`HeadsAlphaSettings`), whose construction
is the check: every field's type and declared bound (:mod:`hare.typed`), then the section's rules, the checks of a
mapping in :mod:`hare.experiments.settings.theory`. Each study (:mod:`hare.theory.decomposition`,
:mod:`hare.theory.decomposition_grid`, :mod:`hare.theory.approx_budget`, :mod:`hare.theory.heads_alpha`) takes its
settings and checks nothing again.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields
from typing import Annotated, Any

from hare.experiments.settings.errors import ConfigError
from hare.experiments.settings.theory import (
    check_approx_budget,
    check_decomposition_grid,
    check_heads_alpha,
    check_settings,
)
from hare.typed import Constraint, TypedFields, each, nonnegative

MIN_RUNS = 2
"""Fewest runs a theory study takes (its intervals are over runs; the schema's minimum)."""


def integer_at_least(low: int) -> Constraint:
    """``v >= low`` for an integer setting, refused as :func:`check_run_settings` refuses one: ``must be an integer >=
    low``."""
    return Constraint(lambda value: value >= low, f"must be an integer >= {low}")


open_unit_interval = Constraint(lambda value: 0 < value < 1, "must be in (0, 1)")
"""``0 < v < 1``: a probability ``delta`` of a bound."""


def _plain(value: Any) -> Any:
    """A setting as the section writes it: a tuple as a list."""
    return list(value) if isinstance(value, tuple) else value


@dataclass(frozen=True)
class TheorySettings(TypedFields):
    """Base of a ``theory`` section's settings. An optional setting the section leaves out is ``None``, and the
    study takes its own default for it; :meth:`as_dict` is the section as written, :meth:`given` the optional
    settings it gives, as keyword arguments of the study."""

    def __post_init__(self) -> None:
        try:
            self.check(self.as_dict())
        except ConfigError:  # names the key path already
            raise
        except ValueError as error:  # a rule's message names the key inside the section
            raise ValueError(f"{type(self).__name__}.{error}") from error

    @staticmethod
    def check(section: dict[str, Any]) -> None:
        """The section's rules (this module's checks of a mapping); ``ValueError`` naming the key."""

    def as_dict(self) -> dict[str, Any]:
        """The section these settings were read from: every setting it gives (a sequence as a list)."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self) if getattr(self, f.name) is not None}

    def given(self, *names: str) -> dict[str, Any]:
        """``{name: value}`` of the optional settings ``names`` that the section gives (a sequence as a list)."""
        return {name: _plain(getattr(self, name)) for name in names if getattr(self, name) is not None}

    @classmethod
    def from_section(cls, section: dict[str, Any]) -> TheorySettings:
        """The settings of a section that passed :meth:`check`; ``ValueError`` ``<Class>.<key>: ...`` for an unknown
        key, a required one left out, or a field's type or declared bound."""
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(section) - set(known))
        if unknown:
            raise ValueError(f"{cls.__name__}.{unknown[0]}: unknown setting; known: {sorted(known)}")
        for f in fields(cls):
            if f.default is MISSING and f.name not in section:
                raise ValueError(f"{cls.__name__}.{f.name}: required")
        hints = typing.get_type_hints(cls)
        return cls(**{key: _read(value, hints[key]) for key, value in section.items()})


def _read(value: Any, annotation: Any) -> Any:
    """A section's value as a field holds it: a list as a tuple where the field takes one, a mapping as a copy (the
    settings share nothing with the config they were read from)."""
    if isinstance(value, list) and _takes_tuple(annotation):
        return tuple(value)
    return dict(value) if isinstance(value, dict) else value


def _takes_tuple(annotation: Any) -> bool:
    """Whether a field's annotation is ``tuple[X, ...]`` or a union with one (a section's list is read as a tuple)."""
    options = typing.get_args(annotation) if typing.get_origin(annotation) in (typing.Union, types.UnionType) else ()
    return typing.get_origin(annotation) is tuple or any(typing.get_origin(option) is tuple for option in options)


@dataclass(frozen=True)
class DecompositionSettings(TheorySettings):
    """The ``theory.decomposition`` section (:func:`hare.theory.decomposition.decomposition_check`).

    horizons: the horizons ``T`` the terms are read at (a growth-exponent grid, :func:`check_settings`); n_runs: paired
    runs; env_params: :class:`SyntheticConfig` fields of HARE-Sim; hare_params: :class:`HAREConfig` fields shared by
    the three :data:`VARIANTS`; base_seed: seed of the environment and policy keys; device: ``cpu`` or a CUDA device;
    delta: the bounds' failure probability; tolerance: slack of an exponent check; n_boot: bootstrap resamples;
    n_eps_queries: probe queries of the attention error; n_logged: ``M``, the logged interactions every policy is
    warm-started with; baselines: True, False or the baselines to play (``linucb``, ``lnucb_ta``); baseline_params:
    baseline name -> its hyperparameters. ``None``: the study's default.
    """

    horizons: tuple[int, ...]
    n_runs: Annotated[int, integer_at_least(MIN_RUNS)]
    env_params: Mapping[str, Any] | None = None
    hare_params: Mapping[str, Any] | None = None
    base_seed: Annotated[int | None, integer_at_least(0)] = None
    device: str | None = None
    delta: Annotated[float | None, open_unit_interval] = None
    tolerance: Annotated[float | None, nonnegative] = None
    n_boot: Annotated[int | None, integer_at_least(1)] = None
    n_eps_queries: Annotated[int | None, integer_at_least(1)] = None
    n_logged: int | None = None
    baselines: bool | tuple[str, ...] | None = None
    baseline_params: Mapping[str, Mapping[str, Any]] | None = None

    @staticmethod
    def check(section: dict[str, Any]) -> None:
        check_settings(section)


@dataclass(frozen=True)
class DecompositionGridSettings(TheorySettings):
    """The ``theory.decomposition_grid`` section (:func:`hare.theory.decomposition_grid.decomposition_grid_check`):
    the decomposition at every cell ``(C, d_k)``, without the baselines.

    n_clusters: the grid's ``C`` (each at most ``env_params.n_items``); key_dims: its ``d_k``; horizons, n_runs,
    env_params, hare_params, base_seed, device, delta, tolerance, n_boot, n_eps_queries, n_logged: as in
    :class:`DecompositionSettings`, for every cell. ``None``: the study's default.
    """

    n_clusters: tuple[int, ...]
    key_dims: tuple[int, ...]
    horizons: Annotated[tuple[int, ...], each(integer_at_least(1))]
    n_runs: Annotated[int, integer_at_least(MIN_RUNS)]
    env_params: Mapping[str, Any] | None = None
    hare_params: Mapping[str, Any] | None = None
    base_seed: Annotated[int | None, integer_at_least(0)] = None
    device: str | None = None
    delta: Annotated[float | None, open_unit_interval] = None
    tolerance: Annotated[float | None, nonnegative] = None
    n_boot: Annotated[int | None, integer_at_least(1)] = None
    n_eps_queries: Annotated[int | None, integer_at_least(1)] = None
    n_logged: int | None = None

    @staticmethod
    def check(section: dict[str, Any]) -> None:
        check_decomposition_grid(section)
        check_settings(section, grid=True)


@dataclass(frozen=True)
class ApproxBudgetSettings(TheorySettings):
    """The ``theory.approx_budget`` section (:func:`hare.theory.approx_budget.approx_budget_check`).

    budgets: the grid of ``M`` (:func:`check_positive_grid`); horizon: the fixed ``T``; n_runs: paired runs;
    base_seed, n_boot, n_eps_queries, env_params, hare_params, device: as in :class:`DecompositionSettings`.
    ``None``: the study's default.
    """

    budgets: tuple[int, ...]
    horizon: Annotated[int, integer_at_least(1)]
    n_runs: Annotated[int, integer_at_least(MIN_RUNS)]
    base_seed: Annotated[int | None, integer_at_least(0)] = None
    n_boot: Annotated[int | None, integer_at_least(1)] = None
    n_eps_queries: Annotated[int | None, integer_at_least(1)] = None
    env_params: Mapping[str, Any] | None = None
    hare_params: Mapping[str, Any] | None = None
    device: str | None = None

    @staticmethod
    def check(section: dict[str, Any]) -> None:
        check_approx_budget(section)


@dataclass(frozen=True)
class HeadsAlphaSettings(TheorySettings):
    """The ``theory.heads_alpha`` section (:func:`hare.theory.heads_alpha.heads_alpha_check`).

    heads: the grid of ``H``; alphas: the grid of bonus weights ``alpha`` (:func:`check_heads_alpha`); horizon,
    n_runs, base_seed, n_boot: as in :class:`ApproxBudgetSettings`; n_logged: ``M`` of every cell's warm start;
    env_params, hare_params (without the axes ``n_heads``, ``alpha``), device: as in :class:`DecompositionSettings`.
    ``None``: the study's default.
    """

    heads: tuple[int, ...]
    alphas: tuple[float, ...]
    horizon: Annotated[int, integer_at_least(1)]
    n_runs: Annotated[int, integer_at_least(MIN_RUNS)]
    base_seed: Annotated[int | None, integer_at_least(0)] = None
    n_logged: Annotated[int | None, integer_at_least(1)] = None
    n_boot: Annotated[int | None, integer_at_least(1)] = None
    env_params: Mapping[str, Any] | None = None
    hare_params: Mapping[str, Any] | None = None
    device: str | None = None

    @staticmethod
    def check(section: dict[str, Any]) -> None:
        check_heads_alpha(section)


THEORY_SETTINGS: dict[str, type[TheorySettings]] = {
    "decomposition": DecompositionSettings,
    "decomposition_grid": DecompositionGridSettings,
    "approx_budget": ApproxBudgetSettings,
    "heads_alpha": HeadsAlphaSettings,
}
"""``theory.<name>`` -> its settings."""
