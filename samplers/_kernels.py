"""Numba kernels of MCMC-DP-Est (MHAAR, Yildirim et al. Alg. 1), with evidence groups.

Only numpy and numba live here. Everything is a plain function of arrays, scalars and a
``numpy.random.Generator``; the public wrapper in :mod:`samplers.mhaar` validates and packs.

Target: p(eps, s_1..s_G, (tau_j, rho_j)_j, (alpha_i, beta_i)_i | X, Y). Challenge base i belongs
to evidence group j = grp[i]; group j uses strength variable g_sidx[j] and the likelihood
g_lik[j] (0: binomial, 1: bivariate normal of the paper's eq. 7 with (tau_j, rho_j), 2:
beta-binomial with intra-class correlation tau_j). (alpha_i, beta_i) | eps, s are uniform on
R_s(eps, delta) = R(eps, delta) minus R(s eps, s delta).

Auxiliary proposals q (per base; the latent pairs are refreshed by importance sampling from q,
which does not depend on the parameters after warm-up, so the averaged acceptance ratio keeps
the posterior exact for any K, Andrieu et al. 2020):

* ``PROP_UNIFORM`` (0): q uniform on the unit square, as in the paper.
* ``PROP_BETA_MIX`` (1): q = (1 - lam) Beta(X+1, N0-X+1) x Beta(Y+1, N1-Y+1) + lam Uniform, the
  normalised binomial likelihood with a defensive uniform part.
* ``PROP_NORMAL_MIX`` (2): as (1) with each Beta replaced by a normal of the same mean and an
  inflated sd, truncated to [0, 1].
* ``PROP_PAIR_NORMAL`` (3), for over-dispersed groups: q = lam Uniform + (1 - lam) [(1 - m)
  (N_theta + N_theta') / 2 + m B], where N_theta is the bivariate normal (untruncated: draws
  outside the square get weight 0) with the mean of (2), sds sqrt(1 + (N - 1) tau) times those
  of (2) and the correlation of eq. 7 at the state's (tau, rho), and B is uniform on R_s of
  either state within a box around the data (:func:`band_box`; m = PAIR_BAND_WEIGHT). It
  follows the likelihood's width and tilt as tau and rho move and puts pairs into thin bands;
  being symmetric in the current and the proposed state, it keeps MHAAR exact (the same
  argument as for the band component below).

The weight of a candidate (a, b) is ``1{(a, b) in R_s} / |R_s| * g(X, Y | a, b) / q(a, b)``. We
store ``r = log g - log q`` (up to per-base constants that do not depend on the parameters) and
test membership with the folded coordinates lo = min, hi = max of (a, b) mapped into the
lower-left half of the square.

It is long because it holds both MHAAR's kernels (paper Alg. 1: proposals, averaged acceptance
ratios) and the band quadrature of the over-dispersed likelihoods that the exact sampler also calls;
splitting it by concern is open work.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

# the integer codes the kernels switch on are defined in one place, samplers.codes
from .codes import (  # noqa: F401  (re-exported: tests and callers use _kernels.LIK_*)
    EPS_HALFNORMAL,
    LIK_BETA_BINOMIAL,
    LIK_BINOMIAL,
    LIK_BIVARIATE_NORMAL,
    PROP_BETA_MIX,
    PROP_NORMAL_MIX,
    PROP_PAIR_NORMAL,
    PROP_UNIFORM,
)

#: Columns of the per-base parameter matrix P: Beta shapes (0-3) and log-normalisers (4, 5) of
#: the normalised likelihood; (mean, sd, log normaliser) of the truncated-normal proposal of
#: each coordinate (6-8, 9-11); the counts X, N0, Y, N1 (12-15); the binomial sd of each
#: coordinate (16, 17), from which PROP_PAIR_NORMAL's sds are set.
N_PARAMS = 18
_SD_INFLATION = 1.5

_JIT = {"cache": True, "nogil": True, "error_model": "numpy"}


# ------------------------------------------------------------------------------- priors
@njit(**_JIT)
def log_prior_eps(eps, kind, p1, p2):
    """Log prior density of eps up to a constant (0: half-normal(p1), 1: lognormal(p1, p2))."""
    if not eps > 0.0:
        return -np.inf
    if kind == EPS_HALFNORMAL:
        return -0.5 * (eps / p1) ** 2
    le = math.log(eps)
    return -le - 0.5 * ((le - p1) / p2) ** 2


@njit(**_JIT)
def log_prior_s(s, a, b):
    """Log Beta(a, b) density of s up to a constant; -inf outside (0, 1)."""
    if not (s > 0.0 and s < 1.0):
        return -np.inf
    return (a - 1.0) * math.log(s) + (b - 1.0) * math.log1p(-s)


@njit(**_JIT)
def log_area(eps, s, delta):
    """Return log |R_s(eps, delta)| (paper, below eq. 3)."""
    v = 2.0 * (
        (1.0 - s * delta) ** 2 / (1.0 + math.exp(s * eps))
        - (1.0 - delta) ** 2 / (1.0 + math.exp(eps))
    )
    if v > 0.0:
        return math.log(v)
    return -np.inf


# --------------------------------------------------------------------------- likelihoods
@njit(**_JIT)
def _xlogy(c, v):
    # c * log(v) with 0 * log(0) = 0
    if c == 0.0:
        return 0.0
    return c * math.log(v)


@njit(**_JIT)
def log_lik_shape(a, b, a0, b0, a1, b1, lb0, lb1):
    """Return log of Beta(a; a0, b0) * Beta(b; a1, b1), the normalised binomial likelihood."""
    return (
        _xlogy(a0 - 1.0, a)
        + _xlogy(b0 - 1.0, 1.0 - a)
        - lb0
        + _xlogy(a1 - 1.0, b)
        + _xlogy(b1 - 1.0, 1.0 - b)
        - lb1
    )


@njit(**_JIT)
def rho_max(tau, n0, n1):
    """Largest |rho| keeping the covariance of eq. 7 positive definite for one row."""
    c0 = 1.0 + (n0 - 1.0) * tau
    c1 = 1.0 + (n1 - 1.0) * tau
    if c0 <= 0.0 or c1 <= 0.0:
        return 0.0
    return math.sqrt(c0 * c1 / (n0 * n1))


@njit(**_JIT)
def log_bvn(a, b, x, n0, y, n1, tau, rho):
    """Bivariate normal log density of (X, Y) given (alpha, beta) = (a, b) (paper eq. 7).

    Var X = a(1-a) N0 (1 + (N0-1) tau), Var Y = b(1-b) N1 (1 + (N1-1) tau),
    Cov = N0 N1 rho sqrt(a(1-a) b(1-b)): rho is the correlation of one FP decision with one
    FN decision, tau the correlation of two decisions under the same hypothesis. The variances
    (and the covariance) are evaluated at a and b shrunk by half a count (see below).
    """
    if not (a > 0.0 and a < 1.0 and b > 0.0 and b < 1.0):
        return -np.inf
    c0 = 1.0 + (n0 - 1.0) * tau
    c1 = 1.0 + (n1 - 1.0) * tau
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


@njit(**_JIT)
def _lbeta(p, q):
    return math.lgamma(p) + math.lgamma(q) - math.lgamma(p + q)


@njit(**_JIT)
def _log_betabinom(x, n, m, tau):
    # log BetaBin(x | n, mean m, intra-class correlation tau) without the binomial coefficient
    phi = 1.0 / tau - 1.0
    p = m * phi
    q = (1.0 - m) * phi
    return _lbeta(x + p, n - x + q) - _lbeta(p, q)


@njit(**_JIT)
def log_g(a, b, P, i, lik, tau, rho):
    """Return log g(X_i, Y_i | a, b) up to a constant that does not depend on (a, b, tau, rho)."""
    if lik == LIK_BINOMIAL:
        return log_lik_shape(a, b, P[i, 0], P[i, 1], P[i, 2], P[i, 3], P[i, 4], P[i, 5])
    if lik == LIK_BIVARIATE_NORMAL:
        return log_bvn(a, b, P[i, 12], P[i, 13], P[i, 14], P[i, 15], tau, rho)
    if not (a > 0.0 and a < 1.0 and b > 0.0 and b < 1.0):
        return -np.inf
    if tau < 1e-10:
        # the tau -> 0 limit of the beta-binomial (same constant as below: no coefficient)
        return (
            _xlogy(P[i, 12], a)
            + _xlogy(P[i, 13] - P[i, 12], 1.0 - a)
            + _xlogy(P[i, 14], b)
            + _xlogy(P[i, 15] - P[i, 14], 1.0 - b)
        )
    # beta-binomial counts: the binomial coefficients are constants and are left out
    x_part = _log_betabinom(P[i, 12], P[i, 13], a, tau)
    return x_part + _log_betabinom(P[i, 14], P[i, 15], b, tau)


@njit(**_JIT)
def log_q(a, b, P, i, kind, lam):
    """Return the log density of the auxiliary proposal q of base i at (a, b)."""
    if kind == PROP_UNIFORM:
        return 0.0
    if kind == PROP_BETA_MIX:
        lq = log_lik_shape(a, b, P[i, 0], P[i, 1], P[i, 2], P[i, 3], P[i, 4], P[i, 5])
    else:
        za = (a - P[i, 6]) / P[i, 7]
        zb = (b - P[i, 9]) / P[i, 10]
        if a <= 0.0 or a >= 1.0 or b <= 0.0 or b >= 1.0:
            lq = -np.inf
        else:
            lq = -0.5 * (za * za + zb * zb) - P[i, 8] - P[i, 11]
    if lam <= 0.0:
        return lq
    # log((1 - lam) e^lq + lam)
    u = math.log1p(-lam) + lq if lam < 1.0 else -np.inf
    v = math.log(lam)
    m = max(u, v)
    return m + math.log(math.exp(u - m) + math.exp(v - m))


@njit(**_JIT)
def log_weight_ratio(a, b, P, i, kind, lam):
    """Return r = log g - log q for the binomial likelihood.

    Kept for the tests and simple callers.
    """
    return log_g(a, b, P, i, LIK_BINOMIAL, 0.0, 0.0) - log_q(a, b, P, i, kind, lam)


@njit(**_JIT)
def _trunc_normal01(rng, m, sd):
    while True:
        x = m + sd * rng.standard_normal()
        if x > 0.0 and x < 1.0:
            return x


@njit(**_JIT)
def draw_aux(rng, P, i, kind, lam):
    """Draw one auxiliary pair (a, b) from q for challenge base ``i``."""
    if kind == PROP_UNIFORM or (lam > 0.0 and rng.random() < lam):
        return rng.random(), rng.random()
    if kind == PROP_BETA_MIX:
        return rng.beta(P[i, 0], P[i, 1]), rng.beta(P[i, 2], P[i, 3])
    return _trunc_normal01(rng, P[i, 6], P[i, 7]), _trunc_normal01(rng, P[i, 9], P[i, 10])


#: Largest |correlation| of the PROP_PAIR_NORMAL proposal.
PAIR_RC_MAX = 0.995


@njit(**_JIT)
def pair_shape(P, i, lik, tau, rho, Q, o):
    """Write base i's PROP_PAIR_NORMAL component at (tau, rho) into Q[o:o + 3].

    The three values are (sd of a, sd of b, correlation).
    """
    n0 = P[i, 13]
    n1 = P[i, 15]
    f0 = max(1.0 + (n0 - 1.0) * tau, 1e-6)
    f1 = max(1.0 + (n1 - 1.0) * tau, 1e-6)
    Q[o] = _SD_INFLATION * P[i, 16] * math.sqrt(f0)
    Q[o + 1] = _SD_INFLATION * P[i, 17] * math.sqrt(f1)
    rc = 0.0
    if lik == LIK_BIVARIATE_NORMAL:
        rc = rho * math.sqrt(n0 * n1 / (f0 * f1))
    Q[o + 2] = min(max(rc, -PAIR_RC_MAX), PAIR_RC_MAX)


@njit(**_JIT)
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


@njit(**_JIT)
def log_q_pair(a, b, P, i, Q, lam, mb, bd):
    """Return the log density of base i's PROP_PAIR_NORMAL proposal.

    The proposal is the normals Q[0:3] and Q[3:6] with weight 1 - mb and a band part of weight
    mb whose density at (a, b) is ``bd`` (see :func:`band_box`), all times 1 - lam, plus lam
    times the uniform density on the square.
    """
    lq = _log_n2(a, b, P[i, 6], P[i, 9], Q[0], Q[1], Q[2])
    if Q[0] != Q[3] or Q[1] != Q[4] or Q[2] != Q[5]:
        l2 = _log_n2(a, b, P[i, 6], P[i, 9], Q[3], Q[4], Q[5])
        m = max(lq, l2)
        lq = m + math.log(0.5 * (math.exp(lq - m) + math.exp(l2 - m)))
    if mb > 0.0:
        # log((1 - mb) e^lq + mb bd)
        u = math.log1p(-mb) + lq
        if bd > 0.0:
            v = math.log(mb * bd)
            m = max(u, v)
            lq = m + math.log(math.exp(u - m) + math.exp(v - m))
        else:
            lq = u
    if lam <= 0.0:
        return lq
    u = math.log1p(-lam) + lq
    if not (a > 0.0 and a < 1.0 and b > 0.0 and b < 1.0):
        return u
    v = math.log(lam)
    m = max(u, v)
    return m + math.log(math.exp(u - m) + math.exp(v - m))


@njit(**_JIT)
def draw_aux_pair(rng, P, i, Q, lam):
    """Draw one auxiliary pair from base i's PROP_PAIR_NORMAL proposal (may leave the square)."""
    if lam > 0.0 and rng.random() < lam:
        return rng.random(), rng.random()
    o = 0 if rng.random() < 0.5 else 3
    z1 = rng.standard_normal()
    z2 = rng.standard_normal()
    rc = Q[o + 2]
    a = P[i, 6] + Q[o] * z1
    b = P[i, 9] + Q[o + 1] * (rc * z1 + math.sqrt(1.0 - rc * rc) * z2)
    return a, b


