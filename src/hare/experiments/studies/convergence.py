"""Does updating the covariances and the attention online *together* converge? (An open question of the source
notes; paper, fig:convergence.)

HARE learns three things online at once: the per-cluster covariances ``Sigma_{h,j}`` behind the
exploration bonus, the ridge mean the bonus explores around (``mean: online``) and, with
``online_lr > 0``, the query projections of the attention. Each moves the others' inputs (the
bonus is a function of the projected query; the projected query moves with the projections), so
there is no a-priori guarantee that the cluster choices settle. This check measures, along one
run per variant, two signs of convergence:

* **stability of the cluster choices.** A fixed probe set of ``n_probes`` (query, user) pairs,
  drawn once from keys disjoint from the run's, is shown to the policy after the update of every
  recorded round (``simulate``'s ``on_record``); ``choices[k, b, p]`` is the cluster run ``b``
  chooses for probe ``p`` at recorded round ``k`` (the cluster of the item ``select`` returns).
  Stability at ``k >= 1`` is the fraction of (run, probe) pairs whose choice equals that at
  recorded round ``k - 1`` (undefined at ``k = 0``). Oracle agreement is the fraction whose chosen
  cluster contains the probe's best item under the environment's mean rewards (clusters as the
  policy sees them). Stability tends to 1 when the choices settle, agreement tells whether they
  settle on the right clusters.
* **the local slope of the cumulative regret.** With ``R(t)`` the mean over runs of the
  cumulative pseudo-regret of the online rounds and ``t_k`` the recorded (1-based, online)
  rounds, ``slope_k = (log R(t_k) - log R(t_{k-1})) / (log t_k - log t_{k-1})``, the local
  exponent of ``R ~ t^a``: 1 is linear regret (no convergence), 0.5 the ``sqrt(T)`` rate of a
  converged optimistic policy. The *last-half slope* is the mean of ``slope_k`` weighted by
  ``log t_k - log t_{k-1}`` over the intervals with ``t_{k-1} >= T/2`` (so it is the chord slope
  ``log(R(T)/R(t_h)) / log(T/t_h)``, ``t_h`` the first recorded round at or after ``T/2``); a
  non-positive ``R`` has no logarithm and gives NaN.

Every variant plays on its own environment object built from the same keys (identical queries,
users and reward noise in every round) with the same policy keys. ``regime: warm`` variants first
learn from the environment's ``n_logged`` logged interactions (:func:`hare.experiments.simulation.simulate`
with ``logs``), ``cold`` variants never see them. Probing calls ``select`` only, which leaves the
policy's state as it was (HARE caches an attention pass keyed on the observation object, and the
next round's observation is a new object), so the measured trajectory is the unprobed one (tested).
Probe observations carry ``t = 2**36 + p``, far from every played round, so their tie-break draws
are not the run's; a schedule that reads ``t`` (``inverse_sqrt``) would therefore see a bonus weight
the run does not use and is refused.

Length: one module because it is one self-contained check: the settings refuse exactly what the probe protocol
cannot measure (synthesize mode; ``inverse_sqrt``, which would read the probes' ``t = 2**36 + p``), and the
measures are the definitions of this docstring, which :func:`run_convergence` also writes into its result; split,
each rule would sit apart from its reason. The macros the paper quotes from it are :mod:`hare.report.convergence`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from hare.envs.base import LoggedRounds, Observation
from hare.envs.synthetic import SyntheticBandit, SyntheticConfig
from hare.experiments.job_setup import deterministic_kernels, resolve_device
from hare.experiments.settings.convergence import ConvergenceSettings, variant_params
from hare.experiments.simulation import SimulationOptions, simulate
from hare.io import write_json, write_npz
from hare.policies.base import Policy, build_policy
from hare.random import CounterRNG, run_keys
from hare.report.convergence import write_convergence_macros

__all__ = [
    "ProbeSet",
    "agreement",
    "coarse_slopes",
    "convergence_check",
    "last_half_slope",
    "local_slopes",
    "make_probes",
    "measure",
    "probe_choices",
    "run_convergence",
    "run_variant",
    "stability",
    "write_outputs",
]

PROBE_T0 = 1 << 36
"""Round index of the first probe observation: far from every played round (tie-break draws differ)."""
SLOPE_WINDOW_RATIO = 1.25
"""Window of the smoothed slope (:func:`coarse_slopes`): each chord spans a factor of at least 1.25 in ``t``."""

# --------------------------------------------------------------------------
# Measures (pure functions of arrays)
# --------------------------------------------------------------------------


def stability(choices: np.ndarray) -> np.ndarray:
    """Per run, the fraction of probes whose choice equals that at the previous recorded round.

    choices ``(n_records, n_runs, n_probes)`` -> ``(n_records, n_runs)``, NaN in the first row.
    """
    choices = np.asarray(choices)
    if choices.ndim != 3:
        raise ValueError(f"choices must be (n_records, n_runs, n_probes), got shape {choices.shape}")
    out = np.full(choices.shape[:2], np.nan)
    out[1:] = (choices[1:] == choices[:-1]).mean(-1)
    return out


def agreement(choices: np.ndarray, best_clusters: np.ndarray) -> np.ndarray:
    """Per run, the fraction of probes whose chosen cluster holds the probe's best item.

    choices ``(n_records, n_runs, n_probes)``, best_clusters ``(n_probes,)`` -> ``(n_records, n_runs)``.
    """
    return (np.asarray(choices) == np.asarray(best_clusters)[None, None, :]).mean(-1)


def local_slopes(rounds: np.ndarray, regret: np.ndarray) -> np.ndarray:
    """``d log R / d log t`` between consecutive recorded rounds: ``(n,)``, ``(..., n)`` -> ``(..., n)``, NaN first.

    An interval whose ends are not both positive has no logarithm: NaN.
    """
    t = np.asarray(rounds, dtype=float)
    r = np.asarray(regret, dtype=float)
    if t.ndim != 1 or r.shape[-1] != t.size or t.size < 2 or np.any(np.diff(t) <= 0) or t[0] <= 0:
        raise ValueError("rounds must be positive and increasing, with one value per regret column")
    with np.errstate(divide="ignore", invalid="ignore"):
        log_r = np.where(r > 0, np.log(np.where(r > 0, r, 1.0)), np.nan)
    out = np.full(r.shape, np.nan)
    out[..., 1:] = np.diff(log_r, axis=-1) / np.diff(np.log(t))
    return out


def coarse_slopes(rounds: np.ndarray, regret: np.ndarray, ratio: float = 1.25) -> tuple[np.ndarray, np.ndarray]:
    """Chord slopes of ``log R`` on ``log t`` over a geometric sub-grid of the recorded rounds (a smoothed local slope).

    The sub-grid starts at the first recorded round and takes each next recorded round ``>= ratio`` times the
    previous one (and always the last); returns the right ends ``(m,)`` and the slopes ``(m,)`` of the ``m``
    chords, NaN where ``R`` is not positive at both ends. Between consecutive recorded rounds near ``T`` the
    log-length ``log(t_k / t_{k-1})`` is small, so the raw local slope carries much noise; this is the same
    quantity averaged over windows of log-length ``log ratio`` (each chord is the log-t-weighted mean of the
    local slopes it spans).
    """
    if ratio <= 1:
        raise ValueError(f"ratio must be > 1 (got {ratio})")
    t = np.asarray(rounds, dtype=float)
    r = np.asarray(regret, dtype=float)
    keep = [0]
    for k in range(1, t.size):
        if t[k] >= ratio * t[keep[-1]]:
            keep.append(k)
    if keep[-1] != t.size - 1:  # the horizon ends the last chord (which then spans more than log ratio)
        if len(keep) == 1:
            keep.append(t.size - 1)
        else:
            keep[-1] = t.size - 1
    index = np.array(keep)
    if index.size < 2:
        return np.empty(0), np.empty(0)
    return t[index[1:]], local_slopes(t[index], r[index])[1:]


def last_half_slope(rounds: np.ndarray, regret: np.ndarray) -> float:
    """Mean of the local slopes over intervals starting at ``t >= T/2``, weighted by their length in ``log t``
    (the chord slope from ``t_h``, the first recorded round ``>= T/2``, to ``T``). NaN where undefined."""
    t = np.asarray(rounds, dtype=float)
    r = np.asarray(regret, dtype=float)
    slopes = local_slopes(t, r)
    start = int(np.searchsorted(t, t[-1] / 2.0))
    if start >= t.size - 1:
        return float("nan")
    weights = np.diff(np.log(t))[start:]
    values = slopes[start + 1 :]
    if not np.all(np.isfinite(values)):
        return float("nan")
    return float((weights * values).sum() / weights.sum())


# --------------------------------------------------------------------------
# Probes and the run
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ProbeSet:
    """``n_probes`` (query, user) pairs shown to every run: queries ``(P, d_x)`` (unit norm), users ``(P,)`` int64,
    best_items ``(P,)`` the best pool item of each under the environment's mean rewards."""

    queries: torch.Tensor
    users: torch.Tensor
    best_items: torch.Tensor

    def __len__(self) -> int:
        return int(self.users.shape[0])

    def observation(self, p: int, env: SyntheticBandit) -> Observation:
        """Probe ``p`` as a round of every run (HARE-Sim's contexts ``[x, onehot(user)]``), at ``t = 2**36 + p``."""
        x = self.queries[p].expand(env.n_runs, -1)
        users = self.users[p].expand(env.n_runs)
        context = torch.cat([self.queries[p], F.one_hot(self.users[p], env.n_users).to(self.queries.dtype)])
        return Observation(PROBE_T0 + p, context.expand(env.n_runs, env.n_arms, -1), users, x)


