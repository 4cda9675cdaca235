"""Gauss-Legendre panels of the quadrature reference, and the s -> 1 boundary line integral.

The panels' breakpoints are the kinks of the band's edges and quantiles of the data densities
(``tests/reference/__init__.py``).  ``_log_boundary_mass`` works for any base that has
``log_joint``, ``breakpoints``, ``qx`` and ``reflected`` (the binomial and the bivariate normal
bases).  numpy and scipy only: no code shared with ``samplers/``.
"""

from __future__ import annotations

import contextlib

import numpy as np

from tests.reference.geometry import _EXP_CAP, _h, _params

_GL_M = 8  # Gauss-Legendre points per panel (10 points agree to 1e-11 in log L)
_GL_Z, _GL_W = np.polynomial.legendre.leggauss(_GL_M)


@contextlib.contextmanager
def _coarse_quadrature(m=4):
    """Fewer Gauss-Legendre points per panel (for the passes that only locate windows)."""
    global _GL_Z, _GL_W
    saved = _GL_Z, _GL_W
    _GL_Z, _GL_W = np.polynomial.legendre.leggauss(m)
    try:
        yield
    finally:
        _GL_Z, _GL_W = saved


def _panels(bps, qx):
    """Sorted panel ends in [0, 1] from breakpoints (n, k) plus the fixed x-quantiles qx."""
    n = bps.shape[0]
    allb = np.concatenate(
        [bps, np.broadcast_to(qx, (n, qx.size)), np.zeros((n, 1)), np.ones((n, 1))], axis=1
    )
    allb = np.where(np.isfinite(allb), allb, 0.0)
    return np.sort(np.clip(allb, 0.0, 1.0), axis=1)


def _nodes(bps, qx):
    """Gauss-Legendre nodes/weights on panels from breakpoints (n, k) plus fixed qx."""
    allb = _panels(bps, qx)
    lo, hi = allb[:, :-1, None], allb[:, 1:, None]
    half = 0.5 * (hi - lo)
    x = lo + half * (_GL_Z + 1.0)
    w = half * _GL_W
    return x, w


def _logsum(terms, w):
    """log(sum(w * exp(terms))) over the last two axes, robust to -inf."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lt = np.where(w > 0, terms + np.log(np.where(w > 0, w, 1.0)), -np.inf)
        lt = np.where(np.isnan(lt), -np.inf, lt)
        m = lt.max(axis=(1, 2))
        mm = np.where(np.isfinite(m), m, 0.0)
        tot = np.exp(lt - mm[:, None, None]).sum(axis=(1, 2))
        return np.where(np.isfinite(m), mm + np.log(tot), -np.inf)


def _log_boundary_mass(base, eps, delta, chunk=256, reflect=True):
    """log of lim_{s -> 1} (Beta-product mass of R_s(eps, delta)) / (1 - s).

    The band mass is C(s eps, s delta) - C(eps, delta), C the mass of the two corners outside
    R.  A lower-left corner is {y < h(x)} with h(x) = tl - c x for x < k = tl / (1 + c) and
    h(x) = (tl - x) / c for k < x < tl, so (Leibniz; h is continuous, no end terms)

        -d/ds C(s eps, s delta) at s = 1 = int_0^tl f_x(x) f_y(h(x)) w(x) dx,
        w(x) = delta + eps c x             (x < k:  -dh/ds on the steep piece)
        w(x) = (delta + eps (tl - x)) / c  (k < x < tl: on the flat piece),

    a line integral of the data density along the boundary of R(eps, delta), weighted by the
    speed at which the boundary moves with s.  The upper-right corner is the lower-left one of
    the reflected base (left out with ``reflect=False``: the lower-left half only).
    Elementary integrand (``base.log_joint``: Beta densities, or eq. 7).
    """
    eps = np.atleast_1d(np.asarray(eps, dtype=float))
    parts = []
    for b in (base, base.reflected()) if reflect else (base,):
        out = np.empty(eps.size)
        for i0 in range(0, eps.size, chunk):
            e = eps[i0 : i0 + chunk]
            c, tl = _params(e, delta)
            x, w = _nodes(b.breakpoints(c, tl, upper=False), b.qx)
            c3, tl3 = c[:, :, None], tl[:, :, None]
            e3 = np.minimum(e, _EXP_CAP)[:, None, None]
            h = _h(x, c3, tl3)
            with np.errstate(divide="ignore", invalid="ignore"):
                lw1 = np.logaddexp(np.log(delta), np.log(e3) + e3 + np.log(x))
                lw2 = np.log(delta + e3 * (tl3 - x)) - e3
                lwt = np.where(x <= tl3 / (1.0 + c3), lw1, np.where(x < tl3, lw2, -np.inf))
                terms = b.log_joint(x, h) + lwt
            out[i0 : i0 + chunk] = _logsum(np.where(np.isnan(terms), -np.inf, terms), w)
        parts.append(out)
    return np.logaddexp(parts[0], parts[1]) if reflect else parts[0]
