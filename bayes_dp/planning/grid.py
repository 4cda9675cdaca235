"""The planner's deterministic grid posterior of one simulated audit (:func:`grid_posterior`).

The exact likelihood of the count model (the sampler's own kernel,
:func:`samplers.exact.grid.log_lik_points`) on a grid over (log(s eps), logit s), zoomed onto
the mass and refined where it is sharp; ``docs/validation/planning.md`` has the method and its
checks.
"""

from __future__ import annotations

import math
from collections import namedtuple
from dataclasses import dataclass

import numpy as np

from bayes_dp.core.observations import AttackCounts
from bayes_dp.core.priors import Prior

#: Grid points this far (in log density) below the largest one bound the next, finer box.
GAP = 20.0


#: Nodes per coordinate of the final grid (before its refinement).
FINE = 12


MAX_ROUNDS = 6


#: The final grid's intervals are halved (at most MAX_ROUNDS times) where neighbouring nodes
#: differ by more than ``step``, one of them within ``sharp_gap`` of the largest, up to
#: ``max_nodes`` a coordinate; the zoom makes at most ``passes`` passes of ``coarse`` nodes per
#: coordinate; ``coords`` (s free): "uv" = (log(s eps), logit s), "zv" = (log eps, logit s).
#: With at most FEW_BASES distinct bases an evaluation is cheap and the posterior broad, its
#: mass reaching s -> 0 with a sharp edge eps >= const (an axis in (log eps, logit s), a
#: diagonal in (u, v)) and a thin wedge as s -> 1 that a zoom of 12 nodes lost: FEW applies;
#: else MANY, whose ``step`` is the largest tried that kept the plans' quantiles within one
#: probability point of the quadrature reference (docs/validation/planning.md has the checks and the
#: CPU time of each step tried).
Settings = namedtuple("Settings", ["step", "max_nodes", "sharp_gap", "passes", "coarse", "coords"])


FEW_BASES = 4


FEW = Settings(step=1.0, max_nodes=64, sharp_gap=8.0, passes=6, coarse=(12, 20), coords="zv")


MANY = Settings(step=2.5, max_nodes=40, sharp_gap=6.0, passes=3, coarse=(12,), coords="uv")


#: A grid in (u, v) whose 5% point of s is below this is computed again in (z0, v), and the
#: grid with the larger integral is kept (docs/validation/planning.md, "Few bases").
S_LOW = 0.1


#: Rows of grid nodes at the ends of an axis holding together less than this share of the
#: mass are cut from the box.
TRIM = 1e-7


#: Outer limits of the grid: u = log(s eps), v = logit s (s free), z0 = log eps (s fixed).
U_BOX = (-7.0, 8.5)


V_BOX = (-9.0, 9.0)


Z0_BOX = (-7.0, 9.0)


#: Points per interval of the final grid (and coordinate) at which its spline is read.
READ = 4


@dataclass(frozen=True)
class _GridPosterior:
    """Posterior of eps (and of s when free) as weighted points, sorted, from the grid."""

    log_eps: np.ndarray
    cdf: np.ndarray  # cumulative weights at the points (normalised, last = 1)
    logit_s: np.ndarray | None = None  # s free: the same masses at their logit s, sorted
    s_cdf: np.ndarray | None = None
    coords: str = "z0"  # the grid's coordinates: "uv", "zv" (s free) or "z0" (s fixed)
    log_z: float = math.nan  # log of the grid's integral of the (unnormalised) posterior

    def quantile(self, q) -> np.ndarray:
        return np.exp(np.interp(q, self.cdf, self.log_eps))

    def s_quantile(self, q) -> np.ndarray:
        """Quantiles of s (s free only)."""
        from scipy.special import expit

        return expit(np.interp(q, self.s_cdf, self.logit_s))

    def prob_above(self, eps: float) -> float:
        return float(1.0 - np.interp(math.log(eps), self.log_eps, self.cdf, left=0.0, right=1.0))


def _kernel_model(counts: AttackCounts, delta: float, prior: Prior, likelihood: str, fix):
    """Build the exact sampler's model of one group of ``counts`` (tau, rho fixed by ``fix``)."""
    from bayes_dp.core.evidence import Evidence
    from bayes_dp.inference.model import Model
    from bayes_dp.inference.runners import kernel_model

    group = Evidence(counts, likelihood=likelihood, fix=fix or None)
    model, corr, _, _ = kernel_model(Model.build(group, delta=delta, prior=prior))
    return model, corr


