"""Band quadrature: the likelihood of a base with its latent pair integrated out (numpy, numba).

:func:`log_band_integral` integrates g_i(a, b) (:func:`samplers.model.densities.log_g`) of an
over-dispersed base (bivariate normal or beta-binomial) over the band R_s(eps, delta). The
exact sampler (:mod:`samplers.exact.chain`) calls it for every over-dispersed base; MHAAR calls it
for the bases of groups whose latent pairs are integrated out (``integrate_latents``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..numerics.jit import JIT
from ..numerics.smallsort import sort_small
from .codes import LIK_BIVARIATE_NORMAL
from .densities import N0, N1, X, Y, dispersion, log_g

#: Most Gauss-Legendre nodes of the inner rule of the band integrals of over-dispersed groups.
QUAD_NODES = 24


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
# row of the Jacobian table of the inner rate (:func:`fill_jacobian_tables`), -1: none
_C_KEY = 8
_C_LEN = 9

#: Points of each Jacobian table of :func:`fill_jacobian_tables` (equally spaced in the score).
JAC_POINTS = 161
#: Half-width, in standard scores, of the range a Jacobian table covers: the inner window of
#: :func:`log_band_integral` lies within QUAD_K (|r| + sqrt(1 - r^2)) <= QUAD_K sqrt(2) of 0.
JAC_K = QUAD_K * math.sqrt(2.0)
#: Largest relative error of a Jacobian table's interpolation, checked at the midpoints of its
#: intervals when it is filled; a table that misses it is not used (its rows compute the
#: Jacobian at each node). Tables miss it near a zero or full count of a large N with a large
#: tau, where the Jacobian changes within a small fraction of a standard score.
JAC_TOL = 1e-4


@njit(**JIT)
def _z_of(p, x, n, f):
    """Return the standard score (x - n p) / sd(p) of the count x at rate p.

    The sd is as in :func:`log_bvn`.
    """
    sh = (n * p + 0.5) / (n + 1.0)
    return (x - n * p) / math.sqrt(sh * (1.0 - sh) * n * f)


@njit(**JIT)
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


@njit(**JIT)
def _dp_dz(p, z, n, f):
    """|dp/dz| / sd(p) = 1 / (n + z sd'(p)) along :func:`_z_of` (positive: z is monotone)."""
    sh = (n * p + 0.5) / (n + 1.0)
    sd = math.sqrt(sh * (1.0 - sh) * n * f)
    dsd = n / (n + 1.0) * n * f * (1.0 - 2.0 * sh) / (2.0 * sd)
    return 1.0 / max(n + z * dsd, 1e-12)


@njit(**JIT)
def jacobian_table(z0, z1, x, n, f, T, k):
    """Fill row k of T with :func:`_dp_dz` of the count x of n at equally spaced scores z0..z1.

    The Jacobian of one count is the same function of its score for every row with that count
    and size (and tau), whatever the other count: rows of a group share the table. Returns
    whether the table's interpolation (:func:`_jac_interp`) is within JAC_TOL (relative) of the
    Jacobian at the midpoint of every interval.
    """
    m = T.shape[1]
    h = (z1 - z0) / (m - 1)
    for j in range(m):
        z = z0 + j * h
        T[k, j] = _dp_dz(_p_of(z, x, n, f), z, n, f)
    for j in range(m - 1):
        z = z0 + (j + 0.5) * h
        v = _dp_dz(_p_of(z, x, n, f), z, n, f)
        if not abs(_jac_interp(T, k, z0, z1, z) - v) <= JAC_TOL * v:
            return False
    return True


@njit(**JIT)
def jacobian_range(x, n, f):
    """Return the scores (z0, z1) a Jacobian table of the count x of n covers.

    The part of [-JAC_K, JAC_K] where the rate lies in [0, 1] (the score decreases in the rate).
    """
    return max(-JAC_K, _z_of(1.0, x, n, f)), min(JAC_K, _z_of(0.0, x, n, f))


@njit(**JIT)
def _jac_interp(T, k, z0, z1, z):
    """Cubic (four-point Lagrange) interpolation of row k of the Jacobian table T at z."""
    m = T.shape[1]
    t = (z - z0) / (z1 - z0) * (m - 1)
    j = min(max(int(t), 1), m - 3)
    u = t - j
    um, u1, u2 = u + 1.0, u - 1.0, u - 2.0
    return (
        -u * u1 * u2 * T[k, j - 1] / 6.0
        + um * u1 * u2 * T[k, j] / 2.0
        - um * u * u2 * T[k, j + 1] / 2.0
        + um * u * u1 * T[k, j + 2] / 6.0
    )


@njit(**JIT)
def _clip_linear(alpha, beta, u0, u1):
    """Intersect [u0, u1] with {u : alpha u <= beta}."""
    if alpha > 0.0:
        u1 = min(u1, beta / alpha)
    elif alpha < 0.0:
        u0 = max(u0, beta / alpha)
    elif beta < 0.0:
        u1 = u0
    return u0, u1


@njit(**JIT)
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


@njit(**JIT)
def _outer_f(zo, C, band, r, cond, kwin, lik, tau, rho, shift, P, i, XG, WG, JT, JZ):
    """Return the outer integrand at the standard score zo of the outer rate (one image).

    The inner integral over the standard score of the inner rate, inside the band and within
    kwin conditional sds of its conditional mean r zo, by a Gauss-Legendre rule. For eq. 7
    the integrand is exp(-(zo^2 + u^2 / cond^2) / 2) (u = z_i - r zo) times the Jacobians
    :func:`_dp_dz` of both rates (the constant 1 / (2 pi cond) is applied by the caller); for
    another g it is g / g(peak) times |dp/dz| of both rates. For eq. 7 the Jacobian of the
    inner rate is read from row C[_C_KEY] of the table JT (range JZ[row]) when that is >= 0.
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
        key = int(C[_C_KEY])
        for ji in range(nin):
            zi = im + ih * XG[nin, ji]
            u = zi - cm
            e = -0.5 * zo * zo - u * u * inv2c
            if e > -700.0:
                if key >= 0:
                    jac = _jac_interp(JT, key, JZ[key, 0], JZ[key, 1], zi)
                else:
                    jac = _dp_dz(_p_of(zi, xi, ni, fi), zi, ni, fi)
                inner += WG[nin, ji] * math.exp(e) * jac
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


@njit(**JIT)
def _gk15(za, zb, C, band, r, cond, kwin, lik, tau, rho, shift, P, i, XG, WG, JT, JZ):
    """Gauss-Kronrod 7-15 estimate of the outer integral over [za, zb] and its error."""
    c = 0.5 * (za + zb)
    h = 0.5 * (zb - za)
    fc = _outer_f(c, C, band, r, cond, kwin, lik, tau, rho, shift, P, i, XG, WG, JT, JZ)
    res_k = fc * _GK_W[7]
    res_g = fc * _G7_W[3]
    for j in range(7):
        dx = h * _GK_X[j]
        f1 = _outer_f(c - dx, C, band, r, cond, kwin, lik, tau, rho, shift, P, i, XG, WG, JT, JZ)
        f2 = _outer_f(c + dx, C, band, r, cond, kwin, lik, tau, rho, shift, P, i, XG, WG, JT, JZ)
        res_k += _GK_W[j] * (f1 + f2)
        if j % 2 == 1:
            res_g += _G7_W[j // 2] * (f1 + f2)
    return res_k * h, abs((res_k - res_g) * h)


@njit(**JIT)
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
    no_tab = np.empty((0, JAC_POINTS))
    return log_band_integral_tab(
        i, lik, tau, rho, eps, s, delta, P, XG, WG, no_tab, np.empty((0, 3)), -1, -1
    )


@njit(**JIT)
def log_band_integral_tab(i, lik, tau, rho, eps, s, delta, P, XG, WG, JT, JZ, kx, ky):
    """Return :func:`log_band_integral` with the inner Jacobians of eq. 7 read from tables.

    Row kx of JT is the Jacobian of row i's first count (X of N0) and row ky that of its second
    (Y of N1), as :func:`fill_jacobian_tables` fills them at this tau (-1: computed at each
    node, as :func:`log_band_integral` does). Rows of the same group with a count in common
    share that count's table: the inner rule, which evaluates the Jacobian at ~10 to 24 nodes
    for each of ~100 to 300 outer nodes, then costs one interpolation instead of a square
    root and a quadratic root at each. Only for eq. 7; the beta-binomial ignores the tables.
    The fallback over the whole square computes the Jacobians (the tables do not cover it).
    """
    v = _band_integral(i, lik, tau, rho, eps, s, delta, P, XG, WG, QUAD_K, JT, JZ, kx, ky)
    if v == -np.inf:
        v = _band_integral(i, lik, tau, rho, eps, s, delta, P, XG, WG, 1e6, JT, JZ, -1, -1)
    return v


@njit(**JIT)
def fill_jacobian_tables(k_c, k_n, k_tau, JT, JZ):
    """Fill the Jacobian tables of :func:`log_band_integral_tab`: one row per (count, size, tau).

    Row k of JT holds :func:`_dp_dz` of the count k_c[k] of k_n[k] at dispersion
    1 + (k_n[k] - 1) k_tau[k], at JAC_POINTS scores equally spaced over (JZ[k, 0], JZ[k, 1]) =
    :func:`jacobian_range`, the scores of the rates in [0, 1] within JAC_K; JZ[k, 2] is 1 where
    the table passed its check (:func:`jacobian_table`), else 0 (then it is not used).
    """
    for k in range(k_c.shape[0]):
        f = dispersion(k_n[k], k_tau[k])
        z0, z1 = jacobian_range(k_c[k], k_n[k], f)
        JZ[k, 0] = z0
        JZ[k, 1] = z1
        ok = z1 > z0 and jacobian_table(z0, z1, k_c[k], k_n[k], f, JT, k)
        JZ[k, 2] = 1.0 if ok else 0.0


@njit(**JIT)
def _band_integral(i, lik, tau, rho, eps, s, delta, P, XG, WG, kwin, JT, JZ, kx, ky):
    """Log of the integral of g(x, y | a, b) over R_s for over-dispersed base i (see above).

    Over 150 lines on purpose: the four mirror images of the band, their outer and inner
    windows, the break points and the adaptive refinement share a dozen local arrays and
    scalars of one evaluation, in the innermost loop of the exact sampler; cut into functions
    they would pass all of them on every call, and the order of the floating-point operations,
    on which the draws depend bit for bit, would have to be kept across the cuts.
    """
    x = P[i, X]
    n0 = P[i, N0]
    y = P[i, Y]
    n1 = P[i, N1]
    t1 = 1.0 - delta
    t2 = 1.0 - s * delta
    c1 = math.exp(eps)
    c2 = math.exp(s * eps)
    d1 = t1 / (1.0 + c1)
    d2 = t2 / (1.0 + c2)
    band = np.array([t1, t2, c1, c2])
    bvn = lik == LIK_BIVARIATE_NORMAL
    f0 = dispersion(n0, tau)
    f1 = dispersion(n1, tau)
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
        # the inner rate is the second count's in images 0 and 2, the first's in 1 and 3
        key = ky if (img == 0 or img == 2) else kx
        C[img, _C_KEY] = float(key if key >= 0 and JZ[key, 2] > 0.0 else -1)
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
            sort_small(bp, bp.shape[0])
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
                            JT,
                            JZ,
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
            za_[kmax], mid, C[img], band, r, cond, kwin, lik, tau, rho, shift, P, i, XG, WG, JT, JZ
        )
        val[m], err[m] = _gk15(
            mid, zb_[m], C[img], band, r, cond, kwin, lik, tau, rho, shift, P, i, XG, WG, JT, JZ
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
