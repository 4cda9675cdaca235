"""Membership-inference attacks and audits that produce attack counts.

The LiRA pipeline of Yildirim et al. (Sec. 3): train models on ``D`` and ``D + {z}``
(:mod:`mia.training`, :mod:`mia.audit`), test the loss of ``z`` with the Gaussian
likelihood-ratio test (:func:`learn_and_decide`) and count errors with the cross-fed
measurement (:func:`cross_fed_counts`).
"""

from .lira import fit_normal, learn_and_decide, lira_logit, logit_confidence
from .measure import cross_fed_counts, cross_fed_decisions, independent_counts

__all__ = [
    "cross_fed_counts",
    "cross_fed_decisions",
    "fit_normal",
    "independent_counts",
    "learn_and_decide",
    "lira_logit",
    "logit_confidence",
]
