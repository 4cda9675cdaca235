"""``estimate_epsilon``: from attack counts to the posterior of eps (MCMC-DP-Est)."""

from __future__ import annotations

import importlib.metadata
import platform
import warnings

import numpy as np

from . import _progress
from ._sampling import DEFAULT_TUNE, METHODS, SAMPLERS, AutoLength, SamplerSettings  # noqa: F401
from ._validation import as_generator
from .model import Model
from .posterior import Posterior
from .priors import Prior

__all__ = ["estimate_epsilon"]


def estimate_epsilon(
    counts,
    *,
    delta: float,
    prior: Prior | None = None,
    method: str = "exact",
    chains: int = 4,
    draws: int | None = None,
    tune: int | None = None,
    seed=None,
    thin: int | None = None,
    max_time: float | None = None,
    log_likelihood: bool = True,
    progress=None,
    n_aux: int = 16,
    aux_proposal: str = "normal",
    aux_uniform_weight: float = 0.05,
    aux_band_weight: float = 0.0,
    integrate_latents: bool = False,
    target_accept: float = 0.3,
    cores: int | None = None,
    check: bool = True,
) -> Posterior:
    """Sample the posterior of eps (and the attack strengths) from attack error counts.

    The latent error probabilities (alpha_i, beta_i) of each challenge base are a priori
    uniform on the band R(eps, delta) minus R(s eps, s delta).  ``method="exact"`` (default)
    integrates them out of each base's likelihood by quadrature and runs an adaptive
    random-walk Metropolis sampler with a ridge move over (eps, s, tau, rho): no Monte Carlo
    noise in the acceptance ratio, so it mixes at s near 1, for perfect attacks and for
    thousands of bases.  ``method="mhaar"`` runs the paper's Algorithm 1 (Yildirim et al.):
    Metropolis-Hastings with acceptance ratios averaged over K auxiliary pairs per base.
    ``docs/model.md`` compares the two.

    Parameters
    ----------
    counts : AttackCounts, Evidence or list of them
        The observations. Groups with ``strength="own"`` get their own strength ``s_<name>``.
    delta : float
        The known DP delta, in [0, 1).
    prior : Prior, optional
        Priors of eps and s; default ``Prior()`` = HalfNormal(10) and Beta(1, 1).
    method : {"exact", "mhaar"}
        The sampler (see above).
    chains : int
        Number of chains (default 4), run in threads.
    draws : int, optional
        Stored draws per chain.  Default (None): run until every variable has r_hat <= 1.01
        and bulk and tail ESS >= 4,000 (``AUTO_ESS_MIN``), growing the run in rounds (1,000
        draws per chain first, at most 200,000), or until ``max_time`` runs out;
        ``post.converged`` and ``post.settings["stop_reason"]`` say which.  Extending a run
        gives the same draws as asking for its final length at once.  With
        ``method="mhaar"`` the default is a fixed 5,000 draws per chain, judged only by
        ``check`` (``post.converged`` is None).
    tune : int, optional
        Warm-up iterations per chain (default 1,000 exact, 2,000 MHAAR).
    max_time : float, optional
        Time budget in seconds (method "exact"), counted from the start of the sampler's
        set-up (compilation on a first run included). Default: 600 s when ``draws=None``, no
        limit when ``draws`` is given. When it runs out first, the draws so far are returned,
        ``post.converged`` is False and (with ``check``) a
        :class:`~bayes_dp.exceptions.ConvergenceWarning` says so.
    log_likelihood : bool
        Keep each base's log-likelihood (ArviZ's ``log_likelihood`` group, for ``az.loo``);
        exact method only. It is computed after the sampling at evenly thinned draws (at most
        1,000 per chain, fewer for many bases: ``post.settings["log_likelihood_thin"]`` is the
        stride) and stored per distinct base, so its memory does not grow with the run's
        length (``docs/lira.md``). If it cannot be built, the posterior comes without it and
        an :class:`~bayes_dp.exceptions.OutputSkippedWarning` says why.
    progress : None, bool or callable
        Progress of the sampling (method "exact"). None (default): a ``tqdm.auto`` bar (a
        widget in Jupyter) when stderr is a terminal or a notebook kernel runs, shown once the
        run has lasted a second; True: always a bar; False: none; a callable is called as
        ``progress(done, total)`` (iterations of all chains, warm-up included; ``total``
        grows when an automatic-length run is extended) after every chunk of a few hundred
        milliseconds, from the sampler's threads but one call at a time. The bar does not
        change the draws.
    seed : int, numpy.random.Generator or None
        Seeds everything; each chain gets an independent stream (``Generator.spawn``).
    thin : int
        MHAAR iterations per stored draw (default 2): the chain runs ``tune + thin * draws``
        iterations and keeps every ``thin``-th state, so ``draws`` carry more information
        without more memory.
    n_aux : int
        K, auxiliary pairs per challenge base and move (>= 2; the paper used 1000 with uniform
        proposals). With the default likelihood-shaped proposals 8 suffices for the paper's
        10-base case but not for 20 bases, where chains stick (``benchmarks/bench_sampler.py``),
        hence the default 16.
    aux_proposal : {"normal", "likelihood", "uniform"}
        Proposal of the auxiliary pairs of binomial groups: truncated normals shaped like the
        likelihood (default, fastest), the binomial likelihood's Beta shape, or uniform
        (reproduces the paper). Over-dispersed groups use a bivariate normal that follows
        their (tau, rho), mixed with draws from R_s near the data, unless "uniform" is asked
        for (see ``docs/correlated.md``).
    aux_uniform_weight : float
        Weight of the defensive uniform part of the auxiliary proposal, in [0, 1].
    aux_band_weight : float
        Weight, in [0, 1), of the part of the binomial groups' auxiliary proposal that draws
        uniformly from the bands R_s of the current and the proposed state (half each). It
        keeps the averaged acceptance ratio stable when the band is thin (s near 1); 0 gives
        the proposal of ``aux_proposal`` alone. (Over-dispersed groups always have such a
        part, restricted to a box around the data, of weight 0.5.)
    integrate_latents : bool
        For over-dispersed groups ("bivariate_normal", "beta_binomial"), integrate each base's
        latent (alpha, beta) out by quadrature over R_s (adaptive Gauss-Kronrod in the rates'
        standard scores, relative error goal 1e-4) instead of averaging over auxiliary pairs
        (default False). Exact up to the quadrature and with the best mixing per iteration,
        but each integral costs tens of microseconds: about 5x fewer effective draws of eps
        per second on the 20-base benchmark (see ``docs/correlated.md``).
    target_accept : float
        Acceptance rate the warm-up tunes both moves to, in (0, 1).
    cores : int, optional
        Threads for the chains (default: all cores).
    check : bool
        Emit :class:`~bayes_dp.exceptions.ConvergenceWarning` when r_hat > 1.01 or ESS is small,
        or when an automatic-length run stopped before it converged.

    Returns
    -------
    Posterior

    Raises
    ------
    ValueError, TypeError
        For bad input, naming the argument and the value found.
    TimeBudgetError
        When ``max_time`` ran out before the warm-up finished (no draws at all).

    Examples
    --------
    >>> import bayes_dp as bdp
    >>> counts = bdp.AttackCounts(fp=[40, 50], n_neg=1000, fn=[250, 200], n_pos=1000)
    >>> post = bdp.estimate_epsilon(counts, delta=1e-5, prior=bdp.Prior(s=0.6), seed=0)
    >>> post.var_names
    ['eps']
    """
    model = Model.build(counts, delta=delta, prior=prior)
    cfg = SamplerSettings.build(
        method=method,
        chains=chains,
        draws=draws,
        tune=tune,
        thin=thin,
        max_time=max_time,
        log_likelihood=log_likelihood,
        n_aux=n_aux,
        aux_proposal=aux_proposal,
        aux_uniform_weight=aux_uniform_weight,
        aux_band_weight=aux_band_weight,
        integrate_latents=integrate_latents,
        target_accept=target_accept,
        cores=cores,
    )
    progress_owned = progress is None or progress is True  # a bar made here is closed here
    progress = _progress.resolve(progress)  # method "mhaar" shows no progress
    model.check_method(cfg.method)
    rng, seed_record = _generator(seed)
    auto = AutoLength(AUTO_FIRST_DRAWS, AUTO_MAX_DRAWS, AUTO_RHAT_MAX, AUTO_ESS_MIN, AUTO_MAX_TIME)
    out = SAMPLERS[cfg.method](
        model, cfg, rng, auto=auto, progress=progress, progress_owned=progress_owned
    )
    post = _posterior(model, cfg, out, seed_record)
    if check:
        try:
            post.check(stacklevel=2)
            if post.converged is False:
                _warn_not_converged(post, stacklevel=2)
        except Warning:  # warnings turned into errors by a filter are the caller's choice
            raise
        except Exception as e:  # a finished run is never lost to its diagnostics
            from .exceptions import OutputSkippedWarning

            why = f"{type(e).__name__}: {e}"
            msg = f"the convergence check failed ({why}); the draws are returned unchecked"
            warnings.warn(OutputSkippedWarning(msg, output="check", reason=why), stacklevel=2)
    return post


