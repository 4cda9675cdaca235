"""Reference for one-run audits' guesses (the "guesses" likelihood): quadrature of the binomial.

numpy and scipy only; no code shared with ``samplers/`` or ``bayes_dp`` (see the package's
docstring).

Model (Steinke, Nasr and Jagielski's game with abstention): a row makes r guesses of fair
coins and gets v right; given (eps, s), v ~ Binomial(r, p) with the accuracy p uniform on
[expit(c s eps), expit(c eps)], c = 2 for pairs of models, else 1. In the error probability
y = 1 - p the wrong guesses e = r - v are Binomial(r, y) with y uniform on
[expit(-c eps), expit(-c s eps)], so

    P(v | r, eps, s) = (1 / (y_hi - y_lo)) int_{y_lo}^{y_hi} binom.pmf(e, r, y) dy.

* :func:`log_lik_quad` integrates ``scipy.stats.binom.pmf`` with ``scipy.integrate.quad`` (the
  independent check of the sampler's kernel, one value at a time);
* :func:`log_lik` is the same integral in closed form (``scipy.stats.beta``'s CDF and survival
  function, vectorised), checked against :func:`log_lik_quad` in
  ``tests/reference/test_guesses_reference.py``, for the posterior grids;
* :func:`posterior` tabulates the posterior of eps and of the strengths on a tensor grid,
  for one-run rows alone or with a group of challenge bases (their likelihood from
  :func:`tests.reference.binomial.log_marginal_likelihood`), sharing one strength s or each its
  own (then the three-dimensional integral over (eps, s_counts, s_guesses) factorises given eps).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import integrate, special, stats

from tests.reference.binomial import log_marginal_likelihood
from tests.reference.grid import _log_eps_prior

__all__ = ["Posterior", "log_lik", "log_lik_quad", "posterior"]


def _band(c, eps, s):
    """(y_lo, y_hi): the band of the error probability."""
    return special.expit(-c * eps), special.expit(-c * s * eps)


def log_lik_quad(r: int, v: int, c: float, eps: float, s: float) -> float:
    """log P(v | r, eps, s) by ``scipy.integrate.quad`` of ``scipy.stats.binom.pmf``.

    The integrand is scaled by its largest value on the band (at the mode e / r clipped to the
    band), and quad is told where the peak and its flanks lie, so that huge r (a peak a few
    1e-3 wide) and far tails (values below 1e-300 before scaling) are integrated accurately.
    A band narrower than 1e-13 relative (s = 1, eps = 0) is a point: the pmf there.
    """
    r, v = int(r), int(v)
    if r == 0:
        return 0.0
    e = r - v
    y_lo, y_hi = _band(float(c), float(eps), float(s))
    if y_hi - y_lo <= 1e-13 * y_hi:
        return float(stats.binom.logpmf(e, r, 0.5 * (y_lo + y_hi)))
    mode = min(max(e / r, y_lo), y_hi)
    top = float(stats.binom.logpmf(e, r, mode))
    sd = math.sqrt(max(mode * (1.0 - mode), 1.0 / r) / r)
    flanks = (-60, -20, -8, -3, -1, 0, 1, 3, 8, 20, 60)
    pts = sorted(x for x in {mode + k * sd for k in flanks} if y_lo < x < y_hi)
    val, _ = integrate.quad(
        lambda y: math.exp(stats.binom.logpmf(e, r, y) - top),
        y_lo,
        y_hi,
        points=pts or None,
        epsabs=0.0,
        epsrel=1e-12,
        limit=500,
    )
    return top + math.log(val) - math.log(y_hi - y_lo)


def log_lik(r, v, c, eps, s) -> np.ndarray:
    """log P(v | r, eps, s) in closed form, vectorised over ``eps`` and ``s`` (broadcast).

    ``P[y_lo < Y < y_hi] / ((r + 1) (y_hi - y_lo))`` with Y ~ Beta(e + 1, v + 1), the
    difference taken on the side where both terms are small (CDFs below the mode, survival
    functions above), in logs; bands narrower than 1e-9 relative are the pmf at their middle
    (the error is below 1e-9 times the log pmf's slope across the band). -inf where the
    probability is below a double's range (~1e-308): for the posterior grids, where such
    points carry no mass.
    """
    r, v, c = int(r), int(v), float(c)
    eps, s = np.broadcast_arrays(np.asarray(eps, dtype=float), np.asarray(s, dtype=float))
    if r == 0:
        return np.zeros(eps.shape)
    e = r - v
    y_lo, y_hi = _band(c, eps, s)
    a, b = e + 1.0, v + 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        # P[Y <= y] and P[Y > y], each accurate where it is small (scipy's betainc, betaincc)
        lc_hi, lc_lo = np.log(special.betainc(a, b, y_hi)), np.log(special.betainc(a, b, y_lo))
        ls_hi, ls_lo = np.log(special.betaincc(a, b, y_hi)), np.log(special.betaincc(a, b, y_lo))
        from_cdf = lc_hi + np.log1p(-np.exp(np.minimum(lc_lo - lc_hi, 0.0)))
        from_sf = ls_lo + np.log1p(-np.exp(np.minimum(ls_hi - ls_lo, 0.0)))
        mass = np.where(lc_hi < ls_lo, from_cdf, from_sf)
        band = mass - math.log(r + 1.0) - np.log(y_hi - y_lo)
    point = stats.binom.logpmf(e, r, 0.5 * (y_lo + y_hi))
    thin = (y_hi - y_lo) <= 1e-9 * y_hi
    out = np.where(thin, point, band)
    return np.where(np.isnan(out), -np.inf, out)


def _log_s_prior(s_prior, s):
    if s_prior[0] == "fixed":
        return np.zeros(np.shape(s))
    a, b = float(s_prior[1]), float(s_prior[2])
    if a < 1.0 or b < 1.0:
        raise ValueError("the reference's s panels need a Beta prior with a, b >= 1")
    with np.errstate(divide="ignore"):
        return stats.beta.logpdf(s, a, b)


def _features(rows):
    """Points of u = s eps (or of eps at s = 1) around each row's edge: where the accuracy
    floor expit(c u) crosses the observed accuracy, +- multiples of the edge's width."""
    out = []
    for r, v, c in rows:
        acc = (v + 0.5) / (r + 1.0)
        var = acc * (1.0 - acc)
        u0 = math.log(acc / (1.0 - acc)) / c
        w = math.sqrt(var / (r + 2.0)) / var / c
        out += [u0 + k * w for k in (-12, -6, -3, -2, -1, -0.5, 0, 0.5, 1, 2, 3, 6, 12)]
    return np.asarray(out)


def _count_features(counts, delta):
    """The same for challenge bases: where eps (or s eps) crosses the eps each base's rates
    show (the two boundary lines of R(eps, delta) through its error point), +- multiples of
    that eps's standard error (delta method)."""
    if counts is None:
        return np.zeros(0)
    out = []
    for x, n0, y, n1 in zip(*counts, strict=True):
        a, b = (x + 0.5) / (n0 + 1.0), (y + 0.5) / (n1 + 1.0)
        va, vb = a * (1 - a) / n0, b * (1 - b) / n1
        for p, q, vp, vq in ((a, b, va, vb), (b, a, vb, va)):
            if 1.0 - delta - p <= 0.0:
                continue
            e0 = math.log((1.0 - delta - p) / q)
            w = math.sqrt(vp / (1.0 - delta - p) ** 2 + vq / q**2)
            out += [e0 + k * w for k in (-12, -6, -3, -2, -1, -0.5, 0, 0.5, 1, 2, 3, 6, 12)]
    return np.asarray(out)


def _panels(breaks, n_gl):
    """Gauss-Legendre nodes and weights on the panels between sorted ``breaks``, and the
    index of each node's panel."""
    x, w = np.polynomial.legendre.leggauss(n_gl)
    a, b = breaks[:-1], breaks[1:]
    nodes = (0.5 * (b - a)[:, None] * (x[None, :] + 1.0) + a[:, None]).ravel()
    weights = (0.5 * (b - a)[:, None] * w[None, :]).ravel()
    return nodes, weights, np.repeat(np.arange(a.size), n_gl)


def _breaks(lo, hi, n, extra):
    extra = np.asarray(extra, dtype=float)
    pts = np.union1d(np.linspace(lo, hi, n), extra[(extra > lo) & (extra < hi)])
    return pts[np.concatenate([[True], np.diff(pts) > 1e-12 * max(1.0, hi)])]


@dataclass
class Posterior:
    """Reference marginals: the CDFs and densities of eps and of each strength at breakpoints.

    ``s`` maps a strength's name (``"s"``, ``"s_counts"``, ``"s_guesses"``) to its
    (breakpoints, CDF, density); fixed strengths are absent. Between breakpoints the CDFs are
    cubic Hermite interpolants (the CDF and its derivative, the density, at both ends).
    """

    eps_breaks: np.ndarray
    eps_cdf_values: np.ndarray
    eps_pdf_values: np.ndarray
    s: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)

    def eps_cdf(self, x):
        """The marginal CDF of eps at x."""
        return _interp_cdf(self.eps_breaks, self.eps_cdf_values, self.eps_pdf_values, x)

    def s_cdf(self, name, x):
        """The marginal CDF of strength ``name`` at x."""
        return _interp_cdf(*self.s[name], x)

    def eps_quantile(self, q):
        """The q quantile of eps (by bisection on :meth:`eps_cdf`)."""
        from scipy.optimize import brentq

        lo, hi = self.eps_breaks[0], self.eps_breaks[-1]
        qs = np.atleast_1d(np.asarray(q, dtype=float))
        out = np.array([brentq(lambda x, t=t: float(self.eps_cdf(x)) - t, lo, hi) for t in qs])
        return out if np.ndim(q) else float(out[0])


