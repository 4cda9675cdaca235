"""Posteriors tabulated on a grid and sampled exactly from it (GDP's mu, one-run audits' eps).

Shared by :func:`bayes_dp.estimate_gdp` and :func:`bayes_dp.estimate_one_run`: a coarse grid
of the parameter refined where each likelihood is high, cells of the attack strength s of equal
prior mass, and independent draws from the tabulated posterior. A leaf of the package.
"""

from __future__ import annotations

import numpy as np

from bayes_dp.core.priors import Beta

#: Points of the coarse grid of mu, of each group's fine grid, and cells of the s grid.
GRID_COARSE = 400
GRID_FINE = 400
GRID_S = 100
#: A group's fine grid covers the in-shifts whose log marginal is within this of its maximum.
GRID_SPAN_LOG = 40.0


def refine_grid(coarse: np.ndarray, log_liks: list[np.ndarray]) -> np.ndarray:
    """Add to ``coarse`` a fine grid (``GRID_FINE`` cells) where each log likelihood is high.

    Each curve (values on ``coarse``) gets fine points over the coarse cells where it is within
    ``GRID_SPAN_LOG`` of its maximum, so that the posterior's peak is resolved however narrow.
    """
    pts = [coarse]
    for lz in log_liks:
        near = np.flatnonzero(lz >= np.max(lz) - GRID_SPAN_LOG)
        lo = coarse[max(near[0] - 1, 0)]
        hi = coarse[min(near[-1] + 1, coarse.size - 1)]
        pts.append(np.linspace(lo, hi, GRID_FINE + 1))
    return np.unique(np.concatenate(pts))


def sample_grid(grid, log_lik, prior, s, s_edges, n: int, rng):
    """Draw (theta, s) from a posterior tabulated on cells of theta x cells of s.

    ``log_lik`` (cells of theta, cells of s) is the log likelihood at the cells' midpoints
    (theta) and at the prior-median of each s cell. A cell is drawn with probability
    proportional to prior x likelihood x width (s cells carry equal prior mass), then theta
    uniformly in its cell and s from the prior restricted to its cell. Returns theta, s and
    the flat index of each draw's cell.
    """
    from scipy import stats

    mid = 0.5 * (grid[1:] + grid[:-1])
    width = np.diff(grid)
    with np.errstate(divide="ignore"):
        logp = log_lik + (prior.logpdf(mid) + np.log(width))[:, None]
    prob = np.exp(logp - np.max(logp))
    prob /= prob.sum()
    cell = rng.choice(prob.size, size=n, p=prob.ravel())
    i_t, i_s = np.unravel_index(cell, prob.shape)
    theta = grid[i_t] + rng.random(n) * width[i_t]
    if s_edges is None:
        return theta, np.full(n, float(s)), cell
    u = s_edges[i_s] + rng.random(n) * (s_edges[i_s + 1] - s_edges[i_s])
    return theta, stats.beta.ppf(u, s.a, s.b), cell


def s_cells(s):
    """Return the s of each cell (prior median) and the cells' edges in prior probability.

    A fixed s is one cell with no edges (None).
    """
    if isinstance(s, Beta):
        from scipy import stats

        p = np.linspace(0.0, 1.0, GRID_S + 1)
        mid = stats.beta.ppf(0.5 * (p[1:] + p[:-1]), s.a, s.b)
        return mid, p
    return np.array([float(s)]), None
