"""Logged interactions of the uniform logging policy, shared by every environment and by HARE's offline fit.

:class:`LoggedInteractions` is the type every environment's ``sample_logged`` returns and
:func:`hare.policies.hare.fit_projections` reads. :class:`UserQueryLogging` is the logged-data block of the
environments whose arms share the context ``[x, onehot(user)]`` (HARE-Sim, HARE-Text): the logging policy draws a
query, a user and an item uniformly, and the reward is the item's mean plus ``sigma``-Gaussian noise; an environment
supplies only how a logged query is drawn and the mean reward of a logged item.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from hare.envs.base import WARM_START_STREAM, BanditEnvironment, LoggedRounds, mean_of_round_rewards
from hare.random import CounterRNG, run_keys


@dataclass(frozen=True)
class LoggedInteractions:
    """Logged data of the uniform logging policy, ``(n_sets, M, ...)`` per field.

    queries ``(n_sets, M, query_dim)``, users ``(n_sets, M)`` int64, items ``(n_sets, M)`` int64,
    rewards ``(n_sets, M)`` realised (mean plus noise).
    """

    queries: torch.Tensor
    users: torch.Tensor
    items: torch.Tensor
    rewards: torch.Tensor


class UserQueryLogging(BanditEnvironment):
    """An environment whose arms are pool items sharing the context ``[x_t, onehot(i_t)]``, logged by the uniform
    logging policy. A subclass sets ``config`` (with ``noise_sigma``), ``device``, ``n_users`` and ``n_arms`` and
    implements :meth:`logged_queries` and :meth:`logged_means`."""

    config: object
    device: torch.device

    def logged_queries(self, rng: CounterRNG, n_samples: int) -> torch.Tensor:
        """The logged queries ``(n_sets, n_samples, query_dim)`` drawn from ``rng`` (one key per set)."""
        raise NotImplementedError

    def logged_means(self, queries: torch.Tensor, users: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        """Mean reward ``(M,)`` of logged ``items`` ``(M,)`` for queries ``(M, query_dim)`` and users ``(M,)`` of one
        set."""
        raise NotImplementedError

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
        contexts = torch.cat([x, F.one_hot(users, self.n_users).to(x.dtype)], dim=1)
        return self.served_warm_start(
            LoggedRounds(contexts[:, None, :].expand(-1, self.n_arms, -1), users, x, logs.items[0], logs.rewards[0])
        )

    def mean_reward_all_rounds(self) -> torch.Tensor:
        """:meth:`BanditEnvironment.mean_reward_all_rounds`: the realised rewards of :meth:`round` over the whole
        horizon (:func:`hare.envs.base.mean_of_round_rewards`), ``(n_runs,)``."""
        return mean_of_round_rewards(self)
