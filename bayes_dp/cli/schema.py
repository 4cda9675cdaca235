"""The fields ``bayes-dp estimate`` writes: its ``--json`` object and its ``posterior.nc``.

One schema, in plain words, that the documentation renders (``docs/reference/output.md``) and
``tests/bayes_dp/cli/test_schema.py`` checks against what the command really writes: a key
written without an entry here, or an entry for a key never written, fails that test.

Examples
--------
>>> from bayes_dp.cli import schema
>>> "claim" in schema.JSON_FIELDS and "sentence" in schema.CLAIM_FIELDS
True
"""

from __future__ import annotations

__all__ = ["JSON_FIELDS", "JSON_GDP_FIELDS", "JSON_FAILURE_FIELDS", "CLAIM_FIELDS", "NETCDF"]

#: Top-level keys of ``bayes-dp estimate --json`` on attack counts, score matrices and result
#: folders (values that are not finite are ``null``).
JSON_FIELDS: dict[str, str] = {
    "exit_status": "the command's exit status (the table of exit statuses)",
    "exit_status_meaning": "that status in words",
    "converged": "whether the result passes the convergence checks, however its length was set "
    "(false: exit status 3)",
    "stop_reason": "why the sampler stopped: converged, max_time, max_draws, draws, or "
    "minor_mode (the chains sit in a mode that misses a higher one)",
    "sampling_seconds": "the sampler's time, set-up and (on a first run) compilation included",
    "max_time": "the time budget in seconds (null: none)",
    "eps": "median, credible_interval (90%, equal-tailed), prob, quantile_probs",
    "claim": "what the audit shows, the sentence to cite and its figures (the claim's fields)",
    "delta": "the delta of the run",
    "variables": "per variable: mean, median, sd, quantiles (5, 25, 50, 75, 95%), interval, hdi, "
    "r_hat, ess_bulk, ess_tail",
    "diagnostics": "per variable: r_hat, ess_bulk, ess_tail",
    "acceptance": "the acceptance rate of each move",
    "warnings": "the warnings, in plain words",
    "dependence": "score matrices: per group, how much information the pooled counts carry "
    "relative to independent decisions (design effects; null for other inputs)",
    "companion": "score matrices: the frequentist lower bounds of eps beside the posterior "
    "(mia.companion_bounds; null for other inputs)",
    "fixed": "the variables held fixed (e.g. s, tau, rho) and their values",
    "groups": "each evidence group: name, likelihood, strength",
    "seed": "the seed of the run",
    "chains": "the number of chains",
    "draws": "draws per chain",
    "tune": "warm-up iterations per chain",
    "prior": "the prior, as Prior(eps=..., s=...) (tau named only when a group has one)",
    "versions": "the versions of bayes-dp and of the packages it uses",
    "files": "the files written: posterior, report (null when not written)",
    "glossary": "the meaning of each statistic and move shown, in plain words",
}

#: Keys that ``bayes-dp estimate`` adds for a Gaussian-DP posterior (in/out scores, one-run
#: audits; ``bayes_dp.estimate_gdp``).
JSON_GDP_FIELDS: dict[str, str] = {
    "model": '"gdp"',
    "fit_check": "per score group: the posterior predictive p-value of the Gaussian shape "
    "(below 0.01 fails)",
    "gaussian_shape": "the fit check's verdict on the Gaussian shape (claim.gaussian_shape)",
    "shape_free_lower": "the lower bound of eps that assumes no shape (claim.shape_free_lower)",
    "comparison": "with --compare only: the estimators side by side, one row each "
    "(bayes_dp.compare_estimators)",
}

#: Keys of the object ``--json`` writes when the command fails before it has a result.
JSON_FAILURE_FIELDS: dict[str, str] = {
    "exit_status": "1 (bad input or a file that cannot be read or written) or 2 (usage error)",
    "exit_status_meaning": "that status in words",
    "error": "the error message (file, row and column where it lies in the input)",
    "versions": "the version of bayes-dp",
}

#: Keys of the ``claim`` object (``bayes_dp.AuditClaim.to_dict``).
CLAIM_FIELDS: dict[str, str] = {
    "prob": "the claim's confidence (0.95)",
    "lower": "the bound the claim signs: eps >= lower with confidence prob; 0 where the "
    "posterior's lower end is all the claim has and the prior sets it, or the chains sit in a "
    "minor mode",
    "upper": "the posterior's prob quantile of eps (the model's upper end)",
    "delta": "the delta of the claim",
    "upper_source": 'what sets the upper end: "data", "prior", "unknown" (not checked), '
    '"model" (score matrices within the attack\'s ceiling) or "attack_level" (beyond what a '
    "test at its level could show)",
    "upper_shift": "the largest relative move of the upper end when the eps prior's scale is "
    "halved or doubled",
    "upper_moved_to": "the upper end under each rescaled prior, keyed by the factor",
    "lower_shift": "the same move of the posterior's lower end",
    "reliable": "whether the run passes the convergence checks",
    "sentence": "the whole explanation in one paragraph: the texts of details, joined",
    "headline": "the claim in two sentences, to cite (printed under the summary table): the "
    "bound, its confidence, delta and what sets it; then the posterior and its upper end",
    "details": "the explanation as [name, text] pairs in reading order (printed by --explain; "
    "the report's details): the bound, the model, the upper end, the reasons for a warning",
    "set_by": "what sets the bound, in a few words (as the headline says it)",
    "dependence": "score matrices: the dependence of the pooled counts behind the claim",
    "gaussian_shape": "Gaussian-DP runs: the fit check's verdict",
    "gaussian_lower": "Gaussian-DP runs: the whole-ROC lower end (holds if the mechanism is "
    "Gaussian)",
    "shape_free_lower": "Gaussian-DP runs: the best single-threshold bound (holds for any "
    "mechanism; lower is then this bound)",
    "shape_free": "Gaussian-DP runs: how the shape-free bound was found",
    "posterior_lower": "the posterior's own lower end (its 1 - prob quantile)",
    "frequentist_lower": "the frequentist bound: per-base Clopper-Pearson, one-run or, on "
    "score matrices, the largest of the pooled and per-target bounds",
    "frequentist": "the frequentist bound's details: top_targets, the attack's ceiling, ...",
    "lower_from_counts": "whether lower is the frequentist bound of the counts",
    "model_lower": "the posterior's lower end as the model states it",
    "cites_model_lower": "whether lower is the model's lower end",
    "interval_words": "the interval line printed by --explain",
    "interval": "[lower, upper] as the line prints them (upper null where it is not the data's)",
}

#: Groups and attributes of ``posterior.nc`` (ArviZ's netCDF layout: ``az.from_netcdf`` or
#: :func:`bayes_dp.load_posterior` read it).
NETCDF: dict[str, str] = {
    "posterior": "group: the draws, dims (chain, draw): eps, the attack strengths s and "
    "s_<group>, tau_<group> and rho_<group> of correlated groups (mu for Gaussian-DP runs)",
    "sample_stats": "group: the sampler's statistics per draw (the acceptance of each move)",
    "log_likelihood": "group (exact sampler): each base's log-likelihood per draw, dims "
    "(chain, draw, base), for az.loo",
    "bayes_dp_settings": "attribute: the run's settings as JSON (seed, chains, draws, tune, "
    "prior, delta, groups, versions, stop_reason, ...)",
    "bayes_dp_format": "attribute: the version of this layout (1)",
    "bayes_dp_var_names": "attribute: the variables in the sampler's order, as JSON",
}
