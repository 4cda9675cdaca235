"""``estimate_epsilon``: from attack counts to the posterior of eps (MCMC-DP-Est)."""

from __future__ import annotations

import importlib.metadata
import platform

import numpy as np

from samplers.mhaar import AUX_PROPOSALS, SamplerConfig, run_mhaar

from ._validation import as_generator, check_delta, check_positive_int, check_real
from .evidence import Evidence
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
    chains: int = 4,
    draws: int = 5000,
    tune: int = 2000,
    seed=None,
    thin: int = 2,
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

    Runs MCMC-DP-Est (Yildirim et al., Alg. 1): Metropolis-Hastings with averaged acceptance
    ratios over the latent error probabilities (alpha_i, beta_i) of each challenge base, which
    are a priori uniform on R(eps, delta) minus R(s eps, s delta).

    Parameters
    ----------
    counts : AttackCounts, Evidence or list of them
        The observations. Groups with ``strength="own"`` get their own strength ``s_<name>``.
    delta : float
        The known DP delta, in [0, 1).
    prior : Prior, optional
        Priors of eps and s; default ``Prior()`` = HalfNormal(10) and Beta(1, 1).
    chains, draws, tune : int
        Number of chains, stored draws per chain, warm-up iterations per chain.
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
        Emit :class:`~bayes_dp.exceptions.ConvergenceWarning` when r_hat > 1.01 or ESS is small.

    Returns
    -------
    Posterior

    Raises
    ------
    ValueError, TypeError
        For bad input, naming the argument and the value found.

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
    chains = check_positive_int("chains", chains)
    draws = check_positive_int("draws", draws)
    tune = check_positive_int("tune", tune, minimum=0)
    n_aux = check_positive_int("n_aux", n_aux, minimum=2)
    thin = check_positive_int("thin", thin)
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
    allc = AttackCounts.concat([g.counts for g in groups])
    grp = np.concatenate([np.full(len(g.counts), j, dtype=np.int64) for j, g in enumerate(groups)])
    G = len(s_names)
    J = len(groups)
    s_priors = [prior._s_code()] * G
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

    # dispersed starting points around the classical estimate
    ehat = classical_epsilon(allc.fpr, allc.fnr, delta)
    ehat = np.asarray(ehat, dtype=np.float64)
    finite = ehat[np.isfinite(ehat)]
    base = float(np.max(finite)) if finite.size else 1.0
    if not np.all(np.isfinite(ehat)):
        base = max(base, 3.0)
    base = max(base, 0.2)
    init_rng, *chain_rngs = rng.spawn(chains + 1)
    eps0 = base * np.exp(init_rng.uniform(0.0, 0.7, size=chains))
    if prior.s_fixed:
        s0 = np.full((chains, G), float(prior.s))
    else:
        s0 = init_rng.uniform(0.2, 0.8, size=(chains, G))
    tau0 = np.tile(tau_start, (chains, 1))
    rho0 = np.tile(rho_start, (chains, 1))

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
        "sidx": g_sidx,
        "lik": lik,
        "tau_free": tau_free,
        "rho_free": rho_free,
        "tau_a": [prior.tau.a] * J,
        "tau_b": [prior.tau.b] * J,
    }
    out = run_mhaar(
        allc.fp,
        allc.n_neg,
        allc.fn,
        allc.n_pos,
        grp,
        groups=group_arrays,
        delta=delta,
        eps_prior=prior.eps._code(),
        s_priors=s_priors,
        config=config,
        rngs=chain_rngs,
        eps0=eps0,
        s0=s0,
        tau0=tau0,
        rho0=rho0,
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
    stats = {"accept_joint": out["accept"][:, :, 0]}
    if not prior.s_fixed:
        stats["accept_ridge"] = out["accept"][:, :, 1]
    if any(tau_free) or any(rho_free):
        stats["accept_overdispersion"] = out["accept"][:, :, 2]
    settings = {
        "delta": delta,
        "prior": repr(prior),
        "groups": [
            {
                "name": g.name,
                "likelihood": g.likelihood,
                "strength": g.strength,
                "counts": g.counts.to_dict(),
            }
            for g in groups
        ],
        "fixed": fixed,
        "seed": seed_record,
        "chains": chains,
        "draws": draws,
        "tune": tune,
        "thin": thin,
        "n_aux": n_aux,
        "aux_proposal": aux_proposal,
        "aux_uniform_weight": aux_uniform_weight,
        "aux_band_weight": aux_band_weight,
        "integrate_latents": integrate_latents,
        "target_accept": target_accept,
        "tuned_scales": out["scales"].tolist(),
        "versions": _versions(),
    }
    post = Posterior(draws_dict, stats, settings)
    if check:
        post.check(stacklevel=2)
    return post


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
