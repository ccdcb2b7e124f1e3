"""A job's runs played in chunks: the run ranges of a job whose ``max_runs_per_simulation`` is below its run count,
and the environment of one range, which sees exactly the numbers the whole play gives those runs."""

from __future__ import annotations

from dataclasses import replace

import torch

from hare.experiments.job_spec import JobSpec


def runs_per_simulation(spec: JobSpec) -> int | None:
    """The most runs of ``spec`` one simulation may hold (its ``max_runs_per_simulation``, an integer >= 1 that the
    boundary checked: :mod:`hare.experiments.settings`, :mod:`hare.experiments.job_boundary`), or None: no limit."""
    return spec.max_runs_per_simulation


def run_chunks(n_runs: int, limit: int | None) -> list[tuple[int, int]]:
    """The run ranges ``[(r0, r1), ...]`` of ``n_runs`` runs played at most ``limit`` at a time (None: all at once)."""
    size = n_runs if limit is None else max(1, min(limit, n_runs))
    return [(r0, min(r0 + size, n_runs)) for r0 in range(0, n_runs, size)]


class RunChunk:
    """Runs ``[r0, r1)`` of an environment, as an environment of ``r1 - r0`` runs for a policy to play.

    Each round is the whole environment's round ``t`` restricted to those runs (the rows of its contexts, users,
    queries, mean and realised rewards, slices that keep views as views), so the chunk sees exactly the numbers
    the whole play gives those runs; :meth:`mean_reward_all_rounds` likewise. Every other attribute (sizes, pool,
    horizon, the information regime, the warm start) is the whole environment's.
    """

    def __init__(self, env, r0: int, r1: int):
        if not 0 <= r0 < r1 <= env.n_runs:
            raise ValueError(f"runs [{r0}, {r1}) are not runs of an environment of {env.n_runs}")
        self.env, self.runs, self.n_runs = env, slice(r0, r1), r1 - r0

    def __getattr__(self, name: str):
        if name == "env":  # not set yet (a copy being built): no attribute to forward to
            raise AttributeError(name)
        return getattr(self.env, name)

    def _rows(self, values: torch.Tensor | None) -> torch.Tensor | None:
        return None if values is None else values[self.runs]

    def round(self, t: int):
        round_ = self.env.round(t)
        observation = round_.observation
        observation = replace(
            observation,
            contexts=self._rows(observation.contexts),
            users=self._rows(observation.users),
            queries=self._rows(observation.queries),
        )
        return replace(
            round_,
            observation=observation,
            mean_rewards=self._rows(round_.mean_rewards),
            rewards=self._rows(round_.rewards),
        )

    def mean_reward_all_rounds(self) -> torch.Tensor:
        return self.env.mean_reward_all_rounds()[self.runs]

    @property
    def synthesis_outcome(self):
        """The whole environment's ``synthesis_outcome(t, z)`` (synthesize mode) for the chunk's outputs ``z``: the
        chunk's rows are placed among zeros for the other runs, and the rows of the chunk's runs come back. Absent
        (``AttributeError``) where the environment has none."""
        outcome = self.env.synthesis_outcome

        def chunk_outcome(t: int, z: torch.Tensor) -> tuple[torch.Tensor, ...]:
            whole = z.new_zeros(self.env.n_runs, *z.shape[1:])
            whole[self.runs] = z
            return tuple(values[self.runs] for values in outcome(t, whole))

        return chunk_outcome
