"""Regret bounds for HARE and its baselines, with every constant kept.

Each bound is a :class:`Bound`: a sympy expression assembled from named
intermediate steps (``Bound.steps``), a description of the assumptions it needs,
and the source it follows.  ``BOUNDS`` maps a short key to each bound.  Places
where the informal sources (the source notes on HARE and its three-term regret
decomposition, whose claims the paper states in sec:theory, and LNUCB-TA (Khosravi
et al., 2025)) take a step that does not follow, or that needs an assumption they do
not state, are listed in ``SEED_ISSUES`` (paper, sec:seed-issues).

Notation follows the paper (sec:theory): ``T`` rounds, ``C`` clusters, ``d_k`` key
dimension, ``d_u`` user-state dimension, ``d`` the dimension of a plain linear
bandit, ``lam`` the ridge parameter, ``sigma`` the sub-Gaussian noise scale,
``B_x`` the norm bound of the vectors whose widths are summed (``L`` in
Abbasi-Yadkori et al.), ``S`` the norm bound of the unknown parameter.

Length: one module because every bound is a sympy expression over the one :data:`SYMBOLS` table and the totals
are assembled from the other bounds (:func:`_build_bounds`), and :data:`SEED_ISSUES` annotates steps of these same
derivations (about 130 lines of text); split, the derivations and the notes on them would sit in different places.
The bounds leave this module as numbers (:meth:`Bound.numeric`) or as the LaTeX sympy prints for them
(:func:`bound_latex`), which :mod:`hare.report.bounds` writes as macros.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

__all__ = [
    "SYMBOLS",
    "Bound",
    "BOUNDS",
    "SEED_ISSUES",
    "SIMPLIFIED_CONSTANT",
    "bound_latex",
    "log_det_ratio_bound",
    "oful_confidence_radius",
    "user_regret_sum",
]


def _positive(name: str) -> sp.Symbol:
    return sp.Symbol(name, positive=True)


def _count(name: str) -> sp.Symbol:
    return sp.Symbol(name, positive=True, integer=True)


SYMBOLS: dict[str, sp.Symbol] = {
    "T": _count("T"),
    "t": _count("t"),
    "T_j": _count("T_j"),
    "C": _count("C"),
    "d_k": _count("d_k"),
    "d_u": _count("d_u"),
    "d": _count("d"),
    "K": _count("K"),
    "N": _count("N"),
    "H": _count("H"),
    "p": _count("p"),
    "M": _count("M"),
    "alpha": _positive("alpha"),
    "lam": _positive("lambda"),
    "delta": _positive("delta"),
    "sigma": _positive("sigma"),
    "B_x": _positive("B_x"),
    "B_u": _positive("B_u"),
    "S": _positive("S"),
    "L_f": _positive("L_f"),
    "L_u": _positive("L_u"),
    "lambda_max": _positive("lambda_max"),
    "lambda_min": _positive("lambda_min"),
    "epsilon_attn": _positive("epsilon_attn"),
    "kappa_u": _positive("kappa_u"),
    "c_attn": _positive("c_attn"),
    "b_lnucb": _positive("b"),
    "knn_uncertainty": _positive("Gamma_kNN"),
}
"""Keyword name (as accepted by :meth:`Bound.numeric`) -> sympy symbol.

