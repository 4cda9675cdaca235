"""The kernel density of the posterior figures (robust Silverman bandwidth, log scale for eps)."""

from __future__ import annotations

import numpy as np

#: At most this many draws (every k-th) enter the kernel density.
KDE_MAX_DRAWS = 20_000
#: The density of a positive variable (eps) is estimated on the log scale when the
#: ``LOG_KDE_QUANTILE`` quantile of its draws exceeds ``LOG_KDE_RATIO`` times their median.
LOG_KDE_QUANTILE = 0.01
LOG_KDE_RATIO = 0.1


def _bandwidth(ref: np.ndarray) -> float:
    """Silverman's robust rule of thumb, 0.9 min(sd, IQR / 1.34) n^(-1/5).

    The IQR term keeps a long tail (a few far draws inflate the sd) from over-smoothing the
    peak; with a degenerate IQR (over half the draws equal) the sd is used alone.
    """
    sd = float(np.std(ref, ddof=1))
    q25, q75 = np.quantile(ref, [0.25, 0.75])
    spread = min(sd, (q75 - q25) / 1.34) if q75 > q25 else sd
    return 0.9 * spread * ref.size ** (-0.2)


def _kde(
    x: np.ndarray,
    grid: np.ndarray,
    bounds: tuple[float, float] = (-np.inf, np.inf),
    bw_draws: np.ndarray | None = None,
    adaptive: bool = False,
) -> np.ndarray:
    """Gaussian kernel density of the draws ``x`` on ``grid``, respecting the support bounds.

    A plain kernel density spreads the mass of draws near a bound of the support across it, so
    inside the support it falls to about half the true density at the bound (the curve of s
    dipped towards 0 at s = 0 and 1). On a bounded support (s, tau, rho) the draws within 8
    bandwidths of each finite bound L are reflected to ``2 L - x`` (Silverman 1986, Sec. 3.10);
    the estimate then integrates to 1 over the support, is unbiased at a bound where the density
    is flat, and has bias O(h f'(L)) there otherwise (h the bandwidth).

    On (0, inf) (eps) the density is estimated on log x, with Abramson's adaptive bandwidths
    (narrow where the draws are dense, wide where they thin out), and transformed back,
    f(x) = g(log x) / x, when the draws stay away from 0 (their ``LOG_KDE_QUANTILE`` quantile
    above ``LOG_KDE_RATIO`` times their median). A posterior of eps is then sharp at its lower
    end and skewed with a long upper tail; one bandwidth on the eps scale is either too wide for
    the peak (it was: a curve peaking at ~0.4 where the histogram reached 0.76) or too narrow for
    the tail, while on the log scale the spread is nearly even, so the kernel widens with eps as
    the draws thin out. When the draws reach down to 0 (a posterior with its mode at 0, e.g.
    HalfNormal-like from weak attacks) the log scale would stretch the few draws near 0 over an
    unbounded axis and the estimate there would be noise, so the curve is then reflected at 0
    like the bounded variables.

    The bandwidth is Silverman's robust rule (:func:`_bandwidth`) on the draws ``bw_draws``
    (default ``x``; on the log scale for eps): the eps plot passes only the draws on its axis, so
    that the far tail does not over-smooth the curve, while the kernel sum runs over all draws,
    so that the curve does not dip at the axis cut either.
    """
    x = np.asarray(x, dtype=np.float64)
    x = x[:: max(1, x.size // KDE_MAX_DRAWS)]
    ref = x if bw_draws is None else np.asarray(bw_draws, dtype=np.float64)
    ref = ref[:: max(1, ref.size // KDE_MAX_DRAWS)]
    lo, hi = bounds
    grid = np.asarray(grid, dtype=np.float64)
    log_scale = (
        lo == 0.0
        and hi == np.inf
        and np.all(x > 0)
        and np.all(ref > 0)
        and np.quantile(x, LOG_KDE_QUANTILE) > LOG_KDE_RATIO * np.median(x)
    )
    if log_scale:
        inside = grid > 0
        dens = np.zeros(grid.size)
        g = _kde(np.log(x), np.log(grid[inside]), bw_draws=np.log(ref), adaptive=True)
        dens[inside] = g / grid[inside]
        return dens
    h = _bandwidth(ref)
    if not h > 0:
        raise ValueError(f"the draws must not all be equal; found {x.size} draws of {x[0]}")
    widths = np.full(x.size, h)
    if adaptive:
        # Abramson's adaptive bandwidths: h_i = h (f(x_i) / geometric mean of f)^(-1/2), from
        # the fixed-bandwidth estimate f, so that kernels are narrow at a sharp peak and wide in
        # a thin tail
        pg = np.linspace(x.min() - 3 * h, x.max() + 3 * h, 512)
        pilot = _kernel_sum(x, widths, pg, lo, hi)
        f = np.maximum(np.interp(x, pg, pilot), 1e-12 * pilot.max())
        widths = h * np.sqrt(np.exp(np.mean(np.log(f))) / f)
    dens = _kernel_sum(x, widths, grid, lo, hi)
    inside = (grid >= lo) & (grid <= hi)
    return np.where(inside, dens, 0.0)


def _kernel_sum(x, h, grid, lo, hi) -> np.ndarray:
    """Mean over the draws ``x`` of normal kernels with widths ``h``, reflected at finite bounds."""
    centres, widths = [x], [h]
    if np.isfinite(lo):
        near = x < lo + 8 * h
        centres.append(2 * lo - x[near])
        widths.append(h[near])
    if np.isfinite(hi):
        near = x > hi - 8 * h
        centres.append(2 * hi - x[near])
        widths.append(h[near])
    c, w = np.concatenate(centres), np.concatenate(widths)
    dens = np.zeros(grid.size)
    for i in range(0, grid.size, 50):  # 50 grid points at a time: bounded memory
        u = (grid[i : i + 50, None] - c[None, :]) / w[None, :]
        dens[i : i + 50] = (np.exp(-0.5 * u * u) / w[None, :]).sum(axis=1)
    return dens / (x.size * np.sqrt(2 * np.pi))
