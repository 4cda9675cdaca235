"""Figures for a :class:`~bayes_dp.Posterior` and for attack counts (matplotlib).

Every function takes ``ax=None`` (a new figure is made when none is given) and returns the
``matplotlib.axes.Axes`` it drew on; :func:`plot_diagnostics` returns a whole ``Figure``. Axes are
labelled and titled so that each figure can be read on its own.

The figures follow the paper (Yildirim et al.): :func:`plot_region` is Fig. 1/3 (left),
:func:`plot_marginal` and :func:`plot_joint` Fig. 3 (right) and Fig. 4 (bottom),
:func:`plot_error_curves` Fig. 4 (top), :func:`plot_autocorr` Fig. 6. :func:`plot_compare`
overlays the posteriors of one variable from several analyses (e.g. each audit alone and
combined).

The figures live in modules by concern, their names imported here (``bdp.plots.<name>``):
:mod:`~bayes_dp.plots.posterior_plots` (marginals, comparison, eps with its claim, joint),
:mod:`~bayes_dp.plots.region_plots` (the privacy region, error curves),
:mod:`~bayes_dp.plots.diagnostic_plots` (trace, ranks, autocorrelation), over
:mod:`~bayes_dp.plots.kde` (the kernel density) and :mod:`~bayes_dp.plots.style` (axis limits,
labels, legends, the counts a posterior recorded).
"""

from __future__ import annotations

from bayes_dp.plots.diagnostic_plots import plot_autocorr, plot_diagnostics, plot_rank, plot_trace
from bayes_dp.plots.posterior_plots import (
    plot_claim,
    plot_compare,
    plot_eps_posterior,
    plot_joint,
    plot_marginal,
)
from bayes_dp.plots.region_plots import plot_error_curves, plot_region
from bayes_dp.plots.style import posterior_counts

__all__ = [
    "posterior_counts",
    "plot_marginal",
    "plot_eps_posterior",
    "plot_claim",
    "plot_compare",
    "plot_joint",
    "plot_region",
    "plot_error_curves",
    "plot_trace",
    "plot_rank",
    "plot_autocorr",
    "plot_diagnostics",
]
