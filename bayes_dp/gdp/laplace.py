"""The binned-score likelihood of one GDP score group, its cut points integrated out (Laplace).

Under the equal-variance binormal model the binned out- and in-counts are multinomial with cell
probabilities Phi differences at latent cut points t; :func:`laplace_log_marginal` integrates
t out by Laplace's method (Newton steps on the tridiagonal Hessian). ``docs/validation/gdp.md``
section 1
derives it; :mod:`bayes_dp.gdp.core` builds the posterior from it.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

#: Weight of the cut points' prior prod phi(t_j) (1) or a flat prior on them (0).
CUT_PRIOR = 0.0


#: Stand-in for an infinite cut point (its normal density is exactly 0 in double precision).
_BIG = 1e4


_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


# -- the binned binormal likelihood, cut points integrated out by Laplace's method ------------
def _log_mass(lo, hi):
    """``log(Phi(hi) - Phi(lo))`` elementwise (``-inf`` where ``lo >= hi``)."""
    upper = lo > 0  # subtract on the side of the mean away from the interval
    a = np.where(upper, -hi, lo)
    b = np.where(upper, -lo, hi)
    la, lb = special.log_ndtr(a), special.log_ndtr(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = lb + np.log(-np.expm1(la - lb))
    return np.where(lo < hi, out, -np.inf)


def _bins(t):
    """Lower and upper ends of the K bins for cut points ``t`` (G, K - 1)."""
    big = np.full((t.shape[0], 1), _BIG)
    return np.concatenate([-big, t], axis=1), np.concatenate([t, big], axis=1)


def _objective(t, m, a, b):
    """Log posterior of the cut points (up to a constant), with its gradient and Hessian.

    ``t`` (G, J) cut points, ``m`` (G,) in-shift, ``a``/``b`` (K,) out/in counts; the prior of
    the cut points is flat (``CUT_PRIOR = 0``) or prod phi(t_j) (``CUT_PRIOR = 1``: Phi(t) the
    order statistics of J uniforms).
    """
    lo, hi = _bins(t)
    f = -0.5 * CUT_PRIOR * np.sum(t * t, axis=1)
    g = -CUT_PRIOR * t
    d0 = np.full_like(t, -CUT_PRIOR)  # diagonal of the Hessian
    d1 = np.zeros_like(t[:, :-1])  # first off-diagonal
    for w, shift in ((a, 0.0), (b, m[:, None])):
        xl, xh = lo - shift, hi - shift
        lp = _log_mass(xl, xh)
        f = f + np.sum(w * np.where(w > 0, lp, 0.0), axis=1)  # no 0 * -inf
        with np.errstate(over="ignore", invalid="ignore"):
            rl = np.where(w > 0, np.exp(-0.5 * xl * xl - _LOG_SQRT_2PI - lp), 0.0)
            rh = np.where(w > 0, np.exp(-0.5 * xh * xh - _LOG_SQRT_2PI - lp), 0.0)
        # cut point j is the upper end of bin j and the lower end of bin j + 1 (NaN where the
        # cut points are out of order: f is -inf there and the step is refused)
        with np.errstate(invalid="ignore", over="ignore"):
            g += w[:-1] * rh[:, :-1] - w[1:] * rl[:, 1:]
            d0 += w[:-1] * (-xh[:, :-1] * rh[:, :-1] - rh[:, :-1] ** 2)
            d0 += w[1:] * (xl[:, 1:] * rl[:, 1:] - rl[:, 1:] ** 2)
            d1 += w[1:-1] * rh[:, 1:-1] * rl[:, 1:-1]
    f = np.where(np.isfinite(f), f, -np.inf)
    return f, g, d0, d1


def _hessian(d0, d1):
    j = d0.shape[1]
    h = np.zeros((d0.shape[0], j, j))
    idx = np.arange(j)
    h[:, idx, idx] = d0
    h[:, idx[:-1], idx[1:]] = d1
    h[:, idx[1:], idx[:-1]] = d1
    return h


def _start(a, b):
    """Increasing starting cut points: probits of the smoothed cumulative out-fractions."""
    k = a.size
    u = (np.cumsum(a)[:-1] + 0.5 * np.arange(1, k)) / (a.sum() + 0.5 * k)
    return special.ndtri(u)


def laplace_log_marginal(m, a, b, *, tol: float = 1e-8, max_iter: int = 200):
    """Log marginal likelihood of binned counts at in-shifts ``m``, cut points integrated out.

    Newton's method with backtracking finds the mode of the (strictly concave) log posterior
    of the cut points (flat prior) at every ``m`` at once; Laplace's method then gives
    ``f(t_hat) + J/2 log(2 pi) - 1/2 log det(-H)`` (up to a constant that does not depend on
    ``m``).

    Parameters
    ----------
    m : array_like of float
        In-shifts (latent mean of the in-scores), >= 0.
    a, b : array_like of float
        Out- and in-counts per bin (no bin empty in both).
    tol : float
        Stop when every gradient entry is below ``tol`` times the number of scores.
    max_iter : int
        Newton steps at most.

    Returns
    -------
    (log_z, t_hat, neg_hess)
        ``log_z`` (G,), the modes ``t_hat`` (G, J) and ``-H`` at them (G, J, J).
    """
    m = np.atleast_1d(np.asarray(m, dtype=np.float64))
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    t = np.tile(_start(a, b), (m.size, 1))
    n = a.sum() + b.sum()
    f, g, d0, d1 = _objective(t, m, a, b)
    for _ in range(max_iter):
        active = np.max(np.abs(g), axis=1) > tol * n
        if not active.any():
            break
        h = _hessian(d0[active], d1[active])
        step = np.linalg.solve(-h, g[active][..., None])[..., 0]
        ta, fa, ma = t[active], f[active], m[active]
        slope = np.sum(g[active] * step, axis=1)
        lam = np.ones(ta.shape[0])
        new_t = ta + step
        new = _objective(new_t, ma, a, b)
        for _ in range(60):
            bad = ~(new[0] >= fa + 1e-4 * lam * slope)
            if not bad.any():
                break
            lam[bad] *= 0.5
            new_t[bad] = ta[bad] + lam[bad, None] * step[bad]
            part = _objective(new_t[bad], ma[bad], a, b)
            for arr, p in zip(new, part, strict=True):
                arr[bad] = p
        t[active] = new_t
        for arr, p in zip((f, g, d0, d1), new, strict=True):
            arr[active] = p
    neg_h = -_hessian(d0, d1)
    sign, logdet = np.linalg.slogdet(neg_h)
    logdet = np.where(sign > 0, logdet, np.inf)
    log_z = f + 0.5 * t.shape[1] * math.log(2.0 * math.pi) - 0.5 * logdet
    return log_z, t, neg_h
