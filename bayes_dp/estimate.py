"""``estimate_epsilon``: from attack counts to the posterior of eps (MCMC-DP-Est)."""

from __future__ import annotations

import importlib.metadata
import platform

import numpy as np

from samplers.mhaar import AUX_PROPOSALS, SamplerConfig, run_mhaar

from . import _progress
from ._validation import as_generator, check_delta, check_positive_int, check_real
from .evidence import Evidence
from .exceptions import TimeBudgetError
from .observations import AttackCounts
from .posterior import Posterior
from .priors import Prior
from .region import classical_epsilon

__all__ = ["estimate_epsilon"]


def _as_groups(counts) -> list[Evidence]:
    if isinstance(counts, AttackCounts):
        return [Evidence(counts, name="counts")]
    if isinstance(counts, Evidence):
        return [counts]
    if isinstance(counts, (list, tuple)):
        if not counts:
            raise ValueError("`counts` is an empty list; give at least one Evidence")
        out = []
        for i, c in enumerate(counts):
            if isinstance(c, AttackCounts):
                c = Evidence(c, name=f"counts{i}")
            if not isinstance(c, Evidence):
                raise TypeError(
                    f"`counts[{i}]` must be an AttackCounts or Evidence; found {type(c).__name__}"
                )
            out.append(c)
        names = [g.name for g in out]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"Evidence names must be unique; found {sorted(dup)} repeated")
        return out
    raise TypeError(
        f"`counts` must be AttackCounts, Evidence or a list of them; found {type(counts).__name__}"
    )


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
        and bulk and tail ESS >= 2,000 (``AUTO_ESS_MIN``), growing the run in rounds (1,000
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
        Store each base's log-likelihood per draw (ArviZ's ``log_likelihood`` group, for
        ``az.loo``); exact method only.
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
    groups = _as_groups(counts)
    delta = check_delta(delta)
    if prior is None:
        prior = Prior()
    if not isinstance(prior, Prior):
        raise TypeError(f"`prior` must be a bayes_dp.Prior; found {type(prior).__name__}")
    if method not in METHODS:
        raise ValueError(f"`method` must be one of {list(METHODS)}; found {method!r}")
    chains = check_positive_int("chains", chains)
    if draws is not None:
        draws = check_positive_int("draws", draws)
    if tune is None:
        tune = DEFAULT_TUNE[method]
    tune = check_positive_int("tune", tune, minimum=0)
    if thin is None:
        thin = 2 if method == "mhaar" else 1
    thin = check_positive_int("thin", thin)
    if method == "exact" and thin != 1:
        raise ValueError(f"`thin` applies to method='mhaar' only; found thin={thin!r}")
    if max_time is not None:
        max_time = check_real("max_time", max_time, low=0.0, low_open=True)
    progress_owned = progress is None or progress is True  # a bar made here is closed here
    progress = _progress.resolve(progress)  # method "mhaar" shows no progress
    if not isinstance(log_likelihood, bool):
        raise TypeError(f"`log_likelihood` must be True or False; found {log_likelihood!r}")
    n_aux = check_positive_int("n_aux", n_aux, minimum=2)
    if aux_proposal not in AUX_PROPOSALS:
        raise ValueError(
            f"`aux_proposal` must be one of {sorted(AUX_PROPOSALS)}; found {aux_proposal!r}"
        )
    aux_uniform_weight = check_real("aux_uniform_weight", aux_uniform_weight, low=0.0, high=1.0)
    aux_band_weight = check_real(
        "aux_band_weight", aux_band_weight, low=0.0, high=1.0, high_open=True
    )
    target_accept = check_real(
        "target_accept", target_accept, low=0.0, high=1.0, low_open=True, high_open=True
    )
    if not isinstance(integrate_latents, bool):
        raise TypeError(f"`integrate_latents` must be True or False; found {integrate_latents!r}")
    if method == "exact":
        given = {
            "n_aux": (n_aux, 16),
            "aux_proposal": (aux_proposal, "normal"),
            "aux_uniform_weight": (aux_uniform_weight, 0.05),
            "aux_band_weight": (aux_band_weight, 0.0),
            "integrate_latents": (integrate_latents, False),
        }
        for name, (val, default) in given.items():
            if val != default:
                raise ValueError(
                    f"`{name}` applies to method='mhaar' only (the exact sampler has no "
                    f"auxiliary pairs); found {name}={val!r}"
                )
    if cores is not None:
        cores = check_positive_int("cores", cores)
    if seed is None:
        # record fresh entropy so that the run can be reproduced
        entropy = np.random.SeedSequence().entropy
        rng = np.random.default_rng(entropy)
        seed_record = entropy
    else:
        rng = as_generator(seed)
        seed_record = int(seed) if isinstance(seed, (int, np.integer)) else "Generator"

    # strength variables: "s" for the shared groups, "s_<name>" for each own group
    s_names: list[str] = []
    g_sidx = []
    for g in groups:
        vname = "s" if g.strength == "shared" else f"s_{g.name}"
        if vname not in s_names:
            s_names.append(vname)
        g_sidx.append(s_names.index(vname))
    if prior.s_fixed and float(prior.s) == 1.0:
        if method != "exact":
            raise ValueError("s = 1 (`prior.s=1.0`) needs method='exact'; found method='mhaar'")
        bad = [g.name for g in groups if g.likelihood != "binomial"]
        if bad:
            raise ValueError(
                "s = 1 (`prior.s=1.0`) is supported for binomial evidence only; found "
                f"over-dispersed groups {bad}"
            )
    allc = AttackCounts.concat([g.counts for g in groups])
    grp = np.concatenate([np.full(len(g.counts), j, dtype=np.int64) for j, g in enumerate(groups)])
    G = len(s_names)
    lik = [_LIK_CODES[g.likelihood] for g in groups]
    has_tau = [g.likelihood != "binomial" for g in groups]
    has_rho = [g.likelihood == "bivariate_normal" for g in groups]
    tau_free = [h and "tau" not in g.fix for h, g in zip(has_tau, groups, strict=True)]
    rho_free = [h and "rho" not in g.fix for h, g in zip(has_rho, groups, strict=True)]
    tau_start = np.array(
        [g.fix.get("tau", 0.05 if h else 0.0) for g, h in zip(groups, has_tau, strict=True)]
    )
    rho_start = np.array([g.fix.get("rho", 0.0) for g in groups])
    for j, g in enumerate(groups):
        if has_rho[j] and "rho" in g.fix:
            tau_start[j] = _admissible_tau(g, tau_start[j], fixed_tau="tau" in g.fix)

    layout = {
        "allc": allc,
        "grp": grp,
        "lik": lik,
        "g_sidx": g_sidx,
        "tau_free": tau_free,
        "rho_free": rho_free,
        "tau_start": tau_start,
        "rho_start": rho_start,
    }
    if method == "exact":
        out = _sample_exact(
            layout,
            G=G,
            delta=delta,
            prior=prior,
            chains=chains,
            draws=draws,
            tune=tune,
            max_time=max_time,
            target_accept=target_accept,
            log_likelihood=log_likelihood,
            progress=progress,
            progress_owned=progress_owned,
            cores=cores,
            rng=rng,
        )
    else:
        out = _sample_mhaar(
            layout,
            G=G,
            delta=delta,
            prior=prior,
            chains=chains,
            draws=5000 if draws is None else draws,
            tune=tune,
            thin=thin,
            n_aux=n_aux,
            aux_proposal=aux_proposal,
            aux_uniform_weight=aux_uniform_weight,
            aux_band_weight=aux_band_weight,
            integrate_latents=integrate_latents,
            target_accept=target_accept,
            cores=cores,
            rng=rng,
        )

    draws_dict = {"eps": out["eps"]}
    fixed: dict[str, float] = {}
    for k, name in enumerate(s_names):
        if prior.s_fixed:
            fixed[name] = float(prior.s)
        else:
            draws_dict[name] = out["s"][:, :, k]
    for j, g in enumerate(groups):
        for par, has, free, arr in (
            ("tau", has_tau, tau_free, "tau"),
            ("rho", has_rho, rho_free, "rho"),
        ):
            if not has[j]:
                continue
            if free[j]:
                draws_dict[f"{par}_{g.name}"] = out[arr][:, :, j]
            else:
                fixed[f"{par}_{g.name}"] = float(g.fix[par])
    acc = out["accept"]
    if method == "exact":
        # -1 marks a move not attempted in that iteration (see samplers.exact.advance)
        acc = np.where(acc >= 0, acc, np.nan)
    stats = {"accept_joint": acc[:, :, 0]}
    if not prior.s_fixed:
        stats["accept_ridge"] = acc[:, :, 1]
    if method == "mhaar" and (any(tau_free) or any(rho_free)):
        stats["accept_overdispersion"] = acc[:, :, 2]
    if method == "exact" and np.any(np.isfinite(acc[:, :, 2])):
        stats["accept_table"] = acc[:, :, 2]
    settings = {
        "delta": delta,
        "prior": repr(prior),
        "eps_prior": [type(prior.eps).__name__, *[float(v) for v in vars(prior.eps).values()]],
        "groups": [
            {
                "name": g.name,
                "likelihood": g.likelihood,
                "strength": g.strength,
                "counts": g.counts.to_dict(),
                "fix": dict(g.fix),
            }
            for g in groups
        ],
        "fixed": fixed,
        "seed": seed_record,
        "method": method,
        "chains": chains,
        "draws": int(out["eps"].shape[1]),
        "draws_requested": draws,
        "tune": tune,
        "target_accept": target_accept,
        "tuned_scales": out["scales"].tolist(),
        "versions": _versions(),
    }
    if method == "mhaar":
        settings.update(
            thin=thin,
            n_aux=n_aux,
            aux_proposal=aux_proposal,
            aux_uniform_weight=aux_uniform_weight,
            aux_band_weight=aux_band_weight,
            integrate_latents=integrate_latents,
        )
    else:
        settings.update(
            max_time=out["max_time"],
            converged=out["converged"],
            stop_reason=out["stop_reason"],
            seconds=out["seconds"],
        )
    loglik = None
    if out.get("log_lik") is not None:
        loglik = {"counts": out["log_lik"]}
    post = Posterior(draws_dict, stats, settings, log_likelihood=loglik)
    if check:
        post.check(stacklevel=2)
        if post.converged is False:
            _warn_not_converged(post, stacklevel=2)
    return post


