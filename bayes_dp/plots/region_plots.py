"""Figures of the privacy region R(eps, delta) and of the attack's error rates.

:func:`plot_region` draws the region of the posterior's eps with the observed error rates and
their Clopper-Pearson boxes (the paper's Fig. 1/3, left); :func:`plot_error_curves` the error
counts of an attack over target false-positive rates (Fig. 4, top).
"""

from __future__ import annotations

import numpy as np

from bayes_dp.core.observations import AttackCounts
from bayes_dp.core.region import (
    clopper_pearson_interval,
    largest_classical_epsilon,
)
from bayes_dp.core.validation import (
    as_generator,
    check_delta,
    check_positive_int,
    check_real,
)
from bayes_dp.plots.style import (
    _axes,
    _check_post,
    posterior_counts,
)
from bayes_dp.results.posterior import Posterior


def _both(ax, grid, eps, delta, **kw):
    # lower-left boundary of R and its reflection through (1/2, 1/2) (upper-right boundary)
    y = _boundary(eps, delta, grid)
    ax.plot(grid, y, **kw)
    kw.pop("label", None)
    ax.plot(1.0 - grid, 1.0 - y, **kw)


def _boundary(eps: float, delta: float, grid: np.ndarray) -> np.ndarray:
    # lower-left boundary of R(eps, delta): the larger of the two lower constraints
    e = np.exp(eps)
    return np.clip(np.maximum(1 - delta - e * grid, (1 - delta - grid) / e), 0.0, 1.0)


