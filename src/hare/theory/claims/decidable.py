"""Decidability, checked before anything runs: can the best possible outcome at the run count a configuration gives
decide a claim? A claim that no outcome could decide is INCONCLUSIVE by construction; the register names it
``UNDECIDABLE AT THIS SCALE`` (:data:`hare.verdicts.UNDECIDABLE`) with the run count that would decide it.

Two kinds of claim can be undecidable at a run count ``n``:

* a share (``interval: [share_above_low(...), share_above_high(...)]``, the exact Clopper--Pearson interval of the
  share of runs above a level) compared with a threshold: its best outcome, no run counted (``<``, ``<=``) or every
  run counted (``>``, ``>=``), gives the bound ``1 - 0.025^(1/n)`` (or ``0.025^(1/n)``), which must satisfy the
  comparison for the claim to PASS; ``ceil(log(0.025) / log(1 - threshold))`` runs reach a threshold (72 at 5%);
* a paired comparison with a run plan (``margin:`` and ``power:``): the runs the tuning runs plan
  (:func:`margin_and_plan`, :data:`POWER_TARGET`) must not exceed ``n``. The plan needs the tuning runs, so before
  they exist (``hare validate-config``) these are counted, not checked; ``hare claims`` checks them.

:func:`undecidable_claims` (register, configuration) is what ``hare validate-config`` prints and what ``hare claims``
marks (:func:`mark_undecidable`): a claim it names keeps any decision its runs take anyway (a share that FAILs, a
difference large enough to PASS); only an INCONCLUSIVE one becomes UNDECIDABLE AT THIS SCALE.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from hare import verdicts
from hare.statistics import clopper_pearson
from hare.theory.claims.expressions import RUN_COUNT, as_number, evaluate_expression, load_input
from hare.theory.claims.register import load_register, run_result
from hare.theory.claims.result import ClaimError, ClaimResult

POWER_TARGET = 0.5
"""The planned half-width as a share of the margin: half of delta, so that a tie lands inside the margin and a
difference of delta outside zero."""
RUNS_PREFIX = "results/runs/"


@dataclass(frozen=True)
class Undecidable:
    """A claim no outcome at ``n_runs`` runs can decide: ``kind`` ``share`` or ``plan``, ``runs_needed`` the run count
    that would decide it (``None`` past :data:`hare.verdicts.MAX_PLANNED_RUNS`), ``text`` the note the register
    prints."""

    key: str
    kind: str
    n_runs: int
    runs_needed: int | None
    text: str


def margin_and_plan(
    claim: Mapping[str, Any], names: Mapping[str, Any]
) -> tuple[float | None, float, int | None, float | None]:
    """``(margin, sd of the tuning runs' paired differences, planned runs, comparator's mean tuning regret)`` of a
    claim that declares ``margin:``, ``power: [a, b]`` (each an expression for per-run totals on the tuning runs) and
    ``comparator_regret:``; NaN and None where not declared or where the margins file has no entry (an experiment the
    running configuration neither tunes nor plans)."""
    try:
        margin = as_number(evaluate_expression(claim["margin"], names)) if "margin" in claim else None
        power = [np.asarray(evaluate_expression(e, names), dtype=float).reshape(-1) for e in claim.get("power") or []]
        comparator = (
            as_number(evaluate_expression(claim["comparator_regret"], names)) if "comparator_regret" in claim else None
        )
    except KeyError:
        # The running configuration neither tunes nor plans this experiment (no tuning runs): no margin, no plan.
        return None, math.nan, None, None
    if margin is not None and not (math.isfinite(margin) and margin > 0):
        margin = None
    if comparator is not None and not math.isfinite(comparator):
        comparator = None
    sd, planned = math.nan, None
    if power:
        first, second = power
        if first.shape != second.shape:
            raise ValueError(f"power: the tuning runs differ in count ({first.size} and {second.size})")
        if first.size >= 2:
            sd = float(np.std(first - second, ddof=1))
        if margin is not None:
            planned = verdicts.planned_runs(sd, POWER_TARGET * margin)
    return margin, sd, planned, comparator


def run_counts(configs: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """``{run file: n_runs}`` of every report job of ``configs`` (``results/runs/...npz``): the run count each plays."""
    from hare.experiments.grid import expand_jobs

    counts: dict[str, int] = {}
    for config in configs:
        for job in expand_jobs(dict(config)):
            if job.role == "report":
                counts[f"results/{job.stem}.npz"] = int(job.spec.n_runs)
    return counts


def claim_run_count(claim: Mapping[str, Any], counts: Mapping[str, int]) -> int | None:
    """The run count the claim's run files get (the smallest, should they differ); ``None`` for a claim without run
    files or one reading a run file ``counts`` lacks (NOT RUN in that configuration)."""
    inputs = [str(p) for p in (claim.get("inputs") or {}).values()]
    if any(p.startswith(RUNS_PREFIX) and run_result(p) not in counts for p in inputs):
        return None
    found = [counts[run_result(p)] for p in inputs if run_result(p) in counts]
    return min(found) if found else None


def is_share_claim(claim: Mapping[str, Any]) -> bool:
    """An interval claim on the exact interval of a share of runs (``share_above_low`` and ``share_above_high``)."""
    interval = " ".join(str(e) for e in claim.get("interval") or [])
    return "interval" in claim and "share_above_low(" in interval and "share_above_high(" in interval


@functools.lru_cache(maxsize=8192)
def best_share_bound(n: int, compare: str) -> float:
    """The bound the best outcome of ``n`` runs gives a share claim: the upper bound with no run counted (``<``,
    ``<=``), the lower bound with every run counted (``>``, ``>=``); :func:`hare.statistics.clopper_pearson`, as the
    claim's own interval."""
    return clopper_pearson(0, n)[1] if compare in ("<", "<=") else clopper_pearson(n, n)[0]


