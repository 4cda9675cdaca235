"""Calibration studies: simulation-based calibration (SBC) and interval coverage.

Both run a *replicate* function many times, each call with its own random generator (derived
from ``seed``, so results do not depend on ``n_jobs``), in parallel through joblib:

* :func:`run_sbc`: each replicate draws the truth from the prior, data from the model, and returns
  the truth with posterior draws; the result holds the rank of the truth among the draws and
  whether the central interval covers it (:class:`SBCResult`). A calibrated posterior gives
  uniform ranks and nominal coverage (Talts et al. 2018).
* :func:`coverage_study`: each replicate returns ``(lower, upper, target)`` triples, the result
  counts hits with exact binomial (Clopper-Pearson) intervals (:class:`CoverageResult`); this is
  for a truth that is not drawn from the prior (a fixed mechanism), or for comparing analyses.

:func:`sbc_replicate` is the replicate of the package's own model: parameters from a
:class:`~bayes_dp.Prior`, counts from :func:`bayes_dp.core.simulate.simulate_counts`, a posterior
from
:func:`bayes_dp.estimate_epsilon`. Studies that need attacks (cross-fed counts, LiRA score
matrices) live in :mod:`mia.coverage`.

It is long because it holds both validation studies (simulation-based calibration and coverage) with
their result classes and tests of uniformity.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from bayes_dp.core.likelihoods import rho_max
from bayes_dp.core.region import clopper_pearson_interval
from bayes_dp.core.validation import as_generator, check_positive_int, check_real

__all__ = ["CoverageResult", "SBCResult", "coverage_study", "run_sbc", "sbc_replicate"]


# -- running replicates ----------------------------------------------------------------------------
def _check_n_jobs(n_jobs) -> int:
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
        raise ValueError(f"`n_jobs` must be a non-zero integer (-1: all cores); found {n_jobs!r}")
    return int(n_jobs)


def _replicate_generators(n: int, *, seed) -> list[np.random.Generator]:
    """Return the generators of ``n`` replicates.

    They are ``default_rng(w_i)`` for the words ``w_i`` of
    ``SeedSequence(seed).generate_state(n)``; a Generator contributes the seed sequence of a
    freshly spawned child, so passing the same Generator twice gives new replicates.
    """
    given = isinstance(seed, np.random.Generator)
    rng = as_generator(seed)
    ss = (rng.spawn(1)[0] if given else rng).bit_generator.seed_seq
    return [np.random.default_rng(int(w)) for w in ss.generate_state(n)]


def _run(fn, args_list, n_jobs: int) -> list:
    if n_jobs == 1 or len(args_list) <= 1:
        return [fn(*a) for a in args_list]
    from joblib import Parallel, delayed

    return Parallel(n_jobs=n_jobs)(delayed(fn)(*a) for a in args_list)


def _check_replicate(replicate) -> None:
    if not callable(replicate):
        raise TypeError(f"`replicate` must be callable with a Generator; found {replicate!r}")


# -- coverage --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CoverageResult:
    """Intervals and targets of the replicates of a coverage study, by label.

    Attributes
    ----------
    lower, upper, target : dict of str to numpy.ndarray
        Interval ends and the value each interval should cover, one entry per replicate.
    stats : dict of str to numpy.ndarray
        Other per-replicate numbers the replicates returned (e.g. error rates).

    Examples
    --------
    >>> r = CoverageResult({"a": np.array([0.0, 0.0, 2.0])}, {"a": np.array([1.0, 1.0, 3.0])},
    ...                    {"a": np.array([0.5, 1.5, 2.5])})
    >>> r.rate("a"), r.above("a"), r.n_reps
    (0.666..., 0.333..., 3)
    """

    lower: dict
    upper: dict
    target: dict
    stats: dict = field(default_factory=dict)

    @property
    def labels(self) -> list[str]:
        """The interval labels, in the order the replicates returned them."""
        return list(self.lower)

    @property
    def n_reps(self) -> int:
        """Number of replicates."""
        first = next(iter(self.lower.values()), np.empty(0))
        return int(first.size)

    def _get(self, label: str, table: dict) -> np.ndarray:
        if label not in table:
            raise ValueError(f"`label` must be one of {self.labels}; found {label!r}")
        return table[label]

    def hits(self, label: str) -> np.ndarray:
        """Whether each replicate's interval covers its target (``lower <= target <= upper``)."""
        t = self._get(label, self.target)
        return (self.lower[label] <= t) & (t <= self.upper[label])

    def rate(self, label: str) -> float:
        """Fraction of replicates whose interval covers the target."""
        return float(np.mean(self.hits(label)))

    def ci(self, label: str, confidence: float = 0.95) -> tuple[float, float]:
        """Exact (Clopper-Pearson) interval of the coverage probability.

        Parameters
        ----------
        label : str
        confidence : float, default 0.95
            Confidence level in (0, 1).

        Returns
        -------
        tuple of float
        """
        confidence = check_real(
            "confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True
        )
        h = self.hits(label)
        lo, hi = clopper_pearson_interval(int(h.sum()), h.size, confidence)
        return float(lo), float(hi)

    def below(self, label: str) -> float:
        """Fraction of replicates whose target lies below the interval (``target < lower``)."""
        return float(np.mean(self._get(label, self.target) < self.lower[label]))

    def above(self, label: str) -> float:
        """Fraction of replicates whose target lies above the interval (``target > upper``)."""
        return float(np.mean(self._get(label, self.target) > self.upper[label]))

    def width(self, label: str) -> float:
        """Median interval width."""
        return float(np.median(self.upper[label] - self._get(label, self.lower)))

    def summary(self, confidence: float = 0.95) -> dict[str, dict[str, object]]:
        """Coverage, its interval, misses below/above and median width for every label."""
        return {
            k: {
                "coverage": self.rate(k),
                "ci": self.ci(k, confidence),
                "below": self.below(k),
                "above": self.above(k),
                "width": self.width(k),
            }
            for k in self.labels
        }


