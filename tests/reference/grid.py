"""Grids of the quadrature reference: the common 1-D grid T of eps and u = s eps, interpolation
in delta, priors of eps, and the marginal's CDF and quantiles (``PosteriorGrid``).

numpy and scipy only: no code shared with ``samplers/``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import special


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
