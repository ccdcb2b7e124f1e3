import math

import pytest
import torch

from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.policies import build_policy, make_config
from hare.random import run_keys

SMALL = SyntheticConfig(n_items=24, n_clusters=4, n_users=3)
# Noise-free and well separated: items sit within 0.02 of their cluster centre, so the
# cluster with the best mean score is the cluster of the best item.
SEPARATED = SyntheticConfig(n_items=24, n_clusters=4, n_users=3, cluster_spread=0.02, noise_sigma=0.0)


def environment(config, runs, horizon=40):
    return SyntheticBandit(config, len(runs), horizon, run_keys(0, runs, "env"))


def play(name, params, config, runs, horizon=40):
    """Arms ``(horizon, n_runs)`` and total regret ``(n_runs,)`` of policy ``name`` on runs ``runs``."""
    env = environment(config, runs, horizon)
    policy = build_policy(name, params, env, run_keys(0, runs, "policy"))
    arms, regret = [], torch.zeros(len(runs), dtype=torch.float64)
    for t in range(horizon):
        round_ = env.round(t)
        chosen = policy.select(round_.observation)
        policy.update(round_.observation, chosen, round_.reward(chosen))
        arms.append(chosen)
        regret += round_.regret(chosen)
    return torch.stack(arms), regret


def play_synthesis(params, config, runs, horizon=30):
    env = environment(config, runs, horizon)
    policy = build_policy("hare_synthesize", params, env, run_keys(0, runs, "policy"))
    outputs, regret = [], torch.zeros(len(runs), dtype=torch.float64)
    for t in range(horizon):
        observation = env.round(t).observation
        z = policy.synthesize(observation)
        reward, _, round_regret = env.synthesis_outcome(t, z)
        policy.update_synthesis(observation, z, reward)
        outputs.append(z)
        regret += round_regret
    return torch.stack(outputs), regret


def test_oracle_projections_and_true_users_pick_the_oracle_item():
    """With the frozen mean the cluster index is the exact cluster score (the online mean learns from it, see below)."""
    _, regret = play("hare", {"alpha": 0.0, "user_state": "oracle", "mean": "frozen"}, SEPARATED, [0, 1, 2], horizon=60)
    assert torch.equal(regret, torch.zeros_like(regret))


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"alpha_schedule": "inverse_sqrt", "covariance_update": "attention_weighted"},
        {"alpha_schedule": "lnucb_ta", "user_state": "off", "n_clusters": 24},
        {
            "projections": "random",
            "n_heads": 2,
            "alpha_schedule": "per_head",
            "alphas": (0.5, 2.0),
            "n_clusters": 1,
            "online_lr": 0.1,
        },
        {"covariance": "diagonal", "covariance_update": "attention_weighted"},
        {"covariance": "low_rank", "covariance_rank": 3, "projections": "random", "n_heads": 2},
    ],
)
def test_batched_equals_unbatched_select(params):
    batched, _ = play("hare", params, SMALL, [0, 1, 2])
    for i in range(3):
        alone, _ = play("hare", params, SMALL, [i])
        assert torch.equal(alone[:, 0], batched[:, i])


@pytest.mark.parametrize("params", [{}, {"covariance_update": "attention_weighted", "alpha_schedule": "inverse_sqrt"}])
def test_batched_equals_unbatched_synthesize(params):
    """``z`` is continuous: matrix products over the run dimension may round differently with
    the batch size (last bit), so ``z`` agrees to 1e-12 and its dominant cluster exactly."""
    env = environment(SMALL, [0])
    clusters = build_policy("hare_synthesize", {}, env, run_keys(0, [0], "p")).clusters
    batched, _ = play_synthesis(params, SMALL, [0, 1])
    for i in range(2):
        alone, _ = play_synthesis(params, SMALL, [i])
        torch.testing.assert_close(alone[:, 0], batched[:, i], rtol=0, atol=1e-12)
        nearest = lambda z: clusters[(z @ env.pool.embeddings.T).argmax(-1)]  # noqa: E731
        assert torch.equal(nearest(alone[:, 0]), nearest(batched[:, i]))


