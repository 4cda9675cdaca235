"""Numba kernels of MCMC-DP-Est (MHAAR, Yildirim et al. Alg. 1).

Only numpy and numba live here. Everything is a plain function of arrays, scalars and a
``numpy.random.Generator``; the public wrapper in :mod:`samplers.mhaar` validates and packs.

Target: p(eps, s_1..s_G, (alpha_i, beta_i)_i | X, Y) with (alpha_i, beta_i) | eps, s uniform on
R_{s_g(i)}(eps, delta) and binomial counts. A "strength variable" g is either free (Beta prior,
moved by the sampler) or fixed.

Auxiliary proposals (the latent pairs are refreshed by importance sampling from q, which does
not depend on (eps, s), so the averaged acceptance ratio keeps the posterior exact for any K,
Andrieu et al. 2020):

* ``PROP_UNIFORM`` (0): q uniform on the unit square, as in the paper.
* ``PROP_BETA_MIX`` (1): q = (1 - lam) Beta(X+1, N0-X+1) x Beta(Y+1, N1-Y+1) + lam Uniform, the
  normalised likelihood with a defensive uniform part. With lam = 0 the importance weight
  g/q is constant, so only the indicator of R_s varies.
* ``PROP_NORMAL_MIX`` (2): as (1) with each Beta replaced by a normal of the same mean and an
  inflated sd, truncated to [0, 1]: the same shape at a fraction of the cost of Beta draws,
  with g/q evaluated exactly.

The weight of a candidate (a, b) under (eps, s) is ``1{(a, b) in R_s} / |R_s| * g(X, Y|a, b) /
q(a, b)``. We store ``r = log g - log q`` (up to a per-base constant) and evaluate the indicator
through the folded coordinates lo = min, hi = max of (a, b) mapped into the lower-left half.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

PROP_UNIFORM = 0
PROP_BETA_MIX = 1
PROP_NORMAL_MIX = 2

#: Columns of the per-base parameter matrix P (n, 12): Beta shapes and log-normalisers of the
#: normalised likelihood, then (mean, sd, log normaliser) of the truncated normal proposal of
#: each coordinate.
N_PARAMS = 12

_JIT = {"cache": True, "nogil": True, "error_model": "numpy"}


@njit(**_JIT)
def log_prior_eps(eps, kind, p1, p2):
    """Log prior density of eps up to a constant (0: half-normal(p1), 1: lognormal(p1, p2))."""
    if not eps > 0.0:
        return -np.inf
    if kind == 0:
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
    """log |R_s(eps, delta)| (paper, below eq. 3)."""
    v = 2.0 * (
        (1.0 - s * delta) ** 2 / (1.0 + math.exp(s * eps))
        - (1.0 - delta) ** 2 / (1.0 + math.exp(eps))
    )
    if v > 0.0:
        return math.log(v)
    return -np.inf


@njit(**_JIT)
def _xlogy(c, v):
    # c * log(v) with 0 * log(0) = 0
    if c == 0.0:
        return 0.0
    return c * math.log(v)


@njit(**_JIT)
def log_lik_shape(a, b, a0, b0, a1, b1, lb0, lb1):
    """log of Beta(a; a0, b0) * Beta(b; a1, b1), the normalised binomial likelihood."""
    return (
        _xlogy(a0 - 1.0, a)
        + _xlogy(b0 - 1.0, 1.0 - a)
        - lb0
        + _xlogy(a1 - 1.0, b)
        + _xlogy(b1 - 1.0, 1.0 - b)
        - lb1
    )


@njit(**_JIT)
def log_weight_ratio(a, b, P, i, kind, lam):
    """r = log g(X, Y | a, b) - log q(a, b), up to a per-base constant (row ``i`` of ``P``)."""
    lbp = log_lik_shape(a, b, P[i, 0], P[i, 1], P[i, 2], P[i, 3], P[i, 4], P[i, 5])
    if kind == PROP_UNIFORM:
        return lbp
    if kind == PROP_BETA_MIX:
        lq = lbp
    else:
        za = (a - P[i, 6]) / P[i, 7]
        zb = (b - P[i, 9]) / P[i, 10]
        lq = -0.5 * (za * za + zb * zb) - P[i, 8] - P[i, 11]
    if lam <= 0.0:
        return lbp - lq
    # lbp - log((1 - lam) e^lq + lam)
    u = math.log1p(-lam) + lq if lam < 1.0 else -np.inf
    v = math.log(lam)
    m = max(u, v)
    return lbp - (m + math.log(math.exp(u - m) + math.exp(v - m)))


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
def mhaar_update(
    rng,
    eps,
    s,
    eps_p,
    s_p,
    log_extra,
    sidx,
    delta,
    K,
    P,
    kind,
    lam,
    lat_a,
    lat_b,
    AA,
    AB,
    LO,
    HI,
    W,
):
    """One MHAAR move from (eps, s) towards (eps_p, s_p); updates latents in place.

    ``log_extra`` holds the log prior ratio and the proposal's Jacobian term. Returns True when
    the move is accepted (the caller then adopts eps_p, s_p).
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
    for i in range(n):
        g = sidx[i]
        # draw auxiliaries (slot 0 is the current latent)
        rmax = -np.inf
        for k in range(K):
            if k == 0:
                a = lat_a[i]
                b = lat_b[i]
            else:
                a, b = draw_aux(rng, P, i, kind, lam)
            AA[i, k] = a
            AB[i, k] = b
            lo, hi = fold(a, b)
            LO[i, k] = lo
            HI[i, k] = hi
            r = log_weight_ratio(a, b, P, i, kind, lam)
            W[i, k] = r
            if r > rmax:
                rmax = r
        sc = 0.0
        sp = 0.0
        for k in range(K):
            w = math.exp(W[i, k] - rmax)
            W[i, k] = w
            if in_rs(LO[i, k], HI[i, k], e_c, es_c[g], delta, s[g]):
                sc += w
            if in_rs(LO[i, k], HI[i, k], e_p, es_p[g], delta, s_p[g]):
                sp += w
        if sp > 0.0 and possible:
            log_ratio += math.log(sp) - math.log(sc) - (la_p[g] - la_c[g])
        else:
            possible = False
    accept = possible and math.log(rng.random()) < log_ratio
    if accept:
        e_f = e_p
        es_f = es_p
        s_f = s_p
    else:
        e_f = e_c
        es_f = es_c
        s_f = s
    # resample the latent pairs under the retained parameters
    for i in range(n):
        g = sidx[i]
        tot = 0.0
        for k in range(K):
            if in_rs(LO[i, k], HI[i, k], e_f, es_f[g], delta, s_f[g]):
                tot += W[i, k]
            else:
                W[i, k] = 0.0
        u = rng.random() * tot
        acc = 0.0
        pick = 0
        for k in range(K):
            acc += W[i, k]
            if W[i, k] > 0.0:
                pick = k
                if acc >= u:
                    break
        lat_a[i] = AA[i, pick]
        lat_b[i] = AB[i, pick]
    return accept


