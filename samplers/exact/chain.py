"""Noise-free sampler on the exact marginal likelihood (numpy and numba only).

The latent (alpha_i, beta_i) are integrated out of the model exactly (binomial bases:
:mod:`samplers.model.binomial`, or :mod:`samplers.model.binomial_block` for many bases of equal
sizes, which
share one quadrature; over-dispersed bases: :mod:`samplers.model.band_quadrature`),
so the chain runs on theta = (eps, the free strengths, the free tau and rho of each group) alone,
in unconstrained coordinates

    z = (log eps, logit s_k for each free strength, logit tau_j, atanh(rho_j / rho_max_j(tau_j))).

Each iteration makes up to three Metropolis moves:

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
   (:mod:`samplers.exact.fitted_proposal`) when its own pilot passes; for over-dispersed groups the
   t
   is fitted at the middle of the warm-up too and proposed from in its second half.

After warm-up nothing adapts (the table is fixed), so stored draws come from a Markov chain
whose transition repeats with the period of its schedule and whose target is the exact
posterior.
The kernel advances a chain by a given number of iterations from a
:class:`ChainState` (modified in place), so a driver can run in chunks; draws depend only on the
seed and the number of iterations, not on how they are chunked.

It is long because the chain's state, its three moves and the table's construction share one numba
state tuple; the table's own arithmetic is in :mod:`samplers.exact.surrogate`.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ..model.band_quadrature import log_band_integral
from ..model.binomial_block import fill_log_lik
from ..model.densities import group_rho_max
from ..model.moves import gaussian_step as _walk
from ..model.region import log_area
from ..model.transforms import log_prior_z, log_prior_z0, log_prior_zs
from ..numerics.jit import JIT
from ..numerics.special import expit as _expit
from ..numerics.special import log_expit as _log_expit
from . import fitted_proposal, surrogate, table_proposal

__all__ = ["Model", "Corr", "ChainState", "Settings", "new_state", "advance", "log_posterior"]


#: Everything the log posterior needs but the over-dispersed bases.
#: B: :class:`samplers.model.binomial.BinomialBases` of the distinct binomial bases;
#: Q: their :class:`samplers.model.binomial_block.Blocks` (which share one quadrature), or None when
#: no block pays (then the block quadrature is not compiled); b_grp, b_mult, b_k: their group,
#: multiplicity and strength variable.
#: Per group j: g_sidx (strength variable); g_tau_z, g_rho_z (index in z, -1 when fixed or
#: absent); g_tau, g_rho (the fixed values).
#: Per strength variable k: s_z (index in z or -1), s_fixed (its value when fixed).
#: Priors: pz (:class:`samplers.model.transforms.PriorZ`: eps of kind 0 half-normal(p1) or
#: 1 lognormal(p1, p2), s ~ Beta(s_a, s_b)), tau ~ Beta(tau_a, tau_b), rho uniform on
#: (-rho_max, rho_max).
Model = namedtuple(
    "Model",
    [
        "B",
        "Q",
        "b_grp",
        "b_mult",
        "b_k",
        "g_sidx",
        "g_tau_z",
        "g_rho_z",
        "g_tau",
        "g_rho",
        "s_z",
        "s_fixed",
        "delta",
        "pz",
        "tau_a",
        "tau_b",
    ],
)

#: it: iterations done; z, lp: current point and log posterior; ll_b, ll_c: its per-base log
#: likelihoods; log_scale: (joint, ridge) log step factors; chol: shape of the joint walk;
#: cov_n, cov_sum, cov_sq: running sums for the covariance; n_acc: accepted moves (joint, ridge)
#: since the last reset; win_*: count, sums and range of z over the second half of the warm-up
#: (they set the box of the table); sg_on[0]: the table's state (TABLE_* below; 0 not yet
#: built); tb: the table (:class:`samplers.exact.surrogate.Table`: its box, values and largest value
#: of each table); q: the proposal tabulated from it
#: (:class:`samplers.exact.table_proposal.Proposal`);
#: win_cross: cross sums of z over the second half of the warm-up, and fq the t proposal fitted
#: to that window (:class:`samplers.exact.fitted_proposal.Fitted`).
#: All arrays, so the kernel updates them in place.
#: The over-dispersed bases (None when there are none, so that their quadrature is not even
#: compiled): P, c_grp, c_lik, c_const, c_mult: distinct rows
#: (:func:`samplers.model.params.aux_params`), their group, likelihood code, additive constant and
#: multiplicity (bases with the same group and counts); XG, WG: Gauss-Legendre table of their
#: quadrature.
Corr = namedtuple("Corr", ["P", "c_grp", "c_lik", "c_const", "c_mult", "XG", "WG"])

ChainState = namedtuple(
    "ChainState",
    [
        "it",
        "z",
        "lp",
        "ll_b",
        "ll_c",
        "log_scale",
        "chol",
        "cov_n",
        "cov_sum",
        "cov_sq",
        "n_acc",
        "win_n",
        "win_sum",
        "win_sq",
        "win_min",
        "win_max",
        "sg_on",
        "tb",
        "win_usum",
        "win_usq",
        "win_umin",
        "win_umax",
        "q",
        "win_cross",
        "fq",
    ],
)

#: tune: warm-up iterations; cov_start / cov_end: the window of the warm-up whose draws shape
#: the joint walk; target_accept: goal of both scale recursions; ridge: make the ridge move;
#: n_inner: Metropolis steps on the table per surrogate-transition move (0: no table, the ridge
#: move runs on the exact posterior after the warm-up too).
#: exact_every: with a table, the exact walk and ridge moves run every exact_every-th iteration
#: after the warm-up (they reach what lies outside the table's box).
Settings = namedtuple(
    "Settings",
    [
        "tune",
        "cov_start",
        "cov_end",
        "target_accept",
        "ridge",
        "n_inner",
        "indep",
        "exact_every",
        "exact_every_indep",
    ],
)

#: Initial sd of the joint walk in every coordinate of z (before the shape is measured).
INITIAL_STEP = 0.1
#: Exponent of the Robbins-Monro gain (t + 1)^-RM_POWER.
RM_POWER = 0.6
#: Walk steps on the table per surrogate-transition move (each followed by a ridge step but
#: the last).
N_INNER = 40
#: The table's box grows while its edge is within EDGE_GAP (log density) of the largest value,
#: at most BOX_ROUNDS times.
EDGE_GAP = 10.0
BOX_ROUNDS = 3
#: ... and a side moves in to the nodes within SHRINK_GAP of the largest value when they end
#: more than SHRINK_FRAC of the width inside it.
SHRINK_GAP = 30.0
SHRINK_FRAC = 0.2
#: Default of Settings.exact_every (with the table walk) and Settings.exact_every_indep (with
#: the independence move).
EXACT_EVERY = 2
EXACT_EVERY_INDEP = 10
#: Points drawn from the table's proposal to decide between the two moves, and the smallest
#: effective sample size (fraction of PILOT) of their weights for the independence move.
PILOT = 64
INDEP_MIN_ESS = 0.5
#: Smallest effective sample size (fraction of PILOT) of the pilot's weights for the
#: independence move with the t proposal fitted to the warm-up, in a model with over-dispersed
#: groups. Lower than the table's (INDEP_MIN_ESS, which binomial-only models use for the t as
#: well, the table walk being their fallback): these chains have no table walk to fall back on,
#: only the exact random walk and ridge moves, which give ~0.01-0.03 effective draws per
#: iteration on the posteriors concerned (LiRA counts with tau and rho free), while the t's
#: pilots there measured 0.16-0.34.
FIT_MIN_ESS = 0.15
#: state.sg_on[0]: not decided yet (0), no table and no fitted proposal (-1), table walk,
#: independence move with the table's proposal, independence move with the fitted t proposal.
TABLE_NONE, TABLE_WALK, TABLE_INDEP, TABLE_FIT = -1, 1, 2, 3


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
        fq=fitted_proposal.empty(d),
    )


@njit(**JIT)
def _copy(dst, src):
    """Set dst[:] = src for 1-d arrays.

    A slice assignment from an array would do, but numba compiles its shape-mismatch error
    message with it (~1 s of a first run's compile time for each array rank).
    """
    for i in range(src.shape[0]):
        dst[i] = src[i]


@njit(**JIT)
def _corr_log_lik(z, M, C, eps, s, ll_c):
    """Prior terms of the free tau, rho and the log likelihood of the over-dispersed bases."""
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
    for i in range(C.c_grp.shape[0]):
        j = C.c_grp[i]
        sj = s[M.g_sidx[j]]
        v = log_band_integral(i, C.c_lik[i], tau[j], rho[j], eps, sj, M.delta, C.P, C.XG, C.WG)
        v = v - log_area(eps, sj, M.delta) + C.c_const[i]
        ll_c[i] = v
        if not v > -math.inf:
            return -math.inf
        lp += C.c_mult[i] * v
    return lp


@njit(**JIT)
def _log_prior(z, M, s):
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

    Fills the per-base log likelihoods.
    """
    s = np.empty(M.s_z.shape[0])
    lp = _log_prior(z, M, s)
    if lp == -math.inf:
        return -math.inf
    eps = math.exp(z[0])
    # k_only = -1 (every base) and bound_tails = False as run-time values: literals would
    # compile the likelihood a second time next to the table's call
    nk = M.s_z.shape[0]
    if not fill_log_lik(M.B, M.Q, M.b_k, eps, s, M.delta, nk * 0 - 1, ll_b, nk < 0):
        return -math.inf
    total = 0.0
    for i in range(M.b_grp.shape[0]):
        total += M.b_mult[i] * ll_b[i]
    if C is not None:
        total += _corr_log_lik(z, M, C, eps, s, ll_c)
    return lp + total


@njit(**JIT)
def _log_surrogate(z, tb, pz):
    """Return the log posterior with the tabulated likelihood of :mod:`samplers.exact.surrogate`.

    Takes the table and the priors' scalars, not the model or the chain state: the table walk
    calls it ~80 times an iteration.
    """
    lp = log_prior_z(z, tb.s_z, pz)
    if lp == -math.inf:
        return -math.inf
    return lp + surrogate.log_density(z, tb)


@njit(**JIT)
def _metropolis(z, lp, ll_b, ll_c, rng, la, zp, lpp, llb_p, llc_p):
    """Accept the proposal zp with probability min(1, e^la) (never when la is -inf or nan).

    One uniform is drawn either way, so the random stream does not depend on whether the
    proposal was valid (callers pass la = -inf for an invalid one); on acceptance zp, lpp and
    its per-base log likelihoods replace the chain's z, lp, ll_b and ll_c (the state's arrays,
    passed one by one: numba passes every array of a tuple argument).
    """
    u = rng.random()
    ok = la >= 0.0 or (u > 0.0 and math.log(u) < la)
    if ok:
        _copy(z, zp)
        lp[0] = lpp
        _copy(ll_b, llb_p)
        _copy(ll_c, llc_p)
    return ok


@njit(**JIT)
def _ridge(z, s_z, uu, zp):
    """Set zp = z moved by uu along the ridge s * eps = const: (log eps + uu, log s_k - uu).

    Returns (valid, log Jacobian of the move in z); invalid when some s_k would leave (0, 1).
    """
    _copy(zp, z)
    zp[0] = z[0] + uu
    ljac = 0.0
    for k in range(s_z.shape[0]):
        ik = s_z[k]
        if ik >= 0:
            s_old = _expit(z[ik])
            ls_new = _log_expit(z[ik]) - uu
            if not ls_new < 0.0:
                return False, 0.0
            s_new = math.exp(ls_new)
            if not s_new < 1.0:
                return False, 0.0
            zp[ik] = ls_new - math.log1p(-s_new)
            ljac += math.log1p(-s_old) - math.log1p(-s_new)
    return True, ljac


@njit(**JIT)
def _table_walk(y, ly, tb, pz, log_scale, chol, n_inner, rng, xi, yp):
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
            _walk(y, chol, sc, rng, xi, yp)
            lj = 0.0
            valid = True
        else:
            valid, lj = _ridge(y, tb.s_z, sr * rng.standard_normal(), yp)
        u = rng.random()
        if valid:
            lyp = _log_surrogate(yp, tb, pz)
            la = lyp - ly + lj
            if la >= 0.0 or (u > 0.0 and math.log(u) < la):
                _copy(y, yp)
                ly = lyp
    return ly


#: Cells of log eps on which the other tables' profiles are taken (:func:`_edge_gaps`).
PROFILE_CELLS = 512


@njit(**JIT)
def _profiles(tb, pz, zr, prof):
    """Fill ``prof[k, c]`` with table k's profile over log eps.

    Table k's posterior terms (its ``f_k`` and s_k's prior), maximised over v = logit s_k, at
    the centre of cell c of log eps across ``zr`` (a fixed strength: f_k).
    """
    G = tb.V.shape[1]
    lo, hi = tb.lo, tb.hi
    nc = prof.shape[1]
    for k in range(tb.s_z.shape[0]):
        a = tb.s_z[k]
        for c in range(nc):
            z0 = zr[0] + (c + 0.5) * (zr[1] - zr[0]) / nc
            if a < 0:
                prof[k, c] = surrogate.value_k(k, z0, 0.0, tb)
                continue
            best = -math.inf
            for j in range(G):
                v = lo[a] + j * (hi[a] - lo[a]) / (G - 1)
                val = log_prior_zs(v, pz) + surrogate.value_k(k, z0, v, tb)
                best = max(best, val)
            prof[k, c] = best


@njit(**JIT)
def _edge_gaps(tb, pz, k, zr, prof, gaps, span):
    """Measure how far table k's posterior at each edge of its box lies below its maximum.

    At a node of table k: its ``f_k``, the priors of eps and s_k, and the other tables' profiles
    (``prof``, from :func:`_profiles`) at that node's eps: the posterior maximised over the other
    strengths, so that another group's data bound the box too. ``gaps`` gets (low, high) of the
    table's first coordinate (z0 for a fixed strength, u = log(s eps) for a free one) and
    (low, high) of v = logit s (free strengths only); ``span`` the first and last node index
    along each of the two coordinates where the posterior is within SHRINK_GAP of the largest
    value.
    """
    G = tb.V.shape[1]
    a = tb.s_z[k]
    lo, hi = tb.lo, tb.hi
    nc = prof.shape[1]
    top = -math.inf
    for q in range(4):
        gaps[q] = -math.inf
    n_j = G if a >= 0 else 1
    gv = np.full((G, G), -math.inf)
    for i in range(G):
        for j in range(n_j):
            if a >= 0:
                v = lo[a] + j * (hi[a] - lo[a]) / (G - 1)
                z0 = tb.ulo[k] + i * (tb.uhi[k] - tb.ulo[k]) / (G - 1)
                z0 -= _log_expit(v)
                g = log_prior_zs(v, pz) + tb.V[k, i, j]
            else:
                z0 = lo[0] + i * (hi[0] - lo[0]) / (G - 1)
                g = tb.V[k, i, 0]
            g += log_prior_z0(z0, pz)
            x = (z0 - zr[0]) / (zr[1] - zr[0]) * nc
            c = min(max(int(x), 0), nc - 1)
            for k2 in range(tb.s_z.shape[0]):
                if k2 != k:
                    g += prof[k2, c] if (x >= 0.0 and x <= nc) else -math.inf
            if not g > -math.inf:
                continue
            gv[i, j] = g
            top = max(top, g)
            if i == 0:
                gaps[0] = max(gaps[0], g)
            if i == G - 1:
                gaps[1] = max(gaps[1], g)
            if a >= 0 and j == 0:
                gaps[2] = max(gaps[2], g)
            if a >= 0 and j == G - 1:
                gaps[3] = max(gaps[3], g)
    for q in range(4):
        gaps[q] = top - gaps[q]
    span[0] = G
    span[1] = -1
    span[2] = G
    span[3] = -1
    for i in range(G):
        for j in range(n_j):
            if gv[i, j] >= top - SHRINK_GAP:
                span[0] = min(span[0], i)
                span[1] = max(span[1], i)
                span[2] = min(span[2], j)
                span[3] = max(span[3], j)


@njit(**JIT)
def _resize(lo, hi, gap_lo, gap_hi, first, last, G, lo_min, hi_max):
    """Return the new (lo, hi) of one coordinate of a table's box, and whether it changed.

    A side moves out by half the width while the posterior at that edge is within EDGE_GAP of
    its largest value; otherwise it moves in to one node beyond the outermost node within
    SHRINK_GAP, when that node lies more than SHRINK_FRAC of the width inside (a box much wider
    than the posterior wastes the table's nodes).
    """
    w = hi - lo
    h = w / (G - 1)
    n_lo, n_hi = lo, hi
    if gap_lo < EDGE_GAP:
        n_lo = max(lo - 0.5 * w, lo_min)
    elif first > SHRINK_FRAC * (G - 1):
        n_lo = lo + (first - 1) * h
    if gap_hi < EDGE_GAP:
        n_hi = min(hi + 0.5 * w, hi_max)
    elif last < (1.0 - SHRINK_FRAC) * (G - 1):
        n_hi = lo + (last + 1) * h
    return n_lo, n_hi, (n_lo != lo or n_hi != hi)


@njit(**JIT)
def _z_union(tb, zr):
    """``zr``: the range of log eps that some table's box reaches."""
    zr[0] = math.inf
    zr[1] = -math.inf
    for k in range(tb.s_z.shape[0]):
        a = tb.s_z[k]
        if a >= 0:
            zr[0] = min(zr[0], tb.ulo[k] - _log_expit(tb.hi[a]))
            zr[1] = max(zr[1], tb.uhi[k] - _log_expit(tb.lo[a]))
        else:
            zr[0] = min(zr[0], tb.lo[0])
            zr[1] = max(zr[1], tb.hi[0])
    zr[0] = max(zr[0], surrogate.Z0_MIN)
    zr[1] = min(zr[1], surrogate.Z0_MAX)


@njit(**JIT)
def _box_from_window(n, s1, s2, mn, mx):
    """(lo, hi): the range of a coordinate over the window plus BOX_SD standard deviations."""
    m = s1 / n
    sd = max(math.sqrt(max(s2 / n - m * m, 0.0)), 1e-3)
    return mn - surrogate.BOX_SD * sd, mx + surrogate.BOX_SD * sd


@njit(**JIT)
def build_table(state, M, stop):
    """Tabulate the likelihood over a box around the warm-up's second half (sets sg_on).

    A fixed strength's table spans z0 = log eps; a free strength's spans u = log(s eps) and
    v = logit s (the likelihood is nearly flat along the ridge s eps = const, so in (u, v) its
    mass is a band parallel to the v axis rather than a bent curve). Each coordinate's box starts
    at its range over that half plus BOX_SD standard deviations; while a table's posterior at an
    edge is within EDGE_GAP of its largest value (a heavy tail, e.g. along the ridge), that side
    moves out by half the box's width (at most BOX_ROUNDS times), so the table covers where the
    chain will go.

    Sets ``state.sg_on[0]`` to 1 (built) or -1 (no table: too few warm-up draws, or none
    can be built) and returns True; returns False, leaving sg_on 0, when ``stop[0]`` was set
    during the build (it is deterministic, so building again later gives the same table).
    """
    tb = state.tb
    n = state.win_n[0]
    if n < 10.0:
        state.sg_on[0] = TABLE_NONE
        return True
    d = state.z.shape[0]
    for a in range(d):
        tb.lo[a], tb.hi[a] = _box_from_window(
            n, state.win_sum[a], state.win_sq[a], state.win_min[a], state.win_max[a]
        )
    K = M.s_z.shape[0]
    for k in range(K):
        tb.ulo[k], tb.uhi[k] = _box_from_window(
            n, state.win_usum[k], state.win_usq[k], state.win_umin[k], state.win_umax[k]
        )
    G = tb.V.shape[1]
    gaps = np.empty(4)
    span = np.empty(4, dtype=np.int64)
    zr = np.empty(2)
    prof = np.empty((K, PROFILE_CELLS))
    pz = M.pz
    for r in range(BOX_ROUNDS + 1):
        # keep eps within what exp() and the likelihood handle
        tb.lo[0] = max(tb.lo[0], surrogate.Z0_MIN)
        tb.hi[0] = min(tb.hi[0], surrogate.Z0_MAX - 2.0)
        res = surrogate.build(M, tb, stop)
        if res == surrogate.STOPPED:
            state.sg_on[0] = 0  # not built: the next call starts again from the window
            return False
        if res == surrogate.FAILED:
            state.sg_on[0] = TABLE_NONE
            return True
        state.sg_on[0] = TABLE_WALK
        if r == BOX_ROUNDS:
            break
        changed = False
        _z_union(tb, zr)
        _profiles(tb, pz, zr, prof)
        for k in range(K):
            a = M.s_z[k]
            _edge_gaps(tb, pz, k, zr, prof, gaps, span)
            if a >= 0:
                tb.ulo[k], tb.uhi[k], c1 = _resize(
                    tb.ulo[k],
                    tb.uhi[k],
                    gaps[0],
                    gaps[1],
                    span[0],
                    span[1],
                    G,
                    -math.inf,
                    math.inf,
                )
                tb.lo[a], tb.hi[a], c2 = _resize(
                    tb.lo[a],
                    tb.hi[a],
                    gaps[2],
                    gaps[3],
                    span[2],
                    span[3],
                    G,
                    -math.inf,
                    math.inf,
                )
                changed = changed or c1 or c2
            else:
                tb.lo[0], tb.hi[0], c1 = _resize(
                    tb.lo[0],
                    tb.hi[0],
                    gaps[0],
                    gaps[1],
                    span[0],
                    span[1],
                    G,
                    surrogate.Z0_MIN,
                    surrogate.Z0_MAX - 2.0,
                )
                changed = changed or c1
        if not changed:
            break
    return True


@njit(**JIT)
def _choose_proposal(tb, q, sg_on, M, C, rng, zp, llb_p, llc_p):
    """Switch the chain to the independence move when the table's proposal q fits.

    Tabulates q (:mod:`samplers.exact.table_proposal`), draws PILOT points from it and evaluates the
    exact posterior there; when the importance weights pi / q have an effective sample size of
    at least INDEP_MIN_ESS of the draws, ``sg_on[0]`` becomes TABLE_INDEP, else it stays
    TABLE_WALK. Decided once, before the first draw, so the stored chain is time-homogeneous.
    """
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
def _choose_fitted(n, s1, s2, fq, sg_on, M, C, rng, zp, llb_p, llc_p):
    """Switch the chain to the independence move with the t proposal fitted to the warm-up.

    ``n``, ``s1``, ``s2``: count, sums and cross sums of z over the second half of the warm-up;
    ``fq``: the chain's :class:`samplers.exact.fitted_proposal.Fitted`, fitted here. PILOT draws
    from
    it and the exact posterior there decide, as in :func:`_choose_proposal` (threshold
    FIT_MIN_ESS with over-dispersed groups, else INDEP_MIN_ESS); ``sg_on[0]`` becomes TABLE_FIT
    when they pass, else it is left as it was.
    """
    if not fitted_proposal.fit(n, s1, s2, fq):
        return
    lw = np.empty(PILOT)
    for i in range(PILOT):
        fitted_proposal.draw(rng, fq, zp)
        lw[i] = log_posterior(zp, M, C, llb_p, llc_p) - fitted_proposal.log_density(zp, fq)
    if _pilot_ess(lw) >= (INDEP_MIN_ESS if C is None else FIT_MIN_ESS):
        sg_on[0] = TABLE_FIT


@njit(**JIT)
def _indep_move(mode, state, tb, q, M, C, rng, zp, llb_p, llc_p):
    """Make one independence Metropolis-Hastings move; return whether it was accepted.

    y ~ q (the table's proposal, or the fitted t with ``mode`` TABLE_FIT), accepted with
    probability min(1, pi(y) q(z) / (pi(z) q(y))); it never leaves a z where q(z) = 0.
    """
    _indep_draw(mode, rng, tb, q, state.fq, zp)
    lqz = _indep_log_density(mode, state.z, tb, q, state.fq)
    la = -math.inf
    lpp = state.lp[0]
    if lqz > -math.inf:
        lqy = _indep_log_density(mode, zp, tb, q, state.fq)
        if lqy > -math.inf:  # always, for a draw of q; a guard against rounding
            lpp = log_posterior(zp, M, C, llb_p, llc_p)
            la = (lpp - state.lp[0]) - (lqy - lqz)
    return _metropolis(state.z, state.lp, state.ll_b, state.ll_c, rng, la, zp, lpp, llb_p, llc_p)


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
def advance(
    state, M, C, cfg, rng, n_iter, out_z, out_ll_b, out_ll_c, out_acc, row0, store_ll, stop
):
    """Advance one chain by ``n_iter`` iterations.

    Each iteration after the warm-up is a draw, stored in the next row of the outputs from
    ``row0`` on (the per-base log likelihoods only with ``store_ll``); returns the next free
    row.

    After the warm-up, when the table of :mod:`samplers.exact.surrogate` could be built (binomial
    bases only, ``cfg.n_inner > 0``), each iteration makes a table move (the exact walk and
    ridge only on their schedule): with ``cfg.indep`` and a proposal that passes the pilot of
    :func:`_choose_proposal`, y ~ q accepted with probability min(1, pi(y) q(z) / (pi(z) q(y)));
    else ``n_inner`` walk and ridge steps on the table, then one exact evaluation at their end
    point y, accepted with probability min(1, pi(y) pi_table(z) / (pi(z) pi_table(y))) (Liu
    2001, Sec. 9.4.3). Both leave the exact posterior invariant; the table only decides how
    often they are accepted.
    """
    d = state.z.shape[0]
    zp = np.empty(d)
    llb_p = np.empty(state.ll_b.shape[0])
    llc_p = np.empty(state.ll_c.shape[0])
    xi = np.empty(d)
    yp = np.empty(d)
    # the table, its proposal and the priors as the moves take them (views of the state's
    # arrays, filled in place when the table is built)
    tb = state.tb
    q = state.q
    pz = M.pz
    if not state.lp[0] == state.lp[0]:  # nan: first call
        state.lp[0] = log_posterior(state.z, M, C, state.ll_b, state.ll_c)
    n_free = 0
    for k in range(M.s_z.shape[0]):
        if M.s_z[k] >= 0:
            n_free += 1
    row = row0
    for _ in range(n_iter):
        t = state.it[0]
        warm = t < cfg.tune
        if t == cfg.tune and state.sg_on[0] == 0:
            if cfg.n_inner > 0 and C is None:
                # the table, from the second half of the warm-up, before the first draw; a
                # Ctrl-C (stop[0] set) interrupts it and this call returns with the iteration
                # not begun (no random number was drawn for it)
                if not build_table(state, M, stop):
                    return row
                if cfg.indep and state.sg_on[0] == TABLE_WALK:
                    _choose_proposal(tb, q, state.sg_on, M, C, rng, zp, llb_p, llc_p)
            if cfg.indep and state.sg_on[0] != TABLE_INDEP:
                # no table, or its proposal does not fit: try the t fitted to the warm-up
                _choose_fitted(
                    state.win_n[0],
                    state.win_sum,
                    state.win_cross,
                    state.fq,
                    state.sg_on,
                    M,
                    C,
                    rng,
                    zp,
                    llb_p,
                    llc_p,
                )
                if state.sg_on[0] == 0:
                    state.sg_on[0] = TABLE_NONE
        # the exact walk and ridge moves: every iteration without a table, else every
        # exact_every-th (a fixed schedule, so the chain stays time-homogeneous per cycle)
        mode = state.sg_on[0]
        every = cfg.exact_every_indep if mode >= TABLE_INDEP else cfg.exact_every
        do_exact = warm or mode < TABLE_WALK or (t - cfg.tune) % every == 0
        a_joint = -1.0
        a_ridge = -1.0
        # 1. joint random walk
        if do_exact:
            _walk(state.z, state.chol, math.exp(state.log_scale[0]), rng, xi, zp)
            lpp = log_posterior(zp, M, C, llb_p, llc_p)
            la = lpp - state.lp[0]
            ok = _metropolis(
                state.z, state.lp, state.ll_b, state.ll_c, rng, la, zp, lpp, llb_p, llc_p
            )
            a_joint = 1.0 if ok else 0.0
            if warm:
                gain = (t + 1.0) ** -RM_POWER
                state.log_scale[0] += gain * (min(1.0, math.exp(min(la, 0.0))) - cfg.target_accept)
        # 2. ridge move
        if do_exact and cfg.ridge and n_free > 0:
            uu = math.exp(state.log_scale[1]) * rng.standard_normal()
            valid, ljac = _ridge(state.z, M.s_z, uu, zp)
            la = -math.inf
            if valid:
                lpp = log_posterior(zp, M, C, llb_p, llc_p)
                la = lpp - state.lp[0] + ljac
            ok = _metropolis(
                state.z, state.lp, state.ll_b, state.ll_c, rng, la, zp, lpp, llb_p, llc_p
            )
            a_ridge = 1.0 if ok else 0.0
            if warm:
                gain = (t + 1.0) ** -RM_POWER
                pa = 0.0
                if valid:
                    pa = min(1.0, math.exp(min(la, 0.0)))
                state.log_scale[1] += gain * (pa - cfg.target_accept)
        # 3. surrogate transition (after the warm-up, with a table; the identity outside its box)
        a_table = -1.0
        if not warm and mode >= TABLE_INDEP:
            ok = _indep_move(mode, state, tb, q, M, C, rng, zp, llb_p, llc_p)
            a_table = 1.0 if ok else 0.0
        if warm and t >= cfg.cov_end and C is not None and cfg.indep and state.fq.on[0] == 1:
            # over-dispersed groups (no table): in the warm-up's second half the chain also
            # proposes from the t fitted to its first half, so that the window the final
            # proposal is fitted to (at t = tune) has mixed
            _indep_move(TABLE_FIT, state, tb, q, M, C, rng, zp, llb_p, llc_p)
        if not warm and mode == TABLE_WALK:
            lz = _log_surrogate(state.z, tb, pz)
            if lz > -math.inf:
                _copy(zp, state.z)
                ly = _table_walk(
                    zp, lz, tb, pz, state.log_scale, state.chol, cfg.n_inner, rng, xi, yp
                )
                moved = False
                for a in range(d):
                    if zp[a] != state.z[a]:
                        moved = True
                la = -math.inf
                lpp = state.lp[0]
                if moved:
                    lpp = log_posterior(zp, M, C, llb_p, llc_p)
                    la = (lpp - state.lp[0]) - (ly - lz)
                ok = _metropolis(
                    state.z, state.lp, state.ll_b, state.ll_c, rng, la, zp, lpp, llb_p, llc_p
                )
                a_table = 1.0 if ok else 0.0
        # covariance of the joint walk, measured in a window of the warm-up
        if warm and t >= cfg.cov_start and t < cfg.cov_end:
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
                        cov[a, b] = (
                            state.cov_sq[a, b] - state.cov_sum[a] * state.cov_sum[b] / n
                        ) / (n - 1.0)
                    cov[a, a] += 1e-10 + 1e-6 * abs(cov[a, a])
                ok_c = True
                for a in range(d):
                    if not cov[a, a] > 0.0:
                        ok_c = False
                if ok_c:
                    L = np.linalg.cholesky(cov)
                    for a in range(d):
                        _copy(state.chol[a], L[a])
                    state.log_scale[0] = math.log(2.38 / math.sqrt(d))
            if t == cfg.cov_end - 1 and C is not None and cfg.indep:
                fitted_proposal.fit(state.cov_n[0], state.cov_sum, state.cov_sq, state.fq)
        # range and moments of the second half of the warm-up (the table and the fitted
        # proposal are built from it at t = tune)
        if warm and 2 * t >= cfg.tune:
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
        if not warm:
            _copy(out_z[row], state.z)
            out_acc[row, 0] = a_joint
            out_acc[row, 1] = a_ridge
            out_acc[row, 2] = a_table
            if store_ll:
                _copy(out_ll_b[row], state.ll_b)
                _copy(out_ll_c[row], state.ll_c)
            row += 1
        state.it[0] = t + 1
    return row
