"""Exact marginal likelihood of one binomial challenge base (numpy and numba only).

For a base with X false positives of N0 and Y false negatives of N1,

    P(X, Y | eps, s) = 1 / |R_s| * integral over R_s of Binom(X | N0, a) Binom(Y | N1, b) da db
                     = M / (|R_s| (N0 + 1)(N1 + 1)),

where M is the mass of the band R_s under the product of the densities Beta(a; X+1, N0-X+1)
and Beta(b; Y+1, N1-Y+1) (``Binom(X | N, a) = Beta(a; X+1, N-X+1) / (N+1)``).

How M is computed (see :mod:`samplers.region` for the geometry). The band has four pieces: the
two halves (y <= x and y > x) of the lower-left corner and of the upper-right one. On the half
y <= x of the lower-left corner, with u the FPR and the FNR the inner variable,

    M_half = integral du  p_X(u) [F_Y(psi_2(u)) - F_Y(psi_1(u))],

with F_Y the Beta distribution function (SciPy's ``betainc``/``betaincc``, whichever tail is
smaller), psi_1, psi_2 the edges of the band. The other half swaps the roles of X and Y; the
upper-right corner is the lower-left one of the reflected base (X -> N0 - X, Y -> N1 - Y).
Because psi has slope 1 or e^-t <= 1, the inner factor never varies faster in u than the inner
density does in its own variable, so a composite Gauss-Legendre rule in u converges fast once
the u-axis is cut at

- the window of p_X (its 10^-20 and 1 - 10^-20 quantiles; mass outside is dropped: the error is
  at most 2e-20 in M, i.e. negligible in log M wherever M is not itself astronomically small),
- the kinks of psi_1 and psi_2, and the abscissae where each psi enters and leaves the window
  of the inner density (outside it F_Y is 0 or 1 to 1e-20 and pieces where both edges are below
  or both above are skipped),

with nodes spaced at most 1 / NODE_DENSITY local scales apart, where the local scale of a piece
is the smallest of the outer sd and the inner sd over the slope of the edge, each divided by
the distance (in sds, at least 1) from the density's mean to the piece. The difference
F(v2) - F(v1) is taken from the smaller tail, or, when v2 - v1 is below a twentieth of the
density's local scale, by 4-point Gauss-Legendre on the density (no cancellation as s -> 1).

s = 1: the band is the boundary curve, M and |R_s| vanish like (1 - s) and the likelihood is the
ratio of their derivatives: dM / d(1 - s) = integral over the line piece of
p_X(u) f_Y(psi(u)) e^-eps (eps (1 - delta - u) + delta) du (the diagonal piece does not move),
and :func:`samplers.region.log_area_rate`.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ._special import betainc, betaincc, lbeta, xlogy
from .region import log_area_rate, make_band, psi

__all__ = [
    "BinomialBases",
    "binomial_bases",
    "log_lik",
    "log_band_mass",
    "WINDOW_TAIL",
    "NODE_DENSITY",
]

_JIT = {"cache": True, "nogil": True, "error_model": "numpy"}

#: Tail mass of each Beta density left outside its integration window (fast pass).
WINDOW_TAIL = 1e-20
#: Window of the second pass, taken when the fast pass finds a band mass below TAIL_PASS_BELOW:
#: the band then lies in the densities' tails, where the fast window would cut off the mass.
WINDOW_TAIL_WIDE = 1e-300
TAIL_PASS_BELOW = 1e-12
#: Gauss-Legendre nodes per local scale of the integrand (plus NODES_MIN per piece).
NODE_DENSITY = 1.6
NODES_MIN = 4
#: Largest Gauss-Legendre rule; longer pieces are split into panels.
NODES_MAX = 24
#: Below this fraction of the local scale, F(v2) - F(v1) is integrated from the density.
SMALL_STEP = 0.05

_GL4_X, _GL4_W = np.polynomial.legendre.leggauss(4)


def gauss_legendre_table(n_max: int) -> tuple[np.ndarray, np.ndarray]:
    """Rules on [-1, 1]: row n of (nodes, weights) holds the n-point Gauss-Legendre rule."""
    X = np.zeros((n_max + 1, n_max))
    W = np.zeros((n_max + 1, n_max))
    for n in range(1, n_max + 1):
        X[n, :n], W[n, :n] = np.polynomial.legendre.leggauss(n)
    return X, W


#: One Beta(a, b) density: log B(a, b), mean, sd and the integration window [lo, hi].
Dens = namedtuple("Dens", ["a", "b", "lb", "mean", "sd", "lo", "hi"])

#: Per-base arrays of the binomial bases (columns named, one row per base), plus the
#: Gauss-Legendre table. x/n0: false positives of negatives; y/n1: false negatives of positives;
#: lo*/hi*: windows of Beta(x+1, n0-x+1) and Beta(y+1, n1-y+1); lconst: -log((n0+1)(n1+1)).
BinomialBases = namedtuple(
    "BinomialBases",
    ["x", "n0", "y", "n1", "win0", "win1", "lconst", "GX", "GW"],
)


def _window(a: np.ndarray, b: np.ndarray, tail: float) -> tuple[np.ndarray, np.ndarray]:
    """[tail, 1 - tail] quantiles of Beta(a, b), by bisection on ``betainc``.

    Bisection (60 halvings of the bracket per side) keeps this module free of SciPy's Python
    API; the betainc it uses is the same compiled function as everywhere else.
    """
    lo = np.empty(a.size)
    hi = np.empty(a.size)
    for k in range(a.size):
        lo[k] = _quantile(a[k], b[k], tail, False)
        hi[k] = _quantile(a[k], b[k], tail, True)
    return lo, hi


@njit(**_JIT)
def _quantile(a, b, p, upper):
    """v with I_v(a, b) = p (upper=False) or 1 - I_v(a, b) = p (upper=True), by bisection."""
    lo_v, hi_v = 0.0, 1.0
    for _ in range(200):
        mid = 0.5 * (lo_v + hi_v)
        f = betaincc(a, b, mid) if upper else betainc(a, b, mid)
        if upper:
            if f > p:
                lo_v = mid
            else:
                hi_v = mid
        elif f < p:
            lo_v = mid
        else:
            hi_v = mid
        if hi_v - lo_v <= 1e-17 + 1e-15 * mid:
            break
    return lo_v if upper is False else hi_v


def binomial_bases(fp, n_neg, fn, n_pos) -> BinomialBases:
    """Per-base arrays for :func:`log_lik` (validated integer counts in)."""
    x, n0, y, n1 = (np.asarray(v, dtype=np.float64) for v in (fp, n_neg, fn, n_pos))
    wins = []
    for k, n in ((x, n0), (y, n1)):
        w = np.empty((x.size, 4))
        w[:, 0], w[:, 1] = _window(k + 1.0, n - k + 1.0, WINDOW_TAIL)
        w[:, 2], w[:, 3] = _window(k + 1.0, n - k + 1.0, WINDOW_TAIL_WIDE)
        wins.append(w)
    GX, GW = gauss_legendre_table(NODES_MAX)
    return BinomialBases(x, n0, y, n1, wins[0], wins[1], -np.log((n0 + 1.0) * (n1 + 1.0)), GX, GW)


@njit(**_JIT)
def _dens(a, b, lo, hi):
    m = a / (a + b)
    sd = math.sqrt(a * b / ((a + b) * (a + b) * (a + b + 1.0)))
    return Dens(a, b, lbeta(a, b), m, sd, lo, hi)


@njit(**_JIT)
def _logpdf(d, v):
    if v <= 0.0 or v >= 1.0:
        if (v <= 0.0 and d.a == 1.0) or (v >= 1.0 and d.b == 1.0):
            return -d.lb
        return -math.inf
    return xlogy(d.a - 1.0, v) + (d.b - 1.0) * math.log1p(-v) - d.lb


@njit(**_JIT)
def _local_scale(d, v):
    """Scale on which the density varies at v: 1 / (|log-slope| + sqrt(|log-curvature|))."""
    v = min(max(v, 1e-300), 1.0 - 1e-16)
    g1 = (d.a - 1.0) / v - (d.b - 1.0) / (1.0 - v)
    g2 = (d.a - 1.0) / (v * v) + (d.b - 1.0) / ((1.0 - v) * (1.0 - v))
    return 1.0 / (abs(g1) + math.sqrt(g2) + 1e-300)


@njit(**_JIT)
def _cdf_diff(d, v2, v1):
    """F(v2) - F(v1) for the Beta density d, v1 <= v2, without cancellation."""
    v1 = min(max(v1, 0.0), 1.0)
    v2 = min(max(v2, 0.0), 1.0)
    if not v2 > v1:
        return 0.0
    if v2 <= d.lo or v1 >= d.hi:
        return 0.0
    h = v2 - v1
    mid = 0.5 * (v1 + v2)
    if h < SMALL_STEP * _local_scale(d, mid):
        acc = 0.0
        for k in range(4):
            lp = _logpdf(d, mid + 0.5 * h * _GL4_X[k])
            acc += _GL4_W[k] * math.exp(lp)
        return 0.5 * h * acc
    if v2 <= d.mean:
        return betainc(d.a, d.b, v2) - betainc(d.a, d.b, v1)
    if v1 >= d.mean:
        return betaincc(d.a, d.b, v1) - betaincc(d.a, d.b, v2)
    return 1.0 - betainc(d.a, d.b, v1) - betaincc(d.a, d.b, v2)


@njit(**_JIT)
def _z_gap(d, v0, v1):
    """Distance (in sds, at least 1) from the density's mean to the interval [v0, v1]."""
    lo_v = min(v0, v1)
    hi_v = max(v0, v1)
    if lo_v <= d.mean <= hi_v:
        return 1.0
    gap = min(abs(lo_v - d.mean), abs(hi_v - d.mean)) / d.sd
    return max(1.0, gap)