def _share_passes(n: int, compare: str, threshold_at) -> bool:
    threshold = threshold_at(n)
    return math.isfinite(threshold) and verdicts.COMPARISONS[compare](best_share_bound(n, compare), threshold)


def share_runs_needed(compare: str, threshold_at, start: int = 1, cap: int = verdicts.MAX_PLANNED_RUNS) -> int | None:
    """The smallest run count at least ``start`` whose best outcome passes the share claim (``threshold_at(n)``, the
    threshold at ``n`` runs); ``None`` when even ``cap`` runs do not. From ``ceil(log(0.025) / log(1 - t))`` (``<``)
    or ``ceil(log(0.025) / log(t))`` (``>``) at the threshold ``t`` of ``start`` runs, then checked step by step
    (the threshold may depend on the run count)."""
    alpha = verdicts.ALPHA_ONE_SIDED
    t = threshold_at(start)
    guess = start
    if math.isfinite(t) and 0 < t < 1:
        closed = math.log(alpha) / math.log(1 - t if compare in ("<", "<=") else t)
        guess = max(start, min(cap, math.ceil(closed)))
    n = guess
    while n <= cap and not _share_passes(n, compare, threshold_at):
        n += 1
    if n > cap:
        return None
    while n > start and _share_passes(n - 1, compare, threshold_at):
        n -= 1
    return n


def threshold_function(claim: Mapping[str, Any], names: Mapping[str, Any]):
    """``n -> threshold`` of a claim: its ``threshold`` expression evaluated with ``n_runs = n`` (:data:`RUN_COUNT`)
    over ``names``; NaN where it cannot be evaluated from them (it reads a run file not there yet)."""

    def at(n: int) -> float:
        try:
            return as_number(evaluate_expression(claim["threshold"], {**names, RUN_COUNT: int(n)}))
        except (KeyError, NameError, ValueError, TypeError, IndexError):
            return math.nan

    return at


def _share_check(claim: Mapping[str, Any], n: int, names: Mapping[str, Any]) -> Undecidable | None:
    compare = claim.get("compare")
    if compare not in ("<", "<=", ">", ">=") or isinstance(claim.get("threshold"), list):
        return None
    threshold_at = threshold_function(claim, names)
    threshold = threshold_at(n)
    if not math.isfinite(threshold) or _share_passes(n, compare, threshold_at):
        return None
    needed = share_runs_needed(compare, threshold_at, start=n + 1)
    best = best_share_bound(n, compare)
    outcome = "none of them counted" if compare in ("<", "<=") else "every one counted"
    text = (
        f"undecidable at {n} runs: even with {outcome}, the exact 95% bound of the share, {best:.3g}, does not meet "
        f"{compare} {threshold:.3g}; "
        + (f"{needed} runs could" if needed else f"not even {verdicts.MAX_PLANNED_RUNS} runs could")
    )
    return Undecidable(str(claim["key"]), "share", n, needed, text)


def _plan_check(claim: Mapping[str, Any], n: int, names: Mapping[str, Any]) -> Undecidable | None:
    try:
        margin, sd, planned, _ = margin_and_plan(claim, names)
    except (NameError, ValueError, TypeError, IndexError):
        return None
    if planned is None or planned <= n:
        return None
    text = (
        f"undecidable at {n} runs: the tuning runs' paired spread ({sd:.3g}) plans {planned} runs for a 95% "
        f"half-width of delta / 2 ({POWER_TARGET * margin:.3g})"
    )
    return Undecidable(str(claim["key"]), "plan", n, planned, text)


