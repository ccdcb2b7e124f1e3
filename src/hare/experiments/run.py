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
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hare.envs.base import BanditEnvironment, LoggedRounds
from hare.io import config_hash, git_commit, package_versions, remove_stale_temporaries, write_json, write_npz
from hare.policies.base import build_policy
from hare.random import run_keys

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


def resolve_device(name: str) -> torch.device:
    """``auto`` -> CUDA when available, else CPU; ``cuda`` without a GPU is an error."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {name!r} requested but CUDA is not available")
    return torch.device(name)


def deterministic_kernels(device: torch.device | str) -> None:
    """Ask for deterministic kernels where they differ from the defaults: on CUDA (atomics in
    scatter/index reductions). CPU kernels run single-threaded here and are deterministic already;
    on CPU the switch is left alone, since turning it on imports the compiler stack (about 2 s per job)."""
    if torch.device(device).type == "cuda":
        torch.use_deterministic_algorithms(True, warn_only=True)


def environment_keys(spec: dict[str, Any]) -> torch.Tensor:
    """Environment run keys: shared by every policy of an (experiment, environment), so all face the same draws."""
    return run_keys(spec["base_seed"], range(spec["n_runs"]), spec["role"], spec["experiment"], spec["environment"]["name"], "environment")


def policy_keys(spec: dict[str, Any]) -> torch.Tensor:
    return run_keys(spec["base_seed"], range(spec["n_runs"]), spec["role"], spec["experiment"], spec["environment"]["name"], spec["label"], "policy")


def check_preparation(env: dict[str, Any], dataset_path: str | Path) -> None:
    """The prepared dataset at ``dataset_path`` was made with the environment's ``preparation``.

    A reference-protocol file carries a ``protocol`` member (``"reference"``); a project-protocol
    file has none. A mismatch (e.g. the project file given to a ``preparation: reference``
    environment) is a ValueError naming the environment, the file and both protocols.
    """
    from hare.experiments.grid import preparation_of

    with np.load(dataset_path, allow_pickle=False) as data:
        found = str(data["protocol"]) if "protocol" in data.files else "project"
    wanted = preparation_of(env)
    if found != wanted:
        raise ValueError(f"environment {env['name']!r} declares preparation {wanted!r}, but {dataset_path} was prepared with {found!r}")


def build_environment(spec: dict[str, Any], device: torch.device, dataset_path: str | Path | None = None) -> BanditEnvironment:
    """The environment of a job specification."""
    env = spec["environment"]
    keys = environment_keys(spec)
    if env["kind"] == "synthetic":
        from hare.envs.synthetic import SyntheticBandit, SyntheticConfig

        return SyntheticBandit(SyntheticConfig(**env["params"]), spec["n_runs"], env["horizon"], keys, device)
    if env["kind"] == "classification":
        from hare.envs.classification import ClassificationBandit

        if dataset_path is None:
            raise ValueError(f"environment {env['name']!r} needs its prepared dataset (--dataset)")
        check_preparation(env, dataset_path)
        return ClassificationBandit.from_npz(dataset_path, spec["n_runs"], env["horizon"], keys, device, **env["params"])
    if env["kind"] == "replay":
        from hare.envs.replay import ReplayBandit

        if dataset_path is None:
            raise ValueError(f"environment {env['name']!r} needs its prepared logged dataset (--dataset)")
        return ReplayBandit.from_npz(dataset_path, spec["n_runs"], env["horizon"], keys, device)
    raise ValueError(f"environment {env['name']!r}: unknown kind {env['kind']!r}")


REGIMES = ("cold", "warm")


def warm_start_logs(spec: dict[str, Any], env: BanditEnvironment) -> LoggedRounds | None:
    """The information regime of a job (paper: sec:regimes), applied to its environment.

    ``cold``: the environment withholds its logged interactions from everything built after
    this call (the policy included); returns ``None``. ``warm``: the first ``n_logged``
    logged interactions of the environment, the same for every policy of the experiment.
    """
    regime = spec.get("regime", "cold")
    if regime not in REGIMES:
        raise ValueError(f"job {spec['label']!r}: regime must be one of {REGIMES}, got {regime!r}")
    if regime == "cold":
        env.logs_allowed = False
        return None
    return env.logged(int(spec["n_logged"]))


def regime_record(spec: dict[str, Any], logs: LoggedRounds | None) -> dict[str, Any]:
    """The sidecar's account of the warm start: regime, ``M`` and the digest of the logs fed (identical across policies)."""
    if logs is None:
        return {"regime": "cold", "n_logged": 0, "warm_start_digest": None}
    return {"regime": "warm", "n_logged": len(logs), "warm_start_digest": logs.digest()}


def checkpoints(horizon: int, record_every: int) -> np.ndarray:
    """1-based rounds at which curves are recorded: every ``record_every`` rounds and the last."""
    rounds = np.arange(record_every, horizon + 1, record_every)
    return rounds if rounds.size and rounds[-1] == horizon else np.append(rounds, horizon)


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
    bar = _progress(env.horizon, progress)
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


def _progress(total: int, interactive: bool):
    """A tqdm bar on terminals; otherwise a log line every tenth of the horizon."""
    if interactive:
        from tqdm import tqdm

        bar = tqdm(total=total, unit="round", mininterval=0.5)

        def tick(t: int) -> None:
            bar.update(1)
            if t == total - 1:
                bar.close()

        return tick
    step = max(total // 10, 1)
    start = time.perf_counter()

    def log_line(t: int) -> None:
        if (t + 1) % step == 0 or t == total - 1:
            log.info("round %d/%d (%.0f%%), %.1f s", t + 1, total, 100 * (t + 1) / total, time.perf_counter() - start)

    return log_line


def peak_memory_mb(device: torch.device) -> dict[str, float]:
    usage = {"host_max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    if device.type == "cuda":
        usage["device_max_allocated_mb"] = torch.cuda.max_memory_allocated(device) / 2**20
    return usage


def provenance(spec: dict[str, Any], env: BanditEnvironment, device: torch.device, wall: float) -> dict[str, Any]:
    """The sidecar fields every job writes: specification and hash, commit, versions, device, sizes, time, memory."""
    return {
        "job": spec,
        "job_hash": config_hash(spec),
        "git_commit": git_commit(),
        "versions": package_versions(),
        "device": str(device),
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "horizon": int(env.horizon),
        "n_runs": int(env.n_runs),
        "wall_time_s": wall,
        "peak_memory": peak_memory_mb(device),
    }


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
    write_npz(out, **arrays)
    sidecar = {**provenance(spec, env, device, wall), **regime_record(spec, logs), "total_regret_mean": float(arrays["total_regret"].mean())}
    write_json(out.with_suffix(".json"), sidecar)
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