#: Weight of the band part of PROP_PAIR_NORMAL (uniform on the band near the data).
PAIR_BAND_WEIGHT = 0.5
#: Half-width of the box of the band part, in sds of the proposal's normals.
PAIR_BOX_K = 2.0


@njit(**_JIT)
def _clip_half(V, nv, W, axis, bound, keep_below):
    """Sutherland-Hodgman: clip polygon V[:nv] to {v[axis] <= bound} (or >=) into W."""
    m = 0
    for k in range(nv):
        ax, ay = V[k, 0], V[k, 1]
        bx, by = V[(k + 1) % nv, 0], V[(k + 1) % nv, 1]
        ca = V[k, axis]
        cb = V[(k + 1) % nv, axis]
        ina = ca <= bound if keep_below else ca >= bound
        inb = cb <= bound if keep_below else cb >= bound
        if ina:
            W[m, 0] = ax
            W[m, 1] = ay
            m += 1
        if ina != inb:
            t = (bound - ca) / (cb - ca)
            W[m, 0] = ax + t * (bx - ax)
            W[m, 1] = ay + t * (by - ay)
            m += 1
    return m


@njit(**_JIT)
def band_box(eps, s, delta, box, V, NV, AR, W, U):
    """Clip the four quadrilaterals that make up R_s(eps, delta) to a box.

    The quadrilaterals are R_s in the unit square (the images of the folded band, see
    :func:`draw_band`); box = (a_lo, a_hi, b_lo, b_hi).

    Writes each clipped polygon into V[img, :NV[img]], its area into AR[img] and returns the
    total area of R_s within the box. W and U are (12, 2) scratch arrays.
    """
    t1 = 1.0 - delta
    t2 = 1.0 - s * delta
    d1 = t1 / (1.0 + math.exp(eps))
    d2 = t2 / (1.0 + math.exp(s * eps))
    tot = 0.0
    for img in range(4):
        NV[img] = 0
        AR[img] = 0.0
        # the image's bounding box: (a, b) ranges over [0, t2] x [d1, t2] or its transpose,
        # or their reflections through (1/2, 1/2)
        if img == 0 or img == 2:
            alo, ahi, blo, bhi = 0.0, d2, d1, t2
        else:
            alo, ahi, blo, bhi = d1, t2, 0.0, d2
        if img >= 2:
            alo, ahi, blo, bhi = 1.0 - ahi, 1.0 - alo, 1.0 - bhi, 1.0 - blo
        if alo > box[1] or ahi < box[0] or blo > box[3] or bhi < box[2]:
            continue
        # folded vertices A, B, C, D mapped to this image
        for k in range(4):
            if k == 0:
                lo, hi = 0.0, t1
            elif k == 1:
                lo, hi = 0.0, t2
            elif k == 2:
                lo, hi = d2, d2
            else:
                lo, hi = d1, d1
            a, b = (lo, hi) if (img == 0 or img == 2) else (hi, lo)
            if img >= 2:
                a, b = 1.0 - a, 1.0 - b
            U[k, 0] = a
            U[k, 1] = b
        m = _clip_half(U, 4, W, 0, box[0], False)
        m = _clip_half(W, m, U, 0, box[1], True)
        m = _clip_half(U, m, W, 1, box[2], False)
        m = _clip_half(W, m, U, 1, box[3], True)
        area = 0.0
        for k in range(m):
            V[img, k, 0] = U[k, 0]
            V[img, k, 1] = U[k, 1]
            kk = (k + 1) % m
            area += U[k, 0] * U[kk, 1] - U[kk, 0] * U[k, 1]
        area = abs(0.5 * area) if m >= 3 else 0.0
        NV[img] = m
        AR[img] = area
        tot += area
    return tot


