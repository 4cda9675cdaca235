"""bayes_dp: Bayesian estimation of differential privacy from attack error counts."""

from .evidence import Evidence
from .observations import AttackCounts

__all__ = ["AttackCounts", "Evidence"]
__version__ = "0.1.0"