@njit(**_JIT)
def _sort_small(v, n):
    for i in range(1, n):
        key = v[i]
        j = i - 1
        while j >= 0 and v[j] > key:
            v[j + 1] = v[j]
            j -= 1
        v[j + 1] = key


@njit(**_JIT)
def _edge_scale(inner, v0, v1, slope):
    """Scale in u of F_inner(psi(u)) on a piece where psi runs from v0 to v1 with this slope."""
    if slope <= 0.0:
        return math.inf
    if max(v0, v1) <= inner.lo or min(v0, v1) >= inner.hi:
        return math.inf
    return inner.sd / (slope * _z_gap(inner, v0, v1))


@njit(**_JIT)
def _slope(u, c, e, xs):
    if u <= xs:
        return 1.0
    return e if u < c else 0.0


@njit(**_JIT)
def _lse(m, acc, term):
    """Add e^term to the running sum acc e^m; returns the new (m, acc)."""
    if term > m:
        return term, acc * math.exp(m - term) + 1.0
    return m, acc + math.exp(term - m)


@njit(**_JIT)
def _half_mass(outer, inner, bd, GX, GW, rate):
    """log mass of one half of the lower-left band (``rate``: of its derivative in 1 - s at
    s = 1), accumulated in log space."""
    m = -math.inf
    tot = 0.0
    u_lo = max(outer.lo, 0.0)
    u_hi = min(outer.hi, bd.c1 if rate else bd.c2)
    if not u_hi > u_lo:
        return -math.inf
    bp = np.empty(13)
    bp[0] = u_lo
    bp[1] = u_hi
    bp[2] = bd.xs1
    bp[3] = bd.xs2
    bp[4] = bd.c1
    bp[5] = inner.lo
    bp[6] = inner.hi
    nb = 7
    for k in range(2):
        c = bd.c1 if k == 0 else bd.c2
        E = bd.E1 if k == 0 else bd.E2
        for v in (inner.lo, inner.hi):
            bp[nb] = c - v * E if v > 0.0 else c
            nb += 1
    for k in range(nb):
        bp[k] = min(max(bp[k], u_lo), u_hi)
    _sort_small(bp, nb)
    for p in range(nb - 1):
        ua = bp[p]
        ub = bp[p + 1]
        if not ub > ua:
            continue
        um = 0.5 * (ua + ub)
        if rate:
            # only the line piece of the outer edge moves with s
            if um <= bd.xs1 or um >= bd.c1:
                continue
            pa = psi(ua, bd.c1, bd.e1, bd.xs1)
            pb = psi(ub, bd.c1, bd.e1, bd.xs1)
            if max(pa, pb) <= inner.lo or min(pa, pb) >= inner.hi:
                continue
            sc = _edge_scale(inner, pa, pb, bd.e1)
        else:
            p1a = psi(ua, bd.c1, bd.e1, bd.xs1)
            p1b = psi(ub, bd.c1, bd.e1, bd.xs1)
            p2a = psi(ua, bd.c2, bd.e2, bd.xs2)
            p2b = psi(ub, bd.c2, bd.e2, bd.xs2)
            if max(p2a, p2b) <= inner.lo or min(p1a, p1b) >= inner.hi:
                continue
            sc = min(
                _edge_scale(inner, p1a, p1b, _slope(um, bd.c1, bd.e1, bd.xs1)),
                _edge_scale(inner, p2a, p2b, _slope(um, bd.c2, bd.e2, bd.xs2)),
            )
        sc = min(sc, outer.sd / _z_gap(outer, ua, ub))
        need = NODES_MIN + NODE_DENSITY * (ub - ua) / sc
        n_panels = int(math.ceil(need / NODES_MAX))
        n = int(min(NODES_MAX, math.ceil(need / n_panels)))
        w = (ub - ua) / n_panels
        for q in range(n_panels):
            a0 = ua + q * w
            half = 0.5 * w
            centre = a0 + half
            lh = math.log(half)
            for j in range(n):
                u = centre + half * GX[n, j]
                lp = _logpdf(outer, u)
                if lp == -math.inf:
                    continue
                if rate:
                    v = psi(u, bd.c1, bd.e1, bd.xs1)
                    lf = _logpdf(inner, v)
                    speed = bd.e1 * (bd.eps * (bd.c1 - u) + bd.delta)
                    if lf > -math.inf and speed > 0.0:
                        term = lh + math.log(GW[n, j] * speed) + lp + lf
                        m, tot = _lse(m, tot, term)
                else:
                    v1 = psi(u, bd.c1, bd.e1, bd.xs1)
                    v2 = psi(u, bd.c2, bd.e2, bd.xs2)
                    dd = _cdf_diff(inner, v2, v1)
                    if dd > 0.0:
                        m, tot = _lse(m, tot, lh + math.log(GW[n, j] * dd) + lp)
    if tot > 0.0:
        return m + math.log(tot)
    return -math.inf


