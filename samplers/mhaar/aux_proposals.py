"""Auxiliary proposals q of MHAAR's latent pairs (numpy and numba only).

MHAAR (Yildirim et al., Alg. 1) refreshes the latent pair (alpha_i, beta_i) of each challenge
base by importance sampling from a proposal q (per base). q does not depend on the parameters
after warm-up, so the averaged acceptance ratio keeps the posterior exact for any K (Andrieu et
al. 2020). The proposals (codes in :mod:`samplers.model.codes`):

* ``PROP_UNIFORM`` (0): q uniform on the unit square, as in the paper.
* ``PROP_BETA_MIX`` (1): q = (1 - lam) Beta(X+1, N0-X+1) x Beta(Y+1, N1-Y+1) + lam Uniform, the
  normalised binomial likelihood with a defensive uniform part.
* ``PROP_NORMAL_MIX`` (2): as (1) with each Beta replaced by a normal of the same mean and an
  inflated sd, truncated to [0, 1].
* ``PROP_PAIR_NORMAL`` (3), for over-dispersed groups: q = lam Uniform + (1 - lam) [(1 - m)
  (N_theta + N_theta') / 2 + m B], where N_theta is the bivariate normal (untruncated: draws
  outside the square get weight 0) with the mean of (2), sds sqrt(1 + (N - 1) tau) times those
  of (2) and the correlation of eq. 7 at the state's (tau, rho), and B is uniform on R_s of
  either state within a box around the data (:func:`samplers.model.band_geometry.band_box`; m =
  PAIR_BAND_WEIGHT). It follows the likelihood's width and tilt as tau and rho move and puts
  pairs into thin bands; being symmetric in the current and the proposed state, it keeps MHAAR
  exact (the same argument as for the band component of :func:`samplers.mhaar.moves.mhaar_update`).

The shapes of (1) and (2) are columns of the per-base matrix P (:mod:`samplers.model.densities`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..model.codes import LIK_BIVARIATE_NORMAL, PROP_BETA_MIX, PROP_UNIFORM
from ..model.densities import (
    A0,
    A1,
    B0,
    B1,
    BSD0,
    BSD1,
    LB0,
    LB1,
    LN0,
    LN1,
    M0,
    M1,
    N0,
    N1,
    SD0,
    SD1,
    dispersion,
    log_lik_shape,
)
from ..numerics.jit import JIT
from ..numerics.logsum import logaddexp

_SD_INFLATION = 1.5


@njit(**JIT)
def log_q(a, b, P, i, kind, lam):
    """Return the log density of the auxiliary proposal q of base i at (a, b)."""
    if kind == PROP_UNIFORM:
        return 0.0
    if kind == PROP_BETA_MIX:
        lq = log_lik_shape(a, b, P[i, A0], P[i, B0], P[i, A1], P[i, B1], P[i, LB0], P[i, LB1])
    else:
        za = (a - P[i, M0]) / P[i, SD0]
        zb = (b - P[i, M1]) / P[i, SD1]
        if a <= 0.0 or a >= 1.0 or b <= 0.0 or b >= 1.0:
            lq = -np.inf
        else:
            lq = -0.5 * (za * za + zb * zb) - P[i, LN0] - P[i, LN1]
    if lam <= 0.0:
        return lq
    # log((1 - lam) e^lq + lam)
    u = math.log1p(-lam) + lq if lam < 1.0 else -np.inf
    v = math.log(lam)
    return logaddexp(u, v)


@njit(**JIT)
def _trunc_normal01(rng, m, sd):
    while True:
        x = m + sd * rng.standard_normal()
        if x > 0.0 and x < 1.0:
            return x


@njit(**JIT)
def draw_aux(rng, P, i, kind, lam):
    """Draw one auxiliary pair (a, b) from q for challenge base ``i``."""
    if kind == PROP_UNIFORM or (lam > 0.0 and rng.random() < lam):
        return rng.random(), rng.random()
    if kind == PROP_BETA_MIX:
        return rng.beta(P[i, A0], P[i, B0]), rng.beta(P[i, A1], P[i, B1])
    return _trunc_normal01(rng, P[i, M0], P[i, SD0]), _trunc_normal01(rng, P[i, M1], P[i, SD1])


#: Largest |correlation| of the PROP_PAIR_NORMAL proposal.
PAIR_RC_MAX = 0.995


@njit(**JIT)
def pair_shape(P, i, lik, tau, rho, Q, o):
    """Write base i's PROP_PAIR_NORMAL component at (tau, rho) into Q[o:o + 3].

    The three values are (sd of a, sd of b, correlation).
    """
    n0 = P[i, N0]
    n1 = P[i, N1]
    f0 = dispersion(n0, tau)
    f1 = dispersion(n1, tau)
    Q[o] = _SD_INFLATION * P[i, BSD0] * math.sqrt(f0)
    Q[o + 1] = _SD_INFLATION * P[i, BSD1] * math.sqrt(f1)
    rc = 0.0
    if lik == LIK_BIVARIATE_NORMAL:
        rc = rho * math.sqrt(n0 * n1 / (f0 * f1))
    Q[o + 2] = min(max(rc, -PAIR_RC_MAX), PAIR_RC_MAX)


@njit(**JIT)
def _log_n2(a, b, m0, m1, s0, s1, rc):
    za = (a - m0) / s0
    zb = (b - m1) / s1
    one = 1.0 - rc * rc
    return (
        -1.8378770664093453
        - math.log(s0 * s1)
        - 0.5 * math.log(one)
        - (za * za - 2.0 * rc * za * zb + zb * zb) / (2.0 * one)
    )


@njit(**JIT)
def log_q_pair(a, b, P, i, Q, lam, mb, bd):
    """Return the log density of base i's PROP_PAIR_NORMAL proposal.

    The proposal is the normals Q[0:3] and Q[3:6] with weight 1 - mb and a band part of weight
    mb whose density at (a, b) is ``bd`` (see :func:`band_box`), all times 1 - lam, plus lam
    times the uniform density on the square.
    """
    lq = _log_n2(a, b, P[i, M0], P[i, M1], Q[0], Q[1], Q[2])
    if Q[0] != Q[3] or Q[1] != Q[4] or Q[2] != Q[5]:
        l2 = _log_n2(a, b, P[i, M0], P[i, M1], Q[3], Q[4], Q[5])
        m = max(lq, l2)
        lq = m + math.log(0.5 * (math.exp(lq - m) + math.exp(l2 - m)))
    if mb > 0.0:
        # log((1 - mb) e^lq + mb bd)
        u = math.log1p(-mb) + lq
        if bd > 0.0:
            v = math.log(mb * bd)
            lq = logaddexp(u, v)
        else:
            lq = u
    if lam <= 0.0:
        return lq
    u = math.log1p(-lam) + lq
    if not (a > 0.0 and a < 1.0 and b > 0.0 and b < 1.0):
        return u
    v = math.log(lam)
    return logaddexp(u, v)


@njit(**JIT)
def draw_aux_pair(rng, P, i, Q, lam):
    """Draw one auxiliary pair from base i's PROP_PAIR_NORMAL proposal (may leave the square)."""
    if lam > 0.0 and rng.random() < lam:
        return rng.random(), rng.random()
    o = 0 if rng.random() < 0.5 else 3
    z1 = rng.standard_normal()
    z2 = rng.standard_normal()
    rc = Q[o + 2]
    a = P[i, M0] + Q[o] * z1
    b = P[i, M1] + Q[o + 1] * (rc * z1 + math.sqrt(1.0 - rc * rc) * z2)
    return a, b


#: Weight of the band part of PROP_PAIR_NORMAL (uniform on the band near the data).
PAIR_BAND_WEIGHT = 0.5
#: Half-width of the box of the band part, in sds of the proposal's normals.
PAIR_BOX_K = 2.0