Counts (T, t, T_j, C, d_k, d_u, d, K, N, H, p, M) are positive integers; every
other quantity is a positive real.  ``kappa_u`` is the assumed linear growth
rate of the smallest eigenvalue of the user design matrix, ``c_attn`` the
constant in ``epsilon_attn <= c_attn * sqrt(p / M)``, ``b_lnucb`` the unspecified
absolute constant of LNUCB-TA Theorem 1, and ``knn_uncertainty`` its
``sum_a T^a (u^a_{t,k})^2``.
"""

_KEYWORD_OF_SYMBOL: dict[sp.Symbol, str] = {symbol: keyword for keyword, symbol in SYMBOLS.items()}

T, t, T_j = SYMBOLS["T"], SYMBOLS["t"], SYMBOLS["T_j"]
C, d_k, d_u, d, H, p, M = (SYMBOLS[k] for k in ("C", "d_k", "d_u", "d", "H", "p", "M"))
alpha, lam, delta, sigma = SYMBOLS["alpha"], SYMBOLS["lam"], SYMBOLS["delta"], SYMBOLS["sigma"]
B_x, S, L_f, L_u = SYMBOLS["B_x"], SYMBOLS["S"], SYMBOLS["L_f"], SYMBOLS["L_u"]
lambda_max, lambda_min, epsilon_attn = SYMBOLS["lambda_max"], SYMBOLS["lambda_min"], SYMBOLS["epsilon_attn"]
kappa_u, c_attn = SYMBOLS["kappa_u"], SYMBOLS["c_attn"]
b_lnucb, knn_uncertainty = SYMBOLS["b_lnucb"], SYMBOLS["knn_uncertainty"]

_PROBABILITY_KEYWORDS = frozenset({"delta"})


@dataclass(frozen=True)
class Bound:
    """A regret bound ``expr`` with the named steps it was assembled from."""

    name: str
    expr: sp.Expr
    description: str
    source: str
    steps: dict[str, sp.Expr] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        unknown = sorted(str(s) for s in self.expr.free_symbols if s not in _KEYWORD_OF_SYMBOL)
        if unknown:
            raise ValueError(f"bound {self.name!r} uses unregistered symbols: {', '.join(unknown)}")

    @property
    def parameters(self) -> tuple[str, ...]:
        """Keyword names :meth:`numeric` needs, sorted."""
        return tuple(sorted(_KEYWORD_OF_SYMBOL[s] for s in self.expr.free_symbols))

    @functools.cached_property
    def _compiled(self) -> Callable[..., np.ndarray]:
        arguments = [SYMBOLS[k] for k in self.parameters]
        return sp.lambdify(arguments, self.expr, modules="numpy")

    def numeric(self, **values: float | np.ndarray) -> float | np.ndarray:
        """Evaluate the bound; array arguments broadcast (e.g. an array of ``T``).

        Raises ``KeyError`` naming every missing parameter, ``TypeError`` for a
        keyword that is no registered symbol (a registered symbol the bound does
        not use is ignored, so one parameter dictionary serves every bound), and
        ``ValueError`` for a non-positive value or ``delta`` outside (0, 1).
        """
        not_symbols = sorted(set(values) - set(SYMBOLS))
        if not_symbols:
            raise TypeError(f"{self.name}: unknown parameter(s) {', '.join(not_symbols)}")
        missing = [k for k in self.parameters if k not in values]
        if missing:
            raise KeyError(f"{self.name}: missing parameter(s) {', '.join(missing)}")
        arrays = {}
        for keyword in self.parameters:
            array = np.asarray(values[keyword], dtype=float)
            if not np.all(np.isfinite(array)) or np.any(array <= 0):
                raise ValueError(f"{self.name}: parameter {keyword} must be finite and positive")
            if keyword in _PROBABILITY_KEYWORDS and np.any(array >= 1):
                raise ValueError(f"{self.name}: parameter {keyword} must lie in (0, 1)")
            arrays[keyword] = array
        result = np.asarray(self._compiled(*(arrays[k] for k in self.parameters)), dtype=float)
        if result.ndim == 0:
            return float(result)
        return result

    def latex(self) -> str:
        """``sympy.latex`` of the bound."""
        return sp.latex(self.expr)


# --------------------------------------------------------------------------
# OFUL / LinUCB (Abbasi-Yadkori, Pal, Szepesvari 2011)
# --------------------------------------------------------------------------


def log_det_ratio_bound(dim: sp.Expr, rounds: sp.Expr, norm_bound: sp.Expr, ridge: sp.Expr) -> sp.Expr:
    """``log(det V_n / det(lam I)) <= dim * log(1 + n L^2 / (lam dim))``.

    Determinant-trace inequality, Abbasi-Yadkori et al. (2011), Lemma 10, for
    ``V_n = lam I + sum_{s<=n} x_s x_s^T`` with ``||x_s|| <= L``.
    """
    return dim * sp.log(1 + rounds * norm_bound**2 / (ridge * dim))


def oful_confidence_radius(
    dim: sp.Expr,
    rounds: sp.Expr,
    failure_probability: sp.Expr = delta,
    norm_bound: sp.Expr = B_x,
    ridge: sp.Expr = lam,
    noise: sp.Expr = sigma,
    parameter_norm: sp.Expr = S,
) -> sp.Expr:
    """``beta_n(delta) = sigma sqrt(2 log(1/delta) + d log(1 + n L^2/(lam d))) + sqrt(lam) S``.

    Abbasi-Yadkori et al. (2011), Theorem 2, with ``log det V_n / det(lam I)``
    replaced by its Lemma 10 upper bound.  With probability at least
    ``1 - delta``, simultaneously for all ``n``,
    ``||theta_hat_n - theta*||_{V_n} <= beta_n(delta)``.
    """
    return (
        noise * sp.sqrt(2 * sp.log(1 / failure_probability) + log_det_ratio_bound(dim, rounds, norm_bound, ridge))
        + sp.sqrt(ridge) * parameter_norm
    )


def _build_elliptical_potential() -> Bound:
    log_det = log_det_ratio_bound(d, T, B_x, lam)
    expr = 2 * log_det
    return Bound(
        name="elliptical_potential",
        expr=expr,
        description=(
            "sum_{t=1}^T min(1, ||x_t||^2_{V_{t-1}^{-1}}) <= 2 log(det V_T / det(lam I)) "
            "<= 2 d log(1 + T B_x^2/(lam d)), with V_t = lam I + sum_{s<=t} x_s x_s^T and "
            "||x_t|| <= B_x.  Without the cap min(1, .) the same bound holds when "
            "lam >= max(1, B_x^2), because then every ||x_t||^2_{V_{t-1}^{-1}} <= B_x^2/lam <= 1.  "
            "Deterministic: no probability is involved."
        ),
        source="Abbasi-Yadkori, Pal, Szepesvari (2011), Lemma 11 with Lemma 10",
        steps={
            "capped_width_sum_le_two_log_det_ratio": 2 * sp.Symbol("log_det_ratio", positive=True),
            "log_det_ratio_bound": log_det,
            "elliptical_potential": expr,
        },
    )


def _build_linucb_oful() -> Bound:
    radius = oful_confidence_radius(d, T)
    potential = 2 * log_det_ratio_bound(d, T, B_x, lam)
    per_round_regret_coefficient = 2 * radius
    expr = radius * sp.sqrt(8 * T * log_det_ratio_bound(d, T, B_x, lam))
    return Bound(
        name="linucb_oful",
        expr=expr,
        description=(
            "R_T <= sqrt(8 T beta_T^2 d log(1 + T B_x^2/(lam d))) with "
            "beta_T = sigma sqrt(2 log(1/delta) + d log(1 + T B_x^2/(lam d))) + sqrt(lam) S. "
            "This is the form in the proof of Theorem 3 of Abbasi-Yadkori et al. (2011): the "
            "instantaneous regret is r_t <= min(2, 2 beta_{t-1} ||x_t||_{V^{-1}}) <= "
            "2 beta_T min(1, ||x_t||_{V^{-1}}) (rewards in [-1, 1] and beta_T >= 1), then "
            "Cauchy-Schwarz R_T <= sqrt(T sum_t r_t^2) and the elliptical potential "
            "sum_t min(1, ||x_t||^2_{V^{-1}}) <= 2 d log(1 + T B_x^2/(lam d)).  Holds with "
            "probability at least 1 - delta for a d-dimensional linear bandit with "
            "sigma-sub-Gaussian noise, ||x|| <= B_x (L in the paper), ||theta*|| <= S.  "
            "Growth: 2 sqrt(2) sigma d sqrt(T) log T, i.e. d sqrt(T) log T."
        ),
        source="Abbasi-Yadkori, Pal, Szepesvari (2011), Theorem 3 (proof), Theorem 2, Lemmas 10-11",
        steps={
            "confidence_radius": radius,
            "per_round_regret_coefficient": per_round_regret_coefficient,
            "elliptical_potential": potential,
            "regret": expr,
        },
    )


def _build_hare_multihead(oful: Bound) -> Bound:
    head_factor = sp.sqrt(H)
    injection_factor = 1 + alpha**2 / d_k
    expr = oful.expr * head_factor * injection_factor
    return Bound(
        name="hare_multihead",
        expr=expr,
        description=(
            "Theorem of the source notes (paper, sec:seed-issues): R(T) = O(d sqrt(T log T) sqrt(H) (1 + "
            "alpha^2/d_k)), with the "
            "d sqrt(T log T) factor replaced by the explicit OFUL bound (linucb_oful).  FLAGGED: "
            "the notes' proof sketch does not derive the (1 + alpha^2/d_k) factor nor the "
            "sqrt(H) factor; both are the notes' claim, kept here only as stated (see "
            "SEED_ISSUES).  The OFUL rate itself is d sqrt(T) log T, not d sqrt(T log T)."
        ),
        source="Theorem of the source notes (claim; paper, sec:seed-issues); OFUL constants from Abbasi-Yadkori et al. "
        "(2011)",
        steps={
            "oful_single_head": oful.expr,
            "head_combination_factor_claimed": head_factor,
            "uncertainty_injection_factor_claimed": injection_factor,
            "regret": expr,
        },
    )


# --------------------------------------------------------------------------
# R_explore (paper, sec:decomposition): cluster-level exploration
# --------------------------------------------------------------------------


def _build_r_explore() -> Bound:
    seed_step3 = sp.sqrt(T_j * d_k * sp.log((1 + T_j * B_x**2) / delta))
    cauchy_schwarz = sp.sqrt(C * T)
    seed_step4 = alpha * sp.sqrt(C * T * d_k * sp.log((1 + T * B_x**2) / delta))
    capped_per_cluster = sp.sqrt(T_j * 2 * log_det_ratio_bound(d_k, T_j, B_x, lam))
    capped_over_clusters = sp.sqrt(C * T * 2 * log_det_ratio_bound(d_k, T, B_x, lam))
    expr = alpha * d_k * sp.sqrt(C * T * sp.log(T * lambda_max / delta)) + C * d_k * sp.log(T)
    return Bound(
        name="hare_explore",
        expr=expr,
        description=(
            "The R_explore bound of the source notes as stated (paper, sec:decomposition): R_explore(T) <= alpha d_k "
            "sqrt(C T log(T lambda_max/delta)) "
            "+ C d_k log T.  Steps: per-cluster width sum (the notes' step 3) "
            "sum_{t: j_t=j} U_{t,j} <= sqrt(T_j d_k log((1 + T_j B_x^2)/delta)), then Cauchy-Schwarz "
            "over clusters sum_j sqrt(T_j) <= sqrt(C T).  The steps as the notes write them do not "
            "give this expression: step 3 holds only for capped widths min(1, U) or with "
            "lam >= max(1, B_x^2) (then with factor 2 and without delta), step 4 yields "
            "alpha sqrt(d_k) rather than alpha d_k, and the additive C d_k log T term is not "
            "derived.  B_x must bound the projected query ||q_t||.  See SEED_ISSUES; the "
            "derivation that does follow is hare_explore_oful."
        ),
        source="Source notes, R_explore and proof-sketch steps 1-4 (paper, sec:decomposition and sec:seed-issues)",
        steps={
            "per_cluster_width_sum_seed_step3": seed_step3,
            "cauchy_schwarz_over_clusters": cauchy_schwarz,
            "width_sum_seed_step4": seed_step4,
            "per_cluster_capped_width_sum": capped_per_cluster,
            "capped_width_sum_over_clusters": capped_over_clusters,
            "seed_stated_result": expr,
        },
    )


def _build_r_explore_oful() -> Bound:
    radius = oful_confidence_radius(d_k, T, failure_probability=delta / C)
    capped_per_cluster = sp.sqrt(T_j * 2 * log_det_ratio_bound(d_k, T_j, B_x, lam))
    capped_over_clusters = sp.sqrt(C * T * 2 * log_det_ratio_bound(d_k, T, B_x, lam))
    expr = 2 * radius * capped_over_clusters
    return Bound(
        name="hare_explore_oful",
        expr=expr,
        description=(
            "Cluster-level exploration regret derived along the notes' steps 1-4 with the OFUL "
            "argument completed: C disjoint d_k-dimensional linear bandits (one ridge estimate "
            "theta_hat_j and one Sigma_j = lam I + sum q q^T per cluster), selection "
            "j_t = argmax_j <q_t, theta_hat_j> + beta U_{t,j} with beta the confidence radius.  "
            "Union bound over clusters gives beta_T = sigma sqrt(2 log(C/delta) + "
            "d_k log(1 + T B_x^2/(lam d_k))) + sqrt(lam) S; r_t <= 2 beta_T min(1, U_{t,j_t}) "
            "(rewards in [-1,1], beta_T >= 1); per cluster sum_{t: j_t=j} min(1, U) <= "
            "sqrt(T_j 2 d_k log(1 + T_j B_x^2/(lam d_k))) (Cauchy-Schwarz in t and the elliptical "
            "potential); Cauchy-Schwarz over clusters with T_j <= T inside the log.  Result "
            "R_explore <= 2 beta_T sqrt(2 C T d_k log(1 + T B_x^2/(lam d_k))), growth "
            "2 sqrt(2) sigma d_k sqrt(C T) log T.  B_x bounds ||q_t||, S bounds ||theta*_j||.  "
            "With C = 1 and d_k = d it is linucb_oful."
        ),
        source="Steps 1-4 of the source notes (paper, sec:seed-issues), completed with Abbasi-Yadkori et al. (2011) "
        "Thm 2, Thm 3, Lemma 11",
        steps={
            "confidence_radius_union_over_clusters": radius,
            "per_round_regret_coefficient": 2 * radius,
            "per_cluster_capped_width_sum": capped_per_cluster,
            "cauchy_schwarz_over_clusters": sp.sqrt(C * T),
            "capped_width_sum_over_clusters": capped_over_clusters,
            "regret": expr,
        },
    )


# --------------------------------------------------------------------------
# R_user (paper, sec:decomposition): user-state estimation
# --------------------------------------------------------------------------


def _user_linear_growth_integral() -> sp.Expr:
    s = sp.Dummy("s", positive=True)
    return sp.integrate(1 / sp.sqrt(kappa_u * s + lam), (s, 0, T))


def _build_r_user() -> Bound:
    concentration = sigma * sp.sqrt(d_u * sp.log(t / delta) / lambda_min)
    linear_growth = kappa_u * t + lam
    regret_sum = L_u * sp.Sum(concentration.subs(lambda_min, linear_growth), (t, 1, T))
    log_frozen_at_horizon = (
        L_u * sigma * sp.sqrt(d_u * sp.log(T / delta)) * sp.Sum(1 / sp.sqrt(linear_growth), (t, 1, T))
    )
    integral = sp.simplify(_user_linear_growth_integral())
    expr = L_u * sigma * sp.sqrt(d_u * sp.log(T / delta)) * integral
    return Bound(
        name="hare_user",
        expr=expr,
        description=(
            "The R_user bound of the source notes (paper, sec:decomposition): R_user(T) <= L_u sigma sum_{t=1}^T "
            "sqrt(d_u log(t/delta)/lambda_min(t)).  "
            "Assumption (paper, sec:assumptions, assumption 5): lambda_min(t) >= kappa_u t + lam.  "
            "With delta in (0, 1), log(t/delta) > 0 for every t >= 1, so the t = 1 term is well "
            "defined.  Bounding log(t/delta) <= log(T/delta) and the decreasing "
            "sum_{t=1}^T (kappa_u t + lam)^{-1/2} by its integral over [0, T] gives the closed form "
            "L_u sigma sqrt(d_u log(T/delta)) (2/kappa_u)(sqrt(kappa_u T + lam) - sqrt(lam)), "
            "growth 2 L_u sigma sqrt(d_u T log T / kappa_u).  For a measured lambda_min(t) use "
            "user_regret_sum.  The concentration step itself is the notes' and is flagged in "
            "SEED_ISSUES (sigma scaling, missing prior-bias term, union bound over t)."
        ),
        source="Source notes, R_user (paper, sec:decomposition)",
        steps={
            "posterior_concentration": concentration,
            "eigenvalue_linear_growth": linear_growth,
            "regret_sum": regret_sum,
            "regret_sum_log_at_horizon": log_frozen_at_horizon,
            "integral_of_inverse_sqrt": integral,
            "regret_closed_form": expr,
        },
    )


def user_regret_sum(
    lambda_min_per_round: np.ndarray, *, L_u: float, sigma: float, d_u: float, delta: float
) -> np.ndarray:
    """Cumulative ``L_u sigma sum_{s<=t} sqrt(d_u log(s/delta) / lambda_min(s))`` for t = 1..T.

    The R_user bound (paper, sec:decomposition) evaluated on a measured sequence ``lambda_min(1..T)`` of the
    smallest eigenvalue of the user precision (design) matrix.  Entry ``t-1`` is
    the bound on ``R_user(t)``.
    """
    eigenvalues = np.asarray(lambda_min_per_round, dtype=float)
    if eigenvalues.ndim != 1 or eigenvalues.size == 0:
        raise ValueError("lambda_min_per_round must be a non-empty 1-d array")
    if np.any(eigenvalues <= 0) or not np.all(np.isfinite(eigenvalues)):
        raise ValueError("lambda_min_per_round must be finite and positive")
    if not 0 < delta < 1:
        raise ValueError("delta must lie in (0, 1)")
    rounds = np.arange(1, eigenvalues.size + 1, dtype=float)
    widths = np.sqrt(d_u * np.log(rounds / delta) / eigenvalues)
    return L_u * sigma * np.cumsum(widths)


# --------------------------------------------------------------------------
# R_approx, the total, and the simplified form (paper, sec:decomposition, sec:seed-issues)
# --------------------------------------------------------------------------


def _build_r_approx() -> Bound:
    expr = L_f * T * epsilon_attn
    return Bound(
        name="hare_approx",
        expr=expr,
        description=(
            "The R_approx bound of the source notes (paper, sec:decomposition): R_approx(T) <= L_f T eps_attn, with "
            "L_f the Lipschitz constant of the "
            "reward in the attention distribution (l1) and eps_attn = E||a_t(W_hat) - a_t(W*)||_1 "
            "measured.  Linear in T for fixed eps_attn; with eps_attn <= c_attn sqrt(p/M) see "
            "check_regime."
        ),
        source="Source notes, R_approx (paper, sec:decomposition)",
        steps={
            "per_round_lipschitz": L_f * epsilon_attn,
            "eps_attn_training_rate": c_attn * sp.sqrt(p / M),
            "regret": expr,
        },
    )


def _r_total_as_written() -> sp.Expr:
    """The source notes' combined bound, written out term by term (not summed from BOUNDS)."""
    return (
        L_f * T * epsilon_attn
        + alpha * d_k * sp.sqrt(C * T * sp.log(T * lambda_max / delta))
        + C * d_k * sp.log(T)
        + 2 * L_u * sigma * sp.sqrt(d_u * sp.log(T / delta)) * (sp.sqrt(kappa_u * T + lam) - sp.sqrt(lam)) / kappa_u
    )


