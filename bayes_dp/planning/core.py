"""Plan an audit before running it: predicted intervals, power and ceiling of candidate designs.

:func:`plan_audit` simulates audits from a hypothesised mechanism and attack (the model of
:mod:`bayes_dp.core.simulate`: per base (alpha, beta) uniform on R_s(eps, delta), binomial counts),
computes the posterior of eps of each simulated audit on a deterministic grid (the exact
per-base likelihood of :mod:`samplers.model.binomial`, tabulated by
:func:`samplers.exact.surrogate.build`),
and summarises, per design, what the audit's interval and its power to detect a violated claim
would be.  ``docs/validation/planning.md`` has the method and its validation. The grid posterior is
in
:mod:`bayes_dp.planning.grid`, the hypotheses in :mod:`bayes_dp.planning.truth`; this module is a
little over 600 lines because it holds the result (:class:`AuditPlan`: table, plot, text) and
both planners (counts and scores), which share the designs and their checks.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from bayes_dp.core.observations import AttackCounts
from bayes_dp.core.priors import Prior
from bayes_dp.core.validation import as_generator, check_delta, check_positive_int, check_real
from bayes_dp.inference.first_run import compile_first
from bayes_dp.planning.grid import (
    grid_posterior,
)
from bayes_dp.planning.truth import (
    Hypothesis,
    _truth_sampler,
)

__all__ = ["AuditPlan", "Design", "plan_audit", "plan_gdp_audit"]

DESIGN_KEYS = ("bases", "n", "n_neg", "n_pos", "level", "label")


@dataclass(frozen=True)
class Design:
    """One candidate audit design.

    Parameters
    ----------
    bases : int
        Number of challenge bases (targets, or independent canary audits).
    n_neg, n_pos : int
        Challenges per hypothesis on each base: models (or canaries) trained without / with the
        target, i.e. the trials behind the false-positive and the false-negative count.
    level : float
        Probability of the equal-tailed credible interval reported (default 0.9).
    label : str
        Name in tables and plots (default ``"<bases> x <n_neg>/<n_pos>"``).
    """

    bases: int
    n_neg: int
    n_pos: int
    level: float = 0.9
    label: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "bases", check_positive_int("bases", self.bases))
        object.__setattr__(self, "n_neg", check_positive_int("n_neg", self.n_neg))
        object.__setattr__(self, "n_pos", check_positive_int("n_pos", self.n_pos))
        level = check_real("level", self.level, low=0.0, high=1.0, low_open=True, high_open=True)
        object.__setattr__(self, "level", level)
        if not isinstance(self.label, str):
            raise TypeError(f"`label` must be a string; found {self.label!r}")
        if not self.label:
            n = str(self.n_neg) if self.n_neg == self.n_pos else f"{self.n_neg}/{self.n_pos}"
            object.__setattr__(self, "label", f"{self.bases} x {n}")

    @classmethod
    def from_dict(cls, spec: Mapping) -> Design:
        """Build a design from a dict with keys of :data:`DESIGN_KEYS`.

        ``n`` sets both ``n_neg`` and ``n_pos``; ``bases`` defaults to 1.
        """
        if not isinstance(spec, Mapping):
            raise TypeError(f"a design must be a dict or a Design; found {spec!r}")
        unknown = sorted(set(spec) - set(DESIGN_KEYS))
        if unknown:
            raise ValueError(
                f"unknown design key(s) {unknown} in {dict(spec)!r}; valid keys: {DESIGN_KEYS}"
            )
        n = spec.get("n")
        if n is not None and ("n_neg" in spec or "n_pos" in spec):
            raise ValueError(f"give either `n` or `n_neg`/`n_pos` in a design; found {dict(spec)}")
        n_neg = spec.get("n_neg", n)
        n_pos = spec.get("n_pos", n)
        if n_neg is None or n_pos is None:
            raise ValueError(f"a design needs `n` (or `n_neg` and `n_pos`); found {dict(spec)}")
        return cls(
            bases=spec.get("bases", 1),
            n_neg=n_neg,
            n_pos=n_pos,
            level=spec.get("level", 0.9),
            label=spec.get("label", ""),
        )


def _designs(designs) -> tuple[Design, ...]:
    if isinstance(designs, (Design, Mapping)):
        designs = [designs]
    if isinstance(designs, (str, bytes)) or not isinstance(designs, Sequence):
        raise TypeError(f"`designs` must be a list of dicts or Designs; found {designs!r}")
    if not designs:
        raise ValueError("`designs` must hold at least one design; found an empty list")
    out = tuple(d if isinstance(d, Design) else Design.from_dict(d) for d in designs)
    labels = [d.label for d in out]
    dup = sorted({x for x in labels if labels.count(x) > 1})
    if dup:
        raise ValueError(f"design labels must be distinct; found {dup} more than once")
    return out


# ---------------------------------------------------------------------------------------------
# grid posterior of one audit


# ---------------------------------------------------------------------------------------------
# the plan


@dataclass(frozen=True)
class AuditPlan:
    """What each candidate design of an audit is predicted to show (see :func:`plan_audit`).

    Attributes
    ----------
    designs : tuple of Design
    lo, hi : ndarray (designs, reps)
        Ends of the equal-tailed credible interval of eps (at the design's level) of every
        simulated audit; nan where the grid posterior failed (counted in ``table['failed']``).
    p_above : ndarray (designs, reps)
        Posterior probability that eps > ``claim`` (all nan without a claim).
    ceiling : ndarray (designs,)
        The (1 - confidence) quantile of eps after a perfect attack (no errors in any base):
        the largest claim whose violation the design can detect at all.
    truths : ndarray (designs, reps, 5)
        The hypothesis each audit was simulated from: eps (at ``delta``), s, mu (nan unless
        the hypothesis was GDP), tau and rho (the fields of ``planning.Hypothesis``).
    counts : tuple of tuple of AttackCounts
        The simulated counts, per design and audit (for :func:`plan_gdp_audit`: a tuple of
        :class:`~bayes_dp.GdpEvidence` per audit).
    delta, claim, confidence, prior, truth, reps, seed, seconds
        The settings of the plan, and its run time.
    mu_lo, mu_hi : ndarray (designs, reps) or None
        Ends of the interval of mu of every audit (:func:`plan_gdp_audit` only).
    """

    designs: tuple
    lo: np.ndarray
    hi: np.ndarray
    p_above: np.ndarray
    ceiling: np.ndarray
    truths: np.ndarray
    counts: tuple = field(repr=False)
    delta: float = 0.0
    claim: float | None = None
    confidence: float = 0.95
    prior: Prior = field(default_factory=Prior)
    truth: str = ""
    reps: int = 0
    seed: object = None
    seconds: float = 0.0
    mu_lo: np.ndarray | None = field(default=None, repr=False)
    mu_hi: np.ndarray | None = field(default=None, repr=False)

    #: columns of :attr:`table`
    COLUMNS = (
        "label",
        "bases",
        "n_neg",
        "n_pos",
        "level",
        "lo_median",
        "lo_p10",
        "lo_p90",
        "hi_median",
        "hi_p10",
        "hi_p90",
        "width_median",
        "width_p10",
        "width_p90",
        "power",
        "ceiling",
        "failed",
    )

    @property
    def power(self) -> np.ndarray:
        """Share of simulated audits, per design, that detect the claim as violated.

        An audit detects it when its posterior puts >= ``confidence`` on eps > ``claim``. nan
        without a claim; audits whose grid failed are left out.
        """
        if self.claim is None:
            return np.full(len(self.designs), np.nan)
        ok = np.isfinite(self.p_above)
        hits = np.where(ok, self.p_above >= self.confidence, False).sum(axis=1)
        n = ok.sum(axis=1)
        return np.where(n > 0, hits / np.maximum(n, 1), np.nan)

    @property
    def table(self) -> np.ndarray:
        """One row per design (a NumPy record array with the fields of :data:`COLUMNS`).

        ``lo_*``, ``hi_*`` and ``width_*``: median and 10% / 90% points over the simulated
        audits of the interval's ends and width; ``power``; ``ceiling``; ``failed``: audits
        whose grid posterior failed (left out of everything else).
        """
        rows = []
        power = self.power
        for k, d in enumerate(self.designs):
            ok = np.isfinite(self.lo[k]) & np.isfinite(self.hi[k])
            parts = []
            for x in (self.lo[k][ok], self.hi[k][ok], (self.hi[k] - self.lo[k])[ok]):
                if x.size:
                    parts += [float(np.median(x)), *map(float, np.quantile(x, [0.1, 0.9]))]
                else:
                    parts += [np.nan] * 3
            rows.append(
                (d.label, d.bases, d.n_neg, d.n_pos, d.level, *parts, power[k])
                + (float(self.ceiling[k]), int((~ok).sum()))
            )
        width = max(8, *(len(d.label) for d in self.designs))
        dtype = [("label", f"U{width}"), ("bases", "i8"), ("n_neg", "i8"), ("n_pos", "i8")]
        dtype += [(c, "f8") for c in self.COLUMNS[4:-1]] + [("failed", "i8")]
        return np.rec.fromrecords(rows, dtype=dtype)

    def to_pandas(self):
        """Return the :attr:`table` as a ``pandas.DataFrame`` indexed by label."""
        import pandas as pd

        return pd.DataFrame.from_records(self.table).set_index("label")

    def to_dict(self) -> dict:
        """Return the plan as plain Python values (JSON-ready: nan becomes None)."""

        def clean(x):
            return None if isinstance(x, float) and not math.isfinite(x) else x

        rows = [
            {c: clean(r[c].item() if hasattr(r[c], "item") else r[c]) for c in self.COLUMNS}
            for r in self.table
        ]
        return {
            "truth": self.truth,
            "delta": self.delta,
            "claim": self.claim,
            "confidence": self.confidence,
            "prior": repr(self.prior),
            "reps": self.reps,
            "seed": self.seed,
            "seconds": round(self.seconds, 3),
            "designs": rows,
        }

    def __str__(self) -> str:
        t = self.table
        head = (
            f"audit plan: truth {self.truth}, delta={self.delta:g}, {self.reps} simulated "
            f"audits per design"
        )
        head += f", prior {self.prior!r}" if self.mu_lo is None else ""
        claim = "" if self.claim is None else f"  P(detect eps > {self.claim:g})"
        lines = [head, f"{'design':>14} {'interval (median ends)':>24} {'width 10-90%':>18}"]
        lines[-1] += f"{claim}  ceiling"
        for r in t:
            iv = f"{100 * r.level:.0f}%: {r.lo_median:.3g} - {r.hi_median:.3g}"
            wd = f"{r.width_p10:.3g} - {r.width_p90:.3g}"
            pw = "" if self.claim is None else f"  {r.power:>{len(claim) - 2}.2f}"
            fl = f"  ({r.failed} failed)" if r.failed else ""
            lines.append(f"{r.label:>14} {iv:>24} {wd:>18}{pw}  {r.ceiling:7.3g}{fl}")
        return "\n".join(lines)

    def plot(self, ax=None, *, x: str = "total"):
        """Plot the interval width (median and 10-90% band) and the power against design size.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Axes for the width (a second y axis on its right holds the power).
        x : {"total", "bases", "n"}
            Design size on the horizontal axis: challenges per hypothesis in all bases
            (``bases * n_pos``, default), number of bases, or challenges per base.

        Returns
        -------
        matplotlib.axes.Axes
        """
        import matplotlib.pyplot as plt

        choices = {"total": None, "bases": "bases", "n": "n_pos"}
        if x not in choices:
            raise ValueError(f"`x` must be one of {sorted(choices)}; found {x!r}")
        t = self.table
        size = t.bases * t.n_pos if x == "total" else t[choices[x]]
        order = np.argsort(size, kind="stable")
        size = size[order]
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4), layout="constrained")
        ax.plot(size, t.width_median[order], "o-", color="C0", label="interval width (median)")
        ax.fill_between(size, t.width_p10[order], t.width_p90[order], color="C0", alpha=0.2)
        ax.set_xscale("log")
        names = {"total": "challenges per hypothesis (all bases)", "bases": "bases", "n": "n"}
        ax.set_xlabel(names[x])
        ax.set_ylabel("width of the credible interval of ε", color="C0")
        if self.claim is not None:
            ax2 = ax.twinx()
            ax2.plot(size, t.power[order], "s--", color="C3")
            ax2.set_ylim(-0.02, 1.02)
            ax2.set_ylabel(f"power: P(post. ≥ {self.confidence:g} on ε > {self.claim:g})")
            ax2.yaxis.label.set_color("C3")
        ax.set_title(f"plan: {self.truth}, {self.reps} audits per design", fontsize="medium")
        return ax


def _settings(designs, claim, reps, confidence, seed):
    """Check the settings :func:`plan_audit` and :func:`plan_gdp_audit` share.

    Returns the designs, claim, reps, confidence, the seed as recorded, and one random stream
    per (design, audit).
    """
    designs = _designs(designs)
    if claim is not None:
        claim = check_real("claim", claim, low=0.0, low_open=True)
    reps = check_positive_int("reps", reps)
    confidence = check_real(
        "confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True
    )
    seed_record = seed if isinstance(seed, (int, np.integer)) or seed is None else "Generator"
    rngs = [g.spawn(reps) for g in as_generator(seed).spawn(len(designs))]
    return designs, claim, reps, confidence, seed_record, rngs


def _fix(lik, tau: float, rho: float) -> dict:
    """Return the fixed parameters of the likelihood ``lik`` (an Evidence's ``fix``)."""
    return {k: float(v) for k, v in (("tau", tau), ("rho", rho)) if lik.has(k)}


def plan_audit(
    truth,
    designs,
    *,
    delta: float,
    claim: float | None = None,
    likelihood: str = "binomial",
    prior: Prior | None = None,
    reps: int = 50,
    confidence: float = 0.95,
    seed=None,
    cores: int | None = None,
) -> AuditPlan:
    """Predict, before any model is trained, what candidate audit designs will show.

    For every design, ``reps`` audits are simulated from the model (per base, (alpha, beta)
    uniform on R(eps, delta) minus R(s eps, s delta), X ~ Bin(n_neg, alpha), Y ~ Bin(n_pos,
    beta)); each gets the posterior of eps that :func:`estimate_epsilon` would sample, but
    computed on a deterministic grid over (eps, s) with the same exact per-base likelihood
    (``docs/validation/planning.md``: method, accuracy against full runs, speed). Correlated counts
    (``likelihood``) are planned with their tau and rho known.

    Parameters
    ----------
    truth : dict, list of dict, or callable
        The hypothesised mechanism and attack: ``{"eps": 4.0, "s": 0.7}`` (eps at ``delta``,
        attack strength s in [0, 1)), or ``{"mu": 1.0, "s": 0.7}`` for a mu-GDP mechanism
        (the error pair of each base is then uniform between the Gaussian trade-off curves of
        mu and s mu, :func:`bayes_dp.core.simulate.sample_gdp_region`; interval, power, claim and
        ceiling are about eps at ``delta``, ``gdp_epsilon(mu, delta)``). With a correlated
        ``likelihood`` the dict also gives its ``tau`` (and ``rho``), which the planned
        audits take as known (fixed). A value may be a scipy distribution instead of a number
        (anything with ``rvs``, e.g. ``scipy.stats.uniform(3, 2)`` for eps uniform on [3, 5]):
        each simulated audit draws it anew. A list of such dicts is a distribution (each simulated
        audit draws one, uniformly; repeat an entry to weight it); a callable ``truth(rng)``
        returning such a dict draws one per audit from your own distribution. A distribution
        gives assurance (power averaged over what you believe) instead of power at one point.
    designs : dict, Design or list of them
        Candidate designs, dicts with keys ``bases`` (default 1), ``n`` (challenges per
        hypothesis on each base: shadow models, or canaries) or ``n_neg`` and ``n_pos``,
        optional ``level`` (interval probability, default 0.9) and ``label``.
    delta : float
        The delta at which the audit will estimate eps, in [0, 1) (> 0 for a GDP ``truth``).
    claim : float, optional
        A claimed eps; power is the probability that the audit's posterior puts at least
        ``confidence`` on eps > ``claim`` (detects the claim as violated).
    likelihood : {"binomial", "bivariate_normal", "beta_binomial"}
        Model of the counts given the error pair, for the simulation and the audits' posterior
        (as ``Evidence(likelihood=...)``; default binomial). The correlated ones are planned
        with tau and rho known (``Evidence(fix=...)``), taken from ``truth``.
    prior : Prior, optional
        The prior the audit will use (default ``Prior()``: HalfNormal(10), Beta(1, 1)).
    reps : int
        Simulated audits per design (default 50).
    confidence : float
        Posterior probability that counts as detection, in (0, 1) (default 0.95).
    seed : int, numpy.random.Generator or None
        Seeds the simulations; each (design, audit) gets its own stream, so results do not
        depend on ``cores``.
    cores : int, optional
        Threads (default: all cores).

    Returns
    -------
    AuditPlan
        ``.table`` (one record per design: median and 10-90% range of the interval's ends and
        width, power, ceiling), ``.to_pandas()``, ``.to_dict()``, ``.plot()``, and the raw
        per-audit arrays.

    Raises
    ------
    ValueError, TypeError
        For bad input, naming the argument and the value found.

    Examples
    --------
    >>> import bayes_dp as bdp
    >>> plan = bdp.plan_audit({"eps": 3.0, "s": 0.9}, [{"bases": 2, "n": 200}],
    ...                       delta=1e-5, claim=1.0, reps=4, seed=0)
    >>> plan.table.bases.tolist(), plan.lo.shape
    ([2], (1, 4))
    """
    import time

    from bayes_dp.core.likelihoods import get_likelihood, rho_max

    t0 = time.perf_counter()
    delta = check_delta(delta)
    lik = get_likelihood(likelihood)
    draw_truth, truth_text = _truth_sampler(truth, delta, lik)
    designs, claim, reps, confidence, seed_record, rngs = _settings(
        designs, claim, reps, confidence, seed=seed
    )
    prior = Prior() if prior is None else prior
    if not isinstance(prior, Prior):
        raise TypeError(f"`prior` must be a bayes_dp.Prior; found {prior!r}")
    cores = (os.cpu_count() or 1) if cores is None else check_positive_int("cores", cores)
    # every audit's truth and counts are drawn here, in order: reproducible whatever `cores`
    from bayes_dp.core.simulate import simulate_counts, simulate_gdp_counts

    truths = np.empty((len(designs), reps, len(Hypothesis._fields)))
    counts = []
    for k, d in enumerate(designs):
        row = []
        for r in range(reps):
            h = draw_truth(rngs[k][r])
            truths[k, r] = h
            if lik.has("rho") and not abs(h.rho) < rho_max(h.tau, d.n_neg, d.n_pos):
                raise ValueError(
                    f"`truth`: rho={h.rho:g} is not admissible at tau={h.tau:g} in design "
                    f"{d.label!r}: |rho| must be < {rho_max(h.tau, d.n_neg, d.n_pos):.3g} "
                    "(sqrt(c0 c1 / (N0 N1)), c = 1 + (N - 1) tau)"
                )
            sizes = ([d.n_neg] * d.bases, [d.n_pos] * d.bases)
            kw = dict(likelihood=lik.name, tau=h.tau, rho=h.rho, seed=rngs[k][r])
            if math.isnan(h.mu):
                c, _, _ = simulate_counts(h.eps, h.s, delta, *sizes, **kw)
            else:
                c, _, _ = simulate_gdp_counts(h.mu, h.s, *sizes, **kw)
            row.append(c)
        counts.append(tuple(row))
    # the ceiling's model: the hypotheses' tau and rho (their mean, if they vary)
    fixes = [_fix(lik, truths[k, :, 3].mean(), truths[k, :, 4].mean()) for k in range(len(designs))]
    perfect = [
        AttackCounts(fp=0, n_neg=[d.n_neg] * d.bases, fn=0, n_pos=[d.n_pos] * d.bases)
        for d in designs
    ]
    stop = np.zeros(1, dtype=np.int64)
    tasks = [(k, r, counts[k][r]) for k in range(len(designs)) for r in range(reps)]
    tasks += [(k, -1, perfect[k]) for k in range(len(designs))]

    def one(task):
        k, r, c = task
        fix = fixes[k] if r < 0 else _fix(lik, truths[k, r, 3], truths[k, r, 4])
        try:
            return task, grid_posterior(c, delta, prior, stop, likelihood=lik.name, fix=fix)
        except FloatingPointError:
            return task, None

    lo = np.full((len(designs), reps), np.nan)
    hi = np.full_like(lo, np.nan)
    p_above = np.full_like(lo, np.nan)
    ceiling = np.full(len(designs), np.nan)
    compile_first("plan", _warm_up)
    with ThreadPoolExecutor(max_workers=min(cores, len(tasks))) as pool:
        try:
            for (k, r, _), g in pool.map(one, tasks):
                if g is None:
                    continue
                if r < 0:
                    ceiling[k] = g.quantile(1.0 - confidence)
                    continue
                a = (1.0 - designs[k].level) / 2.0
                lo[k, r], hi[k, r] = g.quantile([a, 1.0 - a])
                if claim is not None:
                    p_above[k, r] = g.prob_above(claim)
        except BaseException:
            stop[0] = 1  # the other threads stop within one row of their table
            raise
    return AuditPlan(
        designs=designs,
        lo=lo,
        hi=hi,
        p_above=p_above,
        ceiling=ceiling,
        truths=truths,
        counts=tuple(counts),
        delta=delta,
        claim=claim,
        confidence=confidence,
        prior=prior,
        truth=truth_text,
        reps=reps,
        seed=seed_record,
        seconds=time.perf_counter() - t0,
    )


def _warm_up() -> None:
    """Plan one tiny audit: compiles the planner's kernels (``bayes_dp.inference.first_run``)."""
    plan_audit({"eps": 2.0, "s": 0.5}, {"bases": 2, "n": 100}, delta=1e-5, reps=1, seed=0)


def plan_gdp_audit(
    truth,
    designs,
    *,
    delta: float,
    claim: float | None = None,
    mu_prior=None,
    s=1.0,
    bins=None,
    reps: int = 20,
    confidence: float = 0.95,
    seed=None,
) -> AuditPlan:
    """Predict what audits of attack *scores* (Gaussian DP, :func:`estimate_gdp`) will show.

    For every design, ``reps`` audits are simulated from a mu-GDP mechanism: per score group
    mu_i is uniform on [s mu, mu] (the hypothesis' s), ``n_pos`` in-scores are N(mu_i, 1) and
    ``n_neg`` out-scores N(0, 1) (the equal-variance binormal model of :func:`estimate_gdp`);
    each audit is then the full :func:`estimate_gdp` posterior of the binned scores (a grid,
    independent draws: no approximation beyond its own). The plan's interval, power and claim
    are about eps at ``delta``; ``mu_lo`` / ``mu_hi`` hold the intervals of mu.

    Parameters
    ----------
    truth : dict, list of dict, or callable
        ``{"mu": 1.0, "s": 0.9}``, or a distribution of such (as in :func:`plan_audit`; values
        may be scipy distributions).
    designs : dict, Design or list of them
        As in :func:`plan_audit`: ``bases`` is the number of score groups (independent
        attacks, or canary sets), ``n`` the scores per side in each (or ``n_neg`` out-scores and
        ``n_pos`` in-scores).
    delta : float
        The delta at which eps is reported, in (0, 1).
    claim : float, optional
        A claimed eps; power as in :func:`plan_audit`.
    mu_prior, s, bins
        Passed to :func:`estimate_gdp` (defaults: ``HalfNormal(5)``, s = 1, its binning).
    reps : int
        Simulated audits per design (default 20).
    confidence : float
        Posterior probability that counts as detection (default 0.95).
    seed : int, numpy.random.Generator or None
        Seeds the simulations and the posterior draws.

    Returns
    -------
    AuditPlan
        With ``ceiling`` nan (no perfect-attack ceiling for scores) and ``mu_lo``, ``mu_hi``.

    Examples
    --------
    >>> plan = plan_gdp_audit({"mu": 1.0, "s": 0.9}, {"n": 300}, delta=1e-5, reps=2, seed=0)
    >>> plan.mu_lo.shape
    (1, 2)
    """
    import time

    from bayes_dp.core.likelihoods import get_likelihood
    from bayes_dp.gdp.core import DEFAULT_MU_PRIOR, estimate_gdp, gdp_evidence

    t0 = time.perf_counter()
    delta = check_delta(delta, positive=True)  # a mu-GDP mechanism's eps is infinite at 0
    draw_truth, truth_text = _truth_sampler(truth, delta, get_likelihood("binomial"))
    designs, claim, reps, confidence, seed_record, rngs = _settings(
        designs, claim, reps, confidence, seed=seed
    )
    mu_prior = DEFAULT_MU_PRIOR if mu_prior is None else mu_prior
    shape = (len(designs), reps)
    lo, hi, mu_lo, mu_hi, p_above = (np.full(shape, np.nan) for _ in range(5))
    truths = np.empty(shape + (len(Hypothesis._fields),))
    evidence = []
    for k, d in enumerate(designs):
        row = []
        for r in range(reps):
            rng = rngs[k][r]
            h = draw_truth(rng)
            if math.isnan(h.mu):
                raise ValueError(f"`truth` must give 'mu' for a GDP plan; found {truth_text}")
            truths[k, r] = h
            groups = []
            for j in range(d.bases):
                mu_j = rng.uniform(h.s * h.mu, h.mu)
                ins, outs = rng.normal(mu_j, 1.0, d.n_pos), rng.normal(0.0, 1.0, d.n_neg)
                groups.append(gdp_evidence(ins, outs, bins=bins, name=f"g{j}"))
            row.append(tuple(groups))
            post = estimate_gdp(
                groups,
                delta=delta,
                mu_prior=mu_prior,
                s=s,
                seed=rng,
                fit_check=False,
                shape_free=False,
            )
            lo[k, r], hi[k, r] = post.interval(d.level, "eps")
            mu_lo[k, r], mu_hi[k, r] = post.interval(d.level, "mu")
            if claim is not None:
                p_above[k, r] = float(np.mean(post.draws("eps") > claim))
        evidence.append(tuple(row))
    return AuditPlan(
        designs=designs,
        lo=lo,
        hi=hi,
        p_above=p_above,
        ceiling=np.full(len(designs), np.nan),
        truths=truths,
        counts=tuple(evidence),
        delta=delta,
        claim=claim,
        confidence=confidence,
        prior=Prior(),
        truth=truth_text + f" (scores; mu prior {mu_prior!r}, s {s!r})",
        reps=reps,
        seed=seed_record,
        seconds=time.perf_counter() - t0,
        mu_lo=mu_lo,
        mu_hi=mu_hi,
    )
