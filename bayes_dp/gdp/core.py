"""Gaussian differential privacy (GDP) from an attack's whole ROC.

An attack on a mu-GDP mechanism is modelled as an equal-variance binormal test: some monotone
transform of its scores makes the out-scores N(0, 1) and the in-scores N(mu_i, 1), with
``s mu <= mu_i <= mu`` (``s`` the attack strength, the GDP analogue of the band R(eps) minus
R(s eps)). The scores are binned by cut points chosen without looking at membership (quantiles
of the pooled scores, or cut points given in advance); the binned in- and out-counts are
multinomial, and the cut points on the latent scale are nuisance parameters, integrated out by
Laplace's method. The posterior of (mu, s) is then computed on a grid and sampled exactly from
the grid. ``docs/validation/gdp.md`` derives the model and says what it assumes.

A little over 600 lines: the evidence type, the eps/delta conversions and the posterior with its
fit check are here; the binned-score Laplace marginal (``gdp.laplace``), count and one-run
evidence in the same posterior (``gdp.joint``) and the grid sampler
(``inference.grid_posterior``) are apart.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy import special

from bayes_dp.core.evidence import check_group_name
from bayes_dp.core.gaussians import gaussian_epsilon_array, gaussian_mechanism_delta
from bayes_dp.core.priors import Beta, HalfNormal, LogNormal, _check_s_prior
from bayes_dp.core.thresholds import GRID_DRAWS
from bayes_dp.core.validation import (
    check_delta,
    check_int_array,
    check_positive_int,
    check_real,
    check_scores,
)
from bayes_dp.gdp.laplace import (
    _bins,
    _log_mass,
    laplace_log_marginal,
)
from bayes_dp.inference.grid_posterior import GRID_COARSE, refine_grid, s_cells, sample_grid

__all__ = [
    "GdpEvidence",
    "GdpFitWarning",
    "estimate_gdp",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_evidence",
]

#: Largest number of bins chosen automatically, and the scores per bin aimed at.
AUTO_BINS_MAX = 20
AUTO_SCORES_PER_BIN = 50
#: Fewest pooled scores beyond a tail cut point: the tails get cut points with the top and bottom
#: TAIL_MIN, 2 TAIL_MIN, 4 TAIL_MIN, ... pooled scores beyond them (fewer than a regular bin).
TAIL_MIN = 8
#: Posterior predictive p-value below which the Gaussian trade-off shape is said not to fit.
FIT_P_MIN = 0.01
#: The fit check's third discrepancy looks at the tail set's thresholds within this top share.
TOP_SHARE = 0.05
#: Draws used by the posterior predictive check.
FIT_DRAWS = 1000
#: Default prior of mu.
DEFAULT_MU_PRIOR = HalfNormal(5.0)


class GdpFitWarning(UserWarning):
    """The equal-variance binormal (Gaussian trade-off) shape does not fit the binned scores.

    Attributes
    ----------
    group : str
        The evidence group concerned.
    p_value : float
        Its posterior predictive p-value.
    """

    def __init__(self, message: str, *, group: str, p_value: float):
        super().__init__(message)
        self.group = group
        self.p_value = p_value


# -- the Gaussian trade-off curve and its (eps, delta) ------------------------------------------
def _mu_array(mu) -> tuple[np.ndarray, bool]:
    if isinstance(mu, (str, bytes, bool)):
        raise TypeError(f"`mu` must be a real number or an array of them; found {mu!r}")
    try:
        arr = np.asarray(mu, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"`mu` must be a real number or an array of them; found {mu!r}") from None
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        bad = float(arr[~(np.isfinite(arr) & (arr >= 0))].ravel()[0])
        raise ValueError(f"`mu` must be finite and >= 0; found {bad!r}")
    return arr, arr.ndim == 0


def gdp_epsilon(mu, delta: float):
    """Epsilon of a mu-GDP mechanism at ``delta`` (Dong, Roth and Su, Cor. 2.13).

    The smallest eps with ``Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) <= delta``: a
    mu-GDP mechanism is (eps, delta)-DP exactly for these pairs (it is the privacy curve of the
    Gaussian mechanism with sensitivity mu and unit noise, Balle and Wang 2018). Solved by
    bisection on the log of delta(eps), vectorised (``bayes_dp.core.gaussians``).

    Parameters
    ----------
    mu : float or array_like
        GDP parameter(s), >= 0.
    delta : float
        In (0, 1).

    Returns
    -------
    float or ndarray
        eps >= 0, shaped like ``mu`` (0 where mu is 0).

    Examples
    --------
    >>> round(gdp_epsilon(1.0, 1e-5), 4)
    4.3772
    >>> round(gdp_delta(1.0, gdp_epsilon(1.0, 1e-5)) * 1e5, 6)
    1.0
    """
    arr, scalar = _mu_array(mu)
    delta = check_delta(delta, positive=True)
    out = gaussian_epsilon_array(arr, delta)
    return float(out) if scalar else out


def gdp_delta(mu, eps: float):
    """Delta of a mu-GDP mechanism at ``eps``: ``Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)``.

    Parameters
    ----------
    mu : float or array_like
        GDP parameter(s), >= 0.
    eps : float
        >= 0.

    Returns
    -------
    float or ndarray
        delta, shaped like ``mu`` (0 where mu is 0).

    Examples
    --------
    >>> round(gdp_delta(1.0, 0.0), 6)  # total variation of N(0, 1) and N(1, 1)
    0.382925
    """
    arr, scalar = _mu_array(mu)
    eps = check_real("eps", eps, low=0.0)
    out = np.zeros(arr.shape)
    flat = out.reshape(-1)
    for i, m in enumerate(arr.reshape(-1)):
        if m > 0:
            flat[i] = gaussian_mechanism_delta(1.0, eps, sensitivity=float(m))
    return float(out) if scalar else out


# -- evidence: binned scores ----------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class GdpEvidence:
    """Binned in- and out-scores of one attack: evidence for Gaussian DP.

    Bin ``k`` holds the scores in ``(edges[k-1], edges[k]]`` (the first bin everything up to
    ``edges[0]``, the last everything above ``edges[-1]``); higher scores mean "member". The
    edges must not depend on which scores are in and which out (see :func:`gdp_evidence`).

    Parameters
    ----------
    in_counts : array_like of int
        Scores of members (in-scores) in each bin, lowest bin first.
    out_counts : array_like of int
        Scores of non-members (out-scores) in each bin.
    edges : array_like of float, optional
        The ``K - 1`` cut points of the ``K`` bins, increasing (a record only; the model uses
        the counts).
    name : str
        Group name, used in variable names (``mu_<name>``); the rules of
        :func:`bayes_dp.core.evidence.check_group_name`.
    strength : {"shared", "own"}
        Whether the group shares the attack strength ``s`` with the other shared groups of
        :func:`estimate_gdp` or gets its own ``s_<name>`` (as :class:`~bayes_dp.Evidence`).

    Examples
    --------
    >>> ev = GdpEvidence(in_counts=[10, 30, 60], out_counts=[60, 30, 10])
    >>> ev.n_in, ev.n_out, ev.n_bins
    (100, 100, 3)
    """

    in_counts: np.ndarray
    out_counts: np.ndarray
    edges: np.ndarray | None = field(default=None)
    name: str = "gdp"
    strength: str = "shared"

    def __post_init__(self) -> None:
        if self.strength not in ("shared", "own"):
            raise ValueError(f"`strength` must be 'shared' or 'own'; found {self.strength!r}")
        b = check_int_array("in_counts", self.in_counts, min_value=0)
        a = check_int_array("out_counts", self.out_counts, min_value=0)
        if a.size != b.size:
            raise ValueError(
                f"`in_counts` and `out_counts` must have the same length; found {b.size} and "
                f"{a.size}"
            )
        if a.size < 2:
            raise ValueError(f"`in_counts` must have at least 2 bins; found {a.size}")
        if b.sum() < 1 or a.sum() < 1:
            raise ValueError(
                f"`in_counts` and `out_counts` must each hold at least one score; found totals "
                f"{int(b.sum())} and {int(a.sum())}"
            )
        edges = None
        if self.edges is not None:
            edges = np.asarray(self.edges, dtype=np.float64).reshape(-1)
            if edges.size != a.size - 1:
                raise ValueError(
                    f"`edges` must hold {a.size - 1} cut points for {a.size} bins; found "
                    f"{edges.size}"
                )
            if not np.all(np.isfinite(edges)) or np.any(np.diff(edges) <= 0):
                raise ValueError(f"`edges` must be finite and increasing; found {edges.tolist()}")
            edges.setflags(write=False)
        a.setflags(write=False)
        b.setflags(write=False)
        object.__setattr__(self, "in_counts", b)
        object.__setattr__(self, "out_counts", a)
        object.__setattr__(self, "edges", edges)
        object.__setattr__(self, "name", check_group_name(self.name))

    @property
    def n_in(self) -> int:
        """Number of in-scores."""
        return int(self.in_counts.sum())

    @property
    def n_out(self) -> int:
        """Number of out-scores."""
        return int(self.out_counts.sum())

    @property
    def n_bins(self) -> int:
        """Number of bins."""
        return int(self.in_counts.size)

    def merged(self) -> tuple[np.ndarray, np.ndarray]:
        """(out, in) counts with the bins that hold no score at all merged away."""
        keep = (self.in_counts + self.out_counts) > 0
        return self.out_counts[keep].astype(np.float64), self.in_counts[keep].astype(np.float64)

    def record(self) -> dict:
        """JSON-serialisable description (for ``Posterior.settings``)."""
        return {
            "name": self.name,
            "kind": "gdp",
            "strength": self.strength,
            "in_counts": self.in_counts.tolist(),
            "out_counts": self.out_counts.tolist(),
            "edges": None if self.edges is None else self.edges.tolist(),
        }


def _tail_cuts(pooled: np.ndarray, per_bin: float) -> np.ndarray:
    """Cut points with TAIL_MIN, 2 TAIL_MIN, ... pooled scores beyond them, in both tails.

    Only counts below ``per_bin`` (a regular bin's size) are added; each cut point lies halfway
    between the two pooled scores it separates.
    """
    srt = np.sort(pooled)
    n = srt.size
    ks = []
    k = TAIL_MIN
    while k < per_bin and 2 * k < n:
        ks.append(k)
        k *= 2
    ks = np.asarray(ks, dtype=np.int64)
    if ks.size == 0:
        return np.empty(0)
    low = 0.5 * (srt[ks - 1] + srt[ks])
    high = 0.5 * (srt[n - ks - 1] + srt[n - ks])
    return np.concatenate([low, high])


def gdp_evidence(
    in_scores,
    out_scores,
    *,
    bins=None,
    name: str = "gdp",
    strength: str = "shared",
    tails: bool = True,
) -> GdpEvidence:
    """Bin the scores of one attack into :class:`GdpEvidence`.

    The bins are fixed without looking at membership: by default their cut points are the
    ``j / K`` quantiles of the pooled scores (in and out together), so every bin holds about
    the same number of scores, plus cut points in both tails that leave 8, 16, 32, ... pooled
    scores beyond them (``tails``; fewer than a regular bin), where eps at small delta is
    decided; cut points may also be given (fixed before the audit). Ties that make two cut
    points equal are merged.

    Parameters
    ----------
    in_scores, out_scores : array_like of float
        Attack scores of members and of non-members; higher means "member".
    bins : int or array_like of float, optional
        Number of bins K (>= 2), or the increasing cut points. Default: one bin per 50 pooled
        scores, between 2 and 20.
    name : str
        Group name.
    strength : {"shared", "own"}
        Shared attack strength or the group's own (see :class:`GdpEvidence`).
    tails : bool
        With ``bins`` None or a number, add the tail cut points (default True).

    Returns
    -------
    GdpEvidence

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> ev = gdp_evidence(rng.normal(1.0, 1.0, 500), rng.normal(0.0, 1.0, 500), bins=10,
    ...                   tails=False)
    >>> ev.n_bins, ev.n_in, ev.n_out
    (10, 500, 500)
    >>> gdp_evidence(rng.normal(1.0, 1.0, 500), rng.normal(0.0, 1.0, 500), bins=10).n_bins
    18
    """
    x_in = check_scores("in_scores", in_scores)
    x_out = check_scores("out_scores", out_scores)
    pooled = np.concatenate([x_in, x_out])
    if bins is None:
        k = int(np.clip(pooled.size // AUTO_SCORES_PER_BIN, 2, AUTO_BINS_MAX))
        edges = np.quantile(pooled, np.arange(1, k) / k)
        if tails:
            edges = np.concatenate([edges, _tail_cuts(pooled, pooled.size / k)])
    elif isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        k = check_positive_int("bins", int(bins), minimum=2)
        edges = np.quantile(pooled, np.arange(1, k) / k)
        if tails:
            edges = np.concatenate([edges, _tail_cuts(pooled, pooled.size / k)])
    else:
        edges = check_scores("bins", bins)
        if np.any(np.diff(edges) <= 0):
            raise ValueError(f"`bins` cut points must be increasing; found {edges.tolist()}")
    edges = np.unique(edges)
    if edges.size == 0:
        raise ValueError("the scores take a single value: no cut point separates them")
    n_b = edges.size + 1
    b = np.bincount(np.searchsorted(edges, x_in, side="left"), minlength=n_b)
    a = np.bincount(np.searchsorted(edges, x_out, side="left"), minlength=n_b)
    keep = (a + b) > 0
    if keep.sum() < 2:
        raise ValueError("all scores fall in one bin: give cut points inside the scores' range")
    # merge empty bins into their lower neighbour: drop the edge above each empty bin
    upper_edge_of = np.flatnonzero(keep)[:-1]
    return GdpEvidence(
        in_counts=b[keep],
        out_counts=a[keep],
        edges=edges[upper_edge_of],
        name=name,
        strength=strength,
    )


# -- the grid posterior ---------------------------------------------------------------------------
@dataclass
class _Group:
    ev: GdpEvidence
    a: np.ndarray
    b: np.ndarray
    grid: np.ndarray | None = None
    log_z: np.ndarray | None = None
    t_hat: np.ndarray | None = None
    neg_h: np.ndarray | None = None
    cum: np.ndarray | None = None  # cumulative integral of exp(log_z - max) over the grid
    tail: list = field(default_factory=list)  # the tail set's thresholds (from the scores)

    def auc_shift(self) -> float:
        """Return the binormal shift sqrt(2) Phi^-1(AUC) of the counts (a rough location)."""
        a, b = self.a / self.a.sum(), self.b / self.b.sum()
        below = np.concatenate([[0.0], np.cumsum(a)[:-1]])
        auc = float(np.sum(b * (below + 0.5 * a)))
        n = self.a.sum() * self.b.sum()
        auc = min(max(auc, 0.5), 1.0 - 0.5 / n)
        return math.sqrt(2.0) * float(special.ndtri(auc))


def _interval_mean(gr: _Group, lo, hi):
    """Mean of exp(log_z - max) over [lo, hi] (its value at the middle when the span is tiny)."""
    grid = gr.grid
    span = hi - lo
    cell = np.interp(hi, grid[1:], np.diff(grid))
    mid = np.exp(np.interp(0.5 * (lo + hi), grid, gr.log_z) - gr.log_z.max())
    with np.errstate(divide="ignore", invalid="ignore"):
        quot = (np.interp(hi, grid, gr.cum) - np.interp(lo, grid, gr.cum)) / span
    return np.where(span > 2.0 * cell, quot, mid)


def estimate_gdp(
    in_scores,
    out_scores=None,
    *,
    delta: float,
    bins=None,
    mu_prior: HalfNormal | LogNormal = DEFAULT_MU_PRIOR,
    s: Beta | float = 1.0,
    counts_delta=None,
    chains: int = 4,
    draws: int = GRID_DRAWS,
    seed=None,
    fit_check: bool = True,
    shape_free: bool = True,
):
    """Posterior of the Gaussian-DP parameter mu, and of eps at ``delta``, from all evidence.

    Each score group's binned in/out counts are multinomial under an equal-variance binormal
    ROC with shift ``mu_i`` (the Gaussian trade-off curve G_{mu_i}); ``s mu <= mu_i <= mu`` with
    ``mu_i`` a priori uniform there, as the error rates are uniform on the band R(eps) minus
    R(s eps) in :func:`~bayes_dp.estimate_epsilon`. One-run audits and attack counts share mu:
    a mu-GDP mechanism is (eps(mu, delta_c), delta_c)-DP for every delta_c, so a count group
    audited at delta_c has the likelihood of :func:`~bayes_dp.estimate_epsilon` at
    ``eps_c = gdp_epsilon(mu, delta_c)``. The latent cut points are integrated out by Laplace's
    method and (mu, s) is computed on a grid, so the draws are independent (no Markov chain):
    ``chains`` only splits them for the diagnostics. ``docs/validation/gdp.md`` has the derivation
    and
    the assumptions.

    Every piece of evidence enters through the Gaussian shape: score groups through the
    binormal ROC, one-run audits through the GDP accuracy band, and count groups through
    ``eps_c = gdp_epsilon(mu, delta_c)``, the Gaussian privacy profile. On a mechanism that is
    not Gaussian (Laplace, a few very exposed members) eps at small delta from this posterior
    is the Gaussian shape's extrapolation, not a finding. Score groups therefore also get a
    bound that assumes no shape (``shape_free``, stored as ``post.settings["shape_free"]``,
    docs/validation/gdp.md section 9), which :func:`~bayes_dp.audit_claim` states first; counts and
    one-run audits have no fit check and no such bound here.

    Parameters
    ----------
    in_scores : array_like of float, or evidence groups
        Scores of members (higher means "member"), or a list of evidence groups (then
        ``out_scores`` must be None): :func:`gdp_evidence` groups; one-run audits
        (:class:`~bayes_dp.OneRunCounts`), whose right guesses are binomial with an accuracy
        uniform between ``A(s mu, r / m)`` and ``A(mu, r / m)``, the best accuracy of guesses
        made on a share r / m of fair coins through a mu-GDP mechanism
        (:func:`bayes_dp.core.one_run_bound.one_run_accuracy_gdp`; ``Phi(mu / 2)`` at r = m);
        attack counts
        (:class:`~bayes_dp.AttackCounts`, group name ``"counts"``, or
        :class:`~bayes_dp.Evidence` with ``likelihood="binomial"``), audited at
        ``counts_delta``. Groups with ``strength="own"`` get their own strength ``s_<name>``.
    out_scores : array_like of float, optional
        Scores of non-members, with ``in_scores`` given as scores.
    delta : float
        The delta at which eps is reported, in (0, 1); ``post.epsilon_at(d)`` gives others.
    bins : int or array_like of float, optional
        Binning of scores (see :func:`gdp_evidence`).
    mu_prior : HalfNormal or LogNormal
        Prior of mu. Default ``HalfNormal(5.0)`` (mu = 5 is eps of about 20 at delta = 1e-5).
    s : Beta or float
        Prior of the attack strength s (and of each own ``s_<name>``), or a float in [0, 1]
        that fixes every strength. Default 1: the attack is the optimal test of a mu-GDP pair
        (true for the likelihood-ratio score of the Gaussian mechanism); with s < 1 or a Beta
        prior, the upper tail of mu is set by the prior (any mu above the data's mu_i fits).
    counts_delta : float or dict, optional
        The delta at which the count groups were audited (their band is that of
        R(eps_c, delta_c)): one float for all, or ``{group name: delta}``. Default ``delta``.
    chains, draws : int
        The posterior holds ``chains * draws`` independent draws.
    seed : int, numpy.random.Generator or None
        Seeds the draws and the fit check.
    fit_check : bool
        Run the posterior predictive check of the binned counts (stored in
        ``post.settings["fit_check"]``) and warn with :class:`GdpFitWarning` when a group's
        p-value is below 0.01.
    shape_free : bool
        Tabulate, for every cut point of every score group (and, given scores, the thresholds
        of the tail set: ``bayes_dp.gdp.shape_free.tail_thresholds``), the single-threshold
        posterior of eps at ``delta`` (count model, s = 1), from which
        :func:`~bayes_dp.audit_claim` takes the Bonferroni-adjusted best lower end
        (``post.settings["shape_free"]``; about 0.05 s per threshold).

    Returns
    -------
    Posterior
        Variables ``mu``, ``eps`` (at ``delta``), ``s`` (unless fixed, or no group shares
        it), ``s_<name>`` per own group (unless s is fixed) and ``mu_<name>`` per score group
        (unless s is fixed at 1).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> post = estimate_gdp(rng.normal(1.0, 1.0, 1000), rng.normal(0.0, 1.0, 1000),
    ...                     delta=1e-5, seed=1)
    >>> lo, hi = post.interval(0.9, "mu")
    >>> bool(lo < 1.0 < hi)
    True
    """
    from bayes_dp.gdp.joint import count_groups, draw_own_s, is_counts
    from bayes_dp.results.posterior import GdpPosterior
    from bayes_dp.results.run_record import _generator, _versions

    evidence = _evidence_list(in_scores, out_scores, bins)
    tails = {}
    if out_scores is not None:  # scores, not evidence groups: the tail set of the shape-free bound
        from bayes_dp.gdp.shape_free import tail_thresholds

        tails[evidence[0].name] = tail_thresholds(in_scores, out_scores)
    delta = check_delta(delta, positive=True)  # a mu-GDP mechanism's eps is infinite at 0
    if not isinstance(mu_prior, (HalfNormal, LogNormal)):
        raise TypeError(f"`mu_prior` must be a HalfNormal or LogNormal prior; found {mu_prior!r}")
    s = _check_s_prior("s", s)
    chains = check_positive_int("chains", chains)
    draws = check_positive_int("draws", draws)
    rng, seed_record = _generator(seed)

    groups = [_Group(ev, *ev.merged()) for ev in evidence if isinstance(ev, GdpEvidence)]
    for gr in groups:
        gr.tail = tails.get(gr.ev.name, [])
    cgroups = count_groups([ev for ev in evidence if is_counts(ev)], counts_delta, delta)
    runs = [ev for ev in evidence if not isinstance(ev, GdpEvidence) and not is_counts(ev)]
    if counts_delta is not None and not cgroups:
        raise ValueError(f"`counts_delta` is given ({counts_delta!r}) but no count group is")
    names = [gr.ev.name for gr in groups] + [cg.ev.name for cg in cgroups]
    if len(set(names)) != len(names):
        raise ValueError(f"group names must differ; found {names}")
    grid, coarse, mu_hi = _mu_grid(groups, cgroups, runs, mu_prior)
    log_lik, own, s_mid, s_edges = _log_lik_table(groups, cgroups, runs, grid, coarse, s)
    n = chains * draws
    mu, s_draw, cell = sample_grid(grid, log_lik, mu_prior, s, s_edges, n, rng)
    out = {"mu": mu}
    out["eps"] = gdp_epsilon(mu, delta)
    if s_edges is not None and len(own) < len(groups) + len(cgroups) + len(runs):
        out["s"] = s_draw
    s_of = {}
    for name, tab in own.items():
        s_of[name] = draw_own_s(tab, cell // s_mid.size, s, s_edges, rng)
        out[f"s_{name}"] = s_of[name]
    for gr in groups:
        if s_edges is None and float(s) == 1.0:
            gr_mu = mu
        else:
            gr_mu = _draw_within(gr, s_of.get(gr.ev.name, s_draw) * mu, mu, rng)
            out[f"mu_{gr.ev.name}"] = gr_mu
        gr.draws = gr_mu
    draws_out = {k: v.reshape(chains, draws) for k, v in out.items()}

    settings = {
        "model": GdpPosterior.MODEL,
        "delta": delta,
        "groups": [gr.ev.record() for gr in groups]
        + [cg.record() for cg in cgroups]
        + [
            {
                "kind": "one_run",
                "m": c.m.tolist(),
                "r": c.r.tolist(),
                "v": c.v.tolist(),
                **({"pairs": _pair_rows(c).tolist()} if _pair_rows(c).any() else {}),
            }
            for c in runs
        ],
        "mu_prior": [type(mu_prior).__name__, *[float(x) for x in vars(mu_prior).values()]],
        "s_prior": repr(s),
        "method": "grid",
        "chains": chains,
        "draws": draws,
        "grid": {"mu_points": int(grid.size), "s_cells": int(s_mid.size), "mu_max": mu_hi},
        "seed": seed_record,
        "versions": _versions(),
    }
    if s_edges is None:
        settings["fixed"] = {"s": float(s)}
    if shape_free and groups:
        from bayes_dp.gdp.shape_free import shape_free_record

        settings["shape_free"] = shape_free_record([gr.ev for gr in groups], delta, tails)
    if fit_check:
        settings["fit_check"] = _fit_checks(groups, rng, stacklevel=3)
    return GdpPosterior(draws_out, {"grid_cell": cell.reshape(chains, draws)}, settings)


def _mu_grid(groups, cgroups, runs, mu_prior):
    """Return the grid of mu (refined where the groups' curves change), the coarse grid, its top.

    Also tabulates each score group's Laplace marginal and its running integral on the grid.
    """
    shifts = [0.0] + [gr.auc_shift() for gr in groups] + [_one_run_shift(c) for c in runs]
    mu_hi = max(float(mu_prior._dist.ppf(1.0 - 1e-6)), 2.0 * max(shifts) + 1.0)
    coarse = np.linspace(0.0, mu_hi, GRID_COARSE + 1)
    curves = [laplace_log_marginal(coarse, gr.a, gr.b)[0] for gr in groups]
    curves += [_one_run_log_lik(coarse, 1.0, c) for c in runs]
    for cg in cgroups:
        cg.curve = cg.log_lik(coarse[1:], 1.0)  # mu = 0 (eps = 0) left out
        curves.append(np.concatenate([[cg.curve[0]], cg.curve]))
    grid = refine_grid(coarse, curves)
    for gr in groups:
        gr.grid = grid
        gr.log_z, gr.t_hat, gr.neg_h = laplace_log_marginal(grid, gr.a, gr.b)
        dens = np.exp(gr.log_z - gr.log_z.max())
        gr.cum = np.concatenate([[0.0], np.cumsum(0.5 * (dens[1:] + dens[:-1]) * np.diff(grid))])

    return grid, coarse, mu_hi


def _log_lik_table(groups, cgroups, runs, grid, coarse, s):
    """Return the log likelihood on (mu cells, s cells), the own-strength tables, the s cells.

    Groups with their own strength are integrated over it in the table (``own`` keeps theirs,
    by name, for drawing that strength afterwards).
    """
    from bayes_dp.gdp.joint import own_log_lik

    # cells of mu (between grid points) x cells of s (equal prior mass)
    mu_mid = 0.5 * (grid[1:] + grid[:-1])
    s_mid, s_edges = s_cells(s)
    log_lik = np.zeros((mu_mid.size, s_mid.size))
    own = {}  # name -> its table over (mu cells, s cells), s integrated out in log_lik
    tables = [(gr.ev, _gdp_table(gr, mu_mid, s_mid, s_edges)) for gr in groups]
    tables += [(cg.ev, cg.table(coarse, mu_mid, s_mid)) for cg in cgroups]
    for ev, tab in tables:
        if ev.strength == "own" and s_edges is not None:
            own[ev.name] = tab
            log_lik += own_log_lik(tab)[:, None]
        else:
            log_lik += tab
    for c in runs:
        log_lik += _one_run_log_lik(mu_mid[:, None], s_mid[None, :], c)
    return log_lik, own, s_mid, s_edges


def _fit_checks(groups, rng, *, stacklevel: int) -> dict[str, float]:
    """Run :func:`_fit_check` on each score group; warn (GdpFitWarning) where it fails."""
    checks = {gr.ev.name: _fit_check(gr, rng) for gr in groups}
    for name, p in checks.items():
        if p < FIT_P_MIN:
            warnings.warn(
                GdpFitWarning(
                    f"group {name!r}: the Gaussian trade-off shape does not fit the binned "
                    f"scores (posterior predictive p-value {p:.3g} < {FIT_P_MIN}); the "
                    "posterior of mu, and eps at small delta above all, rests on a shape "
                    "the data contradict",
                    group=name,
                    p_value=p,
                ),
                stacklevel=stacklevel,
            )
    return checks


def _gdp_table(gr: _Group, mu_mid, s_mid, s_edges) -> np.ndarray:
    """Log likelihood of a score group on the (mu cells, s cells) table."""
    if s_edges is None and s_mid[0] == 1.0:
        return np.interp(mu_mid, gr.grid, gr.log_z)[:, None] - gr.log_z.max()
    lo = s_mid[None, :] * mu_mid[:, None]
    hi = np.broadcast_to(mu_mid[:, None], lo.shape)
    with np.errstate(divide="ignore"):
        return np.log(_interval_mean(gr, lo, hi))


def _evidence_list(in_scores, out_scores, bins) -> list:
    from bayes_dp.core.evidence import Evidence
    from bayes_dp.core.observations import AttackCounts
    from bayes_dp.one_run.core import OneRunCounts

    kinds = (GdpEvidence, OneRunCounts, AttackCounts, Evidence)
    if isinstance(in_scores, kinds):
        in_scores = [in_scores]
    if (
        isinstance(in_scores, (list, tuple))
        and in_scores
        and all(isinstance(e, kinds) for e in in_scores)
    ):
        if out_scores is not None:
            raise TypeError(
                "`out_scores` must be None when `in_scores` holds evidence groups; found "
                f"{type(out_scores).__name__}"
            )
        return list(in_scores)
    if out_scores is None:
        raise TypeError(
            "`out_scores` is required when `in_scores` holds scores (or pass evidence groups)"
        )
    return [gdp_evidence(in_scores, out_scores, bins=bins)]


def _pair_rows(counts) -> np.ndarray:
    """Whether each row's coins are matched pairs (``counts.pairs``, where the field exists)."""
    pairs = getattr(counts, "pairs", False)
    return np.broadcast_to(np.asarray(pairs, dtype=bool), counts.r.shape)


def _one_run_shift(counts) -> float:
    """Return the largest mu whose best accuracy A(mu, r / m) is a row's (a location)."""
    from bayes_dp.core.one_run_bound import gdp_accuracy_logs

    acc = (counts.v + 1.0) / (counts.r + 2.0)
    rate = np.maximum(counts.r, 1) / counts.m
    lo, hi = np.zeros(acc.shape), np.full(acc.shape, 40.0)
    for _ in range(50):  # A(mu, rate) increases with mu
        mid = 0.5 * (lo + hi)
        below = np.exp(gdp_accuracy_logs(mid, rate)[0]) < acc
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    scale = np.where(_pair_rows(counts), math.sqrt(2.0), 1.0)
    return float(np.max(lo / scale, initial=0.0))


def _one_run_log_lik(mu, s, counts):
    """One-run audits under mu-GDP: the accuracy uniform on [A(s mu, r/m), A(mu, r/m)].

    ``A(mu, rate)`` (:func:`bayes_dp.core.one_run_bound.one_run_accuracy_gdp`) is the best
    accuracy of guesses made on a share ``rate`` of the coins through a mu-GDP mechanism: the
    r most confident guesses of m reach about A(mu, r / m), which is Phi(mu / 2) only at r = m.
    Rows whose coins are matched pairs (``counts.pairs``) see sqrt(2) mu.
    """
    from bayes_dp.core.one_run_bound import gdp_accuracy_logs
    from bayes_dp.one_run.core import OneRunCounts, accuracy_band_log_likelihood

    mu, s = np.broadcast_arrays(np.asarray(mu, dtype=np.float64), np.asarray(s, np.float64))
    total = np.zeros(mu.shape)
    for i, pair in enumerate(_pair_rows(counts)):
        m, r, v = int(counts.m[i]), int(counts.r[i]), int(counts.v[i])
        if r == 0:
            continue
        scale = math.sqrt(2.0) if pair else 1.0
        log_hi, log_1m_hi = gdp_accuracy_logs(scale * mu, r / m)
        log_lo, _ = gdp_accuracy_logs(scale * s * mu, r / m)
        total += accuracy_band_log_likelihood(
            np.exp(log_lo), np.exp(log_hi), log_hi, log_1m_hi, OneRunCounts(m, r, v)
        )
    return total


def _draw_within(gr: _Group, lo, hi, rng) -> np.ndarray:
    """Draw mu_i from exp(log_z) restricted to [lo, hi] (inverse CDF on the grid)."""
    c_lo = np.interp(lo, gr.grid, gr.cum)
    c_hi = np.interp(hi, gr.grid, gr.cum)
    u = rng.random(lo.size)
    x = np.interp(c_lo + u * (c_hi - c_lo), gr.cum, gr.grid)
    flat = (c_hi - c_lo) <= 1e-12 * gr.cum[-1]
    x = np.where(flat, lo + u * (hi - lo), x)
    return np.clip(x, lo, hi)


def _fit_check(gr: _Group, rng) -> float:
    """Posterior predictive p-value of the binned counts, for the bulk and for the tails.

    For each of ``FIT_DRAWS`` posterior draws of mu_i, the cut points are drawn from their
    Laplace approximation at the nearest grid point, counts are replicated, and two
    discrepancies of the replicate are compared with those of the data under the same
    parameters: Pearson's X^2 over the bins (the bulk), and, for the tails, the largest
    standardised deviation over the cut points of the in-scores' share of the scores beyond the
    cut point (on its side with fewer expected scores), ``|k_in - k pi| / sqrt(max(k pi (1 -
    pi), 1))`` with ``pi`` the share the parameters expect (the tail cut points of
    :func:`gdp_evidence` make it see the few scores that decide eps at small delta). With the
    scores at hand (the group's tail set, ``bayes_dp.gdp.shape_free.tail_thresholds``), a third:
    the in-scores among the top k pooled scores, k from ``TOP_SHARE`` (5%) of them down to 5,
    against the
    binomial with the share the parameters expect there, by the smallest two-sided binomial tail
    probability over the k (:func:`_top_share_stat`). Returns ``min(1, J min(p_1, ..., p_J))``
    over the J discrepancies (Bonferroni).
    """
    idx = rng.choice(gr.draws.size, size=min(FIT_DRAWS, gr.draws.size), replace=False)
    m = gr.draws[idx]
    k = np.clip(np.searchsorted(gr.grid, m), 0, gr.grid.size - 1)
    chol = np.linalg.cholesky(np.linalg.inv(gr.neg_h[k]))
    z = rng.standard_normal((m.size, gr.t_hat.shape[1], 1))
    t = np.sort(gr.t_hat[k] + (chol @ z)[..., 0], axis=1)
    lo, hi = _bins(t)
    p = np.exp(_log_mass(lo, hi))
    q = np.exp(_log_mass(lo - m[:, None], hi - m[:, None]))
    p /= p.sum(axis=1, keepdims=True)
    q /= q.sum(axis=1, keepdims=True)
    n_out, n_in = int(gr.a.sum()), int(gr.b.sum())
    a_rep = rng.multinomial(n_out, p)
    b_rep = rng.multinomial(n_in, q)

    def x2(a, b):
        ea, eb = n_out * p, n_in * q
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ta = np.where(ea > 0, (a - ea) ** 2 / ea, np.where(a > 0, np.inf, 0.0))
            tb = np.where(eb > 0, (b - eb) ** 2 / eb, np.where(b > 0, np.inf, 0.0))
        return ta.sum(axis=1) + tb.sum(axis=1)

    # the tails: largest standardised deviation of the counts beyond each cut point
    above_p = 1.0 - np.cumsum(p, axis=1)[:, :-1]
    above_q = 1.0 - np.cumsum(q, axis=1)[:, :-1]

    def sup_z(a, b):
        # beyond each cut point (either side of it, whichever holds fewer expected scores): the
        # in-scores among the scores there, against their expected share
        out_hi = n_out - np.cumsum(a, axis=-1)[..., :-1]
        in_hi = n_in - np.cumsum(b, axis=-1)[..., :-1]
        e_out, e_in = n_out * above_p, n_in * above_q
        upper = (e_out + e_in) <= 0.5 * (n_out + n_in)
        k_in = np.where(upper, in_hi, n_in - in_hi)
        k_all = np.where(upper, in_hi + out_hi, n_out + n_in - in_hi - out_hi)
        e_i = np.where(upper, e_in, n_in - e_in)
        e_o = np.where(upper, e_out, n_out - e_out)
        tot = e_i + e_o
        share = np.clip(e_i / np.where(tot > 0, tot, 1.0), 0.0, 1.0)
        var = np.maximum(k_all * share * (1.0 - share), 1.0)
        return (np.abs(k_in - k_all * share) / np.sqrt(var)).max(axis=1)

    ps = [
        float(np.mean(x2(a_rep, b_rep) >= x2(gr.a, gr.b))),
        float(np.mean(sup_z(a_rep, b_rep) >= sup_z(gr.a, gr.b))),
    ]
    top = [t for t in gr.tail if t["k"] <= TOP_SHARE * (n_in + n_out)]
    if top:
        k_all = np.array([t["fp"] + n_in - t["fn"] for t in top], dtype=np.int64)
        k_in = np.array([n_in - t["fn"] for t in top], dtype=np.int64)
        share = _top_share(m, k_all, n_in, n_out)
        rep = rng.binomial(k_all[None, :], share)
        data = _top_share_stat(np.broadcast_to(k_in, share.shape), k_all, share)
        ps.append(float(np.mean(_top_share_stat(rep, k_all, share) <= data)))
    return min(1.0, len(ps) * min(ps))


def _top_share(mu: np.ndarray, k_all: np.ndarray, n_in: int, n_out: int) -> np.ndarray:
    """Return the in-scores' expected share among the top ``k_all`` pooled scores, per mu.

    The latent threshold t with ``n_out Phi(-t) + n_in Phi(mu - t) = k_all`` (bisection), and
    the in-scores' share ``n_in Phi(mu - t) / k_all`` of the scores above it (binormal ROC);
    shape (mu, k).
    """
    mu = np.asarray(mu, dtype=np.float64)[:, None]
    lo = np.full((mu.shape[0], k_all.size), -40.0)
    hi = np.full_like(lo, 40.0)
    for _ in range(80):  # the count above t decreases in t
        t = 0.5 * (lo + hi)
        above = n_out * special.ndtr(-t) + n_in * special.ndtr(mu - t) > k_all
        lo, hi = np.where(above, t, lo), np.where(above, hi, t)
    t = 0.5 * (lo + hi)
    return np.clip(n_in * special.ndtr(mu - t) / k_all, 0.0, 1.0)


def _top_share_stat(k_in, k_all, share) -> np.ndarray:
    """Smallest two-sided binomial tail probability of the in-counts over the tail set, per row."""
    from scipy import stats

    low = stats.binom.cdf(k_in, k_all, share)
    high = stats.binom.sf(k_in - 1, k_all, share)
    return np.minimum(1.0, 2.0 * np.minimum(low, high)).min(axis=1)
