"""Benchmark (not a test): the neural and kernel bandits against their dense references, timed in one process.

The registered NeuralUCB, NeuralTS and BootstrapNN (:mod:`hare.policies.neural`) against
:mod:`hare.policies.neural_dense`, whose networks read arm ``a``'s context as ``x ⊗ e_a``; the registered KernelUCB
and KernelTS (:mod:`hare.policies.kernel`) against :mod:`hare.policies.kernel_dense`, whose inverse of ``K + lam I``
is one ``(max_points, max_points)`` matrix per run. Each pair is built from the same hyperparameters and run keys on
a :class:`~hare.envs.classification.ClassificationBandit` of ``B`` runs over a prepared dataset, fed the same points,
and timed in turn, the order alternating between repeats. What one timing covers:

* ``training`` (neural): one :meth:`train_network` call, ``train_steps`` SGD steps on minibatches of
  ``batch_size`` points drawn from a history of ``history`` points per run;
* ``round`` (neural): ``select`` then ``update`` of one round, the update without its training (the training
  schedule is switched off, so a round is the exploration state and the history; training is timed apart);
* ``round`` (kernel): ``select`` then ``update`` of one round once ``max_points`` points have entered the
  dictionary (``when_full = "window"``: every update drops the oldest point and adds one). The timed rounds hold no
  exact re-inversion, which comes every ``refactor_every`` updates.

A repeat times ``rounds`` rounds of each policy (their seconds summed) and, for the neural ones, one training.
Each repeat's ratio is ``reference seconds / registered seconds`` (above 1: the registered class is faster); each
setting reports their geometric mean with a t interval over repeats (:func:`t_summary`, :data:`PAIRED_METHOD`). The
clock is read after synchronising the device, around the policies' calls alone: the rounds are drawn beforehand,
and the reward of the chosen arm is read between ``select`` and ``update``, outside the clock.

    hare bench-baselines --out results/bench/baselines.json --tex paper/generated/table_bench_baselines.tex \\
        --dataset adult=results/data/prepared/adult.npz --dataset mnist=results/data/prepared/mnist.npz

:mod:`hare.report.bench_tables` turns the file into the paper's table and macros.
"""

from __future__ import annotations

import math
import os
import platform
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hare.envs.base import BanditEnvironment, BanditRound
from hare.experiments.studies.bench_harness import TIMING_ERRORS, DatasetSpec, device_name, make_environment, skipped
from hare.experiments.studies.timing import PAIRED_METHOD, synchronise, t_summary
from hare.io import write_json
from hare.policies.base import Policy, build_policy, make_config
from hare.policies.kernel_dense import DenseKernelTS, DenseKernelUCB
from hare.policies.neural_dense import DenseBootstrapNN, DenseNeuralTS, DenseNeuralUCB
from hare.random import CounterRNG, run_keys
from hare.report.bench_tables import write_bench_baselines_table

NEURAL = ("neural_ucb", "neural_ts", "bootstrap_nn")
KERNEL = ("kernel_ucb", "kernel_ts")
REFERENCES: dict[str, type[Policy]] = {
    "neural_ucb": DenseNeuralUCB,
    "neural_ts": DenseNeuralTS,
    "bootstrap_nn": DenseBootstrapNN,
    "kernel_ucb": DenseKernelUCB,
    "kernel_ts": DenseKernelTS,
}
"""Each benchmarked policy's dense reference class."""

NO_SCHEDULED_TRAINING = {"dense_training_rounds": 0, "train_every": 10**12}
"""Neural hyperparameters under which ``update`` never trains (the schedule's first training would come after round
``10^12``), so that a round and a training are timed apart."""


class SizeError(ValueError):
    """A size of :class:`BaselineSizes` out of its range; ``field`` names it."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


OWN_STATE = ("run_keys",)
"""Buffers a policy keeps when another's state is copied into it (:func:`copied_state`)."""