def plot_region(
    posterior: Posterior | None = None,
    counts: AttackCounts | list | None = None,
    *,
    delta: float | None = None,
    eps: float | list | None = None,
    n_draws: int = 40,
    confidence: float | None = 0.95,
    zoom: bool = True,
    inset: bool | None = None,
    seed=0,
    ax=None,
):
    """Observed error rates of each challenge base over the privacy region R(eps, delta).

    The paper's Fig. 1 and Fig. 3 (left): each base's observed (FPR, FNR) = (fp/n_neg, fn/n_pos)
    as a point, with Clopper-Pearson intervals at ``confidence`` (per rate, not simultaneous);
    grey curves are the lower-left boundary of R(eps, delta) for ``n_draws`` posterior draws of
    eps (their density shows where the posterior puts the boundary), the bold curve the
    boundary at the posterior median, and the dotted curve that at the classical estimate.
    Dashed curves are the inner edge of the band R_s that the attack strength s allows (the
    boundary at s * eps, s * delta, with eps and s at their posterior medians): black for the
    shared strength ``s``, and for each group with its own strength ``s_<name>`` one in that
    group's colour, labelled with its name.
    Points below a boundary (or above its mirror image in the upper right, for attacks worse
    than guessing) are error pairs that a test of that eps could not reach.

    Parameters
    ----------
    posterior : Posterior, optional
        Gives the eps draws, delta, and (without ``counts``) the groups.
    counts : AttackCounts or list of (name, AttackCounts), optional
        Counts to plot; default: all groups recorded in ``posterior``.
    delta : float, optional
        Needed without ``posterior``.
    eps : float or list of float, optional
        Boundaries to draw without a posterior.
    n_draws : int
        Number of posterior draws of eps whose boundaries are drawn.
    confidence : float or None
        Level of the per-rate error bars; None draws none.
    zoom : bool
        Show only the lower-left part of the square that holds the points (the boundaries of
        interest lie there); False shows the whole unit square.
    inset : bool, optional
        Add an inset that magnifies the observed rates (with their bars) and the boundaries
        just below them, where the gap between points and boundary shows what the data say;
        it sits in the upper right of the axes, and a frame marks the part magnified. Default
        (None): when the rates span less than ``INSET_BELOW`` (40%) of the axes' width or
        height.
    seed : int or numpy.random.Generator
        Chooses the posterior draws shown.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    Without a posterior: the counts over the region at given values of eps.

    >>> from bayes_dp import AttackCounts
    >>> counts = AttackCounts(fp=[40, 100], n_neg=1000, fn=[250, 100], n_pos=1000)
    >>> ax = plot_region(counts=counts, delta=1e-5, eps=[2.0, 3.0])
    >>> ax.get_xlabel()
    'false-positive rate α (type I error)'
    """
    ax = _axes(ax, figsize=(9.5, 5.0))
    if posterior is not None:
        _check_post(posterior)
        if delta is None:
            delta = posterior.settings.get("delta")
    if delta is None:
        raise ValueError("`delta` must be given when `posterior` is None; found None")
    delta = check_delta(delta)
    if counts is None:
        if posterior is None:
            raise ValueError("give `posterior` or `counts`; found neither")
        groups = posterior_counts(posterior)
    elif isinstance(counts, AttackCounts):
        groups = [("observed", counts)]
    else:
        groups = list(counts)
    grid = np.linspace(0.0, 1.0 - delta, 400)
    if posterior is not None:
        n_draws = check_positive_int("n_draws", n_draws)
        pool = posterior.draws("eps").ravel()
        idx = as_generator(seed).choice(pool.size, size=min(n_draws, pool.size), replace=False)
        med = posterior.quantile(0.5, "eps")
    if confidence is not None:
        a = 1 - check_real("confidence", confidence, low=0, high=1, low_open=True, high_open=True)
    allc = AttackCounts.concat([c for _, c in groups]) if groups else None

    def draw(ax) -> None:
        """Draw the boundaries and the points on ``ax`` (the axes, or the inset)."""
        if posterior is not None:
            for k, e in enumerate(pool[idx]):
                label = f"boundary of R(ε, δ), {len(idx)} posterior draws" if k == 0 else None
                _both(ax, grid, e, delta, color="0.5", alpha=0.25, lw=1, label=label)
            label = f"posterior median ε = {med:.3g}"
            _both(ax, grid, med, delta, color="k", lw=2, label=label)
            if "s" in posterior.var_names:
                s_med = posterior.quantile(0.5, "s")
                label = f"inner edge of R_s at median s = {s_med:.2f} (boundary at s·ε)"
                _both(ax, grid, s_med * med, s_med * delta, color="k", ls="--", lw=1, label=label)
            # groups with their own strength: each one's inner edge in that group's colour
            shown = [name for name, _ in groups]
            own = [v[2:] for v in posterior.var_names if v.startswith("s_")]
            for k, name in enumerate(own):
                j = shown.index(name) if name in shown else len(shown) + k
                s_med = posterior.quantile(0.5, f"s_{name}")
                label = f"inner edge of R_s for {name}: median s_{name} = {s_med:.2f} (at s·ε)"
                kw = {"color": f"C{j}", "ls": "--", "lw": 1.3, "label": label}
                _both(ax, grid, s_med * med, s_med * delta, **kw)
        for e in np.atleast_1d(eps if eps is not None else []):
            _both(ax, grid, float(e), delta, color="k", lw=1.5, label=f"ε = {e:.3g}")
        if allc is not None:
            point = largest_classical_epsilon(allc, delta)
            if np.isfinite(point):
                label = f"classical estimate ε = {point:.3g}"
                _both(ax, grid, point, delta, color="C3", ls=":", lw=1.5, label=label)
        for j, (name, c) in enumerate(groups):
            # one group with the default name ("counts"): no name to show
            label = "observed rates" + (f": {name}" if len(groups) > 1 or name != "counts" else "")
            kw = {"fmt": "o", "ms": 5, "color": f"C{j}", "label": label}
            if confidence is not None:
                lo_x, hi_x = clopper_pearson_interval(c.fp, c.n_neg, 1 - a)
                lo_y, hi_y = clopper_pearson_interval(c.fn, c.n_pos, 1 - a)
                kw["xerr"] = np.vstack([c.fpr - lo_x, hi_x - c.fpr])
                kw["yerr"] = np.vstack([c.fnr - lo_y, hi_y - c.fnr])
                kw["elinewidth"] = 0.8
                kw["capsize"] = 2
                kw["label"] += f" ({100 * (1 - a):g}% Clopper-Pearson bars)"
            ax.errorbar(c.fpr, c.fnr, **kw)

    draw(ax)
    ax.plot([0, 1], [1, 0], color="0.7", lw=0.8, ls="--", label="random guessing (FPR + FNR = 1)")
    lim = 1.0
    if zoom and allc is not None:
        top = float(max(np.max(allc.fpr + allc.fnr), 0.3))
        lim = min(1.0, 1.15 * top)
    ax.set_xlim(0, lim)
    ax.set_ylim(0, lim)
    ax.set_aspect("equal")
    ax.set_xlabel("false-positive rate α (type I error)")
    ax.set_ylabel("false-negative rate β (type II error)")
    ax.set_title(f"Observed error rates and the privacy region (δ = {delta:g})")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0))
    if allc is not None:
        box = _inset_box(allc, confidence, grid, delta, med if posterior is not None else eps)
        small = max(box[1] - box[0], box[3] - box[2]) < INSET_BELOW * lim
        if inset or (inset is None and small):
            # the corner (upper right, lower right, upper left) that hides fewest points
            fx, fy = allc.fpr / lim, allc.fnr / lim
            corners = [(0.52, 0.52), (0.52, 0.04), (0.04, 0.52)]
            hidden = [
                np.sum((fx > x) & (fx < x + 0.46) & (fy > y) & (fy < y + 0.46)) for x, y in corners
            ]
            x, y = corners[int(np.argmin(hidden))]
            ins = ax.inset_axes([x, y, 0.46, 0.46])
            draw(ins)
            ins.set_xlim(box[0], box[1])
            ins.set_ylim(box[2], box[3])
            ins.tick_params(labelsize="x-small")
            ax.indicate_inset_zoom(ins, edgecolor="0.3")
    return ax


#: :func:`plot_region` adds its inset by default when the observed rates span less than this
#: fraction of the axes' width or height.
INSET_BELOW = 0.4


