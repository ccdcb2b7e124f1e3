"""A table of classes by name, filled by a class decorator: the one registry code behind the policies' names
(:mod:`hare.policies.base`) and the environments' kinds (:mod:`hare.envs.registry`).

A :class:`Registry` refuses a name registered twice, sets the name on the class (under the attribute it is told),
lists its names sorted, and answers a lookup of an unknown name with a ``KeyError`` that lists the known ones. The
modules that register into it are imported by the ``load`` function it is given, before any listing or lookup: a
registry is complete whichever module asked first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T", bound=type)


class Registry(Generic[T]):
    """Classes by name.

    ``what``: the noun of a refusal to register twice (``"policy name"`` -> ``policy name 'x' registered twice``);
    ``unknown``: the noun of an unknown name (``"policy"`` -> ``unknown policy 'x'``); ``known``: the noun of the
    list (``"policies"`` -> ``known policies: a, b``); ``attribute``: the class attribute set to its name;
    ``load``: imports every module that registers (called before :meth:`names` and :meth:`get`).
    """

    def __init__(
        self, what: str, unknown: str, known: str, attribute: str, load: Callable[[], object] = lambda: None
    ) -> None:
        self.what, self.unknown, self.known, self.attribute = what, unknown, known, attribute
        self._load = load
        self._classes: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        """Class decorator: register the class under ``name`` and set its :attr:`attribute` to ``name``;
        ``ValueError`` for a name already registered."""

        def decorate(cls: T) -> T:
            if name in self._classes:
                raise ValueError(f"{self.what} {name!r} registered twice")
            setattr(cls, self.attribute, name)
            self._classes[name] = cls
            return cls

        return decorate

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        self._load()
        return sorted(self._classes)

    def get(self, name: str) -> T:
        """The class registered under ``name``; ``KeyError`` lists the known names."""
        names = self.names()
        if name not in self._classes:
            raise KeyError(f"unknown {self.unknown} {name!r}; known {self.known}: {', '.join(names)}")
        return self._classes[name]