def _warn_not_converged(post: Posterior, *, stacklevel: int) -> None:
    """ConvergenceWarning for a run that stopped (time or size limit) before it converged."""
    import warnings

    from .diagnostics import findings
    from .exceptions import ConvergenceWarning

    for f in findings(post):
        if f.kind == "not_converged":
            d = post.diagnostics()[f.var]
            warnings.warn(ConvergenceWarning(f.message, var=f.var, **d), stacklevel=stacklevel + 1)


#: Sampling methods: the noise-free sampler on the exact marginal likelihood, and the paper's
#: MHAAR (Alg. 1) over latent (alpha, beta) pairs.
METHODS = ("exact", "mhaar")
DEFAULT_TUNE = {"exact": 1000, "mhaar": 2000}
#: Automatic run length of the exact sampler: first round, largest round, the criteria every
#: sampled variable must meet, and the default time budget in seconds.
AUTO_FIRST_DRAWS = 1000
AUTO_MAX_DRAWS = 200_000
AUTO_RHAT_MAX = 1.01
#: ESS target of the automatic run length, bulk and tail.  The issue's bar is ESS_bulk >= 400,
#: but at 400 the 5% and 95% quantiles still move by ~1.1 probability points (sd) from run to
#: run; 2,000 brings that to ~0.5 points, so that "within 1.5 points of the exact posterior"
#: holds at default settings (docs/model.md, stress grid; at 1,000, one case in ten missed).
AUTO_ESS_MIN = 2000
AUTO_MAX_TIME = 600.0


