"""The binomial likelihood of one challenge base by quadrature (paper Sec. 2.1).

``X ~ Binom(N0, alpha)``, ``Y ~ Binom(N1, beta)``, ``(alpha, beta)`` uniform on the band
``R(eps, delta) minus R(s eps, s delta)``: every mass is a 1-D integral over ``x`` of a Beta
density times a difference of regularised incomplete beta functions (SciPy's ``betainc``).
numpy and scipy only: no code shared with ``samplers/``.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from tests.reference import quadrature
from tests.reference.geometry import _edge, _log_area_slope, _params, log_region_area
from tests.reference.quadrature import _log_boundary_mass, _panels

_X_LEVELS = np.array([1e-300, 1e-100, 1e-40, 1e-20, 1e-12, 1e-8, 1e-5, 1e-3, 0.02, 0.1, 0.3, 0.5])
_Y_LEVELS = np.array([1e-30, 1e-15, 1e-8, 1e-4, 0.01, 0.1, 0.35, 0.5])


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
    # the rule is read at call time: quadrature._coarse_quadrature swaps it for coarse passes
    x = lo + half * (quadrature._GL_Z + 1.0)
    w = half * quadrature._GL_W
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


def _log_lens_mass(base, t1, d1, t2, d2, chunk=128, reflect=True):
    """log of the Beta-product mass of R(t2, d2) minus R(t1, d1) (t1 <= t2, d1 <= d2).

    The lens is the difference of the lower-left corners plus the difference of the
    upper-right corners; the latter is a lower-left difference for the reflected base.
    Pointwise in x this is P(h2(x) < Y < h1(x)): positive terms only, no cancellation.
    """
    arrs = np.broadcast_arrays(*(np.atleast_1d(np.asarray(v, float)) for v in (t1, d1, t2, d2)))
    shape = arrs[0].shape
    t1, d1, t2, d2 = (v.ravel() for v in arrs)
    parts = []
    for b in (base, base.reflected()) if reflect else (base,):
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
    if not reflect:
        return parts[0].reshape(shape)
    return np.logaddexp(parts[0], parts[1]).reshape(shape)


def log_marginal_likelihood(x, n0, y, n1, eps, s, delta, reflect=True):
    """log L_i(eps, s) = log[(1/|R_s|) int_{R_s} Binom(x|n0,a) Binom(y|n1,b) da db].

    ``eps`` and ``s`` broadcast; requires eps > 0 (or delta > 0) and 0 <= s <= 1.  At s = 1
    the band collapses onto the boundary of R(eps, delta) and L is the limit s -> 1 of the
    ratio (L'Hopital in s: a weighted line integral, see ``_log_boundary_mass``).
    ``reflect=False``: R_s is replaced by its lower-left half {a + b <= 1} (half the area, by
    the band's symmetry through (1/2, 1/2)).
    """
    base = _Base(x, n0, y, n1)
    eps, s = np.broadcast_arrays(np.asarray(eps, float), np.asarray(s, float))
    if np.any((s < 0) | (s > 1)):
        raise ValueError("need 0 <= s <= 1")
    out = np.empty(eps.shape)
    one = s == 1.0
    e1, s1 = eps[~one], s[~one]
    if e1.size:
        lm = _log_lens_mass(base, s1 * e1, s1 * delta, e1, delta, reflect=reflect)
        with np.errstate(divide="ignore"):
            out[~one] = lm.reshape(e1.shape) - log_region_area(e1, s1, delta) - base.log_norm
    if one.any():
        e = eps[one]
        lb = _log_boundary_mass(base, e, delta, reflect=reflect)
        out[one] = lb - _log_area_slope(e, delta) - base.log_norm
    if not reflect:
        out = out + np.log(2.0)
    return out if out.ndim else float(out)


def marginal_likelihood(x, n0, y, n1, eps, s, delta):
    """L_i(eps, s) (see :func:`log_marginal_likelihood`)."""
    return np.exp(log_marginal_likelihood(x, n0, y, n1, eps, s, delta))