def make_probes(env: SyntheticBandit, n_probes: int, base_seed: int) -> ProbeSet:
    """The probe set: keys of ``(base_seed, 'convergence', 'probes')``, disjoint from every run's keys."""
    device = env.pool.embeddings.device
    rng = CounterRNG(run_keys(base_seed, [0], "convergence", "probes").to(device))
    queries = F.normalize(rng.normal("query", 0, (n_probes, env.query_dim))[0], dim=-1)
    users = rng.randint("user", 0, env.n_users, (n_probes,))[0]
    best = env.mean_rewards(queries, users).argmax(1)
    return ProbeSet(queries, users, best)


def probe_choices(policy: Policy, env: SyntheticBandit, probes: ProbeSet) -> torch.Tensor:
    """The cluster every run chooses for every probe, ``(n_runs, n_probes)`` int64 (``select`` only: no state
    changes)."""
    clusters = policy.clusters
    return torch.stack([clusters[policy.select(probes.observation(p, env))] for p in range(len(probes))], dim=1)


def _keys(settings: ConvergenceSettings, role: str) -> torch.Tensor:
    return run_keys(settings.base_seed, range(settings.n_runs), "convergence", role)


def measure(
    env: SyntheticBandit, policy: Policy, record_every: int, probes: ProbeSet | None, logs: LoggedRounds | None = None
) -> dict[str, np.ndarray]:
    """Play ``policy`` on ``env`` through :func:`simulate`, probing it after every recorded round (``probes`` None:
    no probing).

    Returns ``rounds`` ``(K,)`` (1-based online rounds), ``cumulative_regret`` ``(n_runs, K)`` and, with probes,
    ``choices`` ``(K, n_runs, P)`` and ``best_clusters`` ``(P,)`` (the policy's cluster of each probe's best item,
    read after the run: a warm start may rebuild the cluster map before round 1, never after).
    """
    records: list[torch.Tensor] = []

    def on_record(t: int, current: Policy) -> None:
        records.append(probe_choices(current, env, probes))

    arrays = simulate(
        env,
        policy,
        SimulationOptions(record_every=record_every, on_record=on_record if probes is not None else None),
        logs=logs,
    )
    out = {"rounds": arrays["rounds"], "cumulative_regret": arrays["cumulative_regret"]}
    if probes is not None:
        out["choices"] = torch.stack(records).cpu().numpy()
        out["best_clusters"] = policy.clusters[probes.best_items].cpu().numpy()
    return out


