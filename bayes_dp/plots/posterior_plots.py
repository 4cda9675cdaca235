"""Figures of the posterior: marginals, analyses overlaid, eps with its claim, the joint."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

import numpy as np

from bayes_dp.core.observations import AttackCounts
from bayes_dp.core.region import (
    clopper_pearson_epsilon,
    largest_classical_epsilon,
)
from bayes_dp.core.validation import (
    check_positive_int,
    check_prob,
)
from bayes_dp.plots.kde import (
    _kde,
)
from bayes_dp.plots.style import (
    LEGEND_PLACES,
    _all_counts,
    _axes,
    _check_post,
    _cut_label,
    _label,
    _place_legend,
    _support,
    _view,
)
from bayes_dp.results.posterior import Posterior


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


def plot_claim(posterior: Posterior, claim=None, *, legend: str | None = "below", ax=None):
    """Plot what the audit shows on one axis: the signed bound, the posterior, the companions.

    Drawn: the posterior of eps (:func:`plot_marginal`, its ``2 prob - 1`` credible interval
    shaded), the bound the claim signs (``claim.lower``, a thick black line), the frequentist
    bound beside it where the claim signs another figure (designed bases whose posterior's
    quantile is the smaller), and each frequentist companion bound the run recorded
    (``posterior.settings["companion"]``: score matrices on the command line).

    Parameters
    ----------
    posterior : Posterior
    claim : AuditClaim, optional
        What the audit shows (default :func:`bayes_dp.audit_claim` of ``posterior``).
    legend : {"right", "below", "best", None}
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    from bayes_dp.results.claim import audit_claim

    _check_post(posterior)
    if legend not in LEGEND_PLACES:
        raise ValueError(f"`legend` must be one of {list(LEGEND_PLACES)}; found {legend!r}")
    claim = audit_claim(posterior) if claim is None else claim
    ax = plot_marginal(
        posterior, "eps", prob=2 * claim.prob - 1, legend=None, ax=_axes(ax, (10.5, 4.2))
    )
    pct = f"{100 * claim.prob:g}%"
    kind = "posterior probability" if claim.cites_model_lower else "confidence"
    marks = [claim.lower]
    ax.axvline(
        claim.lower, color="k", lw=3, label=f"the claim: ε ≥ {claim.lower:.3g} ({pct} {kind})"
    )
    f = claim.frequentist_lower
    if f is not None and np.isfinite(f) and not np.isclose(f, claim.lower):
        ax.axvline(f, color="C3", ls="--", lw=1.5, label=f"frequentist bound {f:.3g}")
        marks.append(f)
    comp = posterior.settings.get("companion") or {}
    styles = [":", "-.", (0, (5, 2, 1, 2)), (0, (1, 3))]
    for i, b in enumerate(comp.get("bounds", [])):
        eps = b.get("eps")
        if eps is None or not np.isfinite(eps):
            continue
        ax.axvline(
            eps,
            color=f"C{2 + i % 6}",
            ls=styles[i % len(styles)],
            lw=1.5,
            label=f"companion: {b['name']} {eps:.3g}",
        )
        marks.append(eps)
    xmin, xmax = ax.get_xlim()
    ax.set_xlim(min(xmin, 0.95 * min(marks)), max(xmax, 1.05 * max(marks)))
    delta = posterior.settings.get("delta")
    at = f" (δ = {delta:g})" if delta is not None else ""
    ax.set_title(f"What the audit shows{at}: the claim's bound, the posterior, the companions")
    _place_legend(ax, legend)
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
