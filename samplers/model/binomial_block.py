"""Likelihood of many binomial bases of equal or nearby sizes on one shared quadrature (numba).

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

Bases of *nearby* sizes (LiRA with independent halves: each target's IN count is
Binomial(models, 1/2), so thousands of targets spread over a few dozen sizes) share one block
too. At a node, the pmf of the smallest outer size comes from the recurrence above, and each
larger size from the previous one by

    Binom(k | n + 1, u) = (1 - u) Binom(k | n, u) + u Binom(k - 1 | n, u);

on the inner side the lower and upper sums of Binom(n + 2, v) follow from those of
Binom(n + 1, v) by P(K' <= k) = P(K <= k - 1) + (1 - v) P(K = k) and
P(K' >= k) = P(K >= k) + v P(K = k - 1). All three add positive terms, so every entry keeps its
relative accuracy (the tails too, which the smaller-tail difference needs), and a size costs
O(N) multiply-adds with no logarithm, exponential or division (the recurrence from the mode has a
division chain per count). The nodes are placed for the block's largest sizes (the narrowest
densities, hence the finest panels) over the union of all members' windows, and the thin-band
rule uses the largest inner size, so every member sees a rule at least as fine as a block of its
own sizes would use. Which sizes share a block: :func:`make_blocks` (runs of nearby sizes, and
:func:`block_cost`).

Exactness is kept by falling back to :func:`samplers.model.binomial.log_band_mass` (with its wide
second pass) for every base whose mass here is below ``samplers.model.binomial.TAIL_PASS_BELOW``
(the band then lies in the base's tails, beyond the windows), and for s = 1, whose likelihood is
a line integral. ``tests/samplers/model/test_binomial_block.py`` compares the two over a grid of
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
from .binomial import TAIL_PASS_BELOW, log_band_mass, log_band_mass_tail, log_tail_bound
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
#: Sizes that may share one block (see :func:`make_blocks`): a run of distinct sizes is cut where
#: two consecutive ones differ by more than SIZE_GAP or the run would span more than
#: SIZE_SPAN_RATIO * (its smallest size) + SIZE_SPAN_ADD.
SIZE_GAP = 8
SIZE_SPAN_RATIO = 0.5
SIZE_SPAN_ADD = 16
#: Cost (nanoseconds) per node of each count of each further size of a block, for
#: :func:`block_cost` (measured: 64 x 1,000 LiRA targets with independent halves, sizes 20-44).
STEP_NS = 0.3

_GX, _GW = gauss_legendre_table(max(NODES, THIN_NODES))

#: Bases grouped into blocks of one strength variable whose sizes lie in n0lo[b]..n0[b] and
#: n1lo[b]..n1[b] (equal sizes: n0lo = n0, n1lo = n1); ``idx`` lists the distinct bases of block
#: b in ``idx[start[b]:start[b] + size[b]]``; ``win[b, h]`` holds the outer window (lo, hi) and
#: the inner window (lo, hi) of half h (0: FPR outer, 1: FNR outer, 2 and 3 the same for the
#: reflected counts); ``cnt[:, m]`` holds the counts of member m of ``idx`` (rows: x, y,
#: n0 - x, n1 - y, n0 - n0lo, n1 - n1lo, as integers); ``rest`` lists the bases left to
#: :func:`samplers.model.binomial.log_band_mass`. Models without blocks have None instead (see
#: :func:`make_blocks`).
Blocks = namedtuple(
    "Blocks",
    [
        "k",
        "n0",
        "n1",
        "n0lo",
        "n1lo",
        "start",
        "size",
        "idx",
        "cnt",
        "win",
        "refl",
        "rest",
        "GX",
        "GW",
    ],
)


def block_cost(n_bases: int, n0: float, n1: float, r0: int = 1, r1: int = 1) -> tuple[float, float]:
    """Rough cost (microseconds) of one evaluation of a block, and of the same bases one by one.

    ``n0``, ``n1``: the block's largest sizes; ``r0``, ``r1``: how many sizes it spans (1 when
    its bases have equal sizes). Nodes: about ``NODES / PANEL_SD * pi * sqrt(N)`` per half over
    the whole unit interval (an upper bound: windows cut it); a node costs ~7 ns per count of the
    smallest sizes, ``STEP_NS`` per count for each further size (the recurrences in the size,
    both roles and both edges) and ~1.5 ns per base; a base on its own ~35 microseconds (measured
    near the posterior of counts drawn at eps = 2, s = 0.5: 33-47 at N = 30-100, 21-26 at
    N = 300-1,000; ``python benchmarks/bench_sampler.py --blocks``).
    """
    n = max(n0, n1)
    nodes = 4 * NODES / PANEL_SD * math.pi * math.sqrt(n + 2.0)
    steps = 1e-3 * STEP_NS * ((r0 - 1) * (n0 + 2.0) + (r1 - 1) * (n1 + 2.0))
    block = nodes * (0.007 * (n0 + 2.0 * n1 + 6.0) + steps + 0.0015 * n_bases) + 20.0
    return block, SINGLE_US * n_bases


def _size_runs(sizes: np.ndarray) -> np.ndarray:
    """Run index of every size: sorted distinct sizes cut where SIZE_GAP or the span is exceeded."""
    uniq = np.unique(sizes)
    run = np.empty(uniq.size, dtype=np.int64)
    r, first, prev = -1, 0, 0
    for j, v in enumerate(uniq.tolist()):
        if r < 0 or v - prev > SIZE_GAP or v - first > SIZE_SPAN_RATIO * first + SIZE_SPAN_ADD:
            r, first = r + 1, v
        run[j] = r
        prev = v
    return run[np.searchsorted(uniq, sizes)]


def make_blocks(
    B, base_k: np.ndarray, always: bool = False, none_if_empty: bool = True
) -> Blocks | None:
    """Group the distinct binomial bases of ``B`` into blocks where sharing pays.

    ``base_k``: strength variable of every base. Candidate blocks: the bases of one strength
    variable whose N0 lie in one run of nearby sizes and whose N1 lie in one run
    (:func:`_size_runs`: consecutive distinct sizes at most SIZE_GAP apart, a run spanning at
    most SIZE_SPAN_RATIO times its smallest size plus SIZE_SPAN_ADD). A candidate becomes one
    block when both sizes are at most BLOCK_N_MAX and :func:`block_cost` says it is cheaper than
    its bases of equal sizes as blocks of their own (each where that pays) and than every base on
    its own; otherwise its equal-size groups become blocks where they pay. ``always``: every
    candidate one block whatever the cost (for tests). Returns None when no block pays:
    :func:`fill_log_lik` then takes every base on its own and a run does not compile the block
    quadrature at all (~4 s of first-run compile time); with ``none_if_empty=False`` a
    :class:`Blocks` without blocks instead (a model whose numba type must match another's, see
    :func:`samplers.exact.driver.start_model`).
    """
    base_k = np.asarray(base_k, dtype=np.int64)
    n = B.x.size
    n0_all = B.n0.astype(np.int64)
    n1_all = B.n1.astype(np.int64)
    blocks = []  # (k, members) of every block made
    if n:
        cand = np.zeros((n, 4), dtype=np.int64)
        cand[:, 0] = base_k
        cand[:, 3] = B.refl > 0.0  # a block shares its region (with or without the reflection)
        for k in np.unique(base_k):
            sel = base_k == k
            cand[sel, 1] = _size_runs(n0_all[sel])
            cand[sel, 2] = _size_runs(n1_all[sel])
        _, inv = np.unique(cand, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        for c in range(int(inv.max()) + 1):
            members = np.flatnonzero(inv == c)
            n0m, n1m = n0_all[members], n1_all[members]
            if max(n0m.max(), n1m.max()) > BLOCK_N_MAX:
                continue
            k = int(base_k[members[0]])
            sizes, sub = np.unique(np.stack([n0m, n1m], 1), axis=0, return_inverse=True)
            sub = sub.reshape(-1)
            r0 = int(n0m.max() - n0m.min() + 1)
            r1 = int(n1m.max() - n1m.min() + 1)
            merged, _ = block_cost(members.size, n0m.max(), n1m.max(), r0, r1)
            # each equal-size group as a block of its own where that pays, else base by base
            split_cost, pays = 0.0, []
            for j, (a0, a1) in enumerate(sizes):
                cost_block, cost_single = block_cost(int(np.sum(sub == j)), a0, a1)
                split_cost += min(cost_block, cost_single)
                pays.append(cost_block < cost_single)
            if always or (sizes.shape[0] > 1 and merged < split_cost):
                blocks.append((k, members))
                continue
            for j in range(sizes.shape[0]):
                if pays[j]:
                    blocks.append((k, members[sub == j]))
    if not blocks and none_if_empty:
        return None
    in_block = np.zeros(n, dtype=bool)
    ks, lo0, hi0, lo1, hi1, starts, sizes_, idx, wins = [], [], [], [], [], [], [], [], []
    for k, members in blocks:
        w0, w1 = B.win0[members], B.win1[members]
        x_win = (w0[:, 0].min(), w0[:, 1].max())
        y_win = (w1[:, 0].min(), w1[:, 1].max())
        xr_win = (1.0 - x_win[1], 1.0 - x_win[0])
        yr_win = (1.0 - y_win[1], 1.0 - y_win[0])
        wins.append([[*x_win, *y_win], [*y_win, *x_win], [*xr_win, *yr_win], [*yr_win, *xr_win]])
        ks.append(k)
        lo0.append(int(n0_all[members].min()))
        hi0.append(int(n0_all[members].max()))
        lo1.append(int(n1_all[members].min()))
        hi1.append(int(n1_all[members].max()))
        starts.append(len(idx))
        sizes_.append(members.size)
        idx.extend(members.tolist())
        in_block[members] = True
    idx = np.array(idx, dtype=np.int64)
    x, y = B.x[idx].astype(np.int64), B.y[idx].astype(np.int64)
    n0, n1 = n0_all[idx], n1_all[idx]
    start = np.array(starts, dtype=np.int64)
    size = np.array(sizes_, dtype=np.int64)
    n0lo = np.array(lo0, dtype=np.int64)
    n1lo = np.array(lo1, dtype=np.int64)
    blk = np.repeat(np.arange(len(ks)), size)
    return Blocks(
        k=np.array(ks, dtype=np.int64),
        n0=np.array(hi0, dtype=np.int64),
        n1=np.array(hi1, dtype=np.int64),
        n0lo=n0lo,
        n1lo=n1lo,
        start=start,
        size=size,
        idx=idx,
        cnt=np.stack([x, y, n0 - x, n1 - y, n0 - n0lo[blk], n1 - n1lo[blk]]).reshape(6, idx.size),
        win=np.array(wins, dtype=np.float64).reshape(len(ks), 4, 4),
        refl=np.array([B.refl[m[0]] for _, m in blocks], dtype=np.float64),
        rest=np.flatnonzero(~in_block).astype(np.int64),
        GX=_GX,
        GW=_GW,
    )


@njit(**JIT)
def _pmf(n, v, out, row):
    """Set out[row, k] = Binom(k | n, v), k = 0..n (a recurrence from the mode; tails may be 0)."""
    for k in range(n + 1):
        out[row, k] = 0.0
    if not v > 0.0:
        out[row, 0] = 1.0
        return
    if not v < 1.0:
        out[row, n] = 1.0
        return
    m = int((n + 1) * v)
    m = min(max(m, 0), n)
    lv = math.log(v)
    l1v = math.log1p(-v)
    lp = math.lgamma(n + 1.0) - math.lgamma(m + 1.0) - math.lgamma(n - m + 1.0)
    pm = math.exp(lp + m * lv + (n - m) * l1v)
    out[row, m] = pm
    r = v / (1.0 - v)
    p = pm
    for k in range(m, n):
        p = p * (n - k) / (k + 1.0) * r
        if p == 0.0:
            break
        out[row, k + 1] = p
    p = pm
    ri = (1.0 - v) / v
    for k in range(m, 0, -1):
        p = p * k / (n - k + 1.0) * ri
        if p == 0.0:
            break
        out[row, k - 1] = p


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
def _pmf_step(n, v, p, a, b):
    """Set p[b, k] = Binom(k | n + 1, v), k = 0..n + 1, from p[a, k] = Binom(k | n, v), k = 0..n.

    Binom(k | n + 1, v) = (1 - v) Binom(k | n, v) + v Binom(k - 1 | n, v): positive terms only,
    so every entry keeps its relative accuracy (tails included); O(n), no transcendental.
    """
    w = 1.0 - v
    p[b, 0] = w * p[a, 0]
    for k in range(1, n + 1):
        p[b, k] = w * p[a, k] + v * p[a, k - 1]
    p[b, n + 1] = v * p[a, n]


@njit(**JIT)
def _cdf_step(n, v, p, lo, up, a, b):
    """Lower and upper sums of Binom(n + 1, v) from those of Binom(n, v) (p[a]: its pmf, 0..n).

    lo[a, k] = P(K <= k), up[a, k] = P(K >= k) for K ~ Binom(n, v), k = 0..n (up[a, n + 1] = 0
    is implied); with one more trial, P(K' <= k) = P(K <= k - 1) + (1 - v) P(K = k) and
    P(K' >= k) = P(K >= k) + v P(K = k - 1): positive terms again. Sets rows b for k = 0..n + 1.
    """
    w = 1.0 - v
    lo[b, 0] = w * p[a, 0]
    up[b, 0] = up[a, 0]
    for k in range(1, n + 1):
        lo[b, k] = lo[a, k - 1] + w * p[a, k]
        up[b, k] = up[a, k] + v * p[a, k - 1]
    lo[b, n + 1] = lo[a, n]
    up[b, n + 1] = v * p[a, n]


@njit(**JIT)
def _outer_table(lo, hi, u, PO):
    """Set PO[r, k] = Binom(k | lo + r, u) for sizes lo..hi, k = 0..lo + r (one pmf, then steps)."""
    _pmf(lo, u, PO, 0)
    for r in range(1, hi - lo + 1):
        _pmf_step(lo + r - 1, u, PO, r - 1, r)


@njit(**JIT)
def _inner_table(lo, hi, v1, v2, D, P, L, U, T, GX, GW):
    """Set D[r, y] = F_y(v2) - F_y(v1) for sizes n = lo + r up to hi, y = 0..n.

    F_y is the Beta(y + 1, n - y + 1) distribution function. P, L, U: work arrays (4, hi + 3),
    rows 0 and 1 for v1 (this size and the next), 2 and 3 for v2; T: (2 THIN_NODES, hi + 3).
    The thin-band test uses the spread of the largest size, the narrowest density, so one rule
    serves every size.
    """
    R = hi - lo + 1
    sp = _spread(0.5 * (v1 + v2), hi)
    if v2 - v1 < THIN * sp:
        # thin band: integrate the density (n + 1) Binom(y | n, v) over [v1, v2]
        half = 0.5 * (v2 - v1)
        for r in range(R):
            for y in range(lo + r + 1):
                D[r, y] = 0.0
        if not half > 0.0:
            return
        mid = 0.5 * (v1 + v2)
        for r in range(R):
            n = lo + r
            c = r & 1
            for j in range(THIN_NODES):
                v = mid + half * GX[THIN_NODES, j]
                if r == 0:
                    _pmf(n, v, T, 2 * j)
                else:
                    _pmf_step(n - 1, v, T, 2 * j + 1 - c, 2 * j + c)
                w = half * GW[THIN_NODES, j] * (n + 1.0)
                row = 2 * j + c
                for y in range(n + 1):
                    D[r, y] += w * T[row, y]
        return
    # K ~ Binom(n + 1, v): F_y(v) = P(K >= y + 1) = U(v)[y + 1], 1 - F_y(v) = L(v)[y]
    m = lo + 1
    for e in range(2):
        v = v1 if e == 0 else v2
        row = 2 * e
        _pmf(m, v, P, row)
        acc = 0.0
        for k in range(m + 1):
            acc += P[row, k]
            L[row, k] = acc
        acc = 0.0
        for k in range(m, -1, -1):
            acc += P[row, k]
            U[row, k] = acc
    for r in range(R):
        n = lo + r
        c = r & 1
        if r > 0:
            for e in range(2):
                v = v1 if e == 0 else v2
                _cdf_step(n, v, P, L, U, 2 * e + 1 - c, 2 * e + c)
                _pmf_step(n, v, P, 2 * e + 1 - c, 2 * e + c)
        a1 = c
        a2 = 2 + c
        for y in range(n + 1):
            # from the smaller tail: U(v2) - U(v1) errs by ~1e-16 U(v2), L(v1) - L(v2) by L(v1)
            if U[a2, y + 1] < L[a1, y]:
                d = U[a2, y + 1] - U[a1, y + 1]
            else:
                d = L[a1, y] - L[a2, y]
            D[r, y] = d if d > 0.0 else 0.0


@njit(**JIT)
def _half(bd, sz, fo, fi, win, GX, GW, acc, PO, D, P, L, U, T):
    """Add the band mass of one half (without the factor N_o + 1) to acc[j] for member j.

    sz: (outer lo, outer hi, inner lo, inner hi) sizes of the block in this half's roles;
    fo / fi: where each member's probability lies in PO / D, flattened (row: its size less the
    lowest, column: its count in the outer / inner role); win: (outer lo, outer hi, inner lo,
    inner hi) of this half over the block.
    """
    POf = PO.reshape(-1)
    Df = D.reshape(-1)
    n_o = sz[1]
    n_i = sz[3]
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
    # below both kinks both edges are the diagonal: no width, nothing to integrate
    u_zero = min(bd.xs1, bd.xs2)
    for p in range(5):
        a = bp[p]
        b = bp[p + 1]
        if b <= u_zero:
            continue
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
                _outer_table(sz[0], n_o, uq, PO)
                _inner_table(sz[2], n_i, v1, v2, D, P, L, U, T, GX, GW)
                w = half * GW[NODES, j]
                for m in range(acc.shape[0]):
                    acc[m] += w * POf[fo[m]] * Df[fi[m]]
            u = ub


@njit(**JIT)
def _block_log_mass(Q, b, bd, out):
    """Set out[j] = log band mass of base idx[start[b] + j] of block b, over the fast windows.

    Below log TAIL_PASS_BELOW the caller redoes it, or bounds it (see :func:`fill_log_lik`).
    """
    lo0 = Q.n0lo[b]
    hi0 = Q.n0[b]
    lo1 = Q.n1lo[b]
    hi1 = Q.n1[b]
    start = Q.start[b]
    size = Q.size[b]
    nmax = max(hi0, hi1) + 3
    rows = max(hi0 - lo0, hi1 - lo1) + 1
    acc0 = np.zeros(size)  # halves whose outer size is N0
    acc1 = np.zeros(size)  # and N1
    PO = np.zeros((rows, nmax))
    D = np.zeros((rows, nmax))
    P = np.zeros((4, nmax))
    L = np.zeros((4, nmax))
    U = np.zeros((4, nmax))
    T = np.zeros((2 * THIN_NODES, nmax))
    s01 = np.array([lo0, hi0, lo1, hi1])
    s10 = np.array([lo1, hi1, lo0, hi0])
    c = Q.cnt[:, start : start + size]  # x, y, n0 - x, n1 - y, n0 - lo0, n1 - lo1 of the members
    f = np.empty((4, size), dtype=np.int64)  # flat positions in PO and D (see _half)
    for jj in range(size):
        for h in range(4):
            f[h, jj] = c[4 + (h & 1), jj] * nmax + c[h, jj]
    W = Q.win[b]
    _half(bd, s01, f[0], f[1], W[0], Q.GX, Q.GW, acc0, PO, D, P, L, U, T)
    _half(bd, s10, f[1], f[0], W[1], Q.GX, Q.GW, acc1, PO, D, P, L, U, T)
    if Q.refl[b] > 0.0:  # the upper-right corner, unless the region is the lower-left half
        _half(bd, s01, f[2], f[3], W[2], Q.GX, Q.GW, acc0, PO, D, P, L, U, T)
        _half(bd, s10, f[3], f[2], W[3], Q.GX, Q.GW, acc1, PO, D, P, L, U, T)
    for jj in range(size):
        a = (lo0 + c[4, jj] + 1.0) * acc0[jj] + (lo1 + c[5, jj] + 1.0) * acc1[jj]
        out[jj] = math.log(a) if a > 0.0 else -math.inf


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
                elif lm < thr:
                    # the band lies in the base's tails: the wide pass, without redoing the
                    # fast one (its windows lie inside the block's, which found < thr)
                    lm = log_band_mass_tail(B, i, eps, s[k], delta)
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