@njit(**_JIT)
def init_latents(rng, eps, s, sidx, delta, K, P, kind, lam, lat_a, lat_b):
    """Start each latent pair inside R_s: importance resampling of K draws from q, or, when no
    draw falls inside, the point of the diagonal halfway between the two boundary curves."""
    n = lat_a.shape[0]
    e_c = math.exp(eps)
    for i in range(n):
        g = sidx[i]
        es = math.exp(s[g] * eps)
        best_w = -np.inf
        tot = 0.0
        cand_a = -1.0
        cand_b = -1.0
        for _ in range(K):
            a, b = draw_aux(rng, P, i, kind, lam)
            lo, hi = fold(a, b)
            if in_rs(lo, hi, e_c, es, delta, s[g]):
                r = log_weight_ratio(a, b, P, i, kind, lam)
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
def run_chain(
    rng,
    sidx,
    P,
    delta,
    eps_kind,
    eps_p1,
    eps_p2,
    s_free,
    s_a,
    s_b,
    eps0,
    s0,
    n_tune,
    n_draws,
    K,
    kind,
    lam,
    target_accept,
    adapt,
):
    """Run one MHAAR chain: warm-up with tuning (then frozen), then ``n_draws`` stored draws.

    Each iteration makes two MHAAR moves: the paper's joint random walk (log eps, s) and a
    ridge move (eps, s) -> (eps * c, s / c) that keeps s * eps fixed, along which the
    likelihood is nearly flat and the joint walk is slow (only when some s is free).

    Returns
    -------
    eps_out : (n_draws,) ; s_out : (n_draws, G) ; acc_out : (n_draws, 2) ; scales : (4 + G,)
        scales = [joint factor, ridge factor, shape of log eps, unused, shape of each s].
    """
    n = P.shape[0]
    G = s0.shape[0]
    n_free = 0
    for g in range(G):
        if s_free[g]:
            n_free += 1
    eps = eps0
    s = s0.copy()
    s_p = s0.copy()
    lat_a = np.empty(n)
    lat_b = np.empty(n)
    init_latents(rng, eps, s, sidx, delta, K, P, kind, lam, lat_a, lat_b)
    AA = np.empty((n, K))
    AB = np.empty((n, K))
    LO = np.empty((n, K))
    HI = np.empty((n, K))
    W = np.empty((n, K))

    eps_out = np.empty(n_draws)
    s_out = np.empty((n_draws, G))
    acc_out = np.zeros((n_draws, 2), dtype=np.bool_)

    log_fj = math.log(2.38 / math.sqrt(1.0 + n_free))
    log_fr = math.log(0.5)
    shape_e = 0.5
    shape_s = np.full(G, 0.15)
    # Welford accumulators for the shape window
    w_n = 0
    m_e = 0.0
    v_e = 0.0
    m_s = np.zeros(G)
    v_s = np.zeros(G)
    win_lo = n_tune // 4
    win_hi = n_tune // 2

    total = n_tune + n_draws
    for it in range(total):
        tuning = it < n_tune
        # --- move 1: joint random walk on (log eps, s) (Alg. 1)
        fj = math.exp(log_fj)
        eps_p = eps * math.exp(fj * shape_e * rng.standard_normal())
        valid = eps_p > 0.0 and eps_p < 1e300
        lpr = log_prior_eps(eps_p, eps_kind, eps_p1, eps_p2) - log_prior_eps(
            eps, eps_kind, eps_p1, eps_p2
        )
        for g in range(G):
            if s_free[g]:
                s_p[g] = s[g] + fj * shape_s[g] * rng.standard_normal()
                if not (s_p[g] > 0.0 and s_p[g] < 1.0):
                    valid = False
                else:
                    lpr += log_prior_s(s_p[g], s_a[g], s_b[g]) - log_prior_s(s[g], s_a[g], s_b[g])
            else:
                s_p[g] = s[g]
        a1 = False
        if valid and lpr > -np.inf:
            a1 = mhaar_update(
                rng,
                eps,
                s,
                eps_p,
                s_p,
                lpr + math.log(eps_p / eps),
                sidx,
                delta,
                K,
                P,
                kind,
                lam,
                lat_a,
                lat_b,
                AA,
                AB,
                LO,
                HI,
                W,
            )
            if a1:
                eps = eps_p
                for g in range(G):
                    s[g] = s_p[g]
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
                    eps_p,
                    s_p,
                    lpr + (1.0 - n_free) * math.log(c),
                    sidx,
                    delta,
                    K,
                    P,
                    kind,
                    lam,
                    lat_a,
                    lat_b,
                    AA,
                    AB,
                    LO,
                    HI,
                    W,
                )
                if a2:
                    eps = eps_p
                    for g in range(G):
                        s[g] = s_p[g]
        if tuning:
            if adapt:
                gamma = 1.0 / (it + 1.0) ** 0.6
                log_fj += gamma * ((1.0 if a1 else 0.0) - target_accept)
                if n_free > 0:
                    log_fr += gamma * ((1.0 if a2 else 0.0) - target_accept)
                if it >= win_lo and it < win_hi:
                    w_n += 1
                    le = math.log(eps)
                    d = le - m_e
                    m_e += d / w_n
                    v_e += d * (le - m_e)
                    for g in range(G):
                        d = s[g] - m_s[g]
                        m_s[g] += d / w_n
                        v_s[g] += d * (s[g] - m_s[g])
                if it == win_hi - 1 and w_n > 10:
                    sd = math.sqrt(v_e / (w_n - 1))
                    if sd > 1e-6:
                        shape_e = sd
                    for g in range(G):
                        sd = math.sqrt(v_s[g] / (w_n - 1))
                        if s_free[g] and sd > 1e-6:
                            shape_s[g] = sd
                    log_fj = math.log(2.38 / math.sqrt(1.0 + n_free))
        else:
            j = it - n_tune
            eps_out[j] = eps
            for g in range(G):
                s_out[j, g] = s[g]
            acc_out[j, 0] = a1
            acc_out[j, 1] = a2
    scales = np.empty(4 + G)
    scales[0] = math.exp(log_fj)
    scales[1] = math.exp(log_fr)
    scales[2] = shape_e
    scales[3] = 0.0
    for g in range(G):
        scales[4 + g] = shape_s[g]
    return eps_out, s_out, acc_out, scales