@njit(**_JIT)
def draw_band_box(rng, V, NV, AR, tot):
    """Draw uniformly from the clipped band of :func:`band_box` (tot > 0)."""
    u = rng.random() * tot
    img = 3
    acc = 0.0
    for k in range(4):
        acc += AR[k]
        if AR[k] > 0.0 and u <= acc:
            img = k
            break
    while AR[img] <= 0.0:
        img -= 1
    m = NV[img]
    # fan triangulation from vertex 0 (the polygon is convex)
    u = rng.random() * AR[img]
    acc = 0.0
    t = m - 2
    for k in range(1, m - 1):
        ar = 0.5 * abs(
            (V[img, k, 0] - V[img, 0, 0]) * (V[img, k + 1, 1] - V[img, 0, 1])
            - (V[img, k + 1, 0] - V[img, 0, 0]) * (V[img, k, 1] - V[img, 0, 1])
        )
        acc += ar
        if u <= acc:
            t = k
            break
    r1 = rng.random()
    r2 = rng.random()
    if r1 + r2 > 1.0:
        r1 = 1.0 - r1
        r2 = 1.0 - r2
    a = V[img, 0, 0] + r1 * (V[img, t, 0] - V[img, 0, 0]) + r2 * (V[img, t + 1, 0] - V[img, 0, 0])
    b = V[img, 0, 1] + r1 * (V[img, t, 1] - V[img, 0, 1]) + r2 * (V[img, t + 1, 1] - V[img, 0, 1])
    return a, b


@njit(**_JIT)
def in_box(a, b, box):
    return a >= box[0] and a <= box[1] and b >= box[2] and b <= box[3]


# ------------------------------------------------------------------------------- geometry
@njit(**_JIT)
def fold(a, b):
    """Map (a, b) into the lower-left half and return (lo, hi)."""
    if a + b > 1.0:
        a = 1.0 - a
        b = 1.0 - b
    if a < b:
        return a, b
    return b, a


@njit(**_JIT)
def in_rs(lo, hi, e_eps, e_seps, delta, s):
    """Whether a folded point is in R(eps, delta) but not in R(s eps, s delta)."""
    return (hi + e_eps * lo >= 1.0 - delta) and (hi + e_seps * lo < 1.0 - s * delta)


@njit(**_JIT)
def draw_band(rng, eps, s, delta):
    """Draw (a, b) uniformly from the band R_s(eps, delta).

    In the folded coordinates (lo, hi) the band is the quadrilateral A = (0, t1), B = (0, t2),
    C = (d2, d2), D = (d1, d1) with t1 = 1 - delta, t2 = 1 - s delta, d1 = t1 / (1 + e^eps),
    d2 = t2 / (1 + e^(s eps)), cut into the triangles ABC and ACD; the point is then mapped to
    one of its four images in the unit square at random.
    """
    t1 = 1.0 - delta
    t2 = 1.0 - s * delta
    d1 = t1 / (1.0 + math.exp(eps))
    d2 = t2 / (1.0 + math.exp(s * eps))
    area_abc = (t2 - t1) * d2
    area_acd = t1 * (d2 - d1)
    r1 = rng.random()
    r2 = rng.random()
    if r1 + r2 > 1.0:
        r1 = 1.0 - r1
        r2 = 1.0 - r2
    if rng.random() * (area_abc + area_acd) < area_abc:
        # A + r1 (B - A) + r2 (C - A)
        lo = r2 * d2
        hi = t1 + r1 * (t2 - t1) + r2 * (d2 - t1)
    else:
        # A + r1 (C - A) + r2 (D - A)
        lo = r1 * d2 + r2 * d1
        hi = t1 + r1 * (d2 - t1) + r2 * (d1 - t1)
    u = rng.random()
    if u < 0.5:
        a, b = lo, hi
    else:
        a, b = hi, lo
    if rng.random() < 0.5:
        return 1.0 - a, 1.0 - b
    return a, b


# ------------------------------------------------------------- latents integrated out
#: Half-width of the integration window around the likelihood's peak, in standard scores.
QUAD_K = 7.0
#: Gauss-Legendre nodes per unit of the inner integrand's scale (plus four), up to the rules given.
QUAD_DENSITY = 1.5
#: Relative error goal of the adaptive outer rule (sum of Kronrod error estimates / value).
QUAD_TOL = 1e-4
#: Most subintervals of the adaptive outer rule.
QUAD_MAX_INTERVALS = 128
#: Widest initial subinterval of the outer rule, in standard scores.
QUAD_MAX_WIDTH = 3.5

# Gauss-Kronrod 7-15 rule on [-1, 1] (QUADPACK's qk15): the Kronrod nodes >= 0 (the Gauss
# nodes among them at odd positions and 0), their weights, the 7-point Gauss weights.
_GK_X = np.array(
    [
        0.991455371120812639206854697526329,
        0.949107912342758524526189684047851,
        0.864864423359769072789712788640926,
        0.741531185599394439863864773280788,
        0.586087235467691130294144845693013,
        0.405845151377397166906606412076961,
        0.207784955007898467600689403773245,
        0.0,
    ]
)
_GK_W = np.array(
    [
        0.022935322010529224963732008058970,
        0.063092092629978553290700663189204,
        0.104790010322250183839876322541518,
        0.140653259715525918745189590510238,
        0.169004726639267902826583426598550,
        0.190350578064785409913256402421014,
        0.204432940075298892414161999234649,
        0.209482141084727828012999174891714,
    ]
)
_G7_W = np.array(
    [
        0.129484966168869693270611432679082,
        0.279705391489276667901467771423780,
        0.381830050505118944950369775488975,
        0.417959183673469387755102040816327,
    ]
)

# fields of the per-image context array read by the outer integrand
_C_XO, _C_NO, _C_FO, _C_XI, _C_NI, _C_FI = 0, 1, 2, 3, 4, 5
_C_FLIP, _C_SWAP = 6, 7
_C_LEN = 8


@njit(**_JIT)
def _z_of(p, x, n, f):
    """Return the standard score (x - n p) / sd(p) of the count x at rate p.

    The sd is as in :func:`log_bvn`.
    """
    sh = (n * p + 0.5) / (n + 1.0)
    return (x - n * p) / math.sqrt(sh * (1.0 - sh) * n * f)


@njit(**_JIT)
def _p_of(z, x, n, f):
    """Return the rate p with :func:`_z_of` (p) = z: a root of a quadratic in q = n p.

    (x - q)^2 = k (q + 1/2)(n + 1/2 - q) with k = z^2 n f / (n + 1)^2; its roots lie on either
    side of x, and the sign of z picks one (z > 0: q < x).
    """
    k = z * z * n * f / ((n + 1.0) * (n + 1.0))
    a2 = 1.0 + k
    b2 = 2.0 * x + k * n
    c2 = x * x - 0.5 * k * (n + 0.5)
    sq = math.sqrt(max(b2 * b2 - 4.0 * a2 * c2, 0.0))
    if z > 0.0:
        den = b2 + sq
        q = 2.0 * c2 / den if den > 0.0 else 0.0
    else:
        q = (b2 + sq) / (2.0 * a2)
    return q / n


@njit(**_JIT)
def _dp_dz(p, z, n, f):
    """|dp/dz| / sd(p) = 1 / (n + z sd'(p)) along :func:`_z_of` (positive: z is monotone)."""
    sh = (n * p + 0.5) / (n + 1.0)
    sd = math.sqrt(sh * (1.0 - sh) * n * f)
    dsd = n / (n + 1.0) * n * f * (1.0 - 2.0 * sh) / (2.0 * sd)
    return 1.0 / max(n + z * dsd, 1e-12)


