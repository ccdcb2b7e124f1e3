"""The ``pool_scaling`` config section (:mod:`hare.experiments.studies.pool_scaling`), checked in one place.

:func:`settings_from_config` turns the section into :class:`PoolScalingSettings` or raises ``ValueError`` in one
line naming the key at fault (``pool_scaling.<key>: ...``); the config boundary
(:func:`hare.experiments.settings.sections.check_sections`) runs it on the whole config, and ``hare pool-scaling`` on
the section it is given.

The cluster-count rules, ``N -> C`` for a pool of ``N`` items (:func:`cluster_count`):

* ``fixed``: ``C = min(c0, N)`` (``c0`` the section's ``fixed_clusters``; at most one cluster per item);
* ``sqrt``: ``C = ceil(sqrt(N))``;
* ``linear``: ``C = ceil(N / 100)``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hare.model.covariance_approx import COVARIANCE_KINDS

WHERE = "pool_scaling"
CLUSTER_RULES = ("fixed", "sqrt", "linear")
"""The rules of :func:`cluster_count`, the cluster count ``C`` of a pool of ``N`` items."""
ITEMS_PER_CLUSTER = 100
"""The ``linear`` rule's pool items per cluster: ``C = ceil(N / 100)``."""
REGRET_KEYS = ("horizon", "n_runs", "base_seed", "env_params", "hare_params")
AXES = ("covariance", "covariance_rank")
"""HARE parameters the regret comparison sets itself (the covariance kind and its rank)."""


