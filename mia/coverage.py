"""Coverage studies that need attacks: cross-fed counts and LiRA-style score matrices.

Each study is a replicate function (one simulated audit, seeded by its first argument) run by
:func:`bayes_dp.evaluation.calibration.coverage_study`, which returns a
:class:`~bayes_dp.evaluation.calibration.CoverageResult` (hit rates with exact binomial intervals).

* :func:`cross_fed_audit` / :func:`cross_fed_coverage`: eps and s from the prior, the true error
  rates of each base uniform on R_s, each base realised as a Gaussian-loss test whose counts come
  from the cross-fed measurement (paper Alg. 5); the same counts are analysed with the binomial
  and the bivariate-normal likelihood (``examples/correlated_counts.py``,
  ``docs/validation/correlated.md``).
* :func:`score_matrix_audit` / :func:`score_matrix_coverage`: the Gaussian mechanism with a known
  eps audited through a simulated score matrix (:func:`mia.simulate_score_matrix`,
  :func:`mia.counts_from_score_matrix`) (``benchmarks/score_matrix_coverage.py``,
  ``docs/validation/lira.md``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
from scipy import stats

import bayes_dp as bdp
from bayes_dp.core.validation import as_generator, check_delta, check_positive_int, check_real
from bayes_dp.evaluation.calibration import CoverageResult, coverage_study

__all__ = ["cross_fed_audit", "cross_fed_coverage", "score_matrix_audit", "score_matrix_coverage"]

#: Prior of the cross-fed study (simulation and analysis).
CROSS_FED_PRIOR = bdp.Prior(eps=bdp.HalfNormal(3.0), s=bdp.Beta(2.0, 2.0))
LIKELIHOODS = ("binomial", "bivariate_normal")


# -- cross-fed counts (Alg. 5) -------------------------------------------------------------------
def _cross_fed_counts(rng, prior, delta, n_bases, n_models):
    """Draw eps from the prior and cross-fed counts of ``n_bases`` Gaussian-loss bases."""
    from .measure import cross_fed_counts

    eps = float(prior.eps.rvs(seed=rng))
    s = float(prior.s) if prior.s_fixed else float(prior.s.rvs(seed=rng))
    alpha, beta = bdp.simulate.sample_strength_region(eps, s, delta, n_bases, seed=rng)
    fp, fn = [], []
    for a, b in zip(alpha, beta, strict=True):
        a, b = min(max(a, 1e-6), 1 - 1e-6), min(max(b, 1e-6), 1 - 1e-6)
        # the exact test at level a of N(0, 1) vs N(mu, 1) has type-II error b
        mu = stats.norm.isf(a) - stats.norm.ppf(b)
        losses_out = rng.normal(0.0, 1.0, n_models)
        losses_in = rng.normal(mu, 1.0, n_models)
        if mu < 0:  # a + b > 1: the member is the lower loss; mirror so the test sees mu > 0
            losses_out, losses_in = -losses_out, -losses_in
        x, y = cross_fed_counts(losses_out, losses_in, [a])
        fp.append(int(x[0]))
        fn.append(int(y[0]))
    return eps, bdp.AttackCounts(fp, n_models, fn, n_models)


def cross_fed_audit(
    seed=None,
    *,
    prior: bdp.Prior | None = None,
    delta: float = 1e-5,
    n_bases: int = 10,
    n_models: int = 100,
    chains: int = 2,
    draws: int = 3000,
    tune: int = 1500,
) -> dict[str, tuple[float, float, float]]:
    """One simulated cross-fed audit, analysed with the binomial and the correlated likelihood.

    Draws eps and s from ``prior`` and the error rates ``(alpha_i, beta_i)`` of ``n_bases``
    bases uniformly on R_s(eps, delta), as the model says. Base i is a loss-based membership
    test: the loss of z is N(0, 1) without z and N(mu_i, 1) with it, ``mu_i`` chosen so that the
    exact test at type-I error ``alpha_i`` has type-II error ``beta_i``. Its counts come from the
    cross-fed measurement (:func:`mia.cross_fed_counts`, paper Alg. 5) with ``n_models`` models
    per hypothesis, so every decision of a base uses nearly the same fitted normals: the counts
    are over-dispersed and correlated. The same counts are then analysed with the binomial and
    the bivariate-normal likelihood under ``prior``.

    Parameters
    ----------
    seed : int or numpy.random.Generator, optional
        Random seed (simulation and sampler).
    prior : bayes_dp.Prior, optional
        Default ``Prior(eps=HalfNormal(3), s=Beta(2, 2))``.
    delta : float, default 1e-5
    n_bases : int, default 10
    n_models : int, default 100
        Models per hypothesis and base.
    chains, draws, tune : int
        Sampler settings (per likelihood).

    Returns
    -------
    dict
        ``{"binomial": (lower, upper, eps), "bivariate_normal": (lower, upper, eps)}``: the 90%
        equal-tailed interval of eps and the true eps.
    """
    rng = as_generator(seed)
    prior = CROSS_FED_PRIOR if prior is None else prior
    if not isinstance(prior, bdp.Prior):
        raise TypeError(f"`prior` must be a bayes_dp.Prior; found {prior!r}")
    delta = check_delta(delta)
    n_bases = check_positive_int("n_bases", n_bases)
    n_models = check_positive_int("n_models", n_models, minimum=3)
    eps_true, counts = _cross_fed_counts(rng, prior, delta, n_bases, n_models)
    out = {}
    for name in LIKELIHOODS:
        post = bdp.estimate_epsilon(
            bdp.Evidence(counts, likelihood=name, name={"binomial": "b"}.get(name, "c")),
            delta=delta,
            prior=prior,
            chains=chains,
            draws=draws,
            tune=tune,
            seed=rng,
            cores=1,
            check=False,
        )
        lo, hi = post.interval(0.9)
        out[name] = (lo, hi, eps_true)
    return out


def cross_fed_coverage(
    n_reps: int = 200, *, seed=None, n_jobs: int = 1, **kwargs
) -> CoverageResult:
    """Coverage of the true eps by the 90% intervals of both likelihoods over ``n_reps`` audits.

    Since eps is drawn from the prior that the analysis uses, a calibrated posterior covers it in
    90% of the audits; the binomial likelihood, which treats the correlated decisions as
    independent, covers less often (``docs/validation/correlated.md``).

    Parameters
    ----------
    n_reps : int, default 200
        Number of simulated audits.
    seed : int or numpy.random.Generator, optional
        Random seed of the replicates (see :func:`bayes_dp.evaluation.calibration.coverage_study`).
    n_jobs : int, default 1
        Parallel joblib workers.
    **kwargs
        Passed on to :func:`cross_fed_audit` (``prior``, ``n_bases``, ``draws``, ...).

    Returns
    -------
    bayes_dp.evaluation.calibration.CoverageResult
        Labels ``"binomial"`` and ``"bivariate_normal"``; the target is the true eps.
    """
    return coverage_study(
        functools.partial(cross_fed_audit, **kwargs), n_reps, seed=seed, n_jobs=n_jobs
    )


# -- score matrices of the Gaussian mechanism ------------------------------------------------------
def score_matrix_audit(
    seed=None,
    *,
    mu: float,
    n_models: int = 64,
    n_targets: int = 16,
    alpha: float = 0.1,
    delta: float = 1e-5,
    method: str = "online",
    fixed_variance: bool = False,
    likelihood: str = "bivariate_normal",
    chains: int = 2,
    draws: int = 1000,
    tune: int = 500,
    mechanism: str = "gaussian",
    model_shift: float = 0.0,
    dependence: str = "ignore",
    reflect: bool = True,
    prior=None,
) -> dict:
    """One audit of a mechanism of known eps with shift ``mu`` through a simulated score matrix.

    ``mechanism="gaussian"``: a model's score of a target is N(0, 1) when the target is OUT and
    N(mu, 1) when it is IN, so the mechanism's eps(delta) is known
    (:func:`mia.canary.gaussian_mechanism_epsilon` with sensitivity ``mu``).
    ``mechanism="laplace"``: Laplace(0, 1) OUT and Laplace(mu, 1) IN, the Laplace mechanism,
    mu-DP, whose eps(delta) is mu + 2 log(1 - delta) (its privacy profile is
    delta(eps) = 1 - e^((eps - mu) / 2)). ``model_shift`` > 0 adds to every score of model m
    the same N(0, model_shift^2) draw (a per-model effect shared by all targets: it does not
    depend on any target's membership, so eps is unchanged, but it correlates the decisions).
    The audit draws a score matrix (each target IN for exactly half of the ``n_models``
    models), counts it (:func:`mia.counts_from_score_matrix` at ``alpha``) and samples the
    posterior of eps with ``likelihood`` under the default prior.

    Parameters
    ----------
    seed : int or numpy.random.Generator, optional
        Random seed (simulation and sampler).
    mu : float
        Shift of the IN scores (sensitivity / sigma), > 0.
    n_models, n_targets : int
        Size of the score matrix.
    alpha : float, default 0.1
        Level of the membership test.
    delta : float, default 1e-5
    method : str, default "online"
        Test of :func:`mia.counts_from_score_matrix`.
    fixed_variance : bool, default False
    likelihood : str, default "bivariate_normal"
        Likelihood of the counts (:meth:`mia.ScoreMatrixCounts.to_evidence`). The study's
        default stays the correlated eq. 7, the likelihood its first table was measured with;
        ``"binomial"`` is what ``to_evidence()`` gives by default (``docs/validation/lira.md``, "How
        over-confident is the binomial?", compares the two).
    chains, draws, tune : int
        Sampler settings.
    mechanism : {"gaussian", "laplace"}, default "gaussian"
    model_shift : float, default 0.0
        Standard deviation of the per-model shift of the scores.
    dependence : {"ignore", "correct"}, default "ignore"
        ``"ignore"``: the likelihood sees the raw pooled counts. ``"correct"``: it sees the
        effective counts (:func:`mia.effective_counts`, the counts deflated by their design
        effects) and the evidence records ``corrected=True``.
    reflect : bool, default True
        ``False``: the decisions as made (``bayes_dp.Evidence(reflect=False)``).
    prior : bayes_dp.Prior, optional
        Prior of the analysis (default ``bayes_dp.Prior()``).

    Returns
    -------
    dict
        ``"true_eps"``: (lower, upper, true eps) with the 90% equal-tailed interval;
        ``"visible_eps"``: the same interval against the eps visible to a level-``alpha`` test
        (the tightest (eps, delta) region through the exact test's error point
        ``(alpha, beta(alpha))``); and the numbers ``"median"`` (posterior median of eps),
        ``"fpr"`` and ``"fnr"`` (pooled error rates of the counts), ``"width"`` (of the 90%
        interval), ``"max_r_hat"`` (the largest r_hat of the run, so a study can report
        audits whose chains did not mix), ``"above_truth"`` (1.0 when the interval lies
        entirely above the true eps, a false accusation, else 0.0: a number, so that
        :func:`~bayes_dp.evaluation.calibration.coverage_study` averages it), the counts'
        ``"fp_design_effect"`` and ``"fn_design_effect"``, ``"first_lower"`` (where the
        sampler sampled again from a mode at eps ~ 0 its first chains missed,
        ``settings["mode_restart"]``, those chains' 5% quantile of eps; else nan: a number, so
        that :func:`~bayes_dp.evaluation.calibration.coverage_study` keeps it)
        (:class:`mia.dependence.DependenceDiagnostic`), and what
        :func:`bayes_dp.audit_claim` states at 95%: ``"claim_lower"`` (its lower end, the
        frequentist bound),
        ``"frequentist_lower"`` (that bound: the larger of the per-target Clopper-Pearson
        bound on effective counts, ``"target_lower"``, and the bound pooled over targets,
        ``"pooled_lower"``, None without per-model rates) and ``"claim_above_truth"``
        (1.0 when ``claim_lower`` is above the true eps, else 0.0); ``"claim_interval"``
        (lower, upper, true eps) of :attr:`bayes_dp.results.claim.AuditClaim.interval`, the
        interval the summary line prints, its upper end ``inf`` where the line prints none (a
        triple like ``"true_eps"``, so that
        :func:`~bayes_dp.evaluation.calibration.coverage_study` reports the printed line's
        coverage);
        ``"claim_ceiling"``, the
        largest value the per-target bound can take on this design (the bound, on raw
        counts at the full Bonferroni level, of a target with no error in the most trials
        any target has: the per-target bound is never above it, ``docs/validation/lira.md``, "The
        claim's ceiling"; the pooled bound can be), and
        ``"uncorrected_lower"``, the largest per-target bound on raw counts with each target's
        two rates at 95% jointly and no correction over targets (a control: the claim without
        its multiplicity correction and deflation).
    """
    from bayes_dp.core.region import clopper_pearson_target_bounds

    from .canary import gaussian_mechanism_epsilon
    from .dependence import effective_counts
    from .scores import counts_from_score_matrix, simulate_score_matrix

    rng = as_generator(seed)
    mu = check_real("mu", mu, low=0.0, low_open=True)
    model_shift = check_real("model_shift", model_shift, low=0.0)
    if mechanism not in ("gaussian", "laplace"):
        raise ValueError(f"`mechanism` must be 'gaussian' or 'laplace'; found {mechanism!r}")
    if dependence not in ("ignore", "correct"):
        raise ValueError(f"`dependence` must be 'ignore' or 'correct'; found {dependence!r}")
    scores, keep = simulate_score_matrix(n_models, n_targets, mu, seed=rng)
    if mechanism == "laplace":
        scores = rng.laplace(0.0, 1.0, keep.shape) + mu * keep
    if model_shift > 0:
        scores = scores + rng.normal(0.0, model_shift, (n_models, 1))
    res = counts_from_score_matrix(scores, keep, alpha, method, fixed_variance=fixed_variance)
    if dependence == "correct":
        evidence = bdp.Evidence(
            effective_counts(res.counts, res.dependence),
            likelihood=likelihood,
            reflect=reflect,
            name="lira",
            dependence={**res.dependence.to_dict(), "corrected": True},
        )
    else:
        evidence = res.to_evidence(name="lira", likelihood=likelihood, reflect=reflect)
    post = bdp.estimate_epsilon(
        evidence,
        delta=delta,
        chains=chains,
        draws=draws,
        tune=tune,
        seed=rng,
        cores=1,
        check=False,
        prior=prior,
    )
    lo, hi = post.interval(0.9, "eps")
    claim = bdp.audit_claim(post, 0.95)
    c = res.counts
    # the exact test's error point (alpha, beta(alpha)) of N(0, 1) vs N(mu, 1)
    if mechanism == "gaussian":
        beta = stats.norm.cdf(stats.norm.isf(alpha) - mu)
        truth = gaussian_mechanism_epsilon(1.0, delta, sensitivity=mu)
    else:  # the likelihood-ratio test of Laplace(0, 1) vs Laplace(mu, 1) at level alpha
        beta = stats.laplace.cdf(stats.laplace.isf(alpha) - mu)
        truth = mu + 2.0 * np.log1p(-delta)
    visible = float(bdp.classical_epsilon(alpha, beta, delta))
    return {
        "true_eps": (lo, hi, truth),
        "visible_eps": (lo, hi, visible),
        "median": float(np.median(post.draws("eps"))),
        "fpr": float(c.fp.sum() / c.n_neg.sum()),
        "fnr": float(c.fn.sum() / c.n_pos.sum()),
        "width": hi - lo,
        "max_r_hat": max(d["r_hat"] for d in post.diagnostics().values()),
        "above_truth": float(lo > truth),
        "fp_design_effect": res.dependence.fp_design_effect,
        "fn_design_effect": res.dependence.fn_design_effect,
        "first_lower": (
            np.nan
            if post.settings.get("mode_restart") is None
            else float(post.settings["mode_restart"]["first_eps_quantiles"][0])
        ),
        "claim_lower": claim.lower,
        "frequentist_lower": claim.frequentist_lower,
        "target_lower": claim.frequentist["target_lower"],
        "pooled_lower": (claim.frequentist["pooled"] or {}).get("eps"),
        "claim_above_truth": float(claim.lower > truth),
        "claim_interval": (
            claim.interval[0],
            np.inf if claim.interval[1] is None else claim.interval[1],
            truth,
        ),
        "claim_ceiling": float(
            clopper_pearson_target_bounds(
                0, int(c.n_neg.max()), 0, int(c.n_pos.max()), delta, 0.95, n_rates=2 * len(c)
            )[0]
        ),
        "uncorrected_lower": max(
            float(clopper_pearson_target_bounds(*row, delta, 0.95, reflect=False)[0])
            for row in zip(c.fp, c.n_neg, c.fn, c.n_pos, strict=True)
        ),
    }


def score_matrix_coverage(
    mus: Sequence[float] = (0.5, 1.0, 2.0),
    n_audits: int = 50,
    *,
    seed=None,
    n_jobs: int = 1,
    **kwargs,
) -> dict[float, CoverageResult]:
    """Coverage of the true and the visible eps over ``n_audits`` audits for every ``mu``.

    Parameters
    ----------
    mus : sequence of float, default (0.5, 1.0, 2.0)
        Shifts of the Gaussian mechanism.
    n_audits : int, default 50
        Audits per ``mu``.
    seed : int or numpy.random.Generator, optional
        Random seed; every ``mu`` gets its own spawned generator.
    n_jobs : int, default 1
        Parallel joblib workers.
    **kwargs
        Passed on to :func:`score_matrix_audit` (``n_targets``, ``alpha``, ``draws``, ...).

    Returns
    -------
    dict of float to bayes_dp.evaluation.calibration.CoverageResult
        Labels ``"true_eps"``, ``"visible_eps"`` and ``"claim_interval"`` (the printed line);
        ``stats`` holds ``median``, ``fpr`` and
        ``fnr`` per audit.
    """
    mus = [check_real("mus", m, low=0.0, low_open=True) for m in np.atleast_1d(mus).tolist()]
    if not mus:
        raise ValueError("`mus` must hold at least one shift; found none")
    rngs = as_generator(seed).spawn(len(mus))
    return {
        mu: coverage_study(
            functools.partial(score_matrix_audit, mu=mu, **kwargs),
            n_audits,
            seed=rng,
            n_jobs=n_jobs,
        )
        for mu, rng in zip(mus, rngs, strict=True)
    }