def _inset_box(allc, confidence, grid, delta, eps) -> tuple[float, float, float, float]:
    """Limits (x0, x1, y0, y1) of the inset: the rates with their bars and the boundary by them.

    The box holds every point with its Clopper-Pearson bars and, for each point, the nearest
    point of the boundary of R at ``eps`` (the posterior median, or the smallest eps given)
    straight to its left or straight below it, whichever is closer, so that the gap between the
    rates and the boundary shows; 8% margins on each side.
    """
    if confidence is not None:
        lo_x, hi_x = clopper_pearson_interval(allc.fp, allc.n_neg, confidence)
        lo_y, hi_y = clopper_pearson_interval(allc.fn, allc.n_pos, confidence)
    else:
        lo_x, hi_x, lo_y, hi_y = allc.fpr, allc.fpr, allc.fnr, allc.fnr
    x0, x1 = float(np.min(lo_x)), float(np.max(hi_x))
    y0, y1 = float(np.min(lo_y)), float(np.max(hi_y))
    e = np.atleast_1d(eps if eps is not None else [])
    if e.size:
        # R is symmetric in (alpha, beta): the boundary's alpha at height beta is
        # _boundary(eps, delta, beta)
        below = _boundary(float(np.min(e)), delta, allc.fpr)  # boundary straight below
        left = _boundary(float(np.min(e)), delta, allc.fnr)  # boundary straight to the left
        go_left = allc.fpr - left < allc.fnr - below
        x0 = min(x0, float(np.min(left[go_left], initial=x0)))
        y0 = min(y0, float(np.min(below[~go_left], initial=y0)))
    mx, my = 0.08 * max(x1 - x0, 1e-3), 0.08 * max(y1 - y0, 1e-3)
    return max(0.0, x0 - mx), x1 + mx, max(0.0, y0 - my), y1 + my


def plot_error_curves(alphas, fp, fn, n, *, n_pos=None, highlight=None, ax=None):
    """Error rates of an attack over its target type I error, one curve per challenge base.

    The paper's Fig. 4 (top): for each base i and each target level alpha*, the point
    (fp[i, j] / n, fn[i, j] / n_pos) of the attack run at ``alphas[j]``; points of one base are
    joined by a line, coloured by base, and the points at ``highlight`` (the level fed to the
    estimator) are marked.

    Parameters
    ----------
    alphas : array_like, shape (m,)
        Target type I errors alpha* of the attack.
    fp, fn : array_like of int, shape (n_bases, m)
        False positives and false negatives of base i at level ``alphas[j]``.
    n : int or array_like of int, shape (n_bases,)
        H0 challenges per base (and H1 challenges unless ``n_pos`` is given).
    n_pos : int or array_like, optional
    highlight : float, optional
        A value of ``alphas`` to mark.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _axes(ax)
    alphas = np.asarray(alphas, dtype=np.float64)
    fp = np.atleast_2d(np.asarray(fp, dtype=np.float64))
    fn = np.atleast_2d(np.asarray(fn, dtype=np.float64))
    if alphas.ndim != 1:
        raise ValueError(f"`alphas` must be 1-D; found shape {alphas.shape}")
    for name, arr in (("fp", fp), ("fn", fn)):
        if arr.ndim != 2 or arr.shape[1] != alphas.size:
            raise ValueError(
                f"`{name}` must have shape (n_bases, {alphas.size}); found shape {arr.shape}"
            )
    if fp.shape != fn.shape:
        raise ValueError(f"`fp` and `fn` must have the same shape; found {fp.shape} and {fn.shape}")
    n0 = np.broadcast_to(np.asarray(n, dtype=np.float64).reshape(-1, 1), fp.shape)
    n1 = n0 if n_pos is None else np.broadcast_to(np.asarray(n_pos, float).reshape(-1, 1), fp.shape)
    if np.any(n0 <= 0) or np.any(n1 <= 0):
        raise ValueError(f"`n` and `n_pos` must be positive; found n={n!r}, n_pos={n_pos!r}")
    x, y = fp / n0, fn / n1
    import matplotlib.pyplot as plt

    cmap = plt.get_cmap("viridis", max(fp.shape[0], 2))
    for i in range(fp.shape[0]):
        ax.plot(x[i], y[i], "-", marker=".", ms=3, lw=0.9, color=cmap(i))
    if highlight is not None:
        j = int(np.argmin(np.abs(alphas - highlight)))
        ax.plot(x[:, j], y[:, j], "o", mfc="none", mec="C3", ms=7, label=f"at α* = {alphas[j]:g}")
    ax.plot([0, 1], [1, 0], color="0.7", lw=0.8, ls="--", label="random guessing")
    ax.plot([], [], "-", color=cmap(0), label=f"one line per challenge base ({fp.shape[0]})")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("false-positive rate fp / n")
    ax.set_ylabel("false-negative rate fn / n")
    ax.set_title(f"Attack errors over target α* ∈ [{alphas.min():g}, {alphas.max():g}]")
    ax.legend(fontsize="small", loc="upper right")
    return ax
