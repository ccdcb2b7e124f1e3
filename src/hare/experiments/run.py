"""Run one job: every seed of one (experiment, environment, policy point), batched.

The job writes ``<stem>.npz`` with

* ``rounds`` ``(n_checkpoints,)``: 1-based round counts at which curves are recorded;
* ``cumulative_regret``, ``cumulative_reward`` ``(n_runs, n_checkpoints)``;
* ``total_regret``, ``total_reward`` ``(n_runs,)``;

and ``<stem>.json`` with the job specification, its hash, the git commit, package
versions, device, wall time and peak memory. Both are written atomically, the
sidecar last, so a complete sidecar implies a complete result. A job first deletes
its previous outputs and the temporary files a killed attempt left behind, so an
interrupted rerun never leaves an older result that looks current.

Every round's contexts and queries must be finite: a NaN or Inf raises
:class:`NonFiniteInputError` naming the round and the environment instead of
propagating into the policy's state.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hare.envs.base import BanditEnvironment, LoggedRounds
from hare.experiments.job_setup import (
    build_environment,
    checkpoints,
    deterministic_kernels,
    policy_keys,
    progress_ticker,
    provenance,
    regime_record,
    resolve_device,
    warm_start_logs,
)
from hare.io import remove_stale_temporaries, write_result
from hare.policies.base import build_policy

log = logging.getLogger(__name__)


class NonFiniteInputError(ValueError):
    """An environment produced a NaN or Inf context or query."""


def nonfinite_inputs(observation) -> torch.Tensor:
    """0-dim bool tensor on the observation's device: do its contexts or queries hold a NaN or Inf?"""
    bad = torch.zeros((), dtype=torch.bool, device=observation.contexts.device)
    for values in (observation.contexts, observation.queries):
        if values is not None and values.is_floating_point():
            bad = bad | ~torch.isfinite(values).all()
    return bad


def simulate(env: BanditEnvironment, policy, record_every: int, progress: bool = False, name: str | None = None,
             logs: LoggedRounds | None = None, on_record: Callable[[int, Any], None] | None = None) -> dict[str, np.ndarray]:
    """Play ``env.horizon`` rounds; return the arrays of the result file.

    ``name`` is the environment's name in error messages (default: its class name).
    ``logs`` (the warm regime): the policy first learns from them (:meth:`Policy.warm_start`),
    and online round ``t`` is shown to it as round ``M + t``, as if it had played the ``M``
    logged rounds itself; regret and reward count the online rounds only.
    ``on_record(t, policy)`` is called after the update of every recorded round ``t`` (0-based),
    for measurements of the policy's state along the way; it must not change that state.
    On CPU the inputs are checked every round before the policy sees them; on a GPU the
    first bad round is tracked on the device and checked at every recorded round, so the
    check adds no host synchronisation per round.
    """
    name = name or type(env).__name__
    rounds = checkpoints(env.horizon, record_every)
    record_at = set((rounds - 1).tolist())
    device = policy.run_keys.device
    regret = torch.zeros(env.n_runs, dtype=torch.float64, device=device)
    reward = torch.zeros_like(regret)
    first_bad = torch.full((), -1, dtype=torch.int64, device=device)
    regret_curve, reward_curve = [], []
    offset = 0
    if logs is not None:
        policy.warm_start(logs)
        offset = len(logs)
    bar = progress_ticker(env.horizon, progress)
    for t in range(env.horizon):
        round_ = env.round(t)
        observation = replace(round_.observation, t=t + offset) if offset else round_.observation
        if device.type == "cpu":
            if nonfinite_inputs(observation):
                _raise_nonfinite(name, t)
        else:
            first_bad = torch.where((first_bad < 0) & nonfinite_inputs(observation), t, first_bad)
        arms = policy.select(observation)
        rewards = round_.reward(arms)
        regret += round_.regret(arms)
        reward += rewards
        policy.update(observation, arms, rewards)
        if t in record_at:
            if device.type != "cpu" and first_bad >= 0:
                _raise_nonfinite(name, int(first_bad))
            regret_curve.append(regret.clone())
            reward_curve.append(reward.clone())
            if on_record is not None:
                on_record(t, policy)
        bar(t)
    return {
        "rounds": rounds.astype(np.int64),
        "cumulative_regret": torch.stack(regret_curve, 1).cpu().numpy(),
        "cumulative_reward": torch.stack(reward_curve, 1).cpu().numpy(),
        "total_regret": regret.cpu().numpy(),
        "total_reward": reward.cpu().numpy(),
    }


def _raise_nonfinite(environment: str, t: int) -> None:
    raise NonFiniteInputError(f"environment {environment!r}: round {t + 1} has non-finite contexts or queries (NaN or Inf)")


def run_job(spec: dict[str, Any], out: str | Path, dataset_path: str | Path | None = None, progress: bool | None = None, selected: str | Path | None = None) -> dict[str, Any]:
    """Run ``spec`` and write ``out`` (``.npz``) and its ``.json`` sidecar; returns the sidecar.

    A tuned job (``tuned_grid`` in its spec) takes its hyperparameters from ``selected``.
    Jobs on logged data (environment kind ``replay``) go to
    :func:`hare.experiments.replay_job.run_replay_job`, which writes the replay arrays instead.
    """
    from hare.experiments.selection import apply_selection

    spec = apply_selection(spec, selected)
    if spec["environment"]["kind"] == "replay":
        from hare.experiments.replay_job import run_replay_job

        return run_replay_job(spec, out, dataset_path, progress)
    out = Path(out)
    if out.suffix != ".npz":
        raise ValueError(f"output must be a .npz path, got {out}")
    for stale in (out.with_suffix(".json"), out):
        stale.unlink(missing_ok=True)
        remove_stale_temporaries(stale)
    device = resolve_device(spec["device"])
    deterministic_kernels(device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    env = build_environment(spec, device, dataset_path)
    logs = warm_start_logs(spec, env)
    policy = build_policy(spec["policy"], spec["params"], env, policy_keys(spec)).to(device)
    start = time.perf_counter()
    arrays = simulate(env, policy, spec["record_every"], sys.stderr.isatty() if progress is None else progress, spec["environment"]["name"], logs)
    wall = time.perf_counter() - start
    sidecar = {**provenance(spec, env, device, wall), **regime_record(spec, logs), "total_regret_mean": float(arrays["total_regret"].mean())}
    sidecar = write_result(out, arrays, sidecar)
    log.info("%s: mean total regret %.2f over %d runs in %.1f s", out, sidecar["total_regret_mean"], env.n_runs, wall)
    return sidecar


def run_batch(entries: list[dict[str, Any]], dataset_path: str | Path | None = None, progress: bool | None = None) -> list[dict[str, Any]]:
    """Run several jobs of one (experiment, environment) in this process, one after the other.

    entries: ``[{"job": spec, "out": path.npz, "selected": path.json | None}]``. Each job writes its
    own ``.npz`` and sidecar exactly as :func:`run_job` does (the results equal those of separate
    processes); the batch only saves the interpreter and library start-up per job. Every entry is
    checked before the first job runs, so a bad entry fails the batch before any compute.
    """
    for i, entry in enumerate(entries):
        missing = sorted({"job", "out"} - set(entry))
        if missing:
            raise ValueError(f"batch entry {i}: missing {missing}")
        if Path(entry["out"]).suffix != ".npz":
            raise ValueError(f"batch entry {i} ({entry['job'].get('label')!r}): output must be a .npz path, got {entry['out']}")
    return [run_job(entry["job"], entry["out"], dataset_path, progress, entry.get("selected")) for entry in entries]

