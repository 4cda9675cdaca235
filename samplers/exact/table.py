"""The box and the build of the likelihood table at the end of the warm-up (exact sampler).

:func:`build_table` sets the box of the table of :mod:`samplers.exact.surrogate` from the second
half of the warm-up (widened while its edge is still high, narrowed where the posterior is
negligible) and tabulates it; the table's own arithmetic is in :mod:`samplers.exact.surrogate`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..model.transforms import log_prior_z0, log_prior_zs
from ..numerics.jit import JIT
from ..numerics.special import log_expit as _log_expit
from . import surrogate
from .state import TABLE_NONE, TABLE_WALK

__all__ = ["build_table", "EDGE_GAP", "BOX_ROUNDS", "SHRINK_GAP", "SHRINK_FRAC"]

#: The table's box grows while its edge is within EDGE_GAP (log density) of the largest value,
#: at most BOX_ROUNDS times.
EDGE_GAP = 10.0
BOX_ROUNDS = 3
#: ... and a side moves in to the nodes within SHRINK_GAP of the largest value when they end
#: more than SHRINK_FRAC of the width inside it.
SHRINK_GAP = 30.0
SHRINK_FRAC = 0.2

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
