"""The environments whose arms are pool items sharing one context, ``[x_t, onehot(i_t)]`` (HARE-Sim, HARE-Text).

Each round draws a query ``x_t`` and an active user ``i_t`` per run; the mean reward of every item comes from the
environment (:meth:`SharedContextBandit.mean_rewards`) and the realised one adds ``sigma``-Gaussian noise. The
uniform logging policy draws a query, a user and an item uniformly and the reward the same way, from its own keys
(:meth:`SharedContextBandit.sample_logged`); an environment supplies how a query is drawn and the mean rewards.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from hare.envs.base import (
    WARM_START_STREAM,
    BanditEnvironment,
    BanditRound,
    LoggedRounds,
    Observation,
    mean_of_round_rewards,
)
from hare.envs.logged import LoggedInteractions
from hare.random import CounterRNG, run_keys


class SharedContextBandit(BanditEnvironment):
    """``n_runs`` runs whose arms share the context ``[x_t, onehot(i_t)]``. A subclass sets ``config`` (with
    ``n_users`` and ``noise_sigma``), ``device``, ``rng`` (:class:`~hare.random.CounterRNG` of the run keys),
    ``n_users``, ``n_arms`` and ``dim = query_dim + n_users``, and implements :meth:`queries`, :meth:`mean_rewards`,
    :meth:`logged_queries` and :meth:`logged_means`."""

    config: object
    device: torch.device
    rng: CounterRNG

    def queries(self, t: int) -> torch.Tensor:
        """The queries ``x_t`` of every run, ``(n_runs, query_dim)``."""
        raise NotImplementedError

    def mean_rewards(self, queries: torch.Tensor, users: torch.Tensor) -> torch.Tensor:
        """``mu_t(n)`` of every item for queries ``(n_runs, query_dim)`` and users ``(n_runs,)``: ``(n_runs,
        n_items)``."""
        raise NotImplementedError

    def logged_queries(self, rng: CounterRNG, n_samples: int) -> torch.Tensor:
        """The logged queries ``(n_sets, n_samples, query_dim)`` drawn from ``rng`` (one key per set)."""
        raise NotImplementedError

    def logged_means(self, queries: torch.Tensor, users: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        """Mean reward ``(M,)`` of logged ``items`` ``(M,)`` for queries ``(M, query_dim)`` and users ``(M,)`` of one
        set."""
        raise NotImplementedError

    def active_users(self, t: int) -> torch.Tensor:
        """Active user ``i_t`` of every run, ``(n_runs,)`` int64."""
        return self.rng.randint("user", t, self.config.n_users)

    def shared_contexts(self, x: torch.Tensor, users: torch.Tensor) -> torch.Tensor:
        """``[x, onehot(user)]`` of queries ``(B, query_dim)`` and users ``(B,)``, ``(B, n_arms, dim)`` as an expanded
        view (every arm the same row)."""
        contexts = torch.cat([x, F.one_hot(users, self.n_users).to(x.dtype)], dim=1)
        return contexts[:, None, :].expand(-1, self.n_arms, -1)

    def round(self, t: int) -> BanditRound:
        x = self.queries(t)
        users = self.active_users(t)
        mean = self.mean_rewards(x, users)
        rewards = mean + self.config.noise_sigma * self.rng.normal("noise", t, (self.n_arms,))
        return BanditRound(Observation(t, self.shared_contexts(x, users), users, x), mean, rewards)

    def sample_logged(self, n_samples: int, keys: torch.Tensor) -> LoggedInteractions:
        """``n_samples`` interactions of the uniform logging policy per key ``(n_sets,)`` int64: query
        (:meth:`logged_queries`), user and item uniform, reward the item's mean plus noise."""
        self.check_log_access()
        rng = CounterRNG(keys.to(self.device))
        queries = self.logged_queries(rng, n_samples)  # (n_sets, M, query_dim)
        users = rng.randint("logged-user", 0, self.n_users, (n_samples,))
        items = rng.randint("logged-item", 0, self.n_arms, (n_samples,))
        mean = torch.stack([self.logged_means(queries[s], users[s], items[s]) for s in range(len(keys))])
        rewards = mean + self.config.noise_sigma * rng.normal("logged-noise", 0, (n_samples,))
        return LoggedInteractions(queries, users, items, rewards)

    def logged(self, n_logged: int) -> LoggedRounds:
        """``n_logged`` interactions of the uniform logging policy (see :meth:`BanditEnvironment.logged`): one logged
        set drawn from :data:`WARM_START_STREAM`, contexts ``(M, n_arms, query_dim + n_users)`` as an expanded
        view."""
        logs = self.sample_logged(n_logged, run_keys(0, [0], WARM_START_STREAM).to(self.device))
        x, users = logs.queries[0], logs.users[0]
        return self.served_warm_start(
            LoggedRounds(self.shared_contexts(x, users), users, x, logs.items[0], logs.rewards[0])
        )

    def mean_reward_all_rounds(self) -> torch.Tensor:
        """:meth:`BanditEnvironment.mean_reward_all_rounds`: the realised rewards of :meth:`round` over the whole
        horizon (:func:`hare.envs.base.mean_of_round_rewards`), ``(n_runs,)``."""
        return mean_of_round_rewards(self)
