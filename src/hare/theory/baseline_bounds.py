"""Regret bounds of the baselines, over the symbols of :mod:`hare.theory.bounds`: OFUL for LinUCB and its elliptical
potential (Abbasi-Yadkori, Pal, Szepesvari 2011), the theorem of the source notes on HARE's heads (OFUL times the
factors the notes claim), and LNUCB-TA (Khosravi et al., 2025) Theorem 1."""

from __future__ import annotations

import sympy as sp

from hare.theory.bounds import (
    B_x,
    Bound,
    H,
    S,
    T,
    alpha,
    b_lnucb,
    d,
    d_k,
    delta,
    knn_uncertainty,
    lam,
    log_det_ratio_bound,
    oful_confidence_radius,
    sigma,
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
