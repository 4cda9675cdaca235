"""The samplers of :func:`~bayes_dp.estimate_epsilon`: their settings, and each run on a Model.

:class:`SamplerSettings` holds the sampler's arguments of ``estimate_epsilon``, validated once.
:data:`SAMPLERS` maps each method to a function ``(model, settings, rng, ...) -> dict`` that runs
the chains on a :class:`~bayes_dp.inference.model.Model` and returns the draws in the model's
coordinates:
``eps`` (chains, draws), ``s`` (chains, draws, strengths), ``tau`` and ``rho`` (chains, draws,
groups), ``accept`` and the tuned ``scales``, plus what the run records about itself.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from bayes_dp.core.evidence import Evidence
from bayes_dp.core.exceptions import TimeBudgetError
from bayes_dp.core.likelihoods import rho_max
from bayes_dp.core.observations import AttackCounts
from bayes_dp.core.region import classical_epsilon
from bayes_dp.core.validation import check_positive_int, check_real
from bayes_dp.inference.first_run import compile_first
from bayes_dp.inference.model import Model
from bayes_dp.inference.progress import Tracker
from bayes_dp.inference.settings import MHAAR, Exact, sampler_fields, sampler_from_settings


@dataclass(frozen=True)
class AutoLength:
    """When an automatic-length run of the exact sampler (``draws=None``) stops.

    It runs ``first_draws`` draws per chain, then grows the run in rounds until every sampled
    variable has r_hat <= ``rhat_max`` and bulk and tail ESS >= ``ess_min`` (converged), the
    run reaches ``max_draws`` draws per chain, or ``max_time`` seconds (the default budget
    when ``estimate_epsilon(max_time=None)``) run out. The values are
    ``bayes_dp.inference.estimate.AUTO_*``.
    """

    first_draws: int
    max_draws: int
    rhat_max: float
    ess_min: float
    max_time: float


@dataclass(frozen=True)
class SamplerSettings:
    """The sampler and the run keywords of :func:`~bayes_dp.estimate_epsilon`, validated.

    Make it with :meth:`build`, which fills in the method's default ``tune`` and checks every
    value; ``draws`` None is the automatic length (exact) or ``MHAAR.default_draws`` (MHAAR).
    The sampler's own settings are the fields of ``sampler``.
    """

    sampler: Exact | MHAAR = Exact()
    chains: int = 4
    draws: int | None = None
    tune: int = Exact.default_tune
    max_time: float | None = None
    log_likelihood: bool = True
    cores: int | None = None

    @property
    def method(self) -> str:
        """The sampler's name: "exact" or "mhaar"."""
        return self.sampler.method

    @classmethod
    def build(
        cls,
        *,
        sampler: Exact | MHAAR | None = None,
        chains: int = 4,
        draws: int | None = None,
        tune: int | None = None,
        max_time: float | None = None,
        log_likelihood: bool = True,
        cores: int | None = None,
    ) -> SamplerSettings:
        """Check the arguments (naming the argument and the value) and fill in defaults."""
        if sampler is None:
            sampler = Exact()
        if not isinstance(sampler, (Exact, MHAAR)):
            raise TypeError(
                f"`sampler` must be bdp.Exact(...) or bdp.MHAAR(...); found {sampler!r}"
            )
        chains = check_positive_int("chains", chains)
        if draws is not None:
            draws = check_positive_int("draws", draws)
        if tune is None:
            tune = sampler.default_tune
        tune = check_positive_int("tune", tune, minimum=0)
        if max_time is not None:
            max_time = check_real("max_time", max_time, low=0.0, low_open=True)
        if not isinstance(log_likelihood, bool):
            raise TypeError(f"`log_likelihood` must be True or False; found {log_likelihood!r}")
        if cores is not None:
            cores = check_positive_int("cores", cores)
        return cls(
            sampler=sampler,
            chains=chains,
            draws=draws,
            tune=tune,
            max_time=max_time,
            log_likelihood=log_likelihood,
            cores=cores,
        )

    def record(self, out: dict) -> dict:
        """Return the sampler's part of ``post.settings`` for a run that returned ``out``.

        The sampler's settings are its fields (``sampler_fields``), under their own names.
        """
        rec = {
            "method": self.method,
            "chains": self.chains,
            "draws": int(out["eps"].shape[1]),
            "draws_requested": self.draws,
            "tune": self.tune,
            **sampler_fields(self.sampler),
            "tuned_scales": out["scales"].tolist(),
        }
        if self.method == "exact":
            rec.update(
                max_time=out["max_time"],
                converged=out["converged"],
                stop_reason=out["stop_reason"],
                minor_mode=out.get("minor_mode"),
                surrogate_moves=out.get("surrogate_moves"),
                seconds=out["seconds"],
                log_likelihood=self.log_likelihood,
            )
        return rec

    @classmethod
    def from_settings(cls, settings: dict) -> SamplerSettings:
        """Return the settings that repeat the run recorded in ``settings`` (``post.settings``).

        ``draws`` is the number of draws the run stored (an automatic-length run gives the
        same draws when asked for its final length at once); ``max_time`` and ``cores`` are
        left out (a time limit can only stop a run early; threads do not change the draws).
        Entries that a file of an earlier version lacks take today's defaults.
        """
        sampler = sampler_from_settings(settings)
        keys = ["chains", "tune"] + (["log_likelihood"] if sampler.method == "exact" else [])
        given = {k: settings[k] for k in keys if k in settings}
        return cls.build(sampler=sampler, draws=settings.get("draws"), **given)

    def to_python(self) -> str:
        """Return the sampler's arguments of ``bdp.estimate_epsilon``, as Python source."""
        args = [f"{k}={getattr(self, k)!r}" for k in ("chains", "draws", "tune")]
        if self.method == "exact" and not self.log_likelihood:
            args.append("log_likelihood=False")
        if self.sampler != Exact():
            args.append(f"sampler={self.sampler.to_python()}")
        return ", ".join(args)