def test_synthesize_mode_outputs_convex_combinations_with_bounded_regret():
    outputs, regret = play_synthesis({"alpha": 0.5}, SMALL, [0, 1], horizon=20)
    assert outputs.shape == (20, 2, SMALL.item_dim)
    assert (regret >= 0).all()
    env = environment(SMALL, [0])
    with pytest.raises(RuntimeError, match="synthesize"):
        build_policy("hare_synthesize", {}, env, run_keys(0, [0], "p")).select(env.round(0).observation)


def test_covariance_routes_to_the_pulled_cluster_and_alpha_schedules():
    env = environment(SMALL, [0, 1])
    policy = build_policy("hare", {"alpha_schedule": "lnucb_ta", "alpha": 2.0}, env, run_keys(0, [0, 1], "p"))
    round_ = env.round(0)
    arms = policy.select(round_.observation)
    q = policy.queries(round_.observation)
    policy.update(round_.observation, arms, round_.reward(arms))
    clusters = policy.clusters[arms]
    eye = torch.eye(policy.key_dim, dtype=torch.float64)
    for b in range(2):
        for j in range(policy.n_clusters):
            expected = eye + (torch.outer(q[b, 0], q[b, 0]) if j == clusters[b] else 0)
            torch.testing.assert_close(policy.attention.covariance.precision[b, 0, j], expected)
    reward = round_.reward(arms)
    expected_alpha = (2.0 / 2.0 * reward).clamp_min(0.0)  # kappa g + (1 - kappa) n_j = r for the one pulled cluster
    alpha = policy.exploration_weights(1)[:, 0]  # (n_runs, C)
    torch.testing.assert_close(alpha[torch.arange(2), clusters], expected_alpha)


def test_hare_beats_random_and_rag_cosine_is_deterministic():
    _, hare_regret = play("hare", {}, SMALL, [0, 1], horizon=80)
    _, random_regret = play("random", {}, SMALL, [0, 1], horizon=80)
    assert hare_regret.mean() < 0.5 * random_regret.mean()
    first, _ = play("rag_cosine", {}, SMALL, [0, 1], horizon=10)
    second, _ = play("rag_cosine", {}, SMALL, [0, 1], horizon=10)
    assert torch.equal(first, second)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"alpha": -1.0}, "alpha"),
        ({"mode": "generate"}, "mode"),
        ({"alpha_schedule": "cosine"}, "alpha_schedule"),
        ({"alpha_schedule": "per_head", "n_heads": 2, "alphas": (1.0,)}, "alphas"),
        ({"alphas": (1.0,)}, "alphas"),
        ({"kappa": 1.5}, "kappa"),
        ({"n_heads": 0}, "n_heads"),
        ({"key_dim": 0}, "key_dim"),
        ({"n_clusters": -1}, "n_clusters"),
        ({"lam": 0.0}, "lam"),
        ({"covariance_update": "all"}, "covariance_update"),
        ({"projections": "pretrained"}, "projections"),
        ({"user_state": "oracle", "projections": "learned"}, "user_state"),
        ({"user_state": "maybe"}, "user_state"),
        ({"online_lr": -0.1}, "online_lr"),
        ({"noise_sigma": 0.0}, "noise_sigma"),
        ({"random_init_std": 0.0}, "random_init_std"),
        ({"heads": 2}, "unknown hyperparameter"),
        ({"n_logged": 100}, "unknown hyperparameter"),
        ({"mean": "sometimes"}, "mean"),
        ({"covariance": "sparse"}, "covariance"),
        ({"covariance": "low_rank", "covariance_rank": 0}, "covariance_rank"),
        ({"pool": "catalogue"}, "pool"),
        ({"pool": "log_prototypes", "projections": "oracle"}, "pool"),
        ({"pool": "log_prototypes", "projections": "random", "n_clusters": 3}, "pool"),
    ],
)
def test_invalid_configs(params, match):
    with pytest.raises(ValueError, match=match):
        make_config("hare", params)


def test_too_many_clusters_is_an_error():
    env = environment(SMALL, [0])
    with pytest.raises(ValueError, match="n_clusters"):
        build_policy("hare", {"n_clusters": 25}, env, run_keys(0, [0], "p"))


# -- the online mean -------------------------------------------------------------------------

import torch.nn.functional as F  # noqa: E402

