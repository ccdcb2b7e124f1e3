"""The dense reference of the neural bandits: every network takes arm ``a``'s context as ``x ⊗ e_a``.

This is the implementation the project ran before the per-arm-block networks of :mod:`hare.policies.neural`, kept
unchanged as the reference those are tested against (outputs, gradients, exploration widths, chosen arms) and timed
against (``hare bench-neural``). It is not registered: no config can name it. Every equation is the one of
:mod:`hare.policies.neural`'s docstring; here every matmul runs over the ``K - 1`` zero blocks of ``x ⊗ e_a``.

Length: the reference is kept as it ran, one module, so that the tests and the benchmark compare against exactly
that code.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from hare.envs.base import BanditEnvironment, Observation
from hare.envs.classification import disjoint_encoding
from hare.model.covariance import RidgeState
from hare.policies.base import Policy, pulled_contexts, upper_confidence_bound
from hare.policies.neural import (
    BootstrapNNConfig,
    GradientPosteriorConfig,
    NeuralNetworkConfig,
    NeuralTSConfig,
    NeuralUCBConfig,
)
from hare.random import CounterRNG


class DenseBatchedReLUNetwork(nn.Module):
    """``n_groups`` independent networks ``f(x) = sqrt(m) w^T relu(W x)``.

    Parameters ``weight_in`` ``(n_groups, m, d_in)`` and ``weight_out`` ``(n_groups, m)``, float32;
    buffers ``initial_in``/``initial_out`` hold ``theta_0`` for the regulariser.
    ``rng``/``stream`` draw ``(draws_per_run, m/2, d_in)`` per run key; the groups of a run
    are its ``draws_per_run`` consecutive groups.
    """

    def __init__(self, rng: CounterRNG, stream: str, draws_per_run: int, width: int, input_dim: int):
        super().__init__()
        half = width // 2
        n_groups = rng.keys.shape[0] * draws_per_run
        hidden = rng.normal(f"{stream}-in", 0, (draws_per_run, half, input_dim), torch.float32) * math.sqrt(4.0 / width)
        out = rng.normal(f"{stream}-out", 0, (draws_per_run, half), torch.float32) * math.sqrt(2.0 / width)
        weight_in = torch.cat([hidden, hidden], dim=2).reshape(n_groups, width, input_dim)  # (n_groups, m, d_in)
        weight_out = torch.cat([out, -out], dim=2).reshape(n_groups, width)  # (n_groups, m)
        self.width = width
        self.input_dim = input_dim
        self.weight_in = nn.Parameter(weight_in)
        self.weight_out = nn.Parameter(weight_out)
        self.register_buffer("initial_in", weight_in.clone())
        self.register_buffer("initial_out", weight_out.clone())

    @property
    def n_parameters(self) -> int:
        return self.width * self.input_dim + self.width

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` ``(n_groups, n, d_in) -> (n_groups, n)``."""
        hidden = torch.relu(torch.bmm(x, self.weight_in.transpose(1, 2)))  # (n_groups, n, m)
        return math.sqrt(self.width) * torch.bmm(hidden, self.weight_out[:, :, None]).squeeze(-1)

    def distance_to_init(self) -> torch.Tensor:
        """``||theta - theta_0||^2`` per group, ``(n_groups,)``."""
        return (self.weight_in - self.initial_in).square().sum((1, 2)) + (
            self.weight_out - self.initial_out
        ).square().sum(1)

    def jacobian(self, x: torch.Tensor) -> torch.Tensor:
        """``d f / d theta`` for every input, in closed form, batched over groups and inputs.

        ``x`` ``(n_groups, n, d_in) -> (n_groups, n, p)``, ``theta`` flattened as ``(W, w)``
        (``W`` row-major, the order of :meth:`gradient`). With ``h = W x`` and ``u = w ⊙ 1[h > 0]``
        (``relu'(0) = 0``, as autograd takes it)

            d f / d W = sqrt(m) u x^T,    d f / d w = sqrt(m) relu(h).
        """
        return self.gradient_from_hidden(torch.bmm(x, self.weight_in.detach().transpose(1, 2)), x)

    def gradient_from_hidden(self, hidden: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """``(sqrt(m) u ⊗ x, sqrt(m) relu(h))`` from the pre-activations ``h`` ``(n_groups, n, m)`` of
        inputs ``x`` ``(n_groups, n, d)``, with ``u = w ⊙ 1[h > 0]``: ``(n_groups, n, m d + m)``."""
        scale = math.sqrt(self.width)
        active = (scale * self.weight_out.detach())[:, None, :] * (hidden > 0)  # (n_groups, n, m): sqrt(m) u
        return torch.cat([(active[..., :, None] * x[..., None, :]).flatten(-2), scale * torch.relu(hidden)], dim=-1)

    def block_jacobian(self, x: torch.Tensor, weight_in: torch.Tensor) -> torch.Tensor:
        """Closed-form ``d f / d (W_i, w)`` of ``f = sqrt(m) w^T relu(W_i x_i)`` with one matrix per input.

        ``x`` ``(n_groups, n, d)``, ``weight_in`` ``(n_groups, n, m, d)`` -> ``(n_groups, n, m d + m)``,
        ``(sqrt(m) u ⊗ x, sqrt(m) relu(h))`` with ``h = W_i x`` and ``u = w ⊙ 1[h > 0]``; the same
        Jacobian as :meth:`functional_jacobian` with ``weight_in``, without autograd.
        """
        return self.gradient_from_hidden(torch.einsum("gnmd,gnd->gnm", weight_in, x), x)

    def functional_jacobian(self, x: torch.Tensor, weight_in: torch.Tensor | None = None) -> torch.Tensor:
        """``d f / d theta`` for every input by ``torch.func`` (the vectorised Jacobian of the DenseNeuralUCB tutorial
        chapter), no loop over groups or inputs.

        ``x`` ``(n_groups, n, d)`` -> ``(n_groups, n, m d + m)``, flattened as ``(W row-major, w)``.
        ``jacrev`` differentiates the one-input network ``f(W, w; x) = sqrt(m) w^T relu(W x)``;
        ``vmap`` lifts it over the ``n`` inputs and then over the groups. ``weight_in``
        ``(n_groups, n, m, d)``, when given, is a per-input matrix ``W`` (a block of the input
        weights, see :meth:`DenseGradientPosteriorPolicy.disjoint_width_squared`); by default every input
        of a group sees the group's own ``weight_in``.
        """
        scale = math.sqrt(self.width)

        def single_output(w_in: torch.Tensor, w_out: torch.Tensor, x_one: torch.Tensor) -> torch.Tensor:
            return scale * (w_out * torch.relu(w_in @ x_one)).sum()

        gradient = torch.func.jacrev(single_output, argnums=(0, 1))
        shared = weight_in is None
        over_inputs = torch.func.vmap(gradient, in_dims=(None if shared else 0, None, 0))
        over_groups = torch.func.vmap(over_inputs, in_dims=(0, 0, 0))
        w_in = self.weight_in.detach() if shared else weight_in
        d_in, d_out = over_groups(w_in, self.weight_out.detach(), x)  # (n_groups, n, m, d), (n_groups, n, m)
        return torch.cat([d_in.flatten(-2), d_out], dim=-1)

    def gradient(self, x: torch.Tensor) -> torch.Tensor:
        """``d f / d theta`` for one input per group by one backward pass: ``(n_groups, d_in) -> (n_groups, p)``."""
        with torch.enable_grad():
            out = self(x[:, None, :]).sum()  # groups are independent: each group's gradient is its own
            d_in, d_out = torch.autograd.grad(out, (self.weight_in, self.weight_out))
        return torch.cat([d_in.flatten(1), d_out.flatten(1)], dim=-1)


class DenseNeuralPolicy(Policy):
    """Shared machinery: input encoding, history of pulled arms, and minibatch SGD training.

    Buffers: ``history_contexts`` ``(n_runs, capacity, dim)``, ``history_arms`` ``(n_runs, capacity)``,
    ``history_rewards`` ``(n_runs, capacity)`` (capacity: the horizon plus any warm start), ``n_observed`` (scalar).
    """

    networks_per_run = 1

    def __init__(self, config: NeuralNetworkConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        self.input_dim = env.n_arms * env.dim if config.encoding == "disjoint" else env.dim
        self.network = DenseBatchedReLUNetwork(
            self.rng, "neural-init", self.networks_per_run, config.width, self.input_dim
        )
        self.register_buffer("history_contexts", torch.zeros(env.n_runs, env.history_capacity, env.dim))
        self.register_buffer("history_arms", torch.zeros(env.n_runs, env.history_capacity, dtype=torch.int64))
        self.register_buffer("history_rewards", torch.zeros(env.n_runs, env.history_capacity))
        self.register_buffer("n_observed", torch.zeros((), dtype=torch.int64))

    def encode_all_arms(self, contexts: torch.Tensor) -> torch.Tensor:
        """Network inputs of every arm, ``(n_runs, n_arms, dim) -> (n_runs, n_arms, d_in)`` float32."""
        contexts = contexts.to(torch.float32)
        return disjoint_encoding(contexts) if self.config.encoding == "disjoint" else contexts

    def encode_pulled(self, contexts: torch.Tensor, arms: torch.Tensor) -> torch.Tensor:
        """Inputs of pulled arms: contexts ``(..., dim)``, arms ``(...)`` -> ``(..., d_in)`` float32."""
        contexts = contexts.to(torch.float32)
        if self.config.encoding == "arm":
            return contexts
        blocks = (
            F.one_hot(arms, self.n_arms).to(torch.float32)[..., :, None] * contexts[..., None, :]
        )  # (..., n_arms, dim)
        return blocks.flatten(-2)

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

    def minibatch_weights(self, indices: torch.Tensor) -> torch.Tensor:
        """Weights ``(n_groups, batch)`` of the sampled points in each network's loss (all ones here)."""
        return torch.ones(indices.shape, dtype=torch.float32, device=indices.device)

    def train_network(self, t: int) -> None:
        """``train_steps`` SGD steps on ``mean_batch w (f - r)^2 / 2 / mean(w) + m lam ||theta - theta_0||^2 / (2 n)``.

        Minibatch indices ``(n_runs, batch_size)`` come from the stream ``"minibatch"`` at counter
        ``t * train_steps + step``, so they depend only on the run key.
        """
        c = self.config
        n = int(self.n_observed)
        runs = torch.arange(self.n_runs, device=self.history_arms.device)[:, None]
        q = self.networks_per_run
        for step in range(c.train_steps):
            indices = self.rng.randint("minibatch", t * c.train_steps + step, n, (c.batch_size,))  # (n_runs, batch)
            x = self.encode_pulled(self.history_contexts[runs, indices], self.history_arms[runs, indices])
            x = x.repeat_interleave(q, dim=0)  # (n_runs * q, batch, d_in)
            r = self.history_rewards[runs, indices].repeat_interleave(q, dim=0)
            weights = self.minibatch_weights(indices)  # (n_runs * q, batch)
            with torch.enable_grad():
                residual = self.network(x) - r
                fit = (weights * residual.square()).sum(1) / (2.0 * weights.sum(1).clamp_min(1.0))
                penalty = c.width * c.lam * self.network.distance_to_init() / (2.0 * n)
                loss = (fit + penalty).sum()  # groups are independent: the sum keeps per-group gradients
                grads = torch.autograd.grad(loss, (self.network.weight_in, self.network.weight_out))
            with torch.no_grad():
                self.network.weight_in -= c.lr * grads[0]
                self.network.weight_out -= c.lr * grads[1]

    def update(self, observation: Observation, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        self.update_posterior(observation, arms)
        self.record(observation, arms, rewards)
        if self.config.train_steps > 0 and self.trains_after(observation.t):
            self.train_network(observation.t)

    def update_posterior(self, observation: Observation, arms: torch.Tensor) -> None:
        """Update exploration state with the pulled arms before training (nothing by default)."""


class DenseGradientPosteriorPolicy(DenseNeuralPolicy):
    """Mean ``f(x; theta)`` and ``width^2 = g_hat^T Z^{-1} g_hat`` of every arm (module docstring).

    State: ``ridge`` (:class:`RidgeState` over ``p`` features, full ``Z`` and ``Z^{-1}`` in float64)
    for ``loop``/``jacobian``; ``diagonal_precision`` ``(n_runs, p)`` float64 for ``diagonal``.
    """

    def __init__(self, config: GradientPosteriorConfig, env: BanditEnvironment, keys: torch.Tensor):
        super().__init__(config, env, keys)
        p = self.network.n_parameters
        if config.exploration == "diagonal":
            self.register_buffer(
                "diagonal_precision", torch.full((env.n_runs, p), float(config.lam), dtype=torch.float64)
            )
        else:
            self.ridge = RidgeState(env.n_runs, (), p, config.lam, config.refactor_every)

    def bytes_per_arm(self) -> int:
        """Estimated peak bytes of the temporaries per arm of a chunk. Disjoint encoding: the copy of the
        float64 block ``Z^{-1}[W_a, W_a]`` ``(n_runs, m dim, m dim)`` and its product (twice that);
        otherwise the float32 Jacobian and three float64 ``(n_runs, p)`` arrays (its float64 copy,
        ``J Z^{-1}`` and the product)."""
        if self.config.encoding == "disjoint":
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

    def width_squared_from_gradients(self, scaled: torch.Tensor) -> torch.Tensor:
        """``g_hat^T Z^{-1} g_hat`` for ``scaled`` ``(n_runs, n, p)`` float64 -> ``(n_runs, n)``."""
        if self.config.exploration == "diagonal":
            return (scaled.square() / self.diagonal_precision[:, None, :]).sum(-1)
        return ((scaled @ self.ridge.inverse) * scaled).sum(-1).clamp_min(0.0)

    def posterior(self, contexts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean ``f`` ``(n_runs, n_arms)`` float64 and ``width^2`` ``(n_runs, n_arms)`` float64."""
        x = self.encode_all_arms(contexts)  # (n_runs, n_arms, d_in)
        with torch.no_grad():
            mean = self.network(x).to(torch.float64)
        scale = 1.0 / math.sqrt(self.config.width)
        if self.config.exploration == "loop":
            width_sq = torch.stack(
                [
                    self.ridge.quadratic_form(
                        self.arm_block_order(self.network.gradient(x[:, arm])).to(torch.float64) * scale
                    )
                    for arm in range(self.n_arms)
                ],
                dim=1,
            )
            return mean, width_sq
        if self.config.encoding == "disjoint":
            return mean, self.disjoint_width_squared(contexts)
        chunk = self.arms_per_chunk()
        jacobian = self.network.functional_jacobian if self.config.exploration == "jacobian" else self.network.jacobian
        parts = []
        for start in range(0, self.n_arms, chunk):
            scaled = (
                self.arm_block_order(jacobian(x[:, start : start + chunk])).to(torch.float64) * scale
            )  # (n_runs, chunk, p)
            parts.append(self.width_squared_from_gradients(scaled))
        return mean, torch.cat(parts, dim=1)

    def arm_block_order(self, gradient: torch.Tensor) -> torch.Tensor:
        """The coordinates of ``Z``: ``(..., p) -> (..., p)``.

        With the disjoint encoding the input weights ``W`` ``(m, K dim)`` are reordered from row-major
        ``(m, K, dim)`` to arm-major ``(K, m, dim)``, so that the support of arm ``a``'s gradient
        (its block ``W_a`` and ``w``) is two contiguous ranges of ``Z``'s coordinates; otherwise the
        order is the network's own. Every mode writes and reads ``Z`` in this order.
        """
        if self.config.encoding != "disjoint":
            return gradient
        m, n_arms, dim = self.config.width, self.n_arms, self.dim
        weights = gradient[..., : m * n_arms * dim].unflatten(-1, (m, n_arms, dim)).transpose(-3, -2)
        return torch.cat([weights.flatten(-3), gradient[..., m * n_arms * dim :]], dim=-1)

    def disjoint_width_squared(self, contexts: torch.Tensor) -> torch.Tensor:
        """``width^2`` of every arm from the support of its gradient, ``(n_runs, n_arms, dim) -> (n_runs, n_arms)``.

        With the disjoint encoding arm ``a``'s input ``x ⊗ e_a`` is zero outside block ``a``, so its
        gradient is supported on ``W_a`` (``m dim`` coordinates, contiguous in :meth:`arm_block_order`)
        and ``w`` (``m``): ``g = (g_W, g_w)``, obtained by ``jacrev`` with respect to ``(W_a, w)``. With
        ``Z^{-1} = [[B, C], [C^T, D]]`` in those blocks,

            width^2 = g_W^T B_aa g_W + 2 g_W^T C_a g_w + g_w^T D g_w,

        ``O(K (m dim)^2)`` per run instead of ``O(K p^2)``; ``B_aa`` are diagonal blocks read as strided
        views of ``Z^{-1}``, copied in chunks of arms that fit ``memory_budget_mb``. In ``diagonal``
        mode ``width^2 = sum_i g_i^2 / Z_ii`` over the same support (closed-form Jacobian,
        :meth:`DenseBatchedReLUNetwork.block_jacobian`): ``O(K m dim)`` per run instead of ``O(K p)``.
        """
        m, dim, n_arms = self.config.width, self.dim, self.n_arms
        block = m * dim
        x = contexts.to(self.network.weight_in.dtype)
        weights = (
            self.network.weight_in.detach().view(self.n_runs, m, n_arms, dim).transpose(1, 2)
        )  # (n_runs, n_arms, m, dim): W_a
        if self.config.exploration == "diagonal":
            gradient = self.network.block_jacobian(x, weights).to(torch.float64) / math.sqrt(
                m
            )  # (n_runs, n_arms, m dim + m)
            precision_w = self.diagonal_precision[:, : n_arms * block].view(self.n_runs, n_arms, block)
            precision_out = self.diagonal_precision[:, None, n_arms * block :]
            return (gradient[..., :block].square() / precision_w).sum(-1) + (
                gradient[..., block:].square() / precision_out
            ).sum(-1)
        gradient = self.network.functional_jacobian(x, weights).to(torch.float64) / math.sqrt(
            m
        )  # (n_runs, n_arms, m dim + m)
        g_w, g_out = gradient[..., :block], gradient[..., block:]
        inverse = self.ridge.inverse
        weight_part = inverse[:, : n_arms * block, : n_arms * block].view(self.n_runs, n_arms, block, n_arms, block)
        cross = inverse[:, : n_arms * block, n_arms * block :].view(self.n_runs, n_arms, block, m)  # C_a
        output = inverse[:, n_arms * block :, n_arms * block :]  # D, (n_runs, m, m)
        chunk = self.arms_per_chunk()
        parts = []
        for start in range(0, n_arms, chunk):
            arms = slice(start, start + chunk)
            diagonal = (
                weight_part[:, arms, :, arms, :].diagonal(dim1=1, dim2=3).permute(0, 3, 1, 2)
            )  # (n_runs, chunk, block, block): B_aa
            gw, go = g_w[:, arms], g_out[:, arms]
            parts.append(
                (torch.matmul(gw[..., None, :], diagonal).squeeze(-2) * gw).sum(-1)
                + 2.0 * (torch.matmul(gw[..., None, :], cross[:, arms]).squeeze(-2) * go).sum(-1)
                + (torch.matmul(go, output) * go).sum(-1)
            )
        return torch.cat(parts, dim=1).clamp_min(0.0)

    def update_posterior(self, observation: Observation, arms: torch.Tensor) -> None:
        """``Z <- Z + g_hat g_hat^T`` (or its diagonal) with the pulled arm's gradient at the selecting parameters."""
        x = self.encode_pulled(pulled_contexts(observation.contexts, arms), arms)  # (n_runs, d_in)
        if self.config.exploration == "loop":
            gradient = self.network.gradient(x)  # the reference: one backward pass
        elif self.config.exploration == "jacobian":
            gradient = self.network.functional_jacobian(x[:, None, :])[:, 0]
        else:
            gradient = self.network.jacobian(x[:, None, :])[:, 0]
        scaled = self.arm_block_order(gradient).to(torch.float64) / math.sqrt(self.config.width)
        if self.config.exploration == "diagonal":
            self.diagonal_precision += scaled.square()
        else:
            self.ridge.update(
                scaled,
                torch.zeros(self.n_runs, dtype=torch.float64, device=arms.device),
                torch.ones(self.n_runs, dtype=torch.float64, device=arms.device),
            )


class DenseNeuralUCB(DenseGradientPosteriorPolicy):
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


class DenseNeuralTS(DenseGradientPosteriorPolicy):
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


class DenseBootstrapNN(DenseNeuralPolicy):
    """Bootstrapped neural networks (Riquelme et al. 2018; LNUCB-TA §5.1).

    ``q = n_networks`` networks per run, groups ``run * q + j``. The point observed at round ``s``
    enters network ``j``'s data iff ``u_{s, j} < inclusion_probability`` (``u`` from stream
    ``"bootstrap-mask"`` at counter ``s``), buffer ``inclusion`` ``(n_runs, capacity, q)``. Round
    ``t`` acts greedily on network ``j_t ~ U{0..q-1}`` (stream ``"bootstrap-head"``). Training
    weights each sampled point by its inclusion flag.
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
        """Outputs ``f(x_a) = sqrt(m) w_out^T relu(W_in x_a)`` of each run's network of the round, ``(n_runs, n_arms)``
        float64, and a bound on their float32 rounding error, ``(n_runs, n_arms)``.

        A float32 dot product of ``n`` terms is off by at most ``n u sum |terms|`` (``u = 2^-24``, Higham, Thm. 3.5
        to first order), so with ``h = relu(W_in x)``: ``|err f| <= sqrt(m) (m u |w_out|^T|h| + d u |w_out|^T
        |W_in||x|)``.
        The bound matters at the symmetric initialisation, where ``f = 0`` exactly and the computed outputs are
        rounding noise whose sign depends on the device's summation order.
        """
        q = self.config.n_networks
        head = self.rng.randint("bootstrap-head", t, q)  # (n_runs,)
        groups = torch.arange(self.n_runs, device=head.device) * q + head
        x = self.encode_all_arms(contexts)
        with torch.no_grad():
            weight_in, weight_out = (
                self.network.weight_in[groups],
                self.network.weight_out[groups][:, :, None],
            )  # (n_runs, m, d), (n_runs, m, 1)
            hidden = torch.relu(torch.bmm(x, weight_in.transpose(1, 2)))  # (n_runs, n_arms, m)
            out = math.sqrt(self.config.width) * torch.bmm(hidden, weight_out).squeeze(-1)
            m, d = weight_in.shape[1:]
            u = torch.finfo(torch.float32).eps / 2
            magnitude_hidden = torch.bmm(
                x.abs(), weight_in.abs().transpose(1, 2)
            )  # (n_runs, n_arms, m): sum_k |W_ik x_k|
            rounding = math.sqrt(m) * torch.bmm(m * u * hidden + d * u * magnitude_hidden, weight_out.abs()).squeeze(-1)
        return out.to(torch.float64), rounding.to(torch.float64)

    def select(self, observation: Observation) -> torch.Tensor:
        """Greedy on the round's network; outputs within twice the row's largest rounding bound of the maximum tie."""
        scores, rounding = self.scores_with_rounding(observation.contexts, observation.t)
        return self.tie_break(scores, observation.t, tolerance=2 * rounding.max(dim=-1, keepdim=True).values)

    def update_posterior(self, observation: Observation, arms: torch.Tensor) -> None:
        draws = self.rng.uniform("bootstrap-mask", observation.t, (self.config.n_networks,))
        self.inclusion[:, int(self.n_observed)] = (draws < self.config.inclusion_probability).to(torch.float32)

    def minibatch_weights(self, indices: torch.Tensor) -> torch.Tensor:
        runs = torch.arange(self.n_runs, device=indices.device)[:, None]
        weights = self.inclusion[runs, indices]  # (n_runs, batch, q)
        return weights.permute(0, 2, 1).reshape(self.n_runs * self.config.n_networks, -1)  # (n_runs * q, batch)