def _generator(seed) -> tuple[np.random.Generator, int | str]:
    """Return the run's Generator, and the seed as recorded.

    The seed is fresh entropy when ``seed`` is None.
    """
    if seed is None:
        # record fresh entropy so that the run can be reproduced
        entropy = np.random.SeedSequence().entropy
        return np.random.default_rng(entropy), entropy
    rng = as_generator(seed)
    return rng, int(seed) if isinstance(seed, (int, np.integer)) else "Generator"


def _posterior(model: Model, cfg: SamplerSettings, out: dict, seed_record) -> Posterior:
    """Build the Posterior of a run.

    Draws are named by the model, settings come from the model and the sampler.
    """
    draws = model.named_draws(out["eps"], out["s"], out["tau"], out["rho"])
    acc = out["accept"]
    if cfg.method == "exact":
        # -1 marks a move not attempted in that iteration (see samplers.exact.advance)
        acc = np.where(acc >= 0, acc, np.nan)
    stats = {"accept_joint": acc[:, :, 0]}
    if not model.s_fixed:
        stats["accept_ridge"] = acc[:, :, 1]
    if cfg.method == "mhaar" and (any(model.tau_free) or any(model.rho_free)):
        stats["accept_overdispersion"] = acc[:, :, 2]
    if cfg.method == "exact" and np.any(np.isfinite(acc[:, :, 2])):
        stats["accept_table"] = acc[:, :, 2]
    rec = cfg.record(out)
    settings = {**model.settings(), "seed": seed_record}
    for key in ("method", "chains", "draws", "draws_requested", "tune", "target_accept"):
        settings[key] = rec.pop(key)
    settings["tuned_scales"] = rec.pop("tuned_scales")
    settings["versions"] = _versions()
    settings.update(rec)
    if cfg.method == "exact" and cfg.log_likelihood:
        # the draws of the log_likelihood group are draws 0, thin, 2 thin, ... of each chain
        settings["log_likelihood_thin"] = out.get("log_lik_thin", 1)
        if out.get("log_lik_skipped"):
            settings["log_likelihood_skipped"] = out["log_lik_skipped"]
    loglik = None if out.get("log_lik") is None else {"counts": out["log_lik"]}
    return Posterior(
        draws, stats, settings, log_likelihood=loglik, log_likelihood_index=out.get("log_lik_index")
    )


