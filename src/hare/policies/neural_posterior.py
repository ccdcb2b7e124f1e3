"""NeuralUCB and NeuralTS: the linearised (gradient) posterior of the neural network of :mod:`hare.policies.neural`
(its network, input encoding, training schedule and precision), batched over runs.

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

The policies' hyperparameters are :class:`~hare.policies.neural.GradientPosteriorConfig` and its subclasses.
"""

from __future__ import annotations

import math

import torch

from hare.envs.base import BanditEnvironment, Observation
from hare.model.covariance import RidgeState, ridge_bytes
from hare.policies.base import pulled_contexts, register_policy, upper_confidence_bound
from hare.policies.neural import GradientPosteriorConfig, NeuralPolicy, NeuralTSConfig, NeuralUCBConfig


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

    @classmethod
    def memory_bytes(
        cls, config: GradientPosteriorConfig, arms: int, dim: int, length: int, clusters: int
    ) -> tuple[int, int]:
        """:meth:`NeuralPolicy.memory_bytes` plus the posterior over the ``p`` parameters: the diagonal's ``1 / Z_ii``,
        ``8 p``, or the full ``Z`` and ``Z^{-1}``, :func:`hare.model.covariance.ridge_bytes` of one group of ``p``
        features (``16 p^2``)."""
        grows, fixed = super().memory_bytes(config, arms, dim, length, clusters)
        n_blocks = arms if config.encoding == "disjoint" else 1
        n_parameters = config.width * n_blocks * dim + config.width
        return grows, fixed + (8 * n_parameters if config.exploration == "diagonal" else ridge_bytes(1, n_parameters))

    @classmethod
    def round_bytes(cls, config: GradientPosteriorConfig, arms: int, dim: int, runs: int) -> int:
        """The temporaries of one round's :meth:`posterior` over ``runs`` runs, float64: the per-arm vectors of the
        diagonal's closed form (``8 runs arms (3 width + dim)``), the copied blocks of ``Z^{-1}`` (``16 runs (width
        dim)^2`` per arm, disjoint) or the Jacobian (``28 runs p`` per arm), in chunks of arms kept within
        ``memory_budget_mb``; nothing for ``loop``."""
        if config.exploration == "loop":
            return 0
        block = config.width * dim
        if config.exploration == "diagonal":
            return 8 * runs * arms * (3 * config.width + dim)
        per_arm = (
            16 * runs * block**2 if config.encoding == "disjoint" else 28 * runs * (config.width * dim + config.width)
        )
        return min(arms * per_arm, max(per_arm, int(config.memory_budget_mb * 2**20)))

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
