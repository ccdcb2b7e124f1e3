"""Why an INCONCLUSIVE claim is inconclusive, read off its numbers (:func:`explain`), and about how many runs would
settle it after its family's adjustment (:func:`runs_to_settle`).

A claim its run count could decide (:mod:`hare.theory.claims.decidable`) and did not gets one of
:data:`hare.verdicts.REASONS`, the first that holds:

``spread larger than planned``
    it ran at least the runs its tuning runs planned, and its runs' standard deviation exceeds the tuning runs' one
    that planned them (the plan's premise did not hold);
``effect at the margin's edge``
    its estimate lies within one standard error of an edge its interval straddles: the threshold, ``threshold +-
    delta`` or a band's end (the half-width over the t quantile for an interval over runs, over ``z_{0.975}``
    otherwise): the runs cannot yet tell on which side of that edge the effect is;
``too few runs``
    otherwise: at the observed mean and spread, more runs would settle it.

The note gives the runs that would settle it after the family's adjustment: for a decision ``d`` (PASS or FAIL on the
side of the estimate, EQUIVALENT inside the margin), the one-sided level at which Benjamini--Hochberg would take it
with the family's other decisions unchanged, ``2.5% (R_d + 1) / m_d`` (``R_d`` decisions ``d`` taken among the
``m_d`` members with a ``d`` p-value): a count at the unadjusted 2.5% would ask for fewer runs than the adjustment
needs, and sometimes for fewer than ran. The count is never fewer than ran plus one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np
from scipy import stats

from hare import verdicts
from hare.theory.claims.result import ClaimResult

ALPHA = verdicts.ALPHA_ONE_SIDED
Z = float(stats.norm.ppf(1 - ALPHA))


def standard_error(r: ClaimResult) -> float:
    """The standard error behind the claim's interval: its half-width over ``t_{0.975, n-1}`` for an interval over
    runs, over ``z_{0.975}`` for a bootstrap or a check's interval (their normal reading)."""
    h = r.half_width
    if r.uncertainty == "per_run" and r.n_runs is not None and r.n_runs >= 2:
        return h / float(stats.t.ppf(1 - ALPHA, r.n_runs - 1))
    return h / Z


def edges(r: ClaimResult) -> list[tuple[float, str]]:
    """``(value, name)`` of every edge the claim's decision turns on: a band's ends, or the threshold and, with a
    margin, ``threshold +- delta``."""
    if isinstance(r.threshold, tuple):
        return [(end, f"the band's end {end:.4g}") for end in r.threshold]
    theta = float(r.threshold)
    found = [(theta, f"the threshold {theta:.4g}")]
    if r.margin is not None:
        found += [
            (theta - r.margin, f"the margin's edge {theta - r.margin:.3g} (threshold - delta)"),
            (theta + r.margin, f"the margin's edge {theta + r.margin:.3g} (threshold + delta)"),
        ]
    return found


def edge_near(r: ClaimResult) -> tuple[float, str] | None:
    """The nearest edge the interval straddles that the estimate lies within one standard error of, if any."""
    se = standard_error(r)
    if not (math.isfinite(se) and se > 0 and math.isfinite(r.measured)):
        return None
    near = [(abs(r.measured - v), v, name) for v, name in edges(r) if r.low <= v <= r.high and abs(r.measured - v) < se]
    return min(near)[1:] if near else None


def _side(r: ClaimResult) -> str:
    """The decision on the estimate's side of the threshold: PASS where the claim's direction holds, else FAIL."""
    below = r.measured < float(r.threshold)
    return "PASS" if below == (r.compare in ("<", "<=")) else "FAIL"


def _scaled_runs(r: ClaimResult, alphas: Mapping[str, float]) -> int | None:
    """Runs for an interval known by its width (bootstrap, a check's interval over runs): its half-width scales as
    ``1 / sqrt(n)``, read at the adjusted one-sided level."""
    n, h = r.n_runs, r.half_width
    if n is None or not (math.isfinite(h) and h > 0):
        return None
    distance = abs(r.measured - float(r.threshold))
    targets = [(distance, alphas.get(_side(r), ALPHA))]
    if r.margin is not None and r.margin > distance:
        targets.append((r.margin - distance, alphas.get("EQUIVALENT", ALPHA)))
    counts = [
        math.ceil(n * (h * float(stats.norm.ppf(1 - alpha)) / Z / target) ** 2)
        for target, alpha in targets
        if target > 0 and 0 < alpha < 0.5
    ]
    return max(min(counts), n + 1) if counts else None


