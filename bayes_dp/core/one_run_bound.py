"""The one-run audit's frequentist bound (Steinke, Nasr and Jagielski 2023, Theorem 3.3).

The one place that computes it: :func:`bayes_dp.one_run_epsilon_bound` (validated
input) and the claim of a one-run posterior (:mod:`bayes_dp.results.claim_counts`, which sits
below ``one_run`` in the package's layers) call :func:`one_run_bounds`.
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

__all__ = ["one_run_bounds"]


def _p_value(eps, m, r, v, delta):
    """P-value of "the mechanism is (eps, delta)-DP" given v of r right (Steinke et al., Thm 3.3).

    ``P[Bin(r, q) >= v] + 2 m delta max_{1 <= i <= v} P[v - i <= Bin(r, q) < v] / i`` with
    ``q = e^eps / (1 + e^eps)``, vectorised over ``eps``.
    """
    q = special.expit(np.asarray(eps, dtype=np.float64))[:, None]
    tail = stats.binom.sf(v - 1, r, q[:, 0])
    if delta == 0.0 or v == 0:
        return np.minimum(tail, 1.0)
    below = stats.binom.cdf(np.arange(v - 1, -2, -1), r, q)  # P[B <= v-1-i], i = 0..v
    window = below[:, :1] - below[:, 1:]  # P[v - i <= B < v], i = 1..v
    alpha = np.max(window / np.arange(1, v + 1), axis=1)
    return np.minimum(tail + 2.0 * m * delta * alpha, 1.0)


def one_run_bounds(m, r, v, delta: float, confidence: float) -> np.ndarray:
    """Return, per audit, the largest eps whose (eps, delta)-DP hypothesis it rejects.

    At level ``1 - confidence``, by bisection (60 halvings) after a doubling bracket; 0 where
    the audit rejects nothing. Inputs as validated by
    :func:`bayes_dp.one_run_epsilon_bound` (integer arrays of equal length).

    Parameters
    ----------
    m, r, v : array_like of int
        Canaries, guesses made and right guesses of each audit.
    delta : float
        In [0, 1).
    confidence : float
        In (0, 1).

    Returns
    -------
    ndarray
        One bound per audit.
    """
    level = 1.0 - confidence
    m, r, v = (np.atleast_1d(np.asarray(a)) for a in (m, r, v))
    out = np.zeros(m.size)
    for i, (mi, ri, vi) in enumerate(zip(m, r, v, strict=True)):
        mi, ri, vi = int(mi), int(ri), int(vi)

        def rejects(e, m=mi, r=ri, v=vi):
            return _p_value(np.atleast_1d(e), m, r, v, delta)[0] < level

        if ri == 0 or not rejects(0.0):
            continue
        lo, hi = 0.0, 1.0
        while rejects(hi):
            lo, hi = hi, 2.0 * hi
            if hi > 1e6:  # pragma: no cover (only with all guesses right and r huge)
                break
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if rejects(mid) else (lo, mid)
        out[i] = lo
    return out
