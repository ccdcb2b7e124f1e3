"""Every regret bound of the paper by its key (:data:`BOUNDS`): the decomposition's terms and totals
(:mod:`hare.theory.bounds`) and the baselines' (:mod:`hare.theory.baseline_bounds`). The bounds leave the theory layer
as numbers (:meth:`hare.theory.bounds.Bound.numeric`) or as the LaTeX sympy prints for them (:func:`bound_latex`),
which :mod:`hare.report.bounds` writes as macros."""

from __future__ import annotations

from hare.theory.baseline_bounds import (
    _build_elliptical_potential,
    _build_hare_multihead,
    _build_linucb_oful,
    _build_lnucbta_theorem1,
)
from hare.theory.bounds import (
    Bound,
    _build_r_approx,
    _build_r_explore,
    _build_r_explore_oful,
    _build_r_simplified,
    _build_r_total,
    _build_r_total_oful,
    _build_r_user,
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


def bound_latex() -> dict[str, str]:
    """``{bound key: sympy.latex of its expression}`` for every bound of :data:`BOUNDS`, in order: the plain data
    :func:`hare.report.bounds.write_bounds_tex` renders as ``\\newcommand`` macros."""
    return {key: bound.latex() for key, bound in BOUNDS.items()}