@njit(**_JIT)
def _log_band_mass_window(x, n0, y, n1, lo0, hi0, lo1, hi1, bd, GX, GW, rate):
    m = -math.inf
    tot = 0.0
    # lower-left corner (inside x + y <= 1), then the reflected base for the upper-right one
    for refl in range(2):
        if refl == 0:
            if lo0 + lo1 >= 1.0:
                continue
            dx = _dens(x + 1.0, n0 - x + 1.0, lo0, hi0)
            dy = _dens(y + 1.0, n1 - y + 1.0, lo1, hi1)
        else:
            if hi0 + hi1 <= 1.0:
                continue
            dx = _dens(n0 - x + 1.0, x + 1.0, 1.0 - hi0, 1.0 - lo0)
            dy = _dens(n1 - y + 1.0, y + 1.0, 1.0 - hi1, 1.0 - lo1)
        for half in range(2):
            if half == 0:
                lh = _half_mass(dx, dy, bd, GX, GW, rate)
            else:
                lh = _half_mass(dy, dx, bd, GX, GW, rate)
            if lh > -math.inf:
                m, tot = _lse(m, tot, lh)
    if tot > 0.0:
        return m + math.log(tot)
    return -math.inf


@njit(**_JIT)
def log_band_mass(x, n0, y, n1, win0, win1, eps, s, delta, GX, GW):
    """log of the band mass M (or of dM / d(1 - s) at s = 1) of one base.

    ``win0``/``win1``: the (fast lo, fast hi, wide lo, wide hi) windows of the two densities.
    The fast pass integrates over the fast windows; when the band is so far from the data that
    the mass found there is below TAIL_PASS_BELOW (the dropped 2e-20 would matter), the wide
    pass integrates again over windows that drop only 1e-300 of each density.
    """
    bd = make_band(eps, s, delta)
    rate = not bd.r > 0.0
    lm = _log_band_mass_window(
        x, n0, y, n1, win0[0], win0[1], win1[0], win1[1], bd, GX, GW, rate
    )
    # the threshold compares a mass (a rate at s = 1: scale it by the band's thinness)
    thr = math.log(TAIL_PASS_BELOW)
    if rate:
        thr -= math.log(max(bd.eps, 1e-300))
    if lm < thr:
        lm = _log_band_mass_window(
            x, n0, y, n1, win0[2], win0[3], win1[2], win1[3], bd, GX, GW, rate
        )
    return lm


@njit(**_JIT)
def log_lik(B, i, eps, s, delta):
    """log P(X_i, Y_i | eps, s) of base i of ``B`` (a :class:`BinomialBases`)."""
    lm = log_band_mass(
        B.x[i], B.n0[i], B.y[i], B.n1[i], B.win0[i], B.win1[i], eps, s, delta, B.GX, B.GW
    )
    if lm == -math.inf:
        return -math.inf
    r = 1.0 - s
    la = log_area_rate(eps, s, delta)
    if r > 0.0:
        la += math.log(r)
    return lm - la + B.lconst[i]