# -- the exact sampler ---------------------------------------------------------------------------
#: Binomial bases (with multiplicity) from which the exact sampler builds no surrogate table and
#: its independence move proposes from the Student t fitted to the warm-up
#: (``samplers.exact.fitted_proposal``) instead of the table's proposal. On 64 models x 10,000
#: simulated LiRA targets the table's proposal passed its pilot and was then accepted in 0.2% of
#: the draws (ESS of s 9 from 2 x 2,000 draws); the fitted t: 64%, ESS 1,294 (docs/lira.md,
#: "Mixing at scale"). At 1,000 targets the two did alike.
TABLE_MAX_BASES = 1000


def kernel_model(model: Model):
    """Build the exact sampler's model of ``model`` (:func:`samplers.exact.driver.build_model`).

    Returns the kernel model, its over-dispersed bases (or None), the names of the coordinates
    of z and the map of bases to distinct rows. Used by the sampler and by the planner's grid
    posterior (:mod:`bayes_dp.planning.core`).
    """
    from samplers.exact.driver import build_model

    allc = model.counts
    kg = model.kernel_groups()
    prior = model.prior
    s_code = prior._s_code()
    return build_model(
        allc.fp,
        allc.n_neg,
        allc.fn,
        allc.n_pos,
        model.base_group,
        g_lik=kg["lik"],
        g_sidx=kg["sidx"],
        g_tau=kg["tau_start"],
        g_rho=kg["rho_start"],
        g_tau_free=kg["tau_free"],
        g_rho_free=kg["rho_free"],
        s_fixed=np.full(len(model.strengths), float(prior.s) if prior.s_fixed else np.nan),
        delta=model.delta,
        eps_prior=prior.eps._code(),
        s_prior=(s_code[1], s_code[2]) if not prior.s_fixed else (1.0, 1.0),
        tau_prior=(prior.tau.a, prior.tau.b),
    )