from hare.envs.classification import ClassificationBandit  # noqa: E402
from hare.experiments.simulation import SimulationOptions, simulate  # noqa: E402
from hare.model.projections import fit_projections  # noqa: E402
from hare.policies import hare as hare_module  # noqa: E402
from hare.policies import hare_projections  # noqa: E402
from hare.policies.base import upper_confidence_bound  # noqa: E402

LOGISTIC = SyntheticConfig(n_items=24, n_clusters=4, n_users=3, link="logistic", reward_scale=3.0)


def test_online_mean_equals_frozen_mean_without_data():
    """theta = Sigma^{-1}(lam theta0 + 0) = theta0 before any update: the two indices agree and pick the same arms."""
    env = environment(SMALL, [0, 1, 2])
    observation = env.round(0).observation
    for lam in (1.0, 0.3):
        online = build_policy(
            "hare", {"lam": lam, "n_heads": 2, "projections": "random"}, env, run_keys(0, [0, 1, 2], "p")
        )
        frozen = build_policy(
            "hare",
            {"lam": lam, "n_heads": 2, "projections": "random", "mean": "frozen"},
            env,
            run_keys(0, [0, 1, 2], "p"),
        )
        out = online.attend(observation)
        torch.testing.assert_close(
            online.cluster_means(out), frozen.cluster_means(frozen.attend(observation)), rtol=0, atol=1e-14
        )
        torch.testing.assert_close(
            online.attention.cluster_estimates(),
            online.attention.prior_parameters().expand(3, -1, -1, -1),
            rtol=0,
            atol=1e-15,
        )
        assert torch.equal(online.select(observation), frozen.select(observation))
        expected = upper_confidence_bound(
            frozen.attention.cluster_scores(out.queries), out.bonuses, online.exploration_weights(0)
        ).mean(1)
        torch.testing.assert_close(online.cluster_index(out, 0), expected, rtol=0, atol=1e-14)


def _brute_force_theta(policy, history, link):
    """``(lam I + sum w q q^T)^{-1} (lam theta0 + sum w q y)`` by a linear solve, ``(n_runs, H, C, d_k)``."""
    att = policy.attention
    n_runs, d_k = policy.n_runs, policy.key_dim
    lam = policy.config.lam
    theta0 = att.cluster_mean_keys / math.sqrt(d_k)  # (H, C, d_k)
    precision = (
        lam * torch.eye(d_k, dtype=torch.float64).expand(n_runs, policy.n_heads, policy.n_clusters, d_k, d_k).clone()
    )
    target = (lam * theta0).expand(n_runs, -1, -1, -1).clone()
    for q, weights, rewards in history:  # q (n_runs, H, d_k), weights (n_runs, H, C), rewards (n_runs,)
        for b in range(n_runs):
            for h in range(policy.n_heads):
                for j in range(policy.n_clusters):
                    w = float(weights[b, h, j])
                    if link == "logistic":
                        s0 = float(sum(q[b, g] @ theta0[g, j] for g in range(policy.n_heads))) / policy.n_heads
                        mu = 1.0 / (1.0 + math.exp(-s0))
                        y = s0 + (float(rewards[b]) - mu) / max(mu * (1.0 - mu), hare_module.LOGISTIC_SLOPE_FLOOR)
                    else:
                        y = float(rewards[b])
                    precision[b, h, j] += w * torch.outer(q[b, h], q[b, h])
                    target[b, h, j] += w * q[b, h] * y
    return torch.linalg.solve(precision, target.unsqueeze(-1)).squeeze(-1)