@njit(**_JIT)
def _clip_linear(alpha, beta, u0, u1):
    """Intersect [u0, u1] with {u : alpha u <= beta}."""
    if alpha > 0.0:
        u1 = min(u1, beta / alpha)
    elif alpha < 0.0:
        u0 = max(u0, beta / alpha)
    elif beta < 0.0:
        u1 = u0
    return u0, u1


@njit(**_JIT)
def _n_nodes(u0, u1, centre, sd, nmax):
    """Place nodes for a Gaussian-like integrand on [u0, u1].

    QUAD_DENSITY nodes per unit of its scale, which is sd near the peak and sd / |z| in the
    tail at z sds from it.
    """
    z0 = (u0 - centre) / sd
    z1 = (u1 - centre) / sd
    zmin = 0.0 if z0 <= 0.0 <= z1 else min(abs(z0), abs(z1))
    n = 4.0 + QUAD_DENSITY * (z1 - z0) * max(1.0, zmin)
    return int(min(float(nmax), math.ceil(n)))


@njit(**_JIT)
def _outer_f(zo, C, band, r, cond, kwin, lik, tau, rho, shift, P, i, XG, WG):
    """Return the outer integrand at the standard score zo of the outer rate (one image).

    The inner integral over the standard score of the inner rate, inside the band and within
    kwin conditional sds of its conditional mean r zo, by a Gauss-Legendre rule. For eq. 7
    the integrand is exp(-(zo^2 + u^2 / cond^2) / 2) (u = z_i - r zo) times the Jacobians
    :func:`_dp_dz` of both rates (the constant 1 / (2 pi cond) is applied by the caller); for
    another g it is g / g(peak) times |dp/dz| of both rates.
    """
    xo, no_, fo = C[_C_XO], C[_C_NO], C[_C_FO]
    xi, ni, fi = C[_C_XI], C[_C_NI], C[_C_FI]
    flip = C[_C_FLIP] > 0.0
    t1, t2, c1, c2 = band[0], band[1], band[2], band[3]
    po = _p_of(zo, xo, no_, fo)
    lo = 1.0 - po if flip else po
    h_lo = max(t1 - c1 * lo, lo)
    h_hi = t2 - c2 * lo
    if h_lo >= h_hi:
        return 0.0
    if flip:
        zi0 = _z_of(1.0 - h_lo, xi, ni, fi)
        zi1 = _z_of(1.0 - h_hi, xi, ni, fi)
    else:
        zi0 = _z_of(h_hi, xi, ni, fi)
        zi1 = _z_of(h_lo, xi, ni, fi)
    cm = r * zo
    zi0 = max(zi0, cm - kwin * cond)
    zi1 = min(zi1, cm + kwin * cond)
    if zi0 >= zi1:
        return 0.0
    ih = 0.5 * (zi1 - zi0)
    im = 0.5 * (zi1 + zi0)
    nmax = XG.shape[0] - 1
    nin = _n_nodes(zi0, zi1, cm, cond, nmax)
    inner = 0.0
    if lik == LIK_BIVARIATE_NORMAL:
        inv2c = 0.5 / (cond * cond)
        for ji in range(nin):
            zi = im + ih * XG[nin, ji]
            pi = _p_of(zi, xi, ni, fi)
            u = zi - cm
            e = -0.5 * zo * zo - u * u * inv2c
            if e > -700.0:
                inner += WG[nin, ji] * math.exp(e) * _dp_dz(pi, zi, ni, fi)
        return ih * _dp_dz(po, zo, no_, fo) * inner
    # a general g: times |dp/dz| = sd(p) / (n + z sd'(p)) of both rates
    swap = C[_C_SWAP] > 0.0
    for ji in range(nin):
        zi = im + ih * XG[nin, ji]
        pi = _p_of(zi, xi, ni, fi)
        shi = (ni * pi + 0.5) / (ni + 1.0)
        sdpi = math.sqrt(shi * (1.0 - shi) * ni * fi)
        if swap:
            lg = log_g(pi, po, P, i, lik, tau, rho) - shift
        else:
            lg = log_g(po, pi, P, i, lik, tau, rho) - shift
        if lg > -700.0:
            inner += WG[nin, ji] * math.exp(lg) * sdpi * _dp_dz(pi, zi, ni, fi)
    sho = (no_ * po + 0.5) / (no_ + 1.0)
    sdpo = math.sqrt(sho * (1.0 - sho) * no_ * fo)
    return ih * sdpo * _dp_dz(po, zo, no_, fo) * inner