def _logit(p):
    return np.log(p) - np.log1p(-p)


def _sample_exact(
    layout,
    *,
    G,
    delta,
    prior,
    chains,
    draws,
    tune,
    max_time,
    target_accept,
    log_likelihood,
    progress,
    progress_owned,
    cores,
    rng,
) -> dict:
    """Run the exact-likelihood sampler; ``draws=None`` runs until converged (or out of time)."""
    import time

    from samplers.driver import ExactRun, build_model, starting_points

    from . import _arviz

    t0 = time.perf_counter()  # the budget counts the set-up (and compilation) too
    allc = layout["allc"]
    J = len(layout["lik"])
    s_fixed = np.full(G, float(prior.s) if prior.s_fixed else np.nan)
    s_code = prior._s_code()
    model, corr, names, base_map = build_model(
        allc.fp,
        allc.n_neg,
        allc.fn,
        allc.n_pos,
        layout["grp"],
        g_lik=layout["lik"],
        g_sidx=layout["g_sidx"],
        g_tau=layout["tau_start"],
        g_rho=layout["rho_start"],
        g_tau_free=layout["tau_free"],
        g_rho_free=layout["rho_free"],
        s_fixed=s_fixed,
        delta=delta,
        eps_prior=prior.eps._code(),
        s_prior=(s_code[1], s_code[2]) if not prior.s_fixed else (1.0, 1.0),
        tau_prior=(prior.tau.a, prior.tau.b),
    )
    ehat = np.asarray(classical_epsilon(allc.fpr, allc.fnr, delta), dtype=np.float64)
    finite = ehat[np.isfinite(ehat) & (ehat > 0)]
    guess = float(np.median(finite)) if finite.size else 3.0
    init_rng, *chain_rngs = rng.spawn(chains + 1)
    starts = starting_points(model, corr, names, init_rng, chains, guess)
    run = ExactRun(
        model,
        corr,
        names,
        chain_rngs,
        starts,
        tune=tune,
        target_accept=target_accept,
        store_ll=log_likelihood,
        cores=cores,
    )
    budget = (AUTO_MAX_TIME if draws is None else np.inf) if max_time is None else max_time
    converged = None  # a run of fixed length that finished is not judged here

    def worst_ess(z):
        """The smallest ESS (bulk or tail), and whether every coordinate meets the criteria."""
        ok, ess_min = True, np.inf
        for a in range(z.shape[2]):
            x = z[:, :, a]
            e = min(_arviz.ess(x, "bulk"), _arviz.ess(x, "tail"))
            ess_min = min(ess_min, e) if np.isfinite(e) else 0.0
            if not (_arviz.rhat(x) <= AUTO_RHAT_MAX and e >= AUTO_ESS_MIN):
                ok = False
        return ok, ess_min

    tracker = _progress.Tracker(progress, owned=progress_owned)
    target = AUTO_FIRST_DRAWS if draws is None else draws
    try:
        while True:
            tracker.set_total(tracker.done + run.iterations_left(target))
            run.run(target, tracker, deadline=t0 + budget)
            if run.n_draws < target:
                converged = False
                stop_reason = "max_time"
                break
            if draws is not None:
                stop_reason = "draws"
                break
            ok, ess_min = worst_ess(run.result()["z"])
            if ok:
                converged = True
                stop_reason = "converged"
                break
            if target >= AUTO_MAX_DRAWS:
                converged = False
                stop_reason = "max_draws"
                break
            grow = 2.0 if not ess_min > 0 else min(4.0, max(1.5, 1.2 * AUTO_ESS_MIN / ess_min))
            target = int(min(AUTO_MAX_DRAWS, np.ceil(target * grow / 100.0) * 100))
            tracker.note(
                f"not converged at {run.n_draws} draws/chain (smallest ESS "
                f"{ess_min:.0f}); extending to {target}"
            )
        if converged:
            tracker.note(f"converged at {run.n_draws} draws/chain")
    finally:
        tracker.close()
    res = run.result()
    if run.n_draws == 0:
        raise TimeBudgetError(
            f"no draws within `max_time` = {budget} s (the warm-up of {tune} iterations did not "
            "finish); give more time or a shorter warm-up"
        )
    z = res["z"]
    out = {"eps": np.exp(z[:, :, 0])}
    s_out = np.full(z.shape[:2] + (G,), np.nan)
    tau_out = np.full(z.shape[:2] + (J,), np.nan)
    rho_out = np.full(z.shape[:2] + (J,), np.nan)
    for a, nm in enumerate(names):
        if nm == "eps":
            continue
        kind, k = nm
        if kind == "s":
            s_out[:, :, k] = 1.0 / (1.0 + np.exp(-z[:, :, a]))
        elif kind == "tau":
            tau_out[:, :, k] = 1.0 / (1.0 + np.exp(-z[:, :, a]))
    for a, nm in enumerate(names):
        if nm != "eps" and nm[0] == "rho":
            j = nm[1]
            tau_j = tau_out[:, :, j] if layout["tau_free"][j] else layout["tau_start"][j]
            rows = layout["grp"] == j
            n0 = allc.n_neg[rows].astype(float)[:, None, None]
            n1 = allc.n_pos[rows].astype(float)[:, None, None]
            tj = np.broadcast_to(tau_j, z.shape[:2])[None]
            c0 = 1.0 + (n0 - 1.0) * tj
            c1 = 1.0 + (n1 - 1.0) * tj
            rmax = np.sqrt(np.clip(c0 * c1, 0.0, None) / (n0 * n1)).min(axis=0)
            rho_out[:, :, j] = rmax * np.tanh(z[:, :, a])
    out.update(s=s_out, tau=tau_out, rho=rho_out, accept=res["acc"])
    out["scales"] = np.exp(res["log_scale"])
    out["log_lik"] = None
    if log_likelihood:
        ll = np.empty(z.shape[:2] + (base_map.shape[0],))
        is_b = base_map[:, 0] == 0
        ll[:, :, is_b] = res["ll_b"][:, :, base_map[is_b, 1]]
        ll[:, :, ~is_b] = res["ll_c"][:, :, base_map[~is_b, 1]]
        out["log_lik"] = ll
    out.update(
        converged=converged,
        stop_reason=stop_reason,
        max_time=None if not np.isfinite(budget) else float(budget),
        seconds=time.perf_counter() - t0,
    )
    return out


