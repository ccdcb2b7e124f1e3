"""One-hidden-layer ReLU networks stored by input block, batched over runs, with a fused closed-form SGD step.

A network (Zhou et al. 2020, §3, with L = 2) is ``f(z; theta) = sqrt(m) w^T relu(W z)``, ``W: (m, d_in)``,
``w: (m,)``. The neural bandits feed arm ``a`` of context ``x`` (``dim`` features) to it as ``z = x ⊗ e_a``
(``d_in = K dim``; Zhou et al. 2020, Zhang et al. 2021, LNUCB-TA (Khosravi et al., 2025) §5.1), which meets only the
columns ``W_a: (m, dim)`` of block ``a``, so

    f(x ⊗ e_a; theta) = sqrt(m) w^T relu(W_a x),

the same network with ``K`` times less arithmetic. :class:`BlockReLUNetwork` stores ``W`` as its ``n_blocks`` blocks
(``n_blocks = K`` for ``x ⊗ e_a``, ``1`` when the arm context is the input) and evaluates, differentiates and trains
block by block. With ``h = W_a x`` and ``u = w ⊙ 1[h > 0]`` (``relu'(0) = 0``, as autograd takes it) the gradient is

    d f / d W_a = sqrt(m) u x^T,    d f / d W_b = 0 (b != a),    d f / d w = sqrt(m) relu(h).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from hare.random import CounterRNG


class BlockReLUNetwork(nn.Module):
    """``q = networks_per_run`` networks per run ``f(x, a) = sqrt(m) w^T relu(W_a x)`` over ``n_blocks`` input blocks.

    Parameters (float32): ``weight_in`` ``(n_runs, n_blocks, q m, dim)`` and ``weight_out`` ``(n_runs, q m)``. The
    ``q`` networks of a run are stacked along the hidden units (network ``j`` owns units ``j m .. (j + 1) m - 1``), so
    one block's minibatch meets all ``q`` networks in one matrix product and no input is copied per network; with
    ``q = 1`` this is ``(groups, n_blocks, m, dim)``. Buffers ``initial_in``/``initial_out`` hold ``theta_0`` for the
    regulariser, only when ``keep_initial`` (they are ``None`` otherwise).

    Initialisation (Zhou et al. 2020 §3): ``rng``/``stream`` draw ``(q, m/2, n_blocks dim)`` per run key from
    ``{stream}-in`` (times ``sqrt(4/m)``) and ``(q, m/2)`` from ``{stream}-out`` (times ``sqrt(2/m)``); unit ``j + m/2``
    repeats unit ``j``'s input weights with the opposite output weight, so ``f = 0`` at ``theta_0``. These are the
    draws of the dense network on ``x ⊗ e_a``, its ``(m, K dim)`` matrix split into ``(K, m, dim)``, bit for bit.
    """

    def __init__(
        self,
        rng: CounterRNG,
        stream: str,
        networks_per_run: int,
        width: int,
        n_blocks: int,
        dim: int,
        keep_initial: bool = True,
    ):
        super().__init__()
        half, q = width // 2, networks_per_run
        n_runs = rng.keys.shape[0]
        hidden = rng.normal(f"{stream}-in", 0, (q, half, n_blocks * dim), torch.float32) * math.sqrt(4.0 / width)
        out = rng.normal(f"{stream}-out", 0, (q, half), torch.float32) * math.sqrt(2.0 / width)
        weight_in = (
            torch.cat([hidden, hidden], dim=2)
            .view(n_runs, q, width, n_blocks, dim)
            .permute(0, 3, 1, 2, 4)
            .reshape(n_runs, n_blocks, q * width, dim)
            .contiguous()
        )
        weight_out = torch.cat([out, -out], dim=2).reshape(n_runs, q * width)
        self.width, self.n_blocks, self.dim, self.networks_per_run = width, n_blocks, dim, q
        self.weight_in = nn.Parameter(weight_in)
        self.weight_out = nn.Parameter(weight_out)
        self.register_buffer("initial_in", weight_in.clone() if keep_initial else None)
        self.register_buffer("initial_out", weight_out.clone() if keep_initial else None)
        self.workspace: dict[str, torch.Tensor] = {}

    @property
    def n_runs(self) -> int:
        return self.weight_in.shape[0]

    @property
    def n_parameters(self) -> int:
        """Parameters of one network, ``p = n_blocks m dim + m``."""
        return self.n_blocks * self.width * self.dim + self.width

    def block_weights(self) -> torch.Tensor:
        """``W`` of every network, ``(n_runs, q, n_blocks, m, dim)`` (a view)."""
        q, m = self.networks_per_run, self.width
        return self.weight_in.view(self.n_runs, self.n_blocks, q, m, self.dim).transpose(1, 2)

    def arm_hidden(self, x: torch.Tensor, weight_in: torch.Tensor | None = None) -> torch.Tensor:
        """Pre-activations of every arm at its own block: ``x`` ``(n_runs, K, dim)`` float32 -> ``(n_runs, K, units)``,
        ``h_a = W_{b(a)} x_a`` with ``b(a) = a`` (``n_blocks = K``) or ``0`` (``n_blocks = 1``), for ``weight_in``
        ``(n_runs, n_blocks, units, dim)`` (default: the parameters, ``units = q m``)."""
        weight = self.weight_in.detach() if weight_in is None else weight_in
        if weight.shape[1] == 1:
            return torch.bmm(x, weight[:, 0].transpose(1, 2))
        n_runs, n_arms, dim = x.shape
        return torch.bmm(weight.flatten(0, 1), x.reshape(n_runs * n_arms, dim, 1)).view(n_runs, n_arms, -1)

    def output(self, hidden: torch.Tensor) -> torch.Tensor:
        """``f = sqrt(m) w^T relu(h)`` of each network: ``hidden`` ``(n_runs, n, q m)`` -> ``(n_runs, n, q)``."""
        q, m = self.networks_per_run, self.width
        products = torch.relu(hidden).view(*hidden.shape[:-1], q, m) * self.weight_out.detach().view(-1, 1, q, m)
        return math.sqrt(m) * products.sum(-1)

    def gradient(self, x: torch.Tensor, blocks: torch.Tensor) -> torch.Tensor:
        """``d f / d theta`` of one input per run by one backward pass (``q = 1``): ``x`` ``(n_runs, dim)``, ``blocks``
        ``(n_runs,)`` -> ``(n_runs, p)``, ``theta`` flattened as ``(W block-major, w)``."""
        runs = torch.arange(self.n_runs, device=x.device)
        with torch.enable_grad():
            hidden = torch.bmm(self.weight_in[runs, blocks], x[:, :, None]).squeeze(-1)  # (n_runs, m)
            out = (math.sqrt(self.width) * self.weight_out * torch.relu(hidden)).sum()
            d_in, d_out = torch.autograd.grad(out, (self.weight_in, self.weight_out))
        return torch.cat([d_in.flatten(1), d_out], dim=-1)

    def block_jacobian(self, x: torch.Tensor, weight_in: torch.Tensor) -> torch.Tensor:
        """Closed-form ``d f / d (W_i, w)`` of ``f = sqrt(m) w^T relu(W_i x_i)`` with one matrix per input (``q = 1``).

        ``x`` ``(n_runs, n, dim)``, ``weight_in`` ``(n_runs, n, m, dim)`` -> ``(n_runs, n, m dim + m)``,
        ``(sqrt(m) u ⊗ x, sqrt(m) relu(h))`` with ``h = W_i x_i`` and ``u = w ⊙ 1[h > 0]``.
        """
        hidden = torch.einsum("gnmd,gnd->gnm", weight_in, x)
        scale = math.sqrt(self.width)
        active = (scale * self.weight_out.detach())[:, None, :] * (hidden > 0)
        return torch.cat([(active[..., :, None] * x[..., None, :]).flatten(-2), scale * torch.relu(hidden)], dim=-1)

    def functional_jacobian(self, x: torch.Tensor, weight_in: torch.Tensor) -> torch.Tensor:
        """``d f / d (W_i, w)`` by ``torch.func`` (the NeuralUCB tutorial chapter's vectorised Jacobian), ``q = 1``.

        ``x`` ``(n_runs, n, dim)``, ``weight_in`` ``(n_runs, n, m, dim)`` (the block each input meets) ->
        ``(n_runs, n, m dim + m)``: ``jacrev`` of the one-input network ``f(W, w; x) = sqrt(m) w^T relu(W x)``,
        lifted by ``vmap`` over the inputs and again over the runs, no loop over either.
        """
        scale = math.sqrt(self.width)

        def single_output(w_in: torch.Tensor, w_out: torch.Tensor, x_one: torch.Tensor) -> torch.Tensor:
            return scale * (w_out * torch.relu(w_in @ x_one)).sum()

        gradient = torch.func.jacrev(single_output, argnums=(0, 1))
        over_inputs = torch.func.vmap(gradient, in_dims=(0, None, 0))
        d_in, d_out = torch.func.vmap(over_inputs, in_dims=(0, 0, 0))(weight_in, self.weight_out.detach(), x)
        return torch.cat([d_in.flatten(-2), d_out], dim=-1)

    def step_workspace(self, batch: int) -> dict[str, torch.Tensor]:
        """Buffers of :meth:`sgd_step` for minibatches of ``batch`` points, allocated on the first step (and again
        after a move): ``inputs`` ``(n_runs n_blocks batch, dim)``, finite (zeros, or contexts of earlier steps, which
        padding rows carry with a zero coefficient); ``hidden`` and ``active`` ``(n_runs n_blocks batch q m)``."""
        weight = self.weight_in
        rows = self.n_runs * self.n_blocks * batch
        units = self.networks_per_run * self.width
        workspace = self.workspace
        inputs = workspace.get("inputs")
        if inputs is None or inputs.shape[0] < rows or inputs.device != weight.device or inputs.dtype != weight.dtype:
            workspace["inputs"] = weight.new_zeros(rows, self.dim)
            workspace["hidden"] = weight.new_empty(rows * units)
            workspace["active"] = weight.new_empty(rows * units)
        return workspace

    @torch.no_grad()
    def sgd_step(
        self,
        x: torch.Tensor,
        blocks: torch.Tensor,
        rewards: torch.Tensor,
        weights: torch.Tensor | None,
        lr: float,
        shrink: float,
    ) -> None:
        """One in-place SGD step on ``sum_j [sum_i c_ij (f_j(x_i) - r_i)^2 / 2 + (shrink / lr) ||theta_j - theta_0j||^2
        / 2]`` with ``c_ij = weight_ij / max(sum_i weight_ij, 1)``.

        ``x`` ``(n_runs, B, dim)`` float32 (a minibatch per run, shared by the run's ``q`` networks), ``blocks``
        ``(n_runs, B)`` the block of each point, ``rewards`` ``(n_runs, B)``, ``weights`` ``(n_runs, B, q)`` or ``None``
        (all ones); ``shrink = lr m lam / n`` (``0``: no penalty work). Closed-form gradients with
        ``g_ij = c_ij (f_j(x_i) - r_i)``:

            dL/dW_ja = sum_{i: b_i = a} g_ij sqrt(m) (w_j ⊙ 1[h_ij > 0]) x_i^T,
            dL/dw_j = sum_i g_ij sqrt(m) relu(h_ij),

        then ``theta <- theta - shrink (theta - theta_0) - lr dL/dtheta`` (``lerp_`` and ``baddbmm_``). Layout: each
        run's points are grouped by block into segments padded to the largest segment ``C``, so the forward pass is
        one ``bmm`` ``(n_runs n_blocks, C, dim) x (dim, q m)`` and the backward one ``baddbmm_``
        ``(q m, C) x (C, dim)`` into ``weight_in``; padding rows (zeros or earlier steps' contexts, always finite) get
        weight 0, so they contribute exact zeros.
        """
        n_runs, batch, dim = x.shape
        n_blocks, q, m = self.n_blocks, self.networks_per_run, self.width
        units = q * m
        device = x.device
        workspace = self.step_workspace(batch)
        if n_blocks == 1:
            capacity, rows = batch, torch.arange(n_runs * batch, device=device)
        else:
            member = torch.nn.functional.one_hot(blocks, n_blocks)  # (n_runs, B, n_blocks)
            before = member.cumsum(1)  # points up to and including each one, per block
            capacity = int(before[:, -1].max())
            slots = before.gather(2, blocks[..., None]).squeeze(-1) - 1  # rank of each point in its block's segment
            runs = torch.arange(n_runs, device=device)[:, None]
            rows = ((runs * n_blocks + blocks) * capacity + slots).flatten()
        n_rows = n_runs * n_blocks * capacity
        inputs = workspace["inputs"][:n_rows]
        inputs.index_copy_(0, rows, x.reshape(-1, dim))
        segments = inputs.view(n_runs * n_blocks, capacity, dim)
        hidden = workspace["hidden"][: n_rows * units].view(n_runs * n_blocks, capacity, units)
        torch.bmm(segments, self.weight_in.view(n_runs * n_blocks, units, dim).transpose(1, 2), out=hidden)
        hidden.clamp_min_(0.0)  # relu(h); h > 0 exactly where relu(h) > 0
        by_network = hidden.view(n_runs, n_blocks * capacity, q, m)
        weight_out = self.weight_out.view(n_runs, 1, q, m)
        scale = math.sqrt(m)
        active = workspace["active"][: n_rows * units].view(n_runs, n_blocks * capacity, q, m)
        outputs = scale * torch.mul(by_network, weight_out, out=active).sum(-1)  # (n_runs, n_blocks C, q)

        targets = rewards.new_zeros(n_rows).index_copy_(0, rows, rewards.flatten()).view(n_runs, -1, 1)
        coefficient = outputs.sub_(targets)  # sqrt(m) g_ij below, (n_runs, n_blocks C, q)
        if weights is None:
            slot_weights = rewards.new_zeros(n_rows, 1).index_fill_(0, rows, scale / batch)
            coefficient.mul_(slot_weights.view(n_runs, -1, 1))
        else:
            slot_weights = weights.new_zeros(n_rows, q).index_copy_(0, rows, weights.reshape(-1, q))
            totals = weights.sum(1).clamp_min(1.0)  # (n_runs, q)
            coefficient.mul_(slot_weights.view(n_runs, -1, q)).mul_(scale / totals[:, None, :])
        grad_out = torch.mul(by_network, coefficient[..., None], out=active).sum(1).view(n_runs, units)
        torch.sign(by_network, out=active).mul_(weight_out).mul_(coefficient[..., None])  # sqrt(m) g (w ⊙ 1[h > 0])
        if shrink > 0:
            self.weight_in.lerp_(self.initial_in, shrink)
            self.weight_out.lerp_(self.initial_out, shrink)
        self.weight_in.view(n_runs * n_blocks, units, dim).baddbmm_(
            active.view(n_runs * n_blocks, capacity, units).transpose(1, 2), segments, alpha=-lr
        )
        self.weight_out.add_(grad_out, alpha=-lr)