@pytest.mark.parametrize(
    "config, params",
    [
        (SMALL, {"n_heads": 2, "projections": "random", "lam": 0.5}),
        (SMALL, {"covariance_update": "attention_weighted", "online_lr": 0.2, "projections": "random", "n_heads": 2}),
        (LOGISTIC, {"n_heads": 2}),
        (LOGISTIC, {"covariance_update": "attention_weighted", "online_lr": 0.1, "projections": "random"}),
        (
            SMALL,
            {"covariance": "low_rank", "covariance_rank": 8, "covariance_update": "attention_weighted", "n_heads": 2},
        ),
        (LOGISTIC, {"covariance": "low_rank", "covariance_rank": 8, "online_lr": 0.1, "projections": "random"}),
    ],
)
def test_theta_equals_a_brute_force_ridge_solve(config, params):
    """After a few rounds (q changing under online_lr), theta is the ridge solve on the q of each round and y on the
    link's scale."""
    env = environment(config, [0, 1], horizon=8)
    policy = build_policy("hare", params, env, run_keys(0, [0, 1], "p"))
    history = []
    for t in range(8):
        round_ = env.round(t)
        arms = policy.select(round_.observation)
        out = policy.attend(round_.observation)
        q = out.queries.clone()
        if policy.config.covariance_update == "attention_weighted":
            weights = policy.attention.cluster_mass(out.weights)
        else:
            weights = (
                F.one_hot(policy.clusters[arms], policy.n_clusters)
                .to(torch.float64)[:, None, :]
                .expand(-1, policy.n_heads, -1)
            )
        rewards = round_.reward(arms)
        policy.update(round_.observation, arms, rewards)
        history.append((q, weights.clone(), rewards))
        if policy.config.online_lr > 0 and t == 0:
            assert not torch.equal(policy.queries(round_.observation), q)  # the projections really moved
    expected = _brute_force_theta(policy, history, config.link)
    torch.testing.assert_close(policy.attention.cluster_estimates(), expected, rtol=1e-9, atol=1e-11)
    observation = env.round(8).observation if env.horizon > 8 else round_.observation
    q = policy.queries(observation)
    torch.testing.assert_close(
        policy.cluster_means(policy.attend(observation)), (expected * q[:, :, None, :]).sum(-1), rtol=1e-9, atol=1e-11
    )


@pytest.mark.parametrize(
    "config, params",
    [
        (
            SMALL,
            {
                "mean": "online",
                "projections": "random",
                "n_heads": 2,
                "online_lr": 0.1,
                "covariance_update": "attention_weighted",
            },
        ),
        (LOGISTIC, {"mean": "online", "alpha_schedule": "inverse_sqrt"}),
        (SMALL, {"mean": "frozen"}),
    ],
)
def test_batched_equals_unbatched_for_both_means(config, params):
    batched, _ = play("hare", params, config, [0, 1, 2])
    for i in range(3):
        alone, _ = play("hare", params, config, [i])
        assert torch.equal(alone[:, 0], batched[:, i])


def test_online_and_frozen_means_differ_once_rewards_arrive():
    online, _ = play("hare", {"mean": "online", "projections": "random", "alpha": 0.1}, SMALL, [0, 1], horizon=60)
    frozen, _ = play("hare", {"mean": "frozen", "projections": "random", "alpha": 0.1}, SMALL, [0, 1], horizon=60)
    assert torch.equal(online[0], frozen[0]) and not torch.equal(online, frozen)


# -- information: logs only through warm_start -------------------------------------------------


def test_cold_regime_hare_learns_online_and_reads_no_log():
    env = environment(SMALL, [0, 1], horizon=30)
    env.logs_allowed = False
    policy = build_policy(
        "hare", {"projections": "random", "mean": "online", "online_lr": 0.05}, env, run_keys(0, [0, 1], "p")
    )
    start = policy.query_context.clone()
    out = simulate(env, policy, SimulationOptions(record_every=10))
    assert env.logged_reads == 0
    assert out["cumulative_regret"].shape == (2, 3)
    assert not torch.equal(policy.query_context, start) and policy.attention.covariance.counts.sum() == 2 * 30


@pytest.mark.parametrize(
    "name, params",
    [
        ("hare", {"projections": "learned"}),
        ("hare", {"projections": "random", "pool": "log_prototypes"}),
        ("rag_cosine", {"projections": "learned"}),
    ],
)
def test_logs_dependent_policies_build_without_touching_a_cold_environment(name, params):
    env = environment(SMALL, [0, 1])
    env.logs_allowed = False
    policy = build_policy(name, params, env, run_keys(0, [0, 1], "p"))
    assert env.logged_reads == 0
    with pytest.raises(hare_projections.WarmStartRequired, match="warm_start"):
        policy.select(env.round(0).observation)
    with pytest.raises(ValueError, match="projections: random"):
        make_config(name, params).check_regime("cold")
    make_config(name, params).check_regime("warm")
    cold = {**params, "projections": "random"} if "pool" not in params else {**params, "pool": "environment"}
    make_config(name, cold).check_regime("cold")


