"""The samplers of :func:`~bayes_dp.estimate_epsilon`, each run on a Model.

:func:`sample_exact` and :func:`sample_mhaar` run the chains of ``samplers.exact`` and
``samplers.mhaar`` on a :class:`~bayes_dp.inference.model.Model` with the run's
:class:`~bayes_dp.inference.settings.SamplerSettings`, and return the draws in the model's
coordinates: ``eps`` (chains, draws), ``s`` (chains, draws, strengths), ``tau`` and ``rho``
(chains, draws, groups), ``accept`` and the tuned ``scales``, plus what the run records about
itself. :func:`run` calls the one that the settings name.
"""

from __future__ import annotations

import functools
import time

import numpy as np

from bayes_dp.core.evidence import Evidence
from bayes_dp.core.exceptions import TimeBudgetError
from bayes_dp.core.likelihoods import KAPPA_MIN, KAPPA_PRIOR, PI_PRIOR, get_likelihood
from bayes_dp.core.observations import AttackCounts, OneRunCounts
from bayes_dp.core.region import classical_epsilon
from bayes_dp.inference import first_run
from bayes_dp.inference.first_run import compile_first
from bayes_dp.inference.model import Model
from bayes_dp.inference.progress import Tracker
from bayes_dp.inference.settings import (
    MHAAR,
    AutoLength,
    Exact,
    SamplerSettings,
    sampler_fields,
)


# -- the exact sampler ---------------------------------------------------------------------------
def kernel_model(model: Model):
    """Build the exact sampler's model of ``model`` (:func:`samplers.exact.build_model`).

    Returns the kernel model, its over-dispersed bases (or None), the names of the coordinates
    of z and the map of observations to distinct rows: per row of the groups in group order
    (each group's bases or one-run rows), (kind, index) with kind 0 for a distinct binomial
    base, 1 for a distinct over-dispersed row, 2 for a distinct guesses row
    (:attr:`samplers.exact.state.Model.G`). Used by the sampler and by the planner's grid
    posterior (:mod:`bayes_dp.planning.core`).
    """
    from samplers.exact import build_model
    from samplers.model.guesses import guess_rows

    cols = _count_columns(model)
    kg = model.kernel_groups()
    prior = model.prior
    s_code = prior._s_code()
    gs = model.guesses
    rows, g_inv = guess_rows(gs["r"], gs["v"], gs["c"], gs["group"], kg["sidx"][gs["group"]])
    kmodel, corr, names, base_map = build_model(
        *cols,
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
        g_pi=kg["pi_start"],
        g_kappa=kg["kappa_start"],
        g_pi_free=kg["pi_free"],
        g_kappa_free=kg["kappa_free"],
        mix_prior=(*PI_PRIOR, *KAPPA_PRIOR, float(np.log(KAPPA_MIN))),
        g_reflect=kg["reflect"],
        guesses=rows,
    )
    if g_inv.size:
        g_map = np.stack([np.full(g_inv.size, 2, dtype=np.int64), g_inv], axis=1)
        base_map = np.concatenate([base_map, g_map])[model.observation_order()]
    return kmodel, corr, names, base_map


def _count_columns(model: Model) -> tuple[np.ndarray, ...]:
    """Return fp, n_neg, fn, n_pos of the model's challenge bases (empty arrays without any)."""
    allc = model.counts
    if allc is None:
        return tuple(np.zeros(0, dtype=np.int64) for _ in range(4))
    return allc.fp, allc.n_neg, allc.fn, allc.n_pos