def run_variant(
    settings: ConvergenceSettings, label: str, device: torch.device | str = "cpu", probe: bool = True
) -> dict[str, np.ndarray]:
    """Play one variant of ``settings`` (:func:`measure`) on its own environment object built from the shared keys.

    ``probe=False`` plays the same run without the measurement (for checking that it changes nothing).
    """
    variant = settings.variants[label]
    env = SyntheticBandit(
        SyntheticConfig(**settings.env_params),
        settings.n_runs,
        settings.horizon,
        _keys(settings, "environment"),
        device,
    )
    logs = env.logged(settings.n_logged) if variant["regime"] == "warm" else None
    if logs is None:
        env.logs_allowed = False
    probes = make_probes(env, settings.n_probes, settings.base_seed) if probe else None
    policy = build_policy(
        "hare", variant_params(settings.hare_params, variant["params"]), env, _keys(settings, "policy").to(device)
    ).to(device)
    return measure(env, policy, settings.record_every, probes, logs)


def _std(values: np.ndarray) -> list[float | None]:
    if values.shape[0] < 2:
        return [None] * values.shape[1]
    return values.std(0, ddof=1).tolist()


def _nan_to_none(values: Sequence[float]) -> list[float | None]:
    return [None if not math.isfinite(v) else float(v) for v in values]