def test_learned_warm_start_equals_fit_then_the_logs_through_update():
    env = environment(SMALL, [0, 1], horizon=5)
    logs = env.logged(200)
    reads = env.logged_reads
    params = {"projections": "learned", "fit_steps": 30, "n_heads": 2, "key_dim": 4}
    warm = build_policy("hare", params, env, run_keys(0, [0, 1], "p"))
    random_start = warm.projections.query_context.clone()
    hare_projections._FIT_CACHE.clear()
    warm.warm_start(logs)
    assert env.logged_reads == reads  # the policy read the logs it was given, never the environment's
    # the projections: an independent fit on the same logs
    logged = hare_projections.logged_interactions(logs)
    fitted, report = fit_projections(
        logged, env.pool.embeddings, env.n_users, env.user_dim, 2, 4, steps=30, lr=0.03, seed=0
    )
    assert not torch.equal(random_start, fitted.query_context)
    for name in ("query_context", "query_user", "key"):
        assert torch.equal(getattr(warm.projections, name), getattr(fitted, name))
    assert torch.equal(warm.attention.keys, fitted.keys(env.pool.embeddings.to(torch.float64)))
    assert warm.fit_report.epsilon_train == report.epsilon_train
    # then every logged interaction through update: the state of a policy that played them after the same fit
    played = build_policy("hare", params, env, run_keys(0, [0, 1], "p"))
    played._fit_on_logs(logs)
    for m in range(len(logs)):
        observation, arms, rewards = logs.step(m, env.n_runs)
        played.update(observation, arms, rewards)
    a, b = warm.state_dict(), played.state_dict()
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key
    assert int(warm.attention.covariance.counts.sum()) == 2 * 2 * 200  # runs x heads x logged rounds
    assert warm.user_posterior.counts.sum() == 2 * 200


