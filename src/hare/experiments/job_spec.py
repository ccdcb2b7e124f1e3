"""A job specification as a typed value: what the round loop reads of a job.

A job is one (experiment, environment, policy label, hyperparameter point) and plays all of its runs batched
(:mod:`hare.experiments.grid`). Its specification is made by :func:`hare.experiments.grid.expand_jobs` from a config
the boundary has checked (:mod:`hare.experiments.settings`), or read by ``hare run --job`` through the same checks
(:func:`hare.experiments.job_boundary.parse_job`); after that boundary it travels as a :class:`JobSpec`, read by
attribute (``spec.n_runs``, ``spec.environment.kind``), frozen, and never checked again.

Its dict form (:meth:`JobSpec.as_dict`) is what JSON sees: the sidecar's ``job``, the job hash, the job table's batch
digests, the job store's keys (:func:`hare.experiments.job_store.job_key`). It equals the dict the specification was
made from, key for key (:meth:`JobSpec.from_dict` keeps every value as given and checks none), its keys in the order
of :data:`JOB_KEYS`, the order :func:`hare.experiments.grid.expand_jobs` has always made (a dict given in another
order comes back in this one; everything that hashes or writes a specification sorts its keys), so the results and
every digest are what they were when the specification was a dict. The optional keys (``max_runs_per_simulation``,
``tuned_grid``, ``fixed``, and the selection's ``selected_from``, ``selection_ties``) appear in it only when set, as
the environment's ``preparation`` does: a config that sets none keeps its digests.

A specification is frozen: its fields cannot be assigned and its mappings are read-only views of its own copies
(a new specification is :func:`dataclasses.replace` of one); it is not hashable (its mappings are not).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

__all__ = ["EnvironmentSpec", "JobSpec"]

ENVIRONMENT_KEYS = ("name", "kind", "params", "dataset", "horizon", "preparation")
"""The keys of an environment's dict form, in its order (``preparation`` only when set)."""

JOB_KEYS = (
    "experiment",
    "environment",
    "label",
    "policy",
    "params",
    "n_runs",
    "role",
    "base_seed",
    "device",
    "record_every",
    "regime",
    "n_logged",
    "max_runs_per_simulation",
    "tuned_grid",
    "fixed",
    "selected_from",
    "selection_ties",
)
"""The keys of a job's dict form, in its order; the last five only when set."""