def _log_prior_fn(prior: Prior):
    """Return f(z0, s): the log prior density of (log eps, logit s), Jacobians included.

    The Jacobians are eps and s (1 - s) (only eps when s is fixed, then ``s`` is ignored). In
    (u, v) = (log(s eps), logit s) the density is the same: (z0, v) -> (u, v) has Jacobian 1.
    """
    d_eps = prior.eps._dist  # frozen once: freezing a scipy distribution costs ~1 ms
    d_s = None if prior.s_fixed else prior.s._dist

    def f(z0, s):
        with np.errstate(divide="ignore", invalid="ignore"):
            lp = d_eps.logpdf(np.exp(z0)) + z0
            if d_s is not None:
                lp = lp + d_s.logpdf(s) + np.log(s) + np.log1p(-s)
        return np.where(np.isfinite(lp), lp, -np.inf)

    return f


def _log_post(model, corr, log_prior, s_fixed, axes, stop, lp=None, coords="uv") -> np.ndarray:
    """Log posterior (up to a constant) on the tensor grid of ``axes``.

    ``axes``: (u, v) with u = log(s eps), v = logit s (``coords`` "uv") or (z0, v) with z0 =
    log eps (``coords`` "zv") when s is free (``s_fixed`` None), (z0,) when it is fixed. Entries
    of ``lp`` that are not nan are kept (points already computed, or filled in by
    :func:`_refine`).
    """
    from scipy.special import expit

    from samplers.exact.grid import log_lik_points

    mesh = np.meshgrid(*axes, indexing="ij")
    if s_fixed is None:
        s = expit(mesh[1])
        z0 = mesh[0] - np.log(s) if coords == "uv" else mesh[0]
    else:
        z0 = mesh[0]
        s = np.full(z0.shape, s_fixed)
    out = np.full(z0.shape, np.nan) if lp is None else lp
    todo = np.isnan(out) & (z0 >= Z0_BOX[0]) & (z0 <= Z0_BOX[1])
    out[np.isnan(out) & ~todo] = -np.inf
    ll = np.empty(int(todo.sum()))
    if not log_lik_points(model, corr, np.exp(z0[todo]), s[todo], ll, stop):
        raise KeyboardInterrupt
    out[todo] = ll + log_prior(z0[todo], s[todo])
    return out


def _zoom(lp, axes, box, outer, top, mode) -> tuple[float, ...]:
    """Return the next box: around the points within GAP of ``top``, a spacing wider.

    The box holds ``mode`` (the optimiser's best point, of log density ``top``) a spacing
    inside. A side whose outermost row of nodes holds such a point moves out by half the box's
    width instead (the mass may go on beyond it), up to the outer limits. Then each side moves
    in past the rows of nodes that hold together less than TRIM of the mass (trapezoid weights
    on the grid; a long flat tail far below the peak), never past the mode.
    """
    keep = lp >= top - GAP
    w = np.exp(np.where(keep, lp - top, -np.inf))
    new = []
    for a, x in enumerate(axes):
        other = tuple(b for b in range(len(axes)) if b != a)
        k = keep.any(axis=other) if other else keep
        idx = np.flatnonzero(k)
        h, half = x[1] - x[0], 0.5 * (x[-1] - x[0])
        lo = hi = mode[a]  # no node near the top: a peak between nodes, around the mode
        if idx.size:
            lo = box[2 * a] - half if idx[0] == 0 else x[idx[0]] - h
            hi = box[2 * a + 1] + half if idx[-1] == x.size - 1 else x[idx[-1]] + h
        mass = w.sum(axis=other) if other else w
        if mass.sum() > 0:
            cum = np.cumsum(mass) / mass.sum()
            if cum[0] < TRIM:  # rows before the first that reaches TRIM carry (almost) nothing
                lo = max(lo, x[np.flatnonzero(cum >= TRIM)[0] - 1])
            rcum = np.cumsum(mass[::-1])[::-1] / mass.sum()
            if rcum[-1] < TRIM:
                hi = min(hi, x[np.flatnonzero(rcum >= TRIM)[-1] + 1])
        lo, hi = min(lo, mode[a] - h), max(hi, mode[a] + h)
        new += [max(lo, outer[2 * a]), min(hi, outer[2 * a + 1])]
    return tuple(new)


