"""Tabulated tails of Beta distribution functions, checked against SciPy's ``betainc``.

The band integrals of :mod:`samplers.model.binomial` evaluate a Beta distribution function at a few
dozen points per base and likelihood evaluation. SciPy's ``betainc`` costs 0.1-3 microseconds a
call (more for large counts), which would dominate the sampler. Each density's integration
window is therefore tabulated once, in the variable w = logit(v) on a uniform grid of cells
``sd_w / CELLS_PER_SD`` wide (sd_w = sd / (m (1 - m)), the density's sd in w), as the
logarithms of both tails, L = log F and K = log(1 - F), with their first two derivatives in w
(from the density and its slope); a quintic Hermite interpolant in each cell reproduces L or K.
Logarithms keep the relative accuracy of small tail probabilities, and in w the power-law ends
of a Beta distribution function (F ~ v^a near 0) are straight lines, so the cells need not
shrink there.

Every cell is checked when the table is built: at its midpoint (where a Hermite interpolant's
error peaks) the interpolated L and K are compared with ``betainc`` / ``betaincc``; a cell whose
relative error in the tail probability exceeds ``CELL_TOL`` (near a log-singularity at 0 or 1,
say) is marked, and lookups in it, or outside the table, call SciPy's functions directly. So a
value is either SciPy's or within CELL_TOL of it, relative, in the smaller tail.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..numerics.jit import JIT
from ..numerics.special import betainc, betaincc, expit, lbeta

__all__ = [
    "build_tables",
    "log_tail_table",
    "log_tail_scipy",
    "expit",
    "CELLS_PER_SD",
    "CELL_TOL",
    "MAX_CELLS",
]


#: Cells per standard deviation of the density.
CELLS_PER_SD = 8.0
#: Most cells of one table.
MAX_CELLS = 600
#: Largest relative error of a tail probability at a cell midpoint for the cell to be used.
CELL_TOL = 1e-10

# columns of a table row: log F and its two derivatives, log(1 - F) and its two derivatives
_L, _L1, _L2, _K, _K1, _K2 = range(6)


@njit(**JIT)
def _node_row(a, b, lb, w, row):
    """L, dL/dw, d2L/dw2, K, dK/dw, d2K/dw2 at w = logit(v)."""
    v = expit(w)
    u = expit(-w)  # 1 - v, accurately
    F = betainc(a, b, v) if v <= 0.5 else betaincc(b, a, u)
    S = betaincc(a, b, v) if v <= 0.5 else betainc(b, a, u)
    # density in w: f_v(v) dv/dw = v^a (1 - v)^b / B(a, b); its log-slope in w
    lf = a * math.log(v) + b * math.log(u) - lb if v > 0.0 and u > 0.0 else -math.inf
    g1 = a * u - b * v
    f = math.exp(lf)
    if F > 0.0:
        r = f / F
        row[_L] = math.log(F)
        row[_L1] = r
        row[_L2] = r * g1 - r * r
    else:
        row[_L] = -math.inf
        row[_L1] = 0.0
        row[_L2] = 0.0
    if S > 0.0:
        r = f / S
        row[_K] = math.log(S)
        row[_K1] = -r
        row[_K2] = -r * g1 - r * r
    else:
        row[_K] = -math.inf
        row[_K1] = 0.0
        row[_K2] = 0.0


@njit(**JIT)
def _hermite5(y0, d0, s0, y1, d1, s1, h, t):
    """Evaluate the quintic Hermite interpolant on a cell of width h at fraction t.

    It is built from the values, first and second derivatives at both ends.
    """
    t2 = t * t
    t3 = t2 * t
    t4 = t3 * t
    t5 = t4 * t
    h00 = 1.0 - 10.0 * t3 + 15.0 * t4 - 6.0 * t5
    h01 = 10.0 * t3 - 15.0 * t4 + 6.0 * t5
    h10 = t - 6.0 * t3 + 8.0 * t4 - 3.0 * t5
    h11 = -4.0 * t3 + 7.0 * t4 - 3.0 * t5
    h20 = 0.5 * (t2 - 3.0 * t3 + 3.0 * t4 - t5)
    h21 = 0.5 * (t3 - 2.0 * t4 + t5)
    return y0 * h00 + y1 * h01 + h * (d0 * h10 + d1 * h11) + h * h * (s0 * h20 + s1 * h21)


@njit(**JIT)
def _interp(tab, off, k, h, t, col):
    r0 = off + k
    y0 = tab[r0, col]
    y1 = tab[r0 + 1, col]
    if y0 == -math.inf or y1 == -math.inf:
        return math.nan
    return _hermite5(
        y0, tab[r0, col + 1], tab[r0, col + 2], y1, tab[r0 + 1, col + 1], tab[r0 + 1, col + 2], h, t
    )


@njit(**JIT)
def _build_one(a, b, lo, hi, tab, ok, off, m):
    """Table of Beta(a, b) on [lo, hi] (in w = logit v) with m cells from row ``off``."""
    lb = lbeta(a, b)
    h = (hi - lo) / m
    for j in range(m + 1):
        _node_row(a, b, lb, lo + j * h if j < m else hi, tab[off + j])
    mid = np.empty(6)
    for k in range(m):
        _node_row(a, b, lb, lo + (k + 0.5) * h, mid)
        good = True
        for col in (_L, _K):
            exact = mid[col]
            if exact == -math.inf:
                continue
            approx = _interp(tab, off, k, h, 0.5, col)
            if not abs(approx - exact) <= CELL_TOL:
                good = False
        ok[off + k] = good


def build_tables(a: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """Tables of Beta(a_i, b_i) for v in [lo_i, hi_i] (0 < lo_i < hi_i < 1) for every i.

    Returns
    -------
    tab : (rows, 6) array of L, L', L'', K, K', K'' (derivatives in w = logit v) at the nodes
        of all tables, one after another;
    ok : (rows,) bool, whether the cell starting at that node may be interpolated;
    meta : (n, 2) int64 offset and number of cells of each table;
    wlim : (n, 2) the tables' ranges in w.
    """
    a, b, lo, hi = (np.asarray(v, dtype=np.float64) for v in (a, b, lo, hi))
    m = a / (a + b)
    sd_w = np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1.0))) / (m * (1.0 - m))
    tiny = 1e-300
    wlo = np.log(np.maximum(lo, tiny)) - np.log1p(-np.minimum(lo, 0.5))
    whi = np.log(np.maximum(hi, tiny)) - np.log(np.maximum(1.0 - hi, tiny))
    cells = np.clip(np.ceil(CELLS_PER_SD * (whi - wlo) / sd_w), 1, MAX_CELLS).astype(np.int64)
    offs = (np.cumsum(cells + 1) - (cells + 1)).astype(np.int64)
    rows = int(np.sum(cells + 1))
    tab = np.zeros((rows, 6))
    ok = np.zeros(rows, dtype=np.bool_)
    for i in range(a.size):
        _build_one(a[i], b[i], wlo[i], whi[i], tab, ok, offs[i], cells[i])
    return tab, ok, np.stack([offs, cells], axis=1), np.stack([wlo, whi], axis=1)


@njit(**JIT)
def log_tail_table(tab, ok, off, m, wlo, whi, w, upper):
    """Return log F (``upper`` False) or log(1 - F) at w = logit(v) from a table on [wlo, whi].

    The table has offset ``off`` and ``m`` cells; nan where the table does not cover w or its
    cell failed the check.
    """
    if w >= wlo and w <= whi and whi > wlo:
        h = (whi - wlo) / m
        x = (w - wlo) / h
        k = min(int(x), m - 1)
        if ok[off + k]:
            return _interp(tab, off, k, h, x - k, _K if upper else _L)
    return math.nan


@njit(**JIT)
def log_tail_scipy(a, b, v, upper):
    """Return log F(v) or log(1 - F(v)) of Beta(a, b) from SciPy.

    SciPy's ``betaincc`` costs about ten times its ``betainc`` (median 1.5 against 0.12
    microseconds over counts up to 200, up to 22 microseconds), so the upper tail is taken from
    ``betainc`` where that is exact: for v >= 1/2 as I_{1 - v}(b, a), 1 - v being exact in
    floating point there (Sterbenz); below, as 1 - I_v(a, b) when I_v(a, b) <= 1/2 (the
    result is then >= 1/2, so the subtraction loses nothing); else from ``betaincc``.
    """
    if not upper:
        p = betainc(a, b, v)
    elif v >= 0.5:
        p = betainc(b, a, 1.0 - v)
    else:
        q = betainc(a, b, v)
        p = 1.0 - q if q <= 0.5 else betaincc(a, b, v)
    if p > 0.0:
        return math.log(p)
    return -math.inf