@dataclass(frozen=True)
class BaselineSizes:
    """The sizes of one benchmark; the defaults are the sources' (LNUCB-TA §5.1, the paper config).

    n_runs: ``B``; width: hidden units ``m``; train_steps, batch_size: one training's SGD steps and minibatch;
    n_networks: BootstrapNN's networks per run; max_points: the kernel dictionary's size; history: points each run
    holds before a training is timed; rounds: timed rounds per policy and repeat; repeats: alternating repeats;
    max_seconds: no repeat starts once a setting's repeats have run this long (its fill and warm-up not counted), so
    a setting may end with fewer repeats;
    warmup: one untimed round and training of each policy before the first repeat (off where one training takes
    minutes and its first-call overhead is negligible).
    """

    n_runs: int = 20
    width: int = 100
    train_steps: int = 100
    batch_size: int = 50
    n_networks: int = 10
    max_points: int = 2000
    history: int = 100
    rounds: int = 3
    repeats: int = 3
    max_seconds: float = math.inf
    warmup: bool = True

    def __post_init__(self) -> None:
        for name in ("n_runs", "train_steps", "batch_size", "n_networks", "max_points", "history", "rounds", "repeats"):
            if getattr(self, name) < 1:
                raise SizeError(name, f"must be at least 1, got {getattr(self, name)}")
        if self.width < 2 or self.width % 2:
            raise SizeError("width", f"must be an even integer >= 2, got {self.width}")
        if not self.max_seconds > 0:
            raise SizeError("max_seconds", f"must be positive, got {self.max_seconds}")

    def params(self, name: str) -> dict[str, Any]:
        """Hyperparameters of policy ``name`` at these sizes (the others at their defaults)."""
        if name in KERNEL:
            return {"max_points": self.max_points, "when_full": "window"}
        params: dict[str, Any] = {
            "width": self.width,
            "train_steps": self.train_steps,
            "batch_size": self.batch_size,
            **NO_SCHEDULED_TRAINING,
        }
        if name == "bootstrap_nn":
            return params | {"n_networks": self.n_networks}
        return params | {"exploration": "diagonal"}

    def fill(self, name: str) -> int:
        """Rounds fed to each policy before the first timing: the history (neural) or a full dictionary (kernel)."""
        return self.max_points if name in KERNEL else self.history

    def horizon(self, name: str) -> int:
        """Rounds the environment must hold: the fill, one untimed warm-up round, then the timed rounds."""
        return self.fill(name) + 1 + self.repeats * self.rounds


def machine_name(device: str) -> str:
    """The CPU's model name where the system reports one (else :func:`device_name`), or the GPU's name."""
    if torch.device(device).type == "cpu":
        try:
            for line in Path("/proc/cpuinfo").read_text().splitlines():
                if line.startswith("model name"):
                    return " ".join(line.split(":", 1)[1].split())
        except OSError:
            pass
    return device_name(device)


def random_arms(n_runs: int, n_arms: int, t: int, device: str) -> torch.Tensor:
    """Uniform arms ``(n_runs,)`` of fill round ``t``, from fixed run keys (the same for both policies of a pair)."""
    return CounterRNG(run_keys(0, range(n_runs), "bench-baselines-arms")).randint("arm", t, n_arms).to(device)


def feed(policies: list[Policy], rounds: list[BanditRound], arms: Callable[[int], torch.Tensor]) -> None:
    """``update`` every policy with each round of ``rounds`` and the arms ``arms(t)`` (untimed)."""
    for t, bandit_round in enumerate(rounds):
        chosen = arms(t)
        rewards = bandit_round.rewards.gather(1, chosen[:, None]).squeeze(1)
        for policy in policies:
            policy.update(bandit_round.observation, chosen, rewards)


def time_round(policy: Policy, bandit_round: BanditRound, device: str) -> float:
    """Seconds of ``select`` plus ``update`` of one round, the reward of the chosen arms read between them."""
    synchronise(device)
    start = time.perf_counter()
    arms = policy.select(bandit_round.observation)
    synchronise(device)
    elapsed = time.perf_counter() - start
    rewards = bandit_round.rewards.gather(1, arms[:, None]).squeeze(1)
    synchronise(device)
    start = time.perf_counter()
    policy.update(bandit_round.observation, arms, rewards)
    synchronise(device)
    return elapsed + time.perf_counter() - start


def time_training(policy: Policy, t: int, device: str) -> float:
    """Seconds of one ``train_network(t)``."""
    synchronise(device)
    start = time.perf_counter()
    policy.train_network(t)
    synchronise(device)
    return time.perf_counter() - start