def _build_r_total(r_approx: Bound, r_explore: Bound, r_user: Bound) -> Bound:
    expr = _r_total_as_written()
    return Bound(
        name="hare_total",
        expr=expr,
        description=(
            "Three-term decomposition of the source notes (paper, sec:decomposition) R = R_approx + R_explore + R_user "
            "with each term's "
            "bound: L_f T eps_attn + [alpha d_k sqrt(C T log(T lambda_max/delta)) + C d_k log T] + "
            "L_u sigma sqrt(d_u log(T/delta)) (2/kappa_u)(sqrt(kappa_u T + lam) - sqrt(lam)).  Uses "
            "the notes' explore term as stated; hare_total_oful uses the derived one."
        ),
        source="Source notes, combined bound (paper, sec:seed-issues)",
        steps={"approx": r_approx.expr, "explore": r_explore.expr, "user": r_user.expr, "total": expr},
    )


def _build_r_total_oful(r_approx: Bound, r_explore_oful: Bound, r_user: Bound) -> Bound:
    expr = r_approx.expr + r_explore_oful.expr + r_user.expr
    return Bound(
        name="hare_total_oful",
        expr=expr,
        description=(
            "Three-term decomposition with the derived cluster-level term: hare_approx + hare_explore_oful + hare_user."
        ),
        source="Three-term decomposition (paper, sec:decomposition); explore term from Abbasi-Yadkori et al. (2011)",
        steps={"approx": r_approx.expr, "explore": r_explore_oful.expr, "user": r_user.expr, "total": expr},
    )


