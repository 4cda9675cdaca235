"""Figures for a :class:`~bayes_dp.Posterior` and for attack counts (matplotlib).

Every function takes ``ax=None`` (a new figure is made when none is given) and returns the
``matplotlib.axes.Axes`` it drew on; :func:`plot_diagnostics` returns a whole ``Figure``. Axes are
labelled and titled so that each figure can be read on its own.

The figures follow the paper (Yildirim et al.): :func:`plot_region` is Fig. 1/3 (left),
:func:`plot_marginal` and :func:`plot_joint` Fig. 3 (right) and Fig. 4 (bottom),
:func:`plot_error_curves` Fig. 4 (top), :func:`plot_autocorr` Fig. 6. :func:`plot_compare`
overlays the posteriors of one variable from several analyses (e.g. each audit alone and
combined).

It is long because it holds every public figure (posterior, trace, joint, region, counts, scale) and
the helpers they share; one module keeps the figures' common style in one place.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

import numpy as np

from bayes_dp.core.observations import AttackCounts
from bayes_dp.core.region import (
    clopper_pearson_epsilon,
    clopper_pearson_interval,
    largest_classical_epsilon,
)
from bayes_dp.core.validation import (
    as_generator,
    check_delta,
    check_positive_int,
    check_prob,
    check_real,
)
from bayes_dp.results import arviz_adapter
from bayes_dp.results.posterior import Posterior

__all__ = [
    "posterior_counts",
    "plot_marginal",
    "plot_eps_posterior",
    "plot_compare",
    "plot_joint",
    "plot_region",
    "plot_error_curves",
    "plot_trace",
    "plot_rank",
    "plot_autocorr",
    "plot_diagnostics",
]

#: The eps axis ends at this quantile times ``TAIL_MARGIN`` (eps has a long upper tail when s is
#: unknown; the share of draws beyond the axis is given in its label, or in the trace plot's
#: title).
TAIL_QUANTILE = 0.975
TAIL_MARGIN = 1.25


def _view(var: str, x: np.ndarray) -> tuple[float, float]:
    """Axis range for the draws ``x`` of ``var``: eps cut in its upper tail, s within [0, 1]."""
    if var == "eps":
        lo = float(np.min(x))
        hi = min(float(np.max(x)), TAIL_MARGIN * float(np.quantile(x, TAIL_QUANTILE)))
    else:
        lo, hi = float(np.min(x)), float(np.max(x))
    if hi <= lo:
        hi = lo + max(abs(lo) * 1e-6, 1e-9)
    return lo, hi


def _cut_label(var: str, x: np.ndarray, hi: float) -> str:
    note = _cut_note(x, hi)
    return _label(var) + (f"  (axis cut{note})" if note else "")


def _cut_note(x: np.ndarray, hi: float) -> str:
    frac = float(np.mean(x > hi))
    return f"; {100 * frac:.1f}% of draws lie beyond {hi:.3g}" if frac > 0 else ""


def _axes(ax, figsize=(6.4, 4.2)):
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


#: Where a legend may go: inside the axes where matplotlib finds room, outside to the right of
#: the axes, outside below them, or nowhere.
LEGEND_PLACES = ("best", "right", "below", None)


def _place_legend(ax, where, *, ncol_below: int = 2, fontsize="small"):
    """Draw the legend of ``ax`` at ``where`` (one of :data:`LEGEND_PLACES`).

    "right" and "below" put it outside the axes, so that it hides no data; a figure made with
    ``layout="constrained"`` makes room for it.
    """
    if where not in LEGEND_PLACES:
        raise ValueError(f"`legend` must be one of {list(LEGEND_PLACES)}; found {where!r}")
    if where is None:
        return None
    if where == "right":
        return ax.legend(
            fontsize=fontsize, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0
        )
    if where == "below":
        return ax.legend(
            fontsize=fontsize,
            loc="upper center",
            bbox_to_anchor=(0.5, -0.16),
            ncol=ncol_below,
            borderaxespad=0,
        )
    return ax.legend(fontsize=fontsize)


def _check_post(posterior) -> Posterior:
    if not isinstance(posterior, Posterior):
        raise TypeError(
            f"`posterior` must be a bayes_dp.Posterior; found {type(posterior).__name__}"
        )
    return posterior


def _label(var: str) -> str:
    if var == "eps":
        return "ε (privacy parameter)"
    if var == "s":
        return "s (attack strength)"
    if var.startswith("s_"):
        return f"s of group {var[2:]!r} (attack strength)"
    return var


def posterior_counts(posterior: Posterior) -> list[tuple[str, AttackCounts]]:
    """Return the evidence groups in ``posterior.settings`` as ``(name, AttackCounts)`` pairs.

    Examples
    --------
    >>> import numpy as np
    >>> settings = {"groups": [{"name": "g", "counts": {"fp": [1], "n_neg": [10],
    ...                                                 "fn": [2], "n_pos": [10]}}]}
    >>> post = Posterior({"eps": np.ones((1, 5))}, {}, settings)
    >>> posterior_counts(post)
    [('g', AttackCounts(fp=[1], n_neg=[10], fn=[2], n_pos=[10]))]
    """
    _check_post(posterior)
    out = []
    for g in posterior.settings.get("groups", []):
        out.append((str(g["name"]), AttackCounts(**g["counts"])))
    return out


def _all_counts(posterior: Posterior) -> AttackCounts | None:
    groups = posterior_counts(posterior)
    if not groups:
        return None
    return AttackCounts.concat([c for _, c in groups])


def _support(var: str) -> tuple[float, float]:
    """Known support of ``var``: eps >= 0; s, s_<group>, tau_<group> in [0, 1]; |rho_<group>| <= 1.

    rho's admissible interval (-rho_max(tau), rho_max(tau)) depends on tau, but rho_max <= 1, so
    [-1, 1] holds every draw.
    """
    if var == "eps":
        return 0.0, np.inf
    if var == "s" or var.startswith(("s_", "tau_")):
        return 0.0, 1.0
    if var.startswith("rho_"):
        return -1.0, 1.0
    return -np.inf, np.inf


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


def plot_marginal(
    posterior: Posterior,
    var: str = "eps",
    *,
    prob: float = 0.9,
    bins: int = 60,
    legend: str | None = "best",
    ax=None,
):
    """Histogram and kernel density of one variable's posterior, with its credible interval.

    The kernel density of eps is estimated on log eps, with adaptive bandwidths (narrow at a
    sharp peak, wide in a thin tail), when its draws stay away from 0, so that it follows a
    sharp, skewed posterior; the others are reflected at the bounds of the support (s,
    s_<group> and tau_<group> in [0, 1], rho_<group> in [-1, 1], eps >= 0): a plain kernel
    density falls to about half the true density at a bound, because it spreads the draws'
    mass across it. The eps axis is cut in the upper tail; the density there is still that of
    all draws.

    Parameters
    ----------
    posterior : Posterior
    var : str
        Variable name ("eps", "s", "s_<group>", "tau_<group>", "rho_<group>").
    prob : float
        Mass of the equal-tailed credible interval shaded, in (0, 1).
    bins : int
        Histogram bins.
    legend : {"best", "right", "below", None}
        Legend inside the axes (where matplotlib finds room), outside to the right or below
        (hiding no data), or none.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    Draws of s from Uniform(0, 1): the density curve stays near 1 up to both bounds.

    >>> import numpy as np
    >>> s = np.random.default_rng(0).uniform(size=(1, 20_000))
    >>> post = Posterior({"eps": 1 + s, "s": s}, {}, {})
    >>> ax = plot_marginal(post, "s")
    >>> curve = ax.lines[0].get_ydata()
    >>> bool(np.all(np.abs(curve[[0, -1]] - 1.0) < 0.1))
    True
    """
    _check_post(posterior)
    prob = check_prob("prob", prob)
    bins = check_positive_int("bins", bins, minimum=2)
    ax = _axes(ax)
    x = posterior.draws(var).ravel()
    lo_plot, hi_plot = _view(var, x)
    shown = x[(x >= lo_plot) & (x <= hi_plot)]
    ax.hist(
        shown,
        bins=bins,
        range=(lo_plot, hi_plot),
        # density of all draws (those beyond a cut axis included), like the curve
        weights=np.full(shown.size, bins / ((hi_plot - lo_plot) * x.size)),
        color="0.8",
        edgecolor="0.6",
        label="posterior draws (histogram)",
    )
    if np.ptp(shown) > 0:
        grid = np.linspace(lo_plot, hi_plot, 400)
        dens = _kde(x, grid, _support(var), bw_draws=shown)
        ax.plot(grid, dens, color="C0", lw=1.8, label="kernel density")
    lo, hi = posterior.interval(prob, var)
    pct = f"{100 * prob:g}%"
    ax.axvspan(
        lo, hi, color="C0", alpha=0.12, label=f"{pct} credible interval [{lo:.3g}, {hi:.3g}]"
    )
    med = posterior.quantile(0.5, var)
    ax.axvline(med, color="C0", ls="-", lw=1, label=f"posterior median {med:.3g}")
    ax.set_ylabel("posterior density")
    ax.set_title(f"Posterior of {var}")
    ax.set_xlabel(_cut_label(var, x, hi_plot))
    ax.set_xlim(lo_plot, hi_plot)
    _place_legend(ax, legend)
    return ax


def plot_compare(
    posteriors: Mapping[str, Posterior],
    var: str = "eps",
    *,
    prob: float = 0.9,
    colors: Sequence | None = None,
    ax=None,
):
    """Posterior densities of one variable from several posteriors, with their credible intervals.

    For comparing evidence (e.g. each audit alone and all audits in one posterior) or priors:
    one kernel density curve per posterior (as in :func:`plot_marginal`), the area under it
    inside its equal-tailed ``prob`` credible interval shaded, and below the axis each interval
    as a bar with the median as a white dot. The eps axis is cut in the upper tail (the widest
    posterior decides); the share of each posterior's draws beyond the cut is given in the axis
    label.

    Parameters
    ----------
    posteriors : dict of str -> Posterior
        Posteriors to compare, by the name shown in the legend (in drawing order).
    var : str
        Variable name, sampled in every posterior.
    prob : float
        Credible mass of the intervals, in (0, 1). Default 0.9.
    colors : sequence of matplotlib colours, optional
        One per posterior; default "C0", "C1", ...
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> wide = Posterior({"eps": rng.lognormal(1.0, 0.5, size=(2, 1000))}, {}, {})
    >>> narrow = Posterior({"eps": rng.lognormal(1.0, 0.1, size=(2, 1000))}, {}, {})
    >>> ax = plot_compare({"one audit": wide, "two audits": narrow})
    >>> [t.get_text().split(":")[0] for t in ax.get_legend().get_texts()]
    ['one audit', 'two audits']
    """
    if not isinstance(posteriors, Mapping):
        raise TypeError(
            "`posteriors` must be a dict of name -> bayes_dp.Posterior; "
            f"found {type(posteriors).__name__}"
        )
    if not posteriors:
        raise ValueError("`posteriors` must hold at least one posterior; found none")
    for p in posteriors.values():
        _check_post(p)
    prob = check_prob("prob", prob)
    names = [str(k) for k in posteriors]
    if colors is None:
        colors = [f"C{j % 10}" for j in range(len(names))]
    elif isinstance(colors, str) or len(colors) != len(names):
        raise ValueError(
            f"`colors` must be a sequence of {len(names)} colours (one per posterior); "
            f"found {colors!r}"
        )
    ax = _axes(ax)
    draws = [p.draws(var).ravel() for p in posteriors.values()]
    views = [_view(var, x) for x in draws]
    lo_plot, hi_plot = min(v[0] for v in views), max(v[1] for v in views)
    grid = np.linspace(lo_plot, hi_plot, 400)
    pct = f"{100 * prob:g}%"
    top = 0.0
    bars = []
    for name, post, x, (lo_v, hi_v), col in zip(
        names, posteriors.values(), draws, views, colors, strict=True
    ):
        lo, hi = post.interval(prob, var)
        med = post.quantile(0.5, var)
        shown = x[(x >= lo_v) & (x <= hi_v)]
        if np.ptp(shown) > 0:
            dens = _kde(x, grid, _support(var), bw_draws=shown)
        else:  # all draws equal: a spike
            dens = np.zeros_like(grid)
        top = max(top, float(np.max(dens)))
        ax.plot(
            grid,
            dens,
            color=col,
            lw=2,
            label=f"{name}: median {med:.3g}, {pct} interval [{lo:.3g}, {hi:.3g}]",
        )
        inside = (grid >= lo) & (grid <= hi)
        ax.fill_between(grid, 0, dens, where=inside, color=col, alpha=0.15, lw=0)
        bars.append((lo, hi, med, col))
    top = top if top > 0 else 1.0
    gap = 0.07 * top
    for k, (lo, hi, med, col) in enumerate(bars):
        y = -(k + 1) * gap
        ax.plot([lo, hi], [y, y], color=col, lw=5, solid_capstyle="butt")
        ax.plot([med], [y], "o", ms=5, mfc="white", mec=col, mew=1.5)
    ax.axhline(0, color="0.3", lw=0.8)
    ax.set_xlim(lo_plot, hi_plot)
    ax.set_ylim(-(len(bars) + 0.7) * gap, 1.08 * top)
    ax.set_yticks([t for t in ax.get_yticks() if 0 <= t <= 1.08 * top])
    notes = [
        f"{name} {100 * np.mean(x > hi_plot):.1f}%"
        for name, x in zip(names, draws, strict=True)
        if np.mean(x > hi_plot) > 0
    ]
    note = f"(axis cut at {hi_plot:.3g}; draws beyond it: {', '.join(notes)})"
    ax.set_xlabel(_label(var) + ("\n" + textwrap.fill(note, 64) if notes else ""))
    ax.set_ylabel("posterior density")
    ax.set_title(f"Posterior of {'ε' if var == 'eps' else var}: {pct} credible intervals compared")
    ax.legend(fontsize="small", title=f"bars below 0: {pct} intervals, dots: medians")
    ax.get_legend().get_title().set_fontsize("small")
    return ax


def plot_eps_posterior(
    posterior: Posterior,
    *,
    prob: float = 0.9,
    confidence: float = 0.95,
    counts: AttackCounts | None = None,
    bins: int = 60,
    legend: str | None = "right",
    ax=None,
):
    """Plot the posterior of eps with its credible interval, beside the classical estimates.

    Drawn: histogram and kernel density of the eps draws, the equal-tailed ``prob`` credible
    interval (shaded) and median; the classical point estimate ``max_i eps_hat_i``
    (:func:`~bayes_dp.classical_epsilon` of each base's observed rates, which assumes the attack
    is optimal); and the classical Clopper-Pearson interval of that estimate at ``confidence``
    (:func:`~bayes_dp.clopper_pearson_epsilon`: exact binomial bounds of every rate, union bound
    over the 2n rates), whose lower end is the usual audit lower bound of eps.

    Parameters
    ----------
    posterior : Posterior
    prob : float
        Credible mass shaded, in (0, 1). Default 0.9.
    confidence : float
        Confidence of the Clopper-Pearson interval, in (0, 1). Default 0.95.
    counts : AttackCounts, optional
        Counts for the classical estimates; default: all groups recorded in the posterior.
    bins : int
    legend : {"right", "below", "best", None}
        Where the legend goes: outside the axes to the right (default) or below, so that it
        hides no data; "best" inside; None: no legend.
    ax : matplotlib Axes, optional
        Default: a new figure 10.5 x 4.2 inches.

    Returns
    -------
    matplotlib.axes.Axes
    """
    _check_post(posterior)
    if legend not in LEGEND_PLACES:
        raise ValueError(f"`legend` must be one of {list(LEGEND_PLACES)}; found {legend!r}")
    ax = plot_marginal(
        posterior, "eps", prob=prob, bins=bins, legend=None, ax=_axes(ax, (10.5, 4.2))
    )
    counts = _all_counts(posterior) if counts is None else counts
    delta = posterior.settings.get("delta")
    if counts is not None and delta is not None:
        point = largest_classical_epsilon(counts, delta)
        lo, hi = clopper_pearson_epsilon(
            counts.fp, counts.n_neg, counts.fn, counts.n_pos, delta, confidence
        )
        ax.axvline(
            point, color="C3", ls="--", lw=1.5, label=f"classical point estimate {point:.3g}"
        )
        ax.axvline(
            lo,
            color="C2",
            ls=":",
            lw=2,
            label=f"classical {100 * confidence:g}% lower bound {lo:.3g} (Clopper-Pearson)",
        )
        xmin, xmax = ax.get_xlim()
        if np.isfinite(hi) and hi < xmax:
            ax.axvline(hi, color="C2", ls="-.", lw=1, label=f"upper end of that interval {hi:.3g}")
        ax.set_xlim(min(xmin, lo * 0.95), xmax)
    _place_legend(ax, legend)
    ax.set_title(
        f"Posterior of ε (δ = {delta:g}) and classical estimates"
        if delta is not None
        else "Posterior of ε"
    )
    return ax


def plot_joint(
    posterior: Posterior,
    x: str = "eps",
    y: str = "s",
    *,
    bins: int = 60,
    colorbar: bool = True,
    ax=None,
):
    """Joint posterior density of two variables as a 2-D histogram (paper Fig. 3/4 bottom).

    Parameters
    ----------
    posterior : Posterior
    x, y : str
        Variables on the horizontal and vertical axis (default eps and s). An eps axis ends at
        ``TAIL_MARGIN`` (1.25) times the ``TAIL_QUANTILE`` (97.5%) quantile of its draws, or at
        the largest draw if that is smaller; the axis label then gives the share of draws
        beyond the cut (the histogram leaves them out). Other axes span all draws.
    bins : int
    colorbar : bool
        Add a colour bar for the density.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    _check_post(posterior)
    bins = check_positive_int("bins", bins, minimum=2)
    ax = _axes(ax)
    xd, yd = posterior.draws(x).ravel(), posterior.draws(y).ravel()

    from matplotlib.colors import PowerNorm

    xr, yr = _view(x, xd), _view(y, yd)
    h = ax.hist2d(
        xd, yd, bins=bins, range=[xr, yr], density=True, cmap="Greys", norm=PowerNorm(0.5)
    )
    if colorbar:
        ax.figure.colorbar(h[3], ax=ax, label="posterior density (square-root scale)")
    ax.set_xlabel(_cut_label(x, xd, xr[1]))
    ax.set_ylabel(_cut_label(y, yd, yr[1]))
    ax.set_title(f"Joint posterior of ({x}, {y})")
    return ax


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