def _non_run_inputs(claim: Mapping[str, Any], root: Path | None, cache: dict[str, Any]) -> dict[str, Any]:
    """The claim's inputs that are not run files (margins files, published tables) that exist under ``root``."""
    names: dict[str, Any] = {}
    if root is None:
        return names
    for name, path in (claim.get("inputs") or {}).items():
        path = str(path)
        if path.startswith(RUNS_PREFIX) or path.endswith(".npz"):
            continue
        if path not in cache:
            cache[path] = load_input(root / path) if (root / path).is_file() else None
        if cache[path] is not None:
            names[name] = cache[path]
    return names


def undecidable(
    claims: Iterable[Mapping[str, Any]], counts: Mapping[str, int], root: str | Path | None = None
) -> list[Undecidable]:
    """Every claim of ``claims`` (expanded) that the run counts ``counts`` (``{run file: n_runs}``) cannot decide, in
    register order. Share claims are checked from the register alone; comparisons with a run plan only where
    ``root`` holds their margins files (the tuning runs)."""
    root = None if root is None else Path(root)
    cache: dict[str, Any] = {}
    found = []
    for claim in claims:
        n = claim_run_count(claim, counts)
        if n is None:
            continue
        names = _non_run_inputs(claim, root, cache)
        check = _share_check if is_share_claim(claim) else _plan_check if "power" in claim else None
        result = check(claim, n, names) if check is not None else None
        if result is not None:
            found.append(result)
    return found


def _configs(config: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [config] if isinstance(config, Mapping) else list(config)


def undecidable_claims(
    register: str | Path,
    config: Mapping[str, Any] | Sequence[Mapping[str, Any]],
    root: str | Path | None = None,
) -> list[Undecidable]:
    """The claims of ``register`` that ``config`` (one configuration or several, the running one) plays and cannot
    decide at the run counts it gives (:func:`undecidable`); ``root``: where the margins files of a build are, to
    check the run plans too."""
    configs = _configs(config)
    return undecidable(load_register(register, configs), run_counts(configs), root)


def undecidable_report(
    register: str | Path, config: Mapping[str, Any] | Sequence[Mapping[str, Any]], limit: int = 10
) -> list[str]:
    """What ``hare validate-config`` prints about the register: how many of the claims ``config`` plays no outcome at
    its run counts can decide, the first ``limit`` of them by key with the runs that would, and how many run plans
    wait for the tuning runs; one line saying so where the register does not load over ``config``."""
    configs = _configs(config)
    try:
        claims = load_register(register, configs)
    except ClaimError as error:
        return [f"claims: not checked, the register does not load over this config: {error}"]
    counts = run_counts(configs)
    played = [c for c in claims if claim_run_count(c, counts) is not None]
    found = undecidable(played, counts)
    planned = sum("power" in c and not is_share_claim(c) for c in played)
    lines = [
        f"claims: {len(found)} of the {len(played)} claims this config plays cannot be decided at its run counts"
        + (" (UNDECIDABLE AT THIS SCALE unless their runs decide them anyway):" if found else "")
    ]
    for u in found[:limit]:
        lines.append(f"  {u.key}: {u.text}")
    if len(found) > limit:
        lines.append(f"  ... and {len(found) - limit} more (hare claims lists them all)")
    if planned:
        lines.append(f"claims: {planned} run plans are checked once their tuning runs exist (hare claims)")
    return lines


def counts_of_results(results: Iterable[ClaimResult]) -> dict[str, int]:
    """``{run file: runs}`` as the evaluated claims read them: the run count of a register evaluated without its
    configuration."""
    return {
        run_result(source): int(r.n_runs)
        for r in results
        if r.n_runs is not None
        for source in r.sources
        if source.endswith(".npz")
    }


def mark_undecidable(results: Sequence[ClaimResult], found: Iterable[Undecidable]) -> list[ClaimResult]:
    """``results`` with every claim of ``found`` marked: an INCONCLUSIVE status (unadjusted or adjusted) becomes
    UNDECIDABLE AT THIS SCALE; a decision its runs took anyway stays. Each gets the run count that would decide it
    and the check's note."""
    by_key = {u.key: u for u in found}
    out = []
    for r in results:
        u = by_key.get(r.key)
        if u is None:
            out.append(r)
            continue

        def marked(status: str) -> str:
            return verdicts.UNDECIDABLE if status == "INCONCLUSIVE" else status

        out.append(
            replace(
                r,
                status=marked(r.status),
                adjusted_status=marked(r.adjusted_status) if r.adjusted_status else "",
                runs_needed=u.runs_needed,
                note=u.text,
            )
        )
    return out
