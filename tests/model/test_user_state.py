import torch

from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.model.user_state import UserPosterior
from hare.random import run_keys


def test_posterior_equals_closed_form_gaussian_posterior():
    gen = torch.Generator().manual_seed(0)
    n_runs, n_users, dim, prior_var, sigma = 3, 4, 3, 2.0, 0.5
    posterior = UserPosterior(n_runs, n_users, dim, prior_var, sigma)
    data = {(b, i): ([], []) for b in range(n_runs) for i in range(n_users)}
    for _ in range(25):
        users = torch.randint(0, n_users, (n_runs,), generator=gen)
        phi = torch.randn(n_runs, dim, generator=gen, dtype=torch.float64)
        y = torch.randn(n_runs, generator=gen, dtype=torch.float64)
        posterior.update(users, phi, y)
        for b in range(n_runs):
            data[b, int(users[b])][0].append(phi[b])
            data[b, int(users[b])][1].append(y[b])
    for (b, i), (phis, ys) in data.items():
        phi = torch.stack(phis) if phis else torch.zeros(0, dim, dtype=torch.float64)
        y = torch.stack(ys) if ys else torch.zeros(0, dtype=torch.float64)
        precision = torch.eye(dim, dtype=torch.float64) / prior_var + phi.T @ phi / sigma**2
        covariance = torch.linalg.inv(precision)
        torch.testing.assert_close(posterior.precision[b, i], precision)
        torch.testing.assert_close(posterior.covariance()[b, i], covariance)
        torch.testing.assert_close(posterior.mean[b, i], covariance @ phi.T @ y / sigma**2)
        torch.testing.assert_close(posterior.lambda_min()[b, i], torch.linalg.eigvalsh(precision)[0])


def test_posterior_mean_converges_to_true_user_state_on_linear_environment():
    config = SyntheticConfig(noise_sigma=0.1, n_users=3, user_dim=4, reward_scale=4.0)
    env = SyntheticBandit(config, 2, 1, run_keys(0, [0, 1], "env"))
    logged = env.sample_logged(3000, run_keys(0, [0, 1], "logged"))
    w = env.oracle
    keys = env.pool.embeddings @ w.key.T  # (N, d_k)
    scale = config.reward_scale / config.key_dim**0.5
    posterior = UserPosterior(2, config.n_users, config.user_dim, 1.0, config.noise_sigma)
    for m in range(logged.items.shape[1]):
        k = keys[logged.items[:, m]]  # (2, d_k)
        feature = scale * k @ w.query_user  # (2, d_u)
        offset = scale * ((logged.queries[:, m] @ w.query_context.T) * k).sum(-1)
        posterior.update(logged.users[:, m], feature, logged.rewards[:, m] - offset)
    error = (posterior.mean - env.users[None]).norm(dim=-1)
    assert error.max() < 0.1, error
    assert (posterior.lambda_min() > 100).all()
