"""MHAAR's chain driver: warm-up with tuning, then stored draws (numpy and numba only).

:func:`run_chain` runs one chain of the paper's Alg. 1 (moves: :mod:`samplers.mhaar.moves`);
the public wrapper :mod:`samplers.mhaar` validates its arguments, packs them into the named
tuples :data:`samplers.mhaar.moves.Data`, :data:`samplers.mhaar.moves.Groups`,
:data:`samplers.mhaar.moves.Settings`, :data:`Priors` and :data:`Start`, and runs chains in
threads.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ..model.band_quadrature import log_band_integral
from ..model.densities import group_rho_max, log_prior_eps, log_prior_s
from ..model.moves import gaussian_step
from ..model.region import log_area_paper
from ..numerics.jit import JIT
from .moves import K_MULT_MAX, Latents, Theta, init_latents, k_eff, mhaar_update

#: The priors: eps (eps_kind ``codes.EPS_*`` with parameters eps_p1, eps_p2); per strength
#: variable: s_free (whether sampled), s ~ Beta(s_a, s_b); per group: tau ~ Beta(tau_a, tau_b)
#: (as in the move on logit tau: density tau^tau_a (1 - tau)^tau_b with its Jacobian).
Priors = namedtuple(
    "Priors", ["eps_kind", "eps_p1", "eps_p2", "s_free", "s_a", "s_b", "tau_a", "tau_b"]
)

#: The starting point: eps0, s0 (G,), tau0, rho0 (J,).
Start = namedtuple("Start", ["eps0", "s0", "tau0", "rho0"])


@njit(**JIT)
def _logit(x):
    return math.log(x) - math.log1p(-x)


@njit(**JIT)
def _pack(z, cur, s_free, g_tau_free, g_rho_free, grp, P):
    """Fill z with the coordinates of the joint move at ``cur`` (a Theta).

    In this order: log eps, logit of each free s, logit of each free tau,
    rho / rho_max(tau) of each free rho.
    """
    eps, s, tau, rho = cur.eps, cur.s, cur.tau, cur.rho
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


@njit(**JIT)
def run_chain(rng, data, groups, priors, start, cfg):
    """Run one MHAAR chain.

    Warm-up with tuning (then frozen), then ``cfg.n_draws`` stored draws, one every
    ``cfg.thin`` iterations. The joint move is a random walk on (log eps, logit s). The
    arguments are the named tuples :data:`samplers.mhaar.moves.Data`,
    :data:`samplers.mhaar.moves.Groups`, :data:`Priors`, :data:`Start` and
    :data:`samplers.mhaar.moves.Settings`.

    Each iteration makes up to three kinds of MHAAR move: the paper's joint random walk on
    (log eps, s); a ridge move (eps, s) -> (eps c, s / c) that keeps s eps fixed, along which
    the likelihood is nearly flat (when some s is free); and, for each group with free
    over-dispersion parameters, a random walk on (logit tau, rho / rho_max(tau)) that touches
    only that group's bases. With ``cfg.nuis_joint`` the joint move also proposes the free
    (logit tau, rho / rho_max) of every group.

    Returns
    -------
    eps_out (D,), s_out (D, G), tau_out (D, J), rho_out (D, J), acc_out (D, 3) (joint, ridge,
    nuisance: fraction of groups accepted), scales (3 + G + J,) (joint factor, ridge factor,
    shape of log eps, shape of each s, nuisance factor of each group).
    """
    P, delta = data.P, data.delta
    grp, g_sidx, g_lik = groups.grp, groups.g_sidx, groups.g_lik
    n = P.shape[0]
    G = start.s0.shape[0]
    J = g_sidx.shape[0]
    st = _new_state(start, groups, priors, cfg)
    KM = cfg.K * K_MULT_MAX
    lat = Latents(
        lat_a=np.empty(n),
        lat_b=np.empty(n),
        AA=np.empty((n, KM)),
        AB=np.empty((n, KM)),
        WC=np.empty((n, KM)),
        WP=np.empty((n, KM)),
        CUR=np.zeros(n),
        NEW=np.zeros(n),
    )
    init_latents(rng, Theta(st.eps[0], st.s, st.tau, st.rho), data, groups, cfg, lat)
    for i in range(n):
        j = grp[i]
        if groups.g_coll[j]:
            g = g_sidx[j]
            # log of the integrated likelihood (over R_s, per unit area) of a collapsed base
            lat.CUR[i] = log_band_integral(
                i, g_lik[j], st.tau[j], st.rho[j], st.eps[0], st.s[g], delta, P, data.XG, data.WG
            ) - log_area_paper(st.eps[0], st.s[g], delta)

    n_tune, n_draws, thin = cfg.n_tune, cfg.n_draws, cfg.thin
    eps_out = np.empty(n_draws)
    s_out = np.empty((n_draws, G))
    tau_out = np.empty((n_draws, J))
    rho_out = np.empty((n_draws, J))
    acc_out = np.zeros((n_draws, 3))
    for it in range(n_tune + n_draws * thin):
        tuning = it < n_tune
        a1 = _joint_move(rng, st, data, groups, priors, cfg, lat)
        a2 = False
        if st.n_free[0] > 0:
            a2 = _ridge_move(rng, st, data, groups, priors, cfg, lat)
        n_acc3 = _nuisance_moves(rng, st, data, groups, priors, cfg, lat, it, tuning)
        if tuning:
            if cfg.adapt:
                _tune(st, data, groups, priors, cfg, it, a1, a2)
        else:
            # acceptance is averaged over the `thin` iterations of each stored draw
            d = (it - n_tune) // thin
            acc_out[d, 0] += (1.0 if a1 else 0.0) / thin
            acc_out[d, 1] += (1.0 if a2 else 0.0) / thin
            if st.n_nuis[0] > 0:
                acc_out[d, 2] += n_acc3 / st.n_nuis[0] / thin
            if (it - n_tune) % thin == thin - 1:
                eps_out[d] = st.eps[0]
                for g in range(G):
                    s_out[d, g] = st.s[g]
                for j in range(J):
                    tau_out[d, j] = st.tau[j]
                    rho_out[d, j] = st.rho[j]
    scales = np.empty(3 + G + J)
    scales[0] = math.exp(st.log_f[0])
    scales[1] = math.exp(st.log_f[1])
    scales[2] = st.shape_e[0]
    for g in range(G):
        scales[3 + g] = st.shape_s[g]
    for j in range(J):
        scales[3 + G + j] = math.exp(st.log_fn[j])
    return eps_out, s_out, tau_out, rho_out, acc_out, scales


#: The chain's current point and tuning, all arrays (updated in place by the moves): eps (1,),
#: s (G,), tau, rho (J,) and the proposal's s_p, tau_p, rho_p; log_f: log step factors of the
#: joint and ridge moves; log_fn (J,): of each group's nuisance move; Lc (D, D): Cholesky factor
#: of the joint move's step shape (diagonal until the warm-up window ends), shape_e (1,),
#: shape_s (G,): sd of the log eps and logit s steps; w_n (1,), m_z, C_z: Welford sums of the
#: shape window; z, zp, xi (D,): work arrays of the joint move; jt_free, jr_free (J,): the
#: free tau and rho the joint move also proposes; n_free, n_nuis (1,): free strengths, groups
#: with a free nuisance parameter.
State = namedtuple(
    "State",
    [
        "eps",
        "s",
        "tau",
        "rho",
        "s_p",
        "tau_p",
        "rho_p",
        "log_f",
        "log_fn",
        "Lc",
        "shape_e",
        "shape_s",
        "w_n",
        "m_z",
        "C_z",
        "z",
        "zp",
        "xi",
        "jt_free",
        "jr_free",
        "n_free",
        "n_nuis",
    ],
)


@njit(**JIT)
def _new_state(start, groups, priors, cfg):
    """Make the chain's :data:`State` at the starting point, with the warm-up's first steps."""
    G = start.s0.shape[0]
    J = groups.g_sidx.shape[0]
    n_free = 0
    for g in range(G):
        if priors.s_free[g]:
            n_free += 1
    n_nuis = 0
    for j in range(J):
        if groups.g_tau_free[j] or groups.g_rho_free[j]:
            n_nuis += 1
    # the free nuisance parameters that the joint move also proposes (all, or none)
    jt_free = groups.g_tau_free & cfg.nuis_joint
    jr_free = groups.g_rho_free & cfg.nuis_joint
    n_tfree = 0
    n_rfree = 0
    for j in range(J):
        if jt_free[j]:
            n_tfree += 1
        if jr_free[j]:
            n_rfree += 1
    D = 1 + n_free + n_tfree + n_rfree
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
    return State(
        eps=np.array([start.eps0]),
        s=start.s0.copy(),
        tau=start.tau0.copy(),
        rho=start.rho0.copy(),
        s_p=start.s0.copy(),
        tau_p=start.tau0.copy(),
        rho_p=start.rho0.copy(),
        log_f=np.array([math.log(2.38 / math.sqrt(D)), math.log(0.5)]),
        log_fn=np.full(J, math.log(0.5)),
        Lc=Lc,
        shape_e=np.array([0.5]),
        shape_s=np.full(G, 0.6),
        w_n=np.zeros(1, dtype=np.int64),
        m_z=np.zeros(D),
        C_z=np.zeros((D, D)),
        z=np.empty(D),
        zp=np.empty(D),
        xi=np.empty(D),
        jt_free=jt_free,
        jr_free=jr_free,
        n_free=np.array([n_free]),
        n_nuis=np.array([n_nuis]),
    )


@njit(**JIT)
def _joint_move(rng, st, data, groups, priors, cfg, lat):
    """Move 1: joint random walk on z = (log eps, logit s, logit tau, rho / rho_max).

    The paper's Alg. 1, extended to the free nuisance parameters with ``cfg.nuis_joint``; the
    step covariance is estimated in the warm-up. Returns whether the MHAAR move accepted.
    """
    P = data.P
    grp = groups.grp
    s_free, s_a, s_b = priors.s_free, priors.s_a, priors.s_b
    tau_a, tau_b = priors.tau_a, priors.tau_b
    eps, s, tau, rho = st.eps[0], st.s, st.tau, st.rho
    s_p, tau_p, rho_p = st.s_p, st.tau_p, st.rho_p
    jt_free, jr_free = st.jt_free, st.jr_free
    G = s.shape[0]
    J = tau.shape[0]
    z, zp = st.z, st.zp
    _pack(z, Theta(eps, s, tau, rho), s_free, jt_free, jr_free, grp, P)
    fj = math.exp(st.log_f[0])
    gaussian_step(z, st.Lc, fj, rng, st.xi, zp)
    eps_p = math.exp(zp[0])
    valid = eps_p > 0.0 and eps_p < 1e300
    lpr = (
        log_prior_eps(eps_p, priors.eps_kind, priors.eps_p1, priors.eps_p2)
        - log_prior_eps(eps, priors.eps_kind, priors.eps_p1, priors.eps_p2)
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
    if not (valid and lpr > -np.inf):
        return False
    a1 = mhaar_update(
        rng,
        Theta(eps, s, tau, rho),
        Theta(eps_p, s_p, tau_p, rho_p),
        lpr,
        -1,
        k_eff(cfg.K, s, s_p, s_free),
        data,
        groups,
        cfg,
        lat,
    )
    if a1:
        st.eps[0] = eps_p
        for g in range(G):
            s[g] = s_p[g]
        for j in range(J):
            tau[j] = tau_p[j]
            rho[j] = rho_p[j]
    return a1


@njit(**JIT)
def _ridge_move(rng, st, data, groups, priors, cfg, lat):
    """Move 2: (eps, s) -> (eps c, s / c) along s * eps = const, when some s is free.

    Returns whether the MHAAR move accepted.
    """
    s_free, s_a, s_b = priors.s_free, priors.s_a, priors.s_b
    eps, s, tau, rho, s_p = st.eps[0], st.s, st.tau, st.rho, st.s_p
    G = s.shape[0]
    c = math.exp(math.exp(st.log_f[1]) * rng.standard_normal())
    eps_p = eps * c
    valid = eps_p > 0.0 and eps_p < 1e300
    lpr = log_prior_eps(eps_p, priors.eps_kind, priors.eps_p1, priors.eps_p2) - log_prior_eps(
        eps, priors.eps_kind, priors.eps_p1, priors.eps_p2
    )
    for g in range(G):
        if s_free[g]:
            s_p[g] = s[g] / c
            if not (s_p[g] > 0.0 and s_p[g] < 1.0):
                valid = False
            else:
                lpr += log_prior_s(s_p[g], s_a[g], s_b[g]) - log_prior_s(s[g], s_a[g], s_b[g])
        else:
            s_p[g] = s[g]
    if not (valid and lpr > -np.inf):
        return False
    # translation by (u, -u, ..., -u) in (log eps, log s_free): Jacobian c^(1 - m)
    a2 = mhaar_update(
        rng,
        Theta(eps, s, tau, rho),
        Theta(eps_p, s_p, tau, rho),
        lpr + (1.0 - st.n_free[0]) * math.log(c),
        -1,
        k_eff(cfg.K, s, s_p, s_free),
        data,
        groups,
        cfg,
        lat,
    )
    if a2:
        st.eps[0] = eps_p
        for g in range(G):
            s[g] = s_p[g]
    return a2


@njit(**JIT)
def _nuisance_moves(rng, st, data, groups, priors, cfg, lat, it, tuning):
    """Move 3: the over-dispersion parameters (logit tau, rho / rho_max), one group at a time.

    Each move touches only that group's bases; its step factor is tuned in the warm-up.
    Returns the number of groups whose move was accepted.
    """
    P = data.P
    grp = groups.grp
    g_tau_free, g_rho_free = groups.g_tau_free, groups.g_rho_free
    tau_a, tau_b = priors.tau_a, priors.tau_b
    eps, s, tau, rho = st.eps[0], st.s, st.tau, st.rho
    tau_p, rho_p = st.tau_p, st.rho_p
    J = tau.shape[0]
    n_acc3 = 0
    for j in range(J):
        if not (g_tau_free[j] or g_rho_free[j]):
            continue
        for jj in range(J):
            tau_p[jj] = tau[jj]
            rho_p[jj] = rho[jj]
        fn = math.exp(st.log_fn[j])
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
        acc3 = False
        if ok:
            acc3 = mhaar_update(
                rng,
                Theta(eps, s, tau, rho),
                Theta(eps, s, tau_p, rho_p),
                lpr,
                j,
                k_eff(cfg.K, s, s, priors.s_free),
                data,
                groups,
                cfg,
                lat,
            )
        if acc3:
            tau[j] = tau_p[j]
            rho[j] = rho_p[j]
            n_acc3 += 1
        if tuning and cfg.adapt:
            gamma = 1.0 / (it + 1.0) ** 0.6
            st.log_fn[j] += gamma * ((1.0 if acc3 else 0.0) - cfg.target_accept)
    return n_acc3


@njit(**JIT)
def _tune(st, data, groups, priors, cfg, it, a1, a2):
    """Warm-up tuning: step factors towards ``cfg.target_accept``; the joint move's shape.

    The shape is the covariance of z over iterations [n_tune / 4, n_tune / 2) (Welford sums),
    set at the window's end.
    """
    gamma = 1.0 / (it + 1.0) ** 0.6
    st.log_f[0] += gamma * ((1.0 if a1 else 0.0) - cfg.target_accept)
    if st.n_free[0] > 0:
        st.log_f[1] += gamma * ((1.0 if a2 else 0.0) - cfg.target_accept)
    win_lo = cfg.n_tune // 4
    win_hi = cfg.n_tune // 2
    z, xi, m_z, C_z = st.z, st.xi, st.m_z, st.C_z
    D = z.shape[0]
    if it >= win_lo and it < win_hi:
        st.w_n[0] += 1
        _pack(
            z,
            Theta(st.eps[0], st.s, st.tau, st.rho),
            priors.s_free,
            st.jt_free,
            st.jr_free,
            groups.grp,
            data.P,
        )
        for d in range(D):
            xi[d] = z[d] - m_z[d]
            m_z[d] += xi[d] / st.w_n[0]
        for d in range(D):
            for e in range(D):
                C_z[d, e] += xi[d] * (z[e] - m_z[e])
    if it == win_hi - 1 and st.w_n[0] > 10 + 2 * D:
        cov = C_z / (st.w_n[0] - 1)
        for d in range(D):
            # a coordinate that did not move keeps a usable step
            cov[d, d] = max(cov[d, d] * (1.0 + 1e-3), 1e-4)
        if np.all(np.isfinite(cov)):
            L = np.linalg.cholesky(cov)
            for d in range(D):
                for e in range(D):
                    st.Lc[d, e] = L[d, e]
        st.shape_e[0] = math.sqrt(cov[0, 0])
        k = 1
        for g in range(st.s.shape[0]):
            if priors.s_free[g]:
                st.shape_s[g] = math.sqrt(cov[k, k])
                k += 1
        st.log_f[0] = math.log(2.38 / math.sqrt(D))