def _coverage_rows(out, i: int) -> tuple[dict, dict]:
    if not isinstance(out, Mapping) or not out:
        raise TypeError(
            "`replicate` must return a non-empty mapping of label -> (lower, upper, target) "
            f"(or label -> number); replicate {i} returned {out!r}"
        )
    intervals, extra = {}, {}
    for key, v in out.items():
        if isinstance(v, numbers.Real) and not isinstance(v, bool):
            extra[key] = float(v)
            continue
        try:
            lo, hi, t = (float(x) for x in v)
        except (TypeError, ValueError):
            raise TypeError(
                f"`replicate` must return (lower, upper, target) or a number for each label; "
                f"replicate {i} returned {v!r} for {key!r}"
            ) from None
        if not lo <= hi:
            raise ValueError(f"replicate {i}: interval {key!r} has lower {lo} > upper {hi}")
        intervals[key] = (lo, hi, t)
    if not intervals:
        raise ValueError(f"replicate {i} returned no (lower, upper, target) interval")
    return intervals, extra


def _collect_coverage(outs: list) -> CoverageResult:
    rows = [_coverage_rows(o, i) for i, o in enumerate(outs)]
    keys, extra_keys = list(rows[0][0]), list(rows[0][1])
    for i, (iv, ex) in enumerate(rows):
        if list(iv) != keys or list(ex) != extra_keys:
            raise ValueError(
                f"every replicate must return the same labels; replicate 0 gave "
                f"{keys + extra_keys}, replicate {i} {list(iv) + list(ex)}"
            )
    arr = {k: np.array([r[0][k] for r in rows], dtype=float) for k in keys}
    return CoverageResult(
        {k: a[:, 0] for k, a in arr.items()},
        {k: a[:, 1] for k, a in arr.items()},
        {k: a[:, 2] for k, a in arr.items()},
        {k: np.array([r[1][k] for r in rows], dtype=float) for k in extra_keys},
    )


