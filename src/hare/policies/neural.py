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

Linearisation (NeuralUCB Alg. 1, NeuralTS Alg. 1). With the scaled gradient
``g_hat(x) = grad_theta f(x; theta) / sqrt(m)`` (``p = m d_in + m`` entries, ``W`` in block-major order)

    Z = lam I + sum_s g_hat_s g_hat_s^T,       width(x)^2 = g_hat(x)^T Z^{-1} g_hat(x)
    NeuralUCB:  index = f(x; theta) + alpha * width(x)
    NeuralTS:   sample ~ N(f(x; theta), nu^2 lam width(x)^2)

``Z`` is updated with the gradient of the pulled arm at the parameters used to select it (before
training). Arm ``a``'s gradient is ``(u x^T on block a, 0 on the other blocks, relu(h))`` with ``h = W_a x``,
``u = w ⊙ 1[h > 0]``. Three ways to compute ``width`` (``exploration``):

* ``loop`` — the reference, the naive form of the NeuralUCB tutorial chapter (naive vs vectorised
  Jacobian): ``K`` backward passes, one per arm (each pass batched over runs), full
  ``Z^{-1}`` in float64 kept by Sherman–Morrison (:class:`RidgeState`);
* ``jacobian`` — the chapter's vectorised form: the gradients of all arms by ``torch.func`` (``jacrev`` of the
  one-input network, lifted by ``vmap`` over the arms and the runs) on their support ``(W_{b(a)}, w)``, and
  ``Z^{-1} = [[B, C], [C^T, D]]`` read on that support:
  ``width^2 = g_W^T B_aa g_W + 2 g_W^T C_a g_w + g_w^T D g_w``, in chunks of arms whose temporaries fit
  ``memory_budget_mb`` (:meth:`GradientPosteriorPolicy.support_width_squared`);
* ``diagonal`` — ``Z`` replaced by its diagonal, as the authors' released code does
  (``learner_diag.py`` of github.com/uclaml/NeuralUCB), in closed form per block:

      width^2 = sum_j u_j^2 sum_k x_k^2 / P_a[j, k] + sum_j relu(h_j)^2 / P_out[j],

  ``O(K m dim)`` per run, with ``P_a`` ``(m, dim)`` the diagonal of ``Z`` on block ``a`` and ``P_out`` ``(m,)`` on
  ``w``; a round's update touches the pulled arm's block and ``P_out`` only.

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

Length: one module, one algorithm family (the package keeps one module per family): the three policies share the
block network's training, the schedule and the gradient posterior, all stated by the equations above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, ClassVar

import torch