def start_eps_guess(model: Model) -> float:
    """Return the eps around which the exact sampler's starting grid is refined.

    The median of the bases' finite positive classical estimates; without challenge bases
    (one-run groups only), the median over the one-run rows of logit((v + 1) / (r + 2)) / c,
    the eps whose optimal guesser's accuracy is the row's; 3.0 when there is none.
    """
    allc = model.counts
    if allc is not None:
        ehat = np.asarray(classical_epsilon(allc.fpr, allc.fnr, model.delta), dtype=np.float64)
    else:
        gs = model.guesses
        acc = (gs["v"] + 1.0) / (gs["r"] + 2.0)
        ehat = np.log(acc / (1.0 - acc)) / gs["c"]
    finite = ehat[np.isfinite(ehat) & (ehat > 0)]
    return float(np.median(finite)) if finite.size else 3.0


def sample_exact(
    model: Model,
    cfg: SamplerSettings,
    rng: np.random.Generator,
    *,
    auto: AutoLength,
    progress=None,
    progress_owned: bool = False,
) -> dict:
    """Run the exact-likelihood sampler (:func:`samplers.exact.runner.run_exact`).

    ``cfg.draws=None`` runs until converged (or out of time), as ``auto`` says: the run is
    judged by the ESS and r_hat of every coordinate (:func:`_judge`) and checked for a mode it
    missed (:func:`bayes_dp.inference.modes.find_better_mode`).
    """
    from bayes_dp.inference import modes
    from samplers.exact import ExactConfig, ExactData, exact_kernels, run_exact

    t0 = time.perf_counter()  # the budget counts the set-up (and compilation) too
    with first_run.compiling("exact") as comp:
        kmodel, corr, names, base_map = kernel_model(model)
        data = ExactData(kmodel, corr, names)
        config = ExactConfig(
            chains=cfg.chains,
            tune=cfg.tune,
            target_accept=cfg.sampler.target_accept,
            draws=cfg.draws,
            first_draws=auto.first_draws,
            max_draws=auto.max_draws,
            ess_min=auto.ess_min,
            start_eps=start_eps_guess(model),
            cores=cfg.cores,
        )
        # the kernels this run calls, with its types, compiled side by side on a cold cache
        comp.compile(
            exact_kernels(data, config, pointwise=cfg.log_likelihood, everything=comp.everything)
        )
    if cfg.max_time is None:
        budget = auto.max_time if cfg.draws is None else np.inf
    else:
        budget = cfg.max_time
    tracker = Tracker(progress, owned=progress_owned)
    try:
        res = run_exact(
            data,
            config,
            seed=rng,
            deadline=t0 + budget,
            judge=functools.partial(_judge, auto=auto),
            find_mode=lambda z: modes.find_better_mode(kmodel, corr, names, z, model.delta),
            progress=tracker,
        )
    finally:
        tracker.close()
    if res.n_draws == 0:
        raise TimeBudgetError(
            f"no draws within `max_time` = {budget} s (the warm-up of {cfg.tune} iterations did "
            "not finish); give more time or a shorter warm-up"
        )
    out = res.draws._asdict()
    out["accept"] = res.accept
    out["scales"] = res.scales
    out["log_lik"] = None
    if cfg.log_likelihood:
        from bayes_dp.inference import pointwise

        out.update(pointwise.compute(kmodel, corr, base_map, res.z, cores=res.cores))
    out.update(
        converged=res.converged,
        stop_reason=res.stop_reason,
        minor_mode=res.minor_mode,
        mode_restart=None if res.restart is None else res.restart.to_dict(),
        surrogate_moves=list(res.moves),
        max_time=None if not np.isfinite(budget) else float(budget),
        seconds=time.perf_counter() - t0,
    )
    return out


def _judge(z: np.ndarray, *, auto: AutoLength) -> tuple[bool, float]:
    """Return whether every coordinate of z meets ``auto``'s r_hat and ESS, and the smallest ESS.

    The smallest ESS is over bulk and tail of every coordinate (0 when one is not finite).
    """
    from bayes_dp.results import arviz_adapter

    ok, ess_min = True, np.inf
    for a in range(z.shape[2]):
        x = z[:, :, a]
        e = min(arviz_adapter.ess(x, "bulk"), arviz_adapter.ess(x, "tail"))
        ess_min = min(ess_min, e) if np.isfinite(e) else 0.0
        if not (arviz_adapter.rhat(x) <= auto.rhat_max and e >= auto.ess_min):
            ok = False
    return ok, ess_min


