"""The Gaussian privacy curve, defined in :mod:`bayes_dp.core.gaussians` (one place for it).

``bayes_dp`` needs it for Gaussian DP (``bayes_dp.gdp.core``) and may not import ``mia``, so the
module lives there; the canary modules import it from here.
"""

from bayes_dp.core.gaussians import (  # noqa: F401 (re-exported)
    __all__,
    delta_two_gaussians,
    epsilon_two_gaussians,
    gaussian_mechanism_delta,
    gaussian_mechanism_epsilon,
    gaussian_mechanism_sigma,
    solve_epsilon,
)
