"""The exact sampler's target: the log posterior of z, and its tabulated stand-in.

The log likelihood of the binomial bases comes from :mod:`samplers.model.binomial_block`, that
of the over-dispersed bases from :mod:`samplers.model.band_quadrature` (divided by |R_s|), that
of the one-run audits' guesses from :mod:`samplers.model.guesses`; the prior of z with its
Jacobian from :mod:`samplers.model.transforms`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..model.band_quadrature import JAC_POINTS, fill_jacobian_tables, log_band_integral_tab
from ..model.binomial import TAIL_DROPPED, TAIL_PASS_BELOW, log_band_mass_tail
from ..model.binomial_block import fill_log_lik
from ..model.densities import group_rho_max
from ..model.guesses import guesses_log_lik
from ..model.region import log_area, log_area_rate
from ..model.transforms import log_prior_z
from ..numerics.jit import JIT
from ..numerics.special import expit as _expit
from ..numerics.special import log_expit as _log_expit
from . import surrogate

__all__ = ["MIX_NEGLIGIBLE", "log_prior", "log_posterior", "log_surrogate"]

#: Log units below the exposed component's term at which the mass the unexposed one's fast pass
#: may leave out is neglected (an error below e^-20 ~ 2e-9 in the base's log likelihood).
MIX_NEGLIGIBLE = 20.0
_LOG_DROPPED = math.log(TAIL_DROPPED)
# upper bounds are masses below TAIL_PASS_BELOW (plus the dropped 4e-20, hence the margin)
_THR = math.log(TAIL_PASS_BELOW) + 1e-6


@njit(**JIT)
def _corr_log_lik(z, M, C, eps, s, ll_c):
    """Prior terms of the free tau, rho and the log likelihood of the over-dispersed bases.

    The bivariate-normal rows read the Jacobians of their counts from tables filled once per
    call and shared by the rows of a group with a count (and size) in common.
    """
    lp = 0.0
    n_g = M.g_sidx.shape[0]
    tau = np.empty(n_g)
    rho = np.empty(n_g)
    for j in range(n_g):
        tau[j] = M.g_tau[j]
        rho[j] = M.g_rho[j]
        if M.g_tau_z[j] >= 0:
            zt = z[M.g_tau_z[j]]
            tau[j] = _expit(zt)
            if not (tau[j] > 0.0 and tau[j] < 1.0):
                return -math.inf
            lp += M.tau_a * _log_expit(zt) + M.tau_b * _log_expit(-zt)
        if M.g_rho_z[j] >= 0:
            zr = z[M.g_rho_z[j]]
            rmax = group_rho_max(tau[j], j, C.c_grp, C.P)
            th = math.tanh(zr)
            rho[j] = rmax * th
            # uniform on (-rmax, rmax) times the Jacobian rmax (1 - tanh^2)
            lp += math.log(max(1.0 - th * th, 1e-300)) - math.log(2.0)
    n_k = C.k_grp.shape[0]
    JT = np.empty((n_k, JAC_POINTS))
    JZ = np.empty((n_k, 3))
    if n_k:
        fill_jacobian_tables(C.k_c, C.k_n, tau[C.k_grp], JT, JZ)
    for i in range(C.c_grp.shape[0]):
        j = C.c_grp[i]
        sj = s[M.g_sidx[j]]
        v = log_band_integral_tab(
            i,
            C.c_lik[i],
            tau[j],
            rho[j],
            eps,
            sj,
            M.delta,
            C.P,
            C.XG,
            C.WG,
            JT,
            JZ,
            C.c_kx[i],
            C.c_ky[i],
        )
        v = v - log_area(eps, sj, M.delta) + C.c_const[i]
        ll_c[i] = v
        if not v > -math.inf:
            return -math.inf
        lp += C.c_mult[i] * v
    return lp


@njit(**JIT)
def _mixture_log_lik(z, M, eps, s, ll_b):
    """Prior terms of the free pi, kappa and the exposure mixture of the mixture groups' bases.

    On entry ``ll_b`` holds every binomial base's log likelihood under the band R_s(eps, delta)
    (the exposed component); a base of a mixture group j gets
    log(pi_j e^ll_b + (1 - pi_j) L0), L0 its likelihood under Unif(R(kappa_j eps, delta)): the
    same band mass at strength 0 and privacy level kappa_j eps (R(0, 0) is the diagonal).
    Where L0 lies in the base's tails (the fast pass finds a mass below TAIL_PASS_BELOW), the
    fast pass's mass plus the most its windows leave out (TAIL_DROPPED, the upper bound of
    :func:`samplers.model.binomial.log_tail_bound`) is taken when that left-out mass, in the
    mixture, is MIX_NEGLIGIBLE log units below the exposed component's term (so the base's log
    likelihood is exact to e^-MIX_NEGLIGIBLE ~ 2e-9, the quadrature's own accuracy), else the
    exact value of the wide pass, run alone (:func:`samplers.model.binomial.log_band_mass_tail`:
    the fast pass is the one that found the mass below the threshold; 20-140 microseconds a
    base at 32 + 32 trials).
    """
    lp = 0.0
    pa = M.mix_prior[0]
    pb = M.mix_prior[1]
    ka = M.mix_prior[2]
    kb = M.mix_prior[3]
    n_b = M.b_grp.shape[0]
    ll0 = np.empty(n_b)
    for j in range(M.g_mix.shape[0]):
        if M.g_mix[j] == 0:
            continue
        pi = M.g_pi[j]
        kap = M.g_kap[j]
        if M.g_pi_z[j] >= 0:
            zp = z[M.g_pi_z[j]]
            pi = _expit(zp)
            lp += pa * _log_expit(zp) + pb * _log_expit(-zp)
        if M.g_kap_z[j] >= 0:
            # kappa = kappa_min^u, u = expit(z) ~ Beta(ka, kb): log-uniform kappa for (1, 1)
            zk = z[M.g_kap_z[j]]
            kap = math.exp(_expit(zk) * M.mix_prior[4])
            lp += ka * _log_expit(zk) + kb * _log_expit(-zk)
        if not (pi > 0.0 and pi < 1.0 and kap > 0.0 and kap < 1.0):
            return -math.inf
        k = M.g_sidx[j]
        s0 = s.copy()
        s0[k] = 0.0
        e0 = kap * eps
        # bound_tails True (as a run-time value: a literal would compile fill_log_lik again):
        # a base whose unexposed region lies in its tails gets an upper bound, not the wide pass
        status = fill_log_lik(M.B, M.Q, M.b_k, e0, s0, M.delta, k, ll0, k >= 0)
        if status == 0:
            return -math.inf
        r0 = log_area_rate(e0, 0.0, M.delta)
        l1 = math.log(pi)
        l0 = math.log1p(-pi)
        for i in range(n_b):
            if M.b_grp[i] == j:
                a = l1 + ll_b[i]
                b = l0 + ll0[i]
                lc = M.B.lconst[i]
                if status == 2 and ll0[i] + r0 - lc < _THR:
                    # an upper bound: the fast pass's mass plus at most TAIL_DROPPED; exact
                    # enough unless that much mass in the unexposed term could matter
                    if l0 + _LOG_DROPPED - r0 + lc > a - MIX_NEGLIGIBLE:
                        # the wide pass alone: the fast one is known to lie below the
                        # threshold (that is when the bound was taken)
                        lm0 = log_band_mass_tail(M.B, i, e0, 0.0, M.delta)
                        ll0[i] = lm0 - r0 + lc
                        b = l0 + ll0[i]
                m = max(a, b)
                ll_b[i] = m + math.log(math.exp(a - m) + math.exp(b - m))
    return lp


@njit(**JIT)
def log_prior(z, M, s):
    """Return the log prior density of z in its own coordinates (Jacobians included).

    Fills the strength of every strength variable into ``s``. -inf outside the support.
    """
    lp = log_prior_z(z, M.s_z, M.pz)
    if lp == -math.inf:
        return -math.inf
    for k in range(M.s_z.shape[0]):
        s[k] = _expit(z[M.s_z[k]]) if M.s_z[k] >= 0 else M.s_fixed[k]
    return lp


@njit(**JIT)
def log_posterior(z, M, C, ll_b, ll_c):
    """Return the log posterior density of z (up to a constant).

    Fills the per-base log likelihoods (of the binomial and over-dispersed bases; the guesses
    rows' enter the sum only, see :func:`samplers.exact.pointwise.fill_pointwise_guesses`).
    """
    s = np.empty(M.s_z.shape[0])
    lp = log_prior(z, M, s)
    if lp == -math.inf:
        return -math.inf
    eps = math.exp(z[0])
    # k_only = -1 (every base) and bound_tails = False as run-time values: literals would
    # compile the likelihood a second time next to the table's call
    nk = M.s_z.shape[0]
    if not fill_log_lik(M.B, M.Q, M.b_k, eps, s, M.delta, nk * 0 - 1, ll_b, nk < 0):
        return -math.inf
    if M.n_mix > 0:
        lm = _mixture_log_lik(z, M, eps, s, ll_b)
        if lm == -math.inf:
            return -math.inf
        lp += lm
    total = 0.0
    for i in range(M.b_grp.shape[0]):
        total += M.b_mult[i] * ll_b[i]
    if M.G.r.shape[0] > 0:
        # the one-run audits' rows (none in a model of counts only: skipped, the sum as before)
        lg = guesses_log_lik(M.G, eps, s, nk * 0 - 1)
        if lg == -math.inf:
            return -math.inf
        total += lg
    if C is not None:
        total += _corr_log_lik(z, M, C, eps, s, ll_c)
    return lp + total


@njit(**JIT)
def log_surrogate(z, tb, pz):
    """Return the log posterior with the tabulated likelihood of :mod:`samplers.exact.surrogate`.

    Takes the table and the priors' scalars, not the model or the chain state: the table walk
    calls it ~80 times an iteration.
    """
    lp = log_prior_z(z, tb.s_z, pz)
    if lp == -math.inf:
        return -math.inf
    return lp + surrogate.log_density(z, tb)