SIMPLIFIED_CONSTANT: sp.Expr = alpha + 2 * L_u * sigma * sp.sqrt(d_u) / (d_k * sp.sqrt(C * kappa_u))
"""Leading constant K in hare_total ~ K d_k sqrt(C T log T) as T -> oo (regime of check_regime)."""


def _build_r_simplified() -> Bound:
    leading_rate = d_k * sp.sqrt(C * T * sp.log(T))
    expr = SIMPLIFIED_CONSTANT * leading_rate
    return Bound(
        name="hare_simplified",
        expr=expr,
        description=(
            "The simplified result of the source notes (paper, sec:seed-issues) R(T) = O(d_k sqrt(C T log T)) with its "
            "constant: "
            "K d_k sqrt(C T log T), K = alpha + 2 L_u sigma sqrt(d_u)/(d_k sqrt(C kappa_u)).  This is "
            "the leading-order asymptote of hare_total (ratio -> 1 as T -> oo) when "
            "eps_attn <= c_attn sqrt(p/M) and M = omega(p T / log T); it is not a finite-T upper "
            "bound.  The user term has the same order in T as the explore term, so it stays in K "
            "(the notes drop it as dominated)."
        ),
        source="Source notes, simplified combined bound (paper, sec:seed-issues)",
        steps={"leading_constant": SIMPLIFIED_CONSTANT, "leading_rate": leading_rate, "asymptote": expr},
    )


