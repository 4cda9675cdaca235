"""The planner's grid posterior against the quadrature reference (``tests/reference/``).

Shared by ``tests/bayes_dp/planning/test_planning.py`` and ``benchmarks/plan_grid_accuracy.py``: the
error of the grid's 5%, 50% and 95% points of eps and of s, in probability points, is the
reference's CDF at the grid's quantile minus the level. Priors: HalfNormal(10) and Beta(1, 1)
(``bayes_dp.Prior()``), delta = 1e-5.
"""

from __future__ import annotations

import numpy as np

import bayes_dp as bdp
from bayes_dp.planning.grid import grid_posterior

from tests import reference as ref

LEVELS = np.array([0.05, 0.5, 0.95])


def grid_errors(counts: bdp.AttackCounts) -> tuple[np.ndarray, np.ndarray]:
    """Return the errors (probability points) of the grid's eps and s quantiles at LEVELS."""
    g = grid_posterior(counts, 1e-5, bdp.Prior())
    r = ref.posterior_grid(
        (counts.fp, counts.n_neg, counts.fn, counts.n_pos),
        1e-5,
        eps_prior=("halfnormal", 10.0),
        s_prior=("beta", 1.0, 1.0),
        zoom=None,
    )
    return 100 * (r.eps_cdf(g.quantile(LEVELS)) - LEVELS), 100 * (
        r.s_cdf(g.s_quantile(LEVELS)) - LEVELS
    )
