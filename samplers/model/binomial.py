"""Exact marginal likelihood of one binomial challenge base (numpy and numba only).

For a base with X false positives of N0 and Y false negatives of N1,

    P(X, Y | eps, s) = 1 / |R_s| * integral over R_s of Binom(X | N0, a) Binom(Y | N1, b) da db
                     = M / (|R_s| (N0 + 1)(N1 + 1)),

where M is the mass of the band R_s under the product of the densities Beta(a; X+1, N0-X+1)
and Beta(b; Y+1, N1-Y+1) (``Binom(X | N, a) = Beta(a; X+1, N-X+1) / (N+1)``).

How M is computed (see :mod:`samplers.model.region` for the geometry). The band has four pieces: the
two halves (y <= x and y > x) of the lower-left corner and of the upper-right one. On the half
y <= x of the lower-left corner, with u the FPR and the FNR the inner variable,

    M_half = integral du  p_X(u) [F_Y(psi_2(u)) - F_Y(psi_1(u))],

with F_Y the Beta distribution function (SciPy's ``betainc``/``betaincc``, whichever tail is
smaller), psi_1, psi_2 the edges of the band. The other half swaps the roles of X and Y; the
upper-right corner is the lower-left one of the reflected base (X -> N0 - X, Y -> N1 - Y).
Because psi has slope 1 or e^-t <= 1, the inner factor never varies faster in u than the inner
density does in its own variable, so a composite Gauss-Legendre rule in u converges fast once
the u-axis is cut at

- the window of p_X (its 10^-20 and 1 - 10^-20 quantiles; mass outside is dropped: with the
  inner density's window below, the error is at most TAIL_DROPPED = 4e-20 in M, i.e.
  negligible in log M wherever M is not itself astronomically small),
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
and :func:`samplers.model.region.log_area_rate`.

It is long because the likelihood of one base is one careful computation (windows, pieces, panels,
the s = 1 limit), documented step by step here.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ..numerics.jit import JIT
from ..numerics.logsum import lse_push
from ..numerics.quadrature import gauss_legendre_table
from ..numerics.smallsort import argsort_desc_small, sort_small
from ..numerics.special import betainc, betaincc, lbeta, xlogy
from .cdf_table import build_tables, log_tail_scipy, log_tail_table
from .region import log_area_rate, make_band, psi

__all__ = [
    "BinomialBases",
    "binomial_bases",
    "log_lik",
    "log_band_mass",
    "log_band_mass_tail",
    "log_tail_bound",
    "WINDOW_TAIL",
    "NODE_DENSITY",
]


#: Tail mass of each Beta density left outside its integration window (fast pass).
WINDOW_TAIL = 1e-20
#: Window of the second pass, taken when the fast pass finds a band mass below TAIL_PASS_BELOW:
#: the band then lies in the densities' tails, where the fast window would cut off the mass.
WINDOW_TAIL_WIDE = 1e-300
TAIL_PASS_BELOW = 1e-12
#: The most the fast windows leave out of a band mass: WINDOW_TAIL in each tail of each of the
#: two densities (a product density's mass outside window0 x window1 is at most the sum of the
#: two densities' mass outside their windows).
TAIL_DROPPED = 4.0 * WINDOW_TAIL
#: Gauss-Legendre nodes per local scale of the integrand (plus NODES_MIN per piece).
NODE_DENSITY = 1.6
NODES_MIN = 4
#: Largest Gauss-Legendre rule; longer pieces are split into panels.
NODES_MAX = 24
#: Below this fraction of the local scale, F(v2) - F(v1) is integrated from the density.
SMALL_STEP = 0.05

_GL4_X, _GL4_W = np.polynomial.legendre.leggauss(4)


#: One Beta(a, b) density: log B(a, b), mean, sd, the integration window [lo, hi], and where
#: its tail table is: range (wlo, whi) in logit, offset and cells in the table arrays; ``refl``
#: when this density is the tabulated one reflected, v -> 1 - v (logit w -> -w).
Dens = namedtuple(
    "Dens", ["a", "b", "lb", "mean", "sd", "lo", "hi", "wlo", "whi", "off", "m", "refl"]
)

#: Per-base arrays of the binomial bases (columns named, one row per base), plus the
#: Gauss-Legendre table. x/n0: false positives of negatives; y/n1: false negatives of positives;
#: lo*/hi*: windows of Beta(x+1, n0-x+1) and Beta(y+1, n1-y+1); lconst: -log((n0+1)(n1+1)),
#: plus log 2 where the error point is confined to one half (below); refl: 1.0 where the band's
#: reflected half (the upper-right corner, tests worse than chance) is part of the region, as in
#: the paper, 0.0 where the error point lies in the lower-left half only ("decisions as made":
#: the half has half the band's area, hence the log 2).
BinomialBases = namedtuple(
    "BinomialBases",
    [
        "x",
        "n0",
        "y",
        "n1",
        "win0",
        "win1",
        "lconst",
        "refl",
        "GX",
        "GW",
        "tab",
        "tok",
        "tmeta",
        "twin",
    ],
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


@njit(**JIT)
def _quantile(a, b, p, upper):
    """Find v with I_v(a, b) = p (upper=False) or 1 - I_v(a, b) = p (upper=True), by bisection."""
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


def binomial_bases(fp, n_neg, fn, n_pos, reflect=None) -> BinomialBases:
    """Per-base arrays for :func:`log_lik` (validated integer counts in).

    ``reflect``: per base, whether its error point may lie in the band's reflected half too
    (the paper's region, the default) or in the lower-left half only (False).
    """
    x, n0, y, n1 = (np.asarray(v, dtype=np.float64) for v in (fp, n_neg, fn, n_pos))
    refl = np.ones(x.size) if reflect is None else np.asarray(reflect, dtype=bool).astype(float)
    if refl.shape != x.shape:
        raise ValueError(f"`reflect` must have one value per base ({x.size}); found {refl.shape}")
    wins = []
    for k, n in ((x, n0), (y, n1)):
        w = np.empty((x.size, 4))
        w[:, 0], w[:, 1] = _window(k + 1.0, n - k + 1.0, WINDOW_TAIL)
        w[:, 2], w[:, 3] = _window(k + 1.0, n - k + 1.0, WINDOW_TAIL_WIDE)
        wins.append(w)
    GX, GW = gauss_legendre_table(NODES_MAX)
    n = x.size
    tab, tok, meta, wlim = build_tables(
        np.concatenate([x + 1.0, y + 1.0]),
        np.concatenate([n0 - x + 1.0, n1 - y + 1.0]),
        np.concatenate([wins[0][:, 0], wins[1][:, 0]]),
        np.concatenate([wins[0][:, 1], wins[1][:, 1]]),
    )
    tmeta = np.stack([meta[:n], meta[n:]], axis=1)
    twin = np.stack([wlim[:n], wlim[n:]], axis=1)
    lconst = -np.log((n0 + 1.0) * (n1 + 1.0)) + np.where(refl > 0.0, 0.0, math.log(2.0))
    return BinomialBases(
        x, n0, y, n1, wins[0], wins[1], lconst, refl, GX, GW, tab, tok, tmeta, twin
    )


@njit(**JIT)
def _dens(a, b, lo, hi, wlo, whi, off, m, refl):
    """Make the density Beta(a, b) (reflected: Beta(b, a) of the tabulated one) on [lo, hi]."""
    mean = a / (a + b)
    sd = math.sqrt(a * b / ((a + b) * (a + b) * (a + b + 1.0)))
    return Dens(a, b, lbeta(a, b), mean, sd, lo, hi, wlo, whi, off, m, refl)


@njit(**JIT)
def _log_tail(tab, tok, d, v, upper):
    """Return log F(v) (or log(1 - F(v)) with ``upper``) of the density d.

    From its table where that is checked, else from SciPy.
    """
    val = math.nan
    if v > 0.0 and v < 1.0:
        w = math.log(v) - math.log1p(-v)
        # the reflected density's table is the tabulated one's at -w, tails swapped
        sign = -1.0 if d.refl else 1.0
        val = log_tail_table(tab, tok, d.off, d.m, d.wlo, d.whi, sign * w, upper != d.refl)
    if val == val:
        return val
    return log_tail_scipy(d.a, d.b, v, upper)


@njit(**JIT)
def _logpdf(d, v):
    if v <= 0.0 or v >= 1.0:
        if (v <= 0.0 and d.a == 1.0) or (v >= 1.0 and d.b == 1.0):
            return -d.lb
        return -math.inf
    return xlogy(d.a - 1.0, v) + (d.b - 1.0) * math.log1p(-v) - d.lb


@njit(**JIT)
def _local_scale(d, v):
    """Scale on which the density varies at v: 1 / (|log-slope| + sqrt(|log-curvature|))."""
    v = min(max(v, 1e-300), 1.0 - 1e-16)
    g1 = (d.a - 1.0) / v - (d.b - 1.0) / (1.0 - v)
    g2 = (d.a - 1.0) / (v * v) + (d.b - 1.0) / ((1.0 - v) * (1.0 - v))
    return 1.0 / (abs(g1) + math.sqrt(g2) + 1e-300)


@njit(**JIT)
def _cdf_diff(tab, tok, d, v2, v1):
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
    # which tail of each end: the lower one below the mean; beyond the window a tail is
    # below WINDOW_TAIL and taken as 0 (like the outer windows). One call site of _log_tail
    # (in the loop) keeps the compiled code small.
    up1 = v1 >= d.mean
    up2 = v2 > d.mean
    l1 = -math.inf
    l2 = -math.inf
    for k in range(2):
        v = v1 if k == 0 else v2
        outside = v <= d.lo if k == 0 else v >= d.hi
        lt = -math.inf if outside else _log_tail(tab, tok, d, v, up1 if k == 0 else up2)
        if k == 0:
            l1 = lt
        else:
            l2 = lt
    if not up1 and not up2:
        # F(v2) - F(v1) = F(v2) (1 - F(v1) / F(v2))
        if l2 == -math.inf:
            return 0.0
        return -math.exp(l2) * math.expm1(l1 - l2)
    if up1 and up2:
        # S(v1) - S(v2) = S(v1) (1 - S(v2) / S(v1))
        if l1 == -math.inf:
            return 0.0
        return -math.exp(l1) * math.expm1(l2 - l1)
    return 1.0 - math.exp(l1) - math.exp(l2)


@njit(**JIT)
def _z_gap(d, v0, v1):
    """Distance (in sds, at least 1) from the density's mean to the interval [v0, v1]."""
    lo_v = min(v0, v1)
    hi_v = max(v0, v1)
    if lo_v <= d.mean <= hi_v:
        return 1.0
    gap = min(abs(lo_v - d.mean), abs(hi_v - d.mean)) / d.sd
    return max(1.0, gap)


@njit(**JIT)
def _edge_scale(inner, v0, v1, slope):
    """Scale in u of F_inner(psi(u)) on a piece where psi runs from v0 to v1 with this slope."""
    if slope <= 0.0:
        return math.inf
    if max(v0, v1) <= inner.lo or min(v0, v1) >= inner.hi:
        return math.inf
    return inner.sd / (slope * _z_gap(inner, v0, v1))


@njit(**JIT)
def _slope(u, c, e, xs):
    if u <= xs:
        return 1.0
    return e if u < c else 0.0


#: Columns of the piece table: ends, local scale, log upper bound of the mass, which half.
_PA, _PB, _PSC, _PBOUND, _PHALF = range(5)
_MAX_PIECES = 12
#: A piece whose upper bound is below this fraction of the mass found so far is skipped (the
#: pieces are integrated in decreasing order of their bounds).
SKIP_BELOW = 1e-9
#: Within a piece, panels past the integrand's peak that add less than this are the last.
PANEL_STOP = 1e-17
#: Panels per piece in the wide pass (far from the data; see _log_band_mass_window).
WIDE_PANELS_MAX = 8


@njit(**JIT)
def _pieces(tab, tok, outer, inner, bd, rate, h, P, npc):
    """Append the pieces of half h (outer, inner) of the lower-left band to P (rows from npc).

    The u-axis is cut at the windows, the kinks of the edges and where they cross the inner
    window; pieces where the integrand is 0 to WINDOW_TAIL are left out. Returns the new count.
    """
    u_lo = max(outer.lo, 0.0)
    u_hi = min(outer.hi, bd.c1 if rate else bd.c2)
    if not u_hi > u_lo:
        return npc
    bp = np.empty(_MAX_PIECES + 1)
    bp[0] = u_lo
    bp[1] = u_hi
    bp[2] = bd.xs1
    bp[3] = bd.xs2
    bp[4] = bd.c1
    bp[5] = inner.lo
    bp[6] = inner.hi
    nb = npc - npc + 7  # run-time: a literal 7 reaching sort_small would compile it twice
    for k in range(2):
        c = bd.c1 if k == 0 else bd.c2
        E = bd.E1 if k == 0 else bd.E2
        for v in (inner.lo, inner.hi):
            bp[nb] = c - v * E if v > 0.0 else c
            nb += 1
    for k in range(nb):
        bp[k] = min(max(bp[k], u_lo), u_hi)
    sort_small(bp, nb)
    for p in range(nb - 1):
        ua = bp[p]
        ub = bp[p + 1]
        if not ub > ua:
            continue
        um = 0.5 * (ua + ub)
        bound = math.inf
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
            # below both kinks both edges are the diagonal y = x: the band has no width there
            # and the integrand is exactly 0 (a large stretch when the region is R(t, delta)
            # with t ~ 0, whose kinks are near 1/2)
            if ub <= min(bd.xs1, bd.xs2):
                continue
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
            # the integrand is at most the outer mass of the piece times the largest inner
            # mass between the edges over the piece (edges are linear on a piece)
            bound = 0.0
            for k in range(2):
                dk = outer if k == 0 else inner
                hi_k = ub if k == 0 else max(p2a, p2b)
                lo_k = ua if k == 0 else min(p1a, p1b)
                mass = _cdf_diff(tab, tok, dk, hi_k, lo_k)
                bound += math.log(mass) if mass > 0.0 else -math.inf
        P[npc, _PA] = ua
        P[npc, _PB] = ub
        P[npc, _PSC] = min(sc, outer.sd / _z_gap(outer, ua, ub))
        P[npc, _PBOUND] = bound
        P[npc, _PHALF] = h
        npc += 1
    return npc


@njit(**JIT)
def _log_integrand(tab, tok, outer, inner, bd, rate, u):
    """Return log of the integrand at u.

    The integrand is the outer density times the inner mass between the edges, or times the
    inner density and the edge's speed at s = 1.
    """
    lp = _logpdf(outer, u)
    if lp == -math.inf:
        return -math.inf
    if rate:
        v = psi(u, bd.c1, bd.e1, bd.xs1)
        lf = _logpdf(inner, v)
        speed = bd.e1 * (bd.eps * (bd.c1 - u) + bd.delta)
        if lf > -math.inf and speed > 0.0:
            return lp + lf + math.log(speed)
        return -math.inf
    v1 = psi(u, bd.c1, bd.e1, bd.xs1)
    v2 = psi(u, bd.c2, bd.e2, bd.xs2)
    dd = _cdf_diff(tab, tok, inner, v2, v1)
    if dd > 0.0:
        return lp + math.log(dd)
    return -math.inf


@njit(**JIT)
def _integrate_piece(tab, tok, GX, GW, outer, inner, bd, rate, ua, ub, sc, m, tot, max_panels):
    """Add the integral over [ua, ub] (composite Gauss-Legendre) to the log sum (m, tot).

    The integrand is log-concave in u (a log-concave density times the mass of a log-concave
    density between edges linear in u, Prekopa), so it rises to one peak and falls.  The
    panels are taken from the end where the integrand is larger; once they fall and a panel
    adds less than PANEL_STOP of the sum, the rest (smaller still) is dropped.  This keeps far
    tail pieces, resolved on the scale of the tail, from costing thousands of panels.
    """
    need = NODES_MIN + NODE_DENSITY * (ub - ua) / sc
    n_panels = min(int(math.ceil(need / NODES_MAX)), max_panels)
    n = int(min(NODES_MAX, math.ceil(need / n_panels)))
    w = (ub - ua) / n_panels
    half = 0.5 * w
    lh = math.log(half)
    if n_panels <= 2:
        for q in range(n_panels):
            centre = ua + q * w + half
            for j in range(n):
                li = _log_integrand(tab, tok, outer, inner, bd, rate, centre + half * GX[n, j])
                if li > -math.inf:
                    m, tot = lse_push(m, tot, lh + math.log(GW[n, j]) + li)
        return m, tot
    eps_u = 1e-9 * (ub - ua)
    backward = _log_integrand(tab, tok, outer, inner, bd, rate, ub - eps_u) > _log_integrand(
        tab, tok, outer, inner, bd, rate, ua + eps_u
    )
    stop = math.log(PANEL_STOP)
    prev = -math.inf
    seen = False
    for qq in range(n_panels):
        q = n_panels - 1 - qq if backward else qq
        centre = ua + q * w + half
        pm = -math.inf
        pt = 0.0
        for j in range(n):
            li = _log_integrand(tab, tok, outer, inner, bd, rate, centre + half * GX[n, j])
            if li > -math.inf:
                pm, pt = lse_push(pm, pt, lh + math.log(GW[n, j]) + li)
        if pt > 0.0:
            lpanel = pm + math.log(pt)
            m, tot = lse_push(m, tot, lpanel)
            seen = True
        elif seen:
            break  # past the end of the (convex) support of the integrand
        else:
            lpanel = -math.inf
        if lpanel < prev and lpanel < m + math.log(tot) + stop:
            break
        prev = lpanel
    return m, tot


@njit(**JIT)
def _log_band_mass_window(T, i, wide, bd, rate):
    """Return the log band mass of base i of T over its fast (or, with ``wide``, wide) windows."""
    x, n0, y, n1 = T.x[i], T.n0[i], T.y[i], T.n1[i]
    c = 2 if wide else 0
    lo0, hi0 = T.win0[i, c], T.win0[i, c + 1]
    lo1, hi1 = T.win1[i, c], T.win1[i, c + 1]
    tl0, th0 = T.twin[i, 0, 0], T.twin[i, 0, 1]
    tl1, th1 = T.twin[i, 1, 0], T.twin[i, 1, 1]
    o0, m0 = T.tmeta[i, 0, 0], T.tmeta[i, 0, 1]
    o1, m1 = T.tmeta[i, 1, 0], T.tmeta[i, 1, 1]
    # the four halves: lower-left corner (inside x + y <= 1), then the reflected base for the
    # upper-right one (left out where the region is the lower-left half only, ``T.refl``); in
    # each, the FPR outer (y <= x) or the FNR outer (y > x)
    P = np.empty((4 * _MAX_PIECES, 5))
    npc = i - i  # a run-time 0: the literal 0 would compile _pieces a second time
    # the callees get the arrays they read, not the table tuple: passing a tuple of a dozen
    # arrays costs ~200 ns a call (measured), more than an evaluation of the integrand
    tab, tok, GX, GW = T.tab, T.tok, T.GX, T.GW
    # the wide pass runs only where the band holds < TAIL_PASS_BELOW of the base's mass, a
    # point whose posterior density is below e^-27 of the mode's: a coarse rule suffices there
    max_panels = WIDE_PANELS_MAX if wide else 1 << 30
    # (``refl`` is a run-time value: a literal True/False would give two types of Dens and
    # compile everything below twice)
    no = rate and not rate
    dx0 = _dens(x + 1.0, n0 - x + 1.0, lo0, hi0, tl0, th0, o0, m0, no)
    dy0 = _dens(y + 1.0, n1 - y + 1.0, lo1, hi1, tl1, th1, o1, m1, no)
    dx1 = _dens(n0 - x + 1.0, x + 1.0, 1.0 - hi0, 1.0 - lo0, tl0, th0, o0, m0, not no)
    dy1 = _dens(n1 - y + 1.0, y + 1.0, 1.0 - hi1, 1.0 - lo1, tl1, th1, o1, m1, not no)
    # the half's index as a run-time integer: literal 0..3 would compile _pieces four times
    h = npc - npc
    if lo0 + lo1 < 1.0:
        npc = _pieces(tab, tok, dx0, dy0, bd, rate, h, P, npc)
        npc = _pieces(tab, tok, dy0, dx0, bd, rate, h + 1, P, npc)
    if hi0 + hi1 > 1.0 and T.refl[i] > 0.0:
        npc = _pieces(tab, tok, dx1, dy1, bd, rate, h + 2, P, npc)
        npc = _pieces(tab, tok, dy1, dx1, bd, rate, h + 3, P, npc)
    # largest bound first; stop where the bounds can no longer change the sum
    order = np.empty(npc, dtype=np.int64)
    argsort_desc_small(P[:, _PBOUND], npc, order)
    m = -math.inf
    tot = 0.0
    skip = math.log(SKIP_BELOW)
    for r in order:
        if P[r, _PBOUND] == -math.inf:
            break
        if tot > 0.0 and P[r, _PBOUND] < m + math.log(tot) + skip:
            break
        h = int(P[r, _PHALF])
        if h == 0:
            o, inn = dx0, dy0
        elif h == 1:
            o, inn = dy0, dx0
        elif h == 2:
            o, inn = dx1, dy1
        else:
            o, inn = dy1, dx1
        m, tot = _integrate_piece(
            tab, tok, GX, GW, o, inn, bd, rate, P[r, _PA], P[r, _PB], P[r, _PSC], m, tot, max_panels
        )
    if tot > 0.0:
        return m + math.log(tot)
    return -math.inf


@njit(**JIT)
def log_tail_bound(lm_fast):
    """Return an upper bound on log M given the fast pass's log mass ``lm_fast``.

    The fast windows miss at most TAIL_DROPPED. Tables of the likelihood use it where the fast
    mass is below TAIL_PASS_BELOW, instead of the wide pass, for points far below the mode.
    """
    return math.log(math.exp(lm_fast) + TAIL_DROPPED)


@njit(**JIT)
def log_band_mass(T, i, eps, s, delta, bound_tails):
    """Return log of the band mass M (or of dM / d(1 - s) at s = 1) of base i of T, and a flag.

    The flag says that the value is only the upper bound :func:`log_tail_bound`.
    The fast pass integrates over the fast windows; when the band is so far from the data that
    the mass found there is below TAIL_PASS_BELOW (the dropped 4e-20 would matter), the wide
    pass integrates again over windows that drop only 1e-300 of each density -- or, with
    ``bound_tails`` (for tables, never for the posterior) and s < 1, the upper bound is
    returned instead (flagged True).
    """
    bd = make_band(eps, s, delta)
    rate = not bd.r > 0.0
    # the threshold compares a mass (a rate at s = 1: scale it by the band's thinness)
    thr = math.log(TAIL_PASS_BELOW)
    if rate:
        thr -= math.log(max(bd.eps, 1e-300))
    # the pass as a run-time bool: literal False / True would compile the pass twice
    fast = rate or not rate
    lm = _log_band_mass_window(T, i, not fast, bd, rate)
    if lm >= thr:
        return lm, False
    if bound_tails and not rate:
        return log_tail_bound(lm), True
    return _log_band_mass_window(T, i, fast, bd, rate), False


@njit(**JIT)
def log_band_mass_tail(T, i, eps, s, delta):
    """Return log M of base i of T from the wide pass alone.

    For a caller that already knows the fast windows hold less than TAIL_PASS_BELOW (the
    block quadrature of :mod:`samplers.model.binomial_block` integrates the same band over
    windows that contain every member's fast ones): :func:`log_band_mass` would run the fast
    pass again, find it below the threshold and return this.
    """
    bd = make_band(eps, s, delta)
    rate = not bd.r > 0.0
    # the pass as a run-time bool (see log_band_mass)
    return _log_band_mass_window(T, i, rate or not rate, bd, rate)


@njit(**JIT)
def log_lik(B, i, eps, s, delta):
    """Return log P(X_i, Y_i | eps, s) of base i of ``B`` (a :class:`BinomialBases`)."""
    # bound_tails False as a run-time value (a literal would compile log_band_mass again)
    lm, _ = log_band_mass(B, i, eps, s, delta, i < 0)
    if lm == -math.inf:
        return -math.inf
    r = 1.0 - s
    la = log_area_rate(eps, s, delta)
    if r > 0.0:
        la += math.log(r)
    return lm - la + B.lconst[i]
