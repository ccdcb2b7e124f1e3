"""Checks of the symbolic regret bounds in hare.theory.bounds.

The symbolic checks (limits, identities, the regime of the simplified bound) and the elliptical potential of a
sequence of vectors are this file's own reference implementations: nothing of the package uses them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
import sympy as sp

from hare.theory import bound_table, bounds
from hare.theory.bound_table import BOUNDS
from hare.theory.bounds import SYMBOLS
from hare.theory.seed_issues import SEED_ISSUES

T, C, d, d_k, d_u = (SYMBOLS[k] for k in ("T", "C", "d", "d_k", "d_u"))
sigma, alpha, p, L_u, kappa_u = (SYMBOLS[k] for k in ("sigma", "alpha", "p", "L_u", "kappa_u"))
b_lnucb = SYMBOLS["b_lnucb"]
epsilon_attn, c_attn = SYMBOLS["epsilon_attn"], SYMBOLS["c_attn"]

PARAMETERS = dict(
    C=8,
    d_k=16,
    d_u=4,
    d=10,
    H=4,
    p=5000,
    M=10**6,
    alpha=1.0,
    lam=1.0,
    delta=0.05,
    sigma=0.5,
    B_x=1.0,
    B_u=1.0,
    S=1.0,
    L_f=1.0,
    L_u=1.0,
    lambda_max=50.0,
    epsilon_attn=0.01,
    kappa_u=0.1,
    c_attn=1.0,
    b_lnucb=1.0,
    knn_uncertainty=3.0,
)
HORIZONS = np.array([2, 10, 100, 1_000, 10_000, 100_000])


def oful_by_hand(T, d, lam, delta, sigma, S, B_x):
    log_term = np.log(1 + T * B_x**2 / (lam * d))
    radius = sigma * np.sqrt(2 * np.log(1 / delta) + d * log_term) + np.sqrt(lam) * S
    return np.sqrt(8 * T * radius**2 * d * log_term)


# ------------------------------------------------ reference implementations


def asymptotic_ratio(bound_key: str, reference_expr: sp.Expr, substitutions: dict | None = None) -> sp.Expr:
    """``lim_{T -> oo} BOUNDS[bound_key].expr / reference_expr`` (after optional substitutions)."""
    expr = BOUNDS[bound_key].expr
    if substitutions:
        expr = expr.subs(substitutions)
    return sp.limit(expr / reference_expr, T, sp.oo)


def matrix_determinant_lemma_residual(dim: int = 3) -> sp.Expr:
    """``det(A + x x^T) - det(A)(1 + x^T A^{-1} x)`` simplified, for a generic symbolic ``A``.

    Zero for every invertible ``A``; the identity behind
    ``log det V_t = log det V_{t-1} + log(1 + ||x_t||^2_{V_{t-1}^{-1}})`` in Lemma 11.
    """
    A = sp.Matrix(dim, dim, lambda i, j: sp.Symbol(f"a_{i}{j}"))
    x = sp.Matrix(dim, 1, lambda i, _: sp.Symbol(f"x_{i}"))
    lhs = (A + x * x.T).det()
    rhs = A.det() * (1 + (x.T * A.inv() * x)[0, 0])
    return sp.simplify(sp.cancel(sp.together(lhs - rhs)))


def cauchy_schwarz_cluster_gap(clusters: int = 3) -> tuple[sp.Expr, sp.Expr]:
    """``(C sum_j T_j - (sum_j sqrt(T_j))^2, sum_{i<j} (sqrt(T_i) - sqrt(T_j))^2)``.

    The two are equal, so ``sum_j sqrt(T_j) <= sqrt(C T)`` (the notes' step 4; paper, sec:theory, "Proof sketches").
    """
    roots = [sp.Symbol(f"r_{j}", positive=True) for j in range(clusters)]
    gap = sp.expand(clusters * sum(r**2 for r in roots) - sum(roots) ** 2)
    squares = sp.expand(sum((roots[i] - roots[j]) ** 2 for i in range(clusters) for j in range(i + 1, clusters)))
    return gap, squares


def three_term_residual() -> sp.Expr:
    """``hare_total - (hare_approx + hare_explore + hare_user)``, simplified; zero when consistent."""
    parts = BOUNDS["hare_approx"].expr + BOUNDS["hare_explore"].expr + BOUNDS["hare_user"].expr
    return sp.simplify(BOUNDS["hare_total"].expr - parts)


@dataclass(frozen=True)
class RegimeCheck:
    """Limits as T -> oo of the approximation term against the other rates, for a given M(T)."""

    training_samples: sp.Expr
    approx_over_leading: sp.Expr
    approx_over_sqrt_T: sp.Expr
    total_over_simplified: sp.Expr

    @property
    def simplification_holds(self) -> bool:
        """hare_total ~ hare_simplified: approx term negligible and the ratio tends to 1."""
        return bool(self.approx_over_leading == 0 and self.total_over_simplified == 1)

    @property
    def approx_is_o_sqrt_T(self) -> bool:
        return bool(self.approx_over_sqrt_T == 0)


def check_regime(training_samples: sp.Expr) -> RegimeCheck:
    """Substitute ``eps_attn = c_attn sqrt(p/M)`` with ``M = training_samples(T)`` and take limits.

    The source notes state the simplification R = O(d_k sqrt(C T log T)) for M >> p T (paper, sec:seed-issues).
    ``L_f T c_attn sqrt(p/M) / (d_k sqrt(C T log T)) -> 0`` iff M = omega(p T / log T);
    ``... / sqrt(T) -> 0`` iff M = omega(p T).
    """
    approx = BOUNDS["hare_approx"].expr.subs(epsilon_attn, c_attn * sp.sqrt(p / training_samples))
    total = BOUNDS["hare_total"].expr.subs(epsilon_attn, c_attn * sp.sqrt(p / training_samples))
    leading = d_k * sp.sqrt(C * T * sp.log(T))
    return RegimeCheck(
        training_samples=training_samples,
        approx_over_leading=sp.limit(approx / leading, T, sp.oo),
        approx_over_sqrt_T=sp.limit(approx / sp.sqrt(T), T, sp.oo),
        total_over_simplified=sp.simplify(sp.limit(total / BOUNDS["hare_simplified"].expr, T, sp.oo)),
    )


def elliptical_potential_sum(vectors: np.ndarray, ridge: float) -> tuple[float, float]:
    """``(sum_t min(1, ||x_t||^2_{V_{t-1}^{-1}}), log det V_T / det(ridge I))`` for rows x_t.

    ``V_t = ridge I + sum_{s<=t} x_s x_s^T``; the width of ``x_t`` uses
    ``V_{t-1}``, i.e. before ``x_t`` is added (Abbasi-Yadkori et al. 2011, Lemma 11).
    """
    vectors = np.asarray(vectors, dtype=float)
    dim = vectors.shape[1]
    inverse = np.eye(dim) / ridge
    capped_total = 0.0
    for x in vectors:
        inverse_x = inverse @ x
        width_sq = float(x @ inverse_x)
        capped_total += min(1.0, width_sq)
        inverse -= np.outer(inverse_x, inverse_x) / (1.0 + width_sq)
    design = ridge * np.eye(dim) + vectors.T @ vectors
    _, log_det = np.linalg.slogdet(design)
    return capped_total, float(log_det - dim * math.log(ridge))


# ---------------------------------------------------------------- numeric


def test_linucb_oful_numeric_is_vectorised_and_matches_the_theorem():
    values = dict(d=5, lam=2.0, delta=0.01, sigma=0.3, S=2.0, B_x=1.5)
    result = BOUNDS["linucb_oful"].numeric(T=HORIZONS, **values)
    assert isinstance(result, np.ndarray) and result.shape == HORIZONS.shape
    np.testing.assert_allclose(result, oful_by_hand(HORIZONS.astype(float), **values), rtol=1e-12)
    scalar = BOUNDS["linucb_oful"].numeric(T=1000, **values)
    assert isinstance(scalar, float)
    assert scalar == pytest.approx(oful_by_hand(1000.0, **values), rel=1e-12)


@pytest.mark.parametrize("key", sorted(k for k, b in BOUNDS.items() if T in b.expr.free_symbols))
def test_every_bound_is_finite_and_increasing_in_T(key):
    values = BOUNDS[key].numeric(**{**PARAMETERS, "T": HORIZONS})
    assert np.all(np.isfinite(values)) and np.all(values > 0)
    assert np.all(np.diff(values) > 0), f"{key} not increasing in T: {values}"


def test_numeric_names_a_missing_parameter():
    incomplete = dict(T=100, d=5, lam=1.0, delta=0.05, S=1.0, B_x=1.0)
    with pytest.raises(KeyError, match="sigma"):
        BOUNDS["linucb_oful"].numeric(**incomplete)


def test_numeric_rejects_unknown_keywords_and_invalid_values():
    values = dict(T=100, d=5, lam=1.0, delta=0.05, sigma=0.5, S=1.0, B_x=1.0)
    with pytest.raises(TypeError, match="sigmaa"):
        BOUNDS["linucb_oful"].numeric(sigmaa=1.0, **values)
    with pytest.raises(ValueError, match="delta"):
        BOUNDS["linucb_oful"].numeric(**{**values, "delta": 1.5})
    with pytest.raises(ValueError, match="lam"):
        BOUNDS["linucb_oful"].numeric(**{**values, "lam": 0.0})
    assert BOUNDS["linucb_oful"].numeric(alpha=3.0, **values) == BOUNDS["linucb_oful"].numeric(**values)


def test_lambdified_function_is_cached():
    bound = BOUNDS["hare_explore"]
    assert bound._compiled is bound._compiled


# ------------------------------------------------------- asymptotic rates


def test_oful_grows_as_d_sqrtT_logT_not_d_sqrt_T_logT():
    assert asymptotic_ratio("linucb_oful", d * sp.sqrt(T) * sp.log(T)) == 2 * sp.sqrt(2) * sigma
    assert asymptotic_ratio("linucb_oful", d * sp.sqrt(T * sp.log(T))) == sp.oo
    assert "seed000_oful_rate" in SEED_ISSUES


def test_hare_explore_as_stated_is_dk_sqrt_CTlogT():
    assert asymptotic_ratio("hare_explore", d_k * sp.sqrt(C * T * sp.log(T))) == alpha


def test_seed_step4_gives_sqrt_dk_not_dk():
    steps = BOUNDS["hare_explore"].steps
    ratio = sp.limit(steps["seed_stated_result"] / steps["width_sum_seed_step4"], T, sp.oo)
    assert sp.simplify(ratio - sp.sqrt(d_k)) == 0
    assert "seed001_step4_dk_power" in SEED_ISSUES


def test_derived_explore_bound_rate_and_reduction_to_oful():
    assert asymptotic_ratio("hare_explore_oful", d_k * sp.sqrt(C * T) * sp.log(T)) == 2 * sp.sqrt(2) * sigma
    assert asymptotic_ratio("hare_explore_oful", d_k * sp.sqrt(C * T * sp.log(T))) == sp.oo
    single_cluster = BOUNDS["hare_explore_oful"].expr.subs({C: 1, d_k: d})
    assert sp.simplify(single_cluster - BOUNDS["linucb_oful"].expr) == 0


def test_user_term_grows_as_sqrt_du_T_logT():
    ratio = asymptotic_ratio("hare_user", sp.sqrt(d_u * T * sp.log(T)))
    assert sp.simplify(ratio - 2 * L_u * sigma / sp.sqrt(kappa_u)) == 0


def test_lnucbta_theorem_rate_versus_its_proposition_2():
    assert asymptotic_ratio("lnucbta_theorem1", sp.sqrt(d * T * sp.log(T))) == b_lnucb * sigma
    from_proposition_2 = BOUNDS["lnucbta_theorem1"].steps["regret_from_prop2_cauchy_schwarz"]
    assert sp.limit(from_proposition_2 / sp.sqrt(d * T * sp.log(T)), T, sp.oo) == sp.oo
    finite = sp.limit(from_proposition_2 / (d * sp.sqrt(T) * sp.log(T)), T, sp.oo)
    assert finite.is_finite and finite.is_positive
    assert "seed002_theorem1_rate" in SEED_ISSUES


# ------------------------------------------------------ symbolic identities


@pytest.mark.parametrize("dim", [2, 3])
def test_matrix_determinant_lemma(dim):
    assert matrix_determinant_lemma_residual(dim) == 0


def test_determinant_lemma_check_detects_a_wrong_identity():
    A = sp.Matrix(2, 2, sp.symbols("a0:4"))
    x = sp.Matrix(sp.symbols("x0:2"))
    wrong = (A + x * x.T).det() - A.det() * (x.T * A.inv() * x)[0, 0]
    assert sp.simplify(wrong) != 0


def test_cauchy_schwarz_over_clusters():
    gap, squares = cauchy_schwarz_cluster_gap(4)
    assert sp.expand(gap - squares) == 0
    rng = np.random.default_rng(0)
    pulls = rng.integers(1, 1000, size=(200, 7))
    assert np.all(np.sqrt(pulls).sum(axis=1) <= np.sqrt(7 * pulls.sum(axis=1)) + 1e-9)


def test_three_terms_add_to_the_stated_total():
    assert three_term_residual() == 0
    without_user = BOUNDS["hare_approx"].expr + BOUNDS["hare_explore"].expr
    assert sp.simplify(BOUNDS["hare_total"].expr - without_user) != 0
    total_oful = BOUNDS["hare_total_oful"]
    assert sp.simplify(total_oful.expr - sum(total_oful.steps[k] for k in ("approx", "explore", "user"))) == 0


def test_user_integral_closed_form():
    integral = BOUNDS["hare_user"].steps["integral_of_inverse_sqrt"]
    lam = SYMBOLS["lam"]
    expected = 2 * (sp.sqrt(kappa_u * T + lam) - sp.sqrt(lam)) / kappa_u
    assert sp.simplify(integral - expected) == 0


@pytest.mark.parametrize(
    "samples, holds, o_sqrt_T",
    [
        (p * T**2, True, True),
        (p * T * sp.log(T), True, True),
        (p * T, True, False),
        (p * T / sp.log(T), False, False),
        (1000 * p, False, False),
    ],
)
def test_regime_for_the_simplified_bound(samples, holds, o_sqrt_T):
    check = check_regime(samples)
    assert check.simplification_holds is holds
    assert check.approx_is_o_sqrt_T is o_sqrt_T
    if holds:
        assert check.total_over_simplified == 1


# ------------------------------------------------ measured sums vs bounds


def random_unit_vectors(rng, rounds, dim):
    vectors = rng.standard_normal((rounds, dim))
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def uncapped_width_sum(vectors, ridge):
    design = ridge * np.eye(vectors.shape[1])
    total = 0.0
    for x in vectors:
        total += float(x @ np.linalg.solve(design, x))
        design += np.outer(x, x)
    return total


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("dim, ridge", [(2, 0.1), (5, 1.0), (8, 4.0)])
def test_elliptical_potential_holds_for_random_unit_vectors(seed, dim, ridge):
    rng = np.random.default_rng(seed)
    vectors = random_unit_vectors(rng, 400, dim)
    capped, log_det_ratio = elliptical_potential_sum(vectors, ridge)
    bound = BOUNDS["elliptical_potential"].numeric(T=len(vectors), d=dim, lam=ridge, B_x=1.0)
    assert capped <= 2 * log_det_ratio + 1e-9
    assert 2 * log_det_ratio <= bound + 1e-9
    assert capped > 0.1 * bound


def test_elliptical_potential_needs_the_cap_when_ridge_is_small():
    rng = np.random.default_rng(1)
    vectors = random_unit_vectors(rng, 50, 3)
    small_ridge = 0.01
    bound = BOUNDS["elliptical_potential"].numeric(T=50, d=3, lam=small_ridge, B_x=1.0)
    assert uncapped_width_sum(vectors, small_ridge) > bound
    large_ridge = 1.0
    bound = BOUNDS["elliptical_potential"].numeric(T=50, d=3, lam=large_ridge, B_x=1.0)
    assert uncapped_width_sum(vectors, large_ridge) <= bound


def test_user_regret_sum_matches_the_symbolic_sum_and_stays_below_closed_form():
    values = dict(L_u=1.5, sigma=0.5, d_u=4, delta=0.05)
    rate, ridge = 0.2, 1.0
    horizon = 20_000
    rounds = np.arange(1, horizon + 1)
    cumulative = bounds.user_regret_sum(rate * rounds + ridge, **values)

    regret_sum = BOUNDS["hare_user"].steps["regret_sum"]
    substitutions = {SYMBOLS[k]: v for k, v in values.items()}
    substitutions.update({kappa_u: rate, SYMBOLS["lam"]: ridge, T: 5})
    assert float(regret_sum.subs(substitutions).doit()) == pytest.approx(cumulative[4], rel=1e-10)

    closed_form = BOUNDS["hare_user"].numeric(T=rounds, kappa_u=rate, lam=ridge, **values)
    assert np.all(cumulative <= closed_form)
    assert cumulative[-1] > 0.5 * closed_form[-1]


def test_user_regret_sum_rejects_delta_outside_unit_interval():
    with pytest.raises(ValueError, match="delta"):
        bounds.user_regret_sum(np.ones(3), L_u=1.0, sigma=1.0, d_u=2, delta=2.0)


def test_oful_radius_step_matches_bound():
    radius = BOUNDS["linucb_oful"].steps["confidence_radius"]
    potential = BOUNDS["linucb_oful"].steps["elliptical_potential"]
    regret = 2 * radius * sp.sqrt(T * potential)
    assert sp.simplify(regret - BOUNDS["linucb_oful"].expr) == 0


# ------------------------------------------------------------------- LaTeX


def test_bound_latex_is_sympys_latex_of_every_bound_in_order():
    latex = bound_table.bound_latex()
    assert list(latex) == list(BOUNDS)
    assert all(text == sp.latex(BOUNDS[key].expr) for key, text in latex.items())
    assert latex["hare_approx"] == r"L_{f} T \epsilon_{attn}"


# ---------------------------------------------------------------- records


def test_bounds_carry_sources_steps_and_flags():
    for key, bound in BOUNDS.items():
        assert bound.name == key and bound.source and bound.description and bound.steps
    assert "does not derive" in BOUNDS["hare_multihead"].description
    assert all(len(text) > 200 for text in SEED_ISSUES.values())


def test_elliptical_bound_is_the_oful_potential_step():
    step = BOUNDS["linucb_oful"].steps["elliptical_potential"]
    assert sp.simplify(step - BOUNDS["elliptical_potential"].expr) == 0
    assert math.isclose(
        BOUNDS["elliptical_potential"].numeric(T=100, d=4, lam=1.0, B_x=1.0), 8 * math.log(1 + 25), rel_tol=1e-12
    )
