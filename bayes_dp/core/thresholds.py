"""Every threshold that judges a run, and the default lengths of runs, in one leaf module.

It imports nothing of the package, so the command line reads it without loading numpy.

:mod:`bayes_dp.results.diagnostics` reports a run whose r_hat or ESS crosses these values, and the
automatic run length of :func:`~bayes_dp.estimate_epsilon` (``draws=None``) stops when every
sampled variable meets them: the stopping rule uses the same :data:`RHAT_MAX` as the report.
"""

from __future__ import annotations

__all__ = [
    "ACCEPT_RANGE",
    "AUTO_ESS_MIN",
    "AUTO_FIRST_DRAWS",
    "AUTO_MAX_DRAWS",
    "AUTO_MAX_TIME",
    "ESS_PER_CHAIN_MIN",
    "GRID_DRAWS",
    "RHAT_MAX",
]

#: r_hat above this value is reported, and an automatic-length run goes on until every sampled
#: variable is at or below it.
RHAT_MAX = 1.01
#: Bulk or tail ESS below this many per chain is reported.
ESS_PER_CHAIN_MIN = 100
#: Acceptance rates outside this range are reported (the warm-up tunes towards 0.3).
ACCEPT_RANGE = (0.1, 0.6)

#: Automatic run length of the exact sampler: draws per chain of the first round, and the
#: largest run it grows to.
AUTO_FIRST_DRAWS = 1000
AUTO_MAX_DRAWS = 200_000
#: ESS target of the automatic run length, bulk and tail: the Monte Carlo sd of F(estimated
#: q-quantile) is sqrt(q (1 - q) / ESS), 0.35 probability points at 5%/95% and 0.8 at the
#: median at 4,000, within the 1.5 points the stress grid allows (docs/validation/model.md).
AUTO_ESS_MIN = 4000
#: Default time budget, in seconds, of an automatic-length run.
AUTO_MAX_TIME = 600.0
#: Draws per chain of the grid posteriors (``estimate_gdp``, ``estimate_one_run``): independent
#: draws, so their ESS is the number of draws.
GRID_DRAWS = 4000