def _warn_not_converged(post: Posterior, *, stacklevel: int) -> None:
    """ConvergenceWarning for a run that stopped (time or size limit) before it converged."""
    from .diagnostics import findings
    from .exceptions import ConvergenceWarning, MinorModeWarning

    cls = (
        MinorModeWarning if post.settings.get("stop_reason") == "minor_mode" else ConvergenceWarning
    )
    for f in findings(post):
        if f.kind == "not_converged":
            d = post.diagnostics()[f.var]
            warnings.warn(cls(f.message, var=f.var, **d), stacklevel=stacklevel + 1)


#: Automatic run length of the exact sampler: first round, largest round, the criteria every
#: sampled variable must meet, and the default time budget in seconds.
AUTO_FIRST_DRAWS = 1000
AUTO_MAX_DRAWS = 200_000
AUTO_RHAT_MAX = 1.01
#: ESS target of the automatic run length, bulk and tail.  The issue's bar is ESS_bulk >= 400
#: and quantiles within 1.5 probability points of the exact posterior, but the Monte Carlo sd of
#: F(estimated q-quantile) is sqrt(q (1 - q) / ESS): at 400, 1.1 points at 5%/95% and 2.5 at the
#: median.  At 2,000 a stress row missed at seed 0 (1.61; 0.16 with 4 x 25,000 draws: noise, not
#: bias); 4,000 gives 0.35 points at 5%/95% and 0.8 at the median (docs/model.md).
AUTO_ESS_MIN = 4000
AUTO_MAX_TIME = 600.0


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in ("bayes-dp", "numpy", "scipy", "numba", "arviz"):
        try:
            out[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:  # pragma: no cover
            out[pkg] = "unknown"
    return out
