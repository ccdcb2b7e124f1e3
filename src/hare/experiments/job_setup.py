"""What every job does around its rounds, shared by the simulation (:mod:`hare.experiments.run`)
and the replay jobs (:mod:`hare.experiments.replay_job`): the device, the counter-based keys of the
environment and the policy, the environment of a specification, the information regime (the warm
start's logs), the checkpoints of the curves, a progress ticker, and the sidecar's provenance.
"""

from __future__ import annotations

import logging
import resource
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hare.envs.base import BanditEnvironment, LoggedRounds
from hare.envs.registry import environment_class
from hare.experiments.job_spec import JobSpec
from hare.io import config_hash, git_commit, package_versions
from hare.policies.base import tunable_values
from hare.random import run_keys
from hare.source_digest import tree_state

log = logging.getLogger(__name__)


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


def environment_keys(spec: JobSpec) -> torch.Tensor:
    """Environment run keys ``(n_runs,)``: shared by every policy of an (experiment, environment), so all face the
    same draws."""
    return run_keys(
        spec.base_seed,
        range(spec.n_runs),
        spec.role,
        spec.experiment,
        spec.environment.name,
        "environment",
    )


def policy_keys(spec: JobSpec) -> torch.Tensor:
    """Policy run keys ``(n_runs,)``: the job's own (its label names them)."""
    return run_keys(
        spec.base_seed,
        range(spec.n_runs),
        spec.role,
        spec.experiment,
        spec.environment.name,
        spec.label,
        "policy",
    )


def build_environment(
    spec: JobSpec, device: torch.device, dataset_path: str | Path | None = None, copies: int = 1
) -> BanditEnvironment:
    """The environment of a job specification, built by its kind's class from its entry
    (:meth:`hare.envs.base.BanditEnvironment.from_entry` of the environment's dict form; a kind that reads a prepared
    dataset reads ``dataset_path``); ``copies > 1`` repeats its runs that many times (``copies n_runs`` runs, run
    ``i n + r`` drawing what run ``r`` draws), for a grid of policy points played as one batch."""
    env = spec.environment
    keys = environment_keys(spec).repeat(copies)  # (copies n_runs,)
    return environment_class(env.kind).from_entry(env.as_dict(), spec.n_runs * copies, keys, device, dataset_path)


def warm_start_logs(spec: JobSpec, env: BanditEnvironment) -> LoggedRounds | None:
    """The information regime of a job (paper: sec:regimes), applied to its environment.

    ``cold``: the environment withholds its logged interactions from everything built after
    this call (the policy included); returns ``None``. ``warm``: the first ``n_logged``
    logged interactions of the environment, the same for every policy of the experiment.
    """
    if spec.regime == "cold":
        env.logs_allowed = False
        return None
    return env.logged(int(spec.n_logged))


def regime_record(spec: JobSpec, logs: LoggedRounds | None) -> dict[str, Any]:
    """The sidecar's account of the warm start: regime, ``M`` and the digest of the logs fed (identical across
    policies)."""
    if logs is None:
        return {"regime": "cold", "n_logged": 0, "warm_start_digest": None}
    return {"regime": "warm", "n_logged": len(logs), "warm_start_digest": logs.digest()}


def checkpoints(horizon: int, record_every: int) -> np.ndarray:
    """1-based rounds at which curves are recorded: every ``record_every`` rounds and the last."""
    rounds = np.arange(record_every, horizon + 1, record_every)
    return rounds if rounds.size and rounds[-1] == horizon else np.append(rounds, horizon)


def progress_ticker(total: int, interactive: bool):
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


def provenance(
    spec: JobSpec,
    env: BanditEnvironment,
    device: torch.device,
    wall: float,
    code: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The sidecar fields every job writes: specification (``job``, its dict form: :meth:`JobSpec.as_dict`) and hash,
    the tunable hyperparameters' values, commit, versions, device, sizes, time, memory, and the code it ran (``code``:
    :func:`hare.experiments.run.job_record`, the digest and ``{module: digest}`` of
    :func:`hare.source_digest.job_code`, given by the round loop; ``tree``: the commit and whether the checkout was
    dirty), which ``hare verify`` compares with the code now."""
    job = spec.as_dict()
    return {
        "job": job,
        **({"code": code} if code is not None else {}),
        "tree": tree_state(),
        "tunable": tunable_values(spec.policy, spec.params),
        "job_hash": config_hash(job),
        "git_commit": git_commit(),
        "versions": package_versions(),
        "device": str(device),
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "horizon": int(env.horizon),
        "n_runs": int(env.n_runs),
        "wall_time_s": wall,
        "peak_memory": peak_memory_mb(device),
    }
