import torch

from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.model.projections import (
    Projections,
    attention_error,
    fit_projections,
    oracle_projections,
    random_projections,
)
from hare.random import run_keys


def cross_user_similarity(
    projections: Projections, user_states: torch.Tensor, queries: torch.Tensor, items: torch.Tensor
) -> float:
    """Mean pairwise cosine similarity of ``z`` across users for the same query (about 0.99999 at std 0.02).

    user_states ``(n_users, d_u)``, queries ``(Q, d_x)``; returns the average over queries and
    over user pairs ``i < i'`` of ``cos(z(x, u_i), z(x, u_i'))``.
    """
    n_users = user_states.shape[0]
    x = queries[:, None, :].expand(-1, n_users, -1)  # (Q, n_users, d_x)
    u = user_states[None].expand(queries.shape[0], -1, -1)  # (Q, n_users, d_u)
    z = torch.nn.functional.normalize(projections.synthesis(x, u, items), dim=-1)  # (Q, n_users, d_out)
    cosine = z @ z.transpose(1, 2)  # (Q, n_users, n_users)
    pairs = torch.triu_indices(n_users, n_users, offset=1)
    return float(cosine[:, pairs[0], pairs[1]].mean())


# Peaked oracle attention: reward logits ``scale * s*`` spread over several units.
CONFIG = SyntheticConfig(reward_scale=8.0, noise_sigma=0.1, n_users=5)


def environment():
    return SyntheticBandit(CONFIG, 1, 1, run_keys(0, [0], "env"))


def fresh_queries(env, n=64):
    return torch.nn.functional.normalize(
        torch.randn(n, CONFIG.query_dim, generator=torch.Generator().manual_seed(9), dtype=torch.float64), dim=-1
    )


def fitted(env):
    logged = env.sample_logged(2000, run_keys(0, [0], "logged"))
    return fit_projections(
        logged,
        env.pool.embeddings,
        CONFIG.n_users,
        CONFIG.user_dim,
        n_heads=1,
        key_dim=CONFIG.key_dim,
        steps=400,
        lr=0.03,
    )


def test_random_projections_give_near_uniform_attention_and_user_blind_outputs():
    env = environment()
    queries = fresh_queries(env)
    users = env.users[torch.arange(64) % CONFIG.n_users]
    uniform = torch.full((64, CONFIG.n_items), 1.0 / CONFIG.n_items, dtype=torch.float64)
    transformer_init = random_projections(
        2, 8, CONFIG.query_dim, CONFIG.user_dim, CONFIG.item_dim, seed=1, init_std=0.02
    )
    assert (transformer_init.attention(queries, users, env.pool.embeddings) - uniform).abs().sum(-1).mean() < 0.01
    # Claim random_projections_near_identical expects about 0.99999; with std 0.02 the band asserted is > 0.9999
    # (measured 0.999999).
    assert cross_user_similarity(transformer_init, env.users, queries, env.pool.embeddings) > 0.9999
    # Variance-preserving init (std 1/sqrt(fan_in)) is less degenerate: measured 0.91 (H=1), 0.996 (H=4).
    fan_in = random_projections(1, 8, CONFIG.query_dim, CONFIG.user_dim, CONFIG.item_dim, seed=1)
    assert (fan_in.attention(queries, users, env.pool.embeddings) - uniform).abs().sum(-1).mean() < 0.5
    assert cross_user_similarity(fan_in, env.users, queries, env.pool.embeddings) > 0.85


def test_learned_projections_fit_the_logs_and_separate_users():
    env = environment()
    learned, report = fitted(env)
    assert report.epsilon_train < 2 * CONFIG.noise_sigma**2 + 0.02
    assert report.loss_history[0] > report.epsilon_train
    queries = fresh_queries(env)
    users = torch.arange(64) % CONFIG.n_users
    oracle = oracle_projections(env)
    random = random_projections(1, 8, CONFIG.query_dim, CONFIG.user_dim, CONFIG.item_dim, seed=1)
    learned_error = attention_error(learned, report.user_states, oracle, env.users, queries, users, env.pool.embeddings)
    random_error = attention_error(random, env.users, oracle, env.users, queries, users, env.pool.embeddings)
    assert learned_error < 0.5 * random_error
    similarity_learned = cross_user_similarity(learned, report.user_states, queries, env.pool.embeddings)
    similarity_random = cross_user_similarity(random, env.users, queries, env.pool.embeddings)
    assert similarity_learned < similarity_random - 0.5  # measured 0.12 vs 0.91


def test_fit_is_deterministic():
    env = environment()
    logged = env.sample_logged(300, run_keys(0, [0], "logged"))
    first = fit_projections(logged, env.pool.embeddings, CONFIG.n_users, CONFIG.user_dim, 1, 8, steps=20)
    second = fit_projections(logged, env.pool.embeddings, CONFIG.n_users, CONFIG.user_dim, 1, 8, steps=20)
    assert torch.equal(first[0].key, second[0].key) and first[1].epsilon_train == second[1].epsilon_train
