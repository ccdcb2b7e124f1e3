"""Statistics of the theory checks and tables: growth exponents with a bootstrap interval over runs, Student t
intervals, and the trivial bound a regret bound must beat to say anything.

Pure statistics, importing nothing of ``hare``: the theory checks (:mod:`hare.theory`) and the tables
(:mod:`hare.experiments.tables.aggregate`) use the same intervals."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def slope(log_t: np.ndarray, log_r: np.ndarray) -> np.ndarray:
    """Least-squares slope of each row of ``log_r`` ``(..., n_T)`` on ``log_t`` ``(n_T,)``."""
    centred = log_t - log_t.mean()
    return ((log_r - log_r.mean(-1, keepdims=True)) * centred).sum(-1) / (centred**2).sum()


def loglog_slope(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """The growth exponent of one curve: the least-squares :func:`slope` of ``log y`` on ``log x`` (both ``(n,)``) over
    the points where ``y > 0``; NaN with fewer than two such points."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = y > 0
    if keep.sum() < 2:
        return math.nan
    return float(slope(np.log(x[keep]), np.log(y[keep])))


def fit_exponent(
    horizons: Sequence[int], curves: np.ndarray, n_boot: int = 2000, seed: int = 0, level: float = 0.95
) -> dict[str, Any]:
    """Growth exponent ``k`` in ``R(T) ~ c T^k`` over the grid, with a bootstrap interval over runs.

    ``estimate`` is the least-squares slope of ``log mean_runs R(T)`` on ``log T``; the
    interval is the ``level`` percentile interval of the same slope over ``n_boot`` resamples
    of the runs (with replacement; ``numpy.random.default_rng(seed)``). Resamples whose mean
    curve is not positive at every horizon have no logarithm and are dropped
    (``n_boot_valid``); a non-positive mean curve gives ``estimate``, ``ci_low`` and ``ci_high`` ``None``.
    """
    horizons = np.asarray(horizons, dtype=float)
    curves = np.atleast_2d(np.asarray(curves, dtype=float))
    if horizons.size < 2:
        raise ValueError("an exponent needs at least two horizons")
    log_t = np.log(horizons)
    mean = curves.mean(0)
    estimate = float(slope(log_t, np.log(mean))) if np.all(mean > 0) else None
    rng = np.random.default_rng(seed)
    index = rng.integers(0, curves.shape[0], size=(n_boot, curves.shape[0]))
    boot_means = curves[index].mean(1)  # (n_boot, n_T)
    valid = np.all(boot_means > 0, axis=1)
    slopes = slope(log_t, np.log(boot_means[valid])) if valid.any() else np.empty(0)
    tail = 100 * (1 - level) / 2
    low, high = (
        (float(v) for v in np.percentile(slopes, [tail, 100 - tail]))
        if slopes.size and estimate is not None
        else (None, None)
    )
    return {
        "estimate": estimate,
        "ci_low": low,
        "ci_high": high,
        "level": level,
        "n": int(curves.shape[0]),
        "method": f"percentile bootstrap over runs, n_boot={int(n_boot)}",
        "n_boot": int(n_boot),
        "n_boot_valid": int(valid.sum()),
        "seed": int(seed),
    }


def t_interval(
    values: Sequence[float] | np.ndarray, level: float = 0.95, bounds: tuple[float, float] | None = None
) -> dict[str, Any]:
    """Mean of ``values`` ``(n,)`` (one per run) with the Student t interval
    ``mean -+ t_{(1+level)/2, n-1} s / sqrt(n)``.

    ``bounds`` clips the interval to a known range (e.g. ``(0, 1)`` for a fraction). Fewer than two values
    or a non-finite value give ``None`` where the quantity is undefined.
    """
    from scipy.stats import t as student_t

    values = np.asarray(values, dtype=float).ravel()
    method = "t over runs" + ("" if bounds is None else f", clipped to [{bounds[0]:g}, {bounds[1]:g}]")
    out = {"estimate": None, "ci_low": None, "ci_high": None, "level": level, "n": int(values.size), "method": method}
    if values.size == 0 or not np.all(np.isfinite(values)):
        return out
    out["estimate"] = float(values.mean())
    if values.size < 2:
        return out
    half = float(student_t.ppf((1 + level) / 2, values.size - 1) * values.std(ddof=1) / math.sqrt(values.size))
    low, high = out["estimate"] - half, out["estimate"] + half
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    out["ci_low"], out["ci_high"] = float(low), float(high)
    return out


def clopper_pearson(successes: int, trials: int, level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a binomial proportion from ``successes`` of ``trials``:
    ``low = B^{-1}((1 - level)/2; k, n - k + 1)`` (0 when ``k = 0``) and ``high = B^{-1}((1 + level)/2; k + 1, n - k)``
    (1 when ``k = n``), with ``B^{-1}(q; a, b)`` the quantile of the Beta(a, b) distribution. Its coverage is at least
    ``level`` for every true proportion (``scipy.stats.binomtest(k, n).proportion_ci(method="exact")``). ``(nan, nan)``
    without a trial."""
    from scipy.stats import binomtest

    k, n = int(successes), int(trials)
    if n <= 0:
        return math.nan, math.nan
    if not 0 <= k <= n:
        raise ValueError(f"clopper_pearson: {k} successes out of {n} trials")
    interval = binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    return float(interval.low), float(interval.high)


def is_vacuous(bound: float | np.ndarray, horizon: float | np.ndarray, max_gap: float) -> bool | np.ndarray:
    """``bound >= T * Delta``: the bound says no more than the trivial bound (every round at maximal regret)."""
    result = np.asarray(bound, dtype=float) >= np.asarray(horizon, dtype=float) * max_gap
    return bool(result) if result.ndim == 0 else result


def upper_tail_mean(values: Sequence[float] | np.ndarray, level: float = 0.1) -> float:
    """The conditional value at risk of a regret at ``level``: the mean of the worst (largest) ``level`` share of
    ``values`` ``(n,)`` (one per run), CVaR_level = (1 / (level n)) (sum of the k = floor(level n) largest values +
    (level n - k) x the (k + 1)-th largest) (Rockafellar and Uryasev, 2002, on the empirical distribution). With
    ``level n`` whole it is the mean of the ``level n`` worst runs; at ``level = 1`` the mean; below one run
    (``level n < 1``) the worst run. NaN for no values or a non-finite one."""
    if not 0.0 < level <= 1.0:
        raise ValueError(f"upper_tail_mean: level must lie in (0, 1], got {level!r}")
    x = np.sort(np.asarray(values, dtype=float).ravel())[::-1]
    if x.size == 0 or not np.all(np.isfinite(x)):
        return math.nan
    mass = level * x.size
    mass = max(float(round(mass)) if abs(mass - round(mass)) < 1e-9 else mass, 1.0)  # 0.1 x 90 is 9, not 9 + 2e-15
    whole = min(int(math.floor(mass)), x.size)
    total = float(x[:whole].sum())
    if whole < x.size and mass > whole:
        total += (mass - whole) * float(x[whole])
    return total / mass