def paired_entry(setting: dict[str, Any], timings: list[dict[str, float]]) -> dict[str, Any]:
    """One setting's record: its per-repeat ``registered_seconds``, ``reference_seconds`` and ``ratio``
    (reference over registered), their medians and the ratio's :func:`t_summary` as ``speedup``."""
    return {
        **setting,
        "timings": timings,
        "registered_seconds": statistics.median(row["registered_seconds"] for row in timings),
        "reference_seconds": statistics.median(row["reference_seconds"] for row in timings),
        "speedup": t_summary([row["ratio"] for row in timings], PAIRED_METHOD),
    }


def build_pair(name: str, sizes: BaselineSizes, env: BanditEnvironment, device: str) -> tuple[Policy, Policy]:
    """The registered policy ``name`` and its dense reference, from the same hyperparameters and run keys."""
    params = sizes.params(name)
    keys = run_keys(0, range(env.n_runs), "bench-baselines", name).to(device)
    registered = build_policy(name, params, env, keys).to(device)
    reference = REFERENCES[name](make_config(name, params), env, keys).to(device)
    return registered, reference


def copied_state(source: Policy, target: Policy) -> bool:
    """Load ``source``'s learned state into ``target`` when the two hold buffers of the same names and shapes (a
    kernel policy filled once serves its sibling: the dictionary does not depend on the exploration rule); whether it
    did. ``target`` keeps its own run keys and per-run hyperparameters, so its draws stay its own."""
    state = source.state_dict()
    own = target.state_dict()
    if state.keys() != own.keys() or any(state[key].shape != own[key].shape for key in state):
        return False
    target.load_state_dict(
        {
            key: own[key] if key.split(".")[-1] in OWN_STATE or key.startswith("per_run_") else value
            for key, value in state.items()
        }
    )
    return True


def bench_pair(
    dataset: str,
    name: str,
    spec: DatasetSpec,
    sizes: BaselineSizes,
    device: str,
    filled: dict[str, Policy] | None = None,
) -> list[dict[str, Any]]:
    """The settings of policy ``name`` on ``dataset``: ``round`` (every policy) and ``training`` (neural), each a
    :func:`paired_entry` with ``seconds``, the wall time of the whole pair (building, feeding and timing).

    ``filled``: for the kernel policies, ``{"registered", "reference"}`` already holding a full dictionary (from the
    sibling policy), whose state is copied instead of feeding ``max_points`` rounds again where the buffers match;
    the filled pair is written back into it.
    """
    began = time.perf_counter()
    env = make_environment(spec, sizes.n_runs, sizes.horizon(name), device)
    rounds = [env.round(t) for t in range(env.horizon)]
    n_fill = sizes.fill(name)
    registered, reference = build_pair(name, sizes, env, device)
    pair = {"registered": registered, "reference": reference}
    for role, policy in pair.items():
        source = (filled or {}).get(role)
        if source is None or not copied_state(source, policy):
            feed([policy], rounds[:n_fill], lambda t: random_arms(env.n_runs, env.n_arms, t, device))
    if filled is not None:
        filled.update(pair)
    neural = name in NEURAL
    for policy in pair.values():
        time_round(policy, rounds[n_fill], device)
        if neural and sizes.warmup:
            time_training(policy, n_fill, device)
    measures = ("round", "training") if neural else ("round",)
    timings: dict[str, list[dict[str, float]]] = {measure: [] for measure in measures}
    timing_began = time.perf_counter()
    for repeat in range(sizes.repeats):
        if repeat and time.perf_counter() - timing_began > sizes.max_seconds:
            break
        order = ("registered", "reference") if repeat % 2 == 0 else ("reference", "registered")
        seconds: dict[str, dict[str, float]] = {measure: {} for measure in measures}
        first = n_fill + 1 + repeat * sizes.rounds
        for role in order:
            seconds["round"][role] = sum(
                time_round(pair[role], bandit_round, device) for bandit_round in rounds[first : first + sizes.rounds]
            )
            if neural:
                seconds["training"][role] = time_training(pair[role], first + sizes.rounds, device)
        for measure in measures:
            new, old = seconds[measure]["registered"], seconds[measure]["reference"]
            timings[measure].append({"registered_seconds": new, "reference_seconds": old, "ratio": old / new})
    setting = {
        "dataset": dataset,
        "policy": name,
        "family": "neural" if neural else "kernel",
        "reference": REFERENCES[name].__name__,
        "n_runs": env.n_runs,
        "dim": env.dim,
        "n_arms": env.n_arms,
        "params": sizes.params(name),
        "fill_rounds": n_fill,
        "seconds": time.perf_counter() - began,
    }
    return [
        paired_entry(setting | {"measure": measure, "rounds": sizes.rounds if measure == "round" else 1}, rows)
        for measure, rows in timings.items()
    ]