def _sample_mhaar(
    layout,
    *,
    G,
    delta,
    prior,
    chains,
    draws,
    tune,
    thin,
    n_aux,
    aux_proposal,
    aux_uniform_weight,
    aux_band_weight,
    integrate_latents,
    target_accept,
    cores,
    rng,
) -> dict:
    """Run MHAAR (the paper's Alg. 1 with the proposals of ``docs/model.md``)."""
    allc = layout["allc"]
    J = len(layout["lik"])
    # dispersed starting points around the classical estimate
    ehat = classical_epsilon(allc.fpr, allc.fnr, delta)
    ehat = np.asarray(ehat, dtype=np.float64)
    finite = ehat[np.isfinite(ehat)]
    base = float(np.max(finite)) if finite.size else 1.0
    if not np.all(np.isfinite(ehat)):
        # a perfect attack on some base (classical eps infinite): start higher
        base = max(base, 3.0)
    base = max(base, 0.2)
    init_rng, *chain_rngs = rng.spawn(chains + 1)
    eps0 = base * np.exp(init_rng.uniform(0.0, 0.7, size=chains))
    if prior.s_fixed:
        s0 = np.full((chains, G), float(prior.s))
    else:
        s0 = init_rng.uniform(0.2, 0.8, size=(chains, G))
    tau0 = np.tile(layout["tau_start"], (chains, 1))
    rho0 = np.tile(layout["rho_start"], (chains, 1))
    config = SamplerConfig(
        draws=draws,
        tune=tune,
        chains=chains,
        thin=thin,
        n_aux=n_aux,
        aux_proposal=aux_proposal,
        aux_uniform_weight=aux_uniform_weight,
        aux_band_weight=aux_band_weight,
        integrate_latents=integrate_latents,
        target_accept=target_accept,
        cores=cores,
    )
    group_arrays = {
        "sidx": layout["g_sidx"],
        "lik": layout["lik"],
        "tau_free": layout["tau_free"],
        "rho_free": layout["rho_free"],
        "tau_a": [prior.tau.a] * J,
        "tau_b": [prior.tau.b] * J,
    }
    return run_mhaar(
        allc.fp,
        allc.n_neg,
        allc.fn,
        allc.n_pos,
        layout["grp"],
        groups=group_arrays,
        delta=delta,
        eps_prior=prior.eps._code(),
        s_priors=[prior._s_code()] * G,
        config=config,
        rngs=chain_rngs,
        eps0=eps0,
        s0=s0,
        tau0=tau0,
        rho0=rho0,
    )


