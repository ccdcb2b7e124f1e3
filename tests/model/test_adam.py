"""Our Adam against torch.optim.Adam (an independent implementation) on identical inputs: the same bits on CPU,
with a parameter that has no gradient on some steps; against Algorithm 1 of Kingma and Ba by hand; its validation."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
import torch

from hare.model.adam import Adam


def quadratic_problem(seed: int) -> tuple[list[torch.Tensor], torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    params = [torch.randn(4, 3, dtype=torch.float64, generator=g), torch.randn(5, dtype=torch.float32, generator=g)]
    target = torch.randn(4, 3, dtype=torch.float64, generator=g)
    design = torch.randn(5, 5, dtype=torch.float32, generator=g)
    return params, target, design


def play(optimiser_class, steps: int = 60, **options) -> list[torch.Tensor]:
    start, target, design = quadratic_problem(0)
    params = [p.clone().requires_grad_(True) for p in start]
    optimiser = optimiser_class(params, **options)
    for step in range(steps):
        optimiser.zero_grad()
        loss = ((params[0] - target) ** 4).sum()
        if step % 3 != 1:  # the second parameter has no gradient every third step
            loss = loss + (design @ params[1]).square().sum().to(torch.float64)
        loss.backward()
        optimiser.step()
    return [p.detach() for p in params]


@pytest.mark.parametrize("options", [{}, {"lr": 0.05}, {"lr": 0.01, "betas": (0.5, 0.9), "eps": 1e-6}])
def test_same_bits_as_torch_adam(options):
    ours, theirs = play(Adam, **options), play(torch.optim.Adam, **options)
    for mine, reference in zip(ours, theirs, strict=True):
        assert torch.equal(mine, reference)
    assert not torch.equal(ours[0], quadratic_problem(0)[0][0])


def test_first_steps_by_hand():
    theta = torch.tensor([1.0, -2.0], dtype=torch.float64, requires_grad=True)
    optimiser = Adam([theta], lr=0.1, betas=(0.9, 0.99), eps=1e-8)
    grads = [torch.tensor([0.5, -1.0], dtype=torch.float64), torch.tensor([-0.25, 2.0], dtype=torch.float64)]
    expected, m, v = theta.detach().clone(), torch.zeros(2, dtype=torch.float64), torch.zeros(2, dtype=torch.float64)
    for t, grad in enumerate(grads, start=1):
        theta.grad = grad.clone()
        optimiser.step()
        m = 0.9 * m + 0.1 * grad
        v = 0.99 * v + 0.01 * grad**2
        m_hat, v_hat = m / (1 - 0.9**t), v / (1 - 0.99**t)
        expected = expected - 0.1 * m_hat / (v_hat.sqrt() + 1e-8)
        torch.testing.assert_close(theta.detach(), expected, rtol=1e-12, atol=1e-12)
        if t == 1:  # the first step moves each coordinate by lr against its gradient's sign
            assert math.isclose(float(theta.detach()[0]), 0.9, rel_tol=1e-6) and math.isclose(
                float(theta.detach()[1]), -1.9, rel_tol=1e-6
            )


@pytest.mark.parametrize(
    "args, match",
    [
        (([],), "empty"),
        (([torch.zeros(1, requires_grad=True)], -1.0), "lr"),
        (([torch.zeros(1, requires_grad=True)], 0.1, (1.0, 0.9)), "betas"),
    ],
)
def test_bad_arguments_are_named(args, match):
    with pytest.raises(ValueError, match=match):
        Adam(*args)


def test_fitting_does_not_import_the_compiler_stack():
    """The reason for this module: a process that fits projections stays clear of torch._dynamo (and sympy)."""
    probe = (
        "import sys, torch\n"
        "from types import SimpleNamespace\n"
        "from hare.model.projections import fit_projections\n"
        "g = torch.Generator().manual_seed(0)\n"
        "logged = SimpleNamespace(queries=torch.randn(20, 3, dtype=torch.float64, generator=g), "
        "users=torch.randint(0, 2, (20,), generator=g), "
        "items=torch.randint(0, 4, (20,), generator=g), rewards=torch.randn(20, dtype=torch.float64, generator=g))\n"
        "fit_projections(logged, torch.randn(4, 5, dtype=torch.float64, generator=g), n_users=2, user_dim=2, "
        "n_heads=2, key_dim=3, steps=5)\n"
        "print('torch._dynamo' in sys.modules, 'sympy' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout.split()
    assert out == ["False", "False"]
