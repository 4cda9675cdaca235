"""MCMC diagnostics as figures: trace, rank histograms, autocorrelation, all of them at once."""

from __future__ import annotations

import textwrap

import numpy as np

from bayes_dp.core.validation import (
    check_positive_int,
    check_real,
)
from bayes_dp.plots.style import (
    _axes,
    _check_post,
    _cut_note,
    _label,
    _view,
)
from bayes_dp.results import arviz_adapter
from bayes_dp.results.posterior import Posterior


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
