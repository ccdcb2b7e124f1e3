"""Logged interactions of the uniform logging policy: the type every environment's ``sample_logged`` returns and
HARE's offline fit of its projections reads (:func:`hare.policies.hare.fit_projections`), below every environment so
that neither an environment nor a policy imports another environment to get it."""

from __future__ import annotations

from dataclasses import dataclass

import torch


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
