"""Warnings and errors of bayes_dp."""

from __future__ import annotations

__all__ = ["ConvergenceWarning", "MinorModeWarning", "OutputSkippedWarning", "TimeBudgetError"]


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


class MinorModeWarning(ConvergenceWarning):
    """The chains missed a mode of much higher posterior density (at eps ~ 0).

    Raised by the exact sampler's check ``bayes_dp.inference.modes.find_better_mode``; the run's
    ``post.converged`` is False and ``post.settings["minor_mode"]`` holds what was found
    (``eps``, ``log_post``, ``log_post_draws``, ``z``). See ``docs/lira.md``, "Which likelihood
    for a score matrix".
    """


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
