"""Throughput of every registered policy, batched over runs, against sequential reference libraries.

A benchmark, not a test: it reports rounds·runs per second (rounds of ``select`` + ``update``
times the number of runs advanced together) for each policy, dataset, batch size and device, and
the same disjoint-LinUCB workload (one run) in MABWiser and Open Bandit Pipeline (the peers) in the
same process. Environment rounds are generated before the clock starts, so only policy work is
timed. An entry stops after ``max_seconds`` and reports the rounds it completed; a policy that
cannot run on a dataset (an oracle it lacks, memory) is recorded with the reason. The NeuralUCB
exploration modes (:mod:`hare.experiments.bench_neural`) are measured into the same file.

    python -m hare.experiments.bench --out results/bench/policies.json \
        --dataset mushroom=mushroom.npz --dataset mnist=mnist.npz --horizon 1000 --device cpu

The synthetic environment (HARE-Sim, default configuration) is always included.
:func:`bench_table_tex` and :func:`bench_neural_table_tex` turn the file into the paper's tables.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import math
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hare.envs.base import BanditEnvironment, BanditRound
from hare.envs.classification import ClassificationBandit
from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.io import write_json, write_text
from hare.policies import build_policy
from hare.policies.base import policy_names
from hare.random import run_keys

BASELINES = ("random", "ucb1", "kl_ucb", "eps_greedy", "beta_thompson", "linucb", "lin_ts", "lin_thompson_ucb", "kernel_ucb", "kernel_ts")
NOT_BENCHED = ("hare_synthesize",)
"""Synthesize mode outputs a vector, not an arm; it has no select/update round to time."""

PEERS = ("mabwiser", "obp")

BENCH_PARAMS = {
    "neural_ucb": {"width": 20, "exploration": "diagonal"},
    "neural_ts": {"width": 20, "exploration": "diagonal"},
    "bootstrap_nn": {"width": 20},
}
"""Defaults except for the neural policies: with the disjoint encoding the full ``p x p`` matrix
``Z^{-1}`` (``p = m K d + m``) does not fit in memory on these datasets, so they are timed with a
narrow network and the diagonal ``Z`` (the released code's choice for large networks); the
full modes are compared in ``results["neural"]``. ``--param`` overrides these."""


def benched_policies() -> list[str]:
    """Every registered policy name but those in :data:`NOT_BENCHED`."""
    return [name for name in policy_names() if name not in NOT_BENCHED]

DatasetSpec = tuple[np.ndarray, np.ndarray] | SyntheticConfig


def make_environment(spec: DatasetSpec, n_runs: int, horizon: int, device: str) -> BanditEnvironment:
    """A classification bandit from ``(features (n_rows, dim), labels (n_rows,))`` or HARE-Sim from its config."""
    keys = run_keys(0, range(n_runs), "bench-env")
    if isinstance(spec, SyntheticConfig):
        return SyntheticBandit(spec, n_runs, horizon, keys, device)
    features, labels = spec
    features = torch.as_tensor(np.asarray(features, dtype=np.float64))
    features = features / features.norm(dim=1, keepdim=True).clamp_min(1e-12)
    return ClassificationBandit(features, torch.as_tensor(np.asarray(labels, dtype=np.int64)), n_runs, horizon, keys, device)


def synchronise(device: str) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def time_policy(name: str, params: dict, env: BanditEnvironment, rounds: list[BanditRound], device: str, warmup: int = 2, max_seconds: float = math.inf) -> tuple[int, float]:
    """``(rounds played, seconds)`` of ``select`` + ``update`` over ``rounds``, after ``warmup``
    untimed rounds on a fresh copy; stops after the first round that ends past ``max_seconds``."""
    keys = run_keys(0, range(env.n_runs), "bench", name).to(device)
    policy = None
    for repeat in ("warmup", "timed"):
        del policy  # the warm-up copy goes before the timed one is built: at MNIST scale each holds 2 GB
        policy = build_policy(name, params, env, keys).to(device)
        steps = rounds[:warmup] if repeat == "warmup" else rounds
        synchronise(device)
        played = 0
        start = time.perf_counter()
        for current in steps:
            arms = policy.select(current.observation)
            policy.update(current.observation, arms, current.reward(arms))
            played += 1
            if repeat == "timed" and time.perf_counter() - start > max_seconds:
                break
        synchronise(device)
        elapsed = time.perf_counter() - start
    return played, elapsed


def read_bandwidth_gbps(shape: tuple[int, ...], device: str, repeats: int = 50) -> float:
    """Best of ``repeats`` timings of reading a float64 tensor of ``shape`` once (``sum``), in GB/s.

    The tensor has the size of batched LinUCB's inverses, so the rate is that of the cache level the
    state lives in: an upper bound on how fast one round can stream its state.
    """
    buffer = torch.rand(shape, dtype=torch.float64, device=device)
    best = math.inf
    for _ in range(repeats):
        synchronise(device)
        start = time.perf_counter()
        buffer.sum()
        synchronise(device)
        best = min(best, time.perf_counter() - start)
    return buffer.numel() * 8 / best / 1e9


def linucb_traffic_floor(dim: int, n_arms: int) -> int:
    """Fewest bytes one float64 LinUCB run-round must move, ``8 (K + 3) d^2``: every arm's ``A^{-1}`` read
    for its width, the pulled arm's ``A^{-1}`` written back, its ``A`` read and written."""
    return 8 * (n_arms + 3) * dim * dim


def reference_linucb(library: str, contexts: np.ndarray, rewards: np.ndarray, alpha: float) -> dict[str, Any]:
    """One sequential run of disjoint LinUCB in ``library`` over ``contexts (horizon, dim)`` and ``rewards (horizon, n_arms)``."""
    horizon, n_arms = rewards.shape
    dim = contexts.shape[1]
    try:
        if library == "mabwiser":
            from mabwiser.mab import MAB, LearningPolicy

            model = MAB(arms=list(range(n_arms)), learning_policy=LearningPolicy.LinUCB(alpha=alpha, l2_lambda=1.0), seed=0)
        else:
            from obp.policy import LinUCB

            model = LinUCB(dim=dim, n_actions=n_arms, epsilon=alpha, random_state=0)
    except ImportError as error:
        return {"library": library, "policy": "linucb", "skipped": f"not installed ({error})"}
    version = importlib.metadata.version(library)
    start = time.perf_counter()
    for t in range(horizon):
        x = contexts[t : t + 1]
        if library == "mabwiser":
            arm = model.predict(x) if t > 0 else 0
            update = model.partial_fit if t > 0 else model.fit
            update(decisions=[arm], rewards=[rewards[t, arm]], contexts=x)
        else:
            arm = int(model.select_action(x)[0])
            model.update_params(action=arm, reward=float(rewards[t, arm]), context=x)
    elapsed = time.perf_counter() - start
    return {"library": library, "version": version, "policy": "linucb", "n_runs": 1, "horizon": horizon, "seconds": elapsed, "rounds_runs_per_second": horizon / elapsed}


def available_devices() -> list[str]:
    """``cpu``, and ``cuda`` when a GPU is visible."""
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def device_name(device: str) -> str:
    return torch.cuda.get_device_name(device) if torch.device(device).type == "cuda" else platform.processor() or platform.machine()


COMPARISON_REPEATS = 5
"""Timings of batched LinUCB and of the peers' LinUCB, interleaved, whose medians make the claimed
speedup: on a shared virtual machine one timing of the same code varied by up to 40% within a minute."""

TIMING_ERRORS = (RuntimeError, ValueError, KeyError, TypeError, MemoryError, NotImplementedError)


def median_timing(name: str, params: dict, env: BanditEnvironment, rounds: list[BanditRound], device: str, repeats: int, max_seconds: float) -> dict[str, Any]:
    """``rounds, seconds, rounds_runs_per_second`` of the median of ``repeats`` :func:`time_policy` timings."""
    timings = sorted((time_policy(name, params, env, rounds, device, max_seconds=max_seconds) for _ in range(repeats)), key=lambda pair: pair[1] / pair[0])
    played, seconds = timings[len(timings) // 2]
    return {"rounds": played, "seconds": seconds, "rounds_runs_per_second": played * env.n_runs / seconds}


def skipped(error: Exception) -> dict[str, str]:
    """The ``skipped`` field of an entry that could not be timed: the error, cut to 300 characters."""
    return {"skipped": f"{type(error).__name__}: {error}"[:300]}


def median_row(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The row of median ``rounds_runs_per_second`` (a skipped row counts as 0)."""
    rows = sorted(rows, key=lambda row: row.get("rounds_runs_per_second", 0.0))
    return rows[len(rows) // 2]


def bench_policies(
    names: tuple[str, ...] | list[str] | None,
    datasets: dict[str, DatasetSpec],
    n_runs_list: tuple[int, ...] = (1, 20),
    horizon: int = 1000,
    device: str | list[str] = "cpu",
    params: dict[str, dict] | None = None,
    alpha: float = 1.0,
    max_seconds: float = 60.0,
    repeats: int = 1,
    comparison: dict[str, DatasetSpec] | None = None,
) -> dict[str, Any]:
    """Throughput of each policy on each dataset, batch size and device, and the peers' LinUCB.

    names: policies (``None``: :func:`benched_policies`); datasets: name -> ``(features (n_rows, dim),
    labels (n_rows,))`` or a :class:`SyntheticConfig`; comparison: more datasets of the same form on
    which only batched LinUCB and the peers are timed (when ``"linucb"`` is in ``names``); device: one device or a list. Each
    measurement is the median over ``repeats`` timings. LinUCB and the peers are timed first, on every
    dataset, in a process that has run no other policy, ``max(COMPARISON_REPEATS, repeats)`` times in
    turn (the peers alone ``repeats`` times when LinUCB is not benched); their medians are reported. Returns ``{"environment": ..., "policies": [...],
    "references": [...], "bandwidth": [...]}``; a policy entry holds ``dataset, policy, device, n_runs,
    horizon, dim, n_arms, rounds, seconds, rounds_runs_per_second`` or ``skipped`` (the error), a
    reference entry ``dataset, library, rounds_runs_per_second`` or ``skipped``, a bandwidth entry (when
    LinUCB is benched) the :func:`read_bandwidth_gbps` of LinUCB's inverses at the largest batch.
    """
    names = list(names) if names is not None else benched_policies()
    devices = [device] if isinstance(device, str) else list(device)
    params = params or {}
    policies, references, bandwidth = [], [], []
    compared: dict[tuple[str, str, int], dict[str, Any]] = {}

    def entry(dataset: str, name: str, dev: str, env: BanditEnvironment) -> dict[str, Any]:
        return {"dataset": dataset, "policy": name, "params": params.get(name, {}), "device": dev, "n_runs": env.n_runs, "horizon": env.horizon, "dim": env.dim, "n_arms": env.n_arms}

    comparison = {name: spec for name, spec in (comparison or {}).items() if name not in datasets and "linucb" in names}
    comparison_repeats = max(COMPARISON_REPEATS, repeats) if "linucb" in names else repeats
    for dataset, spec in {**datasets, **comparison}.items():
        env = make_environment(spec, 1, horizon, "cpu")
        recorded = [env.round(t) for t in range(env.horizon)]
        contexts = torch.stack([r.observation.contexts[0, 0] for r in recorded]).numpy()
        rewards = torch.stack([r.rewards[0] for r in recorded]).numpy()
        batched = {}
        if "linucb" in names:
            for dev in devices:
                for n_runs in n_runs_list:
                    env = make_environment(spec, n_runs, horizon, dev)
                    batched[dev, n_runs] = (env, [env.round(t) for t in range(env.horizon)])
        peer_runs: dict[str, list] = {library: [] for library in PEERS}
        our_runs: dict[tuple[str, int], list] = {key: [] for key in batched}
        for _ in range(comparison_repeats):
            for library in PEERS:
                peer_runs[library].append(reference_linucb(library, contexts, rewards, alpha))
            for (dev, n_runs), (env, rounds) in batched.items():
                try:
                    our_runs[dev, n_runs].append(median_timing("linucb", params.get("linucb", {}), env, rounds, dev, 1, max_seconds))
                except TIMING_ERRORS as error:
                    our_runs[dev, n_runs].append(skipped(error))
        references += [{"dataset": dataset, **median_row(runs)} for runs in peer_runs.values()]
        for (dev, n_runs), (env, _) in batched.items():
            compared[dataset, dev, n_runs] = {**entry(dataset, "linucb", dev, env), **median_row(our_runs[dev, n_runs])}
        del batched
    for dataset, spec in {**datasets, **comparison}.items():
        timed = [name for name in names if dataset in datasets or name == "linucb"]
        if not timed:
            continue
        for dev in devices:
            for n_runs in n_runs_list:
                env = make_environment(spec, n_runs, horizon, dev)
                rounds = [env.round(t) for t in range(env.horizon)] if timed != ["linucb"] else []
                for name in timed:
                    if name == "linucb":
                        policies.append(compared[dataset, dev, n_runs])
                    else:
                        try:
                            policies.append({**entry(dataset, name, dev, env), **median_timing(name, params.get(name, {}), env, rounds, dev, repeats, max_seconds)})
                        except TIMING_ERRORS as error:
                            policies.append({**entry(dataset, name, dev, env), **skipped(error)})
                    row = policies[-1]
                    rate = f"skipped: {row['skipped']}" if "skipped" in row else f"{row['rounds_runs_per_second']:12.1f} rounds·runs/s"
                    print(f"{dataset:>12} {name:>22} {dev:>4} B={n_runs:<3} {rate}", flush=True)
                if "linucb" in names and n_runs == max(n_runs_list):
                    shape = (n_runs, env.n_arms, env.dim, env.dim)
                    bandwidth.append({"dataset": dataset, "device": dev, "n_runs": n_runs, "bytes": 8 * math.prod(shape), "read_gbps": read_bandwidth_gbps(shape, dev)})
                del env, rounds
    return {
        "environment": {
            "devices": {dev: device_name(dev) for dev in devices},
            "torch": torch.__version__,
            "threads": torch.get_num_threads(),
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "python": platform.python_version(),
            "repeats": repeats,
            "comparison_repeats": comparison_repeats,
            "max_seconds": max_seconds,
        },
        "policies": policies,
        "references": references,
        "bandwidth": bandwidth,
    }


def linucb_speedups(results: dict[str, Any], n_runs: int = 20, device: str = "cpu") -> dict[str, dict[str, Any]]:
    """Per dataset: batched LinUCB's rounds·runs/s at ``n_runs`` on ``device`` over the fastest peer's.

    With a bandwidth entry for the dataset, also the bandwidth ceiling: ``ceiling_rate =
    read_gbps / linucb_traffic_floor(d, K)`` run-rounds/s, the most any implementation of the float64
    algorithm can play while streaming its state at the measured read rate, and ``ceiling_speedup``,
    that rate over the peer's.
    """
    out = {}
    for dataset in dict.fromkeys(row["dataset"] for row in results["policies"]):
        ours = [row for row in results["policies"] if row["dataset"] == dataset and row["policy"] == "linucb" and row["n_runs"] == n_runs and row["device"] == device and "skipped" not in row]
        peers = [row for row in results["references"] if row["dataset"] == dataset and "skipped" not in row]
        if ours and peers:
            fastest = max(peers, key=lambda row: row["rounds_runs_per_second"])
            rate, peer_rate = ours[0]["rounds_runs_per_second"], fastest["rounds_runs_per_second"]
            out[dataset] = {"linucb": rate, "peer": fastest["library"], "peer_rate": peer_rate, "speedup": rate / peer_rate}
            measured = [row for row in results.get("bandwidth", []) if row["dataset"] == dataset and row["device"] == device]
            if measured and "dim" in ours[0]:
                floor = linucb_traffic_floor(ours[0]["dim"], ours[0]["n_arms"])
                ceiling = measured[0]["read_gbps"] * 1e9 / floor
                out[dataset] |= {"read_gbps": measured[0]["read_gbps"], "traffic_floor_bytes": floor, "ceiling_rate": ceiling, "ceiling_speedup": ceiling / fastest["rounds_runs_per_second"]}
    return out


def format_rate(rate: float) -> str:
    """Rounds·runs/s for a table cell: ``950``, ``12.3k``, ``1.2M``."""
    if rate >= 1e6:
        return f"{rate / 1e6:.1f}M"
    if rate >= 1e4:
        return f"{rate / 1e3:.0f}k"
    if rate >= 1e3:
        return f"{rate / 1e3:.1f}k"
    return f"{rate:.3g}" if rate < 10 else f"{rate:.0f}"


PEER_LABELS = {"mabwiser": "MABWiser LinUCB", "obp": "OBP LinUCB"}


def bench_table_tex(results: dict[str, Any] | str | Path, device: str = "cpu", label: str = "tab:bench") -> str:
    """Booktabs table of rounds·runs/s: one row per policy and peer, one column per (dataset, B) on ``device``.

    ``results``: the JSON of :func:`bench_policies` (or its path). The notes state batched LinUCB's
    speedup at the largest ``B`` over the fastest peer on each dataset.
    """
    from hare.report.latex import booktabs_table, escape

    if not isinstance(results, dict):
        results = json.loads(Path(results).read_text())
    rows_in = [row for row in results["policies"] if row["device"] == device]
    datasets = list(dict.fromkeys(row["dataset"] for row in rows_in))
    batches = sorted({row["n_runs"] for row in rows_in})
    columns = [(dataset, n_runs) for dataset in datasets for n_runs in batches]
    cell = {(row["policy"], row["dataset"], row["n_runs"]): ("--" if "skipped" in row else format_rate(row["rounds_runs_per_second"])) for row in rows_in}
    names = list(dict.fromkeys(row["policy"] for row in rows_in))
    body = [[name.replace("_", r"\_"), *(cell.get((name, d, b), "") for d, b in columns)] for name in names]
    for library in PEERS:
        peer = {row["dataset"]: row for row in results["references"] if row["library"] == library}
        body.append([PEER_LABELS[library], *((format_rate(peer[d]["rounds_runs_per_second"]) if d in peer and "skipped" not in peer[d] and b == 1 else "--") for d, b in columns)])
    largest = batches[-1] if batches else 1
    speedups = linucb_speedups(results, largest, device)
    notes = "; ".join(
        f"{d}: {s['speedup']:.1f}$\\times$ {PEER_LABELS[s['peer']]}" + (f" (bandwidth ceiling {s['ceiling_speedup']:.0f}$\\times$)" if "ceiling_speedup" in s else "")
        for d, s in speedups.items()
    )
    header = ["Policy", *(rf"{d} $B{{=}}{b}$" for d, b in columns)]
    caption = rf"Throughput in rounds$\cdot$runs/s on {device.upper()} ({escape(results['environment']['devices'].get(device, device))}); peers run one sequential run."
    ceiling = ""
    if any("ceiling_speedup" in v for v in speedups.values()):
        ceiling = r" The ceiling is the measured read rate of the state over the fewest bytes a float64 round moves, $8(K{+}3)d^2$ per run."
    repeats = results["environment"].get("comparison_repeats")
    medians = f" LinUCB and the peers: medians of {repeats} timings taken in turn." if repeats else ""
    linucb_only = [d for d in datasets if {row["policy"] for row in rows_in if row["dataset"] == d} == {"linucb"} and len(names) > 1]
    only = f" On {', '.join(linucb_only)} only LinUCB and the peers are timed." if linucb_only else ""
    notes = rf"Batched LinUCB at $B{{=}}{largest}$ over the fastest peer: {notes}.{ceiling}{medians}{only} ``--'': not run (missing oracle, memory) or not applicable." if notes else ""
    return booktabs_table(header, body, "l" + "r" * len(columns), caption, label, notes)


def bench_neural_table_tex(results: dict[str, Any] | str | Path, label: str = "tab:bench-neural") -> str:
    """Booktabs table of NeuralUCB's exploration modes: selects/s and rounds/s with their speedups over
    ``loop`` (``results["neural"]``, from :func:`hare.experiments.bench_neural.bench_neural`)."""
    from hare.report.latex import booktabs_table

    if not isinstance(results, dict):
        results = json.loads(Path(results).read_text())
    neural = results["neural"]
    selects, rounds = neural["selects_per_second"], neural["rounds_per_second"]
    body = [[mode, f"{selects[mode]:.1f}", f"{selects[mode] / selects['loop']:.1f}$\\times$",
             f"{rounds[mode]:.1f}", f"{rounds[mode] / rounds['loop']:.1f}$\\times$"] for mode in selects]
    s = neural["settings"]
    caption = (rf"NeuralUCB exploration modes with training off ({s['arms']} arms, $d={s['dim']}$, "
               rf"$m={s['width']}$, $p={neural['n_parameters']}$, $B={s['runs']}$, {s['device']}): the selection "
               r"alone (every arm's mean and bonus) and the whole round (selection and the update of $Z^{-1}$).")
    return booktabs_table(["Mode", "Selects/s", "vs.\\ loop", "Rounds/s", "vs.\\ loop"], body, "lrrrr", caption, label)


def parse_dataset(text: str) -> tuple[str, Path]:
    name, separator, path = text.partition("=")
    if not separator or not name or not path:
        raise argparse.ArgumentTypeError(f"--dataset expects name=path.npz, got {text!r}")
    return name, Path(path)


def parse_param(text: str) -> tuple[str, str, Any]:
    target, separator, value = text.partition("=")
    policy, dot, key = target.partition(".")
    if not separator or not dot or not policy or not key:
        raise argparse.ArgumentTypeError(f"--param expects policy.key=value, got {text!r}")
    return policy, key, json.loads(value)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="result JSON")
    parser.add_argument("--dataset", type=parse_dataset, action="append", default=[], help="name=path.npz with arrays features, labels")
    parser.add_argument("--comparison-dataset", type=parse_dataset, action="append", default=[], help="name=path.npz on which only batched LinUCB and the peers are timed")
    parser.add_argument("--policies", nargs="+", default=None, help="default: every registered policy but hare_synthesize")
    parser.add_argument("--n-runs", type=int, nargs="+", default=[1, 20])
    parser.add_argument("--horizon", type=int, default=1000)
    parser.add_argument("--device", nargs="+", default=None, help="default: cpu, and cuda when available")
    parser.add_argument("--param", type=parse_param, action="append", default=[], help="policy.key=json_value, e.g. kernel_ucb.max_points=200")
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's choice)")
    parser.add_argument("--max-seconds", type=float, default=60.0, help="stop an entry after this long and report the rounds played")
    parser.add_argument("--repeats", type=int, default=1, help="timings per entry; the median is kept")
    parser.add_argument("--no-synthetic", action="store_true", help="leave out the synthetic environment")
    parser.add_argument("--tex", type=Path, default=None, help="also write the throughput table (LaTeX) here")
    parser.add_argument("--tex-neural", type=Path, default=None, help="also write the NeuralUCB modes table (LaTeX) here")
    parser.add_argument("--neural-rounds", type=int, default=30, help="timed rounds per NeuralUCB mode (0: skip)")
    args = parser.parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    datasets: dict[str, DatasetSpec] = {}
    if not args.no_synthetic:
        datasets["synthetic"] = SyntheticConfig()
    comparison: dict[str, DatasetSpec] = {}
    for target, pairs in ((datasets, args.dataset), (comparison, args.comparison_dataset)):
        for name, path in pairs:
            with np.load(path, allow_pickle=False) as data:
                target[name] = (data["features"], data["labels"])
    params: dict[str, dict] = {name: dict(values) for name, values in BENCH_PARAMS.items()}
    for policy, key, value in args.param:
        params.setdefault(policy, {})[key] = value
    devices = args.device or available_devices()
    result = bench_policies(args.policies, datasets, tuple(args.n_runs), args.horizon, devices, params, max_seconds=args.max_seconds, repeats=args.repeats, comparison=comparison)
    if args.neural_rounds > 0:
        from hare.experiments.bench_neural import bench_neural

        result["neural"] = bench_neural(rounds=args.neural_rounds, device=devices[0])
    result["linucb_speedups"] = {dev: linucb_speedups(result, max(args.n_runs), dev) for dev in devices}
    write_json(args.out, result)
    if args.tex:
        write_text(args.tex, bench_table_tex(result, devices[0]))
    if args.tex_neural and "neural" in result:
        write_text(args.tex_neural, bench_neural_table_tex(result))
    for row in result["references"]:
        rate = f"{row['rounds_runs_per_second']:12.1f} rounds·runs/s" if "skipped" not in row else row["skipped"]
        print(f"{row['dataset']:>12} {row['library'] + ' linucb':>22}      B=1   {rate}")
    print(json.dumps(result["linucb_speedups"], indent=1))
    return result


if __name__ == "__main__":
    main()
