"""Exact law of the cosine between a uniform random unit vector and any independent vector.

If ``c`` is uniform on the unit sphere of R^d and ``v != 0`` is independent of it, then
``tau = <c, v> / ||v||`` has density ``f_d(t) ~ (1 - t^2)^((d - 3) / 2)`` on [-1, 1]
(Andrew et al., Thm. 3.1), i.e. ``(tau + 1) / 2 ~ Beta((d - 1) / 2, (d - 1) / 2)``. Its mean is 0
and its variance ``1 / d``; for large d it is close to ``N(0, 1 / d)``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special
from scipy.optimize import brentq

from bayes_dp.core.validation import as_generator, check_delta, check_positive_int, check_real

from ._gaussians import solve_epsilon

__all__ = ["CosineNull", "epsilon_cosine_null_vs_gaussian"]


class CosineNull:
    """Exact null distribution of a random-canary cosine in dimension ``d``.

    Parameters
    ----------
    d : int
        Dimension (>= 2).

    Notes
    -----
    Tails are computed with the regularised incomplete beta function on the near side, so
    ``sf(t)`` keeps its relative precision far in the tail. The interface (``sf``, ``isf``,
    ``cdf``, ``logpdf``, ``rvs``) mirrors a frozen ``scipy.stats`` distribution, so either can be
    given where a null is expected.

    Examples
    --------
    >>> null = CosineNull(1000)
    >>> round(null.var() * 1000, 12)
    1.0
    >>> round(float(null.isf(0.05) * 1000**0.5), 3)
    1.645
    """

    def __init__(self, d):
        self.d = check_positive_int("d", d, minimum=2)
        self._a = 0.5 * (self.d - 1)

    def __repr__(self) -> str:
        return f"CosineNull(d={self.d})"

    def mean(self) -> float:
        """Mean (0)."""
        return 0.0

    def var(self) -> float:
        """Variance ``1 / d``."""
        return 1.0 / self.d

    def std(self) -> float:
        """Return the standard deviation ``1 / sqrt(d)``."""
        return 1.0 / math.sqrt(self.d)

    def cdf(self, t):
        """``P[tau <= t]``."""
        t = np.clip(np.asarray(t, dtype=float), -1.0, 1.0)
        return special.betainc(self._a, self._a, 0.5 * (1.0 + t))

    def sf(self, t):
        """``P[tau > t]`` (by symmetry ``cdf(-t)``, accurate in the upper tail)."""
        return self.cdf(-np.asarray(t, dtype=float))

    def isf(self, q):
        """Inverse survival function: the ``t`` with ``sf(t) = q``."""
        q = np.asarray(q, dtype=float)
        return -(2.0 * special.betaincinv(self._a, self._a, q) - 1.0)

    def ppf(self, q):
        """Quantile function: the ``t`` with ``cdf(t) = q``."""
        return -self.isf(q)

    def logpdf(self, t):
        """Log density; ``-inf`` outside (-1, 1)."""
        t = np.asarray(t, dtype=float)
        a = self._a
        const = -special.betaln(a, a) - (self.d - 2) * math.log(2.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = const + (a - 1.0) * np.log1p(-t * t)
        return np.where(np.abs(t) < 1.0, out, -np.inf)

    def rvs(self, size=None, seed=None):
        """Draw cosines exactly (through the Beta law); ``seed`` is an int or a Generator."""
        rng = as_generator(seed)
        return 2.0 * rng.beta(self._a, self._a, size=size) - 1.0


def _interval_probs(lo, hi, cdf, sf):
    """Probabilities of intervals [lo, hi], subtracting on the tail side for precision."""
    upper = lo > 0
    return np.where(upper, sf(lo) - sf(hi), cdf(hi) - cdf(lo))


def _regions(h, grid, hvals, level, above):
    """Intervals of ``grid`` range where ``h > level`` (``above``) or ``h < level``."""
    s = (hvals - level) if above else (level - hvals)
    pos = s > 0
    out = []
    i, n = 0, len(grid)

    def edge(j):  # root between grid[j] and grid[j + 1]
        f = (lambda x: h(x) - level) if above else (lambda x: level - h(x))
        return brentq(f, grid[j], grid[j + 1], xtol=1e-15)

    while i < n:
        if not pos[i]:
            i += 1
            continue
        j = i
        while j + 1 < n and pos[j + 1]:
            j += 1
        lo = grid[0] if i == 0 else edge(i - 1)
        hi = grid[-1] if j == n - 1 else edge(j)
        out.append((lo, hi))
        i = j + 1
    return out


def epsilon_cosine_null_vs_gaussian(d, mu, sd, delta, *, n_grid: int = 4001) -> float:
    """Epsilon between the exact cosine null of dimension ``d`` and ``N(mu, sd^2)``.

    The privacy loss ``log f_d(t) - log phi((t - mu) / sd)`` is not quadratic, so the region where
    it exceeds epsilon is found on a grid clustered at the ends of (-1, 1) and refined by root
    finding; the probabilities of that region are exact Beta and normal CDFs. Both directions
    are taken (mass of the Gaussian outside [-1, 1] counts fully against the null).

    Parameters
    ----------
    d : int
        Dimension (>= 2).
    mu, sd : float
        Mean and standard deviation (> 0) of the fitted law of the observed cosines.
    delta : float
        Target delta in (0, 1).
    n_grid : int, default 4001
        Grid size used to locate the region (refined to 1e-15 by Brent's method).

    Returns
    -------
    float

    Examples
    --------
    >>> e = epsilon_cosine_null_vs_gaussian(10**6, 1e-3 / 1.54, 1e-3, 1e-6)
    >>> round(e, 2)
    3.01
    """
    null = CosineNull(d)
    mu = check_real("mu", mu)
    sd = check_real("sd", sd, low=0.0, low_open=True)
    delta = check_delta(delta, positive=True)
    u = np.linspace(0.0, 1.0, n_grid)[1:-1]
    grid = np.unique(
        np.concatenate(
            [-np.cos(np.pi * u), np.clip(mu + sd * np.linspace(-12, 12, 241), -0.999999, 0.999999)]
        )
    )

    def h(t):
        return float(
            null.logpdf(t)
            - (-0.5 * ((t - mu) / sd) ** 2 - math.log(sd) - 0.5 * math.log(2 * math.pi))
        )

    hvals = (
        null.logpdf(grid)
        + 0.5 * ((grid - mu) / sd) ** 2
        + math.log(sd)
        + 0.5 * math.log(2 * math.pi)
    )

    def ncdf(x):
        return special.ndtr((np.asarray(x) - mu) / sd)

    def nsf(x):
        return special.ndtr((mu - np.asarray(x)) / sd)

    q_outside = float(ncdf(-1.0) + nsf(1.0))

    def log_delta(eps: float) -> float:
        best = 0.0
        r1 = _regions(h, grid, hvals, eps, True)  # null (P) vs Gaussian (Q)
        if r1:
            lo, hi = np.array(r1).T
            best = max(
                best,
                float(
                    np.sum(
                        _interval_probs(lo, hi, null.cdf, null.sf)
                        - math.exp(eps) * _interval_probs(lo, hi, ncdf, nsf)
                    )
                ),
            )
        r2 = _regions(h, grid, hvals, -eps, False)
        val = q_outside
        if r2:
            lo, hi = np.array(r2).T
            val += float(
                np.sum(
                    _interval_probs(lo, hi, ncdf, nsf)
                    - math.exp(eps) * _interval_probs(lo, hi, null.cdf, null.sf)
                )
            )
        best = max(best, val)
        return math.log(best) if best > 0 else -math.inf

    return solve_epsilon(log_delta, delta)
