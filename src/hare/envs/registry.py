"""The environment registry: a config's environment ``kind`` -> the :class:`~hare.envs.base.BanditEnvironment` class
that answers for it, as :mod:`hare.policies.base` does for policies (both a :class:`hare.registry.Registry`).

Each environment module registers its class under its kind (:func:`register_environment`); the class carries its
config handling (:meth:`~hare.envs.base.BanditEnvironment.make_config`, a typed dataclass of the entry's ``params``),
how it is built from a job's ``environment`` entry (:meth:`~hare.envs.base.BanditEnvironment.from_entry`), its memory
estimate (:meth:`~hare.envs.base.BanditEnvironment.memory_shape`) and the facts the rest of the package asks of a
kind (class attributes: :attr:`~hare.envs.base.BanditEnvironment.needs_dataset`, ``has_preparation``,
``serves_logs``, ``has_oracle``, ``has_reward_matrix``, ``replays_logged_data``). Code outside the environments asks
the class (:func:`environment_class`) instead of comparing the kind with a name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hare.envs.base import BanditEnvironment, EnvironmentShape
from hare.registry import Registry


def _load_environments() -> None:
    import hare.envs  # noqa: F401  (registers every environment)


_REGISTRY: Registry[type[BanditEnvironment]] = Registry(
    "environment kind", "environment kind", "kinds", "kind", _load_environments
)


def register_environment(kind: str) -> Callable[[type[BanditEnvironment]], type[BanditEnvironment]]:
    """Class decorator: make an environment constructible by its config ``kind`` (sets ``cls.kind``)."""
    return _REGISTRY.register(kind)


def environment_kinds() -> list[str]:
    """Every registered environment kind, sorted."""
    return _REGISTRY.names()


def environment_class(kind: str) -> type[BanditEnvironment]:
    """The environment class registered under ``kind``; ``KeyError`` lists the valid kinds."""
    return _REGISTRY.get(kind)


def environment_shape(entry: dict[str, Any]) -> EnvironmentShape:
    """The memory estimate's :class:`~hare.envs.base.EnvironmentShape` of an ``environment`` entry, from its kind's
    class (:meth:`~hare.envs.base.BanditEnvironment.memory_shape`)."""
    return environment_class(entry["kind"]).memory_shape(entry)