# --------------------------------------------------------------------------
# LNUCB-TA Theorem 1
# --------------------------------------------------------------------------


def _build_lnucbta_theorem1() -> Bound:
    W = S
    log_argument = 1 + T * B_x**2 * W**2 / (d * sigma**2) + knn_uncertainty / (d * sigma**2)
    expr = b_lnucb * sigma * sp.sqrt(T * (d * sp.log(log_argument) + sp.log(4 / delta)))
    beta = sigma**2 * (2 + 4 * d * sp.log(1 + T * B_x**2 * W**2 / d + knn_uncertainty / d) + 8 * sp.log(4 / delta))
    ridge = sigma**2 / W**2
    sum_squared_regret = 8 * beta * d * sp.log(1 + T * B_x**2 / (d * ridge) + knn_uncertainty / (d * ridge))
    return Bound(
        name="lnucbta_theorem1",
        expr=expr,
        description=(
            "LNUCB-TA Theorem 1 (eq. 11): with |noise| <= sigma, ||mu*|| <= W (here S), ||x|| <= B "
            "(here B_x), lam = sigma^2/W^2, with probability >= 1 - delta, "
            "R_T <= b sigma sqrt(T (d log(1 + T B^2 W^2/(d sigma^2) + Gamma_kNN/(d sigma^2)) + "
            "log(4/delta))), b an unspecified absolute constant, Gamma_kNN = sum_a T^a (u^a_{t,k})^2.  "
            "Radius beta as in eq. 10 (transcribed with its sigma^2 placement).  The theorem's "
            "rate sqrt(d T log T) does not follow from its Proposition 2 (see SEED_ISSUES)."
        ),
        source="LNUCB-TA (Khosravi et al., 2025), Sec. 4, Theorem 1, eqs. 10-11; Appendix A.1.1",
        steps={
            "ridge_parameter": ridge,
            "confidence_radius_eq10": beta,
            "sum_squared_regret_prop2": sum_squared_regret,
            "regret_from_prop2_cauchy_schwarz": sp.sqrt(T * sum_squared_regret),
            "regret_eq11": expr,
        },
    )