def summarise(rounds: np.ndarray, regret: np.ndarray, choices: np.ndarray, best_clusters: np.ndarray) -> dict[str, Any]:
    """The JSON record of one variant from its arrays (see the module docstring for every measure)."""
    stable = stability(choices)  # (K, n_runs)
    agree = agreement(choices, best_clusters)  # (K, n_runs)
    mean_regret = regret.mean(0)
    slopes = local_slopes(rounds, mean_regret)
    coarse_rounds, coarse = coarse_slopes(rounds, mean_regret, SLOPE_WINDOW_RATIO)
    half = int(np.searchsorted(rounds, rounds[-1] / 2.0))
    per_run_half = [last_half_slope(rounds, run) for run in regret]
    return {
        "rounds": rounds.tolist(),
        "stability_mean": _nan_to_none(stable.mean(1)),
        "stability_per_run": [_nan_to_none(column) for column in stable.T],
        "agreement_mean": agree.mean(1).tolist(),
        "agreement_per_run": [column.tolist() for column in agree.T],
        "regret_mean": mean_regret.tolist(),
        "regret_std": _std(regret),
        "local_slope": _nan_to_none(slopes),
        "coarse_slope_rounds": coarse_rounds.astype(int).tolist(),
        "coarse_slope": _nan_to_none(coarse),
        "last_half_slope": _nan_to_none([last_half_slope(rounds, mean_regret)])[0],
        "last_half_slope_per_run": _nan_to_none(per_run_half),
        "final_stability": float(stable[-1].mean()),
        "final_agreement": float(agree[-1].mean()),
        "last_half_stability": float(stable[max(half, 1) :].mean()),
        "last_half_agreement": float(agree[half:].mean()),
        "final_regret_mean": float(mean_regret[-1]),
    }


def run_convergence(settings: ConvergenceSettings) -> dict[str, Any]:
    """Every variant of ``settings``: the JSON result (``variants[label]`` as :func:`summarise`) and its arrays."""
    device = resolve_device(settings.device)
    deterministic_kernels(device)
    variants, arrays = {}, {}
    for label in settings.variants:
        played = run_variant(settings, label, device)
        summary = summarise(played["rounds"], played["cumulative_regret"], played["choices"], played["best_clusters"])
        variants[label] = {
            "name": settings.display_name(label),
            "regime": settings.variants[label]["regime"],
            "params": variant_params(settings.hare_params, settings.variants[label]["params"]),
            **summary,
        }
        arrays[f"{label}__cumulative_regret"] = played["cumulative_regret"]
        arrays[f"{label}__choices"] = played["choices"].astype(np.int16)
        arrays[f"{label}__best_clusters"] = played["best_clusters"]
        arrays["rounds"] = played["rounds"]
    return {
        "check": "convergence",
        "question": "open question of the source notes (paper, fig:convergence): does updating Sigma and the "
        "attention online together converge?",
        "settings": asdict(settings),
        "device": str(device),
        "definitions": {
            "stability": "fraction of (run, probe) whose chosen cluster equals that at the previous recorded round",
            "agreement": "fraction of (run, probe) whose chosen cluster contains the probe's best item under the "
            "mean rewards",
            "local_slope": "(log R(t_k) - log R(t_{k-1})) / (log t_k - log t_{k-1}) of the mean cumulative regret "
            "over runs, online rounds",
            "coarse_slope": f"chord slope of log R on log t over windows spanning a factor >= {SLOPE_WINDOW_RATIO} "
            "in t (smoothed local_slope)",
            "last_half_slope": "mean of local_slope over the intervals from the first recorded round >= T/2 to T, "
            "weighted by their log-t length",
        },
        "variants": variants,
        "arrays": arrays,
    }


# --------------------------------------------------------------------------
# Writers
# --------------------------------------------------------------------------


def write_outputs(result: dict[str, Any], out_json, out_tex, out_npz=None) -> None:
    """The JSON (arrays left out), the TeX macros (:func:`hare.report.convergence.write_convergence_macros`)
    and, if asked, the NPZ of per-run arrays; each written atomically."""
    write_json(out_json, {k: v for k, v in result.items() if k != "arrays"})
    write_convergence_macros(out_tex, result, SLOPE_WINDOW_RATIO)
    if out_npz is not None:
        write_npz(out_npz, **result["arrays"])


def convergence_check(
    settings: ConvergenceSettings, *, out_json: str | Path, out_tex: str | Path, out_npz: str | Path | None = None
) -> dict[str, Any]:
    """Every variant of a ``theory.convergence`` section, its settings read at the config boundary
    (:func:`hare.experiments.settings.study_settings`), run (:func:`run_convergence`) and written by
    :func:`write_outputs`; returns the result."""
    result = run_convergence(settings)
    write_outputs(result, out_json, out_tex, out_npz)
    return result
