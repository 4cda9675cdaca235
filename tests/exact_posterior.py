"""Deterministic (quadrature) reference for the MCMC-DP-Est posterior.

Test helper only; independent of any sampler code in the package.

Model (Yildirim et al., Sec. 2.1): for n challenge bases
``X_i ~ Binom(N0_i, alpha_i)``, ``Y_i ~ Binom(N1_i, beta_i)`` with
``(alpha_i, beta_i) | eps, s ~ Unif(R(eps, delta) minus R(s*eps, s*delta))``.

Geometry.  Write ``c = e^t`` and ``tl = 1 - d``.  The complement of ``R(t, d)`` in the
unit square is a lower-left corner ``A = {x + c y < tl} u {y + c x < tl}`` and an
upper-right corner ``B`` which is the point reflection of ``A`` through (1/2, 1/2).
At abscissa ``x`` the corner ``A`` is ``{y < h(x)}`` with
``h(u) = clip(max(tl - c u, (tl - u) / c), 0, 1)``, and ``B`` is ``{y > 1 - h(1 - x)}``.
Hence ``R(t, d)`` at ``x`` is the interval ``[lo(x), up(x)] = [h(x), 1 - h(1 - x)]`` and
every mass is a 1-D integral over ``x`` of a Beta density times a difference of
regularised incomplete beta functions.  The integral over ``x`` uses composite
Gauss-Legendre panels whose breakpoints are the kinks of ``h``, quantiles of the
``x``-density and the pre-images of quantiles of the ``y``-density under each linear
piece of the boundary, so each panel sees a smooth, well-resolved integrand.

The posterior with ``s ~ Beta`` is computed on a tensor grid in ``(eps, u = s*eps)``,
with ``u`` and ``eps`` on a common 1-D grid ``T``.  The lens mass is
``C(u, s*delta) - C(eps, delta)`` with ``C(t, d)`` the mass outside ``R(t, d)``; ``C``
(and the mass inside, ``M = 1 - C``) are tabulated once per base on ``T`` and on a
few Chebyshev-Lobatto nodes in ``d`` (polynomial interpolation in ``d``).  The
``s``-integral uses product integration (exact Beta weights against piecewise
linear interpolation of the likelihood), which is robust for ``a, b < 1``.  Its end node
s = 1 is the exact limit of the likelihood (``_log_boundary_mass``).

Extensions:

* ``s = 1`` (fixed): the band collapses onto the boundary of R(eps, delta); the likelihood is
  the limit of (band mass) / |R_s| as s -> 1, a line integral of the data density along the
  boundary weighted by the boundary's speed in s over the derivative of the area
  (``_log_boundary_mass``, ``_log_area_slope``).
* Several groups, each with its own strength (``posterior_grid_groups``): given eps the groups
  are independent, so the eps marginal is p(eps) prod_g Z_g(eps), Z_g the per-row s-integral
  of group g, and the s_g marginal weights group g's per-row partial s-integrals by the other
  groups' factors.  Identical count rows are evaluated once and weighted by multiplicity.
* Concentrated posteriors (many bases): a coarse pass locates the window of (eps, u) where the
  density matters and a fine pass is computed there (``zoom``).
* Paper eq. 7 at fixed (tau, rho) (``_BVNBase``): the same tables by brute-force nested
  Gauss-Legendre quadrature of the bivariate normal density over the regions.
* Incomplete beta functions are evaluated only on panels whose upper bound is not negligible
  against a sure lower bound of the integral (``_band_integral``).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import numpy as np
from scipy import special

__all__ = [
    "region_area",
    "log_region_area",
    "in_region",
    "log_marginal_likelihood",
    "marginal_likelihood",
    "region_mass",
    "posterior_grid",
    "posterior_grid_groups",
    "PosteriorGrid",
    "GroupsPosterior",
    "bvn_band_integral",
    "bvn_posterior_bruteforce",
]

_GL_M = 8  # Gauss-Legendre points per panel (10 points agree to 1e-11 in log L)
_GL_Z, _GL_W = np.polynomial.legendre.leggauss(_GL_M)
_X_LEVELS = np.array([1e-300, 1e-100, 1e-40, 1e-20, 1e-12, 1e-8, 1e-5, 1e-3, 0.02, 0.1, 0.3, 0.5])
_Y_LEVELS = np.array([1e-30, 1e-15, 1e-8, 1e-4, 0.01, 0.1, 0.35, 0.5])
_EXP_CAP = 700.0


# --------------------------------------------------------------------------- geometry


def region_area(eps, s, delta):
    """Area |R_s(eps, delta)| (paper formula, with a stable logistic)."""
    return np.exp(log_region_area(eps, s, delta))


def log_region_area(eps, s, delta):
    """log |R_s(eps, delta)|, stable for large eps (no underflow of e^{-eps})."""
    eps = np.asarray(eps, dtype=float)
    s = np.asarray(s, dtype=float)
    la = 2.0 * np.log1p(-s * delta) + special.log_expit(-s * eps)
    lb = 2.0 * np.log1p(-delta) + special.log_expit(-eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(2.0) + la + np.log(-np.expm1(lb - la))
    return np.where(np.isnan(out), -np.inf, out)


def in_region(x, y, eps, delta):
    """Indicator of (x, y) in R(eps, delta), straight from the four inequalities."""
    c = np.exp(eps)
    return (
        (x + c * y >= 1 - delta)
        & (y + c * x >= 1 - delta)
        & (y + c * x <= c + delta)
        & (x + c * y <= c + delta)
        & (x >= 0)
        & (x <= 1)
        & (y >= 0)
        & (y <= 1)
    )


def _h(u, c, tl):
    """Upper boundary (in y) of the lower-left corner at abscissa u."""
    with np.errstate(over="ignore", invalid="ignore"):
        v = np.maximum(tl - c * u, (tl - u) / c)
    return np.clip(v, 0.0, 1.0)


class _Base:
    """Per challenge base: Beta(X+1, N0-X+1) for alpha and Beta(Y+1, N1-Y+1) for beta."""

    def __init__(self, x, n0, y, n1):
        x, n0, y, n1 = int(x), int(n0), int(y), int(n1)
        if not (0 <= x <= n0 and 0 <= y <= n1):
            raise ValueError("need 0 <= x <= n0 and 0 <= y <= n1")
        self.x, self.n0, self.y, self.n1 = x, n0, y, n1
        self.ax, self.bx = x + 1.0, n0 - x + 1.0
        self.ay, self.by = y + 1.0, n1 - y + 1.0
        self.lbx = special.betaln(self.ax, self.bx)
        self.lby = special.betaln(self.ay, self.by)
        self.log_norm = np.log(n0 + 1.0) + np.log(n1 + 1.0)
        lv = _X_LEVELS
        self.qx = np.unique(
            np.concatenate(
                [
                    special.betaincinv(self.ax, self.bx, lv),
                    special.betainccinv(self.ax, self.bx, lv),
                ]
            )
        )
        lv = _Y_LEVELS
        self.qy = np.unique(
            np.concatenate(
                [
                    special.betaincinv(self.ay, self.by, lv),
                    special.betainccinv(self.ay, self.by, lv),
                ]
            )
        )
        self.med_y = special.betaincinv(self.ay, self.by, 0.5)
        # mode of the x density (f_x is unimodal: a, b >= 1) for the panel bounds
        self.mode_x = (self.ax - 1.0) / (self.ax + self.bx - 2.0) if n0 > 0 else 0.5
        self.logf_mode = float(self.logfx(np.array(self.mode_x)))
        self._refl = None

    def moments(self):
        def ms(a, b):
            m = a / (a + b)
            return m, np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))

        return ms(self.ax, self.bx), ms(self.ay, self.by)

    def logfx(self, x):
        with np.errstate(divide="ignore", invalid="ignore"):
            return special.xlogy(self.ax - 1, x) + special.xlog1py(self.bx - 1, -x) - self.lbx

    def log_joint(self, x, y):
        """log of the Beta-product density (x the false-positive rate, y the false-negative)."""
        return self.logfx(x) + self.logfy(y)

    def logfy(self, v):
        """log of the Beta(Y + 1, N1 - Y + 1) density."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return special.xlogy(self.ay - 1, v) + special.xlog1py(self.by - 1, -v) - self.lby

    def F(self, v):
        return special.betainc(self.ay, self.by, np.clip(v, 0.0, 1.0))

    def S(self, v):
        # 1 - I_v(a, b) = I_{1-v}(b, a)  (scipy's betaincc is much slower)
        return special.betainc(self.by, self.ay, 1.0 - np.clip(v, 0.0, 1.0))

    def tail(self, v):
        """F(v) where v <= median of Y, S(v) = 1 - F(v) above it (one betainc per point)."""
        v = np.clip(v, 0.0, 1.0)
        low = v <= self.med_y
        return special.betainc(
            np.where(low, self.ay, self.by),
            np.where(low, self.by, self.ay),
            np.where(low, v, 1 - v),
        )

    def interval_mass(self, a, b):
        """P(a < Y < b) for a <= b, each end evaluated in its own (more accurate) tail."""
        ta, tb = self.tail(a), self.tail(b)
        out = np.where(b <= self.med_y, tb - ta, np.where(a >= self.med_y, ta - tb, 1 - ta - tb))
        return np.maximum(out, 0.0)

    def breakpoints(self, c, tl, upper=True):
        """Breakpoints in x for the boundary of R(t, d); c, tl of shape (n, 1).

        With ``upper=False`` only the lower-left corner boundary ``y = h(x)`` is used.
        """
        q = self.qy[None, :]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            kl = np.concatenate([tl / (1 + c), tl / c, tl], axis=1)
            pts = [kl, (tl - q) / c, tl - c * q]
            if upper:
                pts += [1.0 - kl, 1.0 - (tl - 1.0 + q) / c, 1.0 - tl + c * (1.0 - q)]
        return np.concatenate(pts, axis=1)

    def log_tables(self, t, d):
        """(log C, log M) at the points t for one d (see ``_corner_and_inside``)."""
        return _corner_and_inside(self, t, d)

    def log_lens(self, t1, d1, t2, d2):
        return _log_lens_mass(self, t1, d1, t2, d2)

    def log_boundary(self, eps, delta):
        return _log_boundary_mass(self, eps, delta)

    def reflected(self):
        """The base of (1 - alpha, 1 - beta): maps the upper-right corner to the lower-left."""
        if self._refl is None:
            self._refl = _Base(self.n0 - self.x, self.n0, self.n1 - self.y, self.n1)
        return self._refl


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


