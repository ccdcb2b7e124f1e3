"""Verdicts that decide: the rule that decides a claim on its interval (:func:`decide`), one-sided p-values,
equivalence within a practical margin, multiplicity within a family, and the run count a comparison needs.

Pure statistics, importing nothing of ``hare``: the claims register (:mod:`hare.theory.claims`) and the
reproduction table (:func:`hare.experiments.tables.reproduction.reproduction_verdict`) decide with the same rule, and
the register's writers count the same status words (:data:`STATUSES`, :func:`status_counts`).

A claim compares a measured quantity ``mu`` with a threshold ``theta`` (``mu < theta``, say). Its 95% interval is
two one-sided tests at ``ALPHA_ONE_SIDED = 2.5%`` each, and the register reads three one-sided decisions off it:

=============  =====================================================  ====================================
decision       null hypothesis rejected                                p-value (Student t, ``n - 1`` df)
=============  =====================================================  ====================================
PASS           ``mu >= theta`` (the claim's direction is not true)     ``p_pass``
FAIL           ``mu <= theta`` (the opposite direction is not true)    ``p_fail``
EQUIVALENT     ``|mu - theta| >= delta`` (two one-sided tests, TOST)   ``p_equivalent = max`` of the two
=============  =====================================================  ====================================

``delta`` is the family's practical margin, fixed from tuning runs before any reported run is seen. Unadjusted,
a decision is taken when its p-value is below 2.5%, which is exactly the 95% interval lying on one side of the
threshold (PASS, FAIL) or inside ``(theta - delta, theta + delta)`` (EQUIVALENT). PASS and FAIL take precedence
over EQUIVALENT; none of them is INCONCLUSIVE. A claim whose best possible outcome at its run count cannot decide it is
not INCONCLUSIVE but :data:`UNDECIDABLE` (the claims register checks it before anything runs); an INCONCLUSIVE claim
says why (:data:`REASONS`). An EQUIVALENT verdict whose interval excludes the threshold is a difference smaller than
``delta``, not no difference (:func:`verdict_text`).

Multiplicity (:func:`benjamini_hochberg`): within each family of the register, each of the three decisions is
adjusted by the Benjamini--Hochberg step-up procedure at 2.5%, so the expected share of false decisions among
those taken is at most 2.5% per direction (5% for the two directions together, the level of the unadjusted
intervals); under a family of true nulls, the chance of any adjusted PASS is at most 2.5%.

Run counts (:func:`planned_runs`): the smallest ``n`` whose expected half-width ``t_{0.975, n-1} s / sqrt(n)``
is at most the target, from the standard deviation ``s`` of paired differences on the tuning runs.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Sequence

import numpy as np
from scipy import stats

LEVEL = 0.95
ALPHA_ONE_SIDED = (1 - LEVEL) / 2
"""Each one-sided decision's level: a 95% two-sided interval is two one-sided tests at 2.5%."""
DECISIONS = ("PASS", "FAIL", "EQUIVALENT")
UNDECIDABLE = "UNDECIDABLE AT THIS SCALE"
"""The status of a claim that no outcome at the run count its configuration gives could decide (a share whose
zero-event bound stays above its threshold, a comparison given fewer runs than its tuning runs plan), where the runs
did not decide it anyway: INCONCLUSIVE by construction, so named for what it is, with the run count that would
decide it."""
STATUSES = ("PASS", "FAIL", "EQUIVALENT", "INCONCLUSIVE", UNDECIDABLE, "VACUOUS", "NOT RUN")
"""Every status a claim can take, in the order counts are listed: the decisions of :func:`decide` and INCONCLUSIVE,
UNDECIDABLE AT THIS SCALE, VACUOUS (a bound at or above the trivial bound) and NOT RUN (a claim whose run files the
configuration does not produce), which the claims register assigns. PASS stays first: the paper branches on its
index 0."""
REASONS = ("too few runs", "effect at the margin's edge", "spread larger than planned")
"""Why a claim the runs could decide is INCONCLUSIVE, read off its numbers (:mod:`hare.theory.claims.reasons`): more
runs at the observed mean and spread would settle it; its estimate lies within one standard error of an edge its
interval straddles (the threshold, ``threshold +- delta``, a band's end); or its runs spread more than the tuning
runs that planned their count."""
EQUIVALENT_DIFFERENCE = "EQUIVALENT (a difference smaller than δ)"
""":func:`verdict_text` of an EQUIVALENT verdict whose interval excludes the threshold."""
COMPARISONS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "within": None}
"""``within`` takes a threshold ``[low, high]``: the measured quantity lies in that band."""
MAX_PLANNED_RUNS = 10_000
"""Above this the plan reports the cap: a margin so small against the spread cannot be met by runs."""