def plot_trace(posterior: Posterior, var: str = "eps", *, legend: bool = True, ax=None):
    """Trace plot: the draws of ``var`` against iteration, one line per chain.

    Chains that mix well overlap like noise around one level; trends, steps or chains at
    different levels mean the run is too short. The eps axis is cut in its upper tail.

    Parameters
    ----------
    posterior : Posterior
    var : str
        Variable name.
    legend : bool
        Name the chains in a legend.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    _check_post(posterior)
    ax = _axes(ax)
    d = posterior.draws(var)
    for c in range(d.shape[0]):
        ax.plot(d[c], lw=0.5, alpha=0.7, color=f"C{c % 10}", label=f"chain {c}")
    lo, hi = _view(var, d.ravel())
    title = f"Trace of {var}"
    if hi < d.max():
        ax.set_ylim(lo * 0.95, hi)
        title += f" (axis cut{_cut_note(d.ravel(), hi)})"
    ax.set_ylabel(_label(var))
    ax.set_xlabel("draw (after warm-up)")
    ax.set_title(title)
    if legend and d.shape[0] <= 8:
        ax.legend(fontsize="small", ncol=min(d.shape[0], 4), loc="upper right")
    return ax


def plot_rank(posterior: Posterior, var: str = "eps", *, bins: int = 20, ax=None):
    """Rank plot: histogram of the ranks of each chain's draws among all draws.

    Under convergence each chain's ranks are uniform; the grey band holds 95% of the bar heights
    of uniform ranks (binomial quantiles). Bars far outside it on one chain show that the chain
    explores a different part of the posterior (Vehtari et al. 2021).

    Parameters
    ----------
    posterior : Posterior
    var : str
        Variable name.
    bins : int
        Rank bins per chain.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    from scipy import stats

    _check_post(posterior)
    bins = check_positive_int("bins", bins, minimum=2)
    ax = _axes(ax)
    d = posterior.draws(var)
    ranks = stats.rankdata(d.ravel()).reshape(d.shape)
    edges = np.linspace(0.5, d.size + 0.5, bins + 1)
    expected = d.shape[1] / bins
    band = stats.binom.ppf([0.025, 0.975], d.shape[1], 1 / bins)
    step = 1.3 * expected
    for c in range(d.shape[0]):
        h, _ = np.histogram(ranks[c], bins=edges)
        base = c * step
        ax.axhspan(base + band[0], base + band[1], color="0.9", lw=0)
        ax.axhline(base + expected, color="0.5", ls="--", lw=0.8)
        ax.stairs(base + h, edges, baseline=None, color=f"C{c % 10}", lw=1.3)
    ax.set_yticks([c * step + expected for c in range(d.shape[0])])
    ax.set_yticklabels([f"chain {c}" for c in range(d.shape[0])])
    ax.set_xlabel(f"rank of the draw among all {d.size} draws")
    ax.set_ylabel("draws per rank bin")
    ax.set_title(f"Rank plot of {var} (uniform = well mixed; grey: 95% band)")
    return ax