# -- MHAAR ---------------------------------------------------------------------------------------
def mhaar_start_eps(model: Model) -> float:
    """Return the base of the MHAAR chains' starting eps (each chain starts at 1 to 2 times it).

    The largest finite classical estimate of the bases (1.0 when there is none), at least 0.2.
    A base with an infinite classical estimate (an error count of 0 or N) has its posterior
    far above the others' estimates (eps ~ log N); the chains climb there during the warm-up
    (``tests/bayes_dp/inference/test_estimate.py::test_mhaar_chains_climb_to_a_perfect_base``).
    """
    allc = model.counts
    ehat = np.asarray(classical_epsilon(allc.fpr, allc.fnr, model.delta), dtype=np.float64)
    finite = ehat[np.isfinite(ehat)]
    base = float(np.max(finite)) if finite.size else 1.0
    return max(base, 0.2)


def sample_mhaar(model: Model, cfg: SamplerSettings, rng: np.random.Generator) -> dict:
    """Run MHAAR (the paper's Alg. 1 with the proposals of ``docs/validation/model.md``).

    It runs its fixed length (``cfg.draws``, default ``MHAAR.default_draws``) and reports no
    progress.
    """
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


def run(
    model: Model,
    cfg: SamplerSettings,
    rng: np.random.Generator,
    *,
    auto: AutoLength,
    progress=None,
    progress_owned: bool = False,
) -> dict:
    """Run the sampler of ``cfg`` on ``model``.

    ``auto`` (the automatic length) and ``progress`` apply to the exact sampler; MHAAR runs
    its fixed length without progress.
    """
    if cfg.method == Exact.method:
        return sample_exact(
            model, cfg, rng, auto=auto, progress=progress, progress_owned=progress_owned
        )
    return sample_mhaar(model, cfg, rng)


# -- compiling ahead -----------------------------------------------------------------------------
def _likelihoods(model: Model) -> list[str]:
    return sorted({g.likelihood for g in model.groups})


def warm_up(sampler: Exact | MHAAR, likelihoods) -> None:
    """Run ``sampler`` briefly on tiny counts of each likelihood: compiles its kernels.

    The runs go through :func:`run`, as real runs do (the exact sampler with the
    pointwise log-likelihood), so they compile what real runs use; the exact sampler's binomial
    also runs on bases of equal sizes (the block quadrature of score matrices).
    """
    counts = AttackCounts(fp=[3, 4], n_neg=20, fn=[9, 8], n_pos=20)
    audits = OneRunCounts(m=40, r=[20, 30], v=[15, 21], pairs=[False, True])
    cfg = SamplerSettings.build(sampler=sampler, chains=1, draws=20, tune=20)
    auto = AutoLength(20, 20, 2.0, 1.0, np.inf)
    runs = []
    for lik in likelihoods:
        spec = get_likelihood(lik)
        if spec.counts == "OneRunCounts":
            if sampler.method in spec.methods:  # MHAAR does not sample one-run groups
                runs.append(Evidence(audits, likelihood=lik, name="tiny"))
        else:
            runs.append(Evidence(counts, likelihood=lik, name="tiny"))
    if sampler.method == "exact" and "binomial" in likelihoods:
        # binomial bases of equal sizes share one quadrature (blocks, another numba type), as
        # a score matrix's targets do
        blocks = AttackCounts(fp=list(range(5, 13)), n_neg=32, fn=list(range(12, 4, -1)), n_pos=32)
        runs.append(Evidence(blocks, likelihood="binomial", name="blocks"))
    for ev in runs:
        model = Model.build(ev, delta=1e-5)
        run(model, cfg, np.random.default_rng(0), auto=auto)
