"""The ``theory.convergence`` config section (:mod:`hare.experiments.studies.convergence`), checked in one place.

:func:`settings_from_config` turns the section into :class:`ConvergenceSettings` or raises ``ValueError`` in one line
naming the key at fault (``theory.convergence.<key>: ...``). The settings refuse exactly what the study's probe
protocol cannot measure: synthesize mode, and the ``inverse_sqrt`` schedule, which would read the probes' round index
``t = 2**36 + p`` (the study's docstring).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hare.envs.synthetic import SyntheticConfig
from hare.policies.base import make_config
from hare.regimes import REGIMES
from hare.typed import TypedFields

WHERE = "theory.convergence"
DEFAULT_VARIANTS: dict[str, dict[str, Any]] = {
    "cold_frozen": {
        "regime": "cold",
        "name": "cold start, $W$ frozen",
        "params": {"projections": "random", "mean": "online", "online_lr": 0.0},
    },
    "cold_online": {
        "regime": "cold",
        "name": "cold start, $W$ online",
        "params": {"projections": "random", "mean": "online", "online_lr": 0.05},
    },
    "warm_frozen": {
        "regime": "warm",
        "name": "warm start, $W$ frozen",
        "params": {"projections": "learned", "mean": "online", "online_lr": 0.0},
    },
    "warm_online": {
        "regime": "warm",
        "name": "warm start, $W$ online",
        "params": {"projections": "learned", "mean": "online", "online_lr": 0.05},
    },
    "oracle_reference": {
        "regime": "cold",
        "name": "reference: true $W^*$, frozen",
        "params": {"projections": "oracle", "mean": "online", "online_lr": 0.0},
    },
}
"""label -> regime, display name and HARE params (over ``hare_params``). The mean is online in all of them.
The four measured variants: projections frozen or taking online SGD steps, from random (cold) or fitted on
the logs (warm). The reference plays the true projections ``W*`` (no approximation error; only the user
states are estimated): what the choices and the slope look like on this instance without an approximation term."""


# --------------------------------------------------------------------------
# Settings
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ConvergenceSettings(TypedFields):
    """The ``theory.convergence`` config section, validated on construction (errors name
    ``theory.convergence.<field>``).

    env_params: HARE-Sim parameters (:class:`SyntheticConfig`); horizon: online rounds ``T``;
    n_runs: runs per variant; n_logged: ``M`` of the warm variants; n_probes: probe (query, user)
    pairs; record_every: rounds between measurements (the horizon is always recorded);
    base_seed: seed of environment, policy and probe keys; hare_params: HARE params common to
    every variant; variants: label -> ``{regime: cold|warm, params: {...}, name: display name}``
    (``name`` optional); device: ``cpu``, ``cuda`` or ``auto``.
    """

    env_params: Mapping[str, Any] = field(default_factory=dict)
    horizon: int = 2000
    n_runs: int = 5
    n_logged: int = 1000
    n_probes: int = 64
    record_every: int = 20
    base_seed: int = 0
    hare_params: Mapping[str, Any] = field(default_factory=lambda: {"alpha": 0.1})
    variants: Mapping[str, Mapping[str, Any]] = field(
        default_factory=lambda: {k: dict(v) for k, v in DEFAULT_VARIANTS.items()}
    )
    device: str = "cpu"

    def __post_init__(self) -> None:
        for name in ("horizon", "n_runs", "n_probes", "record_every"):
            value = getattr(self, name)
            _require(
                isinstance(value, int) and not isinstance(value, bool) and value >= 1,
                name,
                f"must be an integer >= 1 (got {value!r})",
            )
        _require(
            isinstance(self.n_logged, int) and not isinstance(self.n_logged, bool) and self.n_logged >= 0,
            "n_logged",
            f"must be an integer >= 0 (got {self.n_logged!r})",
        )
        _require(
            isinstance(self.base_seed, int) and self.base_seed >= 0,
            "base_seed",
            f"must be an integer >= 0 (got {self.base_seed!r})",
        )
        _require(
            self.record_every <= self.horizon,
            "record_every",
            f"must be <= horizon {self.horizon} (got {self.record_every})",
        )
        _require(
            self.record_every < self.horizon,  # the recorded rounds: every record_every rounds, and the horizon
            "record_every",
            "must leave at least two recorded rounds (stability compares consecutive ones)",
        )
        _require(
            self.device in ("cpu", "auto") or str(self.device).startswith("cuda"),
            "device",
            f"must be cpu, cuda or auto (got {self.device!r})",
        )
        _require(isinstance(self.env_params, Mapping), "env_params", "must be a mapping of HARE-Sim parameters")
        try:
            SyntheticConfig(**self.env_params)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{WHERE}.env_params: {error}") from error
        _require(isinstance(self.hare_params, Mapping), "hare_params", "must be a mapping of HARE parameters")
        _require(
            isinstance(self.variants, Mapping) and len(self.variants) >= 1,
            "variants",
            "must map at least one label to a variant",
        )
        for label, variant in self.variants.items():
            self._check_variant(str(label), variant)
        object.__setattr__(self, "env_params", dict(self.env_params))
        object.__setattr__(self, "hare_params", dict(self.hare_params))
        object.__setattr__(
            self, "variants", {str(k): {**v, "params": dict(v.get("params") or {})} for k, v in self.variants.items()}
        )

    def _check_variant(self, label: str, variant: Any) -> None:
        where = f"variants.{label}"
        _require(isinstance(variant, Mapping), where, f"must be a mapping with regime and params (got {variant!r})")
        unknown = sorted(set(variant) - {"regime", "params", "name"})
        _require(not unknown, where, f"unknown key(s) {unknown}; known: ['name', 'params', 'regime']")
        regime = variant.get("regime")
        _require(regime in REGIMES, f"{where}.regime", f"must be one of {REGIMES} (got {regime!r})")
        _require(
            regime != "warm" or self.n_logged >= 1,
            "n_logged",
            f"must be >= 1: variant {label!r} is warm (got {self.n_logged})",
        )
        params = variant.get("params") or {}
        _require(
            isinstance(params, Mapping), f"{where}.params", f"must be a mapping of HARE parameters (got {params!r})"
        )
        _require(
            variant_params(self.hare_params, params).get("mode", "select") == "select",
            f"{where}.params.mode",
            "the check measures cluster choices: select mode only",
        )
        try:
            config = make_config("hare", variant_params(self.hare_params, params))
            config.check_environment("synthetic")
            config.check_regime(regime)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{WHERE}.{where}.params: {error}") from error
        _require(
            config.alpha_schedule != "inverse_sqrt",
            f"{where}.params.alpha_schedule",
            "'inverse_sqrt' reads the round index, which the probes set far from the run's",
        )
        name = variant.get("name", label)
        _require(
            isinstance(name, str) and name.strip() != "", f"{where}.name", f"must be a non-empty string (got {name!r})"
        )

    def display_name(self, label: str) -> str:
        return str(self.variants[label].get("name", label))


def _require(condition: bool, name: str, message: str) -> None:
    if not condition:
        raise ValueError(f"{WHERE}.{name}: {message}")


def variant_params(hare_params: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, Any]:
    """HARE params of a variant: the common ones, overridden by the variant's."""
    return {**hare_params, **params}


def settings_from_config(section: Mapping[str, Any]) -> ConvergenceSettings:
    """:class:`ConvergenceSettings` from a config section; unknown keys are an error naming them."""
    known = set(ConvergenceSettings.__dataclass_fields__)
    unknown = sorted(set(section) - known)
    if unknown:
        raise ValueError(f"{WHERE}: unknown key(s) {unknown}; known: {sorted(known)}")
    try:
        return ConvergenceSettings(**section)
    except (
        TypeError,
        ValueError,
    ) as error:  # the dataclass names its field as ConvergenceSettings.<field>: the config's key path instead
        message = str(error).removeprefix(ConvergenceSettings.__name__ + ".")
        raise ValueError(message if message.startswith(f"{WHERE}.") else f"{WHERE}.{message}") from error