def plot_autocorr(
    posterior: Posterior, var: str = "eps", *, max_lag: int = 100, legend: bool = True, ax=None
):
    """Sample autocorrelation of each chain's draws against lag (paper Fig. 6).

    A fast decay to zero means nearly independent draws; slow decay means a small effective
    sample size. The grey band is +-2/sqrt(draws), the range of white noise.

    Parameters
    ----------
    posterior : Posterior
    var : str
        Variable name.
    max_lag : int
        Largest lag shown.
    legend : bool
        Name the chains in a legend.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    _check_post(posterior)
    max_lag = check_positive_int("max_lag", max_lag)
    ax = _axes(ax)
    d = posterior.draws(var)
    acf = arviz_adapter.autocorr(d)
    lags = np.arange(min(max_lag + 1, d.shape[1]))
    for c in range(d.shape[0]):
        ax.plot(lags, acf[c, : lags.size], lw=1.2, color=f"C{c % 10}", label=f"chain {c}")
    ax.axhline(0, color="k", lw=0.6)
    w = 2 / np.sqrt(d.shape[1])
    ax.axhspan(-w, w, color="0.85", lw=0)
    ax.set_xlabel("lag (draws)")
    ax.set_ylabel("autocorrelation")
    ax.set_ylim(min(-0.1, float(acf[:, : lags.size].min()) - 0.05), 1.02)
    ax.set_title(f"Autocorrelation of {var}")
    if legend and d.shape[0] <= 8:
        ax.legend(fontsize="small", ncol=min(d.shape[0], 4), loc="upper right")
    return ax


def plot_diagnostics(posterior: Posterior, var_names: list[str] | None = None, *, width=12.0):
    """Trace, rank and autocorrelation plots of each variable, one row per variable.

    The chains are named in one legend above the panels, so that none hides data.

    Parameters
    ----------
    posterior : Posterior
    var_names : list of str, optional
        Variables to show (default: all sampled ones).
    width : float
        Figure width in inches (each row is 3.2 inches high). The default 12 fits the HTML
        report's column at full size, where the tick labels are 12.5 pixels high.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    _check_post(posterior)
    width = check_real("width", width, low=0.0, low_open=True)
    names = posterior.var_names if var_names is None else list(var_names)
    fig, axes = plt.subplots(
        len(names), 3, figsize=(width, 3.2 * len(names) + 0.5), layout="constrained", squeeze=False
    )
    # titles wrapped to about the panel's width (12-point characters are ~0.09 inch wide)
    chars = max(20, int(width / 3 / 0.095))
    for row, v in zip(axes, names, strict=True):
        plot_trace(posterior, v, legend=False, ax=row[0])
        plot_rank(posterior, v, ax=row[1])
        plot_autocorr(posterior, v, legend=False, ax=row[2])
        for ax in row:
            ax.set_title(textwrap.fill(ax.get_title(), chars))
    fig.suptitle(f"MCMC diagnostics: {posterior.n_chains} chains x {posterior.n_draws} draws")
    if posterior.n_chains <= 8:
        handles, labels = axes[0, 2].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncol=posterior.n_chains)
    return fig
