"""Summed log likelihood at many (eps, s) points, for grid posteriors (numpy and numba).

:func:`log_lik_points` evaluates the exact likelihood of every base of a model
(:func:`samplers.exact.driver.build_model`, one strength variable; over-dispersed bases only with
tau and rho fixed, through the sampler's :func:`samplers.exact.posterior._corr_log_lik`) at a list
of points. Binomial bases use the same kernel as the sampler
(:func:`samplers.model.binomial_block.fill_log_lik`: shared block quadrature for bases of equal
sizes, identical bases once). As in :func:`samplers.exact.surrogate.build`, a point
where some base's band lies in its tails first gets an upper bound
(:func:`samplers.model.binomial.log_tail_bound`); every bounded point within ``REFINE_GAP`` of the
largest exact value is then computed exactly, so a bound is left only far below the maximum.
Used by :mod:`bayes_dp.planning.core`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..model.binomial_block import fill_log_lik
from ..numerics.jit import JIT
from .posterior import _corr_log_lik
from .surrogate import REFINE_GAP

__all__ = ["log_lik_points"]


@njit(**JIT)
def _point(M, C, eps, s, s_all, ll, ll_c, bound_tails):
    """Return the summed log likelihood at (eps, s) and whether it is only an upper bound."""
    s_all[0] = s
    # k_only = -1 as a run-time value (a literal would compile fill_log_lik again)
    status = fill_log_lik(M.B, M.Q, M.b_k, eps, s_all, M.delta, s_all.shape[0] - 2, ll, bound_tails)
    if status == 0:
        return -math.inf, False
    tot = 0.0
    for b in range(M.b_grp.shape[0]):
        tot += M.b_mult[b] * ll[b]
    if C is not None:  # tau and rho fixed: z is not read
        tot += _corr_log_lik(s_all, M, C, eps, s_all, ll_c)
    return tot, status == 2


@njit(**JIT)
def log_lik_points(M, C, eps, s, out, stop):
    """Set ``out[p]`` to the summed log likelihood of the bases of M and C at (eps[p], s[p]).

    ``s`` is the strength of M's one strength variable (in [0, 1]); ``C``: the model's
    over-dispersed bases (:class:`samplers.exact.state.Corr`, tau and rho fixed) or None. Returns
    False as soon as ``stop[0]`` is nonzero (checked before every point), else True.
    """
    ll = np.empty(M.b_grp.shape[0])
    n_c = 0
    if C is not None:
        n_c = C.c_grp.shape[0]
    ll_c = np.empty(n_c)
    s_all = np.empty(1)
    bounded = np.zeros(out.shape[0], dtype=np.bool_)
    yes = stop.shape[0] > 0  # bound_tails as a run-time value
    top = -math.inf
    for p in range(out.shape[0]):
        if stop[0] != 0:
            return False
        out[p], bounded[p] = _point(M, C, eps[p], s[p], s_all, ll, ll_c, yes)
        if not bounded[p] and out[p] > top:
            top = out[p]
    # recompute exactly the bounds that might be within REFINE_GAP of the largest value
    while True:
        n_refined = 0
        for p in range(out.shape[0]):
            if bounded[p] and out[p] >= top - REFINE_GAP:
                if stop[0] != 0:
                    return False
                out[p], bounded[p] = _point(M, C, eps[p], s[p], s_all, ll, ll_c, not yes)
                top = max(top, out[p])
                n_refined += 1
        if n_refined == 0:
            return True
