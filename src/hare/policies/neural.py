"""Neural bandit policies: NeuralUCB, NeuralTS and BootstrapNN, batched over runs.

Every run owns its own one-hidden-layer ReLU network (Zhou et al. 2020, §3, with L = 2)

    f(z; theta) = sqrt(m) * w^T relu(W z),    theta = (W, w),  W: (m, d_in),  w: (m,)

Initialisation follows Zhou et al. 2020 §3: hidden units come in pairs ``(j, j + m/2)`` with the
same input weights drawn ``N(0, 4/m)`` and output weights ``(v, -v)``, ``v ~ N(0, 2/m)``, so
``f(z; theta_0) = 0`` for every ``z``. All draws come from the counter-based RNG of the run keys.

Input: with ``encoding="disjoint"`` (the protocol of Zhou et al. 2020 and Zhang et al. 2021, also LNUCB-TA
(Khosravi et al., 2025) §5.1) arm ``a`` of context ``x`` is fed as ``z = x ⊗ e_a`` (``d_in = K dim``); with
``encoding="arm"`` the arm context itself is the input. ``x ⊗ e_a`` meets only the block ``W_a`` ``(m, dim)`` of
``W``, so ``f(x ⊗ e_a) = sqrt(m) w^T relu(W_a x)``: the network is stored, evaluated and trained by blocks
(:class:`hare.model.relu_network.BlockReLUNetwork`, ``K`` blocks for ``disjoint``, one for ``arm``), the same
network without the ``K - 1`` zero blocks of every product. :mod:`hare.policies.neural_dense` keeps the dense
``x ⊗ e_a`` implementation as the reference these are tested against.

The gradient posterior of NeuralUCB and NeuralTS (``Z``, the width of every arm) is in
:mod:`hare.policies.neural_posterior`.

Training (shared by the three policies). Zhou et al. minimise
``sum_i (f(x_i) - r_i)^2 / 2 + m lam ||theta - theta_0||^2 / 2`` by gradient descent on all past
data. We minimise the same objective divided by the number ``n`` of observations (same
minimiser, step size independent of ``n``) by minibatch SGD:

    loss = mean_batch (f(x) - r)^2 / 2 + m lam ||theta - theta_0||^2 / (2 n)

(stable for ``lr * m * lam / n < 2``), each step in place with closed-form gradients
(:meth:`hare.model.relu_network.BlockReLUNetwork.sgd_step`); the regulariser acts on every block, and costs nothing at
``lam = 0``. Schedule: after every round while ``t <
dense_training_rounds``, then after every ``train_every``-th round; each time ``train_steps``
steps on minibatches of ``batch_size`` points drawn uniformly with replacement from the whole
history. The authors' released code (``train.py`` and ``learner_diag.py`` of
github.com/uclaml/NeuralUCB, read for this module) trains after every round for the first 2000
rounds and every 100 rounds afterwards, each time with single-sample SGD on ``(f(x) - r)^2`` (lr
1e-2, weight decay ``lam``) over shuffled passes of the whole history, stopping after 1000 steps or
once a pass's mean loss is at most 1e-3; LNUCB-TA §5.1 runs
NeuralTS with 100 gradient steps at learning rate 1e-3. The defaults are that schedule
(2000 / 100) with LNUCB-TA's 100 steps at 1e-3 in minibatches of 50; minibatches instead of
single samples keep the runs batched. Everything is configurable.

Precision: the networks, their inputs and the SGD step are float32 (as in the reference); the gradient posterior
(``Z^{-1}`` of the full modes, the diagonal's ``1 / P``) and the means and widths are float64, since ``Z``
accumulates one term per round over the whole horizon.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, ClassVar

import torch

from hare.envs.base import BanditEnvironment, Observation
from hare.model.relu_network import BlockReLUNetwork
from hare.policies.base import (
    Policy,
    PolicyConfig,
    pulled_contexts,
    register_policy,
)
from hare.typed import Constraint, at_least, nonnegative, one_of, positive, within

EXPLORATION_MODES = ("loop", "jacobian", "diagonal")
ENCODINGS = ("disjoint", "arm")

even_width = Constraint(lambda width: width >= 2 and width % 2 == 0, "must be an even integer >= 2")
"""The hidden width ``m``: even, since units come in sign-paired couples (the symmetric initialisation)."""


@dataclass(frozen=True)
class NeuralNetworkConfig(PolicyConfig):
    """Network and training hyperparameters shared by the neural policies.

    width: hidden units ``m`` (even: units come in sign-paired couples); encoding: ``disjoint``
    (``x ⊗ e_a``) or ``arm`` (arm context as is); lam: regulariser ``lam`` of the loss (and of
    ``Z`` for NeuralUCB/NeuralTS); lr, train_steps, batch_size: SGD; dense_training_rounds,
    train_every: the schedule (module docstring).
    """

    width: Annotated[int, even_width] = 100
    encoding: Annotated[str, one_of(ENCODINGS)] = "disjoint"
    lam: Annotated[float, nonnegative] = 1.0
    lr: Annotated[float, positive] = 1e-3
    train_steps: Annotated[int, nonnegative] = 100
    batch_size: Annotated[int, at_least(1)] = 50
    dense_training_rounds: Annotated[int, nonnegative] = 2000
    train_every: Annotated[int, at_least(1)] = 100


@dataclass(frozen=True)
class GradientPosteriorConfig(NeuralNetworkConfig):
    """Adds the linearised posterior: exploration mode, memory budget of the Jacobian chunks,
    rounds between exact re-inversions of ``Z`` (full modes)."""

    lam: Annotated[float, positive.noting("Z = lam I + ...")] = 1.0
    exploration: Annotated[str, one_of(EXPLORATION_MODES)] = "jacobian"
    memory_budget_mb: Annotated[float, positive] = 1024.0
    refactor_every: Annotated[int, at_least(1)] = 1000


@dataclass(frozen=True)
class NeuralUCBConfig(GradientPosteriorConfig):
    """NeuralUCB: ``alpha`` is the bonus weight ``gamma`` of Zhou et al. (LNUCB-TA's grid for ``nu``).

    Tunable: alpha and lam (LNUCB-TA §5.1 searches both for the neural policies; a grid may range over alpha alone).
    """

    tunable: ClassVar[tuple[str, ...]] = ("alpha", "lam")

    alpha: Annotated[float, nonnegative] = 0.1


@dataclass(frozen=True)
class NeuralTSConfig(GradientPosteriorConfig):
    """NeuralTS: ``nu`` scales the posterior standard deviation (Zhang et al. 2021; LNUCB-TA's grid).

    Tunable: nu and lam (LNUCB-TA §5.1 searches both for the neural policies; a grid may range over nu alone).
    """

    tunable: ClassVar[tuple[str, ...]] = ("nu", "lam")

    nu: Annotated[float, nonnegative] = 0.1


@dataclass(frozen=True)
class BootstrapNNConfig(NeuralNetworkConfig):
    """BootstrapNN: ``n_networks`` networks, each past point in each network's data with
    probability ``inclusion_probability`` (LNUCB-TA §5.1: 10 and 0.8). Tunable: inclusion_probability
    (the bootstrap's diversity is its only exploration; §5.1 fixes it, so a config that follows §5.1 says ``fixed``)."""

    tunable: ClassVar[tuple[str, ...]] = ("inclusion_probability",)

    n_networks: Annotated[int, at_least(1)] = 10
    inclusion_probability: Annotated[float, within(0, 1, open_low=True)] = 0.8
    lam: float = 0.0


class NeuralPolicy(Policy):
    """Shared machinery: the block network, the history of pulled arms, and minibatch SGD training.

    ``network``: :class:`BlockReLUNetwork` with ``n_blocks = K`` (disjoint) or ``1`` (arm), ``networks_per_run``
    networks per run, ``theta_0`` kept only when ``lam > 0``. Buffers: ``history_contexts`` ``(n_runs, capacity,
    dim)``, ``history_arms`` ``(n_runs, capacity)``, ``history_rewards`` ``(n_runs, capacity)`` (capacity: the
    horizon plus any warm start), ``n_observed`` (scalar).
    """

    round_cost_grows = False

    networks_per_run = 1

    def __init__(self, config: NeuralNetworkConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        self.n_blocks = env.n_arms if config.encoding == "disjoint" else 1
        self.network = BlockReLUNetwork(
            self.rng, "neural-init", self.networks_per_run, config.width, self.n_blocks, env.dim, config.lam > 0
        )
        self.register_buffer("history_contexts", torch.zeros(env.n_runs, env.history_capacity, env.dim))
        self.register_buffer("history_arms", torch.zeros(env.n_runs, env.history_capacity, dtype=torch.int64))
        self.register_buffer("history_rewards", torch.zeros(env.n_runs, env.history_capacity))
        self.register_buffer("n_observed", torch.zeros((), dtype=torch.int64))

    @classmethod
    def network_count(cls, config: NeuralNetworkConfig) -> int:
        """Networks per run, ``q`` (1 but for :class:`BootstrapNN`)."""
        return 1

    @classmethod
    def memory_bytes(
        cls, config: NeuralNetworkConfig, arms: int, dim: int, length: int, clusters: int
    ) -> tuple[int, int]:
        """:meth:`Policy.memory_bytes` plus, with ``p = width d_in + width`` parameters per network (``d_in = arms
        dim`` disjoint, else ``dim``; stored as ``n_blocks = arms`` or ``1`` blocks) and ``q`` networks
        (:meth:`network_count`): the float32 history, ``length (4 dim + 12)`` (contexts ``(length, dim)``, arms,
        rewards; and ``4 q length`` of the bootstrap's inclusion flags when ``q > 1``), which grows with the rounds;
        ``4 p q`` of weights and ``4 p q`` more of initial weights when ``lam > 0`` (the SGD step is in place, no
        gradient arrays); the step's workspace ``4 n_blocks batch_size (dim + 2 q width)``."""
        grows, fixed = super().memory_bytes(config, arms, dim, length, clusters)
        networks = cls.network_count(config)
        n_blocks = arms if config.encoding == "disjoint" else 1
        n_parameters = config.width * n_blocks * dim + config.width
        grows += length * (4 * dim + 12 + (4 * networks if networks > 1 else 0))
        fixed += (8 if config.lam > 0 else 4) * n_parameters * networks
        fixed += 4 * n_blocks * config.batch_size * (dim + 2 * networks * config.width)
        return grows, fixed

    def blocks_of(self, arms: torch.Tensor) -> torch.Tensor:
        """The input block each arm meets: the arm itself (disjoint) or ``0`` (arm encoding)."""
        return arms if self.n_blocks > 1 else torch.zeros_like(arms)

    def record(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        """Append ``(x_{t, a_t}, a_t, r_t)`` of every run to the history."""
        n = int(self.n_observed)
        self.history_contexts[:, n] = pulled_contexts(observation.contexts, arms).to(torch.float32)
        self.history_arms[:, n] = arms
        self.history_rewards[:, n] = rewards.to(torch.float32)
        self.n_observed += 1

    def trains_after(self, t: int) -> bool:
        """The schedule: after every round while ``t < dense_training_rounds``, then every ``train_every`` rounds."""
        c = self.config
        return t < c.dense_training_rounds or (t + 1) % c.train_every == 0

    def minibatch_weights(self, rows: torch.Tensor) -> torch.Tensor | None:
        """Weights ``(n_runs, batch, networks_per_run)`` in each network's loss of the sampled points, ``rows``
        ``(n_runs batch,)`` of the flattened history; ``None``: all ones."""
        return None

    def train_network(self, t: int) -> None:
        """``train_steps`` SGD steps on ``mean_batch w (f - r)^2 / 2 / mean(w) + m lam ||theta - theta_0||^2 / (2 n)``.

        Minibatch indices ``(n_runs, batch_size)`` come from the stream ``"minibatch"`` at counter
        ``t * train_steps + step``, so they depend only on the run key; every step's are drawn at once
        (:meth:`hare.random.CounterRNG.randint_counters`, the same bits as one draw per step).
        """
        c = self.config
        n = int(self.n_observed)
        capacity = self.history_arms.shape[1]
        offsets = torch.arange(self.n_runs, device=self.history_arms.device)[:, None] * capacity
        contexts, arms, rewards = (
            self.history_contexts.flatten(0, 1),
            self.history_arms.flatten(),
            self.history_rewards.flatten(),
        )
        shrink = c.lr * c.width * c.lam / n
        every_step = self.rng.randint_counters("minibatch", t * c.train_steps, c.train_steps, n, (c.batch_size,))
        every_rows = (offsets[:, None] + every_step).transpose(0, 1).flatten(1)  # (steps, n_runs * batch)
        for step in range(c.train_steps):
            rows = every_rows[step]
            self.network.sgd_step(
                contexts.index_select(0, rows).view(self.n_runs, c.batch_size, self.dim),
                self.blocks_of(arms.index_select(0, rows).view(self.n_runs, c.batch_size)),
                rewards.index_select(0, rows).view(self.n_runs, c.batch_size),
                self.minibatch_weights(rows),
                c.lr,
                shrink,
            )

    def update(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        self.update_posterior(observation, arms)
        self.record(observation, arms, rewards)
        if self.config.train_steps > 0 and self.trains_after(observation.t):
            self.train_network(observation.t)

    def update_posterior(self, observation: Observation, arms: torch.Tensor) -> None:
        """Update exploration state with the pulled arms before training (nothing by default)."""


@register_policy("bootstrap_nn")
class BootstrapNN(NeuralPolicy):
    """Bootstrapped neural networks (Riquelme et al. 2018; LNUCB-TA §5.1).

    ``q = n_networks`` networks per run, stacked along the hidden units of the run's block network. The point
    observed at round ``s`` enters network ``j``'s data iff ``u_{s, j} < inclusion_probability`` (``u`` from stream
    ``"bootstrap-mask"`` at counter ``s``), buffer ``inclusion`` ``(n_runs, capacity, q)``. Round ``t`` acts greedily
    on network ``j_t ~ U{0..q-1}`` (stream ``"bootstrap-head"``). Training weights each sampled point by its
    inclusion flag; the ``q`` networks of a run share its minibatch.
    """

    config_class = BootstrapNNConfig

    def __init__(self, config: BootstrapNNConfig, env: BanditEnvironment, keys: torch.Tensor):
        self.networks_per_run = config.n_networks
        super().__init__(config, env, keys)
        self.register_buffer("inclusion", torch.zeros(env.n_runs, env.history_capacity, config.n_networks))

    @classmethod
    def network_count(cls, config: BootstrapNNConfig) -> int:
        return config.n_networks

    @classmethod
    def round_bytes(cls, config: BootstrapNNConfig, arms: int, dim: int, runs: int) -> int:
        """The copy of the round's network, float32: ``4 runs p`` (``p`` of :meth:`NeuralPolicy.memory_bytes`)."""
        n_blocks = arms if config.encoding == "disjoint" else 1
        return 4 * runs * (config.width * n_blocks * dim + config.width)

    def scores(self, contexts: torch.Tensor, t: int) -> torch.Tensor:
        """Outputs of each run's network of the round, ``(n_runs, n_arms)`` float64."""
        return self.scores_with_rounding(contexts, t)[0]

    def scores_with_rounding(self, contexts: torch.Tensor, t: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Outputs ``f(x_a) = sqrt(m) w^T relu(W_a x_a)`` of each run's network of the round, ``(n_runs, n_arms)``
        float64, and a bound on their float32 rounding error, ``(n_runs, n_arms)``.

        A float32 dot product of ``n`` terms is off by at most ``n u sum |terms|`` (``u = 2^-24``, Higham, Thm. 3.5
        to first order), so with ``h = relu(W_a x)``: ``|err f| <= sqrt(m) (m u |w|^T|h| + d u |w|^T |W_a||x|)``.
        ``d = n_blocks dim``, the length of the dense input ``x ⊗ e_a``: a bound for the ``dim``-term products here
        too, and the tolerance the dense reference ties with. The bound matters at the symmetric initialisation,
        where ``f = 0`` exactly and the computed outputs are rounding noise whose sign depends on the device's
        summation order.
        """
        q, m = self.config.n_networks, self.config.width
        head = self.rng.randint("bootstrap-head", t, q)  # (n_runs,)
        runs = torch.arange(self.n_runs, device=head.device)
        x = contexts.to(torch.float32)
        with torch.no_grad():
            n_blocks, dim = self.n_blocks, self.dim
            rows = (
                (runs[:, None] * n_blocks + torch.arange(n_blocks, device=head.device)) * q + head[:, None]
            ).flatten()
            weight_in = (
                self.network.weight_in.view(-1, m, dim).index_select(0, rows).view(self.n_runs, n_blocks, m, dim)
            )
            weight_out = self.network.weight_out.view(self.n_runs, q, m)[runs, head][:, :, None]  # (n_runs, m, 1)
            hidden = torch.relu(self.network.arm_hidden(x, weight_in))  # (n_runs, n_arms, m)
            out = math.sqrt(m) * torch.bmm(hidden, weight_out).squeeze(-1)
            u = torch.finfo(torch.float32).eps / 2
            magnitude_hidden = self.network.arm_hidden(x.abs(), weight_in.abs_())  # sum_k |W_jk x_k|
            terms = self.n_blocks * self.dim
            rounding = math.sqrt(m) * torch.bmm(m * u * hidden + terms * u * magnitude_hidden, weight_out.abs())
        return out.to(torch.float64), rounding.squeeze(-1).to(torch.float64)

    def select(self, observation: Observation) -> torch.Tensor:
        """Greedy on the round's network; outputs within twice the row's largest rounding bound of the maximum tie."""
        scores, rounding = self.scores_with_rounding(observation.contexts, observation.t)
        return self.tie_break(scores, observation.t, tolerance=2 * rounding.max(dim=-1, keepdim=True).values)

    def update_posterior(self, observation: Observation, arms: torch.Tensor) -> None:
        draws = self.rng.uniform("bootstrap-mask", observation.t, (self.config.n_networks,))
        self.inclusion[:, int(self.n_observed)] = (draws < self.config.inclusion_probability).to(torch.float32)

    def minibatch_weights(self, rows: torch.Tensor) -> torch.Tensor:
        return self.inclusion.flatten(0, 1).index_select(0, rows).view(self.n_runs, -1, self.config.n_networks)