def _decisions(
    below: Callable[[float], float],
    above: Callable[[float], float],
    compare: str,
    threshold: float,
    margin: float | None,
) -> dict[str, float]:
    """The three decisions' p-values from the two one-sided tests of an estimate: ``below(b)`` the p of the null
    ``mu >= b`` (against ``mu < b``), ``above(b)`` that of ``mu <= b``; EQUIVALENT is TOST against
    ``threshold +- margin`` (NaN without a positive margin)."""
    lower_is_claimed = compare in ("<", "<=")
    p = {
        "PASS": below(threshold) if lower_is_claimed else above(threshold),
        "FAIL": above(threshold) if lower_is_claimed else below(threshold),
        "EQUIVALENT": math.nan,
    }
    if margin is not None and math.isfinite(margin) and margin > 0:
        p["EQUIVALENT"] = max(above(threshold - margin), below(threshold + margin))
    return p


def t_p_values(
    values: Sequence[float] | np.ndarray, compare: str, threshold: float, margin: float | None
) -> dict[str, float]:
    """``{"PASS", "FAIL", "EQUIVALENT"}`` one-sided p-values of the mean of ``values`` ``(n,)`` against ``threshold``
    (Student t with ``n - 1`` degrees of freedom). ``EQUIVALENT`` is NaN without a margin; all are NaN with fewer than
    two finite values. A spread of zero gives p-values of 0 or 1 (the mean is known exactly)."""
    x = np.asarray(values, dtype=float).reshape(-1)
    nan = {d: math.nan for d in DECISIONS}
    if x.size < 2 or not np.all(np.isfinite(x)) or compare not in ("<", "<=", ">", ">="):
        return nan
    mean, se = float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))
    df = x.size - 1

    def below(bound: float) -> float:
        """p of the null ``mu >= bound`` against ``mu < bound``."""
        if se == 0:
            return 0.0 if mean < bound else 1.0
        return float(stats.t.cdf((mean - bound) / se, df))

    def above(bound: float) -> float:
        """p of the null ``mu <= bound`` against ``mu > bound``."""
        if se == 0:
            return 0.0 if mean > bound else 1.0
        return float(stats.t.sf((mean - bound) / se, df))

    return _decisions(below, above, compare, threshold, margin)


def resample_p_values(draws: np.ndarray, compare: str, threshold: float, margin: float | None) -> dict[str, float]:
    """One-sided p-values of a bootstrap statistic from its resampled values ``draws`` ``(n_boot,)``: the share of
    resamples on the null's side, with the usual ``(1 + count) / (1 + n_boot)`` so that no p-value is 0."""
    draws = np.asarray(draws, dtype=float)
    draws = draws[np.isfinite(draws)]
    nan = {d: math.nan for d in DECISIONS}
    if draws.size == 0 or compare not in ("<", "<=", ">", ">="):
        return nan

    def share(mask: np.ndarray) -> float:
        return float((1 + np.count_nonzero(mask)) / (1 + draws.size))

    return _decisions(
        lambda bound: share(draws >= bound), lambda bound: share(draws <= bound), compare, threshold, margin
    )


def interval_p_values(
    measured: float, low: float, high: float, compare: str, threshold: float, margin: float | None
) -> dict[str, float]:
    """p-values of a quantity known only by its 95% interval, read as a normal estimate with standard error
    ``(high - low) / (2 z_{0.975})`` (the checks' intervals are t or bootstrap intervals; this is their normal
    reading)."""
    nan = {d: math.nan for d in DECISIONS}
    if not all(math.isfinite(v) for v in (measured, low, high)) or high < low or compare not in ("<", "<=", ">", ">="):
        return nan
    se = (high - low) / (2 * stats.norm.ppf(1 - ALPHA_ONE_SIDED))
    if se == 0:
        point = np.array([measured, measured])
        return t_p_values(point, compare, threshold, margin)

    def below(bound: float) -> float:
        return float(stats.norm.cdf((measured - bound) / se))

    def above(bound: float) -> float:
        return float(stats.norm.sf((measured - bound) / se))

    return _decisions(below, above, compare, threshold, margin)


