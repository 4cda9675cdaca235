"""Likelihood of many binomial bases of the same sizes on one shared quadrature (numpy, numba).

:func:`samplers.model.binomial.log_lik` integrates each base on its own adaptive pieces: about
20-50 microseconds a base, so a model with 1,000 bases costs ~35 ms per evaluation. Bases that
share their sizes (N0 negatives, N1 positives) and their strength can share the work instead.
In each of the four halves of the band (see :mod:`samplers.model.binomial`), with u the outer rate
(density of base i: ``(N_o + 1) Binom(x_i | N_o, u)``) and v the inner one,

    M_i(half) = integral du  (N_o + 1) Binom(x_i | N_o, u) [F_{y_i}(psi_2(u)) - F_{y_i}(psi_1(u))],

where ``F_y(v) = P(Binom(N_i + 1, v) >= y + 1)`` is the Beta(y + 1, N_i - y + 1) distribution
function. At one node u the binomial probabilities of *every* count k = 0..N_o (and, at
psi_1(u) and psi_2(u), of every k = 0..N_i + 1) follow from one logarithm and a recurrence,
so a node costs O(N_o + N_i) for the whole block, and each base adds one multiply-add per
node. For 1,000 bases with N = 100 that is ~1-3 ms instead of ~35 ms.

The quadrature: the u-axis of a half is cut at the kinks of the band's edges (``xs`` and ``c``
of both boundaries) and restricted to the union of the bases' integration windows (the
10^-20 tails, as in :mod:`samplers.model.binomial`); each stretch is covered by Gauss-Legendre
panels of ``NODES`` nodes and at most ``PANEL_SD`` local scales wide, where the local scale is the
smallest of the outer density's spread at u and the inner density's spread at psi_k(u) over
the edge's slope (the spreads are those of a Beta density with mean u: sqrt(u (1 - u) / N)
plus 1 / N, which bounds every count's density from below on its own window). A node where
both edges lie below, or both above, every base's inner window is skipped (the integrand is
below 10^-20 there).

The difference F(v2) - F(v1) is taken from whichever tail is smaller (so it keeps its relative
accuracy in the tails); where the band is thin at the node (v2 - v1 below ``THIN`` of the inner
spread, as s -> 1) it is integrated from the inner density instead (``THIN_NODES``-point
Gauss-Legendre), free of cancellation.

Exactness is kept by falling back to :func:`samplers.model.binomial.log_band_mass` (with its wide
second pass) for every base whose mass here is below ``samplers.model.binomial.TAIL_PASS_BELOW``
(the band then lies in the base's tails, beyond the windows), and for s = 1, whose likelihood is
a line integral. ``tests/samplers/test_binomial_block.py`` compares the two over a grid of
counts, sizes and parameters.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ..numerics.jit import JIT
from ..numerics.quadrature import gauss_legendre_table
from ..numerics.smallsort import sort_small
from .binomial import TAIL_PASS_BELOW, log_band_mass, log_tail_bound
from .region import log_area_rate, make_band, psi

__all__ = ["Blocks", "make_blocks", "fill_log_lik", "block_cost", "BLOCK_N_MAX"]


#: Gauss-Legendre nodes per panel and panel width in local scales.
NODES = 10
PANEL_SD = 2.5
#: Below this fraction of the inner spread the band counts as thin at a node.
THIN = 0.05
THIN_NODES = 6
#: Cost of one base on its own (microseconds), for :func:`block_cost`.
SINGLE_US = 35.0
#: Largest N0 or N1 a block may have (a node costs O(N)).
BLOCK_N_MAX = 20000

_GX, _GW = gauss_legendre_table(max(NODES, THIN_NODES))

#: Bases grouped into blocks of equal (strength variable, N0, N1); ``idx`` lists the distinct
#: bases of block b in ``idx[start[b]:start[b] + size[b]]``; ``win[b, h]`` holds the outer
#: window (lo, hi) and the inner window (lo, hi) of half h (0: FPR outer, 1: FNR outer, 2 and 3
#: the same for the reflected counts); ``cnt[:, m]`` holds the counts of member m of
#: ``idx`` (rows: x, y, n0 - x, n1 - y, as integers); ``rest`` lists the bases left to
#: :func:`samplers.model.binomial.log_band_mass`. Models without blocks have None instead (see
#: :func:`make_blocks`).
Blocks = namedtuple(
    "Blocks",
    ["k", "n0", "n1", "start", "size", "idx", "cnt", "win", "rest", "GX", "GW"],
)


def block_cost(n_bases: int, n0: float, n1: float) -> tuple[float, float]:
    """Rough cost (microseconds) of one evaluation of a block, and of the same bases one by one.

    Nodes: about ``NODES / PANEL_SD * pi * sqrt(N)`` per half over the whole unit interval (an
    upper bound: windows cut it); a node costs ~7 ns per count and ~1.5 ns per base; a base on its
    own ~35 microseconds (measured near the posterior of counts drawn at eps = 2, s = 0.5: 33-47
    at N = 30-100, 21-26 at N = 300-1,000; ``python benchmarks/bench_sampler.py --blocks``).
    """
    n = max(n0, n1)
    nodes = 4 * NODES / PANEL_SD * math.pi * math.sqrt(n + 2.0)
    block = nodes * (0.007 * (n0 + 2.0 * n1 + 6.0) + 0.0015 * n_bases) + 20.0
    return block, SINGLE_US * n_bases


def make_blocks(
    B, base_k: np.ndarray, always: bool = False, none_if_empty: bool = True
) -> Blocks | None:
    """Group the distinct binomial bases of ``B`` into blocks where sharing pays.

    ``base_k``: strength variable of every base. A block is made of all bases with the same
    (strength variable, N0, N1) when both sizes are at most BLOCK_N_MAX and
    :func:`block_cost` says the shared quadrature is cheaper (``always``: whatever the cost,
    for tests). Returns None when no block pays: :func:`fill_log_lik` then takes every base on
    its own and a run does not compile the block quadrature at all (~4 s of first-run compile
    time); with ``none_if_empty=False`` a :class:`Blocks` without blocks instead (a model whose
    numba type must match another's, see :func:`samplers.exact.driver.start_model`).
    """
    base_k = np.asarray(base_k, dtype=np.int64)
    n = B.x.size
    keys = np.stack([base_k.astype(np.float64), B.n0, B.n1], axis=1) if n else np.zeros((0, 3))
    ks, n0s, n1s, starts, sizes, idx, wins = [], [], [], [], [], [], []
    in_block = np.zeros(n, dtype=bool)
    if n:
        uniq, inv = np.unique(keys, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        for b, (k, n0, n1) in enumerate(uniq):
            members = np.flatnonzero(inv == b)
            if max(n0, n1) > BLOCK_N_MAX:
                continue
            cost_block, cost_single = block_cost(members.size, n0, n1)
            if cost_block >= cost_single and not always:
                continue
            w0, w1 = B.win0[members], B.win1[members]
            x_win = (w0[:, 0].min(), w0[:, 1].max())
            y_win = (w1[:, 0].min(), w1[:, 1].max())
            xr_win = (1.0 - x_win[1], 1.0 - x_win[0])
            yr_win = (1.0 - y_win[1], 1.0 - y_win[0])
            wins.append(
                [
                    [*x_win, *y_win],
                    [*y_win, *x_win],
                    [*xr_win, *yr_win],
                    [*yr_win, *xr_win],
                ]
            )
            ks.append(int(k))
            n0s.append(int(n0))
            n1s.append(int(n1))
            starts.append(len(idx))
            sizes.append(members.size)
            idx.extend(members.tolist())
            in_block[members] = True
    if not ks and none_if_empty:
        return None
    idx = np.array(idx, dtype=np.int64)
    x, y = B.x[idx].astype(np.int64), B.y[idx].astype(np.int64)
    n0, n1 = B.n0[idx].astype(np.int64), B.n1[idx].astype(np.int64)
    return Blocks(
        k=np.array(ks, dtype=np.int64),
        n0=np.array(n0s, dtype=np.int64),
        n1=np.array(n1s, dtype=np.int64),
        start=np.array(starts, dtype=np.int64),
        size=np.array(sizes, dtype=np.int64),
        idx=idx,
        cnt=np.stack([x, y, n0 - x, n1 - y]).reshape(4, idx.size),
        win=np.array(wins, dtype=np.float64).reshape(len(ks), 4, 4),
        rest=np.flatnonzero(~in_block).astype(np.int64),
        GX=_GX,
        GW=_GW,
    )


@njit(**JIT)
def _pmf(n, v, out):
    """Set out[k] = Binom(k | n, v) for k = 0..n (a recurrence from the mode; tails may be 0)."""
    for k in range(n + 1):
        out[k] = 0.0
    if not v > 0.0:
        out[0] = 1.0
        return
    if not v < 1.0:
        out[n] = 1.0
        return
    m = int((n + 1) * v)
    m = min(max(m, 0), n)
    lv = math.log(v)
    l1v = math.log1p(-v)
    lp = math.lgamma(n + 1.0) - math.lgamma(m + 1.0) - math.lgamma(n - m + 1.0)
    out[m] = math.exp(lp + m * lv + (n - m) * l1v)
    r = v / (1.0 - v)
    p = out[m]
    for k in range(m, n):
        p = p * (n - k) / (k + 1.0) * r
        if p == 0.0:
            break
        out[k + 1] = p
    p = out[m]
    ri = (1.0 - v) / v
    for k in range(m, 0, -1):
        p = p * k / (n - k + 1.0) * ri
        if p == 0.0:
            break
        out[k - 1] = p


@njit(**JIT)
def _spread(v, n):
    """Spread of a Beta density with mean v and n trials (bounded below by 1 / (n + 2))."""
    return math.sqrt(max(v * (1.0 - v), 0.0) / (n + 2.0)) + 1.0 / (n + 2.0)


@njit(**JIT)
def _density(u, n_o, n_i, bd):
    """Nodes needed per unit of u at u: the inverse of the smallest local scale there."""
    r = 1.0 / _spread(u, n_o)
    for k in range(2):
        c = bd.c1 if k == 0 else bd.c2
        e = bd.e1 if k == 0 else bd.e2
        xs = bd.xs1 if k == 0 else bd.xs2
        if u < xs:
            slope = 1.0
        elif u < c:
            slope = e
        else:
            continue
        r = max(r, slope / _spread(psi(u, c, e, xs), n_i))
    return r


@njit(**JIT)
def _inner_diff(n_i, v1, v2, D, p1, p2, q1, q2, GX, GW):
    """Set D[y] = F_y(v2) - F_y(v1) for y = 0..n_i (Beta(y + 1, n_i - y + 1) distribution).

    p1, p2, q1, q2: work arrays of n_i + 2 entries.
    """
    sp = _spread(0.5 * (v1 + v2), n_i)
    if v2 - v1 < THIN * sp:
        # thin band: integrate the density (n_i + 1) Binom(y | n_i, v) over [v1, v2]
        for y in range(n_i + 1):
            D[y] = 0.0
        half = 0.5 * (v2 - v1)
        if not half > 0.0:
            return
        mid = 0.5 * (v1 + v2)
        for j in range(THIN_NODES):
            _pmf(n_i, mid + half * GX[THIN_NODES, j], p1)
            w = half * GW[THIN_NODES, j] * (n_i + 1.0)
            for y in range(n_i + 1):
                D[y] += w * p1[y]
        return
    # K ~ Binom(n_i + 1, v): F_y(v) = P(K >= y + 1) = U(v)[y + 1], 1 - F_y(v) = L(v)[y]
    n = n_i + 1
    _pmf(n, v1, p1)
    _pmf(n, v2, p2)
    a1 = 0.0
    a2 = 0.0
    for k in range(n + 1):  # lower sums L[k] into q
        a1 += p1[k]
        a2 += p2[k]
        q1[k] = a1
        q2[k] = a2
    a1 = 0.0
    a2 = 0.0
    for k in range(n, -1, -1):  # upper sums U[k] into p (in place)
        a1 += p1[k]
        a2 += p2[k]
        p1[k] = a1
        p2[k] = a2
    for y in range(n_i + 1):
        # from the smaller tail: U(v2) - U(v1) errs by ~1e-16 U(v2), L(v1) - L(v2) by L(v1)
        if p2[y + 1] < q1[y]:
            d = p2[y + 1] - p1[y + 1]
        else:
            d = q1[y] - q2[y]
        D[y] = d if d > 0.0 else 0.0


@njit(**JIT)
def _half(bd, n_o, n_i, outer, inner, win, GX, GW, acc, po, D, p1, p2, q1, q2):
    """Add the band mass of one half to acc[j] for member j of a block.

    outer / inner: the members' counts in the outer and inner role;
    win: (outer lo, outer hi, inner lo, inner hi) of this half over the block.
    """
    u_lo = max(win[0], 0.0)
    u_hi = min(win[1], bd.c2)
    if not u_hi > u_lo:
        return
    bp = np.empty(6)
    bp[0] = u_lo
    bp[1] = u_hi
    bp[2] = min(max(bd.xs1, u_lo), u_hi)
    bp[3] = min(max(bd.xs2, u_lo), u_hi)
    bp[4] = min(max(bd.c1, u_lo), u_hi)
    bp[5] = min(max(bd.c2, u_lo), u_hi)
    sort_small(bp, bp.shape[0])
    for p in range(5):
        a = bp[p]
        b = bp[p + 1]
        u = a
        while u < b:
            r = _density(u, n_o, n_i, bd)
            h = PANEL_SD / r
            r = max(r, _density(min(u + h, b), n_o, n_i, bd))
            h = PANEL_SD / r
            ub = u + h
            if ub > b or b - ub < 0.25 * h:
                ub = b
            half = 0.5 * (ub - u)
            mid = 0.5 * (ub + u)
            for j in range(NODES):
                uq = mid + half * GX[NODES, j]
                v1 = psi(uq, bd.c1, bd.e1, bd.xs1)
                v2 = psi(uq, bd.c2, bd.e2, bd.xs2)
                if v2 <= win[2] or v1 >= win[3]:
                    continue
                _pmf(n_o, uq, po)
                _inner_diff(n_i, v1, v2, D, p1, p2, q1, q2, GX, GW)
                w = half * GW[NODES, j] * (n_o + 1.0)
                for m in range(acc.shape[0]):
                    acc[m] += w * po[outer[m]] * D[inner[m]]
            u = ub


@njit(**JIT)
def _block_log_mass(Q, b, bd, out):
    """Set out[j] = log band mass of base idx[start[b] + j] of block b, over the fast windows.

    Below log TAIL_PASS_BELOW the caller redoes it, or bounds it (see :func:`fill_log_lik`).
    """
    n0 = Q.n0[b]
    n1 = Q.n1[b]
    start = Q.start[b]
    size = Q.size[b]
    nmax = max(n0, n1) + 2
    acc = np.zeros(size)
    po = np.empty(nmax)
    D = np.empty(nmax)
    p1 = np.empty(nmax)
    p2 = np.empty(nmax)
    q1 = np.empty(nmax)
    q2 = np.empty(nmax)
    c = Q.cnt[:, start : start + size]  # x, y, n0 - x, n1 - y of the members
    W = Q.win[b]
    _half(bd, n0, n1, c[0], c[1], W[0], Q.GX, Q.GW, acc, po, D, p1, p2, q1, q2)
    _half(bd, n1, n0, c[1], c[0], W[1], Q.GX, Q.GW, acc, po, D, p1, p2, q1, q2)
    _half(bd, n0, n1, c[2], c[3], W[2], Q.GX, Q.GW, acc, po, D, p1, p2, q1, q2)
    _half(bd, n1, n0, c[3], c[2], W[3], Q.GX, Q.GW, acc, po, D, p1, p2, q1, q2)
    for jj in range(size):
        out[jj] = math.log(acc[jj]) if acc[jj] > 0.0 else -math.inf


@njit(**JIT)
def fill_log_lik(B, Q, base_k, eps, s, delta, k_only, ll, bound_tails):
    """Set ll[i] = log P(x_i, y_i | eps, s[base_k[i]]) for every distinct base i of B.

    ``Q``: the :class:`Blocks` of B, or None (every base on its own; the block quadrature is
    then pruned at compile time). Only the bases of strength variable ``k_only`` when it is
    >= 0 (the others are left alone). Returns 0 as soon as some base has likelihood zero (its
    ll is -inf), else 1, or 2 when some ll is only an upper bound: with ``bound_tails``
    (likelihood tables, see :func:`samplers.exact.surrogate.build`), a base whose band lies in its
    tails (fast-window mass below TAIL_PASS_BELOW, s < 1) gets
    :func:`samplers.model.binomial.log_tail_bound` instead of the wide pass, which costs ~3 ms a
    base there.
    """
    status = 1
    r_s = np.empty(s.shape[0])
    for k in range(s.shape[0]):
        r = 1.0 - s[k]
        la = log_area_rate(eps, s[k], delta)
        if r > 0.0:
            la += math.log(r)
        r_s[k] = la
    # the bases left to the per-base routine: those outside blocks (all of them without
    # blocks) and the block members whose band lies in their tails (or s = 1)
    todo = np.empty(base_k.shape[0], dtype=np.int64)
    n_todo = 0
    if Q is not None:
        thr = math.log(TAIL_PASS_BELOW)
        for b in range(Q.k.shape[0]):
            k = Q.k[b]
            if k_only >= 0 and k != k_only:
                continue
            out = np.full(Q.size[b], math.nan)  # nan: left to the per-base routine
            if 1.0 - s[k] > 0.0:  # s = 1 is a line integral: per base
                _block_log_mass(Q, b, make_band(eps, s[k], delta), out)
            for jj in range(Q.size[b]):
                i = Q.idx[Q.start[b] + jj]
                lm = out[jj]
                if lm < thr and bound_tails:
                    lm = log_tail_bound(lm)
                    status = 2
                elif not lm >= thr:
                    todo[n_todo] = i
                    n_todo += 1
                    continue
                ll[i] = lm - r_s[k] + B.lconst[i]
                if lm == -math.inf:
                    return 0
        for jj in range(Q.rest.shape[0]):
            todo[n_todo] = Q.rest[jj]
            n_todo += 1
    else:
        for i in range(base_k.shape[0]):
            todo[n_todo] = i
            n_todo += 1
    for jj in range(n_todo):
        i = todo[jj]
        k = base_k[i]
        if k_only >= 0 and k != k_only:
            continue
        lm, bounded = log_band_mass(B, i, eps, s[k], delta, bound_tails)
        if bounded:
            status = 2
        ll[i] = lm - r_s[k] + B.lconst[i]
        if lm == -math.inf:
            return 0
    return status
