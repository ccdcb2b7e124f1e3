"""Context-free policies: Random, UCB1, KL-UCB, epsilon-greedy and Beta-Thompson sampling.

They read no context. Their state is per run and per arm: pull counts ``n_a`` and reward
sums ``S_a`` as ``(n_runs, n_arms)`` float64 buffers, so the empirical mean is
``mu_a = S_a / n_a`` and the round count is ``t = sum_a n_a`` (one pull per round).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, ClassVar

import torch

from hare.envs.base import BanditEnvironment, Observation
from hare.policies.base import MODES, Policy, PolicyConfig, kl_upper_bound, register_policy, upper_confidence_bound
from hare.random import CounterRNG
from hare.typed import nonnegative, one_of, positive, unit_interval, within


@dataclass(frozen=True)
class RandomConfig(PolicyConfig):
    """Uniform random arm selection: nothing to tune. mode: ``select`` (pull the arm) or ``synthesize`` (output the
    drawn pool item's embedding ``z = e_n``, the reference of a synthesize-mode experiment)."""

    mode: Annotated[str, one_of(MODES)] = "select"


@register_policy("random")
class RandomPolicy(Policy):
    """Pulls an arm uniformly at random each round (the regret reference); in synthesize mode outputs that arm's pool
    item ``z = e_n``."""

    config_class = RandomConfig
    round_cost_grows = False

    def __init__(self, config: RandomConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        if self.synthesizes and env.pool is None:
            raise ValueError("RandomConfig.mode: 'synthesize' outputs pool items; the environment has no item pool")
        self.register_buffer("items", env.pool.embeddings.clone() if self.synthesizes else None)

    def select(self, observation: Observation) -> torch.Tensor:
        return self.rng.randint("random-arm", observation.t, self.n_arms)

    def update(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        """Nothing to learn."""

    def synthesize(self, observation: Observation) -> torch.Tensor:
        """``z = e_n`` of the arm :meth:`select` draws, ``(n_runs, item_dim)``."""
        return self.items[self.select(observation)]

    def update_synthesis(self, observation: Observation, synthesis: torch.Tensor, rewards: torch.Tensor) -> None:
        """Nothing to learn."""


class ArmStatistics(Policy):
    """Shared state of the context-free index policies.

    Buffers ``counts`` (pulls ``n_a``) and ``reward_sums`` (``S_a``), both ``(n_runs, n_arms)`` float64.
    """

    round_cost_grows = False

    def __init__(self, config: PolicyConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        self.register_buffer("counts", torch.zeros(env.n_runs, env.n_arms, dtype=torch.float64))
        self.register_buffer("reward_sums", torch.zeros(env.n_runs, env.n_arms, dtype=torch.float64))

    @property
    def means(self) -> torch.Tensor:
        """Empirical means ``S_a / n_a`` (0 for unpulled arms), ``(n_runs, n_arms)``."""
        return self.reward_sums / self.counts.clamp_min(1.0)

    @property
    def total_pulls(self) -> torch.Tensor:
        """``t = sum_a n_a``, ``(n_runs, 1)``."""
        return self.counts.sum(-1, keepdim=True)

    def unpulled_first(self, index: torch.Tensor) -> torch.Tensor:
        """``index`` with every unpulled arm raised to ``+inf``, so each arm is pulled once first."""
        return torch.where(self.counts == 0, torch.full_like(index, math.inf), index)

    def record(self, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        """Add one pull of ``arms`` ``(n_runs,)`` with ``rewards`` ``(n_runs,)``."""
        self.counts.scatter_add_(1, arms[:, None], torch.ones_like(self.counts[:, :1]))
        self.reward_sums.scatter_add_(1, arms[:, None], rewards.to(torch.float64)[:, None])

    def update(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        self.record(arms, rewards)


@dataclass(frozen=True)
class UCB1Config(PolicyConfig):
    """UCB1 hyperparameters. alpha: weight of the exploration bonus (``rho`` in LNUCB-TA (Khosravi et al., 2025), Table
    5).

    Tunable: alpha (the exploration weight; LNUCB-TA Table 5 searches it; ``alpha = 1`` is Auer et al.'s rule).
    """

    tunable: ClassVar[tuple[str, ...]] = ("alpha",)

    alpha: Annotated[float, nonnegative] = 1.0


@register_policy("ucb1")
class UCB1(ArmStatistics):
    """UCB1 (Auer, Cesa-Bianchi & Fischer 2002, Fig. 1), with a bonus weight.

    Each arm is pulled once (unpulled arms score ``+inf``, ties broken at random); then

        a_t = argmax_a  mu_a + alpha * sqrt(2 log t / n_a),    t = sum_a n_a.

    ``alpha = 1`` is the original rule. This is the index MABWiser's ``UCB1(alpha)`` computes.
    """

    config_class = UCB1Config
    per_run_hyperparameters = ("alpha",)

    def scores(self) -> torch.Tensor:
        """UCB1 index of every arm, ``(n_runs, n_arms)``."""
        width = torch.sqrt(2.0 * torch.log(self.total_pulls.clamp_min(1.0)) / self.counts.clamp_min(1.0))
        return self.unpulled_first(upper_confidence_bound(self.means, width, self.hyperparameter("alpha", width)))

    def select(self, observation: Observation) -> torch.Tensor:
        return self.tie_break(self.scores(), observation.t)


@dataclass(frozen=True)
class KLUCBConfig(PolicyConfig):
    """KL-UCB hyperparameters.

    c: weight of the ``log log t`` term of the exploration budget (``c = 3`` in the regret theorem,
    ``c = 0`` recommended in practice by Garivier & Cappé; LNUCB-TA tunes it over {0.1, ..., 10}).
    iterations: bisection steps. Tunable: c (the exploration budget's weight; LNUCB-TA Table 5 searches it).
    """

    tunable: ClassVar[tuple[str, ...]] = ("c",)

    c: Annotated[float, nonnegative] = 0.0
    iterations: Annotated[int, within(10, 200)] = 60


@register_policy("kl_ucb")
class KLUCB(ArmStatistics):
    """KL-UCB for Bernoulli rewards (Garivier & Cappé 2011, Alg. 1).

    Each arm is pulled once; then

        a_t = argmax_a  max{ q in [mu_a, 1] : n_a kl(mu_a, q) <= log t + c log log t },

    with ``kl`` the Bernoulli divergence and ``t = sum_a n_a``. Rewards outside [0, 1] are
    clipped into it before they enter the means; the ``log log t`` term is taken as 0 while
    ``t < e`` (where it is negative or undefined).
    """

    config_class = KLUCBConfig
    per_run_hyperparameters = ("c",)

    def update(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        self.record(arms, rewards.to(torch.float64).clamp(0.0, 1.0))

    def scores(self) -> torch.Tensor:
        """KL-UCB index of every arm, ``(n_runs, n_arms)``."""
        t = self.total_pulls.clamp_min(1.0)
        log_log_t = torch.log(torch.log(t.clamp_min(math.e)))
        budget = torch.log(t) + self.hyperparameter("c", log_log_t) * log_log_t
        index = kl_upper_bound(self.means.clamp(0.0, 1.0), budget / self.counts.clamp_min(1.0), self.config.iterations)
        return self.unpulled_first(index)

    def select(self, observation: Observation) -> torch.Tensor:
        return self.tie_break(self.scores(), observation.t)


@dataclass(frozen=True)
class EpsilonGreedyConfig(PolicyConfig):
    """Epsilon-greedy hyperparameters.

    epsilon: exploration probability at ``t = 0`` (LNUCB-TA grid {0.01, 0.05, 0.1}; Table 5 adds 0.2, 0.25, 0.5).
    decay: ``epsilon_t = epsilon / (1 + decay * t)``; 0 keeps epsilon constant.
    Tunable: epsilon (LNUCB-TA §5.1); decay is a schedule, not searched.
    """

    tunable: ClassVar[tuple[str, ...]] = ("epsilon",)

    epsilon: Annotated[float, unit_interval] = 0.1
    decay: Annotated[float, nonnegative] = 0.0


@register_policy("eps_greedy")
class EpsilonGreedy(ArmStatistics):
    """Epsilon-greedy (Sutton & Barto 2018, §2.2; decaying schedule as in Auer et al. 2002, §3).

    With probability ``epsilon_t = epsilon / (1 + decay * t)`` pull a uniformly random arm,
    otherwise ``argmax_a mu_a`` with unpulled arms first and random ties. The coin and the
    random arm are drawn from the run keys at every round, so whether a run explores does
    not depend on the others.
    """

    config_class = EpsilonGreedyConfig
    per_run_hyperparameters = ("epsilon",)

    def exploration_probability(self, t: int, like: torch.Tensor) -> float | torch.Tensor:
        """``epsilon_t`` for every run, for a comparison with ``like`` ``(n_runs,)``."""
        return self.hyperparameter("epsilon", like) / (1.0 + self.config.decay * t)

    def select(self, observation: Observation) -> torch.Tensor:
        t = observation.t
        greedy = self.tie_break(self.unpulled_first(self.means), t)
        coin = self.rng.uniform("eps-greedy-coin", t)
        explore = coin < self.exploration_probability(t, coin)
        return torch.where(explore, self.rng.randint("eps-greedy-arm", t, self.n_arms), greedy)


def gamma_variates(rng: CounterRNG, stream: str, counter: int, shape: torch.Tensor, rounds: int = 12) -> torch.Tensor:
    """Gamma(shape, 1) draws by Marsaglia & Tsang (2000) with a fixed number of proposals.

    shape: ``(n_runs, ...)`` positive float64 tensor; returns a tensor of the same shape. For
    ``k = shape + 1 >= 1`` with ``d = k - 1/3``, ``c = 1 / sqrt(9 d)``, each of ``rounds``
    proposals draws ``z ~ N(0, 1)``, ``u ~ U(0, 1)``, sets ``v = (1 + c z)^3`` and is accepted when
    ``v > 0`` and ``log u < z^2 / 2 + d - d v + d log v``; the first accepted ``d v`` is a
    Gamma(k) draw. Every proposal is accepted with probability above 0.95, so all ``rounds``
    fail with probability below ``0.05^rounds`` (below 1e-15 for 12 rounds); then the mean ``d`` is
    returned. The result is boosted to ``shape`` by ``Gamma(a) = Gamma(a + 1) U^(1/a)``
    (Marsaglia & Tsang 2000, §6), which is exact for every ``a > 0`` and needs no branch.
    All proposals are drawn at once, vectorised over runs and arms.
    """
    boosted = shape.to(torch.float64) + 1.0
    d = boosted - 1.0 / 3.0
    c = 1.0 / torch.sqrt(9.0 * d)
    z = rng.normal(f"{stream}-z", counter, (*shape.shape[1:], rounds))
    u = rng.uniform(f"{stream}-u", counter, (*shape.shape[1:], rounds))
    v = (1.0 + c[..., None] * z) ** 3
    positive = v > 0
    log_v = torch.log(torch.where(positive, v, torch.ones_like(v)))
    accepted = positive & (torch.log(u) < 0.5 * z**2 + d[..., None] * (1.0 - v + log_v))
    first = torch.where(accepted, torch.arange(rounds, 0, -1, device=shape.device), 0).argmax(-1, keepdim=True)
    draw = torch.where(accepted.any(-1), (d[..., None] * v).gather(-1, first).squeeze(-1), d)
    boost = rng.uniform(f"{stream}-boost", counter, tuple(shape.shape[1:]))
    return draw * boost ** (1.0 / shape.to(torch.float64))


def beta_variates(rng: CounterRNG, stream: str, counter: int, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Beta(a, b) draws ``X / (X + Y)`` with ``X ~ Gamma(a)``, ``Y ~ Gamma(b)``; ``a, b`` ``(n_runs, ...)`` positive."""
    x = gamma_variates(rng, f"{stream}-a", counter, a)
    y = gamma_variates(rng, f"{stream}-b", counter, b)
    return x / (x + y)


@dataclass(frozen=True)
class BetaThompsonConfig(PolicyConfig):
    """Beta-Bernoulli Thompson sampling hyperparameters: the prior Beta(a0, b0) of every arm
    (LNUCB-TA Table 5 tunes (a0, b0) over (1,1), (2,2), (0.5,0.5), (3,1), (1,3), (4,4)).
    Tunable: a0, b0 (the prior's pseudo-counts set how long it explores).
    """

    tunable: ClassVar[tuple[str, ...]] = ("a0", "b0")

    a0: Annotated[float, positive] = 1.0
    b0: Annotated[float, positive] = 1.0


@register_policy("beta_thompson")
class BetaThompson(ArmStatistics):
    """Bernoulli Thompson sampling (Thompson 1933; Agrawal & Goyal 2012, Alg. 2).

    Arm ``a`` has posterior ``Beta(a0 + S_a, b0 + n_a - S_a)`` with ``S_a`` its successes; each
    round draws ``theta_a`` from every posterior and pulls ``argmax_a theta_a``. A reward
    ``r`` in [0, 1] that is not binary becomes a Bernoulli(r) success (Agrawal & Goyal 2012,
    Alg. 2), drawn from the run keys; rewards outside [0, 1] are clipped into it first.
    """

    config_class = BetaThompsonConfig

    def posterior(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Beta parameters ``(alpha_a, beta_a)`` of every arm, each ``(n_runs, n_arms)``."""
        return self.config.a0 + self.reward_sums, self.config.b0 + self.counts - self.reward_sums

    def select(self, observation: Observation) -> torch.Tensor:
        alpha, beta = self.posterior()
        samples = beta_variates(self.rng, "beta-thompson", observation.t, alpha, beta)
        return self.tie_break(samples, observation.t)

    def update(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        success_probability = rewards.to(torch.float64).clamp(0.0, 1.0)
        successes = (self.rng.uniform("beta-thompson-binarise", observation.t) < success_probability).to(torch.float64)
        self.record(arms, successes)