def equivalent(low: float, high: float, threshold: float, margin: float | None) -> bool:
    """The whole interval ``[low, high]`` lies inside ``(threshold - margin, threshold + margin)``."""
    if margin is None or not math.isfinite(margin) or margin <= 0 or not (math.isfinite(low) and math.isfinite(high)):
        return False
    return threshold - margin < low and high < threshold + margin


def decide(
    low: float,
    high: float,
    compare: str,
    threshold: float | tuple[float, float],
    measured: float | None = None,
    margin: float | None = None,
) -> str:
    """PASS when every value of ``[low, high]`` satisfies ``value <compare> threshold`` (``within``: lies in the band
    ``threshold = (band_low, band_high)``), FAIL when every value satisfies the strict opposite (an interval that
    touches the threshold does not establish the opposite direction; the FAIL p-value of
    :func:`t_p_values` tests the same), EQUIVALENT when neither holds but the whole interval
    lies inside ``(threshold - margin, threshold + margin)`` (a tie the data establish, :func:`equivalent`),
    INCONCLUSIVE otherwise. An undefined measurement (``measured`` NaN) or threshold FAILs; a defined measurement
    whose interval is undefined (too few runs, or resamples without spread) is INCONCLUSIVE: no evidence either way."""
    band = threshold if isinstance(threshold, tuple) else (threshold, threshold)
    if (measured is not None and not math.isfinite(measured)) or not all(math.isfinite(b) for b in band):
        return "FAIL"
    if not (math.isfinite(low) and math.isfinite(high)) or low > high:
        return "FAIL" if measured is None else "INCONCLUSIVE"
    if compare == "within":
        if band[0] <= low and high <= band[1]:
            return "PASS"
        return "FAIL" if high < band[0] or low > band[1] else "INCONCLUSIVE"
    holds = COMPARISONS[compare]
    if holds(low, threshold) and holds(high, threshold):
        return "PASS"
    opposite = operator.gt if compare in ("<", "<=") else operator.lt
    if opposite(low, threshold) and opposite(high, threshold):
        return "FAIL"
    if equivalent(low, high, float(threshold), margin):
        return "EQUIVALENT"
    return "INCONCLUSIVE"


def excludes_threshold(low: float, high: float, threshold: float | tuple[float, float] | None) -> bool:
    """The interval ``[low, high]`` lies strictly on one side of a single ``threshold`` (a band never)."""
    if isinstance(threshold, (tuple, list)) or threshold is None:
        return False
    values = (low, high, threshold)
    if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in values):
        return False
    return high < threshold or low > threshold


def verdict_text(status: str, low: float, high: float, threshold: float | tuple[float, float] | None) -> str:
    """The status as the register prints it: :data:`EQUIVALENT_DIFFERENCE` for an EQUIVALENT verdict (after the
    adjustment; unadjusted, PASS or FAIL would take precedence) whose interval excludes the threshold: a difference
    the runs establish, smaller than the margin, not the absence of one. Every other status as it is."""
    return EQUIVALENT_DIFFERENCE if status == "EQUIVALENT" and excludes_threshold(low, high, threshold) else status


def status_counts(statuses: Iterable[str]) -> dict[str, int]:
    """``{status: count}`` of ``statuses``: every word of :data:`STATUSES` in its order (zero counts included), then
    any other word in order of first appearance."""
    statuses = list(statuses)
    order = [*STATUSES, *(s for s in dict.fromkeys(statuses) if s not in STATUSES)]
    return {status: statuses.count(status) for status in order}