def coverage_study(
    replicate: Callable[[np.random.Generator], Mapping],
    n_reps: int,
    *,
    seed=None,
    n_jobs: int = 1,
) -> CoverageResult:
    """Run ``replicate`` ``n_reps`` times and collect its intervals and targets.

    Parameters
    ----------
    replicate : callable
        Called as ``replicate(rng)`` with its own ``numpy.random.Generator``; returns a mapping
        of label to ``(lower, upper, target)`` (an interval and the value it should cover), and
        optionally label to a number (kept in ``stats``). Every replicate returns the same labels.
        With ``n_jobs != 1`` it must be picklable (a module-level function or a
        ``functools.partial`` of one).
    n_reps : int
        Number of replicates (>= 1).
    seed : int or numpy.random.Generator, optional
        Replicate ``i`` gets ``numpy.random.default_rng(w[i])``, ``w`` the words of
        ``SeedSequence(seed).generate_state(n_reps)`` (a Generator seeds a freshly spawned
        child sequence), so results do not depend on ``n_jobs``.
    n_jobs : int, default 1
        Parallel joblib workers (-1: all cores).

    Returns
    -------
    CoverageResult

    Examples
    --------
    A 90% interval for a normal mean with known variance covers in about 90% of replicates:

    >>> def rep(rng):
    ...     x = rng.normal(1.0, 1.0, 25)
    ...     half = 1.6449 / 5
    ...     return {"mean": (x.mean() - half, x.mean() + half, 1.0)}
    >>> r = coverage_study(rep, 400, seed=0)
    >>> r.rate("mean"), [round(v, 3) for v in r.ci("mean")]
    (0.915, [0.883, 0.94])
    """
    _check_replicate(replicate)
    n_reps = check_positive_int("n_reps", n_reps)
    n_jobs = _check_n_jobs(n_jobs)
    outs = _run(replicate, [(g,) for g in _replicate_generators(n_reps, seed=seed)], n_jobs)
    return _collect_coverage(outs)


# -- simulation-based calibration ------------------------------------------------------------------
@dataclass(frozen=True)
class SBCResult:
    """Ranks of the truth among the posterior draws, and coverage of central intervals.

    Attributes
    ----------
    ranks : dict of str to numpy.ndarray of int
        Per variable and replicate, the number of (thinned) posterior draws below the truth.
    n_ranked : dict of str to numpy.ndarray of int
        The number L of thinned draws each rank is out of (the rank lies in 0..L).
    coverage : CoverageResult
        The central ``level`` interval of all draws of each variable against its truth; its
        ``stats`` hold the numbers the replicates reported besides (:attr:`stats`).
    level : float
        Probability of the central intervals.
    """

    ranks: dict
    n_ranked: dict
    coverage: CoverageResult
    level: float

    @property
    def names(self) -> list[str]:
        """The calibrated variables."""
        return list(self.ranks)

    @property
    def n_reps(self) -> int:
        """Number of replicates."""
        return self.coverage.n_reps

    @property
    def stats(self) -> dict:
        """Per replicate, the numbers the replicates returned besides the draws (name -> array)."""
        return self.coverage.stats

    def _check(self, name: str) -> str:
        if name not in self.ranks:
            raise ValueError(f"`name` must be one of {self.names}; found {name!r}")
        return name

    def normalised_ranks(self, name: str) -> np.ndarray:
        """Ranks mapped into (0, 1) as ``(rank + 0.5) / (L + 1)``; uniform when calibrated."""
        self._check(name)
        return (self.ranks[name] + 0.5) / (self.n_ranked[name] + 1.0)

    def uniformity(self, name: str, *, method: str = "chi2", bins: int = 10) -> float:
        """p-value of a test that the ranks of ``name`` are uniform.

        Parameters
        ----------
        name : str
            Variable.
        method : {"chi2", "ks"}
            ``"chi2"``: Pearson's test on ``bins`` equal-width bins of the normalised ranks, with
            the expected counts exact for the discrete uniform law of each rank on 0..L.
            ``"ks"``: Kolmogorov-Smirnov test of the normalised ranks against U(0, 1) (slightly
            conservative: the ranks are discrete).
        bins : int, default 10
            Number of bins for ``"chi2"`` (>= 2).

        Returns
        -------
        float
        """
        u = self.normalised_ranks(name)
        if method == "ks":
            return float(stats.kstest(u, "uniform").pvalue)
        if method != "chi2":
            raise ValueError(f"`method` must be 'chi2' or 'ks'; found {method!r}")
        bins = check_positive_int("bins", bins, minimum=2)
        observed = np.bincount(np.minimum((u * bins).astype(int), bins - 1), minlength=bins)
        expected = np.zeros(bins)
        for n_l in np.unique(self.n_ranked[name]):
            mids = (np.arange(n_l + 1) + 0.5) / (n_l + 1.0)
            share = np.bincount(np.minimum((mids * bins).astype(int), bins - 1), minlength=bins)
            expected += np.sum(self.n_ranked[name] == n_l) * share / (n_l + 1.0)
        return float(stats.chisquare(observed, expected).pvalue)


