"""The neighbour search of :class:`hare.model.arm_history.ArmHistory` against brute force, on every search path
(per-arm selection, the same over all pulls, scatter-min passes), with contexts shared by the arms and with tied
distances."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from hare.model import arm_history
from hare.model.arm_history import ArmHistory
from hare.random import CounterRNG, run_keys


def arm_pulls(history: ArmHistory, run: int, arm: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Contexts ``(N_a, dim)`` and rewards ``(N_a,)`` of one run's pulls of ``arm``, oldest first: the brute-force
    reading of the history that the searches are checked against."""
    n = int(history.size)
    mine = history.arms[run, :n] == arm
    return history.contexts[run, :n][mine], history.rewards[run, :n][mine]


@pytest.fixture(params=["selection", "selection-over-all-pulls", "scatter"])
def search_path(request, monkeypatch):
    """Every search of :meth:`ArmHistory.nearest`: the per-arm selection (few arms) among its candidates, the same
    over all pulls (ties at ``d_k`` beyond the margin: forced by a zero margin) and the scatter-min passes (more
    arms)."""
    monkeypatch.setattr(arm_history, "SELECTION_MAX_ARMS", 0 if request.param == "scatter" else 1000)
    if request.param == "selection-over-all-pulls":
        monkeypatch.setattr(arm_history, "TIE_MARGIN", 0)
    return request.param


def test_vectorised_search_equals_brute_force(search_path):
    n_runs, n_arms, capacity, dim, k = 2, 3, 20, 4, 5
    rng = CounterRNG(run_keys(0, [0, 1], "search"))
    history = ArmHistory(n_runs, n_arms, capacity, dim)
    for s in range(20):
        arms = rng.randint("arm", s, n_arms)
        history.append(arms, rng.normal("x", s, (dim,)), rng.normal("r", s))
    queries = rng.normal("q", 0, (n_arms, dim))
    distances, rewards = history.nearest(queries, k)
    for run in range(n_runs):
        for arm in range(n_arms):
            stored, stored_rewards = arm_pulls(history, run, arm)
            assert len(stored) == int(history.counts[run, arm])
            stored = stored.numpy()
            brute = np.array([np.linalg.norm(queries[run, arm].numpy() - row) for row in stored])
            order = np.argsort(brute)[:k]
            expected_d = np.full(k, np.inf)
            expected_r = np.zeros(k)
            expected_d[: len(order)] = brute[order]
            expected_r[: len(order)] = stored_rewards.numpy()[order]
            np.testing.assert_allclose(distances[run, arm].numpy(), expected_d, atol=1e-12)
            np.testing.assert_allclose(rewards[run, arm].numpy(), expected_r, atol=0)
    assert (history.counts < k).any()


def test_search_with_a_context_shared_by_the_arms_equals_the_general_search(search_path):
    n_runs, n_arms, dim = 2, 3, 4
    rng = CounterRNG(run_keys(0, [0, 1], "shared-search"))
    history = ArmHistory(n_runs, n_arms, 30, dim)
    for s in range(30):
        history.append(rng.randint("arm", s, n_arms), rng.normal("x", s, (dim,)), rng.normal("r", s))
    query = rng.normal("q", 0, (1, dim)).expand(n_runs, n_arms, dim)
    shared = history.nearest(query, 6)
    general = history.nearest(query.contiguous(), 6)
    torch.testing.assert_close(shared, general, rtol=0, atol=1e-12)


def test_search_with_tied_distances_takes_the_earliest_pulls_first(search_path):
    """Repeated contexts (as in Mushroom's discrete features): among equal distances the earlier
    pull comes first, and a tie at the k-th distance keeps the earliest pulls, as a stable sort would."""
    n_runs, n_arms, dim, k = 2, 2, 3, 4
    rng = CounterRNG(run_keys(0, [0, 1], "tied-search"))
    points = torch.tensor([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], dtype=torch.float64)
    history = ArmHistory(n_runs, n_arms, 40, dim)
    for s in range(40):
        which = rng.randint("which", s, len(points))
        history.append(rng.randint("arm", s, n_arms), points[which], torch.full((n_runs,), float(s)))
    query = torch.tensor([0.0, 0.0, 0.5], dtype=torch.float64).expand(n_runs, n_arms, dim)
    distances, rewards = history.nearest(query, k)
    for run in range(n_runs):
        for arm in range(n_arms):
            stored, stored_rewards = arm_pulls(history, run, arm)
            brute = np.linalg.norm(stored.numpy() - query[run, arm].numpy(), axis=1)
            order = np.argsort(brute, kind="stable")[:k]
            np.testing.assert_allclose(distances[run, arm].numpy(), brute[order], atol=1e-12)
            np.testing.assert_array_equal(rewards[run, arm].numpy(), stored_rewards.numpy()[order])
    assert len(torch.unique(distances)) < distances.numel()


def test_selection_without_the_foreign_pull_buffer_equals_it_with(monkeypatch):
    """A history made for the scatter passes (no ``foreign_pulls``) searched by the selection derives the
    same per-arm mask from the stored arms."""
    n_runs, n_arms, dim, k = 2, 2, 3, 4
    histories = {}
    for threshold in (0, 1000):
        monkeypatch.setattr(arm_history, "SELECTION_MAX_ARMS", threshold)
        rng = CounterRNG(run_keys(0, [0, 1], "foreign-search"))
        histories[threshold] = history = ArmHistory(n_runs, n_arms, 30, dim)
        for s in range(30):
            history.append(rng.randint("arm", s, n_arms), rng.normal("x", s, (dim,)).round(), rng.normal("r", s))
    assert histories[0].foreign_pulls is None and histories[1000].foreign_pulls is not None
    query = torch.zeros(n_runs, n_arms, dim, dtype=torch.float64)
    torch.testing.assert_close(histories[0].nearest(query, k), histories[1000].nearest(query, k), rtol=0, atol=0)
