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
    "AuditPlan": "planning",
    "Beta": "priors",
    "ConvergenceWarning": "exceptions",
    "Evidence": "evidence",
    "HalfNormal": "priors",
    "LogNormal": "priors",
    "Posterior": "posterior",
    "Prior": "priors",
    "TimeBudgetError": "exceptions",
    "classical_epsilon": "region",
    "clopper_pearson_epsilon": "region",
    "clopper_pearson_interval": "region",
    "estimate_epsilon": "estimate",
    "in_region": "region",
    "in_strength_region": "region",
    "load_posterior": "posterior",
    "plan_audit": "planning",
    "region_area": "region",
    "strength_region_area": "region",
}
_SUBMODULES = ("calibration", "plots", "region", "simulate")

__all__ = [
    "AttackCounts",
    "AuditPlan",
    "Beta",
    "ConvergenceWarning",
    "Evidence",
    "HalfNormal",
    "LogNormal",
    "Posterior",
    "Prior",
    "TimeBudgetError",
    "calibration",
    "classical_epsilon",
    "clopper_pearson_epsilon",
    "clopper_pearson_interval",
    "estimate_epsilon",
    "in_region",
    "in_strength_region",
    "load_posterior",
    "plan_audit",
    "plots",
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
    from .estimate import estimate_epsilon
    from .evidence import Evidence
    from .exceptions import ConvergenceWarning, TimeBudgetError
    from .observations import AttackCounts
    from .planning import AuditPlan, plan_audit
    from .posterior import Posterior, load_posterior
    from .priors import Beta, HalfNormal, LogNormal, Prior
    from .region import (
        classical_epsilon,
        clopper_pearson_epsilon,
        clopper_pearson_interval,
        in_region,
        in_strength_region,
        region_area,
        strength_region_area,
    )
