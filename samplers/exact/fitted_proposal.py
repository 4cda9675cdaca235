"""Independence proposal fitted to the warm-up: a multivariate Student t in z (numpy, numba).

The tabulated proposal of :mod:`samplers.exact.table_proposal` exists only for binomial groups, and
only fits posteriors that are bands along the ridge s eps = const in (u, v) = (log(s eps),
logit s). Two common posteriors have neither:

- over-dispersed groups (bivariate normal, beta-binomial), whose likelihood depends on
  (eps, s, tau, rho) and has no table;
- thousands of weak targets (a LiRA run where most targets are barely exposed): eps is pinned
  by the few exposed targets while s sits near 0 with a long tail towards 0 (the prior's), so
  in (u, v) the posterior is a thin diagonal line (u = v + log eps) that a 32 x 32 table cannot
  resolve; the chain fell back to the table walk and needed ~100,000 draws per chain.

In z = (log eps, logit s_k, logit tau_j, atanh(rho_j / rho_max)) both are close to unimodal
and roughly elliptical. :func:`fit` takes the mean and covariance of z over the second half of
the warm-up, and q is the multivariate t with DF degrees of freedom, that location and the
covariance times SCALE^2 as its scale matrix: its polynomial tails are heavier than the
posterior's (Gaussian, or exponential in logit s towards 0 under a Beta prior), so the
importance weights pi / q stay bounded where it matters. :mod:`samplers.exact.chain` uses it in the
same independence Metropolis-Hastings move as the table's proposal, after the same pilot test;
the move leaves the exact posterior invariant whatever q is.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ..numerics.jit import JIT

__all__ = ["DF", "SCALE", "Fitted", "empty", "fit", "draw", "log_density"]


#: Degrees of freedom of the t proposal.
DF = 5.0
#: Factor on the warm-up's standard deviations (the warm-up's second half is a few hundred
#: correlated draws, whose spread is on the small side).
SCALE = 1.3

#: A chain's fitted proposal: ``mean`` (d,), ``L`` (d, d) the lower Cholesky factor of the
#: scale matrix, ``lnorm`` (1,) the log normalising constant of the density, ``on`` (1,) 1 once
#: :func:`fit` succeeded (0 before, or after a failed fit), ``dp`` (1,) the number of leading
#: coordinates of z it proposes (d, unless the last coordinates are strengths that only
#: one-run rows read: those keep their values, and the t is that of the others, the marginal
#: of the leading block).
Fitted = namedtuple("Fitted", ["mean", "L", "lnorm", "on", "dp"])


def empty(d: int, dp: int | None = None) -> Fitted:
    """Return an unfitted proposal for d coordinates (filled in place by :func:`fit`).

    ``dp``: the leading coordinates it proposes (default all d).
    """
    return Fitted(
        mean=np.zeros(d),
        L=np.eye(d),
        lnorm=np.zeros(1),
        on=np.zeros(1, dtype=np.int64),
        dp=np.array([d if dp is None else int(dp)], dtype=np.int64),
    )


@njit(**JIT)
def fit(n, s1, s2, F):
    """Fit F (in place) to n points with coordinate sums s1 (d,) and cross sums s2 (d, d).

    Only the first ``F.dp[0]`` coordinates are fitted (the block it proposes). Returns False (F
    unusable) when there are too few points or the covariance is singular.
    """
    d = F.dp[0]
    F.on[0] = 0
    if n < 2.0 * d + 2.0:
        return False
    cov = np.empty((d, d))
    for a in range(d):
        F.mean[a] = s1[a] / n
    for a in range(d):
        for b in range(d):
            cov[a, b] = (s2[a, b] - s1[a] * s1[b] / n) / (n - 1.0) * SCALE * SCALE
    # Cholesky factor, by hand: a covariance that is not positive definite returns False
    # instead of raising inside the kernel
    logdet = 0.0
    for a in range(d):
        for b in range(a + 1):
            r = cov[a, b]
            for c in range(b):
                r -= F.L[a, c] * F.L[b, c]
            if a == b:
                if not (r > 1e-10 * cov[a, a] and r < math.inf):
                    return False
                F.L[a, a] = math.sqrt(r)
                logdet += math.log(F.L[a, a])
            else:
                F.L[a, b] = r / F.L[b, b]
        for b in range(a + 1, d):
            F.L[a, b] = 0.0
    F.lnorm[0] = (
        math.lgamma(0.5 * (DF + d))
        - math.lgamma(0.5 * DF)
        - 0.5 * d * math.log(DF * math.pi)
        - logdet
    )
    F.on[0] = 1
    return True


@njit(**JIT)
def draw(rng, F, out):
    """Draw one point of the t proposal F into ``out`` (its first ``F.dp[0]`` coordinates)."""
    d = F.dp[0]
    w = math.sqrt(DF / rng.chisquare(DF))
    for a in range(d):
        out[a] = F.mean[a]
    for b in range(d):
        x = rng.standard_normal() * w
        for a in range(b, d):
            out[a] += F.L[a, b] * x
    return out


@njit(**JIT)
def log_density(z, F):
    """Return the log density of the t proposal F at z (of its first ``F.dp[0]`` coordinates)."""
    d = F.dp[0]
    # solve L y = z - mean (forward substitution) for the Mahalanobis distance
    q = 0.0
    y = np.empty(d)
    for a in range(d):
        r = z[a] - F.mean[a]
        for b in range(a):
            r -= F.L[a, b] * y[b]
        y[a] = r / F.L[a, a]
        q += y[a] * y[a]
    return F.lnorm[0] - 0.5 * (DF + d) * math.log1p(q / DF)