def _draws_of(posterior, names) -> dict[str, np.ndarray]:
    if hasattr(posterior, "var_names") and callable(getattr(posterior, "draws", None)):
        return {v: np.asarray(posterior.draws(v)) for v in names if v in posterior.var_names}
    if isinstance(posterior, Mapping):
        return {v: np.asarray(posterior[v]) for v in names if v in posterior}
    raise TypeError(
        "`replicate` must return (truth, draws) with draws a mapping of name -> array or a "
        f"bayes_dp.Posterior; found {type(posterior).__name__}"
    )


def _sbc_one(replicate, rng, level: float, thin: int) -> tuple[dict, dict]:
    """Return the rank, ranked draws and interval of each variable, and the replicate's stats.

    The stats are the numbers the replicate reported besides the draws (its third element).
    """
    out = replicate(rng)
    try:
        truth, posterior, *extra = out
    except (TypeError, ValueError):
        raise TypeError(
            f"`replicate` must return (truth, draws) or (truth, draws, stats); found "
            f"{type(out).__name__}"
        ) from None
    if len(extra) > 1:
        raise TypeError(
            f"`replicate` must return (truth, draws) or (truth, draws, stats); found a tuple "
            f"of {2 + len(extra)}"
        )
    if not isinstance(truth, Mapping):
        raise TypeError(f"the truth returned by `replicate` must be a mapping; found {truth!r}")
    extra = extra[0] if extra else {}
    if not isinstance(extra, Mapping) or not all(
        isinstance(v, numbers.Real) and not isinstance(v, bool) for v in extra.values()
    ):
        raise TypeError(
            f"the stats returned by `replicate` must map names to numbers; found {extra!r}"
        )
    rows = {}
    for v, x in _draws_of(posterior, list(truth)).items():
        x = x.astype(float).ravel()
        if x.size == 0 or not np.all(np.isfinite(x)):
            raise ValueError(f"the draws of {v!r} must be finite and non-empty")
        t = float(truth[v])
        xt = x[::thin]
        lo, hi = np.quantile(x, [(1 - level) / 2, (1 + level) / 2])
        rows[v] = (int(np.sum(xt < t)), int(xt.size), float(lo), float(hi), t)
    if not rows:
        raise ValueError(
            f"no variable of the truth {sorted(truth)} is among the draws returned by `replicate`"
        )
    return rows, {k: float(v) for k, v in extra.items()}