def _params(t, d):
    t = np.atleast_1d(np.asarray(t, dtype=float))
    d = np.broadcast_to(np.asarray(d, dtype=float), t.shape)
    c = np.exp(np.minimum(t, _EXP_CAP))[:, None]
    tl = (1.0 - d)[:, None]
    return c, tl


def _edge(spec, x, rows):
    """An edge y = e(x) of the inner interval, nonincreasing in x; rows index (c, tl)."""
    kind, c, tl = spec
    c, tl = c[rows, 0], tl[rows, 0]
    if kind == "h":  # the lower-left corner's boundary h(x)
        return _h(x, c, tl)
    return 1.0 - _h(1.0 - x, c, tl)  # "up": the upper-right corner's boundary


def _imass(base, va, ta, vb, tb):
    """P(va < Y < vb) from the points and their tails (``_Base.tail``); 0 where va >= vb."""
    med = base.med_y
    out = np.where(vb <= med, tb - ta, np.where(va >= med, ta - tb, 1.0 - ta - tb))
    return np.where(vb > va, np.maximum(out, 0.0), 0.0)


_PRUNE = 46.0  # panels below e^-46 (~1e-20) of a sure lower bound of the integral are skipped


def _band_integral(base, bps, a_spec, b_spec):
    """log of int_0^1 f_x(x) P(A(x) < Y < B(x)) dx for each row of the breakpoints bps.

    A and B are nonincreasing edges (``_edge`` specs; ``a_spec=None`` means A = 0).  Gauss-
    Legendre panels between the breakpoints; panels whose upper bound (largest f_x on the
    panel times the widest inner interval) is below e^-46 of the largest lower bound of a
    single panel are skipped, so the incomplete beta functions are evaluated only where the
    integrand matters (a relative error below 1e-18 per skipped panel).
    """
    allb = _panels(bps, base.qx)
    n = allb.shape[0]
    rows = np.arange(n)[:, None]
    a_end, b_end = allb[:, :-1], allb[:, 1:]
    width = b_end - a_end
    with np.errstate(divide="ignore", invalid="ignore"):
        lfb = base.logfx(allb)
        lmax = np.maximum(lfb[:, :-1], lfb[:, 1:])
        lmax = np.where((a_end <= base.mode_x) & (base.mode_x <= b_end), base.logf_mode, lmax)
        lmin = np.minimum(lfb[:, :-1], lfb[:, 1:])
        vb = _edge(b_spec, allb, rows)
        tb = base.tail(vb)
        if a_spec is None:
            va = ta = np.zeros_like(vb)
        else:
            va = _edge(a_spec, allb, rows)
            ta = base.tail(va)
        g_up = _imass(base, va[:, 1:], ta[:, 1:], vb[:, :-1], tb[:, :-1])
        g_lo = _imass(base, va[:, :-1], ta[:, :-1], vb[:, 1:], tb[:, 1:])
        lw = np.log(width)
        ub = lw + lmax + np.log(g_up)
        lb = lw + lmin + np.log(g_lo)
    ub = np.where(np.isnan(ub), -np.inf, ub)
    lb = np.where(np.isnan(lb), -np.inf, lb)
    ref = lb.max(axis=1, keepdims=True)
    keep = np.where(np.isfinite(ref), ub > ref - _PRUNE, np.isfinite(ub))
    ii, pp = np.nonzero(keep)
    out = np.full(n, -np.inf)
    if ii.size == 0:
        return out
    lo = a_end[ii, pp][:, None]
    half = 0.5 * width[ii, pp][:, None]
    x = lo + half * (_GL_Z + 1.0)
    w = half * _GL_W
    r = ii[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        vbn = _edge(b_spec, x, r)
        tbn = base.tail(vbn)
        if a_spec is None:
            van = tan = np.zeros_like(vbn)
        else:
            van = _edge(a_spec, x, r)
            tan = base.tail(van)
        term = base.logfx(x) + np.log(_imass(base, van, tan, vbn, tbn)) + np.log(w)
    term = np.where(np.isnan(term), -np.inf, term)
    pm = term.max(axis=1)
    rmax = np.full(n, -np.inf)
    np.maximum.at(rmax, ii, pm)
    shift = np.where(np.isfinite(rmax), rmax, 0.0)
    tot = np.zeros(n)
    np.add.at(tot, ii, np.exp(term - shift[ii, None]).sum(axis=1))
    with np.errstate(divide="ignore"):
        return np.where(np.isfinite(rmax), shift + np.log(tot), -np.inf)


# M is integrated directly where C > 1 - 1e-6; elsewhere 1 - C has a relative error < 1e-10
_LOG_C_DIRECT = np.log1p(-1e-6)


def _corner_and_inside(base, t, d, chunk=256):
    """log C(t, d) (mass outside R) and log M(t, d) (mass inside R) for arrays t, d.

    C is the sum of two lower-left corner masses (the base and its reflection), which keeps
    relative accuracy for tiny corner masses; where C > 1 - 1e-6, M is integrated directly
    over [lo(x), up(x)] (elsewhere M = 1 - C is accurate to 1e-10 relative).
    """
    t = np.atleast_1d(np.asarray(t, dtype=float))
    d = np.broadcast_to(np.asarray(d, dtype=float), t.shape)
    logc = np.logaddexp(_log_corner(base, t, d, chunk), _log_corner(base.reflected(), t, d, chunk))
    with np.errstate(divide="ignore", invalid="ignore"):
        logm = np.log1p(-np.exp(np.minimum(logc, 0.0)))
    idx = np.flatnonzero(logc > _LOG_C_DIRECT)
    for i0 in range(0, idx.size, chunk):
        sl = idx[i0 : i0 + chunk]
        c, tl = _params(t[sl], d[sl])
        logm[sl] = _band_integral(base, base.breakpoints(c, tl), ("h", c, tl), ("up", c, tl))
    return logc, logm


def _log_corner(base, t, d, chunk=256):
    """log of the mass of the lower-left corner {y < h(x)} of R(t, d)."""
    t = np.atleast_1d(np.asarray(t, dtype=float))
    d = np.broadcast_to(np.asarray(d, dtype=float), t.shape)
    out = np.empty(t.shape)
    for i0 in range(0, t.size, chunk):
        sl = slice(i0, i0 + chunk)
        c, tl = _params(t[sl], d[sl])
        out[sl] = _band_integral(base, base.breakpoints(c, tl, upper=False), None, ("h", c, tl))
    return out


def region_mass(x, n0, y, n1, eps, delta):
    """(C, M): Beta-product mass outside / inside R(eps, delta) (arrays over eps)."""
    lc, lm = _corner_and_inside(_Base(x, n0, y, n1), eps, delta)
    return np.exp(lc), np.exp(lm)


def _log_lens_mass(base, t1, d1, t2, d2, chunk=128):
    """log of the Beta-product mass of R(t2, d2) minus R(t1, d1) (t1 <= t2, d1 <= d2).

    The lens is the difference of the lower-left corners plus the difference of the
    upper-right corners; the latter is a lower-left difference for the reflected base.
    Pointwise in x this is P(h2(x) < Y < h1(x)): positive terms only, no cancellation.
    """
    arrs = np.broadcast_arrays(*(np.atleast_1d(np.asarray(v, float)) for v in (t1, d1, t2, d2)))
    shape = arrs[0].shape
    t1, d1, t2, d2 = (v.ravel() for v in arrs)
    parts = []
    for b in (base, base.reflected()):
        out = np.empty(t1.size)
        for i0 in range(0, t1.size, chunk):
            sl = slice(i0, i0 + chunk)
            c1, tl1 = _params(t1[sl], d1[sl])
            c2, tl2 = _params(t2[sl], d2[sl])
            bps = np.concatenate(
                [b.breakpoints(c1, tl1, upper=False), b.breakpoints(c2, tl2, upper=False)], axis=1
            )
            out[sl] = _band_integral(b, bps, ("h", c2, tl2), ("h", c1, tl1))
        parts.append(out)
    return np.logaddexp(parts[0], parts[1]).reshape(shape)


# --------------------------------------------------------------------------- s = 1


def _log_area_slope(eps, delta):
    """log of lim_{s -> 1} |R_s(eps, delta)| / (1 - s).

    |R_s| = A(s eps, s delta) - A(eps, delta) with A(t, d) = 2 (1 - d)^2 / (1 + e^t) the area
    outside R(t, d), so the limit is -dA/ds at s = 1 = 2 [2 delta tl / (1 + c) +
    eps c tl^2 / (1 + c)^2] with c = e^eps, tl = 1 - delta (one term per corner, two corners).
    """
    eps = np.asarray(eps, dtype=float)
    tl = 1.0 - delta
    sp = np.logaddexp(0.0, eps)
    with np.errstate(divide="ignore"):
        la = np.log(2.0 * delta * tl) - sp
        lb = np.log(eps * tl * tl) + eps - 2.0 * sp
    return np.log(2.0) + np.logaddexp(la, lb)


def _log_boundary_mass(base, eps, delta, chunk=256):
    """log of lim_{s -> 1} (Beta-product mass of R_s(eps, delta)) / (1 - s).

    The band mass is C(s eps, s delta) - C(eps, delta), C the mass of the two corners outside
    R.  A lower-left corner is {y < h(x)} with h(x) = tl - c x for x < k = tl / (1 + c) and
    h(x) = (tl - x) / c for k < x < tl, so (Leibniz; h is continuous, no end terms)

        -d/ds C(s eps, s delta) at s = 1 = int_0^tl f_x(x) f_y(h(x)) w(x) dx,
        w(x) = delta + eps c x             (x < k:  -dh/ds on the steep piece)
        w(x) = (delta + eps (tl - x)) / c  (k < x < tl: on the flat piece),

    a line integral of the data density along the boundary of R(eps, delta), weighted by the
    speed at which the boundary moves with s.  The upper-right corner is the lower-left one of
    the reflected base.  Elementary integrand (``base.log_joint``: Beta densities, or eq. 7).
    """
    eps = np.atleast_1d(np.asarray(eps, dtype=float))
    parts = []
    for b in (base, base.reflected()):
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
    return np.logaddexp(parts[0], parts[1])


def log_marginal_likelihood(x, n0, y, n1, eps, s, delta):
    """log L_i(eps, s) = log[(1/|R_s|) int_{R_s} Binom(x|n0,a) Binom(y|n1,b) da db].

    ``eps`` and ``s`` broadcast; requires eps > 0 (or delta > 0) and 0 <= s <= 1.  At s = 1
    the band collapses onto the boundary of R(eps, delta) and L is the limit s -> 1 of the
    ratio (L'Hopital in s: a weighted line integral, see ``_log_boundary_mass``).
    """
    base = _Base(x, n0, y, n1)
    eps, s = np.broadcast_arrays(np.asarray(eps, float), np.asarray(s, float))
    if np.any((s < 0) | (s > 1)):
        raise ValueError("need 0 <= s <= 1")
    out = np.empty(eps.shape)
    one = s == 1.0
    e1, s1 = eps[~one], s[~one]
    if e1.size:
        lm = _log_lens_mass(base, s1 * e1, s1 * delta, e1, delta).reshape(e1.shape)
        with np.errstate(divide="ignore"):
            out[~one] = lm - log_region_area(e1, s1, delta) - base.log_norm
    if one.any():
        e = eps[one]
        out[one] = _log_boundary_mass(base, e, delta) - _log_area_slope(e, delta) - base.log_norm
    return out if out.ndim else float(out)


def marginal_likelihood(x, n0, y, n1, eps, s, delta):
    """L_i(eps, s) (see :func:`log_marginal_likelihood`)."""
    return np.exp(log_marginal_likelihood(x, n0, y, n1, eps, s, delta))


# --------------------------------------------------------------------------- grids


def _features(bases, delta):
    """(t*, width) of each boundary crossing of each base's data density."""
    feats = []
    for b in bases:
        (mx, sx), (my, sy) = b.moments()
        for px, py in ((mx, my), (1 - mx, 1 - my)):  # lower-left and reflected upper-right
            for ux, uy, vx, vy in ((px, py, sx, sy), (py, px, sy, sx)):
                num = 1.0 - delta - ux
                if num <= 0:
                    continue
                ts = np.log(num / uy)
                wid = np.hypot(vx / num, vy / uy)
                if ts + 8 * wid > 0:
                    feats.append((ts, wid))
    return feats


def _t_grid_h0(bases, delta, refine=1.0, h_min=5e-4):
    """The dense spacing of ``_t_grid`` (an eighth of the narrowest feature)."""
    feats = _features(bases, delta)
    if not feats:
        return 0.02 / refine
    return float(np.clip(min(w for _, w in feats) / 8.0, h_min, 0.02)) / refine


def _t_grid(
    bases, delta, t_max, refine=1.0, h_min=5e-4, n_dense_max=4000, tail_rel=0.01, growth=0.05
):
    feats = _features(bases, delta)
    if feats:
        h0 = float(np.clip(min(w for _, w in feats) / 8.0, h_min, 0.02)) / refine
        t_hi = max(1.0, max(ts + 15.0 * w for ts, w in feats))
    else:
        h0, t_hi = 0.02 / refine, 1.0
    t_hi = min(t_hi, t_max)
    if t_hi / h0 > n_dense_max * refine:
        h0 = t_hi / n_dense_max
    n = max(int(np.ceil(t_hi / h0)), 2)
    grid = list(np.linspace(0.0, t_hi, n + 1))
    t, h = t_hi, t_hi / n
    while t < t_max:
        h = min(h * (1.0 + growth / refine), max(0.1, tail_rel * t) / refine)
        t = min(t + h, t_max)
        grid.append(t)
    return np.asarray(grid)


def _lobatto(delta, k):
    if delta == 0 or k == 1:
        return np.array([0.0])
    return 0.5 * delta * (1.0 - np.cos(np.pi * np.arange(k) / (k - 1)))


def _lagrange(nodes, d):
    """Lagrange basis values at points d: shape (d.size, nodes.size)."""
    d = np.asarray(d, dtype=float)[:, None]
    k = nodes.size
    if k == 1:
        return np.ones((d.shape[0], 1))
    out = np.ones((d.shape[0], k))
    for m in range(k):
        for j in range(k):
            if j != m:
                out[:, m] *= (d[:, 0] - nodes[j]) / (nodes[m] - nodes[j])
    return out


def _interp_log(lag, logtab):
    """log of sum_m lag[j, m] * exp(logtab[m, j]) (interpolation in d of tabulated logs)."""
    mx = logtab.max(axis=0)
    mxs = np.where(np.isfinite(mx), mx, 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        val = np.einsum("jm,mj->j", lag, np.exp(logtab - mxs))
        out = mxs + np.log(np.maximum(val, 0.0))
    return np.where(np.isfinite(mx), out, -np.inf)


def _log_eps_prior(eps_prior, e):
    kind = eps_prior[0]
    e = np.asarray(e, dtype=float)
    with np.errstate(divide="ignore"):
        if kind == "halfnormal":
            sc = float(eps_prior[1])
            return np.log(2.0 / (sc * np.sqrt(2 * np.pi))) - 0.5 * (e / sc) ** 2
        if kind == "lognormal":
            mu, sig = float(eps_prior[1]), float(eps_prior[2])
            le = np.log(np.where(e > 0, e, 1.0))
            out = -le - np.log(sig * np.sqrt(2 * np.pi)) - 0.5 * ((le - mu) / sig) ** 2
            return np.where(e > 0, out, -np.inf)
    raise ValueError(f"unknown eps prior {eps_prior!r}")


def _default_eps_max(eps_prior):
    if eps_prior[0] == "halfnormal":
        return 8.0 * float(eps_prior[1])
    mu, sig = float(eps_prior[1]), float(eps_prior[2])
    return float(min(np.exp(mu + 6.0 * sig), 500.0))


def _eps_prior_tail(eps_prior, e):
    if eps_prior[0] == "halfnormal":
        return float(2.0 * special.ndtr(-e / float(eps_prior[1])))
    mu, sig = float(eps_prior[1]), float(eps_prior[2])
    return float(special.ndtr(-(np.log(e) - mu) / sig))


def _cumtrapz(x, y):
    return np.concatenate([[0.0], np.cumsum(0.5 * (y[1:] + y[:-1]) * np.diff(x))])


def _cdf_at(x, grid, cdf, pdf):
    """The CDF at x from its values and its density on the grid (0 left of it, 1 right of it).

    Between two nodes: the cubic Hermite interpolant with the density as slope (fourth order
    where the density is smooth; linear interpolation's error, h^2 f' / 8, was ~1e-3 in the CDF
    for a posterior ~10 nodes wide), clipped to the two node values (a CDF is monotone, so that
    never moves it away from the truth).
    """
    xa = np.asarray(x, dtype=float)
    flat = np.atleast_1d(xa).ravel()
    out = np.interp(flat, grid, cdf, left=0.0, right=1.0)
    inside = (flat > grid[0]) & (flat < grid[-1])
    if np.any(inside):
        xi = flat[inside]
        i = np.clip(np.searchsorted(grid, xi, side="right") - 1, 0, grid.size - 2)
        h = grid[i + 1] - grid[i]
        t = (xi - grid[i]) / h
        c0, c1, f0, f1 = cdf[i], cdf[i + 1], pdf[i], pdf[i + 1]
        t2, t3 = t * t, t * t * t
        val = (
            (2 * t3 - 3 * t2 + 1) * c0
            + (t3 - 2 * t2 + t) * h * f0
            + (-2 * t3 + 3 * t2) * c1
            + (t3 - t2) * h * f1
        )
        out[inside] = np.clip(val, np.minimum(c0, c1), np.maximum(c0, c1))
    return out.reshape(xa.shape) if xa.ndim else float(out[0])


@dataclass
class PosteriorGrid:
    """Marginal posteriors of eps (and s) on grids, with CDF/quantile helpers."""

    eps_grid: np.ndarray
    eps_pdf: np.ndarray
    eps_cdf_values: np.ndarray
    s_grid: np.ndarray | None = None
    s_pdf: np.ndarray | None = None
    s_cdf_values: np.ndarray | None = None
    s_fixed: float | None = None
    info: dict = field(default_factory=dict)

    def eps_cdf(self, x):
        return _cdf_at(x, self.eps_grid, self.eps_cdf_values, self.eps_pdf)

    def eps_quantile(self, q):
        return _inv_cdf(self.eps_grid, self.eps_cdf_values, q)

    def s_cdf(self, x):
        if self.s_grid is None:
            return np.where(np.asarray(x) >= self.s_fixed, 1.0, 0.0)
        return np.interp(x, self.s_grid, self.s_cdf_values, left=0.0, right=1.0)

    def s_quantile(self, q):
        if self.s_grid is None:
            return np.full(np.shape(q), self.s_fixed) if np.ndim(q) else self.s_fixed
        return _inv_cdf(self.s_grid, self.s_cdf_values, q)

    def eps_mean(self):
        return float(np.trapezoid(self.eps_grid * self.eps_pdf, self.eps_grid))


def _inv_cdf(grid, cdf, q):
    q = np.asarray(q, dtype=float)
    # strictly increasing support for interpolation (drop flat stretches)
    keep = np.concatenate([[True], np.diff(cdf) > 0])
    g, c = grid[keep], cdf[keep]
    out = np.interp(q, c, g)
    return out if out.ndim else float(out)


def _beta_seg_weights(a, b, sig):
    """Product-integration weights of Beta(a,b) against hat functions at nodes sig."""
    i0 = special.betainc(a, b, sig)
    i1 = special.betainc(a + 1.0, b, sig) * (a / (a + b))
    p0, p1 = np.diff(i0), np.diff(i1)
    dl = np.diff(sig)
    left = (sig[1:] * p0 - p1) / dl
    right = (p1 - sig[:-1] * p0) / dl
    w = np.zeros(sig.size)
    w[:-1] += left
    w[1:] += right
    return np.maximum(w, 0.0), i0, i1


# --------------------------------------------------------------------------- groups


@dataclass
class _Group:
    """One evidence group: unique count rows (with multiplicities) and its s prior."""

    terms: list
    mult: np.ndarray
    s_kind: str  # "beta" or "fixed"
    a: float = 1.0
    b: float = 1.0
    s0: float = 0.0
    likelihood: str = "binomial"

    @property
    def n_rows(self):
        return int(self.mult.sum())


def _unique_rows(counts):
    x, n0, y, n1 = np.broadcast_arrays(*(np.atleast_1d(np.asarray(v)).astype(int) for v in counts))
    rows = np.stack([x, n0, y, n1], axis=1)
    uniq, mult = np.unique(rows, axis=0, return_counts=True)
    return uniq, mult


def _parse_group(spec):
    counts, s_prior = spec[0], spec[1]
    lik = dict(spec[2]) if len(spec) > 2 and spec[2] else {}
    kind = lik.pop("likelihood", "binomial")
    uniq, mult = _unique_rows(counts)
    if kind == "binomial":
        if lik:
            raise ValueError(f"binomial groups take no parameters; found {lik}")
        terms = [_Base(*r) for r in uniq]
    elif kind == "bivariate_normal":
        terms = [_BVNBase(*r, tau=float(lik["tau"]), rho=float(lik["rho"])) for r in uniq]
    else:
        raise ValueError(f"unknown likelihood {kind!r}")
    if s_prior[0] == "beta":
        return _Group(
            terms, mult, "beta", a=float(s_prior[1]), b=float(s_prior[2]), likelihood=kind
        )
    if s_prior[0] == "fixed":
        s0 = float(s_prior[1])
        if not 0.0 <= s0 <= 1.0:
            raise ValueError(f"fixed s must be in [0, 1]; found {s0}")
        return _Group(terms, mult, "fixed", s0=s0, likelihood=kind)
    raise ValueError(f"unknown s prior {s_prior!r}")


def _n_dnodes(delta, refine):
    if delta == 0:
        return 1
    k = 4 if delta <= 1e-3 else 8
    return int(round(k * max(refine, 1.0)))


def _fixed_log_z(g, E, delta):
    """sum_i mult_i log L_i(E, s0) for a group with fixed s0 (exact in d, no tables)."""
    out = np.zeros(E.size)
    pos = E > 0
    Ep = E[pos]
    acc = np.zeros(Ep.size)
    for term, m in zip(g.terms, g.mult, strict=True):
        if g.s0 == 1.0:
            lv = term.log_boundary(Ep, delta) - _log_area_slope(Ep, delta)
        else:
            with np.errstate(divide="ignore"):
                lv = term.log_lens(g.s0 * Ep, g.s0 * delta, Ep, delta) - log_region_area(
                    Ep, g.s0, delta
                )
        acc += m * (lv - term.log_norm)
    out[pos] = acc
    out[~pos] = np.nan  # eps = 0: filled by extrapolation
    return out


def _beta_rows(g, T, rows, u_lo, u_hi, dn, delta):
    """Per row k (eps = T[k]): s-nodes sig and sum_i mult_i log L_i(eps, sig).

    u-nodes are the T[j] in [u_lo, min(u_hi, eps)) with j < k; the node s = 1 (the exact limit
    of ``_log_boundary_mass``) is added when u_hi >= eps.  The band mass is a difference of the
    tabulated corner masses C (or inside masses M) at (T[j], s delta) and (T[k], delta); C and M
    are tabulated on T x (Chebyshev-Lobatto nodes in d) and interpolated in d.
    """
    K = dn.size
    nT = T.size
    uidx = np.flatnonzero((T >= u_lo) & (T <= u_hi))
    nb = len(g.terms)
    tabC = np.full((nb, K, nT), np.nan)
    tabM = np.full((nb, K, nT), np.nan)
    need_top = np.zeros(nT, bool)
    need_top[rows] = True
    for i, term in enumerate(g.terms):
        for m, dm in enumerate(dn):
            idx = uidx if m < K - 1 else np.union1d(uidx, rows)
            if idx.size:
                lc, lm = term.log_tables(T[idx], dm)
                tabC[i, m, idx] = lc
                tabM[i, m, idx] = lm
    mult = g.mult.astype(float)
    lnorm = float(sum(m * t.log_norm for t, m in zip(g.terms, g.mult, strict=True)))
    E = T[rows]
    top = np.full(E.size, -np.inf)
    tops = E <= u_hi
    pos = tops & (E > 0)
    if pos.any():
        acc = np.zeros(int(pos.sum()))
        for term, m in zip(g.terms, g.mult, strict=True):
            acc += m * (term.log_boundary(E[pos], delta) - _log_area_slope(E[pos], delta))
        top[pos] = acc - lnorm
    out = []
    for r, k in enumerate(rows):
        ek = T[k]
        J = uidx[uidx < k]
        sig = T[J] / ek if ek > 0 else np.zeros(0)
        if J.size:
            lag = _lagrange(dn, sig * delta)  # (nj, K)
            larea = log_region_area(ek, sig, delta)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                lc1 = _interp_log_b(lag, tabC[:, :, J])
                lm1 = _interp_log_b(lag, tabM[:, :, J])
                lc2 = tabC[:, K - 1, k][:, None]
                lm2 = tabM[:, K - 1, k][:, None]
                via_c = lc1 + np.log(-np.expm1(np.minimum(lc2 - lc1, 0.0)))
                via_m = lm2 + np.log(-np.expm1(np.minimum(lm1 - lm2, 0.0)))
                ld = np.where(lc1 <= lm2, via_c, via_m)
            ld = np.where(np.isnan(ld), -np.inf, ld)
            lg = (mult[:, None] * ld).sum(axis=0) - mult.sum() * larea - lnorm
            lg = np.where(np.isnan(lg), -np.inf, lg)
        else:
            lg = np.zeros(0)
        if tops[r] and ek > 0:
            sig = np.append(sig, 1.0)
            lg = np.append(lg, top[r])
        out.append((sig, lg))
    return out


def _interp_log_b(lag, logtab):
    """Batched ``_interp_log``: logtab (nb, K, nj), lag (nj, K) -> (nb, nj)."""
    mx = logtab.max(axis=1)
    mxs = np.where(np.isfinite(mx), mx, 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        val = np.einsum("jm,bmj->bj", lag, np.exp(logtab - mxs[:, None, :]))
        out = mxs + np.log(np.maximum(val, 0.0))
    return np.where(np.isfinite(mx), out, -np.inf)


def _s_partials(sig, g, i0, i1, s_grid, I0s, I1s):
    """int_0^s p(s') g(s') ds' (g piecewise linear on sig, p the Beta density) on s_grid."""
    dl = np.diff(sig)
    w_left = (sig[1:] * np.diff(i0) - np.diff(i1)) / dl
    w_right = (np.diff(i1) - sig[:-1] * np.diff(i0)) / dl
    seg = w_left * g[:-1] + w_right * g[1:]
    cum = np.concatenate([[0.0], np.cumsum(seg)])
    j = np.clip(np.searchsorted(sig, s_grid, side="right") - 1, 0, sig.size - 2)
    slope = (g[j + 1] - g[j]) / dl[j]
    q0 = I0s - i0[j]
    q1 = I1s - i1[j]
    part = cum[j] + g[j] * q0 + slope * (q1 - sig[j] * q0)
    part = np.where(s_grid < sig[0], 0.0, np.where(s_grid >= sig[-1], cum[-1], part))
    dens = np.interp(s_grid, sig, g, left=0.0, right=0.0)
    return part, dens


@dataclass
class GroupsPosterior:
    """Reference marginals of eps and of each group's s (``posterior_grid_groups``).

    ``s[j]`` is a PosteriorGrid-like record of group j's strength: (s_grid, s_pdf,
    s_cdf_values) or s_fixed.  ``group(j)`` returns a :class:`PosteriorGrid` with the eps
    marginal and group j's s marginal.
    """

    eps_grid: np.ndarray
    eps_pdf: np.ndarray
    eps_cdf_values: np.ndarray
    s: list
    info: dict = field(default_factory=dict)

    def group(self, j):
        sg = self.s[j]
        return PosteriorGrid(self.eps_grid, self.eps_pdf, self.eps_cdf_values, info=self.info, **sg)

    def eps_cdf(self, x):
        return _cdf_at(x, self.eps_grid, self.eps_cdf_values, self.eps_pdf)

    def eps_quantile(self, q):
        return _inv_cdf(self.eps_grid, self.eps_cdf_values, q)

    def s_cdf(self, j, x):
        return self.group(j).s_cdf(x)

    def s_quantile(self, j, q):
        return self.group(j).s_quantile(q)


def _solve(G, delta, eps_prior, T, rows, uwin, dn, n_s, s_extra=None):
    """Posterior on eps rows T[rows] (and each beta group's s) given u-windows.

    Returns a dict with E, log pdf (unnormalised), per-group log Z and row data, and the
    normalised marginals.
    """
    E = T[rows]
    lprior = _log_eps_prior(eps_prior, E)
    logZ, rowdata = [], []
    for j, g in enumerate(G):
        if g.s_kind == "fixed":
            logZ.append(_fixed_log_z(g, E, delta))
            rowdata.append(None)
            continue
        rd = _beta_rows(g, T, rows, uwin[j][0], uwin[j][1], dn, delta)
        gmax = max((lg.max() for _, lg in rd if lg.size and np.isfinite(lg).any()), default=0.0)
        z = np.full(E.size, -np.inf)
        for r, (sig, lg) in enumerate(rd):
            if E[r] == 0:
                z[r] = np.nan
            elif sig.size >= 2:
                w, _, _ = _beta_seg_weights(g.a, g.b, sig)
                val = w @ np.exp(lg - gmax)
                z[r] = np.log(val) + gmax if val > 0 else -np.inf
        logZ.append(z)
        rowdata.append((rd, gmax))
    logZ = np.array(logZ)  # (n_groups, n_rows)
    # eps = 0 (only as the first row of a grid starting at 0): linear extrapolation of the
    # likelihood product from the next two rows
    llik = logZ.sum(axis=0)
    zero = E == 0
    if zero.any():
        i = np.flatnonzero(zero)[0]
        m = np.nanmax(llik[i + 1 : i + 3])
        if np.isfinite(m):
            l1, l2 = np.exp(llik[i + 1] - m), np.exp(llik[i + 2] - m)
            l0 = l1 + (l1 - l2) * (E[i + 1] - E[i]) / (E[i + 2] - E[i + 1])
            llik[i] = np.log(l0) + m if l0 > 0 else -np.inf
        else:
            llik[i] = -np.inf
    lpdf = lprior + llik
    lpdf = np.where(np.isnan(lpdf), -np.inf, lpdf)
    M = lpdf.max()
    pdf = np.exp(lpdf - M)
    cdf = _cumtrapz(E, pdf)
    norm = cdf[-1]
    pdf, cdf = pdf / norm, cdf / norm
    wE = np.zeros(E.size)
    dE = np.diff(E)
    wE[:-1] += 0.5 * dE
    wE[1:] += 0.5 * dE
    s_out = []
    for j, g in enumerate(G):
        if g.s_kind == "fixed":
            s_out.append({"s_fixed": g.s0})
            continue
        rd, gmax = rowdata[j]
        s_grid = np.union1d(np.linspace(0.0, 1.0, n_s), np.geomspace(1e-6, 1e-3, 61))
        if s_extra is not None and s_extra[j] is not None:
            s_grid = np.union1d(s_grid, s_extra[j])
        a, bb = g.a, g.b
        I0s = special.betainc(a, bb, s_grid)
        I1s = special.betainc(a + 1.0, bb, s_grid) * (a / (a + bb))
        with np.errstate(divide="ignore"):
            ps = np.exp(
                special.xlogy(a - 1, s_grid)
                + special.xlog1py(bb - 1, -s_grid)
                - special.betaln(a, bb)
            )
        # weight of each row: the eps posterior with this group's own factor divided out
        with np.errstate(invalid="ignore", over="ignore"):
            lw = lpdf - logZ[j] + gmax - M
            wp = np.where(np.isfinite(lw), wE * np.exp(lw) / norm, 0.0)
        s_cdf = np.zeros(s_grid.size)
        s_den = np.zeros(s_grid.size)
        parts = []
        for r, (sig, lg) in enumerate(rd):
            if sig.size < 2 or wp[r] == 0:
                parts.append(None)
                continue
            gv = np.exp(lg - gmax)
            _, i0, i1 = _beta_seg_weights(a, bb, sig)
            part, dens = _s_partials(sig, gv, i0, i1, s_grid, I0s, I1s)
            s_cdf += wp[r] * part
            s_den += wp[r] * dens
            parts.append((part, dens))
        if zero.any():
            # the eps = 0 row: its eps mass spread like the s-integrand extrapolated from the
            # next two rows
            i = np.flatnonzero(zero)[0]
            if i + 2 < len(parts) and parts[i + 1] is not None and parts[i + 2] is not None:
                f = (E[i + 1] - E[i]) / (E[i + 2] - E[i + 1])
                p0 = np.maximum(0.0, parts[i + 1][0] + (parts[i + 1][0] - parts[i + 2][0]) * f)
                d0 = np.maximum(0.0, parts[i + 1][1] + (parts[i + 1][1] - parts[i + 2][1]) * f)
                if p0[-1] > 0:
                    c0 = wE[i] * pdf[i] / p0[-1]
                    s_cdf += c0 * p0
                    s_den += c0 * d0
        tot = s_cdf[-1]
        s_cdf = np.maximum.accumulate(np.clip(s_cdf / tot, 0.0, 1.0)) if tot > 0 else s_cdf
        with np.errstate(invalid="ignore"):
            s_pdf = s_den * ps / tot if tot > 0 else s_den
        s_out.append({"s_grid": s_grid, "s_pdf": s_pdf, "s_cdf_values": s_cdf})
    return {
        "E": E,
        "lpdf": lpdf,
        "pdf": pdf,
        "cdf": cdf,
        "logZ": logZ,
        "lprior": lprior,
        "rowdata": rowdata,
        "s": s_out,
    }


_WIN = 30.0  # window: where the log density is within 30 of its maximum (plus padding)


def _windows(G, res, T, rows, pad=2):
    """eps window and each beta group's u-window from a (coarse) solution."""
    E = res["E"]
    lpdf = res["lpdf"]
    ok = np.flatnonzero(lpdf > lpdf.max() - _WIN)
    k0, k1 = max(ok[0] - pad, 0), min(ok[-1] + pad, E.size - 1)
    ewin = (E[k0], E[k1])
    uwins = []
    for j, g in enumerate(G):
        if g.s_kind == "fixed":
            uwins.append(None)
            continue
        rd, gmax = res["rowdata"][j]
        best = -np.inf
        cells = []
        for r, (sig, lg) in enumerate(rd):
            if sig.size == 0 or not np.isfinite(res["lpdf"][r]):
                continue
            with np.errstate(divide="ignore"):
                lps = special.xlogy(g.a - 1, sig) + special.xlog1py(g.b - 1, -sig)
            other = res["lprior"][r] + res["logZ"][:, r].sum() - res["logZ"][j, r]
            jl = other + lps + lg
            jl = np.where(np.isnan(jl), -np.inf, jl)
            cells.append((sig * E[r], jl))
            if jl.size:
                best = max(best, jl.max())
        us = np.concatenate([u[jl > best - _WIN] for u, jl in cells])
        i0 = max(np.searchsorted(T, us.min()) - pad, 0)
        i1 = min(np.searchsorted(T, us.max()) + pad, T.size - 1)
        uwins.append((T[i0], T[i1]))
    return ewin, uwins


def posterior_grid_groups(
    groups,
    delta,
    eps_prior=("halfnormal", 1.0),
    eps_max=None,
    n_s=2001,
    refine=1.0,
    zoom=None,
    n_window=120,
    n_eps=None,
):
    """Reference marginals of eps and of each group's strength for several evidence groups.

    groups: list of (counts, s_prior) or (counts, s_prior, likelihood) where counts is
    (x, n0, y, n1) as in :func:`posterior_grid`, s_prior is ("beta", a, b) or ("fixed", s0)
    with 0 <= s0 <= 1 (s0 = 1: the band collapses onto the boundary of R, see
    ``_log_boundary_mass``), and likelihood is None (binomial) or
    {"likelihood": "bivariate_normal", "tau": tau, "rho": rho} (paper eq. 7 at fixed tau, rho;
    a few bases only).  Each group has its own strength; eps is shared.  Given eps the groups
    are independent, so p(eps | data) is prop. to p(eps) prod_g int p(s_g) L_g(eps, s_g) ds_g,
    and the marginal of s_g weights the per-row s-integrals of group g by the other groups'
    factors.  Identical count rows within a group are evaluated once (multiplicities).

    zoom: None (automatic), True or False.  Without zoom the eps/u grid is the data-adaptive
    grid of :func:`posterior_grid` over [0, eps_max].  With zoom (automatic when the number of
    distinct rows times the grid size is large, e.g. 1000 bases) a coarse pass locates the
    window where the joint density of (eps, u = s eps) is within e^-30 of its maximum, and a
    fine pass (n_window points across each window, times refine) is computed there; windows
    whose edges are not negligible (log density within 20 of the maximum) are widened and
    recomputed.  Mass outside the final window is neglected (< e^-20 relative).

    Returns a :class:`GroupsPosterior`.
    """
    G = [_parse_group(spec) for spec in groups]
    delta = float(delta)
    t_max = float(eps_max) if eps_max is not None else _default_eps_max(eps_prior)
    all_terms = [t for g in G for t in g.terms]
    dn = _lobatto(delta, _n_dnodes(delta, refine))
    T0 = T0base = _t_grid(all_terms, delta, t_max, refine)
    if n_eps is not None and T0.size < n_eps:
        T0 = np.union1d(T0, np.linspace(0.0, t_max, int(n_eps)))
    for s0 in {g.s0 for g in G if g.s_kind == "fixed" and 0.0 < g.s0 < 1.0}:
        T0 = np.union1d(T0, (T0base / s0)[T0base / s0 <= t_max])
    # cost in table entries: K per grid point for beta groups, ~2 per row for fixed ones
    n_beta = sum(len(g.terms) for g in G if g.s_kind == "beta")
    n_fixed = sum(len(g.terms) for g in G if g.s_kind == "fixed")
    work = (n_beta * dn.size + 2 * n_fixed) * T0.size
    if zoom is None:
        zoom = work > 60_000
    info = {"eps_max": t_max, "prior_tail_mass": _eps_prior_tail(eps_prior, t_max)}
    full = [(0.0, np.inf)] * len(G)
    if not zoom:
        rows = np.arange(T0.size)
        res = _solve(G, delta, eps_prior, T0, rows, full, dn, n_s)
        info.update({"t_grid_size": int(T0.size), "zoom": False})
    else:
        T1 = _t_grid(all_terms, delta, t_max, 1.0, n_dense_max=60, tail_rel=0.1, growth=0.3)
        rows1 = np.arange(T1.size)
        with _coarse_quadrature():
            res = _solve(G, delta, eps_prior, T1, rows1, full, dn, n_s)
        ewin, uwins = _windows(G, res, T1, rows1, pad=2)
        n_fine = int(n_window * refine)
        # never coarser than a quarter of the narrowest feature of the likelihood in t
        h_max = 2.0 * _t_grid_h0(all_terms, delta, refine)
        n_pts, final, passes = max(n_fine // 3, 30), False, []
        for _ in range(12):
            T2, rows, uw2, s_extra = _zoom_grid(ewin, uwins, n_pts, h_max if final else np.inf)
            with _coarse_quadrature() if not final else contextlib.nullcontext():
                res = _solve(G, delta, eps_prior, T2, rows, uw2, dn, n_s, s_extra)
            passes.append((ewin, uwins, int(T2.size)))
            grow = _edge_check(G, res, ewin, uwins, t_max)
            if grow:
                ewin, uwins = grow
                continue
            new_e, new_u = _windows(G, res, T2, rows, pad=max(n_pts // 20, 2))
            if _shrunk(ewin, new_e) or any(
                uo is not None and _shrunk(uo, un) for uo, un in zip(uwins, new_u, strict=True)
            ):
                ewin, uwins = new_e, new_u
                continue
            if final:
                break
            final, n_pts = True, n_fine
        info.update(
            {
                "t_grid_size": int(T2.size),
                "zoom": True,
                "eps_window": ewin,
                "u_windows": uwins,
                "zoom_passes": passes,
                "coarse_grid_size": int(T1.size),
            }
        )
    info["n_eps"] = int(res["E"].size)
    info["n_distinct_rows"] = [len(g.terms) for g in G]
    return GroupsPosterior(res["E"], res["pdf"], res["cdf"], res["s"], info=info)


def _zoom_grid(ewin, uwins, n, h_max):
    def pts(w):
        return np.linspace(w[0], w[1], max(n, int(np.ceil((w[1] - w[0]) / h_max))) + 1)

    pieces = [pts(ewin)]
    for uw in uwins:
        if uw is not None:
            pieces.append(pts(uw))
    T2 = _dedupe(np.concatenate(pieces))
    rows = np.flatnonzero((T2 >= ewin[0]) & (T2 <= ewin[1]))
    uw2 = [uw if uw is not None else (0.0, np.inf) for uw in uwins]
    s_extra = [
        None
        if uw is None
        else np.linspace(uw[0] / ewin[1], min(1.0, uw[1] / max(ewin[0], 1e-300)), 1001)
        for uw in uwins
    ]
    return T2, rows, uw2, s_extra


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


def _dedupe(t, rel=1e-7):
    """Sorted unique points, dropping those within rel * spacing-scale of the previous one."""
    t = np.unique(t)
    if t.size < 3:
        return t
    tol = rel * (t[-1] - t[0])
    keep = np.concatenate([[True], np.diff(t) > tol])
    return t[keep]


def _shrunk(old, new):
    return (new[1] - new[0]) < 0.75 * (old[1] - old[0])


_EDGE = 20.0


def _edge_check(G, res, ewin, uwins, t_max):
    """Widened windows where an edge of the fine solution is not negligible, else None."""
    lp = res["lpdf"]
    top = lp.max()
    w = ewin[1] - ewin[0]
    grow = False
    lo, hi = ewin
    if lp[0] > top - _EDGE and ewin[0] > 0:
        lo, grow = max(0.0, ewin[0] - w), True
    if lp[-1] > top - _EDGE and ewin[1] < t_max:
        hi, grow = min(t_max, ewin[1] + w), True
    new_u = []
    for j, g in enumerate(G):
        uw = uwins[j]
        if uw is None:
            new_u.append(None)
            continue
        rd, _ = res["rowdata"][j]
        best, at_lo, at_hi = -np.inf, -np.inf, -np.inf
        for r, (sig, lg) in enumerate(rd):
            if sig.size == 0 or not np.isfinite(lp[r]):
                continue
            with np.errstate(divide="ignore"):
                lps = special.xlogy(g.a - 1, sig) + special.xlog1py(g.b - 1, -sig)
            other = res["lprior"][r] + res["logZ"][:, r].sum() - res["logZ"][j, r]
            jl = np.where(np.isnan(other + lps + lg), -np.inf, other + lps + lg)
            best = max(best, jl.max())
            at_lo = max(at_lo, jl[0])
            if sig[-1] < 1.0:
                at_hi = max(at_hi, jl[-1])
        ulo, uhi = uw
        wu = uw[1] - uw[0]
        if at_lo > best - _EDGE and uw[0] > 0:
            ulo, grow = max(0.0, uw[0] - wu), True
        if at_hi > best - _EDGE:
            uhi, grow = uw[1] + wu, True
        new_u.append((ulo, uhi))
    return ((lo, hi), new_u) if grow else None


def posterior_grid(
    counts,
    delta,
    eps_prior=("halfnormal", 1.0),
    s_prior=("beta", 1.0, 1.0),
    eps_max=None,
    n_eps=None,
    n_s=2001,
    refine=1.0,
    zoom=False,
):
    """Reference marginal posteriors of eps and s.

    counts: (x, n0, y, n1) array-likes (false positives, negatives challenged,
    false negatives, positives challenged) for the n challenge bases.
    eps_prior: ("halfnormal", scale) or ("lognormal", mu, sigma).
    s_prior: ("beta", a, b) or ("fixed", s0) with 0 <= s0 <= 1 (s0 = 1: the limit where the
    band R_s collapses onto the boundary of R(eps, delta)).
    n_eps: ignored unless given, then the dense spacing is capped so that at least
    n_eps points cover [0, eps_max] (the grid is otherwise data-adaptive).
    n_s: number of uniform points of the s output grid.
    refine: grid refinement factor (>1 = finer t/eps grid and more d nodes; for convergence
    checks).
    zoom: see :func:`posterior_grid_groups` (off by default here: one grid over [0, eps_max];
    None = automatic).
    """
    gp = posterior_grid_groups(
        [(counts, s_prior)],
        delta,
        eps_prior,
        eps_max=eps_max,
        n_s=n_s,
        refine=refine,
        zoom=zoom,
        n_eps=n_eps,
    )
    return gp.group(0)


# --------------------------------------------------------------------------- eq. 7


_GL8_Z, _GL8_W = np.polynomial.legendre.leggauss(8)
_GL6_Z, _GL6_W = np.polynomial.legendre.leggauss(6)
_SD_STEPS = np.array([0.0, 1.0, 2.0, 3.0, 5.0, 8.0, 12.0, 18.0])
_COND_STEPS = np.array([-7.0, -4.0, -2.0, -1.0, 0.0, 1.0, 2.0, 4.0, 7.0])


class _BVNBase:
    """A base under the bivariate normal of paper eq. 7 at fixed (tau, rho).

    As written in docs/correlated.md: with the rates shrunk by half a count,
    a~ = (N0 alpha + 1/2) / (N0 + 1) and b~ likewise,
    (X, Y) ~ N2((N0 alpha, N1 beta), [[v0, c], [c, v1]]) with
    v0 = N0 a~ (1 - a~) (1 + (N0 - 1) tau), v1 likewise and
    c = N0 N1 rho sqrt(a~ (1 - a~) b~ (1 - b~)), so corr(X, Y) = r = rho sqrt(N0 N1 / (c0 c1))
    with c0 = 1 + (N0 - 1) tau, c1 = 1 + (N1 - 1) tau.  The band masses are integrals of this
    density (as a function of alpha, beta) over parts of the unit square, by brute-force
    nested Gauss-Legendre quadrature: outer panels in alpha broken at the boundary's kinks, at
    multiples of the data's sd and at the pre-images of those in beta; inner panels in beta
    on [A(alpha), B(alpha)] broken at multiples of the sd around the data and around the
    conditional mean given alpha.  No truncation to a box.
    """

    def __init__(self, x, n0, y, n1, tau, rho):
        x, n0, y, n1 = int(x), int(n0), int(y), int(n1)
        if not (0 <= x <= n0 and 0 <= y <= n1):
            raise ValueError("need 0 <= x <= n0 and 0 <= y <= n1")
        self.x, self.n0, self.y, self.n1, self.tau, self.rho = x, n0, y, n1, tau, rho
        self.c0, self.c1 = 1.0 + (n0 - 1) * tau, 1.0 + (n1 - 1) * tau
        if not (self.c0 > 0 and self.c1 > 0):
            raise ValueError(f"tau = {tau} is not admissible for N = {n0}, {n1}")
        self.r = rho * np.sqrt(n0 * n1 / (self.c0 * self.c1))
        if not abs(self.r) < 1:
            raise ValueError(f"rho = {rho} is not admissible (|corr(X, Y)| = {abs(self.r):.3g})")
        self.log_norm = 0.0
        self.mx, self.my = x / n0, y / n1
        self.sx = np.sqrt(self._va(self.mx)) / n0
        self.sy = np.sqrt(self._vb(self.my)) / n1
        self.qa = np.unique(
            np.clip(
                np.concatenate([self.mx - _SD_STEPS * self.sx, self.mx + _SD_STEPS * self.sx]), 0, 1
            )
        )
        self.qb = np.unique(
            np.clip(
                np.concatenate([self.my - _SD_STEPS * self.sy, self.my + _SD_STEPS * self.sy]), 0, 1
            )
        )
        self._refl = None
        self._logq = None

    def _va(self, a):
        sa = (self.n0 * a + 0.5) / (self.n0 + 1.0)
        return self.n0 * sa * (1.0 - sa) * self.c0

    def _vb(self, b):
        sb = (self.n1 * b + 0.5) / (self.n1 + 1.0)
        return self.n1 * sb * (1.0 - sb) * self.c1

    def logg(self, a, b):
        """log density of eq. 7 at the observed (X, Y) as a function of (alpha, beta)."""
        va, vb = self._va(a), self._vb(b)
        zx = (self.x - self.n0 * a) / np.sqrt(va)
        zy = (self.y - self.n1 * b) / np.sqrt(vb)
        r = self.r
        q = (zx * zx - 2.0 * r * zx * zy + zy * zy) / (1.0 - r * r)
        return -np.log(2.0 * np.pi) - 0.5 * np.log(va * vb * (1.0 - r * r)) - 0.5 * q

    def moments(self):
        return (self.mx, self.sx), (self.my, self.sy)

    def reflected(self):
        if self._refl is None:
            self._refl = _BVNBase(
                self.n0 - self.x, self.n0, self.n1 - self.y, self.n1, self.tau, self.rho
            )
        return self._refl

    def _breaks(self, c, tl, upper):
        q = self.qb[None, :]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            kl = np.concatenate([tl / (1 + c), tl / c, tl], axis=1)
            pts = [kl, (tl - q) / c, tl - c * q]
            if upper:
                pts += [1.0 - kl, 1.0 - (tl - 1.0 + q) / c, 1.0 - tl + c * (1.0 - q)]
        return np.concatenate(pts, axis=1)

    def _nested(self, bps, a_spec, b_spec):
        """log int_0^1 int_{A(alpha)}^{B(alpha)} g d(beta) d(alpha) per row of breakpoints."""
        n = bps.shape[0]
        allb = np.concatenate(
            [bps, np.broadcast_to(self.qa, (n, self.qa.size)), np.zeros((n, 1)), np.ones((n, 1))],
            axis=1,
        )
        allb = np.sort(np.clip(np.where(np.isfinite(allb), allb, 0.0), 0.0, 1.0), axis=1)
        lo, hi = allb[:, :-1, None], allb[:, 1:, None]
        half = 0.5 * (hi - lo)
        a = lo + half * (_GL8_Z + 1.0)  # (n, P, 8)
        wa = half * _GL8_W
        rows = np.arange(n)[:, None, None]
        A = np.zeros_like(a) if a_spec is None else _edge(a_spec, a, rows)
        B = np.ones_like(a) if b_spec is None else _edge(b_spec, a, rows)
        B = np.maximum(B, A)
        # inner breakpoints: around the data and around the conditional mean given alpha
        zx = (self.x - self.n0 * a) / np.sqrt(self._va(a))
        vb0 = self._vb(self.my)
        bc = (self.y - np.sqrt(vb0) * self.r * zx) / self.n1
        sc = np.sqrt(vb0 * (1.0 - self.r**2)) / self.n1
        ib = np.concatenate(
            [
                np.broadcast_to(self.qb, a.shape + (self.qb.size,)),
                bc[..., None] + sc * _COND_STEPS,
                A[..., None],
                B[..., None],
            ],
            axis=-1,
        )
        ib = np.sort(np.clip(ib, A[..., None], B[..., None]), axis=-1)
        lo2, hi2 = ib[..., :-1, None], ib[..., 1:, None]
        h2 = 0.5 * (hi2 - lo2)
        b = lo2 + h2 * (_GL6_Z + 1.0)  # (n, P, 8, Q, 6)
        w2 = h2 * _GL6_W
        with np.errstate(divide="ignore", invalid="ignore"):
            lt = self.logg(a[..., None, None], b) + np.log(w2)
            lt = np.where(w2 > 0, lt, -np.inf)
            m = lt.max(axis=(-2, -1))
            ms = np.where(np.isfinite(m), m, 0.0)
            inner = ms + np.log(np.exp(lt - ms[..., None, None]).sum(axis=(-2, -1)))
            inner = np.where(np.isfinite(m), inner, -np.inf)
            return _logsum(inner, wa)

    def log_total(self):
        """log of the integral of g over the whole unit square."""
        if self._logq is None:
            self._logq = float(self._nested(np.zeros((1, 1)), None, None)[0])
        return self._logq

    def _corner(self, t, d, chunk=8):
        t = np.atleast_1d(np.asarray(t, float))
        d = np.broadcast_to(np.asarray(d, float), t.shape)
        out = np.empty(t.size)
        for i0 in range(0, t.size, chunk):
            sl = slice(i0, i0 + chunk)
            c, tl = _params(t[sl], d[sl])
            out[sl] = self._nested(self._breaks(c, tl, False), None, ("h", c, tl))
        return out

    def log_tables(self, t, d, chunk=8):
        """(log C, log M): mass of g outside / inside R(t, d)."""
        t = np.atleast_1d(np.asarray(t, float))
        d = np.broadcast_to(np.asarray(d, float), t.shape)
        logc = np.logaddexp(self._corner(t, d), self.reflected()._corner(t, d))
        lq = self.log_total()
        with np.errstate(divide="ignore", invalid="ignore"):
            logm = lq + np.log1p(-np.exp(np.minimum(logc - lq, 0.0)))
        idx = np.flatnonzero(logc > lq + np.log(0.5))
        for i0 in range(0, idx.size, chunk):
            sl = idx[i0 : i0 + chunk]
            c, tl = _params(t[sl], d[sl])
            logm[sl] = self._nested(self._breaks(c, tl, True), ("h", c, tl), ("up", c, tl))
        return logc, logm

    def log_lens(self, t1, d1, t2, d2, chunk=8):
        """log mass of g on R(t2, d2) minus R(t1, d1) (t1 <= t2, d1 <= d2)."""
        arrs = np.broadcast_arrays(*(np.atleast_1d(np.asarray(v, float)) for v in (t1, d1, t2, d2)))
        shape = arrs[0].shape
        t1, d1, t2, d2 = (v.ravel() for v in arrs)
        parts = []
        for b in (self, self.reflected()):
            out = np.empty(t1.size)
            for i0 in range(0, t1.size, chunk):
                sl = slice(i0, i0 + chunk)
                c1, tl1 = _params(t1[sl], d1[sl])
                c2, tl2 = _params(t2[sl], d2[sl])
                bps = np.concatenate([b._breaks(c1, tl1, False), b._breaks(c2, tl2, False)], axis=1)
                out[sl] = b._nested(bps, ("h", c2, tl2), ("h", c1, tl1))
            parts.append(out)
        return np.logaddexp(parts[0], parts[1]).reshape(shape)

    def log_joint(self, a, b):
        return self.logg(a, b)

    @property
    def qx(self):
        return self.qa

    def breakpoints(self, c, tl, upper=True):
        return self._breaks(c, tl, upper)

    def log_boundary(self, eps, delta):
        """The s = 1 limit of the band mass over (1 - s), as ``_log_boundary_mass``."""
        return _log_boundary_mass(self, eps, delta)


def bvn_band_integral(x, n0, y, n1, tau, rho, eps, s, delta):
    """log of the integral of the eq. 7 density over R_s(eps, delta) (one base)."""
    b = _BVNBase(x, n0, y, n1, tau, rho)
    return b.log_lens(s * np.asarray(eps, float), s * delta, eps, delta)


def bvn_posterior_bruteforce(fp, n0, fn, n1, tau, rho, m=500, eps_scale=10.0):
    """Posterior CDF of eps for the bivariate normal likelihood at fixed (tau, rho), delta = 0,
    HalfNormal(eps_scale) x Uniform priors, by brute force: eq. 7 written out in numpy on an
    m x m midpoint grid of (alpha, beta); at delta = 0 a point is in R_s(eps) iff
    s eps < E <= eps with E = log((1 - hi) / lo) in folded coordinates, so each base's band
    integral is a difference of cumulative sums over the grid sorted by E.  Accurate to about
    a percentage point (the midpoint rule at the band's edges); the quadrature reference is
    ``posterior_grid_groups`` with a bivariate-normal group.  Returns (eps_grid, cdf).
    """
    g = (np.arange(m) + 0.5) / m
    A, B = (v.ravel() for v in np.meshgrid(g, g, indexing="ij"))
    swap = A + B > 1
    lo = np.where(swap, 1 - np.maximum(A, B), np.minimum(A, B))
    hi = np.where(swap, 1 - np.minimum(A, B), np.maximum(A, B))
    E = np.log((1 - hi) / lo)
    order = np.argsort(E)
    Es = E[order]
    cums = []
    for x, a0, y, a1 in zip(fp, n0, fn, n1, strict=True):
        c0, c1 = 1 + (a0 - 1) * tau, 1 + (a1 - 1) * tau
        sa, sb = (a0 * A + 0.5) / (a0 + 1), (a1 * B + 0.5) / (a1 + 1)
        va, vb = sa * (1 - sa) * a0 * c0, sb * (1 - sb) * a1 * c1
        r = rho * np.sqrt(a0 * a1 / (c0 * c1))
        zx, zy = (x - a0 * A) / np.sqrt(va), (y - a1 * B) / np.sqrt(vb)
        lg = -0.5 * np.log(va * vb) - (zx**2 - 2 * r * zx * zy + zy**2) / (2 * (1 - r * r))
        cums.append(np.concatenate([[0.0], np.cumsum(np.exp(lg - lg.max())[order])]))
    eps_grid = np.linspace(0.02, 40.0, 2000)
    s_grid = np.linspace(0.0025, 0.9975, 200)
    E1, S1 = np.meshgrid(eps_grid, s_grid, indexing="ij")
    area = 2 * (1 / (1 + np.exp(S1 * E1)) - 1 / (1 + np.exp(E1)))
    lp = -0.5 * (E1 / eps_scale) ** 2
    i_hi = np.searchsorted(Es, E1, side="right")
    i_lo = np.searchsorted(Es, S1 * E1, side="right")
    for c in cums:
        lp = lp + np.log(np.maximum(c[i_hi] - c[i_lo], 1e-300)) - np.log(area)
    p = np.exp(lp - lp.max()).sum(axis=1)
    # each eps point stands for a cell of width h: the cumulative sum is the CDF at its right end
    h = eps_grid[1] - eps_grid[0]
    return eps_grid + 0.5 * h, np.cumsum(p) / p.sum()
