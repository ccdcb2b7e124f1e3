import pytest
import torch

from hare.model.covariance import RidgeState, linear_means, shared_vector


def inverse_drift(state: RidgeState) -> torch.Tensor:
    """Largest ``|A^{-1} A - I|`` entry per run, ``(n_runs,)``: the rounding drift of the kept inverse."""
    eye = torch.eye(state.dim, dtype=torch.float64, device=state.inverse.device)
    return (state.inverse @ state.precision - eye).abs().flatten(1).max(dim=1).values


def relative_drift(state: RidgeState) -> torch.Tensor:
    """``max_g ||A_g^{-1} - chol_inv(A_g)||_F / ||chol_inv(A_g)||_F`` per run, ``(n_runs,)``: the relative error of
    the Sherman-Morrison inverse against a fresh Cholesky inverse (paper, sec:method, "Covariance update")."""
    exact = torch.cholesky_inverse(torch.linalg.cholesky(state.precision))
    error = torch.linalg.matrix_norm(state.inverse - exact) / torch.linalg.matrix_norm(exact)
    return error.flatten(1).max(dim=1).values


def _brute(xs, rs, lam):
    dim = xs.shape[-1]
    a = lam * torch.eye(dim, dtype=torch.float64) + xs.T @ xs
    return torch.linalg.inv(a), torch.linalg.solve(a, xs.T @ rs)