from hare.envs.base import BanditEnvironment, Observation
from hare.model.covariance import RidgeState
from hare.model.relu_network import BlockReLUNetwork
from hare.policies.base import (
    Policy,
    PolicyConfig,
    pulled_contexts,
    register_policy,
    upper_confidence_bound,
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


class GradientPosteriorPolicy(NeuralPolicy):
    """Mean ``f(x; theta)`` and ``width^2 = g_hat^T Z^{-1} g_hat`` of every arm (module docstring).

    State: ``ridge`` (:class:`RidgeState` over the ``p`` parameters in block-major order, full ``Z`` and ``Z^{-1}``
    in float64) for ``loop``/``jacobian``; for ``diagonal`` the inverse of ``Z``'s diagonal, float64:
    ``inverse_precision_in`` ``(n_runs, n_blocks, m, dim)`` (``1 / P_b``) and ``inverse_precision_out``
    ``(n_runs, m)`` (``1 / P_out``). Keeping ``1 / P`` rather than ``P`` makes the width a product per block with no
    ``(n_runs, K, m, dim)`` temporary; its update ``1 / (P + g^2) = (1 / P) / (1 + g^2 / P)`` is exact to rounding.
    """

    def __init__(self, config: GradientPosteriorConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        if config.exploration == "diagonal":
            shape = (env.n_runs, self.n_blocks, config.width, env.dim)
            self.register_buffer("inverse_precision_in", torch.full(shape, 1.0 / config.lam, dtype=torch.float64))
            self.register_buffer(
                "inverse_precision_out", torch.full((env.n_runs, config.width), 1.0 / config.lam, dtype=torch.float64)
            )
        else:
            self.ridge = RidgeState(env.n_runs, (), self.network.n_parameters, config.lam, config.refactor_every)

    def bytes_per_arm(self) -> int:
        """Estimated peak bytes of the temporaries per arm of a chunk (``jacobian`` mode). Disjoint encoding: the copy
        of the float64 block ``Z^{-1}[W_a, W_a]`` ``(n_runs, m dim, m dim)`` and its product (twice that); otherwise
        the float32 Jacobian and three float64 ``(n_runs, p)`` arrays (its float64 copy, ``J Z^{-1}`` and the
        product)."""
        if self.n_blocks > 1:
            return 2 * self.n_runs * (self.config.width * self.dim) ** 2 * 8
        return self.n_runs * self.network.n_parameters * (4 + 3 * 8)

    def arms_per_chunk(self) -> int:
        """Arms whose temporaries (:meth:`bytes_per_arm`) fit in ``memory_budget_mb``; a clear error if not even one
        does."""
        budget = self.config.memory_budget_mb * 2**20
        per_arm = self.bytes_per_arm()
        if per_arm > budget:
            raise ValueError(
                f"memory_budget_mb={self.config.memory_budget_mb} is too small: one arm's Jacobian temporaries need "
                f"{per_arm / 2**20:.2f} MB ({self.n_runs} runs x {self.network.n_parameters} parameters)"
            )
        return max(1, min(self.n_arms, int(budget // per_arm)))

    def posterior(self, contexts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean ``f`` ``(n_runs, n_arms)`` float64 and ``width^2`` ``(n_runs, n_arms)`` float64 of every arm, for
        contexts ``(n_runs, n_arms, dim)``."""
        x = contexts.to(torch.float32)
        with torch.no_grad():
            hidden = self.network.arm_hidden(x)  # (n_runs, n_arms, m)
            mean = self.network.output(hidden)[..., 0].to(torch.float64)
        if self.config.exploration == "diagonal":
            return mean, self.diagonal_width_squared(x, hidden)
        if self.config.exploration == "jacobian":
            return mean, self.support_width_squared(x)
        scale = 1.0 / math.sqrt(self.config.width)
        arms = torch.arange(self.n_arms, device=x.device).expand(self.n_runs, -1)
        width_sq = torch.stack(
            [
                self.ridge.quadratic_form(
                    self.network.gradient(x[:, arm], self.blocks_of(arms[:, arm])).to(torch.float64) * scale
                )
                for arm in range(self.n_arms)
            ],
            dim=1,
        )
        return mean, width_sq

    def diagonal_width_squared(self, x: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        """``width^2 = sum_j u_j^2 sum_k x_k^2 / P_b[j, k] + sum_j relu(h_j)^2 / P_out[j]`` of every arm at its block
        ``b``: ``x`` ``(n_runs, K, dim)``, ``hidden`` ``h`` ``(n_runs, K, m)`` -> ``(n_runs, K)``; one product of
        ``1 / P`` ``(m, dim)`` with ``x^2`` per arm, no Jacobian."""
        squared = x.to(torch.float64).square()  # (n_runs, K, dim)
        inverse = self.inverse_precision_in
        if self.n_blocks == 1:
            spread = torch.bmm(squared, inverse[:, 0].transpose(1, 2))  # (n_runs, K, m)
        else:
            spread = torch.bmm(inverse.flatten(0, 1), squared.reshape(-1, self.dim, 1)).view_as(hidden)
        active = self.network.weight_out.detach()[:, None, :].to(torch.float64) * (hidden > 0)  # u
        output = torch.relu(hidden).to(torch.float64).square() * self.inverse_precision_out[:, None, :]
        return (active.square() * spread).sum(-1) + output.sum(-1)

    def support_width_squared(self, x: torch.Tensor) -> torch.Tensor:
        """``width^2`` of every arm from the support of its gradient, ``(n_runs, n_arms, dim) -> (n_runs, n_arms)``.

        Arm ``a``'s gradient is supported on its block ``W_b`` (``m dim`` coordinates, contiguous in the
        block-major order) and ``w`` (``m``): ``g = (g_W, g_w)``, by ``jacrev`` with respect to ``(W_b, w)``. With
        ``Z^{-1} = [[B, C], [C^T, D]]`` in those blocks,

            width^2 = g_W^T B_bb g_W + 2 g_W^T C_b g_w + g_w^T D g_w,

        ``O(K (m dim)^2)`` per run instead of ``O(K p^2)``; with ``K`` blocks the ``B_aa`` are strided views of
        ``Z^{-1}``, copied in chunks of arms that fit ``memory_budget_mb``.
        """
        m, dim, n_blocks = self.config.width, self.dim, self.n_blocks
        block, n_runs = m * dim, self.n_runs
        weights = self.network.weight_in.detach()  # (n_runs, n_blocks, m, dim)
        per_arm = weights if n_blocks > 1 else weights.expand(n_runs, self.n_arms, m, dim)
        gradient = self.network.functional_jacobian(x, per_arm).to(torch.float64) / math.sqrt(m)
        g_w, g_out = gradient[..., :block], gradient[..., block:]
        inverse = self.ridge.inverse
        weight_part = inverse[:, : n_blocks * block, : n_blocks * block].view(n_runs, n_blocks, block, n_blocks, block)
        cross = inverse[:, : n_blocks * block, n_blocks * block :].view(n_runs, n_blocks, block, m)  # C_b
        output = inverse[:, n_blocks * block :, n_blocks * block :]  # D, (n_runs, m, m)
        chunk = self.arms_per_chunk()
        parts = []
        for start in range(0, self.n_arms, chunk):
            arms = slice(start, start + chunk)
            gw, go = g_w[:, arms], g_out[:, arms]
            if n_blocks > 1:
                diagonal = weight_part[:, arms, :, arms, :].diagonal(dim1=1, dim2=3).permute(0, 3, 1, 2)  # B_aa
                quadratic = (torch.matmul(gw[..., None, :], diagonal).squeeze(-2) * gw).sum(-1)
                mixed = (torch.matmul(gw[..., None, :], cross[:, arms]).squeeze(-2) * go).sum(-1)
            else:
                quadratic = (torch.bmm(gw, weight_part[:, 0, :, 0]) * gw).sum(-1)
                mixed = (torch.bmm(gw, cross[:, 0]) * go).sum(-1)
            parts.append(quadratic + 2.0 * mixed + (torch.bmm(go, output) * go).sum(-1))
        return torch.cat(parts, dim=1).clamp_min(0.0)

    def update_posterior(self, observation: Observation, arms: torch.Tensor) -> None:
        """``Z <- Z + g_hat g_hat^T`` (or its diagonal, on the pulled block and ``w`` only) with the pulled arm's
        gradient at the selecting parameters."""
        x = pulled_contexts(observation.contexts, arms).to(torch.float32)  # (n_runs, dim)
        blocks = self.blocks_of(arms)
        runs = torch.arange(self.n_runs, device=arms.device)
        m, n_blocks = self.config.width, self.n_blocks
        if self.config.exploration == "loop":
            scaled = self.network.gradient(x, blocks).to(torch.float64) / math.sqrt(m)  # one backward pass
        elif self.config.exploration == "jacobian":
            weight = self.network.weight_in.detach()[runs, blocks][:, None]  # (n_runs, 1, m, dim)
            support = self.network.functional_jacobian(x[:, None], weight)[:, 0].to(torch.float64) / math.sqrt(m)
            block = m * self.dim
            scaled = support.new_zeros(self.n_runs, self.network.n_parameters)
            scaled[:, : n_blocks * block].view(self.n_runs, n_blocks, block)[runs, blocks] = support[:, :block]
            scaled[:, n_blocks * block :] = support[:, block:]
        else:
            with torch.no_grad():
                hidden = torch.bmm(self.network.weight_in[runs, blocks], x[:, :, None]).squeeze(-1)  # (n_runs, m)
            active = (self.network.weight_out.detach() * (hidden > 0)).to(torch.float64)  # u
            gradient_in = active.square()[:, :, None] * x.to(torch.float64).square()[:, None, :]  # (n_runs, m, dim)
            flat = self.inverse_precision_in.view(self.n_runs * n_blocks, m, self.dim)
            index = runs * n_blocks + blocks
            pulled = flat.index_select(0, index)
            flat.index_copy_(0, index, pulled / (1.0 + gradient_in * pulled))
            out = self.inverse_precision_out
            out.div_(1.0 + torch.relu(hidden).to(torch.float64).square() * out)
            return
        self.ridge.update(
            scaled,
            torch.zeros(self.n_runs, dtype=torch.float64, device=arms.device),
            torch.ones(self.n_runs, dtype=torch.float64, device=arms.device),
        )


@register_policy("neural_ucb")
class NeuralUCB(GradientPosteriorPolicy):
    """NeuralUCB (Zhou et al. 2020, Alg. 1): ``argmax_a f(x_a; theta) + alpha sqrt(g_hat_a^T Z^{-1} g_hat_a)``."""

    config_class = NeuralUCBConfig
    per_run_hyperparameters = ("alpha",)

    def scores(self, contexts: torch.Tensor) -> torch.Tensor:
        """UCB index ``(n_runs, n_arms)``."""
        mean, width_sq = self.posterior(contexts)
        width = width_sq.sqrt()
        return upper_confidence_bound(mean, width, self.hyperparameter("alpha", width))

    def select(self, observation: Observation) -> torch.Tensor:
        return self.tie_break(self.scores(observation.contexts), observation.t)


@register_policy("neural_ts")
class NeuralTS(GradientPosteriorPolicy):
    """NeuralTS (Zhang et al. 2021, Alg. 1): ``argmax_a r~_a``, ``r~_a ~ N(f(x_a), nu^2 lam g_hat_a^T Z^{-1} g_hat_a)``.

    Standard normals from stream ``"neural-ts"`` at counter ``t``, ``(n_runs, n_arms)``.
    """

    config_class = NeuralTSConfig
    per_run_hyperparameters = ("nu",)

    def scores(self, contexts: torch.Tensor, t: int) -> torch.Tensor:
        """Posterior samples ``(n_runs, n_arms)``."""
        mean, width_sq = self.posterior(contexts)
        noise = self.rng.normal("neural-ts", t, (self.n_arms,))
        width = torch.sqrt(self.config.lam * width_sq)
        return mean + self.hyperparameter("nu", width) * width * noise

    def select(self, observation: Observation) -> torch.Tensor:
        return self.tie_break(self.scores(observation.contexts, observation.t), observation.t)


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
