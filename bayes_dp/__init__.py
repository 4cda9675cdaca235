"""bayes_dp: Bayesian estimation of differential privacy from attack error counts.

The main entry point is :func:`estimate_epsilon`, which turns :class:`AttackCounts` (or several
:class:`Evidence` groups) into a :class:`Posterior` of eps and the attack strength s.
"""

from . import plots, region, simulate
from .estimate import estimate_epsilon
from .evidence import Evidence
from .exceptions import ConvergenceWarning, TimeBudgetError
from .observations import AttackCounts
from .posterior import Posterior, load_posterior
from .priors import Beta, HalfNormal, LogNormal, Prior
from .region import (
    classical_epsilon,
    clopper_pearson_epsilon,
    in_region,
    in_strength_region,
    region_area,
    strength_region_area,
)

__all__ = [
    "AttackCounts",
    "Beta",
    "ConvergenceWarning",
    "Evidence",
    "HalfNormal",
    "LogNormal",
    "Posterior",
    "Prior",
    "TimeBudgetError",
    "classical_epsilon",
    "clopper_pearson_epsilon",
    "estimate_epsilon",
    "in_region",
    "in_strength_region",
    "load_posterior",
    "plots",
    "region",
    "region_area",
    "simulate",
    "strength_region_area",
]
__version__ = "0.1.0"