def run_exact(
    model: Model,
    cfg: SamplerSettings,
    rng: np.random.Generator,
    *,
    auto: AutoLength,
    progress=None,
    progress_owned: bool = False,
) -> dict:
    """Run the exact-likelihood sampler.

    ``cfg.draws=None`` runs until converged (or out of time), as ``auto`` says.
    """
    from bayes_dp.results import arviz_adapter
    from samplers.exact.driver import ExactRun, starting_points

    t0 = time.perf_counter()  # the budget counts the set-up (and compilation) too
    compile_first("exact", lambda: warm_up(Exact(), _likelihoods(model)))
    allc = model.counts
    grp = model.base_group
    G = len(model.strengths)
    J = len(model.groups)
    kmodel, corr, names, base_map = kernel_model(model)
    ehat = np.asarray(classical_epsilon(allc.fpr, allc.fnr, model.delta), dtype=np.float64)
    finite = ehat[np.isfinite(ehat) & (ehat > 0)]
    guess = float(np.median(finite)) if finite.size else 3.0
    init_rng, *chain_rngs = rng.spawn(cfg.chains + 1)
    starts = starting_points(kmodel, corr, names, init_rng, cfg.chains, guess)
    run = ExactRun(
        kmodel,
        corr,
        names,
        chain_rngs,
        starts,
        tune=cfg.tune,
        target_accept=cfg.sampler.target_accept,
        store_ll=False,  # computed afterwards, thinned and per distinct base (inference.pointwise)
        cores=cfg.cores,
    )
    if corr is None and kmodel.b_mult.sum() >= TABLE_MAX_BASES:
        # thousands of binomial bases: no table; the independence move proposes from the t
        # fitted to the warm-up (docs/lira.md, "Mixing at scale")
        run.settings = run.settings._replace(n_inner=0)
    draws = cfg.draws
    if cfg.max_time is None:
        budget = auto.max_time if draws is None else np.inf
    else:
        budget = cfg.max_time
    converged = None  # a run of fixed length that finished is not judged here

    def worst_ess(z):
        """Return the smallest ESS (bulk or tail) and whether all coordinates meet the criteria."""
        ok, ess_min = True, np.inf
        for a in range(z.shape[2]):
            x = z[:, :, a]
            e = min(arviz_adapter.ess(x, "bulk"), arviz_adapter.ess(x, "tail"))
            ess_min = min(ess_min, e) if np.isfinite(e) else 0.0
            if not (arviz_adapter.rhat(x) <= auto.rhat_max and e >= auto.ess_min):
                ok = False
        return ok, ess_min

    tracker = Tracker(progress, owned=progress_owned)
    target = auto.first_draws if draws is None else draws
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
            if target >= auto.max_draws:
                converged = False
                stop_reason = "max_draws"
                break
            grow = 2.0 if not ess_min > 0 else min(4.0, max(1.5, 1.2 * auto.ess_min / ess_min))
            target = int(min(auto.max_draws, np.ceil(target * grow / 100.0) * 100))
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
            f"no draws within `max_time` = {budget} s (the warm-up of {cfg.tune} iterations did "
            "not finish); give more time or a shorter warm-up"
        )
    z = res["z"]
    from samplers.exact import chain as exact

    # what each chain's surrogate / independence move was (decided at the end of the warm-up)
    kinds = {
        exact.TABLE_WALK: "table_walk",
        exact.TABLE_INDEP: "table_proposal",
        exact.TABLE_FIT: "fitted_t",
    }
    moves = [kinds.get(int(c.state.sg_on[0]), "none") for c in run.chains]

    from bayes_dp.inference.modes import find_better_mode

    minor_mode = find_better_mode(kmodel, corr, names, z, model.delta)
    if minor_mode is not None:  # the chains missed a dominant mode at eps ~ 0: not a result
        converged, stop_reason = False, "minor_mode"
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
            # rho = rho_max(tau) tanh(z): the sampler's coordinate is unbounded
            j = nm[1]
            tau_j = tau_out[:, :, j] if model.tau_free[j] else model.tau_start[j]
            rows = grp == j
            tj = np.broadcast_to(tau_j, z.shape[:2])[None]
            n0 = allc.n_neg[rows][:, None, None]
            n1 = allc.n_pos[rows][:, None, None]
            rho_out[:, :, j] = rho_max(tj, n0, n1).min(axis=0) * np.tanh(z[:, :, a])
    out.update(s=s_out, tau=tau_out, rho=rho_out, accept=res["acc"])
    out["scales"] = np.exp(res["log_scale"])
    out["log_lik"] = None
    if cfg.log_likelihood:
        from bayes_dp.inference import pointwise

        out.update(pointwise.compute(kmodel, corr, base_map, z, cores=run.cores))
    out.update(
        converged=converged,
        stop_reason=stop_reason,
        minor_mode=minor_mode,
        surrogate_moves=moves,
        max_time=None if not np.isfinite(budget) else float(budget),
        seconds=time.perf_counter() - t0,
    )
    return out


