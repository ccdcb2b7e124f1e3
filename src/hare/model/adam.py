"""Adam (Kingma and Ba, 2015, Algorithm 1) for the offline fits: HARE's learned projections and the decoders.

For every parameter ``theta`` with gradient ``g`` at step ``t = 1, 2, ...``:

    m_t = beta1 m_{t-1} + (1 - beta1) g
    v_t = beta2 v_{t-1} + (1 - beta2) g^2
    theta_t = theta_{t-1} - lr / (1 - beta1^t) * m_t / (sqrt(v_t) / sqrt(1 - beta2^t) + eps)

(the bias corrections folded into the step size and the denominator, ``eps`` added after the
correction). Each operation is the one ``torch.optim.Adam``'s single-tensor path uses, so on CPU
the two give the same bits (a test compares them). Why not ``torch.optim``: constructing one of
its optimisers imports ``torch._dynamo`` (and sympy), about 0.8 s of every process that fits.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch


class Adam:
    """Adam over ``params`` (leaf tensors with ``requires_grad``), state ``m``, ``v`` and ``t`` per parameter.

    :meth:`zero_grad` clears the gradients (to ``None``), :meth:`step` applies one update in place
    from the current gradients; a parameter without a gradient is skipped and its ``t`` stays.
    """

    def __init__(
        self,
        params: Iterable[torch.Tensor],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
    ):
        self.params = list(params)
        if not self.params:
            raise ValueError("Adam: empty parameter list")
        if not lr >= 0.0:
            raise ValueError(f"Adam: lr must be >= 0 (got {lr})")
        if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
            raise ValueError(f"Adam: betas must lie in [0, 1) (got {betas})")
        self.lr, self.betas, self.eps = float(lr), (float(betas[0]), float(betas[1])), float(eps)
        self.steps = [0] * len(self.params)
        self.first_moments = [torch.zeros_like(p, memory_format=torch.preserve_format) for p in self.params]
        self.second_moments = [torch.zeros_like(p, memory_format=torch.preserve_format) for p in self.params]

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        beta1, beta2 = self.betas
        for i, (p, m, v) in enumerate(zip(self.params, self.first_moments, self.second_moments, strict=True)):
            if p.grad is None:
                continue
            self.steps[i] += 1
            step_size = self.lr / (1 - beta1 ** float(self.steps[i]))
            correction2_sqrt = (1 - beta2 ** float(self.steps[i])) ** 0.5
            g = p.grad
            m.lerp_(g, 1 - beta1)
            v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
            denominator = (v.sqrt() / correction2_sqrt).add_(self.eps)
            p.addcdiv_(m, denominator, value=-step_size)
