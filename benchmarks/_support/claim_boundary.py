"""Audits of designed bases at an optimal attack's error point (benchmarks/claim_boundary.py)."""

from __future__ import annotations

import warnings

import numpy as np

import bayes_dp as bdp


def boundary_point(point: str, eps: float, delta: float, fpr: float) -> tuple[float, float]:
    """The (FPR, FNR) of an optimal test on the boundary of R(eps, delta)."""
    if point == "rr":
        a = (1.0 - delta) / (1.0 + np.exp(eps))
        return a, a
    return fpr, 1.0 - delta - np.exp(eps) * fpr


def audit(rng, a, b, n, bases, delta, draws=1000, tune=500):
    """One audit: (posterior 5% quantile, claim lower, Clopper-Pearson bound) of eps."""
    fp = rng.binomial(n, a, bases)
    fn = rng.binomial(n, b, bases)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = bdp.estimate_epsilon(
            bdp.AttackCounts(fp, n, fn, n),
            delta=delta,
            chains=2,
            draws=draws,
            tune=tune,
            seed=rng,
            cores=1,
            check=False,
        )
    claim = bdp.audit_claim(post, 0.95)
    return claim.posterior_lower, claim.lower, claim.frequentist_lower
