"""Geometry of the privacy region, for the kernels (numpy and numba only).

``R(t, d)`` is the set of (FPR, FNR) pairs (x, y) in the unit square allowed by (t, d)-DP
(paper, Theorem 1). Its complement is two corners: the lower-left corner
``C(t, d) = {x + e^t y < 1 - d} u {e^t x + y < 1 - d}`` and its point reflection through
(1/2, 1/2). In the half ``y <= x`` of the square, ``C(t, d) = {y < psi(x)}`` with

    psi(x) = min(x, max(0, e^-t (1 - d - x))),

a diagonal piece up to the kink ``x* = (1 - d) / (1 + e^t)`` and then the shallow boundary line
(slope -e^-t); the half ``y > x`` is the mirror image. The band of the model is
``R_s = R(eps, delta) minus R(s eps, s delta)``: in each half of each corner it lies between
``psi`` of (eps, delta) (below) and ``psi`` of (s eps, s delta) (above).

``Band`` holds both boundaries of a parameter value; ``log_area_rate`` is
``log(|R_s| / (1 - s))``, finite and stable for s -> 1 (the paper's closed form loses all
digits there), so the likelihood of s = 1 is the ratio of two derivatives in s.
"""

from __future__ import annotations

import math
from collections import namedtuple

from numba import njit

from ..numerics.jit import JIT

__all__ = ["Band", "make_band", "psi", "log_area_rate", "log_area", "log_area_paper"]


#: The two boundaries of the band R_s(eps, delta): index 1 is R(eps, delta) (outer region,
#: smaller corner), index 2 is R(s eps, s delta). ``e`` is e^-t, ``E`` is e^t, ``xs`` the kink.
#: ``r = 1 - s``; for r = 0 the band is the boundary curve of R(eps, delta) itself.
Band = namedtuple(
    "Band", ["eps", "delta", "r", "t1", "c1", "e1", "E1", "xs1", "t2", "c2", "e2", "E2", "xs2"]
)


@njit(**JIT)
def _logistic_neg(t):
    """1 / (1 + e^t) without overflow."""
    if t > 0.0:
        q = math.exp(-t)
        return q / (1.0 + q)
    return 1.0 / (1.0 + math.exp(t))


@njit(**JIT)
def make_band(eps, s, delta):
    """Make the band of (eps, s, delta), 0 <= s <= 1."""
    t1 = eps
    c1 = 1.0 - delta
    t2 = s * eps
    c2 = 1.0 - s * delta
    return Band(
        eps,
        delta,
        1.0 - s,
        t1,
        c1,
        math.exp(-t1),
        math.exp(t1),
        c1 * _logistic_neg(t1),
        t2,
        c2,
        math.exp(-t2),
        math.exp(t2),
        c2 * _logistic_neg(t2),
    )


@njit(**JIT)
def psi(u, c, e, xs):
    """Upper edge of the corner C in the half y <= x at abscissa u (see the module text)."""
    if u <= xs:
        return u
    v = e * (c - u)
    return v if v > 0.0 else 0.0


@njit(**JIT)
def log_area_rate(eps, s, delta):
    """log(|R_s(eps, delta)| / (1 - s)) for 0 <= s <= 1 (the limit at s = 1).

    With A(s) = (1 - s delta)^2 / (1 + e^(s eps)), |R_s| = 2 (A(s) - A(1)) and

        A(s) - A(1) = delta (1 - s)(2 - delta (1 + s)) / (1 + e^(s eps))
                      + (1 - delta)^2 / (1 + e^(s eps)) / (1 + e^-eps) * (1 - e^(-eps (1 - s))),

    every term non-negative, and (1 - e^(-eps r)) / r -> eps as r = 1 - s -> 0.
    """
    r = 1.0 - s
    if r > 0.0:
        ex = -math.expm1(-eps * r) / r
    else:
        ex = eps
    lead = _logistic_neg(s * eps)
    v = delta * (2.0 - delta * (1.0 + s)) + (1.0 - delta) ** 2 * _logistic_neg(-eps) * ex
    v = 2.0 * lead * v
    if v > 0.0:
        return math.log(v)
    return -math.inf


@njit(**JIT)
def log_area(eps, s, delta):
    """Return log |R_s(eps, delta)| (-inf at s = 1)."""
    r = 1.0 - s
    if not r > 0.0:
        return -math.inf
    return log_area_rate(eps, s, delta) + math.log(r)


# Not merged with log_area above: both are log |R_s(eps, delta)|, but that one is
# log(|R_s| / (1 - s)) + log(1 - s) (exact as s -> 1) and this is the paper's closed form; they
# differ in the last bits (on 3/4 of random (eps, s, delta), by up to ~6e-12 relative), and
# MHAAR's acceptance ratios and so its draws depend on these bits.
@njit(**JIT)
def log_area_paper(eps, s, delta):
    """Return log |R_s(eps, delta)| by the paper's closed form (below eq. 3), as MHAAR uses it.

    Loses all digits as s -> 1; :func:`log_area` does not. MHAAR keeps this one so that its
    draws stay as they were.
    """
    v = 2.0 * (
        (1.0 - s * delta) ** 2 / (1.0 + math.exp(s * eps))
        - (1.0 - delta) ** 2 / (1.0 + math.exp(eps))
    )
    if v > 0.0:
        return math.log(v)
    return -math.inf
