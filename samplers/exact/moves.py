"""The exact sampler's moves, each a Metropolis(-Hastings) step that leaves the posterior invariant.

:func:`walk_move` (joint random walk on z), :func:`ridge_move` (along s eps = const), the
table walk (:func:`table_walk_move`: walk and ridge steps on the tabulated posterior, corrected
by one exact evaluation) and the independence move (:func:`indep_move`: from the table's
proposal or from the t fitted to the warm-up), with the pilots that choose between them, and
the strength move (:func:`strength_move`: the strengths that only one-run audits' rows read,
alone). The geometry of the walk and ridge steps is shared with MHAAR
(:mod:`samplers.model.moves`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..model.guesses import guesses_log_lik
from ..model.moves import gaussian_step, ridge_step
from ..model.transforms import log_prior_zs
from ..numerics.arrays import copy_into
from ..numerics.jit import JIT
from ..numerics.special import expit as _expit
from . import fitted_proposal, table_proposal
from .posterior import log_posterior, log_surrogate
from .state import RM_POWER, TABLE_FIT, TABLE_INDEP

__all__ = [
    "metropolis",
    "tune_scale",
    "walk_move",
    "ridge_move",
    "table_walk",
    "table_walk_move",
    "indep_move",
    "choose_table_proposal",
    "choose_fitted",
    "strength_move",
]

#: Points drawn from the table's proposal to decide between the two moves, and the smallest
#: effective sample size (fraction of PILOT) of their weights for the independence move.
PILOT = 64
INDEP_MIN_ESS = 0.5
#: Smallest effective sample size (fraction of PILOT) of the pilot's weights for the
#: independence move with the t proposal fitted to the warm-up, in a model with over-dispersed
#: or exposure-mixture groups. Lower than the table's (INDEP_MIN_ESS, which binomial-only
#: models use for the t as well, the table walk being their fallback): these chains have no
#: table walk to fall back on, only the exact random walk and ridge moves, which give
#: ~0.01-0.03 effective draws per iteration on the posteriors concerned (LiRA counts with tau
#: and rho free), while the t's pilots there measured 0.16-0.34; on the exposure mixture at
#: 10,000 targets the pilots' median was 0.25-0.28 (docs/validation/lira.md, "The exposure mixture
#: at
#: scale").
FIT_MIN_ESS = 0.15
#: Pairs of steps of :func:`strength_move` per iteration (a random-walk step of sd
#: STRENGTH_STEP in logit s, then a draw from the strength's prior).
STRENGTH_STEPS = 5
STRENGTH_STEP = 1.0


@njit(**JIT)
def metropolis(z, lp, ll_b, ll_c, rng, la, zp, lpp, llb_p, llc_p):
    """Accept the proposal zp with probability min(1, e^la) (never when la is -inf or nan).

    One uniform is drawn either way, so the random stream does not depend on whether the
    proposal was valid (callers pass la = -inf for an invalid one); on acceptance zp, lpp and
    its per-base log likelihoods replace the chain's z, lp, ll_b and ll_c (the state's arrays,
    passed one by one: numba passes every array of a tuple argument).
    """
    u = rng.random()
    ok = la >= 0.0 or (u > 0.0 and math.log(u) < la)
    if ok:
        copy_into(z, zp)
        lp[0] = lpp
        copy_into(ll_b, llb_p)
        copy_into(ll_c, llc_p)
    return ok


@njit(**JIT)
def tune_scale(log_scale, i, t, accept_prob, target):
    """Robbins-Monro step of the log step factor ``log_scale[i]`` at warm-up iteration t.

    log_scale[i] += (t + 1)^-RM_POWER (accept_prob - target): the acceptance rate goes to
    ``target``.
    """
    gain = (t + 1.0) ** -RM_POWER
    log_scale[i] += gain * (accept_prob - target)


@njit(**JIT)
def walk_move(state, M, C, cfg, rng, t, warm, w):
    """Move 1: joint Gaussian random walk on z; its scale is tuned in the warm-up.

    Returns 1.0 when accepted, else 0.0 (``w``: the :class:`~samplers.exact.state.Scratch`).
    """
    gaussian_step(state.z, state.chol, math.exp(state.log_scale[0]), rng, w.xi, w.zp)
    lpp = log_posterior(w.zp, M, C, w.llb_p, w.llc_p)
    la = lpp - state.lp[0]
    ok = metropolis(state.z, state.lp, state.ll_b, state.ll_c, rng, la, w.zp, lpp, w.llb_p, w.llc_p)
    if warm:
        # np.int64, not a literal 0 or 1: tune_scale compiles once for both moves
        tune_scale(
            state.log_scale, np.int64(0), t, min(1.0, math.exp(min(la, 0.0))), cfg.target_accept
        )
    return 1.0 if ok else 0.0


@njit(**JIT)
def ridge_move(state, M, C, cfg, rng, t, warm, w):
    """Move 2: along the ridge s eps = const (:func:`samplers.model.moves.ridge_step`).

    Its scale is tuned in the warm-up. Returns 1.0 when accepted, else 0.0.
    """
    uu = math.exp(state.log_scale[1]) * rng.standard_normal()
    valid, ljac = ridge_step(state.z, M.s_z, uu, w.zp)
    la = -math.inf
    lpp = state.lp[0]
    if valid:
        lpp = log_posterior(w.zp, M, C, w.llb_p, w.llc_p)
        la = lpp - state.lp[0] + ljac
    ok = metropolis(state.z, state.lp, state.ll_b, state.ll_c, rng, la, w.zp, lpp, w.llb_p, w.llc_p)
    if warm:
        pa = 0.0
        if valid:
            pa = min(1.0, math.exp(min(la, 0.0)))
        tune_scale(state.log_scale, np.int64(1), t, pa, cfg.target_accept)
    return 1.0 if ok else 0.0


@njit(**JIT)
def table_walk(y, ly, tb, pz, log_scale, chol, n_inner, rng, xi, yp):
    """n_inner Metropolis steps on the tabulated posterior from (y, ly), in place.

    The steps run in the palindromic order walk, ridge, walk, ..., ridge, walk, so that the
    whole sequence is reversible with respect to the tabulated posterior (each step is); that is
    what the correction of the surrogate-transition move needs. Returns the final log density.
    """
    sc = math.exp(log_scale[0])
    sr = math.exp(log_scale[1])
    n = n_inner
    for step in range(2 * n - 1):
        if step % 2 == 0:
            gaussian_step(y, chol, sc, rng, xi, yp)
            lj = 0.0
            valid = True
        else:
            valid, lj = ridge_step(y, tb.s_z, sr * rng.standard_normal(), yp)
        u = rng.random()
        if valid:
            lyp = log_surrogate(yp, tb, pz)
            la = lyp - ly + lj
            if la >= 0.0 or (u > 0.0 and math.log(u) < la):
                copy_into(y, yp)
                ly = lyp
    return ly


@njit(**JIT)
def table_walk_move(state, M, C, cfg, rng, w):
    """Make the surrogate-transition move: :func:`table_walk` on the table, one exact correction.

    The end point y of ``cfg.n_inner`` walk and ridge steps on the tabulated posterior is
    accepted with probability min(1, pi(y) pi_table(z) / (pi(z) pi_table(y))) (Liu 2001,
    Sec. 9.4.3). Returns 1.0 when accepted, 0.0 when not, -1.0 when z is outside the table.
    """
    tb = state.tb
    pz = M.pz
    lz = log_surrogate(state.z, tb, pz)
    if not lz > -math.inf:
        return -1.0
    d = state.z.shape[0]
    copy_into(w.zp, state.z)
    ly = table_walk(w.zp, lz, tb, pz, state.log_scale, state.chol, cfg.n_inner, rng, w.xi, w.yp)
    moved = False
    for a in range(d):
        if w.zp[a] != state.z[a]:
            moved = True
    la = -math.inf
    lpp = state.lp[0]
    if moved:
        lpp = log_posterior(w.zp, M, C, w.llb_p, w.llc_p)
        la = (lpp - state.lp[0]) - (ly - lz)
    ok = metropolis(state.z, state.lp, state.ll_b, state.ll_c, rng, la, w.zp, lpp, w.llb_p, w.llc_p)
    return 1.0 if ok else 0.0


@njit(**JIT)
def choose_table_proposal(state, M, C, rng, w):
    """Switch the chain to the independence move when the table's proposal q fits.

    Tabulates q (:mod:`samplers.exact.table_proposal`) into ``state.q``, draws PILOT points from
    it and evaluates the exact posterior there; when the importance weights pi / q have an
    effective sample size of at least INDEP_MIN_ESS of the draws, ``state.sg_on[0]`` becomes
    TABLE_INDEP, else it stays TABLE_WALK. Decided once, before the first draw, so the stored
    chain is time-homogeneous. ``w``: the :class:`~samplers.exact.state.Scratch`.
    """
    tb, q, sg_on = state.tb, state.q, state.sg_on
    zp, llb_p, llc_p = w.zp, w.llb_p, w.llc_p
    if not table_proposal.build(tb, M.pz, q):
        return
    lw = np.empty(PILOT)
    for i in range(PILOT):
        table_proposal.draw(rng, tb, q, zp)
        lq = table_proposal.log_density(zp, tb, q)
        lw[i] = log_posterior(zp, M, C, llb_p, llc_p) - lq
    if _pilot_ess(lw) >= INDEP_MIN_ESS:
        sg_on[0] = TABLE_INDEP


@njit(**JIT)
def _pilot_ess(lw):
    """Return the effective sample size of importance weights e^lw as a fraction of their number.

    0 when no weight is finite and positive, or when one is infinite.
    """
    n = lw.shape[0]
    m = -math.inf
    for i in range(n):
        m = max(m, lw[i])
    if not (m > -math.inf and m < math.inf):
        return 0.0
    s1 = 0.0
    s2 = 0.0
    for i in range(n):
        w = math.exp(lw[i] - m)
        s1 += w
        s2 += w * w
    return s1 * s1 / (n * s2)


@njit(**JIT)
def choose_fitted(state, M, C, rng, w):
    """Switch the chain to the independence move with the t proposal fitted to the warm-up.

    The t (``state.fq``, :class:`samplers.exact.fitted_proposal.Fitted`) is fitted here to the
    count, sums and cross sums of z over the second half of the warm-up (``state.win_n``,
    ``win_sum``, ``win_cross``). PILOT draws from it and the exact posterior there decide, as in
    :func:`choose_table_proposal` (threshold FIT_MIN_ESS with over-dispersed or
    exposure-mixture groups, else INDEP_MIN_ESS); ``state.sg_on[0]`` becomes TABLE_FIT when
    they pass, else it is left as it was.
    """
    fq, sg_on = state.fq, state.sg_on
    zp, llb_p, llc_p = w.zp, w.llb_p, w.llc_p
    if not fitted_proposal.fit(state.win_n[0], state.win_sum, state.win_cross, fq):
        return
    lw = np.empty(PILOT)
    copy_into(zp, state.z)  # the coordinates the t does not propose keep their values
    for i in range(PILOT):
        fitted_proposal.draw(rng, fq, zp)
        lw[i] = log_posterior(zp, M, C, llb_p, llc_p) - fitted_proposal.log_density(zp, fq)
    # the models without a table (over-dispersed or exposure-mixture groups) have no table walk
    # to fall back on: the lower threshold, as in the warm-up's use of the t (chain.py)
    no_table = C is not None or M.n_mix > 0
    if _pilot_ess(lw) >= (FIT_MIN_ESS if no_table else INDEP_MIN_ESS):
        sg_on[0] = TABLE_FIT


@njit(**JIT)
def indep_move(mode, state, M, C, rng, w):
    """Make one independence Metropolis-Hastings move; return whether it was accepted.

    y ~ q (the table's proposal, or the fitted t with ``mode`` TABLE_FIT), accepted with
    probability min(1, pi(y) q(z) / (pi(z) q(y))); it never leaves a z where q(z) = 0.
    """
    tb, q = state.tb, state.q
    zp, llb_p, llc_p = w.zp, w.llb_p, w.llc_p
    if mode == TABLE_FIT and state.fq.dp[0] < zp.shape[0]:
        copy_into(zp, state.z)  # the coordinates the t does not propose keep their values
    _indep_draw(mode, rng, tb, q, state.fq, zp)
    lqz = _indep_log_density(mode, state.z, tb, q, state.fq)
    la = -math.inf
    lpp = state.lp[0]
    if lqz > -math.inf:
        lqy = _indep_log_density(mode, zp, tb, q, state.fq)
        if lqy > -math.inf:  # always, for a draw of q; a guard against rounding
            lpp = log_posterior(zp, M, C, llb_p, llc_p)
            la = (lpp - state.lp[0]) - (lqy - lqz)
    return metropolis(state.z, state.lp, state.ll_b, state.ll_c, rng, la, zp, lpp, llb_p, llc_p)


@njit(**JIT)
def _indep_draw(mode, rng, tb, q, fq, zp):
    """Draw the independence move's proposal into zp: the fitted t (TABLE_FIT) or the table's."""
    if mode == TABLE_FIT:
        fitted_proposal.draw(rng, fq, zp)
    else:
        table_proposal.draw(rng, tb, q, zp)


@njit(**JIT)
def _indep_log_density(mode, z, tb, q, fq):
    """Log density at z of the independence move's proposal (see :func:`_indep_draw`)."""
    if mode == TABLE_FIT:
        return fitted_proposal.log_density(z, fq)
    return table_proposal.log_density(z, tb, q)


@njit(**JIT)
def strength_move(state, M, rng):
    """Metropolis steps on each strength variable that only one-run audits' rows read.

    Such a strength s_k (``M.s_cheap``; e.g. a game's own strength beside a thousand challenge
    bases) enters the posterior through its prior and its rows alone, so a step on it alone
    costs a few microseconds, not an evaluation of every base. For each, STRENGTH_STEPS pairs
    of steps on v = logit s_k given the rest of z: a Gaussian random walk (sd STRENGTH_STEP),
    accepted with probability min(1, pi(v') / pi(v)), and an independence step from the
    strength's prior (s' ~ Beta(s_a, s_b)), accepted with probability
    min(1, L(v') / L(v)), L the rows' likelihood. Both leave the posterior invariant; without
    such strengths (every model of challenge bases only) the move draws nothing. The chain's
    log posterior is updated by the change of the terms that depend on v.
    """
    z = state.z
    eps = math.exp(z[0])
    s = np.empty(M.s_z.shape[0])
    for k in range(M.s_z.shape[0]):
        s[k] = _expit(z[M.s_z[k]]) if M.s_z[k] >= 0 else M.s_fixed[k]
    for j in range(M.s_cheap.shape[0]):
        k = M.s_cheap[j]
        a = M.s_z[k]
        v = z[a]
        prior = log_prior_zs(v, M.pz)
        cur = prior + guesses_log_lik(M.G, eps, s, k)
        start = cur
        for _ in range(STRENGTH_STEPS):
            for kind in range(2):
                if kind == 0:
                    vp = v + STRENGTH_STEP * rng.standard_normal()
                else:
                    sp = rng.beta(M.pz.s_a, M.pz.s_b)
                    vp = math.log(sp) - math.log1p(-sp) if 0.0 < sp < 1.0 else math.nan
                u = rng.random()
                if not (vp > -math.inf and vp < math.inf):
                    continue
                s_old = s[k]
                s[k] = _expit(vp)
                prior_p = log_prior_zs(vp, M.pz)
                new = -math.inf
                if s[k] > 0.0 and s[k] < 1.0:
                    new = prior_p + guesses_log_lik(M.G, eps, s, k)
                la = new - cur
                if kind == 1:  # the proposal's density is the prior's
                    la -= prior_p - prior
                if la >= 0.0 or (u > 0.0 and math.log(u) < la):
                    v, cur, prior = vp, new, prior_p
                else:
                    s[k] = s_old
        z[a] = v
        state.lp[0] += cur - start
