"""The correlated likelihood of paper eq. 7 (bivariate normal at fixed tau, rho) by quadrature.

``_BVNBase`` plays the role of the binomial base (``tests/reference/binomial.py``) with
brute-force nested Gauss-Legendre quadrature of the bivariate normal density over the regions;
``bvn_posterior_bruteforce`` is an independent grid posterior of eps.  numpy and scipy only: no
code shared with ``samplers/``.
"""

from __future__ import annotations

import numpy as np

from tests.reference.geometry import _edge, _params
from tests.reference.quadrature import _log_boundary_mass, _logsum

_GL8_Z, _GL8_W = np.polynomial.legendre.leggauss(8)
_GL6_Z, _GL6_W = np.polynomial.legendre.leggauss(6)
_SD_STEPS = np.array([0.0, 1.0, 2.0, 3.0, 5.0, 8.0, 12.0, 18.0])
_COND_STEPS = np.array([-7.0, -4.0, -2.0, -1.0, 0.0, 1.0, 2.0, 4.0, 7.0])


class _BVNBase:
    """A base under the bivariate normal of paper eq. 7 at fixed (tau, rho).

    As written in docs/validation/correlated.md: with the rates shrunk by half a count,
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