def _build_bounds() -> dict[str, Bound]:
    oful = _build_linucb_oful()
    r_approx = _build_r_approx()
    r_explore = _build_r_explore()
    r_explore_oful = _build_r_explore_oful()
    r_user = _build_r_user()
    bounds = [
        oful,
        _build_elliptical_potential(),
        _build_hare_multihead(oful),
        r_explore,
        r_explore_oful,
        r_user,
        r_approx,
        _build_r_total(r_approx, r_explore, r_user),
        _build_r_total_oful(r_approx, r_explore_oful, r_user),
        _build_r_simplified(),
        _build_lnucbta_theorem1(),
    ]
    return {bound.name: bound for bound in bounds}


BOUNDS: dict[str, Bound] = _build_bounds()


SEED_ISSUES: dict[str, str] = {
    "seed000_oful_rate": (
        "The source notes quote the Abbasi-Yadkori et al. (2011) bound as O(d sqrt(T log T)) (paper, after eq:oful). "
        "Their Theorem 3 gives R_T <= sqrt(8 T beta_T^2 d log(1 + T L^2/(lam d))) with "
        "beta_T = Theta(sigma sqrt(d log T)), i.e. d sqrt(T) log T: the confidence radius and the "
        "elliptical potential each contribute a sqrt(log T). The limit of the bound over "
        "d sqrt(T) log T is 2 sqrt(2) sigma, while over d sqrt(T log T) it diverges "
        "(asymptotic_ratio). The notes' rate is sqrt(log T) too optimistic."
    ),
    "seed000_alpha_factor_underived": (
        "The theorem of the source notes states R(T) = O(d sqrt(T log T) sqrt(H) (1 + alpha^2/d_k)), and "
        "step 5 of its proof sketch only says the (1 + alpha^2/d_k) factor is 'the cost of uncertainty injection'. "
        "Nothing in the sketch produces it: in an OFUL analysis the exploration weight enters the "
        "per-round regret linearly (r_t <= 2 alpha U_t once alpha is at least the confidence "
        "radius), not as alpha^2/d_k, and if alpha is below the radius optimism fails and no "
        "sublinear bound follows. The factor is kept in hare_multihead as the notes' claim only."
    ),
    "seed000_sqrt_h_underived": (
        "Step 4 of the notes' proof sketch attributes a sqrt(H) factor to 'combining H independent heads'. One "
        "action is taken per round whatever the number of heads, so the regret is not a sum of H "
        "per-head regrets (which would give H, not sqrt(H)); a sqrt(H) would need a "
        "Cauchy-Schwarz over heads of the per-head widths, with the decision rule averaging the "
        "heads' bonuses and each head's confidence set holding simultaneously (log(H/delta)). "
        "The sketch does neither; the factor is a claim."
    ),
    "seed001_step2_reduction": (
        "Step 2 calls the cluster rule j_t = argmax_j [s_bar_{t,j} + alpha U_{t,j}] an instance of "
        "OFUL. OFUL needs the index to be <q_t, theta_hat_j> + beta_t ||q_t||_{Sigma_j^{-1}} with "
        "theta_hat_j the ridge estimate fitted to the rewards observed for cluster j and beta_t "
        "at least the confidence radius of Theorem 2. The mean attention score s_bar is fitted "
        "offline (or fixed), not a ridge estimate of cluster reward, and alpha is a free constant. "
        "The reduction therefore needs the extra assumptions that the cluster mean reward is "
        "linear in q_t, that s_bar is (or is replaced by) the online ridge estimate, and that "
        "alpha >= beta_T. 'Applied independently to each of C clusters' also needs a union bound, "
        "so the radius carries log(C/delta) (hare_explore_oful)."
    ),
    "seed001_step3_potential": (
        "Step 3 cites Theorem 2 of Abbasi-Yadkori et al., which is the confidence ellipsoid; the sum "
        "of widths is bounded by the elliptical potential (their Lemma 11) and Cauchy-Schwarz in t: "
        "sum_{t: j_t=j} min(1, U_{t,j}) <= sqrt(T_j sum min(1, U^2)) <= "
        "sqrt(T_j 2 d_k log(1 + T_j B_x^2/(lam d_k))). The lemma holds for widths capped at 1; "
        "uncapped widths obey it only when lam >= max(1, B_x^2) (then U^2 <= B_x^2/lam <= 1). The "
        "bound is deterministic, so the delta inside the notes' log((1 + T_j B_x^2)/delta) does "
        "not belong there, the factor 2 and lam are missing, and the '1 + T_j B_x^2' is the "
        "lam = 1, d_k = 1 special case of 1 + T_j B_x^2/(lam d_k)."
    ),
    "seed001_step4_dk_power": (
        "Step 4 sums step 3 over clusters by Cauchy-Schwarz (sum_j sqrt(T_j) <= sqrt(C T), correct) "
        "and obtains alpha sqrt(C T d_k log(.)), which carries sqrt(d_k); the stated "
        "O(alpha d_k sqrt(C T log T)) silently upgrades it to d_k. A full d_k arises only when the "
        "width sum is multiplied by the confidence radius beta_T ~ sigma sqrt(d_k log T), i.e. "
        "when alpha is set to the radius, and then a second sqrt(log T) comes with it: the "
        "derived bound is 2 beta_T sqrt(2 C T d_k log(1 + T B_x^2/(lam d_k))) ~ "
        "2 sqrt(2) sigma d_k sqrt(C T) log T, not d_k sqrt(C T log T). With alpha a constant "
        "the notes' expression double counts (alpha and d_k); with alpha = beta_T it misses "
        "sqrt(log T)."
    ),
    "seed001_additive_term": (
        "The term 2 bound adds C d_k log T and writes the log as log(T lambda_max/delta); neither "
        "appears in steps 1-4. A burn-in term of that shape arises only if widths above 1 are "
        "handled separately (at most about d_k log(1 + T B_x^2/(lam d_k))/log 2 such rounds per "
        "cluster, each costing at most 2), and lambda_max, the largest eigenvalue of Sigma_j, is "
        "itself at most lam + T B_x^2, so it is not an independent parameter."
    ),
    "seed001_query_norm": (
        "The widths are U_{t,j} = ||q_t||_{Sigma_j^{-1}} with q_t = W_Qx x_t + W_Qu u_t, but the "
        "potential is stated with B_x, the bound on ||x_t||. The bound needed is "
        "||q_t|| <= ||W_Qx|| B_x + ||W_Qu|| B_u; every B_x in the explore bounds must be read as "
        "this query-norm bound (and it changes whenever the projections are retrained)."
    ),
    "seed001_term1_o1_claim": (
        "Term 1 says that for M >> p the approximation regret L_f T eps_attn becomes O(1). With "
        "eps_attn = c sqrt(p/M) it is c L_f T sqrt(p/M), which is O(1) only if M = Omega(p T^2). "
        "For it to be negligible against d_k sqrt(C T log T) one needs M = omega(p T/log T) "
        "(check_regime: ratio -> 0 for M = p T, a nonzero constant for M = p T/log T); for "
        "o(sqrt(T)) one needs M = omega(p T). The combined-bound regime 'M >> p T' is therefore "
        "sufficient, slightly stronger than necessary, whereas 'M >> p' is not."
    ),
    "seed001_user_concentration": (
        "The posterior bound ||u_hat_t - u*|| <= sigma sqrt(d_u log(t/delta)/lambda_min(Sigma_u^{-1}(t))) "
        "mixes scalings: with the precision Sigma_u^{-1} = I + sum x x^T/sigma^2 already divided by "
        "sigma^2, the extra sigma factor counts the noise twice (the self-normalised bound gives "
        "sigma/sqrt(lambda_min(lam I + sum x x^T)), which for lam = sigma^2 equals "
        "1/sqrt(lambda_min(precision)), up to the log factor). It "
        "also omits the prior-bias term sqrt(lam) B_u of Theorem 2, and a per-t confidence "
        "log(t/delta) holds for all t simultaneously only after a union bound (e.g. delta_t = "
        "6 delta/(pi^2 t^2), giving log(pi^2 t^2/(6 delta))). log(t/delta) > 0 at t = 1 needs "
        "delta < 1. hare_user keeps the notes' form and these corrections are for the paper."
    ),
    "seed001_user_rate": (
        "With lambda_min(t) >= kappa_u t + lam the user term is 2 L_u sigma sqrt(d_u T log T/kappa_u) "
        "to leading order: sqrt(d_u), not the stated d_u. It has the same order in T as the "
        "explore term d_k sqrt(C T log T), so it is dominated only in its constant (when "
        "d_u/kappa_u << d_k^2 C), not in T; the simplified constant keeps it. For M users the "
        "per-user design grows only on the rounds that user is active, so kappa_u is about 1/M "
        "of the per-round eigenvalue increment."
    ),
    "seed001_term1_lipschitz_premise": (
        "Term 1 bounds R_approx by L_f T eps_attn through assumption 2, |f(a, u) - f(a', u)| <= L_f ||a - a'||_1. "
        "For the attention-weighted reward f(a) = sum_n a_n mu(n) the tightest constant is half the reward range, "
        "(max_n mu - min_n mu)/2, because sum_n (a_n - a'_n) = 0. HARE in select mode plays the argmax item of the "
        "attention (within the argmax cluster), a discontinuous function of a: an arbitrarily small attention change "
        "can switch the played item, so the premise does not hold for the played reward and the bound is a "
        "hypothesis for select mode (measured in hare.theory.decomposition), a theorem only for the attention-weighted "
        "or synthesized reward."
    ),
    "seed001_explore_cluster_mean_gap": (
        "With oracle projections and true user states the cluster index mean_{n in j} s_n + alpha U_j ranks clusters "
        "by "
        "their mean item score, and the item played is the best of the chosen cluster. The cluster with the best mean "
        "need not contain the best item, so even with alpha = 0 and exact scores the regret of pi_W*,u* grows "
        "linearly in T whenever that happens with positive probability. Steps 1-4 bound only the cost of the bonus "
        "(exploration) and omit this selection gap, which R_explore = R(pi_W*,u*) measures together with it."
    ),
    "seed002_theorem1_rate": (
        "LNUCB-TA Theorem 1 states R_T <= b sigma sqrt(T(d log(.) + log(4/delta))) = "
        "O(sqrt(d T log T)). Its Proposition 2 gives sum_t regret_t^2 <= 8 beta_T d log(.) with "
        "beta_T = sigma^2(2 + 4 d log(.) + 8 log(4/delta)) itself of order d log T, so "
        "Cauchy-Schwarz yields sqrt(T 8 beta_T d log(.)) ~ d sqrt(T) log T, a factor "
        "sqrt(d log T) larger than the theorem. The proof also uses sum_{t<T} beta_t = beta_T "
        "(beta_t is increasing, so only beta_t <= beta_T holds), places sigma^2 differently in "
        "eq. 10 (T B^2 W^2/d) and eq. 11 (T B^2 W^2/(d sigma^2)), and leaves b unspecified, "
        "so the bound cannot be evaluated without choosing b."
    ),
}


def bound_latex() -> dict[str, str]:
    """``{bound key: sympy.latex of its expression}`` for every bound of :data:`BOUNDS`, in order: the plain data
    :func:`hare.report.bounds.write_bounds_tex` renders as ``\\newcommand`` macros."""
    return {key: bound.latex() for key, bound in BOUNDS.items()}
