"""Run one replay job: every seed of one policy point on logged data, batched.

``python -m hare.experiments.replay_job --job '<json>' --dataset prepared.npz --out result.npz``

The job specification is that of :func:`hare.experiments.run.run_job` with an environment of
kind ``replay`` (``{"name", "kind": "replay", "dataset": "open_bandit", "horizon"}``; the
horizon counts logged events streamed per run). The job writes ``<stem>.npz`` with the arrays
of :func:`run_replay` plus off-policy estimates of each run's final greedy policy
(:func:`greedy_arms`) on the whole logged data set:

* ``ope_ipw``, ``ope_snipw``, ``ope_dm``, ``ope_dr`` ``(n_runs,)`` and their ``*_se``
  standard errors (:mod:`hare.experiments.off_policy`; DM and DR use a per-action ridge
  reward model on the arm contexts, ``lam = 1``);
* ``logged_mean_reward`` ``()``: the logging policy's value, the mean logged reward;

and ``<stem>.json``, the sidecar of :func:`hare.experiments.job_setup.provenance` with the means of
the totals and of the estimates and ``greedy_rule``, the rule :func:`greedy_arms` used.
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hare.envs.base import Observation
from hare.envs.registry import environment_class
from hare.envs.replay import LoggedData, ReplayBandit, ReplayRound
from hare.experiments import off_policy
from hare.experiments.job_setup import (
    build_environment,
    checkpoints,
    deterministic_kernels,
    policy_keys,
    provenance,
    regime_record,
    resolve_device,
    warm_start_logs,
)
from hare.experiments.job_spec import JobSpec
from hare.experiments.simulation import RoundObserver, SimulationOptions, simulate
from hare.io import write_result
from hare.policies.base import argmax_random_ties, build_policy

log = logging.getLogger(__name__)


class ReplayTally(RoundObserver):
    """The replay's feedback and accounts over one play of ``n_steps`` steps (:func:`run_replay`).

    :meth:`feedback` accepts the events whose logged arm the policy played, for runs below ``target_accepted``
    accepted events (``None``: no target), and returns their logged rewards (0 elsewhere) with the accepting runs,
    the only ones that learn. After each update: ``reward`` ``(n_runs,)`` the accepted rewards summed, ``count``
    ``(n_runs,)`` int64 the accepted events, ``trace`` ``(n_runs, n_steps)`` the reward sum after each run's
    ``j``-th accepted event (NaN beyond its count); :meth:`record` appends ``reward`` and ``count`` to
    ``reward_curve`` and ``count_curve``.
    """

    def __init__(self, n_runs: int, n_steps: int, target_accepted: int | None, device: torch.device):
        self.runs = torch.arange(n_runs, device=device)
        self.reward = torch.zeros(n_runs, dtype=torch.float64, device=device)
        self.count = torch.zeros(n_runs, dtype=torch.int64, device=device)
        self.trace = torch.full((n_runs, n_steps), float("nan"), dtype=torch.float64, device=device)
        self.limit = n_steps if target_accepted is None else target_accepted
        self.reward_curve: list[torch.Tensor] = []
        self.count_curve: list[torch.Tensor] = []

    def feedback(self, round_: ReplayRound, arms: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        self.accepted = round_.accepted(arms) & (self.count < self.limit)
        return torch.where(self.accepted, round_.logged_rewards, torch.zeros_like(round_.logged_rewards)), self.accepted

    def updated(self, t: int, arms: torch.Tensor, rewards: torch.Tensor) -> None:
        accepted = self.accepted
        self.reward += rewards
        self.trace[self.runs[accepted], self.count[accepted]] = self.reward[accepted]
        self.count += accepted.long()

    def record(self, t: int, policy) -> None:
        self.reward_curve.append(self.reward.clone())
        self.count_curve.append(self.count.clone())


def run_replay(
    env: ReplayBandit,
    policy,
    n_steps: int | None = None,
    record_every: int = 1,
    target_accepted: int | None = None,
    progress: bool = False,
) -> dict[str, np.ndarray]:
    """Replay ``n_steps`` (default ``env.horizon``) logged events per run (Li et al. 2011, Alg. 1).

    At step ``t`` every run is shown its next logged event, the policy selects ``arms``
    ``(n_runs,)``, and the event is accepted where ``arms`` equals the logged arm; accepted
    runs learn from it through :func:`hare.envs.replay.masked_update` (the steps are played by
    :func:`hare.experiments.simulation.simulate` with the feedback of :class:`ReplayTally`). A run stops accepting
    once it has ``target_accepted`` accepted events (Li et al.'s ``T``; ``None``: never).
    With ``C`` checkpoints on the step grid (:func:`hare.experiments.job_setup.checkpoints`) and
    ``A`` the largest accepted count, the arrays are

    * ``rounds`` ``(C,)``: 1-based steps (logged events streamed) of the checkpoints;
    * ``cumulative_reward`` ``(n_runs, C)``: reward summed over accepted events so far;
    * ``accepted`` ``(n_runs, C)`` int64: accepted events so far;
    * ``mean_reward`` ``(n_runs, C)``: ``cumulative_reward / accepted``, the replay estimate
      of the per-round reward (NaN before the first accepted event);
    * ``accepted_cumulative_reward`` ``(n_runs, A)``: cumulative reward after the ``j``-th
      accepted event, ``j = 1..A``, NaN beyond a run's own count (the curve over accepted
      rounds of LNUCB-TA (Khosravi et al., 2025) Fig. 1a);
    * ``total_reward`` ``(n_runs,)``, ``total_accepted`` ``(n_runs,)`` int64,
      ``total_mean_reward`` ``(n_runs,)``.

    ``rounds``, ``cumulative_reward`` and ``total_reward`` mean what they mean in
    :func:`hare.experiments.simulation.simulate`'s output, restricted to accepted events. There is no
    regret: the rewards of arms that were not logged are unknown.
    """
    n_steps = env.horizon if n_steps is None else n_steps
    if not 1 <= n_steps <= env.horizon:
        raise ValueError(f"n_steps must lie in 1..{env.horizon}, got {n_steps}")
    tally = ReplayTally(env.n_runs, n_steps, target_accepted, policy.run_keys.device)
    simulate(
        env,
        policy,
        SimulationOptions(
            record_every=record_every,
            progress=progress,
            horizon=n_steps,
            feedback=tally.feedback,
            observer=tally,
            on_record=tally.record,
            account=False,
        ),
    )
    reward, count = tally.reward, tally.count
    cumulative = torch.stack(tally.reward_curve, 1).cpu().numpy()
    counts = torch.stack(tally.count_curve, 1).cpu().numpy()
    total_reward, total_count = reward.cpu().numpy(), count.cpu().numpy()
    return {
        "rounds": checkpoints(n_steps, record_every).astype(np.int64),
        "cumulative_reward": cumulative,
        "accepted": counts.astype(np.int64),
        "mean_reward": np.where(counts > 0, cumulative / np.maximum(counts, 1), np.nan),
        "accepted_cumulative_reward": tally.trace[:, : int(total_count.max())].cpu().numpy(),
        "total_reward": total_reward,
        "total_accepted": total_count.astype(np.int64),
        "total_mean_reward": np.where(total_count > 0, total_reward / np.maximum(total_count, 1), np.nan),
    }


def greedy_arms(policy, logged: LoggedData, chunk: int = 1024) -> tuple[torch.Tensor, str]:
    """Each run's greedy choice for every logged event, ``(n_runs, n)`` int64, and the rule used.

    The greedy policy is the final policy with exploration switched off, where the policy
    exposes a posterior mean: ``argmax_a x_{i,a}^T theta_hat_a`` for per-arm ridge
    posteriors (``policy.ridge``: LinUCB, LinTS, LinThompsonUCB), ``argmax_a mu_a`` for
    context-free index policies (``policy.means``). Otherwise it is the frozen policy's own
    ``select`` (its final exploring rule, no further learning), event by event. Exact ties
    are broken uniformly at random from the policy's run keys.
    """
    device = policy.run_keys.device
    logged = logged.to(device)
    n, n_arms, n_runs = logged.n_rows, logged.n_actions, policy.n_runs
    noise = policy.rng.uniform("greedy-ties", 0, (n, n_arms))  # (n_runs, n, n_arms)
    ridge = getattr(policy, "ridge", None)
    if ridge is not None and tuple(ridge.group_shape) == (n_arms,):
        theta = ridge.theta  # (n_runs, n_arms, dim)
        arms = []
        for start in range(0, n, chunk):
            rows = torch.arange(start, min(start + chunk, n), device=device)
            x = logged.arm_contexts(rows)  # (c, n_arms, dim)
            scores = torch.einsum("cad,bad->bca", x, theta)  # (n_runs, c, n_arms)
            arms.append(argmax_random_ties(scores, noise[:, rows]))
        return torch.cat(arms, dim=1), "ridge posterior mean"
    means = getattr(policy, "means", None)
    if isinstance(means, torch.Tensor) and means.shape == (n_runs, n_arms):
        return argmax_random_ties(means[:, None, :].expand(n_runs, n, n_arms), noise), "empirical mean"
    arms = torch.empty(n_runs, n, dtype=torch.int64, device=device)
    for i in range(n):
        rows = torch.full((n_runs,), i, dtype=torch.int64, device=device)
        arms[:, i] = policy.select(Observation(i, logged.arm_contexts(rows), None, logged.contexts[rows]))
    return arms, "frozen select"


def off_policy_estimates(arms: torch.Tensor, logged: LoggedData, lam: float = 1.0) -> dict[str, np.ndarray]:
    """IPW, SNIPW, DM and DR estimates of the deterministic policies ``arms`` ``(n_runs, n)``.

    Position is ignored (the policy picks the same item for every slot), so the action
    distribution has one position (``len_list = 1``); the reward model is
    :func:`hare.experiments.off_policy.fit_ridge_reward_model` on the arm contexts.
    """
    logged = logged.to(arms.device)
    action_dist = off_policy.action_dist_from_arms(arms, logged.n_actions)  # (n_runs, n, n_arms, 1)
    all_rows = torch.arange(logged.n_rows, device=arms.device)
    q_hat = off_policy.fit_ridge_reward_model(logged.arm_contexts(all_rows), logged.actions, logged.rewards, lam)
    logged_args = (logged.rewards, logged.actions, logged.pscores)
    estimates = {
        "ipw": off_policy.inverse_probability_weighting(*logged_args, action_dist),
        "snipw": off_policy.self_normalized_inverse_probability_weighting(*logged_args, action_dist),
        "dm": off_policy.direct_method(action_dist, q_hat),
        "dr": off_policy.doubly_robust(*logged_args, action_dist, q_hat),
    }
    out = {}
    for name, estimate in estimates.items():
        out[f"ope_{name}"] = estimate.value.cpu().numpy()
        out[f"ope_{name}_se"] = estimate.standard_error.cpu().numpy()
    return out


def run_replay_job(
    spec: JobSpec,
    out: str | Path,
    dataset_path: str | Path | None,
    progress: bool | None = None,
    code: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run the replay job ``spec``; write ``out`` (``.npz``) and its ``.json`` sidecar; return the sidecar."""
    out = Path(out)
    if out.suffix != ".npz":
        raise ValueError(f"output must be a .npz path, got {out}")
    if not environment_class(spec.environment.kind).replays_logged_data:
        raise ValueError(f"environment {spec.environment.name!r}: kind must be 'replay', got {spec.environment.kind!r}")
    device = resolve_device(spec.device)
    deterministic_kernels(device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    env = build_environment(spec, device, dataset_path)
    logs = warm_start_logs(spec, env)
    policy = build_policy(spec.policy, spec.params, env, policy_keys(spec)).to(device)
    start = time.perf_counter()
    arrays = run_replay(
        env, policy, record_every=spec.record_every, progress=sys.stderr.isatty() if progress is None else progress
    )
    arms, rule = greedy_arms(policy, env.logged)
    arrays.update(off_policy_estimates(arms, env.logged))
    arrays["logged_mean_reward"] = np.asarray(float(env.logged.rewards.mean()))
    wall = time.perf_counter() - start
    sidecar = {
        **provenance(spec, env, device, wall, code),
        **regime_record(spec, logs),
        "logged_events": env.logged.n_rows,
        "greedy_rule": rule,
        "total_reward_mean": float(arrays["total_reward"].mean()),
        "total_accepted_mean": float(arrays["total_accepted"].mean()),
        **{f"{name}_mean": float(arrays[name].mean()) for name in ("ope_ipw", "ope_snipw", "ope_dm", "ope_dr")},
    }
    sidecar = write_result(out, arrays, sidecar)
    log.info(
        "%s: %.1f accepted, %.2f reward per run (mean of %d runs) in %.1f s",
        out,
        sidecar["total_accepted_mean"],
        sidecar["total_reward_mean"],
        env.n_runs,
        wall,
    )
    return sidecar