# -- MHAAR ---------------------------------------------------------------------------------------
def mhaar_start_eps(model: Model) -> float:
    """Return the base of the MHAAR chains' starting eps (each chain starts at 1 to 2 times it).

    The largest finite classical estimate of the bases (1.0 when there is none), at least 0.2.
    A base with an infinite classical estimate (an error count of 0 or N) has its posterior
    far above the others' estimates (eps ~ log N); the chains climb there during the warm-up.
    (Such runs used to start at 3 or more. That floor came with the first MHAAR sampler,
    without a reason given; measured on perfect bases with N from 50 to 100,000 and warm-ups
    of 50 and 2,000 iterations it changed neither the posterior nor r_hat, so it was removed:
    ``tests/bayes_dp/test_estimate.py::test_mhaar_chains_climb_to_a_perfect_base``.)
    """
    allc = model.counts
    ehat = np.asarray(classical_epsilon(allc.fpr, allc.fnr, model.delta), dtype=np.float64)
    finite = ehat[np.isfinite(ehat)]
    base = float(np.max(finite)) if finite.size else 1.0
    return max(base, 0.2)


def run_mhaar(model: Model, cfg: SamplerSettings, rng: np.random.Generator, **_) -> dict:
    """Run MHAAR (the paper's Alg. 1 with the proposals of ``docs/model.md``)."""
    from samplers.mhaar import SamplerConfig
    from samplers.mhaar import run_mhaar as run_chains

    compile_first("mhaar", lambda: warm_up(cfg.sampler, _likelihoods(model)))
    allc = model.counts
    prior = model.prior
    kg = model.kernel_groups()
    G = len(model.strengths)
    J = len(model.groups)
    chains = cfg.chains
    # dispersed starting points above the classical estimate
    base = mhaar_start_eps(model)
    init_rng, *chain_rngs = rng.spawn(chains + 1)
    eps0 = base * np.exp(init_rng.uniform(0.0, 0.7, size=chains))
    if prior.s_fixed:
        s0 = np.full((chains, G), float(prior.s))
    else:
        s0 = init_rng.uniform(0.2, 0.8, size=(chains, G))
    tau0 = np.tile(kg["tau_start"], (chains, 1))
    rho0 = np.tile(kg["rho_start"], (chains, 1))
    config = SamplerConfig(
        draws=MHAAR.default_draws if cfg.draws is None else cfg.draws,
        tune=cfg.tune,
        chains=chains,
        **sampler_fields(cfg.sampler),  # each field of bdp.MHAAR is one of the kernel's
        cores=cfg.cores,
    )
    group_arrays = {
        "sidx": kg["sidx"],
        "lik": kg["lik"],
        "tau_free": kg["tau_free"],
        "rho_free": kg["rho_free"],
        "tau_a": [prior.tau.a] * J,
        "tau_b": [prior.tau.b] * J,
    }
    out = run_chains(
        allc.fp,
        allc.n_neg,
        allc.fn,
        allc.n_pos,
        model.base_group,
        groups=group_arrays,
        delta=model.delta,
        eps_prior=prior.eps._code(),
        s_priors=[prior._s_code()] * G,
        config=config,
        rngs=chain_rngs,
        eps0=eps0,
        s0=s0,
        tau0=tau0,
        rho0=rho0,
    )
    out["log_lik"] = None
    return out


#: method -> the function that runs it on a Model.
SAMPLERS = {"exact": run_exact, "mhaar": run_mhaar}


# -- compiling ahead -----------------------------------------------------------------------------
def _likelihoods(model: Model) -> list[str]:
    return sorted({g.likelihood for g in model.groups})


def warm_up(sampler: Exact | MHAAR, likelihoods) -> None:
    """Run ``sampler`` briefly on tiny counts of each likelihood: compiles its kernels.

    The runs go through :data:`SAMPLERS`, as real runs do (the exact sampler with the
    pointwise log-likelihood), so they compile what real runs use.
    """
    counts = AttackCounts(fp=[3, 4], n_neg=20, fn=[9, 8], n_pos=20)
    cfg = SamplerSettings.build(sampler=sampler, chains=1, draws=20, tune=20)
    auto = AutoLength(20, 20, 2.0, 1.0, np.inf)
    for lik in likelihoods:
        model = Model.build(Evidence(counts, likelihood=lik, name="tiny"), delta=1e-5)
        SAMPLERS[sampler.method](model, cfg, np.random.default_rng(0), auto=auto)
