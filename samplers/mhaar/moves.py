"""MHAAR's move: one Metropolis-Hastings step with averaged acceptance ratios (numpy, numba).

Target: p(eps, s_1..s_G, (tau_j, rho_j)_j, (alpha_i, beta_i)_i | X, Y). Challenge base i belongs
to evidence group j = grp[i]; group j uses strength variable g_sidx[j] and the likelihood
g_lik[j] (0: binomial, 1: bivariate normal of the paper's eq. 7 with (tau_j, rho_j), 2:
beta-binomial with intra-class correlation tau_j). (alpha_i, beta_i) | eps, s are uniform on
R_s(eps, delta) = R(eps, delta) minus R(s eps, s delta).

:func:`mhaar_update` is one move of the paper's Alg. 1: K auxiliary pairs per base (the current
one and K - 1 draws from the proposal q of :mod:`samplers.mhaar.aux_proposals`, optionally mixed
with a band component uniform on R_s of either state), their weights under the current and the
proposed state, the averaged acceptance ratio, and the resampled latent pairs. The weight of a
candidate (a, b) is ``1{(a, b) in R_s} / |R_s| * g(X, Y | a, b) / q(a, b)``. We store
``r = log g - log q`` (up to per-base constants that do not depend on the parameters) and test
membership with the folded coordinates lo = min, hi = max of (a, b) mapped into the lower-left
half of the square (:mod:`samplers.model.band_geometry`). Bases of groups whose latent pairs are
integrated out contribute the exact ratio of their band integrals
(:mod:`samplers.model.band_quadrature`) instead.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ..model.band_geometry import band_box, draw_band, draw_band_box, fold, in_box, in_rs
from ..model.band_quadrature import log_band_integral
from ..model.codes import LIK_BINOMIAL, PROP_PAIR_NORMAL
from ..model.densities import M0, M1, log_g
from ..model.region import log_area_paper
from ..numerics.jit import JIT
from ..numerics.logsum import logaddexp, lse_push
from .aux_proposals import (
    PAIR_BAND_WEIGHT,
    PAIR_BOX_K,
    draw_aux,
    draw_aux_pair,
    log_q,
    log_q_pair,
    pair_shape,
)

#: The data: P (n, N_PARAMS), one row per challenge base (columns: :mod:`samplers.model.densities`);
#: qkind (n,), the auxiliary proposal of each base (``codes.PROP_*``); delta; XG, WG, the
#: Gauss-Legendre table of the band quadrature (row m holds the m-point rule).
Data = namedtuple("Data", ["P", "qkind", "delta", "XG", "WG"])

#: The evidence groups: grp (n,), the group of each base; per group j: g_sidx (its strength
#: variable), g_lik (likelihood code, ``codes.LIK_*``), g_tau_free, g_rho_free (whether tau_j,
#: rho_j are sampled), g_coll (whether its bases' latent pairs are integrated out).
Groups = namedtuple("Groups", ["grp", "g_sidx", "g_lik", "g_tau_free", "g_rho_free", "g_coll"])

#: The chain's settings: n_tune warm-up iterations, then n_draws stored draws, one every thin
#: iterations; K auxiliary pairs per base and move (the current one included); lam, mu: weights
#: of the uniform and of the band component of the proposal; target_accept of the warm-up's
#: scale recursions, which run when adapt; nuis_joint: whether the joint move also proposes
#: the free (tau, rho).
Settings = namedtuple(
    "Settings",
    ["n_tune", "n_draws", "thin", "K", "lam", "mu", "target_accept", "adapt", "nuis_joint"],
)

#: A point of the parameters: eps, s (G,) per strength variable, tau, rho (J,) per group.
Theta = namedtuple("Theta", ["eps", "s", "tau", "rho"])

#: The latent pairs and the move's work arrays, updated in place: lat_a, lat_b (n,), the
#: latent pair of each base; AA, AB (n, K max), the auxiliary pairs of a move; WC, WP (n, K
#: max), their weights under the current and the proposed state; CUR, NEW (n,), the log of the
#: integrated likelihood (per unit area of R_s) of the bases of groups with g_coll at the
#: current and the proposed state.
Latents = namedtuple("Latents", ["lat_a", "lat_b", "AA", "AB", "WC", "WP", "CUR", "NEW"])


@njit(**JIT)
def mhaar_update(rng, cur, prop, log_extra, only_group, K, data, groups, cfg, lat):
    """One MHAAR move from ``cur`` towards ``prop`` (both :data:`Theta`); updates the latents.

    ``log_extra`` holds the log prior ratio and the proposal's Jacobian term. Bases outside
    group ``only_group`` are skipped when it is >= 0 (their factor of the ratio is 1). ``K``
    auxiliary pairs per base (:func:`k_eff` of ``cfg.K``); the proposal's weights ``cfg.lam``
    and ``cfg.mu``; ``data``, ``groups``, ``lat``: :data:`Data`, :data:`Groups`,
    :data:`Latents`. Returns True when the move is accepted (the caller then adopts ``prop``).

    Over 150 lines on purpose: the averaged acceptance ratio, its auxiliary draws and the
    refresh of the latent pairs read and write the same per-base work arrays in one pass over
    the bases, in the order of random draws and floating-point operations that MHAAR's draws
    depend on bit for bit, so it stays one function.
    """
    eps, s, tau, rho = cur.eps, cur.s, cur.tau, cur.rho
    eps_p, s_p, tau_p, rho_p = prop.eps, prop.s, prop.tau, prop.rho
    P, qkind, delta, XG, WG = data.P, data.qkind, data.delta, data.XG, data.WG
    grp, g_sidx, g_lik, coll = groups.grp, groups.g_sidx, groups.g_lik, groups.g_coll
    lam = cfg.lam
    mu = cfg.mu
    lat_a, lat_b, AA, AB = lat.lat_a, lat.lat_b, lat.AA, lat.AB
    WC, WP, CUR, NEW = lat.WC, lat.WP, lat.CUR, lat.NEW
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
        la_c[g] = log_area_paper(eps, s[g], delta)
        la_p[g] = log_area_paper(eps_p, s_p[g], delta)
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
            BOX[0] = P[i, M0] - hw0
            BOX[1] = P[i, M0] + hw0
            BOX[2] = P[i, M1] - hw1
            BOX[3] = P[i, M1] + hw1
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
                    lq = logaddexp(lq, lb)
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


@njit(**JIT)
def init_latents(rng, cur, data, groups, cfg, lat):
    """Start each latent pair (``lat.lat_a``, ``lat.lat_b``) inside R_s at ``cur`` (a Theta).

    By importance resampling of ``cfg.K`` draws from q, or, when no draw falls inside, at the
    point of the diagonal halfway between the two boundary curves.
    """
    eps, s, tau, rho = cur.eps, cur.s, cur.tau, cur.rho
    P, qkind, delta = data.P, data.qkind, data.delta
    grp, g_sidx, g_lik = groups.grp, groups.g_sidx, groups.g_lik
    K = cfg.K
    lam = cfg.lam
    lat_a, lat_b = lat.lat_a, lat.lat_b
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
                best_w, tot = lse_push(best_w, tot, r)
                p_new = math.exp(r - best_w) / tot
                if rng.random() < p_new:
                    cand_a = a
                    cand_b = b
        if cand_a < 0.0:
            p = 0.5 * ((1.0 - delta) / (1.0 + e_c) + (1.0 - s[g] * delta) / (1.0 + es))
            cand_a = p
            cand_b = p
        lat_a[i] = cand_a
        lat_b[i] = cand_b


#: Near s = 1 the band R_s is so thin that few auxiliary draws land in it and the chain sticks.
#: Moves between states with max(s, s') > 1 - S_THIN use up to K_MULT_MAX times more auxiliary
#: pairs, in proportion to S_THIN / (1 - max(s, s')). The number depends on (theta, theta')
#: symmetrically, so each pair of reverse moves uses the same K and MHAAR stays exact.
S_THIN = 0.01
K_MULT_MAX = 32


@njit(**JIT)
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
