"""Noise-free sampler on the exact marginal likelihood (numpy and numba only).

The latent (alpha_i, beta_i) are integrated out of the model exactly (binomial bases:
:mod:`samplers.model.binomial`, or :mod:`samplers.model.binomial_block` for many bases of equal
sizes, which share one quadrature; over-dispersed bases: :mod:`samplers.model.band_quadrature`),
so the chain runs on theta = (eps, the free strengths, the free tau and rho of each group) alone,
in unconstrained coordinates

    z = (log eps, logit s_k for each free strength, logit tau_j, atanh(rho_j / rho_max_j(tau_j))).

Each iteration makes up to four kinds of Metropolis moves:

1. a joint Gaussian random walk on z, whose shape (Cholesky factor of the covariance) is
   measured between ``cov_start`` and ``cov_end`` of the warm-up and whose scale follows a
   Robbins-Monro recursion towards ``target_accept`` during warm-up;
2. when some strength is free, a move along the ridge s * eps = const,
   (log eps, log s_k) -> (log eps + u, log s_k - u), symmetric in those coordinates (so its ratio
   carries the Jacobian prod (1 - s_k) / (1 - s_k') of logit against log s), with its own tuned
   scale. With s free the likelihood is nearly flat along that ridge and the joint walk alone
   crawls along it;
3. after the warm-up, with binomial bases only, a move on the likelihood table of
   :mod:`samplers.exact.surrogate` (built at the end of the warm-up): the independence move, which
   draws from the tabulated posterior (:mod:`samplers.exact.table_proposal`) when a pilot shows that
   it fits, else the table walk (``n_inner`` walk steps and ``n_inner - 1`` ridge steps on the
   table); either way one exact evaluation corrects for the table's error. Moves 1 and 2 then
   run every ``exact_every_indep``-th or ``exact_every``-th iteration (a fixed schedule).
   Where the table's proposal fails its pilot, or there is no table (over-dispersed groups),
   the independence move proposes from a Student t fitted to the warm-up
   (:mod:`samplers.exact.fitted_proposal`) when its own pilot passes; for over-dispersed groups
   the t is fitted at the middle of the warm-up too and proposed from in its second half;
4. every iteration, when some free strength is read by one-run audits' rows only (a game's own
   strength), a few cheap steps on each such strength alone
   (:func:`samplers.exact.moves.strength_move`).

After warm-up nothing adapts (the table is fixed), so stored draws come from a Markov chain
whose transition repeats with the period of its schedule and whose target is the exact
posterior.
The kernel advances a chain by a given number of iterations from a
:class:`ChainState` (modified in place), so a driver can run in chunks; draws depend only on the
seed and the number of iterations, not on how they are chunked.

The moves are in :mod:`samplers.exact.moves`, the target in :mod:`samplers.exact.posterior`, the
table's build in :mod:`samplers.exact.table` and the named tuples in :mod:`samplers.exact.state`;
this module starts a chain (:func:`new_state`) and runs its iterations (:func:`advance`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..numerics.arrays import copy_into
from ..numerics.jit import JIT
from ..numerics.special import log_expit as _log_expit
from . import fitted_proposal, surrogate, table_proposal
from .moves import (
    choose_fitted,
    choose_table_proposal,
    indep_move,
    ridge_move,
    strength_move,
    table_walk_move,
    walk_move,
)
from .posterior import log_posterior
from .state import (
    EXACT_EVERY,
    EXACT_EVERY_INDEP,
    INITIAL_STEP,
    N_INNER,
    RM_POWER,
    TABLE_FIT,
    TABLE_INDEP,
    TABLE_NONE,
    TABLE_WALK,
    ChainState,
    Corr,
    Draws,
    Model,
    Scratch,
    Settings,
)
from .table import build_table

__all__ = [
    "Model",
    "Corr",
    "ChainState",
    "Settings",
    "Draws",
    "INITIAL_STEP",
    "RM_POWER",
    "N_INNER",
    "EXACT_EVERY",
    "EXACT_EVERY_INDEP",
    "TABLE_NONE",
    "TABLE_WALK",
    "TABLE_INDEP",
    "TABLE_FIT",
    "new_state",
    "log_posterior",
    "build_table",
    "advance",
    "advance_warm",
    "advance_draws",
    "advance_walk",
    "start_table",
    "new_scratch",
]


def new_state(model, corr, z0: np.ndarray) -> ChainState:
    """Make a chain state at z0 (its log posterior is evaluated by :func:`advance`)."""
    d = z0.size
    K = model.s_z.size
    return ChainState(
        it=np.zeros(1, dtype=np.int64),
        z=np.array(z0, dtype=np.float64),
        lp=np.array([np.nan]),
        ll_b=np.zeros(model.b_grp.size),
        ll_c=np.zeros(0 if corr is None else corr.c_grp.size),
        log_scale=np.array([math.log(2.38 / math.sqrt(d)), math.log(0.5)]),
        chol=np.eye(d) * INITIAL_STEP * math.sqrt(d) / 2.38,
        cov_n=np.zeros(1),
        cov_sum=np.zeros(d),
        cov_sq=np.zeros((d, d)),
        n_acc=np.zeros(2),
        win_n=np.zeros(1),
        win_sum=np.zeros(d),
        win_sq=np.zeros(d),
        win_min=np.full(d, np.inf),
        win_max=np.full(d, -np.inf),
        sg_on=np.zeros(1, dtype=np.int64),
        tb=surrogate.Table(
            s_z=model.s_z,
            lo=np.zeros(d),
            hi=np.zeros(d),
            ulo=np.zeros(K),
            uhi=np.zeros(K),
            V=np.zeros((K, surrogate.GRID, surrogate.GRID)),
            vmax=np.zeros(K),
        ),
        win_usum=np.zeros(K),
        win_usq=np.zeros(K),
        win_umin=np.full(K, np.inf),
        win_umax=np.full(K, -np.inf),
        q=table_proposal.Proposal(
            zr=np.zeros(2),
            L0=np.zeros(table_proposal.Z_CELLS),
            C0=np.zeros(table_proposal.Z_CELLS),
            LS=np.zeros((K, table_proposal.Z_CELLS, table_proposal.U_CELLS)),
            CS=np.zeros((K, table_proposal.Z_CELLS, table_proposal.U_CELLS)),
        ),
        win_cross=np.zeros((d, d)),
        fq=fitted_proposal.empty(d, d - model.s_cheap.size),
    )


@njit(**JIT)
def new_scratch(state) -> Scratch:
    """Scratch arrays for the kernels of one chain (their contents are written before read).

    Jitted: the kernels make their own, and the driver calls it from Python.
    """
    d = state.z.shape[0]
    return Scratch(
        zp=np.empty(d),
        llb_p=np.empty(state.ll_b.shape[0]),
        llc_p=np.empty(state.ll_c.shape[0]),
        xi=np.empty(d),
        yp=np.empty(d),
    )


def advance(state, M, C, cfg, rng, n_iter, out, row0, stop):
    """Advance one chain by ``n_iter`` iterations.

    Each iteration after the warm-up is a draw, stored in the next row of ``out`` (a
    :class:`~samplers.exact.state.Draws`) from ``row0`` on (the per-base log likelihoods only
    with ``cfg.store_ll``); returns the next free row. ``stop[0]`` set interrupts the table's
    build (the iteration is then not begun).

    The iterations run in kernels of their own, called from here in order: the warm-up
    (:func:`advance_warm`), at its end the choice of the table move (:func:`start_table`, which
    calls the table's build and pilots as it needs them), then the draws with the move chosen
    (:func:`advance_walk` for the table walk, :func:`advance_draws` otherwise). Each kernel is
    compiled on its first call only, so a run compiles the moves it makes and no other.

    After the warm-up, when the table of :mod:`samplers.exact.surrogate` could be built (binomial
    bases only, ``cfg.n_inner > 0``), each iteration makes a table move (the exact walk and
    ridge only on their schedule): with ``cfg.indep`` and a proposal that passes the pilot of
    :func:`~samplers.exact.moves.choose_table_proposal`, y ~ q accepted with probability
    min(1, pi(y) q(z) / (pi(z) q(y)));
    else ``n_inner`` walk and ridge steps on the table, then one exact evaluation at their end
    point y, accepted with probability min(1, pi(y) pi_table(z) / (pi(z) pi_table(y))) (Liu
    2001, Sec. 9.4.3). Both leave the exact posterior invariant; the table only decides how
    often they are accepted.
    """
    if not state.lp[0] == state.lp[0]:  # nan: first call
        state.lp[0] = log_posterior(state.z, M, C, state.ll_b, state.ll_c)
    row = row0
    left = int(n_iter)
    while left > 0:
        t = int(state.it[0])
        if t < cfg.tune:
            n = min(left, cfg.tune - t)
            advance_warm(state, M, C, cfg, rng, n)
            left -= n
            continue
        if t == cfg.tune and state.sg_on[0] == 0:
            if not start_table(state, M, C, cfg, rng, stop, new_scratch(state)):
                # interrupted (stop[0] set): the iteration is not begun, no random number drawn
                return row
        kernel = advance_walk if state.sg_on[0] == TABLE_WALK else advance_draws
        return kernel(state, M, C, cfg, rng, left, out, row)
    return row


def start_table(state, M, C, cfg, rng, stop, w) -> bool:
    """At the end of the warm-up, choose the table move: build the table, pilot its proposals.

    With binomial bases only (and ``cfg.n_inner > 0``) the table is built from the second half
    of the warm-up (:func:`~samplers.exact.table.build_table`); with ``cfg.indep`` its proposal
    is tried, then the t fitted to the warm-up. ``state.sg_on[0]`` ends as one of the TABLE_*
    modes. Returns False when a Ctrl-C (stop[0] set) interrupted the table's build. Each step
    is a kernel of its own, compiled when a chain first needs it (:func:`needed_kernels`).
    """
    if cfg.n_inner > 0 and C is None:
        if not build_table(state, M, stop):
            return False
        if cfg.indep and state.sg_on[0] == TABLE_WALK:
            choose_table_proposal(state, M, C, rng, w)
    if cfg.indep and state.sg_on[0] != TABLE_INDEP:
        # no table, or its proposal does not fit: try the t fitted to the warm-up
        choose_fitted(state, M, C, rng, w)
        if state.sg_on[0] == 0:
            state.sg_on[0] = TABLE_NONE
    return True


@njit(**JIT)
def _n_free(M):
    n_free = 0
    for k in range(M.s_z.shape[0]):
        if M.s_z[k] >= 0:
            n_free += 1
    return n_free


@njit(**JIT)
def advance_warm(state, M, C, cfg, rng, n_iter):
    """Run ``n_iter`` warm-up iterations (all before ``cfg.tune``).

    The tuned walk and ridge moves, the windows that shape the walk and box the table, and with
    over-dispersed groups the fitted t's move in the warm-up's second half.
    """
    w = new_scratch(state)
    n_free = _n_free(M)
    # int64, not the literal TABLE_FIT: indep_move compiles once, for this and advance_draws
    fit = np.int64(TABLE_FIT)
    for _ in range(n_iter):
        t = state.it[0]
        warm = t < cfg.tune  # True; a computed value, not a literal: the moves compile once
        walk_move(state, M, C, cfg, rng, t, warm, w)
        if cfg.ridge and n_free > 0:
            ridge_move(state, M, C, cfg, rng, t, warm, w)
        if M.s_cheap.shape[0] > 0:
            strength_move(state, M, rng)
        if (
            t >= cfg.cov_end
            and (C is not None or M.n_mix > 0)
            and cfg.indep
            and state.fq.on[0] == 1
        ):
            # over-dispersed or exposure-mixture groups (no table): in the warm-up's second
            # half the chain also proposes from the t fitted to its first half, so that the
            # window the final proposal is fitted to (at t = tune) has mixed
            indep_move(fit, state, M, C, rng, w)
        if t >= cfg.cov_start and t < cfg.cov_end:
            _measure_shape(state, M, C, cfg, t)
        if 2 * t >= cfg.tune:
            _measure_window(state, M)
        state.it[0] = t + 1


@njit(**JIT)
def advance_draws(state, M, C, cfg, rng, n_iter, out, row0):
    """Run ``n_iter`` iterations after the warm-up; return the next free row of ``out``.

    Draws are stored from row ``row0`` of ``out``. The mode (``state.sg_on[0]``) is not the
    table walk: the independence move (table's proposal or fitted t) each iteration, the exact
    walk and ridge every ``cfg.exact_every_indep``-th; or, with no such move, the exact moves
    every iteration.
    """
    w = new_scratch(state)
    n_free = _n_free(M)
    mode = state.sg_on[0]
    row = row0
    for _ in range(n_iter):
        t = state.it[0]
        do_exact = mode < TABLE_WALK or (t - cfg.tune) % cfg.exact_every_indep == 0
        warm = t < cfg.tune  # False (see advance_warm)
        a_joint = -1.0
        a_ridge = -1.0
        if do_exact:
            a_joint = walk_move(state, M, C, cfg, rng, t, warm, w)
        if do_exact and cfg.ridge and n_free > 0:
            a_ridge = ridge_move(state, M, C, cfg, rng, t, warm, w)
        a_table = -1.0
        if mode >= TABLE_INDEP:
            ok = indep_move(mode, state, M, C, rng, w)
            a_table = 1.0 if ok else 0.0
        if M.s_cheap.shape[0] > 0:
            strength_move(state, M, rng)
        _record(state, row, a_joint, a_ridge, a_table, out, cfg.store_ll)
        row += 1
        state.it[0] = t + 1
    return row


@njit(**JIT)
def advance_walk(state, M, C, cfg, rng, n_iter, out, row0):
    """As :func:`advance_draws`, for the table walk (``state.sg_on[0]`` TABLE_WALK).

    The table walk each iteration, the exact walk and ridge every ``cfg.exact_every``-th.
    """
    w = new_scratch(state)
    n_free = _n_free(M)
    row = row0
    for _ in range(n_iter):
        t = state.it[0]
        do_exact = (t - cfg.tune) % cfg.exact_every == 0
        warm = t < cfg.tune  # False (see advance_warm)
        a_joint = -1.0
        a_ridge = -1.0
        if do_exact:
            a_joint = walk_move(state, M, C, cfg, rng, t, warm, w)
        if do_exact and cfg.ridge and n_free > 0:
            a_ridge = ridge_move(state, M, C, cfg, rng, t, warm, w)
        a_table = table_walk_move(state, M, C, cfg, rng, w)
        if M.s_cheap.shape[0] > 0:
            strength_move(state, M, rng)
        _record(state, row, a_joint, a_ridge, a_table, out, cfg.store_ll)
        row += 1
        state.it[0] = t + 1
    return row


@njit(**JIT)
def _measure_shape(state, M, C, cfg, t):
    """Add z to the warm-up window that shapes the joint walk; at its end, set the shape.

    The shape is the Cholesky factor of the window's covariance (regularised on the diagonal);
    with over-dispersed or exposure-mixture groups the t proposal is fitted to the same window.
    """
    d = state.z.shape[0]
    state.cov_n[0] += 1.0
    for a in range(d):
        state.cov_sum[a] += state.z[a]
        for b in range(d):
            state.cov_sq[a, b] += state.z[a] * state.z[b]
    if t == cfg.cov_end - 1 and state.cov_n[0] > 2.0 * d + 2.0:
        n = state.cov_n[0]
        cov = np.empty((d, d))
        for a in range(d):
            for b in range(d):
                cov[a, b] = (state.cov_sq[a, b] - state.cov_sum[a] * state.cov_sum[b] / n) / (
                    n - 1.0
                )
            cov[a, a] += 1e-10 + 1e-6 * abs(cov[a, a])
        ok_c = True
        for a in range(d):
            if not cov[a, a] > 0.0:
                ok_c = False
        if ok_c:
            L = np.linalg.cholesky(cov)
            for a in range(d):
                copy_into(state.chol[a], L[a])
            state.log_scale[0] = math.log(2.38 / math.sqrt(d))
    if t == cfg.cov_end - 1 and (C is not None or M.n_mix > 0) and cfg.indep:
        fitted_proposal.fit(state.cov_n[0], state.cov_sum, state.cov_sq, state.fq)


@njit(**JIT)
def _measure_window(state, M):
    """Add z to the range and moments of the warm-up's second half.

    The table's box and the fitted t proposal are built from them at the end of the warm-up.
    """
    d = state.z.shape[0]
    state.win_n[0] += 1.0
    for a in range(d):
        state.win_sum[a] += state.z[a]
        state.win_sq[a] += state.z[a] * state.z[a]
        for b in range(d):
            state.win_cross[a, b] += state.z[a] * state.z[b]
        state.win_min[a] = min(state.win_min[a], state.z[a])
        state.win_max[a] = max(state.win_max[a], state.z[a])
    for k in range(M.s_z.shape[0]):
        if M.s_z[k] >= 0:
            u = state.z[0] + _log_expit(state.z[M.s_z[k]])
            state.win_usum[k] += u
            state.win_usq[k] += u * u
            state.win_umin[k] = min(state.win_umin[k], u)
            state.win_umax[k] = max(state.win_umax[k], u)


@njit(**JIT)
def _record(state, row, a_joint, a_ridge, a_table, out, store_ll):
    """Store the current draw and its moves' acceptance in row ``row`` of ``out`` (Draws)."""
    copy_into(out.z[row], state.z)
    out.acc[row, 0] = a_joint
    out.acc[row, 1] = a_ridge
    out.acc[row, 2] = a_table
    if store_ll:
        copy_into(out.ll_b[row], state.ll_b)
        copy_into(out.ll_c[row], state.ll_c)
