"""Warnings and errors of bayes_dp."""

from __future__ import annotations

__all__ = [
    "ConvergenceWarning",
    "DependenceWarning",
    "MinorModeWarning",
    "OutputSkippedWarning",
    "TimeBudgetError",
]


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

    Raised by the exact sampler's check ``bayes_dp.inference.modes.find_better_mode`` when chains
    started again at the point it found miss such a mode again (or no time was left to start
    them; a first miss only makes the sampler sample again, ``post.settings["mode_restart"]``);
    the run's ``post.converged`` is False and ``post.settings["minor_mode"]`` holds what was
    found (``eps``, ``log_post``, ``log_post_draws``, ``z``, ``chains``). See
    ``docs/validation/lira.md``,
    "Which likelihood for a score matrix" and "A mode the chains missed".
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


class DependenceWarning(UserWarning):
    """Pooled counts carry less than half the information that independent decisions would.

    Raised by :func:`mia.counts_from_score_matrix` when the held-out decisions of a score matrix
    are so dependent (shared fits, per-model effects) that a binomial posterior of the counts
    would be optimistic. An uncorrected claim built on such counts is marked not reliable
    (:func:`bayes_dp.audit_claim`). See ``docs/validation/lira.md``, "Dependence of the pooled
    counts".

    Attributes
    ----------
    info_ratio : float
        The smaller of the FP and FN information ratios (1 / design effect).
    fp_design_effect, fn_design_effect : float
        Variance of the pooled FP (FN) count over its binomial variance.
    """

    def __init__(
        self, message: str, *, info_ratio: float, fp_design_effect: float, fn_design_effect: float
    ):
        super().__init__(message)
        self.info_ratio = info_ratio
        self.fp_design_effect = fp_design_effect
        self.fn_design_effect = fn_design_effect