def test_learned_warm_start_covariance_by_brute_force():
    """user_state off: Sigma of cluster j is lam I + sum of q_m q_m^T over the logged rounds whose arm is in j."""
    env = environment(SMALL, [0], horizon=5)
    logs = env.logged(60)
    policy = build_policy(
        "hare", {"projections": "learned", "fit_steps": 20, "user_state": "off", "lam": 0.7}, env, run_keys(0, [0], "p")
    )
    policy.warm_start(logs)
    q = torch.einsum("hkd,md->mhk", policy.projections.query_context, logs.queries.to(torch.float64))  # (M, H, d_k)
    for j in range(policy.n_clusters):
        rows = policy.clusters[logs.arms] == j
        expected = 0.7 * torch.eye(policy.key_dim, dtype=torch.float64) + torch.einsum(
            "mk,ml->kl", q[rows, 0], q[rows, 0]
        )
        torch.testing.assert_close(policy.attention.covariance.precision[0, 0, j], expected, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(
            policy.attention.covariance.response[0, 0, j],
            (q[rows, 0] * logs.rewards[rows, None]).sum(0),
            rtol=1e-12,
            atol=1e-12,
        )


def classification_environment(n_runs=2, horizon=10, logged_rows=120):
    gen = torch.Generator().manual_seed(3)
    centres = F.normalize(torch.randn(4, 6, generator=gen, dtype=torch.float64), dim=-1)
    labels = torch.arange(200) % 3  # class 3 never occurs: its prototype falls back to the mean of all logged queries
    features = F.normalize(centres[labels] + 0.1 * torch.randn(200, 6, generator=gen, dtype=torch.float64), dim=-1)
    labels[0] = 3  # one row of class 3 so the pool has four items; almost surely not logged with reward > 0
    return ClassificationBandit(
        features, labels, n_runs, horizon, run_keys(0, range(n_runs), "cls"), logged_rows=logged_rows
    )


def test_log_prototypes_are_class_means_of_the_logs():
    env = classification_environment()
    logs = env.logged(100)
    prototypes = hare_projections.log_prototypes(logs, env.n_arms)
    for a in range(env.n_arms):
        rows = (logs.arms == a) & (logs.rewards > 0)
        source = logs.queries[rows] if rows.any() else logs.queries
        torch.testing.assert_close(prototypes[a], F.normalize(source.mean(0), dim=0), rtol=1e-12, atol=1e-12)
    assert not ((logs.arms == 3) & (logs.rewards > 0)).any()  # the fallback was exercised
    policy = build_policy(
        "hare", {"projections": "random", "pool": "log_prototypes", "key_dim": 4}, env, run_keys(0, [0, 1], "p")
    )
    policy.warm_start(logs)
    assert torch.equal(policy.clusters, torch.arange(env.n_arms))
    assert torch.equal(policy.attention.keys, policy.projections.keys(prototypes))
    assert policy.projections.key.shape[-1] == env.query_dim
    simulate(env, policy, SimulationOptions(record_every=5))
    learned = build_policy(
        "hare",
        {"projections": "learned", "pool": "log_prototypes", "fit_steps": 20, "key_dim": 4},
        env,
        run_keys(0, [0, 1], "p"),
    )
    learned.warm_start(logs)
    assert learned.fit_report is not None and torch.equal(learned.attention.keys, learned.projections.keys(prototypes))


def test_hare_config_tunes_alpha_only_and_has_no_n_logged():
    from dataclasses import fields

    assert hare_module.HAREConfig.tunable == ("alpha",)
    names = {f.name for f in fields(hare_module.HAREConfig)}
    assert "tunable" not in names and "n_logged" not in names and {"mean", "pool"} <= names


def test_full_covariance_is_todays_ridge_state():
    """``covariance: full`` (the default) builds today's :class:`RidgeState` (same ridge, same refactorisation
    period), and a policy whose state is built by hand with today's constructor plays the same rounds to the same
    state, bit for bit."""
    from hare.model.covariance import RidgeState

    params = {"covariance": "full", "n_heads": 2, "projections": "random", "refactor_every": 5, "lam": 0.5}
    runs = [0, 1]
    policies = []
    for replace in (False, True):
        env = environment(SMALL, runs, horizon=12)
        policy = build_policy("hare", params, env, run_keys(0, runs, "policy"))
        covariance = policy.attention.covariance
        assert type(covariance) is RidgeState and covariance.lam == 0.5 and covariance.refactor_every == 5
        if replace:
            policy.attention.covariance = RidgeState(2, (2, policy.n_clusters), policy.key_dim, 0.5, 5)
        for t in range(12):
            round_ = env.round(t)
            chosen = policy.select(round_.observation)
            policy.update(round_.observation, chosen, round_.reward(chosen))
        policies.append(policy)
    first, second = (p.state_dict() for p in policies)
    assert first.keys() == second.keys()
    for name in first:
        assert torch.equal(first[name], second[name]), name
    assert policies[0].attention.covariance.n_updates == 12


@pytest.mark.parametrize("covariance", ["diagonal", "low_rank"])
@pytest.mark.parametrize("update", ["dominant", "attention_weighted"])
def test_approximate_covariances_play_the_synthetic_environment(covariance, update):
    """HARE with a diagonal or rank-2 covariance plays HARE-Sim: finite bonuses and estimates, every round's query in
    the covariance (counts), arms in the pool."""
    params = {"covariance": covariance, "covariance_rank": 2, "covariance_update": update, "n_heads": 2}
    params["projections"] = "random"
    env = environment(SMALL, [0, 1], horizon=15)
    policy = build_policy("hare", params, env, run_keys(0, [0, 1], "policy"))
    regret = torch.zeros(2, dtype=torch.float64)
    for t in range(15):
        round_ = env.round(t)
        chosen = policy.select(round_.observation)
        assert ((chosen >= 0) & (chosen < SMALL.n_items)).all()
        policy.update(round_.observation, chosen, round_.reward(chosen))
        regret += round_.regret(chosen)
    out = policy.attend(env.round(14).observation)
    assert torch.isfinite(out.bonuses).all() and (out.bonuses > 0).all()
    assert torch.isfinite(policy.attention.cluster_estimates()).all() and torch.isfinite(regret).all()
    torch.testing.assert_close(
        policy.attention.covariance.counts.sum((-1, -2)), torch.full((2,), 2 * 15.0, dtype=torch.float64)
    )
    assert policy.attention.covariance.memory_bytes() < policy.attention.covariance.counts.numel() * 8 * (2 * 8**2)
