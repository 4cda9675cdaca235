"""Run the exact sampler in one call: start, run, extend and restart (a model in, draws out).

:func:`run_exact` starts the chains near the best point of a coarse grid
(:func:`~samplers.exact.driver.starting_points`), runs them
(:class:`~samplers.exact.driver.ExactRun`) to a fixed length or, with a ``judge``, extends them
until the judge is satisfied, out of draws or out of time, and, when ``find_mode`` reports a
mode of much higher density that the chains missed, samples again with every chain started near
it. It returns an :class:`ExactResult`: the draws in the model's parameters and in the
sampler's coordinates z, what each chain did and how the run ended.

What is not the sampler's stays with the caller and comes in as values: the model
(:class:`ExactData`, from :func:`~samplers.exact.driver.build_model`), the settings
(:class:`ExactConfig`), when the draws are good enough (``judge``: effective sample sizes are
not computed here) and where a missed mode lies (``find_mode``). Numpy only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple, Protocol

import numpy as np

from ..model.densities import N0, N1
from . import chain as exact
from .driver import (
    ExactRun,
    chain_settings,
    draws_from_z,
    run_kernels,
    starting_points,
    starts_near,
)
from .state import Corr, Model

__all__ = [
    "ExactConfig",
    "ExactData",
    "ExactResult",
    "ExactDraws",
    "ModeRestart",
    "exact_kernels",
    "run_exact",
]

#: What each chain's surrogate / independence move was (``state.sg_on[0]``, decided at the end
#: of the warm-up); "none" for a chain without either.
MOVES = {
    exact.TABLE_WALK: "table_walk",
    exact.TABLE_INDEP: "table_proposal",
    exact.TABLE_FIT: "fitted_t",
}


class ExactData(NamedTuple):
    """What the exact sampler samples: the output of :func:`~samplers.exact.driver.build_model`.

    ``model`` (:class:`~samplers.exact.state.Model`), ``corr`` (the over-dispersed bases,
    :class:`~samplers.exact.state.Corr`, or None) and ``names``, the coordinates of z
    (``"eps"``, ``("s", k)``, ``("tau", j)``, ``("rho", j)``, ``("pi", j)``, ``("kappa", j)``).
    """

    model: Model
    corr: Corr | None
    names: list


@dataclass(frozen=True)
class ExactConfig:
    """Settings of one run of the exact sampler (validated by the caller).

    Attributes
    ----------
    chains, tune : int
        Number of chains; warm-up iterations per chain.
    target_accept : float
        Acceptance rate the warm-up's scale recursions aim at.
    start_eps : float
        The eps around which the starting grid is refined.
    draws : int or None
        Draws per chain; None: the automatic length, from ``first_draws`` extended (with a
        ``judge``) up to ``max_draws``.
    first_draws, max_draws : int or None
        The automatic length's first round and its cap (needed without ``draws``).
    ess_min : float or None
        The smallest ESS the judge asks for (needed without ``draws``): an extension grows the
        draws by about ``1.2 ess_min / smallest ESS`` (between 1.5 and 4 times).
    cores : int or None
        Threads to run chains on (None: all cores, at most one per chain).
    """

    chains: int
    tune: int
    target_accept: float
    start_eps: float
    draws: int | None = None
    first_draws: int | None = None
    max_draws: int | None = None
    ess_min: float | None = None
    cores: int | None = None


class ExactDraws(NamedTuple):
    """The draws in the model's parameters (:func:`~samplers.exact.driver.draws_from_z`).

    ``eps`` (chains, draws); ``s`` (chains, draws, strengths); ``tau``, ``rho``, ``pi``,
    ``kappa`` (chains, draws, groups); nan where a parameter is not sampled.
    """

    eps: np.ndarray
    s: np.ndarray
    tau: np.ndarray
    rho: np.ndarray
    pi: np.ndarray
    kappa: np.ndarray


class ModeRestart(NamedTuple):
    """Why and how the run sampled again: the first chains missed a mode of higher density.

    ``mode`` is what ``find_mode`` reported on the first chains (its ``"z"`` is the point the
    second chains started near); ``first_draws``, ``first_eps_quantiles`` (5%, 50%, 95%) and
    ``first_stop_reason`` describe the first chains; ``no_draws``: the second chains ran out of
    time in their warm-up, so the result is the first chains'.
    """

    mode: dict
    first_draws: int
    first_eps_quantiles: tuple[float, float, float]
    first_stop_reason: str
    no_draws: bool = False

    def to_dict(self) -> dict:
        """Return the record as plain values: the mode's keys, then the first chains'."""
        out = dict(
            self.mode,
            first_draws=self.first_draws,
            first_eps_quantiles=list(self.first_eps_quantiles),
            first_stop_reason=self.first_stop_reason,
        )
        if self.no_draws:
            out["no_draws"] = True
        return out


@dataclass(frozen=True)
class ExactResult:
    """What :func:`run_exact` returns.

    Attributes
    ----------
    draws : ExactDraws
        The draws in the model's parameters.
    z : numpy.ndarray
        The draws in the sampler's coordinates (chains, draws, d), named by ``ExactData.names``.
    accept : numpy.ndarray
        (chains, draws, 3): acceptance of the walk, ridge and table moves (-1: not attempted).
    scales : numpy.ndarray
        (chains, 2): the tuned step factors of the joint walk and the ridge move.
    moves : tuple of str
        Per chain, its surrogate / independence move (:data:`MOVES`, or "none").
    n_inner : int
        Walk steps on the table per surrogate-transition move (0: no table was built).
    converged : bool or None
        True: the judge was satisfied; False: it was not (out of draws or time), or a missed
        mode remained; None: a run of fixed length that finished (not judged here).
    stop_reason : str
        "draws", "converged", "max_draws", "max_time" or "minor_mode".
    minor_mode : dict or None
        What ``find_mode`` reported on the final chains (None: nothing, or no check).
    restart : ModeRestart or None
        Set when the run sampled again from a missed mode.
    cores : int
        Threads the chains ran on.
    """

    draws: ExactDraws
    z: np.ndarray
    accept: np.ndarray
    scales: np.ndarray
    moves: tuple[str, ...]
    n_inner: int
    converged: bool | None
    stop_reason: str
    minor_mode: dict | None
    restart: ModeRestart | None
    cores: int

    @property
    def n_draws(self) -> int:
        """Draws per chain (0: the time ran out in the warm-up)."""
        return int(self.z.shape[1])


class Progress(Protocol):
    """What :func:`run_exact` reports progress to: iterations done, their total, notes."""

    def __call__(self, n: int) -> None: ...  # n more iterations done (all chains)

    def set_total(self, total: int) -> None: ...

    def note(self, text: str) -> None: ...


#: ``judge(z) -> (ok, smallest ESS)``: whether the draws z (chains, draws, d) are good enough.
Judge = Callable[[np.ndarray], tuple[bool, float]]
#: ``find_mode(z) -> dict or None``: a mode the draws z missed (with its point ``"z"``).
FindMode = Callable[[np.ndarray], dict | None]


def _settings(data: ExactData, config: ExactConfig) -> exact.Settings:
    return chain_settings(
        data.corr,
        data.names,
        tune=config.tune,
        target_accept=config.target_accept,
        store_ll=False,  # a caller computes it afterwards, thinned, per distinct base
        mixture=data.model.n_mix > 0,
        bases=float(data.model.b_mult.sum()),
    )


def exact_kernels(
    data: ExactData, config: ExactConfig, *, pointwise: bool, everything: bool = False
):
    """Return the kernels :func:`run_exact` will call, with arguments of their types.

    :func:`~samplers.exact.driver.run_kernels` on the run's settings: what a caller compiles
    before the run (:func:`samplers.numerics.parallel_compile.compile_all`); ``pointwise``
    adds the pointwise log likelihood's, ``everything`` the fallbacks a chain may need.
    """
    settings = _settings(data, config)
    return run_kernels(
        data.model, data.corr, data.names, settings, pointwise=pointwise, everything=everything
    )


class _Count:
    """Counts the iterations reported to ``progress`` (which may be None)."""

    def __init__(self, progress: Progress | None):
        self.progress = progress
        self.done = 0

    def __call__(self, n: int) -> None:
        self.done += int(n)
        if self.progress is not None:
            self.progress(n)

    def set_total(self, left: int) -> None:
        if self.progress is not None:
            self.progress.set_total(self.done + left)

    def note(self, text: str) -> None:
        if self.progress is not None:
            self.progress.note(text)


def _grow(target: int, ess_min: float, config: ExactConfig) -> int:
    """Return the next target of draws per chain after a round whose smallest ESS was ess_min."""
    if not ess_min > 0:
        grow = 2.0
    else:
        grow = min(4.0, max(1.5, 1.2 * config.ess_min / ess_min))
    return int(min(config.max_draws, np.ceil(target * grow / 100.0) * 100))


def _sample(data, config, rngs, starts, count, deadline, judge, find_mode):
    """Run chains from ``starts`` until done (fixed length), judged good, out of draws or time.

    Returns the run, whether it converged (None: a run of fixed length that finished is not
    judged here), why it stopped and what ``find_mode`` reported on its draws (None: nothing,
    or no draws). An automatic run looks for a missed mode before it extends itself (chains
    split between two modes never converge) and stops there when it finds one.
    """

    def missed(run):
        if find_mode is None or not run.n_draws:
            return None
        return find_mode(run.result()["z"])

    run = ExactRun(
        data.model,
        data.corr,
        data.names,
        rngs,
        starts,
        tune=config.tune,
        target_accept=config.target_accept,
        store_ll=False,
        cores=config.cores,
    )
    converged = None
    target = config.first_draws if config.draws is None else config.draws
    while True:
        count.set_total(run.iterations_left(target))
        run.run(target, count, deadline=deadline)
        if run.n_draws < target:
            converged, stop_reason = False, "max_time"
            break
        if config.draws is not None:
            stop_reason = "draws"
            break
        ok, ess_min = judge(run.result()["z"])
        if ok:
            converged, stop_reason = True, "converged"
            break
        if target >= config.max_draws:
            converged, stop_reason = False, "max_draws"
            break
        minor = missed(run)
        if minor is not None:  # more draws would not help
            return run, False, "minor_mode", minor
        target = _grow(target, ess_min, config)
        count.note(
            f"not converged at {run.n_draws} draws/chain (smallest ESS "
            f"{ess_min:.0f}); extending to {target}"
        )
    if converged:
        count.note(f"converged at {run.n_draws} draws/chain")
    return run, converged, stop_reason, missed(run)


def run_exact(
    data: ExactData,
    config: ExactConfig,
    *,
    seed,
    deadline: float = float("inf"),
    judge: Judge | None = None,
    find_mode: FindMode | None = None,
    progress: Progress | None = None,
) -> ExactResult:
    """Run the exact sampler on ``data``: start, run, extend and restart; return the draws.

    Parameters
    ----------
    data : ExactData
        The model (:func:`~samplers.exact.driver.build_model`).
    config : ExactConfig
        Chains, warm-up, length, starting eps, threads.
    seed : int, numpy.random.SeedSequence or numpy.random.Generator
        Spawned into the starting points' generator and one per chain, and again for a
        restart (a Generator is spawned from as it is).
    deadline : float
        A ``time.perf_counter()`` value past which the chains stop (they keep their draws).
    judge : callable, optional
        ``judge(z) -> (ok, smallest ESS)`` on the draws z (chains, draws, d): whether the draws
        are good enough. Needed when ``config.draws`` is None (the automatic length).
    find_mode : callable, optional
        ``find_mode(z) -> dict or None``: a mode of much higher density that the draws missed,
        with its point ``"z"`` in the sampler's coordinates. When it reports one and time is
        left, every chain starts again near that point; when the final chains still miss one,
        the run is not converged (``stop_reason`` "minor_mode").
    progress : Progress, optional
        Told the iterations done (from the calling thread), their total and notes.

    Returns
    -------
    ExactResult
        With no draws (``n_draws == 0``) when the time ran out in the warm-up.

    Raises
    ------
    ValueError
        If ``config.draws`` is None without a ``judge`` (or without ``first_draws``,
        ``max_draws`` and ``ess_min``), or the posterior is zero at every starting point tried.
    """
    auto = (judge, config.first_draws, config.max_draws, config.ess_min)
    if config.draws is None and any(v is None for v in auto):
        raise ValueError(
            "the automatic length (`draws=None`) needs a `judge`, `first_draws`, `max_draws` "
            "and `ess_min`"
        )
    rng = np.random.default_rng(seed)
    count = _Count(progress)
    init_rng, *chain_rngs = rng.spawn(config.chains + 1)
    starts = starting_points(
        data.model, data.corr, data.names, init_rng, config.chains, config.start_eps
    )
    run, converged, stop_reason, minor = _sample(
        data, config, chain_rngs, starts, count, deadline, judge, find_mode
    )
    restart = None
    if minor is not None and time.perf_counter() < deadline:
        # the chains (all or some) missed a mode of much higher density: the posterior is
        # there, so sample it from that point (docs/validation/lira.md, "A mode the chains
        # missed")
        eps_first = np.exp(run.result()["z"][:, :, 0].ravel())
        quantiles = tuple(float(q) for q in np.quantile(eps_first, [0.05, 0.5, 0.95]))
        restart = ModeRestart(minor, int(run.n_draws), quantiles, stop_reason)
        gap = minor["log_post"] - minor["log_post_draws"]
        count.note(
            f"the chains missed a mode {gap:.0f} log units higher at eps = "
            f"{minor['eps']:.2g}; sampling again from there"
        )
        rng_restart, *chain_rngs = rng.spawn(config.chains + 1)
        point = np.asarray(minor["z"], dtype=np.float64)
        starts = starts_near(data.model, data.corr, point, rng_restart, config.chains)
        again = _sample(data, config, chain_rngs, starts, count, deadline, judge, find_mode)
        if again[0].n_draws:  # else the time ran out in the warm-up: keep the first run
            run, converged, stop_reason, minor = again
        else:
            restart = restart._replace(no_draws=True)
    if minor is not None:  # the chains still miss a dominant mode
        converged, stop_reason = False, "minor_mode"
    return _result(data, run, converged, stop_reason, minor, restart)


def _result(data, run, converged, stop_reason, minor, restart) -> ExactResult:
    res = run.result()
    z = res["z"]
    return ExactResult(
        draws=_params(data, z),
        z=z,
        accept=res["acc"],
        scales=np.exp(res["log_scale"]),
        moves=tuple(MOVES.get(int(c.state.sg_on[0]), "none") for c in run.chains),
        n_inner=int(run.settings.n_inner),
        converged=converged,
        stop_reason=stop_reason,
        minor_mode=minor,
        restart=restart,
        cores=int(run.cores),
    )


def _params(data: ExactData, z: np.ndarray) -> ExactDraws:
    """Map z to the model's parameters; rho's bound reads the over-dispersed rows' sizes."""
    model, corr = data.model, data.corr
    if corr is None:
        grp, n_neg, n_pos = (np.zeros(0, dtype=np.int64),) * 3
    else:
        grp, n_neg, n_pos = corr.c_grp, corr.P[:, N0], corr.P[:, N1]
    out = draws_from_z(
        z,
        data.names,
        model.s_z.size,
        model.g_tau,
        model.g_tau_z >= 0,
        grp,
        n_neg,
        n_pos,
        model.mix_prior[4],
    )
    return ExactDraws(**out)