def bench_baselines(
    datasets: Mapping[str, DatasetSpec],
    sizes: BaselineSizes = BaselineSizes(),
    policies: tuple[str, ...] = NEURAL + KERNEL,
    device: str = "cpu",
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Every policy of ``policies`` against its dense reference on every dataset (``name -> (features (n_rows, dim),
    labels (n_rows,))``), through :func:`bench_pair`; ``progress`` is called with each finished setting.

    Returns ``{"environment", "sizes", "settings"}``: ``environment`` the machine, device, torch version and thread
    count; ``sizes`` the :class:`BaselineSizes`; ``settings`` one :func:`paired_entry` per dataset, policy and
    measure, or the pair's ``dataset, policy, measure, skipped`` (the error) where it could not run.
    """
    unknown = sorted(set(policies) - set(REFERENCES))
    if unknown:
        raise ValueError(f"policies: no dense reference for {unknown}; known: {sorted(REFERENCES)}")
    settings = []
    for dataset, spec in datasets.items():
        filled: dict[str, Policy] = {}
        for name in policies:
            try:
                rows = bench_pair(dataset, name, spec, sizes, device, filled if name in KERNEL else None)
            except TIMING_ERRORS as error:
                measures = ("round", "training") if name in NEURAL else ("round",)
                rows = [{"dataset": dataset, "policy": name, "measure": m} | skipped(error) for m in measures]
            for row in rows:
                settings.append(row)
                if progress is not None:
                    progress(row)
        del filled
    return {
        "environment": {
            "device": device,
            "machine": machine_name(device),
            "cpu_count": os.cpu_count(),
            "torch": torch.__version__,
            "threads": torch.get_num_threads(),
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "python": platform.python_version(),
        },
        "sizes": asdict(sizes),
        "settings": settings,
    }


def load_datasets(paths: Mapping[str, str | Path]) -> dict[str, DatasetSpec]:
    """``name -> (features, labels)`` of each prepared ``.npz``."""
    specs: dict[str, DatasetSpec] = {}
    for name, path in paths.items():
        with np.load(path, allow_pickle=False) as data:
            specs[name] = (data["features"], data["labels"])
    return specs


def run_bench_baselines(
    *,
    out: str | Path,
    datasets: Mapping[str, str | Path],
    sizes: BaselineSizes = BaselineSizes(),
    policies: tuple[str, ...] = NEURAL + KERNEL,
    device: str = "cpu",
    threads: int | None = None,
    tex: str | Path | None = None,
) -> dict[str, Any]:
    """:func:`bench_baselines` on the prepared datasets ``name -> path.npz``, each setting printed when done; writes
    the result (with the process's wall and CPU seconds) to ``out`` (JSON) and, if given, its table to ``tex``."""
    wall, cpu = time.perf_counter(), time.process_time()
    if threads is not None:
        torch.set_num_threads(threads)
    specs = load_datasets(datasets)
    for name, (_, labels) in specs.items():
        rows = len(labels)
        needed = max(sizes.horizon(policy) for policy in policies)
        if needed > rows:
            raise ValueError(f"dataset {name}: {needed} rounds needed (fill, warm-up, timed rounds) but {rows} rows")

    def show(row: dict[str, Any]) -> None:
        speed = row.get("speedup", {}).get("estimate")
        text = f"skipped: {row['skipped']}" if "skipped" in row else f"speed-up {speed:.2f}"
        print(f"{row['dataset']:>8} {row['policy']:>13} {row['measure']:>8} {text}", flush=True)

    result = bench_baselines(specs, sizes, tuple(policies), device, show)
    result["environment"]["process"] = {
        "wall_seconds": time.perf_counter() - wall,
        "cpu_seconds": time.process_time() - cpu,
    }
    write_json(out, result)
    if tex:
        write_bench_baselines_table(tex, result)
    return result