def run_sbc(
    replicate: Callable[[np.random.Generator], tuple],
    n_reps: int,
    *,
    seed=None,
    n_jobs: int = 1,
    level: float = 0.9,
    thin: int = 1,
) -> SBCResult:
    """Simulation-based calibration: ranks of the truth and coverage over ``n_reps`` replicates.

    Parameters
    ----------
    replicate : callable
        Called as ``replicate(rng)`` with its own ``numpy.random.Generator``; draws the truth from
        the prior and data from the model, fits, and returns ``(truth, draws)``: ``truth`` maps
        variable names to the true values, ``draws`` is a mapping of name to posterior draws
        (any shape) or a :class:`bayes_dp.Posterior`. Variables of ``truth`` missing from the
        draws are skipped; every replicate must give the same variables. It may return a third
        element, a mapping of name to number (e.g. the effective sample size or the seconds of
        the fit), kept per replicate in ``SBCResult.stats``. See :func:`sbc_replicate`. Must be
        picklable when ``n_jobs != 1``.
    n_reps : int
        Number of replicates (>= 1).
    seed : int or numpy.random.Generator, optional
        Replicate ``i`` gets ``numpy.random.default_rng(w[i])``, ``w`` the words of
        ``SeedSequence(seed).generate_state(n_reps)`` (a Generator seeds a freshly spawned
        child sequence), so results do not depend on ``n_jobs``.
    n_jobs : int, default 1
        Parallel joblib workers (-1: all cores).
    level : float, default 0.9
        Probability of the central (equal-tailed) interval whose coverage is recorded.
    thin : int, default 1
        Rank the truth among every ``thin``-th draw only (fewer, less correlated draws; MCMC
        autocorrelation makes ranks of all draws non-uniform).

    Returns
    -------
    SBCResult

    Examples
    --------
    Exact posterior draws of a normal mean under a normal prior are calibrated:

    >>> def rep(rng):
    ...     mu = rng.normal()                 # prior N(0, 1)
    ...     x = rng.normal(mu, 1.0, 4)        # data
    ...     post = rng.normal(x.sum() / 5, 1 / np.sqrt(5), 99)
    ...     return {"mu": mu}, {"mu": post}
    >>> r = run_sbc(rep, 300, seed=0)
    >>> r.uniformity("mu") > 0.01, 0.85 < r.coverage.rate("mu") < 0.95
    (True, True)
    """
    _check_replicate(replicate)
    n_reps = check_positive_int("n_reps", n_reps)
    n_jobs = _check_n_jobs(n_jobs)
    level = check_real("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
    thin = check_positive_int("thin", thin)
    outs = _run(
        _sbc_one,
        [(replicate, g, level, thin) for g in _replicate_generators(n_reps, seed=seed)],
        n_jobs,
    )
    names, extra_names = list(outs[0][0]), list(outs[0][1])
    for i, (o, e) in enumerate(outs):
        if list(o) != names or list(e) != extra_names:
            raise ValueError(
                f"every replicate must give the same variables and stats; replicate 0 gave "
                f"{names} and {extra_names}, replicate {i} {list(o)} and {list(e)}"
            )
    cols = {v: np.array([o[v] for o, _ in outs], dtype=float) for v in names}
    return SBCResult(
        ranks={v: c[:, 0].astype(np.int64) for v, c in cols.items()},
        n_ranked={v: c[:, 1].astype(np.int64) for v, c in cols.items()},
        coverage=CoverageResult(
            {v: c[:, 2] for v, c in cols.items()},
            {v: c[:, 3] for v, c in cols.items()},
            {v: c[:, 4] for v, c in cols.items()},
            {k: np.array([e[k] for _, e in outs], dtype=float) for k in extra_names},
        ),
        level=level,
    )


# -- the package's own model ---------------------------------------------------------------------
def sbc_replicate(
    seed=None,
    *,
    prior=None,
    delta: float = 1e-5,
    n_neg=1000,
    n_pos=1000,
    likelihood: str = "bivariate_normal",
    reflect: bool = True,
    chains: int = 2,
    draws: int = 2000,
    tune: int = 1000,
    **estimate_kwargs,
) -> tuple[dict[str, float], object]:
    """One SBC replicate of the package's model: truth from the prior, counts, posterior.

    Draws eps and s from ``prior``, for a correlated likelihood tau from ``prior.tau`` and (for
    the bivariate normal) rho uniformly on its admissible interval, then each base's error pair
    (alpha, beta) uniformly on R_s(eps, delta) (:func:`bayes_dp.core.simulate.sample_band`,
    exact at any area), its counts from the likelihood, and the posterior from
    :func:`bayes_dp.estimate_epsilon` (one core, no convergence check). Use it as
    ``run_sbc(functools.partial(sbc_replicate, prior=..., ...), n_reps)``.

    With ``likelihood="exposure_mixture"`` it draws pi ~ Beta(PI_PRIOR) and kappa = KAPPA_MIN^u,
    u ~ Beta(KAPPA_PRIOR) (:mod:`bayes_dp.core.likelihoods`), then each base independently:
    exposed with probability pi (error pair uniform on R_s(eps, delta)), else unexposed
    (uniform on R(kappa eps, delta), delta not scaled), and binomial counts. With
    ``reflect=False`` every error pair is drawn from the lower-left half {alpha + beta <= 1} of
    its region (the decisions as made, ``Evidence(reflect=False)``), and the fit reads the
    counts so.

    Parameters
    ----------
    seed : int or numpy.random.Generator, optional
        Random seed (simulation and sampler).
    prior : bayes_dp.Prior, optional
        Prior of eps, s (and tau) of the simulation and of the analysis (default ``Prior()``);
        the mixture's pi and kappa have the package's fixed priors.
    delta : float, default 1e-5
    n_neg, n_pos : int or array_like of int, default 1000
        Challenges per hypothesis of each base (their length sets the number of bases).
    likelihood : {"binomial", "bivariate_normal", "beta_binomial", "exposure_mixture"}
    reflect : bool, default True
        Whether the error pairs may lie in the reflected half of the band (the paper's model)
        or in the lower-left half only; ``False`` needs the binomial or the exposure mixture.
    chains, draws, tune : int
        Sampler settings.
    **estimate_kwargs
        Passed on to :func:`bayes_dp.estimate_epsilon` (e.g.
        ``sampler=bdp.MHAAR(integrate_latents=True)``).

    Returns
    -------
    truth : dict of str to float
        ``eps``, ``s`` (unless fixed by the prior), ``tau_x``, ``rho_x`` for the correlated
        likelihoods and ``pi_x``, ``kappa_x`` for the exposure mixture (the group is named
        ``"x"``).
    posterior : bayes_dp.Posterior

    Examples
    --------
    >>> truth, post = sbc_replicate(0, n_neg=[32] * 20, n_pos=[32] * 20,
    ...                             likelihood="exposure_mixture", reflect=False,
    ...                             draws=100, tune=100)  # doctest: +SKIP
    >>> sorted(truth)  # doctest: +SKIP
    ['eps', 'kappa_x', 'pi_x', 's']
    """
    from bayes_dp.core.evidence import Evidence
    from bayes_dp.core.likelihoods import KAPPA_MIN, KAPPA_PRIOR, PI_PRIOR
    from bayes_dp.core.priors import Prior
    from bayes_dp.core.simulate import _simulate, sample_band
    from bayes_dp.inference.estimate import estimate_epsilon

    rng = as_generator(seed)
    prior = Prior() if prior is None else prior
    if not isinstance(prior, Prior):
        raise TypeError(f"`prior` must be a bayes_dp.Prior; found {prior!r}")
    likelihoods = ("binomial", "bivariate_normal", "beta_binomial", "exposure_mixture")
    if likelihood not in likelihoods:
        raise ValueError(f"`likelihood` must be one of {likelihoods}; found {likelihood!r}")
    if not isinstance(reflect, (bool, np.bool_)):
        raise TypeError(f"`reflect` must be True or False; found {reflect!r}")
    reflect = bool(reflect)
    if not reflect and likelihood not in ("binomial", "exposure_mixture"):
        raise ValueError(
            "`reflect=False` needs likelihood 'binomial' or 'exposure_mixture'; found "
            f"{likelihood!r}"
        )
    delta = check_real("delta", delta, low=0.0, high=1.0, high_open=True)
    eps = float(prior.eps.rvs(seed=rng))
    s = float(prior.s) if prior.s_fixed else float(prior.s.rvs(seed=rng))
    truth = {"eps": eps} if prior.s_fixed else {"eps": eps, "s": s}
    tau = rho = 0.0
    if likelihood in ("bivariate_normal", "beta_binomial"):
        tau = float(prior.tau.rvs(seed=rng))
        truth["tau_x"] = tau
    if likelihood == "bivariate_normal":
        n0 = np.atleast_1d(np.asarray(n_neg, dtype=float))
        n1 = np.atleast_1d(np.asarray(n_pos, dtype=float))
        rmax = float(np.min(rho_max(tau, n0, n1)))  # admissible for every base
        rho = float(rng.uniform(-rmax, rmax))
        truth["rho_x"] = rho
    if likelihood == "exposure_mixture":
        pi = float(rng.beta(*PI_PRIOR))
        kappa = float(KAPPA_MIN ** rng.beta(*KAPPA_PRIOR))
        truth["pi_x"], truth["kappa_x"] = pi, kappa

        def rates(n, g):
            exposed = g.random(n) < pi
            alpha, beta = np.empty(n), np.empty(n)
            k = int(exposed.sum())
            alpha[exposed], beta[exposed] = sample_band(eps, s, delta, k, reflect=reflect, seed=g)
            alpha[~exposed], beta[~exposed] = sample_band(
                kappa * eps, 0.0, delta, n - k, reflect=reflect, seed=g
            )
            return alpha, beta

    else:

        def rates(n, g):
            return sample_band(eps, s, delta, n, reflect=reflect, seed=g)

    counts, _, _ = _simulate(rates, n_neg, n_pos, likelihood, tau, rho, rng)
    post = estimate_epsilon(
        Evidence(counts, likelihood=likelihood, name="x", reflect=reflect),
        delta=delta,
        prior=prior,
        chains=chains,
        draws=draws,
        tune=tune,
        seed=rng,
        cores=1,
        check=False,
        **estimate_kwargs,
    )
    return truth, post