def _mode(log_post, start, outer) -> tuple[np.ndarray, float]:
    """Maximise the log posterior from ``start`` (Nelder-Mead); return the point and value."""
    from scipy.optimize import minimize

    lo, hi = np.array(outer[0::2]), np.array(outer[1::2])

    def f(x):
        x = np.clip(x, lo, hi)
        v = log_post([np.array([c]) for c in x]).item()
        return -v if np.isfinite(v) else 1e300

    res = minimize(
        f,
        start,
        method="Nelder-Mead",
        options={
            "xatol": 1e-3,
            "fatol": 1e-3,
            "maxfev": 300,
            "initial_simplex": start + np.vstack([np.zeros(len(start)), 0.3 * np.eye(len(start))]),
        },
    )
    x = np.clip(res.x, lo, hi)
    return x, -f(x)


def _refine(lp, axes, a, step, max_nodes, sharp_gap) -> tuple[np.ndarray, np.ndarray]:
    """Halve the intervals of axis ``a`` whose neighbouring nodes near the top differ by > step.

    Returns the new axis and the grown grid, nan at the new points that need computing. A new
    point whose two neighbours along ``a`` are both more than GAP below the top is filled with
    the larger of them instead (the read-out cuts the density at 2 GAP below the top anyway).
    """
    x = axes[a]
    top = np.max(lp)
    lo = np.take(lp, np.arange(x.size - 1), axis=a)
    hi = np.take(lp, np.arange(1, x.size), axis=a)
    with np.errstate(invalid="ignore"):
        jump = (np.abs(hi - lo) > step) & (np.maximum(hi, lo) >= top - sharp_gap)
    other = tuple(b for b in range(lp.ndim) if b != a)
    cells = np.flatnonzero(jump.any(axis=other) if other else jump)[: max(max_nodes - x.size, 0)]
    if not cells.size:
        return x, lp
    new_x = np.sort(np.concatenate([x, 0.5 * (x[cells] + x[cells + 1])]))
    pos = np.searchsorted(new_x, x)
    grown = np.full(lp.shape[:a] + (new_x.size,) + lp.shape[a + 1 :], np.nan)
    index = [slice(None)] * lp.ndim
    index[a] = pos
    grown[tuple(index)] = lp
    index[a] = pos[cells] + 1  # the new nodes: right after their interval's left end
    near = np.maximum(np.take(lo, cells, axis=a), np.take(hi, cells, axis=a))
    grown[tuple(index)] = np.where(near < top - GAP, near, np.nan)
    return new_x, grown


