"""The "guesses" likelihood of one-run audits: right guesses with the accuracy integrated out.

A row of a one-run audit (``LIK_GUESSES``): ``r`` guesses of fair coins, ``v`` of them right,
and the factor ``c`` of its coins (1 for membership bits, 2 for matched pairs of models, whose
coins are (2 eps, 2 delta)-DP). Given (eps, s), v ~ Binomial(r, p) with the accuracy p uniform
on [expit(c s eps), expit(c eps)]: between an s-strong guesser and the optimal guesser of an
eps-DP mechanism. In the error probability y = 1 - p the band is
[y_lo, y_hi] = [expit(-c eps), expit(-c s eps)], both <= 1/2 and computed from their logs, so
they keep their relative precision where the accuracy is close to 1. With e = r - v wrong
guesses and Y ~ Beta(e + 1, v + 1),

    P(v | r, eps, s) = C(r, v) / (y_hi - y_lo) * int_{y_lo}^{y_hi} y^e (1 - y)^v dy
                     = P[y_lo < Y < y_hi] / ((r + 1) (y_hi - y_lo)),

a probability of the count (binomial coefficient included). :func:`log_lik_row` computes it:

* a thin band (the log integrand f(y) = e log y + v log(1 - y) changes by at most
  :data:`THIN_SLOPE` across it and its curvature by at most :data:`THIN_CURV`; s = 1 and
  eps = 0 included, where the band is a point): the mean of the binomial pmf over the band by
  :data:`THIN_NODES`-point Gauss-Legendre, in log space;
* otherwise the difference of the regularised incomplete beta functions (SciPy's, through
  :mod:`samplers.numerics.special`) on the side where both are small (lower CDFs or upper
  tails), so that the subtraction keeps its digits; a tail below :data:`TAIL_TINY`, which the
  functions would return as a denormal or 0, is computed in log space from the continued
  fraction of I_x(a, b) (:func:`log_beta_tail`).

Numpy and numba only. The grid posterior of :func:`bayes_dp.estimate_one_run` has a
vectorised scipy form of the same likelihood (without the binomial coefficient); the tests hold
both to quadrature of ``scipy.stats.binom`` (``tests/reference/guesses.py``).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ..numerics.jit import JIT
from ..numerics.special import betainc, betaincc, lbeta
from ..numerics.special import log_expit as _log_expit

__all__ = [
    "Guesses",
    "THIN_CURV",
    "THIN_NODES",
    "THIN_SLOPE",
    "TAIL_TINY",
    "guess_rows",
    "guesses_log_lik",
    "fill_guesses_log_lik",
    "log_beta_tail",
    "log_lik_row",
]

#: A band is thin when the log integrand's slope times its width is at most THIN_SLOPE ...
THIN_SLOPE = 2.0
#: ... and its largest curvature times the width squared at most THIN_CURV.
THIN_CURV = 1.0
#: Gauss-Legendre nodes over a thin band (exact to ~1e-15 there: tests/samplers/test_guesses.py).
THIN_NODES = 12
#: Incomplete beta values below this are taken from the continued fraction, in log space.
TAIL_TINY = 1e-250
#: Iterations and tolerance of the continued fraction.
CF_MAX_ITER = 100_000
CF_TOL = 1e-16

_X, _W = np.polynomial.legendre.leggauss(THIN_NODES)
#: Nodes on [0, 1] and log of their weights (summing to 1): the mean over a band.
GL_T = 0.5 * (_X + 1.0)
GL_LOGW = np.log(0.5 * _W)

#: The guesses rows of a model, each distinct (group, r, v, c) once with its multiplicity:
#: r, v (floats), c (the coins' factor), lconst = log C(r, v), lr1 = log(r + 1), grp (group
#: index), k (strength variable), mult (multiplicity).
Guesses = namedtuple("Guesses", ["r", "v", "c", "lconst", "lr1", "grp", "k", "mult"])


def guess_rows(r, v, c, grp, k) -> tuple[Guesses, np.ndarray]:
    """Return the distinct guesses rows and, per input row, the index of its distinct row.

    Parameters
    ----------
    r, v : array_like of int (n,)
        Guesses made and right guesses of each row.
    c : array_like of float (n,)
        The factor of each row's coins (1.0 bits, 2.0 pairs).
    grp, k : array_like of int (n,)
        Each row's group and strength variable.
    """
    from math import lgamma

    r = np.asarray(r, dtype=np.int64).reshape(-1)
    v = np.asarray(v, dtype=np.int64).reshape(-1)
    c = np.asarray(c, dtype=np.float64).reshape(-1)
    grp = np.asarray(grp, dtype=np.int64).reshape(-1)
    k = np.asarray(k, dtype=np.int64).reshape(-1)
    if r.size:
        rows = np.stack([grp, r, v, np.round(c * 2).astype(np.int64), k], axis=1)
        uniq, inv, mult = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
        inv = inv.reshape(-1)
    else:
        uniq = np.zeros((0, 5), dtype=np.int64)
        inv = np.zeros(0, dtype=np.int64)
        mult = np.zeros(0)
    ur, uv = uniq[:, 1].astype(np.float64), uniq[:, 2].astype(np.float64)
    lconst = np.array(
        [
            lgamma(a + 1.0) - lgamma(b + 1.0) - lgamma(a - b + 1.0)
            for a, b in zip(ur, uv, strict=True)
        ],
        dtype=np.float64,
    )
    rows = Guesses(
        r=ur,
        v=uv,
        c=uniq[:, 3].astype(np.float64) / 2.0,
        lconst=lconst,
        lr1=np.log(ur + 1.0),
        grp=uniq[:, 0].copy(),
        k=uniq[:, 4].copy(),
        mult=mult.astype(np.float64),
    )
    return rows, inv


@njit(**JIT)
def log_beta_tail(a, b, x, log_x, log_1mx):
    """Return log I_x(a, b) from its continued fraction, for x below (a + 1) / (a + b + 2).

    ``log_x`` and ``log_1mx`` are log x and log(1 - x), given so that they keep their precision
    (x near 0 or 1). I_x(a, b) = x^a (1 - x)^b / (a B(a, b)) * K, K the continued fraction
    1 / (1 + d_1 / (1 + d_2 / (1 + ...))), d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)
    (a + 2m + 1)), d_{2m} = m (b - m) x / ((a + 2m - 1)(a + 2m)), evaluated by the modified
    Lentz method; it converges fast below the mean of Beta(a, b). Used where I_x(a, b) is too
    small for a double (the tails of :func:`log_lik_row`).
    """
    tiny = 1e-300
    qab = a + b
    qap = a + 1.0
    qam = a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    if abs(d) < tiny:
        d = tiny
    d = 1.0 / d
    h = d
    for m in range(1, CF_MAX_ITER):
        m2 = 2.0 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        if abs(d) < tiny:
            d = tiny
        c = 1.0 + aa / c
        if abs(c) < tiny:
            c = tiny
        d = 1.0 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        if abs(d) < tiny:
            d = tiny
        c = 1.0 + aa / c
        if abs(c) < tiny:
            c = tiny
        d = 1.0 / d
        step = d * c
        h *= step
        if abs(step - 1.0) < CF_TOL:
            break
    return a * log_x + b * log_1mx - lbeta(a, b) - math.log(a) + math.log(h)


@njit(**JIT)
def _log_cdf(a, b, y, ly, l1my):
    """Return log P[Y <= y] for Y ~ Beta(a, b), y <= 1/2 (ly, l1my: log y, log(1 - y))."""
    val = betainc(a, b, y)
    if val > TAIL_TINY or not y < (a + 1.0) / (a + b + 2.0):
        return math.log(val) if val > 0.0 else -math.inf
    return log_beta_tail(a, b, y, ly, l1my)


@njit(**JIT)
def _log_sf(a, b, y, ly, l1my):
    """Return log P[Y > y] for Y ~ Beta(a, b), y <= 1/2: I_{1 - y}(b, a) in the far tail."""
    val = betaincc(a, b, y)
    if val > TAIL_TINY or not 1.0 - y < (b + 1.0) / (a + b + 2.0):
        return math.log(val) if val > 0.0 else -math.inf
    return log_beta_tail(b, a, 1.0 - y, l1my, ly)


@njit(**JIT)
def _log1mexp(x):
    """Return log(1 - e^x) for x <= 0 (-inf at x = 0)."""
    if x > -0.6931471805599453:
        return math.log(-math.expm1(x))
    return math.log1p(-math.exp(x))


@njit(**JIT)
def log_lik_row(r, v, c, lconst, lr1, eps, s):
    """Return log P(v | r, eps, s) of one guesses row (see the module's docstring).

    Parameters
    ----------
    r, v : float
        Guesses made and right guesses (integers as floats, 0 <= v <= r).
    c : float
        The factor of the coins (1 bits, 2 pairs).
    lconst, lr1 : float
        log C(r, v) and log(r + 1).
    eps, s : float
        eps >= 0 and the strength 0 <= s <= 1.
    """
    if r == 0.0:
        return 0.0
    e = r - v
    x1 = c * eps
    x2 = c * s * eps
    d = c * eps * (1.0 - s)  # x1 - x2, exact where s is close to 1
    ly_lo = _log_expit(-x1)
    l1my_lo = _log_expit(x1)
    ly_hi = _log_expit(-x2)
    l1my_hi = _log_expit(x2)
    y_lo = math.exp(ly_lo)
    y_hi = math.exp(ly_hi)
    # width y_hi - y_lo = expit(x1) expit(-x2) (1 - e^-d)
    if d > 0.0:
        log_w = l1my_lo + ly_hi + _log1mexp(-d)
        w = math.exp(log_w)
    else:
        log_w = -math.inf
        w = 0.0
    # slope and curvature of f(y) = e log y + v log(1 - y) over the band (f' decreases)
    slope_lo = (e / y_lo if e > 0.0 else 0.0) - v / (1.0 - y_lo)
    slope_hi = (e / y_hi if e > 0.0 else 0.0) - v / (1.0 - y_hi)
    slope = max(abs(slope_lo), abs(slope_hi))
    curv = (e / (y_lo * y_lo) if e > 0.0 else 0.0) + v / ((1.0 - y_hi) * (1.0 - y_hi))
    if w == 0.0 or (w * slope <= THIN_SLOPE and w * w * curv <= THIN_CURV):
        # the mean of the pmf over a thin band (a point when w = 0)
        top = -math.inf
        vals = np.empty(THIN_NODES)
        for i in range(THIN_NODES):
            yi = y_lo + GL_T[i] * w
            ly = math.log(yi) if yi > 0.0 else ly_lo
            f = (e * ly if e > 0.0 else 0.0) + v * math.log1p(-yi)
            vals[i] = GL_LOGW[i] + f
            top = max(top, vals[i])
        if top == -math.inf:
            return -math.inf
        acc = 0.0
        for i in range(THIN_NODES):
            acc += math.exp(vals[i] - top)
        return lconst + top + math.log(acc)
    a = e + 1.0
    b = v + 1.0
    lf_hi = _log_cdf(a, b, y_hi, ly_hi, l1my_hi)
    ls_lo = _log_sf(a, b, y_lo, ly_lo, l1my_lo)
    if lf_hi <= ls_lo:
        lf_lo = _log_cdf(a, b, y_lo, ly_lo, l1my_lo)
        lm = lf_hi + _log1mexp(min(lf_lo - lf_hi, 0.0))
    else:
        ls_hi = _log_sf(a, b, y_hi, ly_hi, l1my_hi)
        lm = ls_lo + _log1mexp(min(ls_hi - ls_lo, 0.0))
    return lm - lr1 - log_w


@njit(**JIT)
def guesses_log_lik(G, eps, s, k_only):
    """Return the sum over the guesses rows of G (with multiplicity) of their log likelihood.

    ``s`` holds the strength of every strength variable; only the rows of strength variable
    ``k_only`` when it is >= 0. -inf as soon as a row has likelihood zero.
    """
    tot = 0.0
    for i in range(G.r.shape[0]):
        k = G.k[i]
        if k_only >= 0 and k != k_only:
            continue
        v = log_lik_row(G.r[i], G.v[i], G.c[i], G.lconst[i], G.lr1[i], eps, s[k])
        if not v > -math.inf:
            return -math.inf
        tot += G.mult[i] * v
    return tot


@njit(**JIT)
def fill_guesses_log_lik(G, eps, s, ll):
    """Set ll[i] to the log likelihood of guesses row i of G (pointwise; no multiplicity)."""
    for i in range(G.r.shape[0]):
        ll[i] = log_lik_row(G.r[i], G.v[i], G.c[i], G.lconst[i], G.lr1[i], eps, s[G.k[i]])