def read_only(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    """A read-only view of a private copy of ``mapping`` (its values JSON values, as the boundary read them)."""
    return MappingProxyType(copy.deepcopy(dict(mapping)))


def _unknown_keys(given: Mapping[str, Any], known: tuple[str, ...], where: str) -> None:
    """A key the dict form does not have would be lost on the way back (:meth:`JobSpec.as_dict`): refused."""
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise ValueError(f"{where}.{unknown[0]}: not a key of a job specification's {where}")


@dataclass(frozen=True)
class EnvironmentSpec:
    """The environment a job plays: its entry of the config's ``environments`` with the experiment's horizon
    (:func:`hare.experiments.grid.environment_spec`).

    * ``name``: the config's name of the environment (``synthetic_linear``, ``mushroom``); with the experiment, the
      label and the role it names the job's random streams (:func:`hare.experiments.job_setup.environment_keys`);
    * ``kind``: the registered environment class that builds it (:func:`hare.envs.registry.environment_class`:
      ``synthetic``, ``classification``, ``replay``, ...);
    * ``params``: the kind's parameters, a read-only mapping (:meth:`hare.envs.base.BanditEnvironment.make_config`
      types them);
    * ``dataset``: the registered dataset a kind that reads one plays (:mod:`hare.data.registry`), else None;
    * ``horizon``: ``T``, the rounds of one run (the environment's own, else the experiment's);
    * ``preparation``: how the dataset is prepared (:data:`hare.data.prepare.PROTOCOLS`) when it is not the default
      ``project``; None otherwise, and then absent from the dict form.
    """

    name: str
    kind: str
    params: Mapping[str, Any]
    dataset: str | None
    horizon: int
    preparation: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", read_only(self.params))

    @classmethod
    def from_dict(cls, environment: Mapping[str, Any]) -> EnvironmentSpec:
        """The environment of a job specification's ``environment`` dict (checked by the boundary; nothing is checked
        here but that it has no key the dict form lacks)."""
        _unknown_keys(environment, ENVIRONMENT_KEYS, "environment")
        return cls(
            name=environment["name"],
            kind=environment["kind"],
            params=environment["params"],
            dataset=environment["dataset"],
            horizon=environment["horizon"],
            preparation=environment.get("preparation"),
        )

    def as_dict(self) -> dict[str, Any]:
        """The dict form: ``{"name", "kind", "params", "dataset", "horizon"}``, then ``"preparation"`` when set; a
        fresh dict, the caller's to change. The entry :meth:`hare.envs.base.BanditEnvironment.from_entry` and the
        environment classes read."""
        entry = {
            "name": self.name,
            "kind": self.kind,
            "params": copy.deepcopy(dict(self.params)),
            "dataset": self.dataset,
            "horizon": self.horizon,
        }
        if self.preparation is not None:
            entry["preparation"] = self.preparation
        return entry

    def __reduce__(self) -> tuple[Any, ...]:
        # A read-only mapping neither pickles nor deep-copies: both go through the dict form.
        return (type(self).from_dict, (self.as_dict(),))


@dataclass(frozen=True)
class JobSpec:
    """One job: ``n_runs`` runs of one policy point on one environment of one experiment (module docstring).

    * ``experiment``: the config's experiment the job belongs to;
    * ``environment``: the :class:`EnvironmentSpec` it plays;
    * ``label``: the policy entry's label, ``<entry>@<param>=<value>,...`` for a grid point; names the result files
      (``runs/<experiment>/<environment>/<label>.npz``) and the policy's random streams;
    * ``policy``: the registered policy (:func:`hare.policies.base.policy_class`);
    * ``params``: its hyperparameters, a read-only mapping (:func:`hare.policies.base.make_config`); a tuned job's
      are completed by its selection (:func:`hare.experiments.selection.apply_selection`);
    * ``n_runs``: the runs played, ``n`` (the experiment's ``n_runs``, or ``n_tuning_runs`` for a tuning job);
    * ``role``: ``report`` (the runs the tables report) or ``tuning`` (runs on seeds disjoint from them, whose mean
      total regret chooses a tuned job's hyperparameters);
    * ``base_seed``: the config's seed, the root of every run key (:func:`hare.random.run_keys`);
    * ``device``: ``cpu``, ``cuda`` or ``auto`` (:func:`hare.experiments.job_setup.resolve_device`);
    * ``record_every``: the curves' checkpoint spacing in rounds (the last round is always recorded);
    * ``regime``: the information regime, ``cold`` or ``warm`` (:data:`hare.regimes.REGIMES`; paper: sec:regimes);
    * ``n_logged``: ``M``, the logged interactions every policy learns from first (0 in the cold regime);
    * ``max_runs_per_simulation``: the most runs one simulation holds (the job plays in chunks of at most that
      many: :func:`hare.experiments.run_chunks.run_chunks`); None: no limit;
    * ``tuned_grid``: a tuned report job's grid, ``{param: (value, ...)}`` (the parameters sorted by
      :func:`hare.experiments.grid.expand_jobs`), whose point of lowest tuning regret it plays; None for a job that
      is not tuned;
    * ``fixed``: why an untuned entry of a tuned experiment keeps its values (shown by the tables); None otherwise;
    * ``selected_from``, ``selection_ties``: set by the selection on a tuned job, the chosen tuning label and every
      label tied with it (the chosen one included); None before it.

    The optional fields are None exactly when their key is absent from the dict form.
    """

    experiment: str
    environment: EnvironmentSpec
    label: str
    policy: str
    params: Mapping[str, Any]
    n_runs: int
    role: str
    base_seed: int
    device: str
    record_every: int
    regime: str
    n_logged: int
    max_runs_per_simulation: int | None = None
    tuned_grid: Mapping[str, tuple[Any, ...]] | None = None
    fixed: str | None = None
    selected_from: str | None = None
    selection_ties: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", read_only(self.params))
        if self.tuned_grid is not None:
            grid = {key: tuple(values) for key, values in self.tuned_grid.items()}
            object.__setattr__(self, "tuned_grid", read_only(grid))
        if self.selection_ties is not None:
            object.__setattr__(self, "selection_ties", tuple(self.selection_ties))

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> JobSpec:
        """The job of a specification dict the boundary has read (:mod:`hare.experiments.settings`,
        :func:`hare.experiments.job_boundary.parse_job`) or a sidecar recorded (its ``job``): every value as given, no
        check of any (the boundary made them), only a key the dict form lacks refused (it would be lost)."""
        _unknown_keys(spec, JOB_KEYS, "job")
        return cls(
            experiment=spec["experiment"],
            environment=EnvironmentSpec.from_dict(spec["environment"]),
            label=spec["label"],
            policy=spec["policy"],
            params=spec["params"],
            n_runs=spec["n_runs"],
            role=spec["role"],
            base_seed=spec["base_seed"],
            device=spec["device"],
            record_every=spec["record_every"],
            regime=spec["regime"],
            n_logged=spec["n_logged"],
            max_runs_per_simulation=spec.get("max_runs_per_simulation"),
            tuned_grid=spec.get("tuned_grid"),
            fixed=spec.get("fixed"),
            selected_from=spec.get("selected_from"),
            selection_ties=spec.get("selection_ties"),
        )

    def as_dict(self) -> dict[str, Any]:
        """The dict form (module docstring): the keys of :data:`JOB_KEYS` in that order, an optional one only when
        set, the grid's values and the ties as lists; a fresh dict, the caller's to change. What the sidecar
        records, the job hash, the batch digest and the job store's key read."""
        spec = {
            "experiment": self.experiment,
            "environment": self.environment.as_dict(),
            "label": self.label,
            "policy": self.policy,
            "params": copy.deepcopy(dict(self.params)),
            "n_runs": self.n_runs,
            "role": self.role,
            "base_seed": self.base_seed,
            "device": self.device,
            "record_every": self.record_every,
            "regime": self.regime,
            "n_logged": self.n_logged,
        }
        if self.max_runs_per_simulation is not None:
            spec["max_runs_per_simulation"] = self.max_runs_per_simulation
        if self.tuned_grid is not None:
            spec["tuned_grid"] = {key: copy.deepcopy(list(values)) for key, values in self.tuned_grid.items()}
        if self.fixed is not None:
            spec["fixed"] = self.fixed
        if self.selected_from is not None:
            spec["selected_from"] = self.selected_from
        if self.selection_ties is not None:
            spec["selection_ties"] = list(self.selection_ties)
        return spec

    @property
    def tuned(self) -> bool:
        """Whether the job plays the point its selection chose on tuning runs (it has a ``tuned_grid``)."""
        return self.tuned_grid is not None

    def __reduce__(self) -> tuple[Any, ...]:
        # A read-only mapping neither pickles nor deep-copies: both go through the dict form.
        return (type(self).from_dict, (self.as_dict(),))
