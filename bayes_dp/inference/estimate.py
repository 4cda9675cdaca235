"""``estimate_epsilon``: from attack counts to the posterior of eps (MCMC-DP-Est)."""

from __future__ import annotations

import warnings

import numpy as np

from bayes_dp.core.exceptions import ConvergenceWarning, MinorModeWarning, OutputSkippedWarning
from bayes_dp.core.priors import Prior
from bayes_dp.core.thresholds import (
    AUTO_ESS_MIN,
    AUTO_FIRST_DRAWS,
    AUTO_MAX_DRAWS,
    AUTO_MAX_TIME,
    RHAT_MAX,
)
from bayes_dp.inference.model import Model
from bayes_dp.inference.progress import resolve as resolve_progress
from bayes_dp.inference.runners import run
from bayes_dp.inference.settings import MHAAR, AutoLength, Exact, SamplerSettings
from bayes_dp.results.diagnostics import findings
from bayes_dp.results.posterior import CountsPosterior
from bayes_dp.results.run_record import _generator, _versions

__all__ = ["estimate_epsilon"]


def estimate_epsilon(
    counts,
    *,
    delta: float,
    prior: Prior | None = None,
    sampler: Exact | MHAAR | None = None,
    chains: int = 4,
    draws: int | None = None,
    tune: int | None = None,
    seed=None,
    max_time: float | None = None,
    log_likelihood: bool = True,
    progress=None,
    cores: int | None = None,
    check: bool = True,
) -> CountsPosterior:
    """Sample the posterior of eps (and the attack strengths) from attack error counts.

    The latent error probabilities (alpha_i, beta_i) of each challenge base are a priori
    uniform on the band R(eps, delta) minus R(s eps, s delta).  ``sampler=bdp.Exact()``
    (default) integrates them out of each base's likelihood by quadrature and runs an adaptive
    random-walk Metropolis sampler with a ridge move over (eps, s, tau, rho): no Monte Carlo
    noise in the acceptance ratio, so it mixes at s near 1, for perfect attacks and for
    thousands of bases.  ``sampler=bdp.MHAAR()`` runs the paper's Algorithm 1 (Yildirim et
    al.): Metropolis-Hastings with acceptance ratios averaged over K auxiliary pairs per base.
    ``docs/validation/model.md`` compares the two.  A one-run audit's accuracy p is a priori
    uniform on [e^(c s eps) / (1 + e^(c s eps)), e^(c eps) / (1 + e^(c eps))] (c = 2 for pairs of
    models) and integrated out exactly (:class:`~bayes_dp.Evidence`, likelihood
    ``"guesses"``); MHAAR refuses such groups (ValueError: it has no auxiliary pairs for them).

    Where each setting lives: the settings object (:class:`~bayes_dp.Exact`,
    :class:`~bayes_dp.MHAAR`) holds how the chains move, i.e. what exists for one method only
    (MHAAR's auxiliary pairs, ``thin``) and the tuning of the moves (``target_accept``), so a
    setting of the other method cannot be given by mistake.  The keywords below are what any
    run is asked for whatever its sampler: chains, length (``draws``, ``tune``, ``max_time``),
    threads, what to keep, seed and checks.  ``tune`` is common to both, with each sampler's
    own default (``default_tune``).

    Parameters
    ----------
    counts : AttackCounts, OneRunCounts, Evidence or list of them
        The observations. Groups with ``strength="own"`` get their own strength ``s_<name>``.
        One-run audits (:class:`~bayes_dp.OneRunCounts`, likelihood ``"guesses"``) join the
        other groups with eps shared; the exact sampler only.
    delta : float
        The known DP delta, in [0, 1).
    prior : Prior, optional
        Priors of eps and s; default ``Prior()`` = HalfNormal(10) and Beta(1, 1).
    sampler : Exact or MHAAR, optional
        The sampler and its settings (default ``bdp.Exact()``; see above).
    chains : int
        Number of chains (default 4), run in threads.
    draws : int, optional
        Stored draws per chain.  Default (None): run until every variable has r_hat <= 1.01
        and bulk and tail ESS >= 4,000 (``AUTO_ESS_MIN``), growing the run in rounds (1,000
        draws per chain first, at most 200,000), or until ``max_time`` runs out;
        ``post.converged`` and ``post.settings["stop_reason"]`` say which.  Extending a run
        gives the same draws as asking for its final length at once.  With
        ``sampler=bdp.MHAAR()`` the default is a fixed 5,000 draws per chain, judged only by
        ``check`` (``post.converged`` is None).
    tune : int, optional
        Warm-up iterations per chain (default: the sampler's ``default_tune``, 1,000 for
        ``Exact``, 2,000 for ``MHAAR``).
    max_time : float, optional
        Time budget in seconds (exact sampler; MHAAR runs its fixed length), counted from the
        start of the sampler's set-up (compilation on a first run included). Default: 600 s
        when ``draws=None``, no limit when ``draws`` is given. When it runs out first, the
        draws so far are returned, ``post.converged`` is False and (with ``check``) a
        :class:`~bayes_dp.core.exceptions.ConvergenceWarning` says so.
    log_likelihood : bool
        Keep each base's log-likelihood (ArviZ's ``log_likelihood`` group, for ``az.loo``);
        exact method only. It is computed after the sampling at evenly thinned draws (at most
        1,000 per chain, fewer for many bases: ``post.settings["log_likelihood_thin"]`` is the
        stride) and stored per distinct base, so its memory does not grow with the run's
        length (``docs/validation/lira.md``). If it cannot be built, the posterior comes without it
        and
        an :class:`~bayes_dp.core.exceptions.OutputSkippedWarning` says why.
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
    cores : int, optional
        Threads for the chains (default: all cores).
    check : bool
        Emit :class:`~bayes_dp.core.exceptions.ConvergenceWarning` when r_hat > 1.01 or ESS is
        small,
        or when an automatic-length run stopped before it converged.

    Returns
    -------
    CountsPosterior

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
        sampler=sampler,
        chains=chains,
        draws=draws,
        tune=tune,
        max_time=max_time,
        log_likelihood=log_likelihood,
        cores=cores,
    )
    progress_owned = progress is None or progress is True  # a bar made here is closed here
    progress = resolve_progress(progress)  # method "mhaar" shows no progress
    model.check_method(cfg.method)
    rng, seed_record = _generator(seed)
    auto = AutoLength(AUTO_FIRST_DRAWS, AUTO_MAX_DRAWS, RHAT_MAX, AUTO_ESS_MIN, AUTO_MAX_TIME)
    out = run(model, cfg, rng, auto=auto, progress=progress, progress_owned=progress_owned)
    post = _posterior(model, cfg, out, seed_record)
    if check:
        try:
            post.check(stacklevel=2)
            if post.converged is False:
                _warn_not_converged(post, stacklevel=2)
        except Warning:  # warnings turned into errors by a filter are the caller's choice
            raise
        except Exception as e:  # a finished run is never lost to its diagnostics
            why = f"{type(e).__name__}: {e}"
            msg = f"the convergence check failed ({why}); the draws are returned unchecked"
            warnings.warn(OutputSkippedWarning(msg, output="check", reason=why), stacklevel=2)
    return post


def _posterior(model: Model, cfg: SamplerSettings, out: dict, seed_record) -> CountsPosterior:
    """Build the Posterior of a run.

    Draws are named by the model, settings come from the model and the sampler.
    """
    draws = model.named_draws(
        out["eps"], out["s"], out["tau"], out["rho"], out.get("pi"), out.get("kappa")
    )
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
    return CountsPosterior(
        draws, stats, settings, log_likelihood=loglik, log_likelihood_index=out.get("log_lik_index")
    )


def _warn_not_converged(post: CountsPosterior, *, stacklevel: int) -> None:
    """ConvergenceWarning for a run that stopped (time or size limit) before it converged."""
    cls = (
        MinorModeWarning if post.settings.get("stop_reason") == "minor_mode" else ConvergenceWarning
    )
    for f in findings(post):
        if f.kind == "not_converged":
            d = post.diagnostics()[f.var]
            warnings.warn(cls(f.message, var=f.var, **d), stacklevel=stacklevel + 1)
