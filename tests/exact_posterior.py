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
linear interpolation of the likelihood), which is robust for ``a, b < 1``.
"""

from __future__ import annotations

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
    "PosteriorGrid",
]

_GL_M = 10
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

    def moments(self):
        def ms(a, b):
            m = a / (a + b)
            return m, np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))

        return ms(self.ax, self.bx), ms(self.ay, self.by)

    def logfx(self, x):
        with np.errstate(divide="ignore", invalid="ignore"):
            return special.xlogy(self.ax - 1, x) + special.xlog1py(self.bx - 1, -x) - self.lbx

    def F(self, v):
        return special.betainc(self.ay, self.by, np.clip(v, 0.0, 1.0))

    def S(self, v):
        # 1 - I_v(a, b) = I_{1-v}(b, a)  (scipy's betaincc is much slower)
        return special.betainc(self.by, self.ay, 1.0 - np.clip(v, 0.0, 1.0))

    def interval_mass(self, a, b, fs_a=None, fs_b=None):
        """P(a < Y < b) for a <= b, evaluated in the more accurate tail."""
        fa, sa = fs_a if fs_a is not None else (self.F(a), self.S(a))
        fb, sb = fs_b if fs_b is not None else (self.F(b), self.S(b))
        out = np.where(b <= self.med_y, fb - fa, np.where(a >= self.med_y, sa - sb, 1 - fa - sb))
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

    def reflected(self):
        """The base of (1 - alpha, 1 - beta): maps the upper-right corner to the lower-left."""
        return _Base(self.n0 - self.x, self.n0, self.n1 - self.y, self.n1)


def _nodes(bps, qx):
    """Gauss-Legendre nodes/weights on panels from breakpoints (n, k) plus fixed qx."""
    n = bps.shape[0]
    allb = np.concatenate(
        [bps, np.broadcast_to(qx, (n, qx.size)), np.zeros((n, 1)), np.ones((n, 1))], axis=1
    )
    allb = np.where(np.isfinite(allb), allb, 0.0)
    allb = np.sort(np.clip(allb, 0.0, 1.0), axis=1)
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


def _corner_and_inside(base, t, d, chunk=256):
    """log C(t, d) (mass outside R) and log M(t, d) (mass inside R) for arrays t, d.

    C is the sum of two lower-left corner masses (the base and its reflection), which keeps
    relative accuracy for tiny corner masses; M is integrated directly over [lo(x), up(x)].
    """
    t = np.atleast_1d(np.asarray(t, dtype=float))
    d = np.broadcast_to(np.asarray(d, dtype=float), t.shape)
    logm = np.empty(t.shape)
    for i0 in range(0, t.size, chunk):
        sl = slice(i0, i0 + chunk)
        c, tl = _params(t[sl], d[sl])
        x, w = _nodes(base.breakpoints(c, tl), base.qx)
        c3, tl3 = c[:, :, None], tl[:, :, None]
        lo = _h(x, c3, tl3)
        up = np.maximum(1.0 - _h(1.0 - x, c3, tl3), lo)
        with np.errstate(divide="ignore"):
            linside = np.log(base.interval_mass(lo, up))
        logm[sl] = _logsum(base.logfx(x) + linside, w)
    logc = np.logaddexp(_log_corner(base, t, d, chunk), _log_corner(base.reflected(), t, d, chunk))
    return logc, logm


def _log_corner(base, t, d, chunk=256):
    """log of the mass of the lower-left corner {y < h(x)} of R(t, d)."""
    t = np.atleast_1d(np.asarray(t, dtype=float))
    d = np.broadcast_to(np.asarray(d, dtype=float), t.shape)
    out = np.empty(t.shape)
    for i0 in range(0, t.size, chunk):
        sl = slice(i0, i0 + chunk)
        c, tl = _params(t[sl], d[sl])
        x, w = _nodes(base.breakpoints(c, tl, upper=False), base.qx)
        with np.errstate(divide="ignore"):
            lf = np.log(base.F(_h(x, c[:, :, None], tl[:, :, None])))
        out[sl] = _logsum(base.logfx(x) + lf, w)
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
            x, w = _nodes(bps, b.qx)
            h1 = _h(x, c1[:, :, None], tl1[:, :, None])
            h2 = _h(x, c2[:, :, None], tl2[:, :, None])
            mass = b.interval_mass(h2, np.maximum(h1, h2))
            with np.errstate(divide="ignore"):
                out[sl] = _logsum(b.logfx(x) + np.log(mass), w)
        parts.append(out)
    return np.logaddexp(parts[0], parts[1]).reshape(shape)


def log_marginal_likelihood(x, n0, y, n1, eps, s, delta):
    """log L_i(eps, s) = log[(1/|R_s|) int_{R_s} Binom(x|n0,a) Binom(y|n1,b) da db].

    ``eps`` and ``s`` broadcast; requires eps > 0 (or delta > 0) and 0 <= s < 1.
    """
    base = _Base(x, n0, y, n1)
    eps, s = np.broadcast_arrays(np.asarray(eps, float), np.asarray(s, float))
    lm = _log_lens_mass(base, s * eps, s * delta, eps, delta).reshape(eps.shape)
    with np.errstate(divide="ignore"):
        out = lm - log_region_area(eps, s, delta) - base.log_norm
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


def _t_grid(bases, delta, t_max, refine=1.0, h_min=5e-4, n_dense_max=4000):
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
        h = min(h * (1.0 + 0.05 / refine), max(0.1, 0.01 * t) / refine)
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
        return np.interp(x, self.eps_grid, self.eps_cdf_values, left=0.0, right=1.0)

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


def posterior_grid(
    counts,
    delta,
    eps_prior=("halfnormal", 1.0),
    s_prior=("beta", 1.0, 1.0),
    eps_max=None,
    n_eps=None,
    n_s=2001,
    refine=1.0,
):
    """Reference marginal posteriors of eps and s.

    counts: (x, n0, y, n1) array-likes (false positives, negatives challenged,
    false negatives, positives challenged) for the n challenge bases.
    eps_prior: ("halfnormal", scale) or ("lognormal", mu, sigma).
    s_prior: ("beta", a, b) or ("fixed", s0) with 0 <= s0 < 1.
    n_eps: ignored unless given, then the dense spacing is capped so that at least
    n_eps points cover [0, eps_max] (the grid is otherwise data-adaptive).
    n_s: number of uniform points of the s output grid.
    refine: grid refinement factor (>1 = finer t/eps grid; for convergence checks).
    """
    x, n0, y, n1 = (np.atleast_1d(np.asarray(v)).astype(int) for v in counts)
    bases = [_Base(*row) for row in zip(x, n0, y, n1, strict=True)]
    delta = float(delta)
    t_max = float(eps_max) if eps_max is not None else _default_eps_max(eps_prior)
    T = _t_grid(bases, delta, t_max, refine)
    if n_eps is not None and T.size < n_eps:
        T = np.union1d(T, np.linspace(0.0, t_max, int(n_eps)))
    info = {
        "t_grid_size": int(T.size),
        "eps_max": t_max,
        "prior_tail_mass": _eps_prior_tail(eps_prior, t_max),
    }

    if s_prior[0] == "fixed":
        s0 = float(s_prior[1])
        E = T if s0 == 0 else np.union1d(T, (T / s0)[T / s0 <= t_max])
        E1 = E[1:]
        logg = np.zeros(E1.size)
        for b in bases:
            lm = _log_lens_mass(b, s0 * E1, s0 * delta, E1, delta)
            with np.errstate(divide="ignore"):
                logg += lm - log_region_area(E1, s0, delta)
        logp = logg + _log_eps_prior(eps_prior, E1)
        p1 = np.exp(logp - logp.max())
        g = np.exp(logg - logp.max())
        g0 = max(0.0, g[0] + (g[0] - g[1]) * E1[0] / (E1[1] - E1[0]))
        p0 = g0 * np.exp(_log_eps_prior(eps_prior, 0.0))
        pdf = np.concatenate([[p0], p1])
        cdf = _cumtrapz(E, pdf)
        z = cdf[-1]
        info["n_eps"] = int(E.size)
        return PosteriorGrid(E, pdf / z, cdf / z, s_fixed=s0, info=info)

    if s_prior[0] != "beta":
        raise ValueError(f"unknown s prior {s_prior!r}")
    a, bb = float(s_prior[1]), float(s_prior[2])

    # tables of C and M on T x (d nodes)
    dn = _lobatto(delta, 1 if delta == 0 else (4 if delta <= 1e-3 else 8))
    tabC, tabM = [], []
    for b in bases:
        cs, ms = [], []
        for dm in dn:
            lc, lm = _corner_and_inside(b, T, dm)
            cs.append(lc)
            ms.append(lm)
        tabC.append(np.array(cs))  # (K, nT)
        tabM.append(np.array(ms))

    # rows: eps = T[k], k >= 1; u-nodes T[0..k]
    rows = []
    gmax = -np.inf
    for k in range(1, T.size):
        ek = T[k]
        sig = T[: k + 1] / ek
        sig[-1] = 1.0
        sj = sig[:-1]
        lag = _lagrange(dn, sj * delta)  # (k, K)
        larea = log_region_area(ek, sj, delta)
        lg = np.zeros(k)
        for i in range(len(bases)):
            lc1 = _interp_log(lag, tabC[i][:, :k])
            lm1 = _interp_log(lag, tabM[i][:, :k])
            lc2, lm2 = tabC[i][-1, k], tabM[i][-1, k]
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                via_c = lc1 + np.log(-np.expm1(np.minimum(lc2 - lc1, 0.0)))
                via_m = lm2 + np.log(-np.expm1(np.minimum(lm1 - lm2, 0.0)))
                ld = np.where(lc1 <= lm2, via_c, via_m) - larea
            lg += np.where(np.isnan(ld), -np.inf, ld)
        rows.append((sig, lg))
        if np.isfinite(lg).any():
            gmax = max(gmax, lg.max())

    n_rows = len(rows)
    Z = np.zeros(n_rows)
    row_g = []
    for r, (sig, lg) in enumerate(rows):
        g = np.exp(lg - gmax)
        if g.size >= 2:
            gend = g[-1] + (g[-1] - g[-2]) * (1.0 - sig[-2]) / (sig[-2] - sig[-3])
        else:
            gend = g[-1]
        g = np.append(g, max(gend, 0.0))
        w, i0, i1 = _beta_seg_weights(a, bb, sig)
        Z[r] = w @ g
        row_g.append((sig, g, i0, i1))

    E = T
    Z0 = max(0.0, Z[0] + (Z[0] - Z[1]) * E[1] / (E[2] - E[1]))
    prior = np.exp(_log_eps_prior(eps_prior, E))
    Zall = np.concatenate([[Z0], Z])
    pdf = prior * Zall
    cdf = _cumtrapz(E, pdf)
    norm = cdf[-1]
    pdf, cdf = pdf / norm, cdf / norm

    # s marginal: exact partial product integrals per row, then trapezoid over eps
    s_grid = np.union1d(np.linspace(0.0, 1.0, n_s), np.geomspace(1e-6, 1e-3, 61))
    I0s = special.betainc(a, bb, s_grid)
    I1s = special.betainc(a + 1.0, bb, s_grid) * (a / (a + bb))
    with np.errstate(divide="ignore"):
        ps = np.exp(
            special.xlogy(a - 1, s_grid) + special.xlog1py(bb - 1, -s_grid) - special.betaln(a, bb)
        )
    part = np.zeros((n_rows, s_grid.size))
    dens = np.zeros((n_rows, s_grid.size))
    for r, (sig, g, i0, i1) in enumerate(row_g):
        w_left = (sig[1:] * np.diff(i0) - np.diff(i1)) / np.diff(sig)
        w_right = (np.diff(i1) - sig[:-1] * np.diff(i0)) / np.diff(sig)
        seg = w_left * g[:-1] + w_right * g[1:]
        cum = np.concatenate([[0.0], np.cumsum(seg)])
        j = np.clip(np.searchsorted(sig, s_grid, side="right") - 1, 0, sig.size - 2)
        dl = sig[j + 1] - sig[j]
        slope = (g[j + 1] - g[j]) / dl
        q0 = I0s - i0[j]
        q1 = I1s - i1[j]
        part[r] = cum[j] + g[j] * q0 + slope * (q1 - sig[j] * q0)
        dens[r] = np.interp(s_grid, sig, g)
    part0 = np.maximum(0.0, part[0] + (part[0] - part[1]) * E[1] / (E[2] - E[1]))
    dens0 = np.maximum(0.0, dens[0] + (dens[0] - dens[1]) * E[1] / (E[2] - E[1]))
    part = np.vstack([part0, part])
    dens = np.vstack([dens0, dens])
    wE = np.zeros(E.size)
    dE = np.diff(E)
    wE[:-1] += 0.5 * dE
    wE[1:] += 0.5 * dE
    wp = wE * prior / norm
    s_cdf = wp @ part
    s_cdf = np.maximum.accumulate(np.clip(s_cdf / s_cdf[-1], 0.0, 1.0))
    with np.errstate(invalid="ignore"):
        s_pdf = (wp @ dens) * ps
    info["n_eps"] = int(E.size)
    info["n_pairs"] = int(sum(r[0].size for r in row_g))
    return PosteriorGrid(E, pdf, cdf, s_grid, s_pdf, s_cdf, info=info)
