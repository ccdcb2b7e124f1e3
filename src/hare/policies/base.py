"""The batched policy interface, the policy registry and the shared exploration rules.

A policy is a ``torch.nn.Module`` whose state (counts, covariances, networks) lives in
buffers and parameters with a leading run dimension, so ``.to(device)`` and
``state_dict()`` work for all of them. It exposes

    select(observation) -> arms    (n_runs,) int64
    update(observation, arms, rewards)
    warm_start(logs)               the warm regime's logged interactions, before round 1

on ``(n_runs, ...)`` tensors. Hyperparameters are a frozen dataclass validated at
construction; each policy registers under the config name used everywhere else
(config files, result files, tables, the paper).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, ClassVar

import torch
from torch import nn

from hare.envs.base import BanditEnvironment, LoggedRounds, Observation
from hare.envs.registry import environment_class
from hare.model.covariance import shared_vector
from hare.random import CounterRNG
from hare.registry import Registry
from hare.typed import TypedFields


@dataclass(frozen=True)
class PolicyConfig(TypedFields):
    """Base of every hyperparameter dataclass: each field is checked against its annotation and its declared bound
    (:class:`hare.typed.TypedFields`: ``alpha: Annotated[float, nonnegative]``, each bound written once, on its field),
    then subclasses check the rules between fields in ``__post_init__`` (:meth:`require`)."""

    tunable: ClassVar[
        tuple[str, ...]
    ] = ()  # exploration/regularisation hyperparameters a tuned grid may search (hare.experiments.grid)

    def require(self, condition: bool, field: str, message: str) -> None:
        """Raise ``ValueError`` ``<Class>.<field>: <message> (got <value>)`` unless ``condition``: a rule between
        fields (a one-field bound belongs on the field's annotation, :mod:`hare.typed`)."""
        if not condition:
            raise ValueError(f"{type(self).__name__}.{field}: {message} (got {getattr(self, field)!r})")

    def check_environment(self, kind: str) -> None:
        """Raise ``ValueError`` if these hyperparameters cannot run on environments of ``kind``.

        Called by config validation, before any job starts. Here: a synthesize-mode config (:func:`synthesizes`) needs
        an environment that rewards an output ``z`` (``synthesis_outcome``); a subclass that checks more calls this
        too.
        """
        if synthesizes(self):
            if not callable(getattr(environment_class(kind), "synthesis_outcome", None)):
                raise ValueError(
                    f"{type(self).__name__}.mode: 'synthesize' needs an environment that rewards an output z "
                    f"(synthesis_outcome); a {kind} environment rewards pool items only"
                )

    def check_regime(self, regime: str) -> None:
        """Raise ``ValueError`` if these hyperparameters need information the regime (``cold | warm``) withholds.

        Called by config validation, before any job starts.
        """


MODES = ("select", "synthesize")
"""A policy's modes: it selects an arm, or it outputs a point ``z`` of the item space (:func:`synthesizes`)."""


def synthesizes(config: PolicyConfig) -> bool:
    """Whether a policy of hyperparameters ``config`` plays synthesize mode (its ``mode`` field, where it has one, is
    ``synthesize``): each round it outputs a point ``z`` of the item space (``synthesize(observation) -> z``
    ``(n_runs, d)``) and learns from the environment's reward of ``z`` (``update_synthesis(observation, z,
    rewards)``) instead of selecting an arm (:func:`hare.experiments.simulation.simulate`)."""
    return getattr(config, "mode", "select") == "synthesize"


class Policy(nn.Module, ABC):
    """A bandit policy batched over ``n_runs`` independent runs.

    A policy whose config :func:`synthesizes` also implements ``synthesize(observation) -> z`` and
    ``update_synthesis(observation, z, rewards)``; :attr:`synthesizes` tells the round loop which pair to call.
    """

    config_class: ClassVar[type[PolicyConfig]]
    per_run_hyperparameters: ClassVar[tuple[str, ...]] = ()
    """Tunable hyperparameters whose value may differ between the runs of one simulation, so that a tuning
    grid plays as one batch (:func:`build_grid_policy`); the policy reads each through :meth:`hyperparameter`."""
    round_cost_grows: ClassVar[bool] = True
    """Whether the work of a round grows with the rounds played (a policy that reads its history, a kernel
    dictionary filling up); False for a family whose state has a fixed size (the cost model then carries the measured
    rounds' mean cost over the horizon instead of a fitted slope, :func:`hare.experiments.studies.cost_schedule.
    saturation_of`)."""

    def __init__(self, config: PolicyConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__()
        self.config = config
        self.n_runs = env.n_runs
        self.n_arms = env.n_arms
        self.dim = env.dim
        self.register_buffer("run_keys", keys.clone())

    @property
    def synthesizes(self) -> bool:
        """Whether the policy plays synthesize mode (:func:`synthesizes` of its config)."""
        return synthesizes(self.config)

    @property
    def rng(self) -> CounterRNG:
        """Policy randomness, a function of the run keys only (see :mod:`hare.random`); one generator
        per keys tensor (rebuilt when the keys move or are loaded in place), so its cached counter heads
        are reused from round to round."""
        keys = self.run_keys
        cached = self.__dict__.get("_rng")
        if cached is None or cached[0] is not keys or cached[1] != keys._version:
            cached = (keys, keys._version, CounterRNG(keys))
            self.__dict__["_rng"] = cached
        return cached[2]

    def hyperparameter(self, name: str, like: torch.Tensor) -> float | torch.Tensor:
        """The value of hyperparameter ``name`` for an expression over ``like`` ``(n_runs, ...)``.

        The config's float, or, in a grid simulation, the per-run values ``(n_runs, 1, ..., 1)`` (one unit dim per
        trailing dim of ``like``) in ``like``'s dtype: ``value * like`` then rounds exactly as the float would, run by
        run.
        """
        values = self._buffers.get(f"per_run_{name}")
        if values is None:
            return getattr(self.config, name)
        return values.to(like.dtype).view(-1, *([1] * (like.dim() - 1)))

    @classmethod
    def memory_bytes(cls, config: PolicyConfig, arms: int, dim: int, length: int, clusters: int) -> tuple[int, int]:
        """Estimated bytes of one run's state of this policy, ``(bytes that grow with the rounds, the other bytes)``,
        before it is built (the pre-flight memory check, :mod:`hare.experiments.memory`): hyperparameters ``config``,
        ``arms`` arms of ``dim`` features, ``length`` interactions fed (the history capacity: rounds plus warm start)
        and ``clusters`` clusters in the environment's pool. It counts what dominates, arrays that scale with the
        arms, the features and the rounds. Here, what every policy holds: per-arm counts and sums, ``(arms,)`` float64
        each, ``16 arms``; a family adds its own state to ``super()``'s."""
        return 0, 16 * arms

    @classmethod
    def round_bytes(cls, config: PolicyConfig, arms: int, dim: int, runs: int) -> int:
        """Estimated bytes of the temporaries of one round over ``runs`` runs beyond the state (:meth:`memory_bytes`);
        none here."""
        return 0

    @abstractmethod
    def select(self, observation: Observation) -> torch.Tensor:
        """Arms to pull, ``(n_runs,)`` int64."""

    @abstractmethod
    def update(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        """Learn from the pulled ``arms`` ``(n_runs,)`` and their ``rewards`` ``(n_runs,)``."""

    def warm_start(self, logs: LoggedRounds) -> None:
        """Learn from ``M`` logged interactions before round 1 (the warm regime, paper: sec:regimes).

        Each logged interaction ``m`` goes through :meth:`update` in logged order as round ``t = m``,
        so the state equals that of a policy that played those arms online; the online rounds then
        continue at ``t = M`` (:func:`hare.experiments.simulation.simulate`). Override only where feeding
        ``update`` would be wrong or incomplete (HARE also fits its projections from the logs).
        """
        for m in range(len(logs)):
            observation, arms, rewards = logs.step(m, self.n_runs)
            self.update(observation, arms, rewards)

    def trajectories(self) -> dict[str, torch.Tensor]:
        """Per-run series of the policy's own state worth recording along the rounds (e.g. a learned bonus weight),
        ``{name: (n_runs, ...)}``; a job stores each at its recorded rounds as ``name`` ``(n_runs, n_checkpoints, ...)``
        (:func:`hare.experiments.run.run_simulations`). None by default."""
        return {}

    def tie_break(self, scores: torch.Tensor, t: int, tolerance: torch.Tensor | float = 0.0) -> torch.Tensor:
        """Argmax over the last dim with uniformly random ties, ``(n_runs, n) -> (n_runs,)``.

        The tie noise ``u ~ U(0, 1)^n`` (stream ``"ties"``, counter ``t``) only matters in rows
        whose maximum is not unique, so it is drawn only when some row has such a tie: the arms
        are those of :func:`argmax_random_ties` with the noise always drawn. ``tolerance``
        (a scalar or ``(n_runs, 1)``): scores within it of their row's maximum tie with it, for
        scores known only up to a rounding-error bound (0: exact ties only).
        """
        is_max = scores >= scores.max(dim=-1, keepdim=True).values - tolerance
        if bool((is_max.sum(-1) != 1).any()):
            return masked_argmax(is_max, self.rng.uniform("ties", t, (scores.shape[-1],), scores.dtype))
        return is_max.byte().argmax(dim=-1)


def pulled_contexts(contexts: torch.Tensor, arms: torch.Tensor) -> torch.Tensor:
    """The context of each run's pulled arm: ``(n_runs, n_arms, dim)``, ``(n_runs,)`` -> ``(n_runs, dim)``.

    A context shared by all arms (expanded with stride 0) is read once, without indexing; otherwise
    one ``gather`` (advanced indexing ``contexts[runs, arms]`` is far slower on expanded tensors).
    """
    shared = shared_vector(contexts, tuple(contexts.shape[1:-1]))
    if shared is not None:
        return shared
    return contexts.gather(1, arms[:, None, None].expand(-1, 1, contexts.shape[-1])).squeeze(1)


def argmax_random_ties(scores: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
    """Index of the maximum of each row of ``scores`` ``(n_runs, n)``; exact ties go to the largest ``noise``."""
    return masked_argmax(scores >= scores.max(dim=-1, keepdim=True).values, noise)


def masked_argmax(mask: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
    """Index of the largest ``noise`` ``(n_runs, n)`` among the ``True`` entries of each row of ``mask``; noise in (0,
    1)."""
    return torch.where(mask, noise, -1.0).argmax(dim=-1)


def upper_confidence_bound(mean: torch.Tensor, width: torch.Tensor, alpha: float | torch.Tensor) -> torch.Tensor:
    """UCB index ``mean + alpha * width`` (any broadcastable shapes).

    The rule reads a posterior (its mean and its width, e.g. ``sqrt(x^T A^{-1} x)``)
    and nothing of the model that produced it.
    """
    return mean + alpha * width


KL_CLAMP = 1e-15
"""``q`` is clamped to ``[KL_CLAMP, 1 - KL_CLAMP]`` inside :func:`bernoulli_kl`, so the divergence stays finite."""


def bernoulli_kl(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """``kl(p, q) = p log(p/q) + (1-p) log((1-p)/(1-q))`` elementwise, with ``0 log 0 = 0`` (any broadcastable
    shapes; ``q`` clamped to ``[KL_CLAMP, 1 - KL_CLAMP]``)."""
    q = q.clamp(KL_CLAMP, 1.0 - KL_CLAMP)
    return torch.xlogy(p, p) - torch.xlogy(p, q) + torch.xlogy(1.0 - p, 1.0 - p) - torch.xlogy(1.0 - p, 1.0 - q)


def kl_upper_bound(mean: torch.Tensor, level: torch.Tensor, iterations: int) -> torch.Tensor:
    """The Bernoulli KL upper confidence bound ``max{q in [mean, 1] : kl(mean, q) <= level}`` by bisection
    (Garivier & Cappé 2011, Alg. 1 with ``level = (log t + c log log t) / n_a``; LNUCB-TA's kNN-KL-UCB).

    ``mean`` ``(...)`` in [0, 1] and ``level`` broadcastable to it. Every entry is bisected at once; ``iterations``
    halvings of ``[mean, 1]`` leave a bracket narrower than ``2^-iterations``, whose lower end is returned, so the bound
    never violates the constraint. The terms of :func:`bernoulli_kl` that do not depend on ``q`` are computed once,
    outside the loop, and combined in the same order, so the result equals bisection on :func:`bernoulli_kl` bit for
    bit.
    """
    mean = mean.expand(torch.broadcast_shapes(mean.shape, level.shape))
    complement = 1.0 - mean
    self_term, complement_self_term = torch.xlogy(mean, mean), torch.xlogy(complement, complement)
    low, high = mean.clone(), torch.ones_like(mean)
    middle, q, divergence, complement_q = (torch.empty_like(mean) for _ in range(4))
    inside = torch.empty(mean.shape, dtype=torch.bool, device=mean.device)
    for _ in range(iterations):  # in place: ~12 small operations a halving, no allocation
        torch.add(low, high, out=middle).mul_(0.5)
        torch.clamp(middle, KL_CLAMP, 1.0 - KL_CLAMP, out=q)
        torch.sub(self_term, torch.xlogy(mean, q, out=divergence), out=divergence).add_(complement_self_term)
        torch.xlogy(complement, torch.neg(q, out=complement_q).add_(1.0), out=complement_q)  # 1 - q, exactly
        torch.le(divergence.sub_(complement_q), level, out=inside)
        torch.where(inside, middle, low, out=low)
        torch.where(inside, high, middle, out=high)
    return low


def temporal_attention_rate(
    alpha_0: float | torch.Tensor,
    pulls: torch.Tensor,
    global_mean: torch.Tensor,
    local_mean: torch.Tensor,
    kappa: float,
) -> torch.Tensor:
    """LNUCB-TA's exploration rate (Khosravi et al., 2025, Alg. 3 line 4, eq. 4), any broadcastable shapes:

        alpha_a = alpha_0 / (N_a + 1) * (kappa g + (1 - kappa) n_a),

    ``N_a`` pulls of arm ``a``, ``g`` the global and ``n_a`` the arm's mean reward. LNUCB-TA applies it per arm;
    HARE's ``lnucb_ta`` schedule per cluster, with clusters as arms.
    """
    return alpha_0 / (pulls + 1.0) * (kappa * global_mean + (1.0 - kappa) * local_mean)


def _load_policies() -> None:
    import hare.policies  # noqa: F401  (registers all families)


_REGISTRY: Registry[type[Policy]] = Registry("policy name", "policy", "policies", "policy_name", _load_policies)


def register_policy(name: str) -> Callable[[type[Policy]], type[Policy]]:
    """Class decorator: make a policy constructible by its config name."""
    return _REGISTRY.register(name)


def policy_names() -> list[str]:
    """Every registered policy name, sorted."""
    return _REGISTRY.names()


def policy_class(name: str) -> type[Policy]:
    """The policy registered under ``name``; ``KeyError`` lists the valid names."""
    return _REGISTRY.get(name)


def make_config(name: str, params: dict[str, Any]) -> PolicyConfig:
    """Validated hyperparameters of policy ``name``; unknown keys are an error naming them."""
    config_class = policy_class(name).config_class
    known = {f.name for f in fields(config_class)}
    unknown = sorted(set(params) - known)
    if unknown:
        raise ValueError(f"policy {name!r}: unknown hyperparameter(s) {unknown}; known: {sorted(known)}")
    return config_class(**params)


def tunable_values(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """``{hyperparameter: value}`` of policy ``name``'s tunable hyperparameters under ``params`` (defaults filled
    in)."""
    config = make_config(name, params)
    return {field: getattr(config, field) for field in type(config).tunable}


def build_policy(name: str, params: dict[str, Any], env: BanditEnvironment, keys: torch.Tensor) -> Policy:
    """Construct policy ``name`` with ``params`` for ``env`` and run keys ``(n_runs,)``."""
    return policy_class(name)(make_config(name, params), env, keys)


def grid_differences(name: str, points: list[dict[str, Any]]) -> list[str]:
    """The hyperparameters whose validated values differ between ``points`` (parameter dicts of policy ``name``),
    sorted."""
    configs = [make_config(name, params) for params in points]
    return sorted(
        f.name for f in fields(configs[0]) if any(getattr(c, f.name) != getattr(configs[0], f.name) for c in configs)
    )


def build_grid_policy(name: str, points: list[dict[str, Any]], env: BanditEnvironment, keys: torch.Tensor) -> Policy:
    """Policy ``name`` over the ``P = len(points)`` points of a grid at once: ``env.n_runs = P n`` runs, runs
    ``[i n, (i + 1) n)`` with the hyperparameters of ``points[i]`` and the keys ``keys[i n:(i + 1) n]``.

    Each run plays exactly as it would in a policy built from its own point alone (the per-run values are buffers
    ``per_run_<name>`` ``(P n,)``, read through :meth:`Policy.hyperparameter`), so a tuning grid costs one simulation
    of ``P n`` runs instead of ``P`` simulations of ``n``. Points may differ only in the policy's
    :attr:`Policy.per_run_hyperparameters`; otherwise a ValueError names the others.
    """
    cls = policy_class(name)
    if not points or env.n_runs % len(points):
        raise ValueError(f"policy {name!r}: {env.n_runs} runs do not split into {len(points)} grid points")
    differing = grid_differences(name, points)
    others = sorted(set(differing) - set(cls.per_run_hyperparameters))
    if others:
        raise ValueError(
            f"policy {name!r}: grid points that differ in {others} cannot play as one batch "
            f"(per-run hyperparameters: {list(cls.per_run_hyperparameters)})"
        )
    configs = [make_config(name, params) for params in points]
    policy = cls(configs[0], env, keys)
    runs_per_point = env.n_runs // len(points)
    for field_name in differing:
        values = torch.tensor([float(getattr(c, field_name)) for c in configs], dtype=torch.float64)
        policy.register_buffer(f"per_run_{field_name}", values.repeat_interleave(runs_per_point).to(keys.device))
    return policy
