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
    "AttackCounts": "core.observations",
    "AuditClaim": "results.claim",
    "AuditPlan": "planning.core",
    "Beta": "core.priors",
    "ConvergenceWarning": "core.exceptions",
    "Evidence": "core.evidence",
    "Exact": "inference.settings",
    "GdpEvidence": "gdp.core",
    "GdpFitWarning": "gdp.core",
    "HalfNormal": "core.priors",
    "LogNormal": "core.priors",
    "MHAAR": "inference.settings",
    "MinorModeWarning": "core.exceptions",
    "OneRunCounts": "core.observations",
    "Posterior": "results.posterior",
    "Prior": "core.priors",
    "TimeBudgetError": "core.exceptions",
    "audit_claim": "results.claim",
    "classical_epsilon": "core.region",
    "largest_classical_epsilon": "core.region",
    "clopper_pearson_epsilon": "core.region",
    "clopper_pearson_interval": "core.region",
    "compare_estimators": "evaluation.compare",
    "estimate_epsilon": "inference.estimate",
    "estimate_gdp": "gdp.core",
    "estimate_one_run": "one_run.core",
    "gdp_delta": "gdp.core",
    "gdp_epsilon": "gdp.core",
    "gdp_evidence": "gdp.core",
    "gdp_lower_bound": "evaluation.compare",
    "in_region": "core.region",
    "in_strength_region": "core.region",
    "load_posterior": "results.posterior",
    "one_run_counts_from_scores": "evaluation.compare",
    "one_run_epsilon_bound": "one_run.core",
    "plan_audit": "planning.core",
    "plan_gdp_audit": "planning.core",
    "precompile": "cli.precompile",
    "region_area": "core.region",
    "strength_region_area": "core.region",
}
#: public sub-module name -> where it lives
_SUBMODULES = {
    "calibration": "evaluation.calibration",
    "diagnostics": "results.diagnostics",
    "plots": "plots",
    "region": "core.region",
    "simulate": "core.simulate",
}

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
        return importlib.import_module(f".{_SUBMODULES[name]}", __name__)
    if name in _WHERE:
        value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:  # for type checkers and editors; at run time the names load on first use
    from bayes_dp import plots
    from bayes_dp.cli.precompile import precompile
    from bayes_dp.core import region, simulate
    from bayes_dp.core.evidence import Evidence
    from bayes_dp.core.exceptions import ConvergenceWarning, MinorModeWarning, TimeBudgetError
    from bayes_dp.core.observations import AttackCounts
    from bayes_dp.core.priors import Beta, HalfNormal, LogNormal, Prior
    from bayes_dp.core.region import (
        classical_epsilon,
        clopper_pearson_epsilon,
        clopper_pearson_interval,
        in_region,
        in_strength_region,
        largest_classical_epsilon,
        region_area,
        strength_region_area,
    )
    from bayes_dp.evaluation import calibration
    from bayes_dp.evaluation.compare import (
        compare_estimators,
        gdp_lower_bound,
        one_run_counts_from_scores,
    )
    from bayes_dp.gdp.core import (
        GdpEvidence,
        GdpFitWarning,
        estimate_gdp,
        gdp_delta,
        gdp_epsilon,
        gdp_evidence,
    )
    from bayes_dp.inference.estimate import estimate_epsilon
    from bayes_dp.inference.settings import MHAAR, Exact
    from bayes_dp.one_run.core import OneRunCounts, estimate_one_run, one_run_epsilon_bound
    from bayes_dp.planning.core import AuditPlan, plan_audit, plan_gdp_audit
    from bayes_dp.results.claim import AuditClaim, audit_claim
    from bayes_dp.results.posterior import Posterior, load_posterior
