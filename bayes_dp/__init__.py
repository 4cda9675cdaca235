"""bayes_dp: Bayesian estimation of differential privacy from attack error counts.

The main entry point is :func:`estimate_epsilon`, which turns :class:`AttackCounts` (or several
:class:`Evidence` groups) into a :class:`Posterior` of eps and the attack strength s.

The names below are imported on first use (PEP 562), so that ``import bayes_dp`` is quick and
the ``bayes-dp`` command can catch Ctrl-C while numpy, numba and matplotlib load.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

#: public name -> the submodule that defines it
_WHERE = {
    "AttackCounts": "observations",
    "AuditClaim": "claim",
    "AuditPlan": "planning",
    "Beta": "priors",
    "ConvergenceWarning": "exceptions",
    "Evidence": "evidence",
    "Exact": "sampler_settings",
    "GdpEvidence": "gdp",
    "GdpFitWarning": "gdp",
    "HalfNormal": "priors",
    "LogNormal": "priors",
    "MHAAR": "sampler_settings",
    "MinorModeWarning": "exceptions",
    "OneRunCounts": "one_run",
    "Posterior": "posterior",
    "Prior": "priors",
    "TimeBudgetError": "exceptions",
    "audit_claim": "claim",
    "classical_epsilon": "region",
    "largest_classical_epsilon": "region",
    "clopper_pearson_epsilon": "region",
    "clopper_pearson_interval": "region",
    "compare_estimators": "compare",
    "estimate_epsilon": "estimate",
    "estimate_gdp": "gdp",
    "estimate_one_run": "one_run",
    "gdp_delta": "gdp",
    "gdp_epsilon": "gdp",
    "gdp_evidence": "gdp",
    "gdp_lower_bound": "compare",
    "in_region": "region",
    "in_strength_region": "region",
    "load_posterior": "posterior",
    "one_run_counts_from_scores": "compare",
    "one_run_epsilon_bound": "one_run",
    "plan_audit": "planning",
    "plan_gdp_audit": "planning",
    "precompile": "compile_cache",
    "region_area": "region",
    "strength_region_area": "region",
}
_SUBMODULES = ("calibration", "plots", "region", "simulate")

__all__ = [
    "AttackCounts",
    "AuditClaim",
    "AuditPlan",
    "Beta",
    "ConvergenceWarning",
    "Evidence",
    "Exact",
    "GdpEvidence",
    "GdpFitWarning",
    "HalfNormal",
    "LogNormal",
    "MHAAR",
    "MinorModeWarning",
    "OneRunCounts",
    "Posterior",
    "Prior",
    "TimeBudgetError",
    "audit_claim",
    "calibration",
    "classical_epsilon",
    "largest_classical_epsilon",
    "clopper_pearson_epsilon",
    "clopper_pearson_interval",
    "compare_estimators",
    "estimate_epsilon",
    "estimate_gdp",
    "estimate_one_run",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_evidence",
    "gdp_lower_bound",
    "in_region",
    "in_strength_region",
    "load_posterior",
    "one_run_counts_from_scores",
    "one_run_epsilon_bound",
    "plan_audit",
    "plan_gdp_audit",
    "plots",
    "precompile",
    "region",
    "region_area",
    "simulate",
    "strength_region_area",
]


def __getattr__(name: str):
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _WHERE:
        value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:  # for type checkers and editors; at run time the names load on first use
    from . import calibration, plots, region, simulate
    from .claim import AuditClaim, audit_claim
    from .compare import compare_estimators, gdp_lower_bound, one_run_counts_from_scores
    from .compile_cache import precompile
    from .estimate import estimate_epsilon
    from .evidence import Evidence
    from .exceptions import ConvergenceWarning, MinorModeWarning, TimeBudgetError
    from .gdp import GdpEvidence, GdpFitWarning, estimate_gdp, gdp_delta, gdp_epsilon, gdp_evidence
    from .observations import AttackCounts
    from .one_run import OneRunCounts, estimate_one_run, one_run_epsilon_bound
    from .planning import AuditPlan, plan_audit, plan_gdp_audit
    from .posterior import Posterior, load_posterior
    from .priors import Beta, HalfNormal, LogNormal, Prior
    from .region import (
        classical_epsilon,
        clopper_pearson_epsilon,
        clopper_pearson_interval,
        in_region,
        in_strength_region,
        largest_classical_epsilon,
        region_area,
        strength_region_area,
    )
    from .sampler_settings import MHAAR, Exact