def test_sherman_morrison_matches_brute_force_inverse():
    torch.manual_seed(0)
    state = RidgeState(n_runs=1, group_shape=(1,), dim=4, lam=0.5, refactor_every=10**9)
    xs = torch.randn(30, 4, dtype=torch.float64)
    rs = torch.randn(30, dtype=torch.float64)
    for x, r in zip(xs, rs, strict=True):
        state.update_selected(torch.tensor([0]), x[None], r[None])
    inverse, theta = _brute(xs, rs, 0.5)
    torch.testing.assert_close(state.inverse[0, 0], inverse, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(state.theta[0, 0], theta, rtol=1e-10, atol=1e-12)


def test_weighted_update_of_all_groups_matches_brute_force():
    torch.manual_seed(1)
    state = RidgeState(n_runs=2, group_shape=(3,), dim=3, lam=1.0)
    xs = torch.randn(10, 2, 3, 3, dtype=torch.float64)
    ws = torch.rand(10, 2, 3, dtype=torch.float64)
    rs = torch.randn(10, 2, 3, dtype=torch.float64)
    for x, w, r in zip(xs, ws, rs, strict=True):
        state.update(x, r, w)
    for b in range(2):
        for g in range(3):
            a = torch.eye(3, dtype=torch.float64) + torch.einsum("t,ti,tj->ij", ws[:, b, g], xs[:, b, g], xs[:, b, g])
            torch.testing.assert_close(state.inverse[b, g], torch.linalg.inv(a))
            torch.testing.assert_close(state.precision[b, g], a)


def test_selected_update_equals_one_hot_weighted_update():
    torch.manual_seed(2)
    a = RidgeState(n_runs=3, group_shape=(4,), dim=2)
    b = RidgeState(n_runs=3, group_shape=(4,), dim=2)
    for _ in range(5):
        index = torch.randint(0, 4, (3,))
        x = torch.randn(3, 2, dtype=torch.float64)
        r = torch.randn(3, dtype=torch.float64)
        a.update_selected(index, x, r)
        weight = torch.nn.functional.one_hot(index, 4).double()
        b.update(x[:, None, :].expand(3, 4, 2), r[:, None].expand(3, 4), weight)
    for name in ("inverse", "precision", "response", "counts"):
        torch.testing.assert_close(getattr(a, name), getattr(b, name))


def test_refactorisation_keeps_long_horizon_inverse_exact():
    torch.manual_seed(3)
    state = RidgeState(n_runs=1, group_shape=(1,), dim=5, lam=1.0, refactor_every=1000)
    xs = torch.nn.functional.normalize(torch.randn(20_000, 5, dtype=torch.float64), dim=1)
    for x in xs:
        state.update_selected(torch.tensor([0]), x[None], torch.ones(1, dtype=torch.float64))
    assert float(inverse_drift(state).max()) < 1e-8


def test_ridge_relative_drift_is_small_after_many_updates():
    state = RidgeState(2, (3,), 4, lam=1.0, refactor_every=10_000)
    gen = torch.Generator().manual_seed(2)
    for _ in range(500):
        state.update(torch.randn(2, 3, 4, generator=gen, dtype=torch.float64), torch.zeros(2, 3), torch.ones(2, 3))
    assert (relative_drift(state) < 1e-8).all()
    state.inverse.mul_(1 + 1e-6)
    assert (relative_drift(state) > 1e-7).all() and (inverse_drift(state) > 1e-7).all()


@pytest.mark.parametrize(
    ("kwargs", "message"), [({"lam": 0.0}, "lam must be positive"), ({"refactor_every": 0}, "refactor_every")]
)
def test_invalid_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        RidgeState(1, (1,), 2, **kwargs)


def test_state_moves_with_the_module():
    state = RidgeState(2, (3,), 4)
    assert set(state.state_dict()) == {"precision", "inverse", "response", "counts", "n_updates"}


def test_quadratic_form_of_a_shared_vector_equals_the_general_form():
    torch.manual_seed(4)
    state = RidgeState(n_runs=2, group_shape=(3,), dim=4)
    for _ in range(6):
        state.update_selected(
            torch.randint(0, 3, (2,)), torch.randn(2, 4, dtype=torch.float64), torch.randn(2, dtype=torch.float64)
        )
    x = torch.randn(2, 1, 4, dtype=torch.float64).expand(2, 3, 4)
    torch.testing.assert_close(state.quadratic_form(x), state.quadratic_form(x.contiguous()), rtol=1e-12, atol=1e-14)


def test_cached_theta_follows_every_kind_of_update_and_a_reload():
    torch.manual_seed(5)
    state = RidgeState(n_runs=2, group_shape=(3,), dim=4, refactor_every=4)
    for step in range(9):
        if step % 3 == 2:
            state.update(
                torch.randn(2, 3, 4, dtype=torch.float64),
                torch.randn(2, 3, dtype=torch.float64),
                torch.rand(2, 3, dtype=torch.float64),
            )
        else:
            state.update_selected(
                torch.randint(0, 3, (2,)), torch.randn(2, 4, dtype=torch.float64), torch.randn(2, dtype=torch.float64)
            )
        exact = torch.linalg.solve(state.precision, state.response[..., None]).squeeze(-1)
        torch.testing.assert_close(state.theta, exact, rtol=1e-9, atol=1e-12)
    copy = RidgeState(n_runs=2, group_shape=(3,), dim=4)
    copy.load_state_dict(state.state_dict())
    torch.testing.assert_close(copy.theta, state.theta)


def _random_state(seed: int, n_runs: int, n_groups: int, dim: int, n_updates: int) -> RidgeState:
    generator = torch.Generator().manual_seed(seed)
    state = RidgeState(n_runs=n_runs, group_shape=(n_groups,), dim=dim, lam=0.5, refactor_every=10**9)
    for _ in range(n_updates):
        index = torch.randint(0, n_groups, (n_runs,), generator=generator)
        state.update_selected(
            index,
            torch.randn(n_runs, dim, generator=generator, dtype=torch.float64),
            torch.randn(n_runs, generator=generator, dtype=torch.float64),
        )
    return state


@pytest.mark.parametrize("shared", [True, False])
def test_row_products_equal_the_inverse_times_the_vector(shared):
    state = _random_state(4, n_runs=3, n_groups=4, dim=6, n_updates=20)
    if shared:
        x = torch.randn(3, 6, dtype=torch.float64)[:, None, :].expand(3, 4, 6)
    else:
        x = torch.randn(3, 4, 6, dtype=torch.float64)
    expected = torch.linalg.solve(state.precision, x[..., None]).squeeze(-1)
    torch.testing.assert_close(state.row_products(x), expected, rtol=1e-10, atol=1e-12)


def test_updates_keep_the_inverse_exactly_symmetric():
    state = _random_state(5, n_runs=2, n_groups=3, dim=7, n_updates=40)
    state.update(
        torch.randn(2, 3, 7, dtype=torch.float64),
        torch.randn(2, 3, dtype=torch.float64),
        torch.rand(2, 3, dtype=torch.float64),
    )
    assert torch.equal(state.inverse, state.inverse.mT)


def test_selected_update_with_supplied_products_equals_the_computed_one():
    supplied = _random_state(6, n_runs=3, n_groups=4, dim=5, n_updates=10)
    computed = _random_state(6, n_runs=3, n_groups=4, dim=5, n_updates=10)
    index = torch.tensor([0, 3, 1])
    x = torch.randn(3, 5, dtype=torch.float64)
    reward = torch.randn(3, dtype=torch.float64)
    products = supplied.row_products(x[:, None, :].expand(3, 4, 5))[torch.arange(3), index]
    supplied.update_selected(index, x, reward, products)
    computed.update_selected(index, x, reward)
    for name in ("inverse", "precision", "response", "counts", "theta"):
        torch.testing.assert_close(getattr(supplied, name), getattr(computed, name), rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(
        supplied.theta,
        torch.linalg.solve(supplied.precision, supplied.response[..., None]).squeeze(-1),
        rtol=1e-10,
        atol=1e-12,
    )


STATE_BUFFERS = ("inverse", "precision", "response", "counts", "n_updates")


@pytest.mark.parametrize("dim", [3, 16, 60])
def test_chosen_update_equals_the_one_hot_update_of_every_group_element_for_element(dim):
    """update_chosen touches the chosen group of each (run, slot) only; the state is torch.equal to update()'s with
    a one-hot weight, over rounds that revisit groups and with a refactorisation on the way."""
    generator = torch.Generator().manual_seed(5)
    n_runs, group_shape = 4, (3, 7)
    full = RidgeState(n_runs=n_runs, group_shape=group_shape, dim=dim, lam=0.7, refactor_every=9)
    chosen = RidgeState(n_runs=n_runs, group_shape=group_shape, dim=dim, lam=0.7, refactor_every=9)
    for _ in range(20):
        cluster = torch.randint(0, 7, (n_runs, 3), generator=generator)  # one cluster per (run, head)
        x = torch.randn(n_runs, 3, dim, generator=generator, dtype=torch.float64)
        r = torch.randn(n_runs, 3, generator=generator, dtype=torch.float64)
        weight = torch.nn.functional.one_hot(cluster, 7).double()  # (n_runs, 3, 7)
        full.update(x[:, :, None, :].expand(-1, -1, 7, -1), r[:, :, None].expand(-1, -1, 7), weight)
        chosen.update_chosen(cluster + 7 * torch.arange(3), x, r)
        for name in STATE_BUFFERS:
            assert torch.equal(getattr(full, name), getattr(chosen, name)), name
    assert torch.equal(full.theta, chosen.theta)


def test_chosen_update_matches_a_brute_force_recomputation():
    """A_g = lam I + sum of x x^T over the rounds that chose g, b_g = sum r x, the inverse and theta from them."""
    generator = torch.Generator().manual_seed(6)
    n_runs, n_groups, dim, lam = 2, 5, 4, 0.5
    state = RidgeState(n_runs=n_runs, group_shape=(n_groups,), dim=dim, lam=lam, refactor_every=10**9)
    xs = torch.randn(30, n_runs, 2, dim, generator=generator, dtype=torch.float64)
    rs = torch.randn(30, n_runs, 2, generator=generator, dtype=torch.float64)
    picks = torch.stack([torch.randperm(n_groups, generator=generator)[:2] for _ in range(30 * n_runs)])
    picks = picks.view(30, n_runs, 2)  # two distinct groups per run and round
    for x, r, index in zip(xs, rs, picks, strict=True):
        state.update_chosen(index, x, r)
    for b in range(n_runs):
        for g in range(n_groups):
            hit = picks[:, b] == g  # (30, 2)
            x_g, r_g = xs[:, b][hit], rs[:, b][hit]
            inverse, theta = _brute(x_g, r_g, lam)
            torch.testing.assert_close(state.inverse[b, g], inverse, rtol=1e-10, atol=1e-12)
            torch.testing.assert_close(state.theta[b, g], theta, rtol=1e-10, atol=1e-12)
            assert state.counts[b, g] == hit.sum()


def test_linear_means_of_a_shared_context_equal_the_elementwise_sum():
    """``linear_means``: the one-product path for a context shared by the arms (``expand``, stride 0) equals
    ``sum_d x_ad theta_ad`` of the materialised context, and a per-arm context takes the elementwise path."""
    gen = torch.Generator().manual_seed(3)
    n_runs, n_arms, dim = 4, 5, 7
    theta = torch.randn(n_runs, n_arms, dim, generator=gen, dtype=torch.float64)
    shared = torch.randn(n_runs, 1, dim, generator=gen, dtype=torch.float64).expand(n_runs, n_arms, dim)
    assert shared_vector(shared, (n_arms,)) is not None
    expected = (shared.contiguous() * theta).sum(-1)
    torch.testing.assert_close(linear_means(shared, theta), expected, rtol=0, atol=1e-12)
    per_arm = torch.randn(n_runs, n_arms, dim, generator=gen, dtype=torch.float64)
    assert shared_vector(per_arm, (n_arms,)) is None
    brute = torch.stack([torch.stack([per_arm[r, a] @ theta[r, a] for a in range(n_arms)]) for r in range(n_runs)])
    torch.testing.assert_close(linear_means(per_arm, theta), brute, rtol=0, atol=1e-12)