def _interp_cdf(x, cdf, pdf, at):
    from scipy.interpolate import CubicHermiteSpline

    keep = np.concatenate([[True], np.diff(x) > 0])
    f = CubicHermiteSpline(x[keep], cdf[keep], pdf[keep], extrapolate=False)
    at = np.asarray(at, dtype=float)
    out = np.nan_to_num(f(at), nan=0.0)
    out = np.where(at >= x[-1], 1.0, out)
    return np.clip(out, 0.0, 1.0)


def _cdf_from_panels(values, weights, panel, n_panels):
    """Cumulative mass at the breakpoints, and the total."""
    mass = np.bincount(panel, weights=values * weights, minlength=n_panels)
    cdf = np.concatenate([[0.0], np.cumsum(mass)])
    return cdf, cdf[-1]


def _factors(rows, counts, delta, eps, s):
    """log L of the rows and of the bases at every (eps, s) of the broadcast arrays."""
    lg = np.zeros(np.broadcast_shapes(np.shape(eps), np.shape(s)))
    for r, v, c in rows:
        lg = lg + log_lik(r, v, c, eps, s)
    lc = None
    if counts is not None:
        e2, s2 = np.broadcast_arrays(eps, s)
        lc = np.zeros(e2.shape)
        for x, n0, y, n1 in zip(*counts, strict=True):
            lc = lc + log_marginal_likelihood(x, n0, y, n1, e2, s2, delta)
    return lg, lc


