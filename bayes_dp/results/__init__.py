"""What a run returns: posterior classes, their diagnostics and the auditor's claim.

Imports only :mod:`bayes_dp.core` (and, lazily, the report for ``Posterior.report``).
"""
