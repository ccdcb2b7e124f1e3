"""The ``cost_growth`` config section (:mod:`hare.experiments.studies.cost_growth`), checked in one place.

Every refusal is one line naming the key at fault, ``cost_growth.<key>: ...``. The section sets a base point
``(T, K, d, B)`` of a HARE-Sim instance (horizon, arms = items, context dimension, runs) and four one-factor sweeps
around it:

* ``rounds``: the rounds ``t`` at which the per-round cost of one long play at the base point is read (a play of
  ``max(rounds)`` rounds);
* ``arms``, ``dims``, ``runs``: values of ``K``, ``d`` and ``B``, each played ``base.horizon`` rounds with the other
  three at the base point.

``window``: rounds averaged into each cell's cost (the last ``window`` rounds before the round read);
``budget_s``: seconds of play per cell (the ``rounds`` play gets ``budget_s`` per value of ``rounds``); a cell whose
rounds were not all played within it is recorded as skipped, and so is every larger value of the same axis.
``policies``: registry name -> hyperparameters (:func:`hare.policies.base.make_config` checks them);
``n_users``: the users of the instance (the context is ``[x, onehot(user)]``, so ``d = query_dim + n_users`` and
every ``d`` must exceed it); ``n_clusters``: HARE-Sim's clusters (at most ``K``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any

from hare.policies.base import make_config
from hare.typed import TypedFields, at_least, each, positive

WHERE = "cost_growth"

BASE_KEYS = ("horizon", "n_arms", "dim", "n_runs")
"""The base point's keys: ``T`` (rounds of a ``K``, ``d`` or ``B`` cell), ``K``, ``d``, ``B``."""

DEFAULT_POLICIES: dict[str, dict[str, Any]] = {
    "ucb1": {},
    "linucb": {"lam": 1.0},
    "lin_ts": {"lam": 1.0},
    "kernel_ucb": {"lam": 1.0, "max_points": 2000},
    "neural_ucb": {"exploration": "diagonal", "width": 100, "train_steps": 100, "train_every": 100},
    "knn_ucb": {},
    "lnucb_ta": {},
    "hare": {"projections": "random", "mean": "online", "online_lr": 0.05},
}
"""One representative per family (classic, ridge, Thompson, kernel, neural, neighbours, HARE); NeuralUCB in its
cheapest exploration mode (the diagonal of ``Z``)."""


@dataclass(frozen=True)
class CostGrowthSettings(TypedFields):
    """The validated section (module docstring)."""

    base: Mapping[str, int] = field(default_factory=lambda: {"horizon": 60, "n_arms": 20, "dim": 8, "n_runs": 2})
    rounds: Annotated[tuple[int, ...], each(at_least(1))] = (50, 100, 200)
    arms: Annotated[tuple[int, ...], each(at_least(2))] = (10, 20, 40)
    dims: Annotated[tuple[int, ...], each(at_least(2))] = (6, 8, 16)
    runs: Annotated[tuple[int, ...], each(at_least(1))] = (1, 2, 4)
    window: Annotated[int, at_least(1)] = 10
    budget_s: Annotated[float, positive] = 2.0
    n_users: Annotated[int, at_least(1)] = 2
    n_clusters: Annotated[int, at_least(1)] = 4
    base_seed: Annotated[int, at_least(0)] = 0
    policies: Mapping[str, Mapping[str, Any]] = field(
        default_factory=lambda: {k: dict(v) for k, v in DEFAULT_POLICIES.items()}
    )

    def __post_init__(self) -> None:
        base = dict(self.base)
        missing = [key for key in BASE_KEYS if key not in base]
        unknown = sorted(set(base) - set(BASE_KEYS))
        if missing or unknown:
            raise ValueError(f"base: needs exactly {list(BASE_KEYS)} (missing {missing}, unknown {unknown})")
        for key in BASE_KEYS:
            value = base[key]
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"base.{key}: must be an integer >= 1 (got {value!r})")
        for name in ("rounds", "arms", "dims", "runs"):
            values = getattr(self, name)
            if len(values) < 2 or list(values) != sorted(set(values)):
                raise ValueError(f"{name}: needs at least two distinct values in increasing order (got {list(values)})")
        if self.window > min(self.rounds) or self.window > base["horizon"]:
            raise ValueError(f"window: {self.window} exceeds the fewest rounds a cell plays")
        small = [d for d in (*self.dims, base["dim"]) if d <= self.n_users]
        if small:
            raise ValueError(
                f"dims: every d must exceed n_users = {self.n_users} (d = query_dim + n_users; got {small})"
            )
        if self.n_clusters > min(*self.arms, base["n_arms"]):
            raise ValueError(f"n_clusters: {self.n_clusters} exceeds the fewest arms {min(*self.arms, base['n_arms'])}")
        if not self.policies:
            raise ValueError("policies: at least one policy")
        for name, params in self.policies.items():
            try:
                make_config(name, dict(params or {}))
            except (KeyError, TypeError, ValueError) as error:
                raise ValueError(f"policies.{name}: {' '.join(str(error).split())}") from error


def settings_from_config(section: Mapping[str, Any]) -> CostGrowthSettings:
    """:class:`CostGrowthSettings` from a config section; every error is one line ``cost_growth.<key>: ...``."""
    known = set(CostGrowthSettings.__dataclass_fields__)
    unknown = sorted(set(section) - known)
    if unknown:
        raise ValueError(f"{WHERE}: unknown key(s) {unknown}; known: {sorted(known)}")
    values = {
        k: tuple(v) if k in ("rounds", "arms", "dims", "runs") and isinstance(v, list) else v
        for k, v in section.items()
    }
    try:
        return CostGrowthSettings(**values)
    except (TypeError, ValueError) as error:
        message = " ".join(str(error).split()).removeprefix(CostGrowthSettings.__name__ + ".")
        raise ValueError(f"{WHERE}.{message}") from error