def _share_decides(r: ClaimResult, n: int, alphas: Mapping[str, float], threshold_at: Callable[[int], float]) -> bool:
    """At ``n`` runs with the observed share, the exact interval at the adjusted levels lies on one side of the
    threshold at ``n`` runs."""
    threshold = threshold_at(n)
    k = int(round(r.measured * n))
    a_pass, a_fail = alphas.get("PASS", ALPHA), alphas.get("FAIL", ALPHA)
    lower_is_claimed = r.compare in ("<", "<=")
    a_high, a_low = (a_pass, a_fail) if lower_is_claimed else (a_fail, a_pass)
    high = 1.0 if k >= n else float(stats.beta.ppf(1 - a_high, k + 1, n - k))
    low = 0.0 if k <= 0 else float(stats.beta.ppf(a_low, k, n - k + 1))
    if lower_is_claimed:
        return verdicts.COMPARISONS[r.compare](high, threshold) or low > threshold
    return verdicts.COMPARISONS[r.compare](low, threshold) or high < threshold


def _share_runs(r: ClaimResult, alphas: Mapping[str, float], threshold_at: Callable[[int], float]) -> int | None:
    """Runs at which the observed share would decide the claim: doubling from the runs that ran, then bisecting."""
    if r.n_runs is None:
        return None
    low, n = r.n_runs, r.n_runs + 1
    while n <= verdicts.MAX_PLANNED_RUNS and not _share_decides(r, n, alphas, threshold_at):
        low, n = n, 2 * n
    if n > verdicts.MAX_PLANNED_RUNS:
        return None
    while n - low > 1:
        middle = (low + n) // 2
        low, n = (low, middle) if _share_decides(r, middle, alphas, threshold_at) else (middle, n)
    return n


def runs_to_settle(
    r: ClaimResult, alphas: Mapping[str, float], threshold_at: Callable[[int], float] | None = None
) -> int | None:
    """About how many runs would settle the claim at its observed numbers and the levels ``alphas`` its family's
    adjustment asks (``{decision: one-sided level}``); never fewer than ran plus one; ``None`` without an estimate.
    A band: the t half-width below the distance to its nearer end; a paired difference over runs:
    :func:`hare.verdicts.runs_to_settle`; a share: the exact interval at the observed share (``threshold_at(n)``, the
    threshold at ``n`` runs); any other interval: scaled as ``1 / sqrt(n)``."""
    ran = r.n_runs or 0
    if isinstance(r.threshold, tuple):
        if not (math.isfinite(r.run_sd) and ran):
            return None
        target = min(abs(r.measured - r.threshold[0]), abs(r.measured - r.threshold[1]))
        needed = verdicts.planned_runs(r.run_sd, target * (1 - 1e-9)) if target > 0 else None
        return None if needed is None else max(needed, ran + 1)
    if r.uncertainty == "share":
        return _share_runs(r, alphas, threshold_at or (lambda n: float(r.threshold)))
    if r.uncertainty == "per_run" and math.isfinite(r.run_sd):
        return verdicts.runs_to_settle(
            r.measured,
            r.run_sd,
            float(r.threshold),
            r.margin,
            alpha_exclude=alphas.get(_side(r), ALPHA),
            alpha_equivalent=alphas.get("EQUIVALENT", ALPHA),
            ran=ran,
        )
    return _scaled_runs(r, alphas)


def explain(
    r: ClaimResult, alphas: Mapping[str, float], threshold_at: Callable[[int], float] | None = None
) -> tuple[str, str, int | None]:
    """``(reason, note, runs that would settle it)`` of an INCONCLUSIVE claim (module docstring)."""
    ran = r.n_runs
    spread = (
        r.planned_runs is not None
        and ran is not None
        and ran >= r.planned_runs
        and math.isfinite(r.sd)
        and math.isfinite(r.run_sd)
        and r.run_sd > r.sd
    )
    edge = None if not math.isfinite(r.measured) else edge_near(r)
    if spread:
        reason = "spread larger than planned"
        detail = f"the runs' sd {r.run_sd:.3g} against {r.sd:.3g} on the tuning runs that planned {r.planned_runs}"
    elif edge is not None:
        reason = "effect at the margin's edge"
        detail = f"the estimate {r.measured:.3g} lies within one standard error ({standard_error(r):.3g}) of {edge[1]}"
    else:
        reason, detail = "too few runs", ""
    needed = runs_to_settle(r, alphas, threshold_at) if math.isfinite(r.measured) else None
    adjusted = " after the family's adjustment" if r.family and math.isfinite(r.p_adjusted) else ""
    if needed is not None and needed < verdicts.MAX_PLANNED_RUNS:
        settle = f"about {needed} runs would settle it at the observed mean and spread{adjusted} ({ran} ran)"
    elif needed is not None:
        settle = f"not even {verdicts.MAX_PLANNED_RUNS} runs would settle it at the observed mean and spread"
    elif not math.isfinite(r.half_width):
        settle = "its interval is undefined (fewer than two runs, or resamples without spread)"
    elif r.n_runs is not None:
        settle = "the estimate sits at the threshold; no run count settles it without a margin"
    else:
        settle = "no estimate of the runs for an interval its check computes"
    note = f"{reason}: " + "; ".join(part for part in (detail, settle) if part)
    return reason, note, needed if needed is not None and np.isfinite(needed) else None