@njit(**_JIT)
def _gk15(za, zb, C, band, r, cond, kwin, lik, tau, rho, shift, P, i, XG, WG):
    """Gauss-Kronrod 7-15 estimate of the outer integral over [za, zb] and its error."""
    c = 0.5 * (za + zb)
    h = 0.5 * (zb - za)
    fc = _outer_f(c, C, band, r, cond, kwin, lik, tau, rho, shift, P, i, XG, WG)
    res_k = fc * _GK_W[7]
    res_g = fc * _G7_W[3]
    for j in range(7):
        dx = h * _GK_X[j]
        f1 = _outer_f(c - dx, C, band, r, cond, kwin, lik, tau, rho, shift, P, i, XG, WG)
        f2 = _outer_f(c + dx, C, band, r, cond, kwin, lik, tau, rho, shift, P, i, XG, WG)
        res_k += _GK_W[j] * (f1 + f2)
        if j % 2 == 1:
            res_g += _G7_W[j // 2] * (f1 + f2)
    return res_k * h, abs((res_k - res_g) * h)


@njit(**_JIT)
def log_band_integral(i, lik, tau, rho, eps, s, delta, P, XG, WG):
    """Return log of the integral of g_i(a, b) (as :func:`log_g`) over R_s(eps, delta).

    The band is integrated in the folded coordinates (lo, hi), where it is the quadrilateral
    between hi = t1 - e^eps lo and hi = t2 - e^(s eps) lo (t1 = 1 - delta, t2 = 1 - s delta),
    0 <= lo and lo <= hi, once for each of the four images of (lo, hi) in the unit square.
    Each rate p is integrated over its standard score z = (x - n p) / sd(p) (sd as in eq. 7,
    with f = 1 + (n - 1) tau): z is monotone in p and the quadratic :func:`_p_of` inverts it.
    In these coordinates eq. 7 is the standard bivariate normal density of the two scores
    with correlation r times smooth Jacobians (:func:`_dp_dz`), however skewed the likelihood
    is in p (small counts); the beta-binomial is integrated in the same coordinates.
    Integration runs over |z| <= QUAD_K of the outer rate and QUAD_K conditional sds of the
    inner one. The outer integral is adaptive Gauss-Kronrod (7-15) over the outer score:
    the initial subintervals break where the band's edges enter and leave the inner window
    and where the lower edge turns from the boundary line into the diagonal; the subinterval
    with the largest error estimate is halved until the estimates sum to QUAD_TOL of the
    value (or QUAD_MAX_INTERVALS is reached). The inner integral is a Gauss-Legendre rule
    (row n of XG, WG holds the n-point rule on [-1, 1]) with QUAD_DENSITY nodes per
    conditional sd. Where the band lies entirely outside the window (a region of negligible
    posterior mass) the rules run over the whole square instead, which keeps the value
    finite but coarse.
    """
    v = _band_integral(i, lik, tau, rho, eps, s, delta, P, XG, WG, QUAD_K)
    if v == -np.inf:
        v = _band_integral(i, lik, tau, rho, eps, s, delta, P, XG, WG, 1e6)
    return v


@njit(**_JIT)
def _band_integral(i, lik, tau, rho, eps, s, delta, P, XG, WG, kwin):
    x = P[i, 12]
    n0 = P[i, 13]
    y = P[i, 14]
    n1 = P[i, 15]
    t1 = 1.0 - delta
    t2 = 1.0 - s * delta
    c1 = math.exp(eps)
    c2 = math.exp(s * eps)
    d1 = t1 / (1.0 + c1)
    d2 = t2 / (1.0 + c2)
    band = np.array([t1, t2, c1, c2])
    bvn = lik == LIK_BIVARIATE_NORMAL
    f0 = max(1.0 + (n0 - 1.0) * tau, 1e-12)
    f1 = max(1.0 + (n1 - 1.0) * tau, 1e-12)
    r = 0.0
    if bvn:
        r = rho * math.sqrt(n0 * n1 / (f0 * f1))
    if not abs(r) < 1.0:
        return -np.inf
    cond = math.sqrt(1.0 - r * r)
    shift = 0.0
    if not bvn:
        # log g at the peak keeps the exponentials in range
        shift = log_g((x + 0.5) / (n0 + 1.0), (y + 0.5) / (n1 + 1.0), P, i, lik, tau, rho)
        if not shift > -np.inf:
            return -np.inf
    kin = kwin * (abs(r) + cond)
    C = np.empty((4, _C_LEN))
    ia = np.empty(QUAD_MAX_INTERVALS, dtype=np.int64)
    za_ = np.empty(QUAD_MAX_INTERVALS)
    zb_ = np.empty(QUAD_MAX_INTERVALS)
    val = np.empty(QUAD_MAX_INTERVALS)
    err = np.empty(QUAD_MAX_INTERVALS)
    m = 0
    bp = np.empty(6)
    for img in range(4):
        # image 0: (a, b) = (lo, hi); 1: (hi, lo); 2: (1 - lo, 1 - hi); 3: (1 - hi, 1 - lo)
        flip = img >= 2
        if img == 0 or img == 2:
            xo, no_, fo, xi, ni, fi = x, n0, f0, y, n1, f1
        else:
            xo, no_, fo, xi, ni, fi = y, n1, f1, x, n0, f0
        C[img, _C_XO] = xo
        C[img, _C_NO] = no_
        C[img, _C_FO] = fo
        C[img, _C_XI] = xi
        C[img, _C_NI] = ni
        C[img, _C_FI] = fi
        C[img, _C_FLIP] = 1.0 if flip else 0.0
        C[img, _C_SWAP] = 1.0 if (img == 1 or img == 3) else 0.0
        # the outer window |z_o| <= kwin and the inner (marginal) one |z_i| <= kin, in rates
        zo_top = min(kwin, _z_of(0.0, xo, no_, fo))
        zo_bot = max(-kwin, _z_of(1.0, xo, no_, fo))
        zi_top = min(kin, _z_of(0.0, xi, ni, fi))
        zi_bot = max(-kin, _z_of(1.0, xi, ni, fi))
        if zo_bot >= zo_top or zi_bot >= zi_top:
            continue
        po0 = _p_of(zo_top, xo, no_, fo)
        po1 = _p_of(zo_bot, xo, no_, fo)
        pi0 = _p_of(zi_top, xi, ni, fi)
        pi1 = _p_of(zi_bot, xi, ni, fi)
        if flip:
            lo_min, lo_max, h_bot, h_top = 1.0 - po1, 1.0 - po0, 1.0 - pi1, 1.0 - pi0
        else:
            lo_min, lo_max, h_bot, h_top = po0, po1, pi0, pi1
        lo_min = max(lo_min, 0.0)
        lo_max = min(lo_max, d2)
        if lo_min >= lo_max or h_bot > t2 or h_top < d1:
            continue
        for panel in range(2):
            if panel == 0:
                p_lo = lo_min
                p_hi = min(lo_max, d1)
            else:
                p_lo = max(lo_min, d1)
                p_hi = lo_max
            if p_lo >= p_hi:
                continue
            # keep the part where the band meets the inner window: lower edge <= h_top,
            # diagonal <= h_top, upper edge >= h_bot
            p_lo, p_hi = _clip_linear(-c1, h_top - t1, p_lo, p_hi)
            p_lo, p_hi = _clip_linear(1.0, h_top, p_lo, p_hi)
            p_lo, p_hi = _clip_linear(c2, t2 - h_bot, p_lo, p_hi)
            if p_lo >= p_hi:
                continue
            # break where the lower edge (line or diagonal) and the upper edge enter and
            # leave the inner window: the inner integral changes fast between those points
            if panel == 0:
                bp[1], bp[2] = (t1 - h_top) / c1, (t1 - h_bot) / c1
            else:
                bp[1], bp[2] = h_bot, h_top
            bp[3], bp[4] = (t2 - h_top) / c2, (t2 - h_bot) / c2
            bp[0] = p_lo
            bp[5] = p_hi
            for k in range(1, 5):
                bp[k] = min(max(bp[k], p_lo), p_hi)
            bp.sort()
            for seg in range(5):
                if bp[seg + 1] <= bp[seg]:
                    continue
                if flip:
                    za = _z_of(1.0 - bp[seg], xo, no_, fo)
                    zb = _z_of(1.0 - bp[seg + 1], xo, no_, fo)
                else:
                    za = _z_of(bp[seg + 1], xo, no_, fo)
                    zb = _z_of(bp[seg], xo, no_, fo)
                n_piece = 1
                if kwin < 1e5:
                    n_piece = max(1, int(math.ceil((zb - za) / QUAD_MAX_WIDTH)))
                w = (zb - za) / n_piece
                for k in range(n_piece):
                    if m < QUAD_MAX_INTERVALS:
                        ia[m] = img
                        za_[m] = za + k * w
                        zb_[m] = za + (k + 1) * w
                        val[m], err[m] = _gk15(
                            za_[m],
                            zb_[m],
                            C[img],
                            band,
                            r,
                            cond,
                            kwin,
                            lik,
                            tau,
                            rho,
                            shift,
                            P,
                            i,
                            XG,
                            WG,
                        )
                        m += 1
    # adaptive refinement: halve the subinterval with the largest error estimate
    while m > 0:
        total = 0.0
        etot = 0.0
        kmax = 0
        for k in range(m):
            total += val[k]
            etot += err[k]
            if err[k] > err[kmax]:
                kmax = k
        if etot <= QUAD_TOL * total or m >= QUAD_MAX_INTERVALS:
            break
        img = ia[kmax]
        mid = 0.5 * (za_[kmax] + zb_[kmax])
        ia[m] = img
        za_[m] = mid
        zb_[m] = zb_[kmax]
        zb_[kmax] = mid
        val[kmax], err[kmax] = _gk15(
            za_[kmax], mid, C[img], band, r, cond, kwin, lik, tau, rho, shift, P, i, XG, WG
        )
        val[m], err[m] = _gk15(
            mid, zb_[m], C[img], band, r, cond, kwin, lik, tau, rho, shift, P, i, XG, WG
        )
        m += 1
    total = 0.0
    for k in range(m):
        total += val[k]
    if total > 0.0:
        if bvn:
            # eq. 7 in the scores: the bivariate normal density 1 / (2 pi cond) exp(...)
            return math.log(total) - 1.8378770664093453 - math.log(cond)
        return math.log(total) + shift
    return -np.inf


# ----------------------------------------------------------------------------- MHAAR move
@njit(**_JIT)
def mhaar_update(
    rng,
    eps,
    s,
    tau,
    rho,
    eps_p,
    s_p,
    tau_p,
    rho_p,
    log_extra,
    only_group,
    grp,
    g_sidx,
    g_lik,
    delta,
    K,
    P,
    qkind,
    lam,
    mu,
    lat_a,
    lat_b,
    AA,
    AB,
    WC,
    WP,
    coll,
    CUR,
    NEW,
    XG,
    WG,
):
    """One MHAAR move from (eps, s, tau, rho) towards the primed values; updates latents.

    ``log_extra`` holds the log prior ratio and the proposal's Jacobian term. Bases outside
    group ``only_group`` are skipped when it is >= 0 (their factor of the ratio is 1). Returns
    True when the move is accepted (the caller then adopts the primed values).
    """
    n = lat_a.shape[0]
    G = s.shape[0]
    e_c = math.exp(eps)
    e_p = math.exp(eps_p)
    es_c = np.empty(G)
    es_p = np.empty(G)
    la_c = np.empty(G)
    la_p = np.empty(G)
    for g in range(G):
        es_c[g] = math.exp(s[g] * eps)
        es_p[g] = math.exp(s_p[g] * eps_p)
        la_c[g] = log_area(eps, s[g], delta)
        la_p[g] = log_area(eps_p, s_p[g], delta)
    log_ratio = log_extra
    possible = True
    QP = np.empty(6)
    BOX = np.empty(4)
    VC = np.empty((4, 12, 2))
    VP = np.empty((4, 12, 2))
    NC = np.empty(4, dtype=np.int64)
    NP_ = np.empty(4, dtype=np.int64)
    ARC = np.empty(4)
    ARP = np.empty(4)
    SW = np.empty((12, 2))
    SU = np.empty((12, 2))
    for i in range(n):
        j = grp[i]
        NEW[i] = np.nan
        if only_group >= 0 and j != only_group:
            continue
        g = g_sidx[j]
        lik = g_lik[j]
        same_g = lik == LIK_BINOMIAL or (tau[j] == tau_p[j] and rho[j] == rho_p[j])
        same_band = eps == eps_p and s[g] == s_p[g]
        if coll[j]:
            # latent pair integrated out: the exact factor of the ratio
            if same_g and same_band:
                continue
            if possible:
                v = log_band_integral(i, lik, tau_p[j], rho_p[j], eps_p, s_p[g], delta, P, XG, WG)
                NEW[i] = v - la_p[g]
                if v > -np.inf:
                    log_ratio += NEW[i] - CUR[i]
                else:
                    possible = False
            continue
        rmax = -np.inf
        pair = qkind[i] == PROP_PAIR_NORMAL
        mb = 0.0
        wbc = 0.0
        tbc = 0.0
        tbp = 0.0
        if pair:
            pair_shape(P, i, lik, tau[j], rho[j], QP, 0)
            pair_shape(P, i, lik, tau_p[j], rho_p[j], QP, 3)
            # the band part: uniform on R_s of each state within a box around the data
            # (the box depends on both states symmetrically)
            hw0 = PAIR_BOX_K * max(QP[0], QP[3])
            hw1 = PAIR_BOX_K * max(QP[1], QP[4])
            BOX[0] = P[i, 6] - hw0
            BOX[1] = P[i, 6] + hw0
            BOX[2] = P[i, 9] - hw1
            BOX[3] = P[i, 9] + hw1
            tbc = band_box(eps, s[g], delta, BOX, VC, NC, ARC, SW, SU)
            if same_band:
                tbp = tbc
                VP[:, :, :] = VC
                NP_[:] = NC
                ARP[:] = ARC
            else:
                tbp = band_box(eps_p, s_p[g], delta, BOX, VP, NP_, ARP, SW, SU)
            if tbc > 0.0 and tbp > 0.0:
                wbc = 0.5
            elif tbc > 0.0:
                wbc = 1.0
            if tbc > 0.0 or tbp > 0.0:
                mb = PAIR_BAND_WEIGHT
        for k in range(K):
            if k == 0:
                a = lat_a[i]
                b = lat_b[i]
            elif pair:
                if lam > 0.0 and rng.random() < lam:
                    a, b = rng.random(), rng.random()
                elif mb > 0.0 and rng.random() < mb:
                    if rng.random() < wbc:
                        a, b = draw_band_box(rng, VC, NC, ARC, tbc)
                    else:
                        a, b = draw_band_box(rng, VP, NP_, ARP, tbp)
                else:
                    a, b = draw_aux_pair(rng, P, i, QP, 0.0)
            elif mu > 0.0 and rng.random() < mu:
                # the band component of q, symmetric in the two states
                if same_band or rng.random() < 0.5:
                    a, b = draw_band(rng, eps, s[g], delta)
                else:
                    a, b = draw_band(rng, eps_p, s_p[g], delta)
            else:
                a, b = draw_aux(rng, P, i, qkind[i], lam)
            AA[i, k] = a
            AB[i, k] = b
            lo, hi = fold(a, b)
            in_c = in_rs(lo, hi, e_c, es_c[g], delta, s[g])
            in_p = in_rs(lo, hi, e_p, es_p[g], delta, s_p[g])
            if pair:
                bd = 0.0
                if mb > 0.0 and in_box(a, b, BOX):
                    if in_c and tbc > 0.0:
                        bd += wbc / tbc
                    if in_p and tbp > 0.0:
                        bd += (1.0 - wbc) / tbp
                lq = log_q_pair(a, b, P, i, QP, lam, mb, bd)
            else:
                lq = log_q(a, b, P, i, qkind[i], lam)
            if mu > 0.0 and not pair:
                # q = (1 - mu) q_base + mu/2 (U(R_s(theta)) + U(R_s(theta')))
                lq = lq + math.log1p(-mu)
                lb = -np.inf
                if in_c and in_p:
                    lb = math.log(0.5 * mu) + math.log(math.exp(-la_c[g]) + math.exp(-la_p[g]))
                elif in_c:
                    lb = math.log(0.5 * mu) - la_c[g]
                elif in_p:
                    lb = math.log(0.5 * mu) - la_p[g]
                if lb > -np.inf:
                    m = max(lq, lb)
                    lq = m + math.log(math.exp(lq - m) + math.exp(lb - m))
            rc = -np.inf
            rp = -np.inf
            if in_c:
                rc = log_g(a, b, P, i, lik, tau[j], rho[j]) - lq - la_c[g]
            if in_p:
                if same_g and in_c:
                    rp = rc + la_c[g] - la_p[g]
                else:
                    rp = log_g(a, b, P, i, lik, tau_p[j], rho_p[j]) - lq - la_p[g]
            WC[i, k] = rc
            WP[i, k] = rp
            if rc > rmax:
                rmax = rc
            if rp > rmax:
                rmax = rp
        sc = 0.0
        sp = 0.0
        for k in range(K):
            wc = math.exp(WC[i, k] - rmax) if WC[i, k] > -np.inf else 0.0
            wp = math.exp(WP[i, k] - rmax) if WP[i, k] > -np.inf else 0.0
            WC[i, k] = wc
            WP[i, k] = wp
            sc += wc
            sp += wp
        if sp > 0.0 and sc > 0.0 and possible:
            log_ratio += math.log(sp) - math.log(sc)
        else:
            possible = False
    accept = possible and math.log(rng.random()) < log_ratio
    # resample the latent pairs under the retained parameters
    for i in range(n):
        j = grp[i]
        if only_group >= 0 and j != only_group:
            continue
        if coll[j]:
            if accept and not np.isnan(NEW[i]):
                CUR[i] = NEW[i]
            continue
        tot = 0.0
        for k in range(K):
            tot += WP[i, k] if accept else WC[i, k]
        u = rng.random() * tot
        acc = 0.0
        pick = 0
        for k in range(K):
            w = WP[i, k] if accept else WC[i, k]
            acc += w
            if w > 0.0:
                pick = k
                if acc >= u:
                    break
        lat_a[i] = AA[i, pick]
        lat_b[i] = AB[i, pick]
    return accept


@njit(**_JIT)
def init_latents(rng, eps, s, tau, rho, grp, g_sidx, g_lik, delta, K, P, qkind, lam, lat_a, lat_b):
    """Start each latent pair inside R_s.

    By importance resampling of K draws from q, or, when no draw falls inside, at the point
    of the diagonal halfway between the two boundary curves.
    """
    n = lat_a.shape[0]
    e_c = math.exp(eps)
    QP = np.empty(6)
    for i in range(n):
        j = grp[i]
        g = g_sidx[j]
        es = math.exp(s[g] * eps)
        pair = qkind[i] == PROP_PAIR_NORMAL
        if pair:
            pair_shape(P, i, g_lik[j], tau[j], rho[j], QP, 0)
            pair_shape(P, i, g_lik[j], tau[j], rho[j], QP, 3)
        best_w = -np.inf
        tot = 0.0
        cand_a = -1.0
        cand_b = -1.0
        for _ in range(K):
            if pair:
                a, b = draw_aux_pair(rng, P, i, QP, lam)
            else:
                a, b = draw_aux(rng, P, i, qkind[i], lam)
            lo, hi = fold(a, b)
            if in_rs(lo, hi, e_c, es, delta, s[g]):
                if pair:
                    lq = log_q_pair(a, b, P, i, QP, lam, 0.0, 0.0)
                else:
                    lq = log_q(a, b, P, i, qkind[i], lam)
                r = log_g(a, b, P, i, g_lik[j], tau[j], rho[j]) - lq
                if r == -np.inf:
                    continue
                # streaming weighted reservoir of size one, in log space
                if r > best_w:
                    tot = tot * math.exp(best_w - r) + 1.0
                    best_w = r
                    p_new = 1.0 / tot
                else:
                    w = math.exp(r - best_w)
                    tot += w
                    p_new = w / tot
                if rng.random() < p_new:
                    cand_a = a
                    cand_b = b
        if cand_a < 0.0:
            p = 0.5 * ((1.0 - delta) / (1.0 + e_c) + (1.0 - s[g] * delta) / (1.0 + es))
            cand_a = p
            cand_b = p
        lat_a[i] = cand_a
        lat_b[i] = cand_b


@njit(**_JIT)
def group_rho_max(tau, j, grp, P):
    """Largest admissible |rho| of group j at tau: the minimum over the group's rows."""
    out = np.inf
    for i in range(grp.shape[0]):
        if grp[i] == j:
            r = rho_max(tau, P[i, 13], P[i, 15])
            if r < out:
                out = r
    return out


#: Near s = 1 the band R_s is so thin that few auxiliary draws land in it and the chain sticks.
#: Moves between states with max(s, s') > 1 - S_THIN use up to K_MULT_MAX times more auxiliary
#: pairs, in proportion to S_THIN / (1 - max(s, s')). The number depends on (theta, theta')
#: symmetrically, so each pair of reverse moves uses the same K and MHAAR stays exact.
S_THIN = 0.01
K_MULT_MAX = 32


@njit(**_JIT)
def k_eff(K, s, s_p, s_free):
    """Auxiliary pairs for a move between strengths s and s_p (symmetric in the two)."""
    top = 0.0
    for g in range(s.shape[0]):
        if s_free[g]:
            top = max(top, s[g], s_p[g])
    gap = 1.0 - top
    if gap >= S_THIN:
        return K
    if gap <= S_THIN / K_MULT_MAX:
        return K * K_MULT_MAX
    return int(math.ceil(K * S_THIN / gap))


@njit(**_JIT)
def _logit(x):
    return math.log(x) - math.log1p(-x)


@njit(**_JIT)
def _pack(z, eps, s, tau, rho, s_free, g_tau_free, g_rho_free, grp, P):
    """Fill z with the coordinates of the joint move.

    In this order: log eps, logit of each free s, logit of each free tau,
    rho / rho_max(tau) of each free rho.
    """
    z[0] = math.log(eps)
    k = 1
    for g in range(s.shape[0]):
        if s_free[g]:
            z[k] = _logit(s[g])
            k += 1
    for j in range(tau.shape[0]):
        if g_tau_free[j]:
            z[k] = _logit(tau[j])
            k += 1
    for j in range(tau.shape[0]):
        if g_rho_free[j]:
            z[k] = rho[j] / group_rho_max(tau[j], j, grp, P)
            k += 1


@njit(**_JIT)
def run_chain(
    rng,
    grp,
    g_sidx,
    g_lik,
    g_tau_free,
    g_rho_free,
    tau_a,
    tau_b,
    P,
    qkind,
    delta,
    eps_kind,
    eps_p1,
    eps_p2,
    s_free,
    s_a,
    s_b,
    eps0,
    s0,
    tau0,
    rho0,
    n_tune,
    n_draws,
    thin,
    K,
    lam,
    mu,
    target_accept,
    adapt,
    coll,
    nuis_joint,
    XG,
    WG,
):
    """Run one MHAAR chain.

    Warm-up with tuning (then frozen), then ``n_draws`` stored draws, one every ``thin``
    iterations. The joint move is a random walk on (log eps, logit s).

    Each iteration makes up to three kinds of MHAAR move: the paper's joint random walk on
    (log eps, s); a ridge move (eps, s) -> (eps c, s / c) that keeps s eps fixed, along which
    the likelihood is nearly flat (when some s is free); and, for each group with free
    over-dispersion parameters, a random walk on (logit tau, rho / rho_max(tau)) that touches
    only that group's bases. With ``nuis_joint`` the joint move also proposes the free
    (logit tau, rho / rho_max) of every group.

    Returns
    -------
    eps_out (D,), s_out (D, G), tau_out (D, J), rho_out (D, J), acc_out (D, 3) (joint, ridge,
    nuisance: fraction of groups accepted), scales (3 + G + J,) (joint factor, ridge factor,
    shape of log eps, shape of each s, nuisance factor of each group).
    """
    n = P.shape[0]
    G = s0.shape[0]
    J = g_sidx.shape[0]
    n_free = 0
    for g in range(G):
        if s_free[g]:
            n_free += 1
    n_nuis = 0
    for j in range(J):
        if g_tau_free[j] or g_rho_free[j]:
            n_nuis += 1
    eps = eps0
    s = s0.copy()
    s_p = s0.copy()
    tau = tau0.copy()
    rho = rho0.copy()
    tau_p = tau0.copy()
    rho_p = rho0.copy()
    lat_a = np.empty(n)
    lat_b = np.empty(n)
    init_latents(rng, eps, s, tau, rho, grp, g_sidx, g_lik, delta, K, P, qkind, lam, lat_a, lat_b)
    KM = K * K_MULT_MAX
    AA = np.empty((n, KM))
    AB = np.empty((n, KM))
    WC = np.empty((n, KM))
    WP = np.empty((n, KM))
    # log of the integrated likelihood (over R_s, per unit area) of the collapsed bases
    CUR = np.zeros(n)
    NEW = np.zeros(n)
    for i in range(n):
        j = grp[i]
        if coll[j]:
            g = g_sidx[j]
            CUR[i] = log_band_integral(
                i, g_lik[j], tau[j], rho[j], eps, s[g], delta, P, XG, WG
            ) - log_area(eps, s[g], delta)

    eps_out = np.empty(n_draws)
    s_out = np.empty((n_draws, G))
    tau_out = np.empty((n_draws, J))
    rho_out = np.empty((n_draws, J))
    acc_out = np.zeros((n_draws, 3))

    # the free nuisance parameters that the joint move also proposes (all, or none)
    jt_free = g_tau_free & nuis_joint
    jr_free = g_rho_free & nuis_joint
    n_tfree = 0
    n_rfree = 0
    for j in range(J):
        if jt_free[j]:
            n_tfree += 1
        if jr_free[j]:
            n_rfree += 1
    D = 1 + n_free + n_tfree + n_rfree
    z = np.empty(D)
    zp = np.empty(D)
    xi = np.empty(D)
    # Cholesky factor of the joint move's step shape: diagonal until the warm-up window ends
    Lc = np.zeros((D, D))
    for d in range(D):
        if d == 0:
            Lc[d, d] = 0.5
        elif d <= n_free:
            Lc[d, d] = 0.6
        elif d <= n_free + n_tfree:
            Lc[d, d] = 0.5
        else:
            Lc[d, d] = 0.3
    m_z = np.zeros(D)
    C_z = np.zeros((D, D))
    log_fj = math.log(2.38 / math.sqrt(D))
    log_fr = math.log(0.5)
    log_fn = np.full(J, math.log(0.5))
    shape_e = 0.5
    shape_s = np.full(G, 0.6)  # sd of the logit(s) steps of the joint move
    # Welford accumulators for the shape window
    w_n = 0
    win_lo = n_tune // 4
    win_hi = n_tune // 2

    total = n_tune + n_draws * thin
    for it in range(total):
        tuning = it < n_tune
        # --- move 1: joint random walk on z = (log eps, logit s, logit tau, rho / rho_max)
        # (Alg. 1, extended to the free nuisance parameters when nuis_joint), with the step
        # covariance estimated in warm-up
        _pack(z, eps, s, tau, rho, s_free, jt_free, jr_free, grp, P)
        fj = math.exp(log_fj)
        for d in range(D):
            xi[d] = rng.standard_normal()
        for d in range(D):
            acc_z = 0.0
            for e in range(d + 1):
                acc_z += Lc[d, e] * xi[e]
            zp[d] = z[d] + fj * acc_z
        eps_p = math.exp(zp[0])
        valid = eps_p > 0.0 and eps_p < 1e300
        lpr = (
            log_prior_eps(eps_p, eps_kind, eps_p1, eps_p2)
            - log_prior_eps(eps, eps_kind, eps_p1, eps_p2)
            + zp[0]
            - z[0]
        )
        k = 1
        for g in range(G):
            if s_free[g]:
                # logit(s): near s = 1 the band R_s is thin; Jacobian s (1 - s)
                s_p[g] = 1.0 / (1.0 + math.exp(-zp[k]))
                k += 1
                if not (s_p[g] > 0.0 and s_p[g] < 1.0):
                    valid = False
                else:
                    lpr += (
                        log_prior_s(s_p[g], s_a[g], s_b[g])
                        - log_prior_s(s[g], s_a[g], s_b[g])
                        + math.log(s_p[g])
                        + math.log1p(-s_p[g])
                        - math.log(s[g])
                        - math.log1p(-s[g])
                    )
            else:
                s_p[g] = s[g]
        for j in range(J):
            tau_p[j] = tau[j]
            if jt_free[j]:
                tau_p[j] = 1.0 / (1.0 + math.exp(-zp[k]))
                k += 1
                if not (tau_p[j] > 0.0 and tau_p[j] < 1.0):
                    valid = False
                else:
                    lpr += tau_a[j] * (math.log(tau_p[j]) - math.log(tau[j])) + tau_b[j] * (
                        math.log1p(-tau_p[j]) - math.log1p(-tau[j])
                    )
        for j in range(J):
            rho_p[j] = rho[j]
            if not (jr_free[j] or jt_free[j]):
                continue  # rho_max (a pass over the bases) only where it can change or bind
            rmax_p = group_rho_max(tau_p[j], j, grp, P) if valid else 0.0
            if jr_free[j]:
                if not (zp[k] > -1.0 and zp[k] < 1.0):
                    valid = False
                rho_p[j] = zp[k] * rmax_p
                k += 1
            elif jt_free[j] and not abs(rho[j]) < rmax_p:
                valid = False
        a1 = False
        if valid and lpr > -np.inf:
            a1 = mhaar_update(
                rng,
                eps,
                s,
                tau,
                rho,
                eps_p,
                s_p,
                tau_p,
                rho_p,
                lpr,
                -1,
                grp,
                g_sidx,
                g_lik,
                delta,
                k_eff(K, s, s_p, s_free),
                P,
                qkind,
                lam,
                mu,
                lat_a,
                lat_b,
                AA,
                AB,
                WC,
                WP,
                coll,
                CUR,
                NEW,
                XG,
                WG,
            )
            if a1:
                eps = eps_p
                for g in range(G):
                    s[g] = s_p[g]
                for j in range(J):
                    tau[j] = tau_p[j]
                    rho[j] = rho_p[j]
        # --- move 2: ridge move along s * eps = const
        a2 = False
        if n_free > 0:
            c = math.exp(math.exp(log_fr) * rng.standard_normal())
            eps_p = eps * c
            valid = eps_p > 0.0 and eps_p < 1e300
            lpr = log_prior_eps(eps_p, eps_kind, eps_p1, eps_p2) - log_prior_eps(
                eps, eps_kind, eps_p1, eps_p2
            )
            for g in range(G):
                if s_free[g]:
                    s_p[g] = s[g] / c
                    if not (s_p[g] > 0.0 and s_p[g] < 1.0):
                        valid = False
                    else:
                        lpr += log_prior_s(s_p[g], s_a[g], s_b[g]) - log_prior_s(
                            s[g], s_a[g], s_b[g]
                        )
                else:
                    s_p[g] = s[g]
            if valid and lpr > -np.inf:
                # translation by (u, -u, ..., -u) in (log eps, log s_free): Jacobian c^(1 - m)
                a2 = mhaar_update(
                    rng,
                    eps,
                    s,
                    tau,
                    rho,
                    eps_p,
                    s_p,
                    tau,
                    rho,
                    lpr + (1.0 - n_free) * math.log(c),
                    -1,
                    grp,
                    g_sidx,
                    g_lik,
                    delta,
                    k_eff(K, s, s_p, s_free),
                    P,
                    qkind,
                    lam,
                    mu,
                    lat_a,
                    lat_b,
                    AA,
                    AB,
                    WC,
                    WP,
                    coll,
                    CUR,
                    NEW,
                    XG,
                    WG,
                )
                if a2:
                    eps = eps_p
                    for g in range(G):
                        s[g] = s_p[g]
        # --- move 3: over-dispersion parameters, one group at a time
        n_acc3 = 0
        for j in range(J):
            if not (g_tau_free[j] or g_rho_free[j]):
                continue
            for jj in range(J):
                tau_p[jj] = tau[jj]
                rho_p[jj] = rho[jj]
            fn = math.exp(log_fn[j])
            rmax_c = group_rho_max(tau[j], j, grp, P)
            lpr = 0.0
            ok = True
            if g_tau_free[j]:
                # random walk on logit(tau); Jacobian tau (1 - tau); Beta prior
                tau_p[j] = 1.0 / (1.0 + math.exp(-(_logit(tau[j]) + fn * rng.standard_normal())))
                if not (tau_p[j] > 0.0 and tau_p[j] < 1.0):
                    ok = False
                else:
                    lpr += tau_a[j] * (math.log(tau_p[j]) - math.log(tau[j])) + tau_b[j] * (
                        math.log1p(-tau_p[j]) - math.log1p(-tau[j])
                    )
            rmax_p = group_rho_max(tau_p[j], j, grp, P)
            if g_rho_free[j]:
                # rho = r rho_max(tau), r ~ Uniform(-1, 1): random walk on r; in (logit tau, r)
                # the prior of rho given tau (uniform) and the Jacobian rho_max cancel
                r_c = rho[j] / rmax_c
                r_p = r_c + fn * 0.6 * rng.standard_normal()
                if not (r_p > -1.0 and r_p < 1.0):
                    ok = False
                rho_p[j] = r_p * rmax_p
            elif not abs(rho[j]) < rmax_p:
                ok = False  # fixed rho inadmissible at the proposed tau
            if ok:
                acc3 = mhaar_update(
                    rng,
                    eps,
                    s,
                    tau,
                    rho,
                    eps,
                    s,
                    tau_p,
                    rho_p,
                    lpr,
                    j,
                    grp,
                    g_sidx,
                    g_lik,
                    delta,
                    k_eff(K, s, s, s_free),
                    P,
                    qkind,
                    lam,
                    mu,
                    lat_a,
                    lat_b,
                    AA,
                    AB,
                    WC,
                    WP,
                    coll,
                    CUR,
                    NEW,
                    XG,
                    WG,
                )
            else:
                acc3 = False
            if acc3:
                tau[j] = tau_p[j]
                rho[j] = rho_p[j]
                n_acc3 += 1
            if tuning and adapt:
                gamma = 1.0 / (it + 1.0) ** 0.6
                log_fn[j] += gamma * ((1.0 if acc3 else 0.0) - target_accept)
        if tuning:
            if adapt:
                gamma = 1.0 / (it + 1.0) ** 0.6
                log_fj += gamma * ((1.0 if a1 else 0.0) - target_accept)
                if n_free > 0:
                    log_fr += gamma * ((1.0 if a2 else 0.0) - target_accept)
                if it >= win_lo and it < win_hi:
                    w_n += 1
                    _pack(z, eps, s, tau, rho, s_free, jt_free, jr_free, grp, P)
                    for d in range(D):
                        xi[d] = z[d] - m_z[d]
                        m_z[d] += xi[d] / w_n
                    for d in range(D):
                        for e in range(D):
                            C_z[d, e] += xi[d] * (z[e] - m_z[e])
                if it == win_hi - 1 and w_n > 10 + 2 * D:
                    cov = C_z / (w_n - 1)
                    for d in range(D):
                        # a coordinate that did not move keeps a usable step
                        cov[d, d] = max(cov[d, d] * (1.0 + 1e-3), 1e-4)
                    if np.all(np.isfinite(cov)):
                        Lc = np.linalg.cholesky(cov)
                    shape_e = math.sqrt(cov[0, 0])
                    k = 1
                    for g in range(G):
                        if s_free[g]:
                            shape_s[g] = math.sqrt(cov[k, k])
                            k += 1
                    log_fj = math.log(2.38 / math.sqrt(D))
        else:
            # acceptance is averaged over the `thin` iterations of each stored draw
            d = (it - n_tune) // thin
            acc_out[d, 0] += (1.0 if a1 else 0.0) / thin
            acc_out[d, 1] += (1.0 if a2 else 0.0) / thin
            if n_nuis > 0:
                acc_out[d, 2] += n_acc3 / n_nuis / thin
            if (it - n_tune) % thin == thin - 1:
                eps_out[d] = eps
                for g in range(G):
                    s_out[d, g] = s[g]
                for j in range(J):
                    tau_out[d, j] = tau[j]
                    rho_out[d, j] = rho[j]
    scales = np.empty(3 + G + J)
    scales[0] = math.exp(log_fj)
    scales[1] = math.exp(log_fr)
    scales[2] = shape_e
    for g in range(G):
        scales[3 + g] = shape_s[g]
    for j in range(J):
        scales[3 + G + j] = math.exp(log_fn[j])
    return eps_out, s_out, tau_out, rho_out, acc_out, scales