_LIK_CODES = {"binomial": 0, "bivariate_normal": 1, "beta_binomial": 2}


def _admissible_tau(group: Evidence, tau: float, *, fixed_tau: bool) -> float:
    """Check that a fixed rho is admissible at tau (fixed), or find a starting tau where it is."""
    rho = abs(group.fix["rho"])
    n0 = group.counts.n_neg.astype(float)
    n1 = group.counts.n_pos.astype(float)

    def rho_max(t):
        c0 = 1 + (n0 - 1) * t
        c1 = 1 + (n1 - 1) * t
        return float(np.min(np.sqrt(np.clip(c0 * c1, 0, None) / (n0 * n1))))

    if rho < rho_max(tau):
        return tau
    if fixed_tau:
        raise ValueError(
            f"Evidence {group.name!r}: `fix['rho']` = {group.fix['rho']!r} is outside the "
            f"admissible interval (-{rho_max(tau):.4g}, {rho_max(tau):.4g}) at tau = {tau!r}"
        )
    for t in np.linspace(tau, 0.999, 2000):
        if rho < rho_max(t):
            return float(t)
    raise ValueError(
        f"Evidence {group.name!r}: `fix['rho']` = {group.fix['rho']!r} is not admissible for "
        "any tau < 1"
    )


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in ("bayes-dp", "numpy", "scipy", "numba", "arviz"):
        try:
            out[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:  # pragma: no cover
            out[pkg] = "unknown"
    return out