def _read_points(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """READ points in each interval of the nodes ``x`` (sub-cell mid-points) and their widths."""
    h = np.diff(x) / READ
    pts = x[:-1, None] + h[:, None] * (np.arange(READ) + 0.5)[None, :]
    return pts.ravel(), np.repeat(h, READ)


def _grid_once(model, corr, log_prior, s_fixed, stop, cfg, coarse, coords) -> _GridPosterior:
    """One zoom (``coarse`` nodes per coordinate), grid and refinement in ``coords``."""
    from scipy.interpolate import CubicSpline, RectBivariateSpline
    from scipy.special import expit

    def log_post(axes, lp=None):
        return _log_post(model, corr, log_prior, s_fixed, axes, stop, lp, coords)

    outer = {"z0": Z0_BOX, "uv": U_BOX + V_BOX, "zv": Z0_BOX + V_BOX}[coords]
    n_ax = len(outer) // 2
    box = outer
    mode, top = None, -np.inf
    for it in range(cfg.passes):
        axes = [np.linspace(box[2 * a], box[2 * a + 1], coarse) for a in range(n_ax)]
        lp = log_post(axes)
        if not np.isfinite(np.max(lp)):
            raise FloatingPointError("the grid posterior has no point of positive density")
        if mode is None or np.max(lp) > top:
            best = np.array(
                [x[i] for x, i in zip(axes, np.unravel_index(np.argmax(lp), lp.shape), strict=True)]
            )
            mode, top = _mode(log_post, best, outer)
            top = max(top, np.max(lp))
        new = _zoom(lp, axes, box, outer, top, mode)
        moved = max(
            abs(n - b) / (axes[i // 2][1] - axes[i // 2][0])
            for i, (n, b) in enumerate(zip(new, box, strict=True))
        )
        box = new
        if it > 0 and moved <= 1.0:  # no side moved by more than one spacing
            break
    axes = [np.linspace(box[2 * a], box[2 * a + 1], FINE) for a in range(n_ax)]
    lp = log_post(axes)
    for _ in range(MAX_ROUNDS):
        sizes = [x.size for x in axes]
        for a in range(n_ax):
            axes[a], lp = _refine(lp, axes, a, cfg.step, cfg.max_nodes, cfg.sharp_gap)
            if np.isnan(lp).any():
                lp = log_post(axes, lp)
        if sizes == [x.size for x in axes]:
            break
    top = np.max(lp)
    lp = np.maximum(np.where(np.isfinite(lp), lp, -np.inf), top - 2 * GAP) - top
    # the spline may ring next to a sharp peak: never above the largest node of its cell
    cell_max = lp
    for a in range(n_ax):
        n = lp.shape[a]
        cell_max = np.maximum(
            np.take(cell_max, np.arange(n - 1), axis=a),
            np.take(cell_max, np.arange(1, n), axis=a),
        )
    cell_max = np.repeat(cell_max, READ, axis=0)
    if n_ax == 1:
        log_eps, w = _read_points(axes[0])
        dens = np.minimum(CubicSpline(axes[0], lp)(log_eps), cell_max)
        w = w * np.exp(dens)
    else:
        (u, wu), (v, wv) = _read_points(axes[0]), _read_points(axes[1])
        dens = RectBivariateSpline(axes[0], axes[1], lp, kx=3, ky=3)(u, v)
        dens = np.minimum(dens, np.repeat(cell_max, READ, axis=1))
        w = np.exp(dens) * wu[:, None] * wv[None, :]
        log_eps = u[:, None] - (np.log(expit(v))[None, :] if coords == "uv" else 0.0)
        logit_s, s_cdf = _cdf_points(v, w.sum(axis=0))  # v is sorted: the s marginal
        log_eps, cdf = _cdf_points(np.broadcast_to(log_eps, w.shape).ravel(), w.ravel())
        return _GridPosterior(log_eps, cdf, logit_s, s_cdf, coords, top + math.log(w.sum()))
    log_eps, cdf = _cdf_points(log_eps, w)
    return _GridPosterior(log_eps, cdf, log_z=top + math.log(w.sum()))


def grid_posterior(
    counts: AttackCounts,
    delta: float,
    prior: Prior,
    stop=None,
    *,
    likelihood: str = "binomial",
    fix: dict | None = None,
    coords: str | None = None,
) -> _GridPosterior:
    """Posterior of eps of ``counts`` on a deterministic grid (private; see module doc).

    ``likelihood`` and ``fix`` as in :class:`~bayes_dp.Evidence`: the parameters of a
    correlated likelihood must all be fixed (known). ``coords`` ("uv" or "zv", s free) overrides
    the coordinates of the settings (for checks).

    Passes of ``coarse`` nodes per coordinate zoom from the outer box to the points within GAP of
    the largest (:func:`_zoom`) until no side moves by more than a spacing; then a grid of FINE
    nodes per coordinate on that box is refined where neighbouring nodes differ by more than a
    step (:data:`FEW`, :data:`MANY`; :func:`_refine`), and the log density is read between the
    nodes through a cubic spline, READ points per interval and coordinate.
    """
    stop = np.zeros(1, dtype=np.int64) if stop is None else stop
    model, corr = _kernel_model(counts, delta, prior, likelihood, fix)
    log_prior = _log_prior_fn(prior)
    s_fixed = float(prior.s) if prior.s_fixed else None

    distinct = model.b_grp.size + (0 if corr is None else corr.c_grp.size)
    cfg = FEW if distinct <= FEW_BASES else MANY
    forced = coords is not None
    coords = "z0" if s_fixed is not None else coords or cfg.coords

    # the grid with the larger integral missed less of the mass (a thin region of high
    # density between nodes); see docs/validation/planning.md
    args = (model, corr, log_prior, s_fixed, stop, cfg)
    best = max((_grid_once(*args, c, coords) for c in cfg.coarse), key=lambda g: g.log_z)
    if coords == "uv" and not forced and best.s_quantile(0.05) < S_LOW:
        # mass near s = 0: the edge eps >= const is a diagonal in (u, v); try (z0, v) too
        best = max(best, _grid_once(*args, cfg.coarse[0], "zv"), key=lambda g: g.log_z)
    return best


def _cdf_points(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort the points ``x`` of masses ``w``; return them and the CDF at each (mid-points)."""
    order = np.argsort(x, kind="stable")
    x, w = x[order], w[order]
    cdf = np.cumsum(w)
    return x, (cdf - 0.5 * w) / cdf[-1]