def benjamini_hochberg(p_values: Sequence[float]) -> np.ndarray:
    """Benjamini--Hochberg adjusted p-values ``(m,)``: ``p_adj_(i) = min_{j >= i} min(1, m p_(j) / j)`` over the
    sorted finite p-values (``scipy.stats.false_discovery_control``, method ``bh``); NaN stays NaN and does not count
    in ``m``. A hypothesis is rejected at level ``q`` when its adjusted p-value is below ``q``."""
    from scipy.stats import false_discovery_control

    p = np.asarray(p_values, dtype=float).reshape(-1)
    adjusted = np.full(p.shape, math.nan)
    finite = np.isfinite(p)
    if finite.any():
        adjusted[finite] = false_discovery_control(p[finite], method="bh")
    return adjusted


def adjusted_decisions(
    p_by_decision: Sequence[dict[str, float]], level: float = ALPHA_ONE_SIDED
) -> list[tuple[str | None, float]]:
    """For the members of one family, each given its ``{"PASS", "FAIL", "EQUIVALENT"}`` p-values: the decision taken
    after the Benjamini--Hochberg adjustment of each decision's p-values across the family (PASS, then FAIL, then
    EQUIVALENT; ``None`` when none is rejected at ``level``) and the adjusted p-value behind it (for ``None``, the
    smallest adjusted p-value, or NaN when the member has none)."""
    adjusted = {d: benjamini_hochberg([p.get(d, math.nan) for p in p_by_decision]) for d in DECISIONS}
    out: list[tuple[str | None, float]] = []
    for i in range(len(p_by_decision)):
        taken = next((d for d in DECISIONS if adjusted[d][i] < level), None)
        if taken is not None:
            out.append((taken, float(adjusted[taken][i])))
            continue
        defined = [adjusted[d][i] for d in DECISIONS if math.isfinite(adjusted[d][i])]
        out.append((None, float(min(defined)) if defined else math.nan))
    return out


def planned_runs(sd: float, target_half_width: float, level: float = LEVEL, cap: int = MAX_PLANNED_RUNS) -> int | None:
    """The smallest ``n >= 2`` with ``t_{(1+level)/2, n-1} sd / sqrt(n) <= target_half_width``; ``None`` when ``sd`` or
    the target is undefined or the target is not positive; ``cap`` when even ``cap`` runs do not reach it."""
    if not (math.isfinite(sd) and math.isfinite(target_half_width)) or target_half_width <= 0 or sd < 0:
        return None
    if sd == 0:
        return 2

    def half_width(n: int) -> float:
        return float(stats.t.ppf((1 + level) / 2, n - 1) * sd / math.sqrt(n))

    if half_width(cap) > target_half_width:
        return cap
    low, high = 2, cap
    while low < high:
        mid = (low + high) // 2
        if half_width(mid) <= target_half_width:
            high = mid
        else:
            low = mid + 1
    return low


def runs_to_settle(
    mean: float,
    sd: float,
    threshold: float,
    margin: float | None,
    level: float = LEVEL,
    *,
    alpha_exclude: float | None = None,
    alpha_equivalent: float | None = None,
    ran: int = 0,
) -> int | None:
    """At the observed mean and spread, about how many runs would make the interval decide: exclude the threshold
    (one-sided half-width at ``alpha_exclude`` below ``|mean - threshold|``) or, with a margin, lie inside it (at
    ``alpha_equivalent``, below ``margin - |mean - threshold|``), whichever needs fewer. The levels default to each
    one-sided test of ``level``; the claims register passes the levels a claim's family adjustment asks of it, so the
    count settles it after the adjustment. Never below ``ran + 1``: the runs that ran did not settle it. ``None`` when
    neither can happen (a mean exactly at the threshold without a margin)."""
    default = (1 - level) / 2
    distance = abs(mean - threshold)
    targets = [(distance, default if alpha_exclude is None else alpha_exclude)]
    if margin is not None and math.isfinite(margin) and margin > distance:
        targets.append((margin - distance, default if alpha_equivalent is None else alpha_equivalent))
    counts = [
        planned_runs(sd, target * (1 - 1e-9), 1 - 2 * alpha)
        for target, alpha in targets
        if math.isfinite(target) and target > 0 and 0 < alpha < 0.5
    ]
    counts = [n for n in counts if n is not None]
    if not counts:
        return None
    return max(min(counts), int(ran) + 1)
