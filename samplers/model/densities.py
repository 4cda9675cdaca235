"""Priors and the likelihood densities of one challenge base, for the MHAAR and exact kernels.

Only numpy and numba live here: plain numba functions of scalars and the per-base parameter
matrix P (one row per challenge base, filled by :func:`samplers.model.params.aux_params`), which the
auxiliary proposals (:mod:`samplers.mhaar.aux_proposals`) and the band quadrature
(:mod:`samplers.model.band_quadrature`) read too.

A challenge base i of an evidence group with likelihood code ``lik`` (:mod:`samplers.model.codes`:
0 binomial, 1 the bivariate normal of the paper's eq. 7 with (tau, rho), 2 beta-binomial with
intra-class correlation tau) has the density :func:`log_g` of its counts (X_i, Y_i) given its
latent error rates (alpha_i, beta_i) = (a, b).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..numerics.jit import JIT
from ..numerics.special import lbeta, xlogy

# the integer codes the kernels switch on are defined in one place, samplers.model.codes
from .codes import EPS_HALFNORMAL, LIK_BINOMIAL, LIK_BIVARIATE_NORMAL

# -- columns of the per-base parameter matrix P (one row per challenge base, filled by
# samplers.model.params.aux_params); plain ints, which numba reads as compile-time constants
#: The shapes of the normalised binomial likelihood, Beta(X + 1, N0 - X + 1) of alpha (A0, B0)
#: and Beta(Y + 1, N1 - Y + 1) of beta (A1, B1), and their log normalisers log B(A0, B0) (LB0)
#: and log B(A1, B1) (LB1).
A0, B0, A1, B1, LB0, LB1 = 0, 1, 2, 3, 4, 5
#: Mean, sd and log normaliser of the truncated-normal proposal (PROP_NORMAL_MIX) of alpha (M0,
#: SD0, LN0) and of beta (M1, SD1, LN1): the mean of each Beta above and an inflated sd.
M0, SD0, LN0, M1, SD1, LN1 = 6, 7, 8, 9, 10, 11
#: The counts: X false positives of N0 negatives, Y false negatives of N1 positives.
X, N0, Y, N1 = 12, 13, 14, 15
#: The sd of each Beta above (not inflated), from which PROP_PAIR_NORMAL's sds are set.
BSD0, BSD1 = 16, 17
#: Number of columns of P.
N_PARAMS = 18


# ------------------------------------------------------------------------------- priors
@njit(**JIT)
def log_prior_eps(eps, kind, p1, p2):
    """Log prior density of eps up to a constant (0: half-normal(p1), 1: lognormal(p1, p2))."""
    if not eps > 0.0:
        return -np.inf
    if kind == EPS_HALFNORMAL:
        return -0.5 * (eps / p1) ** 2
    le = math.log(eps)
    return -le - 0.5 * ((le - p1) / p2) ** 2


@njit(**JIT)
def log_prior_s(s, a, b):
    """Log Beta(a, b) density of s up to a constant; -inf outside (0, 1)."""
    if not (s > 0.0 and s < 1.0):
        return -np.inf
    return (a - 1.0) * math.log(s) + (b - 1.0) * math.log1p(-s)


# --------------------------------------------------------------------------- likelihoods
@njit(**JIT)
def log_lik_shape(a, b, a0, b0, a1, b1, lb0, lb1):
    """Return log of Beta(a; a0, b0) * Beta(b; a1, b1), the normalised binomial likelihood."""
    return (
        xlogy(a0 - 1.0, a)
        + xlogy(b0 - 1.0, 1.0 - a)
        - lb0
        + xlogy(a1 - 1.0, b)
        + xlogy(b1 - 1.0, 1.0 - b)
        - lb1
    )


@njit(**JIT)
def dispersion(n, tau):
    """Return 1 + (n - 1) tau, the variance factor of a count of n decisions with correlation tau.

    The variance of the sum of n exchangeable decisions, each with variance v and pairwise
    correlation tau, is n v (1 + (n - 1) tau) (paper eq. 7; the beta-binomial's too). No floor:
    for tau in [0, 1] and n >= 1 (all the samplers pass: tau is a logistic of a real or a
    validated fixed value) it is >= 1. The copies it replaced floored it at 1e-6 or 1e-12,
    which never bound there, so the values are unchanged.
    """
    return 1.0 + (n - 1.0) * tau


@njit(**JIT)
def rho_max(tau, n0, n1):
    """Largest |rho| keeping the covariance of eq. 7 positive definite for one row.

    ``bayes_dp.core.likelihoods.rho_max`` is its numpy twin (``tests/samplers/test_layout.py``
    compares them).
    """
    c0 = dispersion(n0, tau)
    c1 = dispersion(n1, tau)
    if c0 <= 0.0 or c1 <= 0.0:
        return 0.0
    return math.sqrt(c0 * c1 / (n0 * n1))


@njit(**JIT)
def group_rho_max(tau, j, grp, P):
    """Largest admissible |rho| of group j at tau: the minimum of :func:`rho_max` over its rows.

    ``grp[i]`` is the group of row i of the per-base matrix ``P`` (inf when j has no rows).
    """
    out = np.inf
    for i in range(grp.shape[0]):
        if grp[i] == j:
            r = rho_max(tau, P[i, N0], P[i, N1])
            if r < out:
                out = r
    return out


@njit(**JIT)
def log_bvn(a, b, x, n0, y, n1, tau, rho):
    """Bivariate normal log density of (X, Y) given (alpha, beta) = (a, b) (paper eq. 7).

    Var X = a(1-a) N0 (1 + (N0-1) tau), Var Y = b(1-b) N1 (1 + (N1-1) tau),
    Cov = N0 N1 rho sqrt(a(1-a) b(1-b)): rho is the correlation of one FP decision with one
    FN decision, tau the correlation of two decisions under the same hypothesis. The variances
    (and the covariance) are evaluated at a and b shrunk by half a count (see below).
    """
    if not (a > 0.0 and a < 1.0 and b > 0.0 and b < 1.0):
        return -np.inf
    c0 = dispersion(n0, tau)
    c1 = dispersion(n1, tau)
    # Variances at the rates shrunk by half a count, (N a + 1/2) / (N + 1): eq. 7 as printed
    # has Var X -> 0 as a -> 0, so at X = 0 its density grows without bound as a -> 0 and
    # drags the latent rate (and eps) to the corner; the floor keeps it bounded.
    sa = (n0 * a + 0.5) / (n0 + 1.0)
    sb = (n1 * b + 0.5) / (n1 + 1.0)
    va = sa * (1.0 - sa) * n0 * c0
    vb = sb * (1.0 - sb) * n1 * c1
    rc = rho * math.sqrt(n0 * n1 / (c0 * c1))
    one = 1.0 - rc * rc
    if not one > 0.0:
        return -np.inf
    zx = (x - n0 * a) / math.sqrt(va)
    zy = (y - n1 * b) / math.sqrt(vb)
    return (
        -1.8378770664093453  # log(2 pi)
        - 0.5 * (math.log(va) + math.log(vb) + math.log(one))
        - (zx * zx - 2.0 * rc * zx * zy + zy * zy) / (2.0 * one)
    )


@njit(**JIT)
def _log_betabinom(x, n, m, tau):
    # log BetaBin(x | n, mean m, intra-class correlation tau) without the binomial coefficient
    phi = 1.0 / tau - 1.0
    p = m * phi
    q = (1.0 - m) * phi
    return lbeta(x + p, n - x + q) - lbeta(p, q)


@njit(**JIT)
def log_g(a, b, P, i, lik, tau, rho):
    """Return log g(X_i, Y_i | a, b) up to a constant that does not depend on (a, b, tau, rho)."""
    if lik == LIK_BINOMIAL:
        return log_lik_shape(a, b, P[i, A0], P[i, B0], P[i, A1], P[i, B1], P[i, LB0], P[i, LB1])
    if lik == LIK_BIVARIATE_NORMAL:
        return log_bvn(a, b, P[i, X], P[i, N0], P[i, Y], P[i, N1], tau, rho)
    if not (a > 0.0 and a < 1.0 and b > 0.0 and b < 1.0):
        return -np.inf
    if tau < 1e-10:
        # the tau -> 0 limit of the beta-binomial (same constant as below: no coefficient)
        return (
            xlogy(P[i, X], a)
            + xlogy(P[i, N0] - P[i, X], 1.0 - a)
            + xlogy(P[i, Y], b)
            + xlogy(P[i, N1] - P[i, Y], 1.0 - b)
        )
    # beta-binomial counts: the binomial coefficients are constants and are left out
    x_part = _log_betabinom(P[i, X], P[i, N0], a, tau)
    return x_part + _log_betabinom(P[i, Y], P[i, N1], b, tau)
