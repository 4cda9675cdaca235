"""The true (eps, delta) of a pair of score distributions, from its privacy-loss distribution.

Test helper, independent of the package (numpy and scipy only). For a mechanism whose output
on the two neighbouring datasets has densities ``p`` (member) and ``q`` (non-member), the
tightest delta at eps is the larger hockey-stick divergence of the two orders,

    delta(eps) = max( int max(0, p - e^eps q) dx,  int max(0, q - e^eps p) dx ),

and the true eps at delta is the smallest eps with delta(eps) <= delta (delta(eps) is non-
increasing). The integrals run by a composite Gauss-Legendre rule over a finite range, split at the
kinks of the integrand; eps is then found by Brent's method. Checked against the closed forms of the
Laplace pair, ``delta(eps) = 1 - exp((eps - eps0) / 2)`` for 0 <= eps <= eps0, and of the Gaussian
pair (Dong, Roth and Su, Cor. 2.13).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, stats


def hockey_stick(logp, logq, eps: float, lo: float, hi: float, panels: int = 40000) -> float:
    """Return ``int_lo^hi max(0, p - e^eps q) dx`` for vectorised log-densities.

    Composite 8-point Gauss-Legendre rule on ``panels`` equal panels; the panel that holds a
    sign change of ``p - e^eps q`` is split there (found by bisection), so the kink of the
    integrand falls on a panel edge.
    """
    edges = np.linspace(lo, hi, panels + 1)
    d = logp(edges) - eps - logq(edges)
    change = np.flatnonzero(np.sign(d[:-1]) != np.sign(d[1:]))
    cuts = []
    for i in change:
        a, b = edges[i], edges[i + 1]
        fa = d[i]
        for _ in range(60):
            m = 0.5 * (a + b)
            fm = logp(np.array([m]))[0] - eps - logq(np.array([m]))[0]
            if np.sign(fm) == np.sign(fa):
                a, fa = m, fm
            else:
                b = m
        cuts.append(0.5 * (a + b))
    edges = np.unique(np.concatenate([edges, cuts]))
    x, w = np.polynomial.legendre.leggauss(8)
    half = 0.5 * np.diff(edges)
    pts = (edges[:-1] + half)[:, None] + half[:, None] * x[None, :]
    lp, lq = logp(pts), logq(pts)
    gap = lp - eps - lq
    with np.errstate(over="ignore", invalid="ignore"):
        val = np.where(gap > 0, np.exp(lp) * -np.expm1(-np.maximum(gap, 0.0)), 0.0)
    return float(np.sum(val * w[None, :] * half[:, None]))


def pair_delta(logp, logq, eps: float, lo: float, hi: float, panels: int = 40000) -> float:
    """delta(eps) of the pair: the larger hockey-stick divergence of the two orders."""
    return max(
        hockey_stick(logp, logq, eps, lo, hi, panels), hockey_stick(logq, logp, eps, lo, hi, panels)
    )


def pair_epsilon(
    logp, logq, delta: float, lo: float, hi: float, eps_max: float = 60.0, panels: int = 40000
) -> float:
    """The smallest eps >= 0 with delta(eps) <= ``delta`` (0 if delta(0) <= delta)."""
    if pair_delta(logp, logq, 0.0, lo, hi, panels) <= delta:
        return 0.0

    def g(e):
        d = pair_delta(logp, logq, e, lo, hi, panels)
        return math.log(max(d, 1e-300)) - math.log(delta)

    if g(eps_max) > 0:
        return math.inf
    return optimize.brentq(g, 0.0, eps_max, xtol=1e-7)


def mixture_logpdf(w: float, shift: float):
    """Log-density of ``(1 - w) N(0, 1) + w N(shift, 1)`` (members of whom a share w exposed)."""

    def f(x):
        x = np.asarray(x, dtype=np.float64)
        return np.logaddexp(
            np.log1p(-w) + stats.norm.logpdf(x), np.log(w) + stats.norm.logpdf(x, shift)
        )

    return f


def laplace_delta(eps0: float, eps: float) -> float:
    """Closed form of the Laplace pair Lap(eps0, 1) vs Lap(0, 1): 1 - exp((eps - eps0) / 2)."""
    return max(0.0, -math.expm1((eps - eps0) / 2.0))


def laplace_epsilon(eps0: float, delta: float) -> float:
    """Closed form: the eps at ``delta`` of the Laplace pair, ``eps0 + 2 log(1 - delta)``."""
    return max(0.0, eps0 + 2.0 * math.log1p(-delta))