def cluster_count(rule: str, n_items: int, fixed_clusters: int) -> int:
    """``C`` of a pool of ``n_items`` items under ``rule`` (module docstring); ``ValueError`` on an unknown rule."""
    if rule == "fixed":
        return min(int(fixed_clusters), int(n_items))
    if rule == "sqrt":
        return math.isqrt(n_items - 1) + 1 if n_items > 1 else 1  # ceil(sqrt(N)), exact in integers
    if rule == "linear":
        return -(-int(n_items) // ITEMS_PER_CLUSTER)
    raise ValueError(f"unknown cluster rule {rule!r}; known: {list(CLUSTER_RULES)}")


def _require(condition: bool, key: str, message: str) -> None:
    if not condition:
        raise ValueError(f"{WHERE}.{key}: {message}")


def _is_int(value: Any, low: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class PoolScalingSettings:
    """The ``pool_scaling`` section.

    pool_sizes: the ``N`` grid (distinct integers >= 2, increasing); cluster_rules: a subset of
    :data:`CLUSTER_RULES`; fixed_clusters: ``c0`` of the ``fixed`` rule; kinds: a subset of
    :data:`COVARIANCE_KINDS`; rank: ``r`` of ``low_rank`` (``1 <= r <= d_k``); n_heads ``H``, n_runs ``B``,
    key_dim ``d_k``; rounds: timed rounds per cell (the median is reported), warmup: untimed rounds before them;
    alpha: the bonus weight of the timed select; lam: the ridge; memory_cap_mb: a cell (or the per-item line) whose
    predicted memory exceeds it is skipped; base_seed; device: ``cpu``, ``cuda`` or ``auto``; regret: the
    HARE-Sim comparison (``horizon``, ``n_runs >= 2``, ``base_seed``, ``env_params``, ``hare_params`` without
    ``covariance`` or ``covariance_rank``).
    """

    pool_sizes: tuple[int, ...] = (1_000, 3_000, 10_000)
    cluster_rules: tuple[str, ...] = CLUSTER_RULES
    fixed_clusters: int = 16
    kinds: tuple[str, ...] = COVARIANCE_KINDS
    rank: int = 4
    n_heads: int = 2
    n_runs: int = 2
    key_dim: int = 16
    rounds: int = 5
    warmup: int = 2
    alpha: float = 1.0
    lam: float = 1.0
    memory_cap_mb: float = 2048.0
    base_seed: int = 0
    device: str = "cpu"
    regret: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        sizes = self.pool_sizes
        _require(
            isinstance(sizes, list | tuple) and len(sizes) >= 1 and all(_is_int(n, 2) for n in sizes),
            "pool_sizes",
            f"must be a list of integers >= 2 (got {sizes!r})",
        )
        _require(
            all(a < b for a, b in zip(sizes, sizes[1:], strict=False)),
            "pool_sizes",
            f"must be increasing (got {sizes!r})",
        )
        for key, known in (("cluster_rules", CLUSTER_RULES), ("kinds", COVARIANCE_KINDS)):
            values = getattr(self, key)
            _require(
                isinstance(values, list | tuple) and len(values) >= 1 and len(set(values)) == len(values),
                key,
                f"must be a non-empty list of distinct names (got {values!r})",
            )
            unknown = [v for v in values if v not in known]
            _require(not unknown, key, f"unknown {unknown}; known: {list(known)}")
        for key, low in (
            ("fixed_clusters", 1),
            ("rank", 1),
            ("n_heads", 1),
            ("n_runs", 1),
            ("key_dim", 1),
            ("rounds", 1),
            ("warmup", 0),
            ("base_seed", 0),
        ):
            value = getattr(self, key)
            _require(_is_int(value, low), key, f"must be an integer >= {low} (got {value!r})")
        _require(self.rank <= self.key_dim, "rank", f"must be <= key_dim {self.key_dim} (got {self.rank})")
        _require(_is_number(self.alpha) and self.alpha >= 0, "alpha", f"must be a number >= 0 (got {self.alpha!r})")
        _require(_is_number(self.lam) and self.lam > 0, "lam", f"must be a number > 0 (got {self.lam!r})")
        _require(
            _is_number(self.memory_cap_mb) and self.memory_cap_mb > 0,
            "memory_cap_mb",
            f"must be a number > 0 (got {self.memory_cap_mb!r})",
        )
        _require(
            isinstance(self.device, str) and (self.device in ("cpu", "auto") or self.device.startswith("cuda")),
            "device",
            f"must be cpu, cuda or auto (got {self.device!r})",
        )
        object.__setattr__(self, "pool_sizes", tuple(sizes))
        object.__setattr__(self, "cluster_rules", tuple(self.cluster_rules))
        object.__setattr__(self, "kinds", tuple(self.kinds))
        object.__setattr__(self, "regret", check_regret(self.regret, self.kinds, self.rank))

    @property
    def memory_cap_bytes(self) -> int:
        return int(self.memory_cap_mb * 2**20)


def check_regret(section: Any, kinds: tuple[str, ...], rank: int) -> dict[str, Any]:
    """The ``regret`` subsection with its defaults filled in; ``ValueError`` naming ``pool_scaling.regret.<key>``."""
    from hare.envs.synthetic import SyntheticConfig
    from hare.policies.base import make_config

    _require(isinstance(section, Mapping), "regret", f"must be a mapping (got {section!r})")
    unknown = sorted(set(section) - set(REGRET_KEYS))
    _require(not unknown, "regret", f"unknown key(s) {unknown}; known: {sorted(REGRET_KEYS)}")
    regret = {"horizon": 200, "n_runs": 3, "base_seed": 0, "env_params": {}, "hare_params": {}, **section}
    for key, low in (("horizon", 1), ("n_runs", 2), ("base_seed", 0)):
        _require(_is_int(regret[key], low), f"regret.{key}", f"must be an integer >= {low} (got {regret[key]!r})")
    for key in ("env_params", "hare_params"):
        _require(isinstance(regret[key], Mapping), f"regret.{key}", f"must be a mapping (got {regret[key]!r})")
    try:
        SyntheticConfig(**regret["env_params"])
    except (TypeError, ValueError) as error:
        raise ValueError(f"{WHERE}.regret.env_params: {error}") from error
    fixed = [key for key in AXES if key in regret["hare_params"]]
    _require(not fixed, f"regret.hare_params.{fixed[0] if fixed else ''}", "set by the study for every kind")
    for kind in kinds:
        try:
            config = make_config("hare", hare_params(regret["hare_params"], kind, rank))
            config.check_regime("cold")
            config.check_environment("synthetic")
        except (TypeError, ValueError) as error:
            raise ValueError(f"{WHERE}.regret.hare_params ({kind}): {error}") from error
    return {**regret, "env_params": dict(regret["env_params"]), "hare_params": dict(regret["hare_params"])}


def hare_params(common: Mapping[str, Any], kind: str, rank: int) -> dict[str, Any]:
    """HARE's parameters for covariance ``kind``: ``common`` with ``covariance`` and (low-rank) ``covariance_rank``."""
    return {**common, "covariance": kind, **({"covariance_rank": int(rank)} if kind == "low_rank" else {})}


def settings_from_config(section: Any) -> PoolScalingSettings:
    """:class:`PoolScalingSettings` from the config section; unknown keys and bad values are one line naming the key."""
    if not isinstance(section, Mapping):
        raise ValueError(f"{WHERE}: must be a mapping (got {section!r})")
    known = set(PoolScalingSettings.__dataclass_fields__)
    unknown = sorted(set(section) - known)
    if unknown:
        raise ValueError(f"{WHERE}: unknown key(s) {unknown}; known: {sorted(known)}")
    return PoolScalingSettings(**section)