def posterior(
    rows,
    eps_prior=("halfnormal", 10.0),
    s_prior=("beta", 1.0, 1.0),
    *,
    counts=None,
    delta=0.0,
    shared=True,
    eps_window=None,
    n_eps=201,
    n_s=101,
    n_gl=4,
):
    """Reference posterior of eps and the strengths for one-run rows (and challenge bases).

    Composite Gauss-Legendre quadrature over panels: in eps, between ``n_eps`` uniform
    breakpoints over ``eps_window`` and the rows' and bases' edges (:func:`_features`,
    :func:`_count_features`); in s, for each eps, between ``n_s`` uniform breakpoints over
    [0, 1] and the same edges at that eps (u / eps), so that the sharp edge of a row with many
    guesses is resolved at every eps.
    The CDFs are the cumulative panel masses at the breakpoints, where the densities are
    computed too (Hermite interpolation between them).

    Parameters
    ----------
    rows : list of (r, v, c)
        One-run rows: guesses, right guesses, factor (1 bits, 2 pairs).
    eps_prior : ("halfnormal", scale) or ("lognormal", mu, sigma)
    s_prior : ("beta", a, b) with a, b >= 1, or ("fixed", s0); the prior of every strength.
    counts : (x, n0, y, n1), optional
        Challenge bases beside the rows (a few: each costs ~0.5 ms a node).
    delta : float
        Their delta.
    shared : bool
        Whether the bases and the rows share one strength ``s`` or each has its own
        (``s_counts``, ``s_guesses``; given eps the two integrals over s factorise). Without
        ``counts`` the rows' strength is ``s``.
    eps_window : (lo, hi), optional
        The eps range; default: where a coarse pass finds the log marginal within 30 of its
        largest value, plus a margin.
    n_eps, n_s, n_gl : int
        Uniform breakpoints of eps and s, and nodes per panel.

    Returns
    -------
    Posterior
        ``info["cut"]``: the density at the window's ends (its lower end if above 0) relative
        to its largest value (the mass the window leaves out is negligible when it is tiny).
    """
    feats = np.concatenate([_features(rows), _count_features(counts, delta)])
    if eps_window is None:
        if eps_prior[0] == "halfnormal":
            hi = 8.0 * float(eps_prior[1])
        else:
            hi = float(min(math.exp(float(eps_prior[1]) + 6.0 * float(eps_prior[2])), 500.0))
        coarse = posterior(
            rows,
            eps_prior,
            s_prior,
            counts=counts,
            delta=delta,
            shared=shared,
            eps_window=(1e-9, hi),
            n_eps=max(n_eps // 4, 30),
            n_s=max(n_s // 4, 12),
            n_gl=3,
        )
        logm = coarse.info["log_marginal"]
        nodes = coarse.info["eps_nodes"]
        keep = nodes[logm > logm.max() - 30.0]
        pad = 0.05 * (keep.max() - keep.min()) + 2.0 * hi / max(n_eps // 4, 30)
        eps_window = (max(keep.min() - pad, 1e-9), min(keep.max() + pad, hi))
    eb = _breaks(eps_window[0], eps_window[1], n_eps, feats)
    En, wE, pE = _panels(eb, n_gl)
    E = np.concatenate([En, eb])  # the breakpoints too (weight 0): densities there
    fixed = s_prior[0] == "fixed"
    grid = np.linspace(0.0, 1.0, n_s)
    if fixed:
        S = np.full((E.size, 1), float(s_prior[1]))
        wS = np.ones((E.size, 1))
    else:
        sbs = [_breaks(0.0, 1.0, n_s, feats / e) for e in E]
        width = max(b.size for b in sbs)
        # every eps's breakpoints padded to one length (zero-width panels at s = 1)
        sb = np.stack([np.concatenate([b, np.ones(width - b.size)]) for b in sbs])
        S, wS, pS = zip(*(_panels(b, n_gl) for b in sb), strict=True)
        n_nodes = S[0].size
        # and the s grid's points (weight 0): the strengths' densities there
        S = np.concatenate([np.stack(S), np.tile(grid, (E.size, 1))], axis=1)
        wS = np.concatenate([np.stack(wS), np.zeros((E.size, grid.size))], axis=1)
        pS = pS[0]
    lp_e = _log_eps_prior(eps_prior, E)
    lp_s = _log_s_prior(s_prior, S)
    lg, lc = _factors(rows, counts, delta, E[:, None], S)
    if counts is None or shared:
        parts = {"s": lp_s + lg + (0.0 if lc is None else lc)}
    else:
        parts = {"s_guesses": lp_s + lg, "s_counts": lp_s + lc}
    # log Z_name(eps) = log int p(s) L(eps, s) ds, per strength
    logz = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for k, a in parts.items():
            m = a.max(axis=1, keepdims=True)
            z = m[:, 0] + np.log(np.sum(np.exp(a - m) * wS, axis=1))
            logz[k] = np.where(np.isfinite(m[:, 0]), z, -np.inf)
    log_m = lp_e + sum(logz.values())
    dens = np.exp(log_m - log_m.max())
    n = En.size
    cdf, total = _cdf_from_panels(dens[:n], wE, pE, eb.size - 1)
    out_s = {}
    if not fixed:
        n_panels = sb.shape[1] - 1
        for k in parts:
            ok = np.isfinite(logz[k])[:, None]
            with np.errstate(invalid="ignore"):
                # the conditional density of s given each eps node
                cond = np.where(ok, np.exp(parts[k] - np.where(ok, logz[k][:, None], 0.0)), 0.0)
            s_cdf = np.zeros(grid.size)
            for i in range(n):
                mass = np.bincount(
                    pS, weights=cond[i, :n_nodes] * wS[i, :n_nodes], minlength=n_panels
                )
                at = np.concatenate([[0.0], np.cumsum(mass)])
                s_cdf += wE[i] * dens[i] * np.interp(grid, sb[i], at)
            s_pdf = (wE * dens[:n]) @ cond[:n, n_nodes:]
            out_s[k] = (grid, s_cdf / total, s_pdf / total)
    cut = dens[n + eb.size - 1] if eps_window[0] <= 1e-6 else max(dens[n], dens[-1])
    info = {
        "eps_window": eps_window,
        "eps_nodes": En,
        "log_marginal": log_m[:n],
        "cut": float(cut),
    }
    return Posterior(eb, cdf / total, dens[n:] / total, out_s, info)
