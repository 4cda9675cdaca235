"""Warnings and errors of bayes_dp."""

from __future__ import annotations

__all__ = ["ConvergenceWarning", "OutputSkippedWarning", "TimeBudgetError"]


class ConvergenceWarning(UserWarning):
    """The chains may not have converged or mixed enough (r_hat too high or ESS too small).

    Attributes
    ----------
    var : str
        The variable concerned.
    r_hat, ess_bulk, ess_tail : float
        The diagnostics found.
    """

    def __init__(self, message: str, *, var: str, r_hat: float, ess_bulk: float, ess_tail: float):
        super().__init__(message)
        self.var = var
        self.r_hat = r_hat
        self.ess_bulk = ess_bulk
        self.ess_tail = ess_tail


class TimeBudgetError(RuntimeError):
    """The time budget (``max_time``) ran out before the warm-up finished: there are no draws."""


class OutputSkippedWarning(UserWarning):
    """An optional output of a finished run could not be built; the posterior itself is kept.

    Attributes
    ----------
    output : str
        What was skipped (``"log_likelihood"``, ``"report"``, ...).
    reason : str
        Why: the error met, as ``"TypeName: message"``.
    """

    def __init__(self, message: str, *, output: str, reason: str):
        super().__init__(message)
        self.output = output
        self.reason = reason
