"""The posterior objects: one class per kind of posterior, sharing the base :class:`Posterior`.

:class:`CountsPosterior` (:func:`~bayes_dp.estimate_epsilon`, MCMC on attack counts),
:class:`GdpPosterior` (:func:`~bayes_dp.estimate_gdp`, a grid over the Gaussian-DP mu) and
:class:`OneRunPosterior` (:func:`~bayes_dp.estimate_one_run`). The base holds the draws and
what every posterior answers (quantiles, intervals, diagnostics, files); each class adds or
overrides what means something for its kind only (``epsilon_at`` of a GDP posterior, the prior
that prior sensitivity rescales, the report). A file records its kind in
``settings["model"]`` (:attr:`Posterior.MODEL`) and :func:`load_posterior` returns that class.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from bayes_dp.core.exceptions import ConvergenceWarning
from bayes_dp.core.gaussians import gaussian_epsilon_array
from bayes_dp.core.validation import check_delta, check_prob, check_real
from bayes_dp.results import arviz_adapter

__all__ = ["CountsPosterior", "GdpPosterior", "OneRunPosterior", "Posterior", "load_posterior"]


#: Largest Pareto k-hat of reliable importance weights (PSIS) and smallest tail ESS behind an
#: end of a reweighted interval (see :meth:`Posterior.prior_sensitivity`).
KHAT_MAX = 0.7
TAIL_ESS_MIN = 100.0
#: What an unreliable reweighted interval means, in plain words (quickstart, report, CLI).
ROUGH_REWEIGHTING = (
    "a rough figure: few draws reach that prior's wider tail; rerun with that prior for a firm one"
)


def _pareto_khat(log_w: np.ndarray) -> float:
    """Fit a generalized Pareto to the largest importance weights and return its shape.

    This is PSIS's k-hat: the M = min(n / 5, 3 sqrt(n)) largest weights, over the next one
    as threshold.
    """
    from scipy import stats

    lw = np.sort(np.asarray(log_w, dtype=float))
    n = lw.size
    m = int(min(n / 5, 3 * np.sqrt(n)))
    if m < 5:
        return float("nan")
    w = np.exp(lw - lw[-1])
    tail = w[-m:] - w[-m - 1]
    if not np.any(tail > 0):
        return 0.0
    k, _, _ = stats.genpareto.fit(tail, floc=0.0)
    return float(k)


class Posterior:
    """Draws of eps and the attack strengths, with diagnostics: the base of every posterior.

    The functions of the package return one of its subclasses, :class:`CountsPosterior`,
    :class:`GdpPosterior` or :class:`OneRunPosterior` (``isinstance(post, bdp.Posterior)``
    holds for all); the base itself serves draws from elsewhere.

    Parameters
    ----------
    draws : dict of str -> ndarray (chains, draws)
        Posterior draws per variable ("eps", "s", "s_<group>", ...).
    sample_stats : dict of str -> ndarray (chains, draws)
        Per-draw sampler statistics (acceptance of each move).
    settings : dict
        JSON-serialisable record of the inputs and sampler settings (seed included).
    log_likelihood : dict of str -> ndarray (chains, draws, bases), optional
        Pointwise log likelihood of each challenge base at each draw (ArviZ's
        ``log_likelihood`` group, for ``az.loo`` / ``az.compare``): log P(X_i, Y_i | theta) with
        the latent rates integrated out, normalised as a probability of the counts (binomial,
        beta-binomial) or a density of them (bivariate normal, paper eq. 7); for a one-run
        audit (likelihood "guesses") log P(v_i | r_i, theta), the accuracy integrated out. One
        column per row of the groups, in group order. Its draws may be
        a thinned subset of the posterior's (``settings["log_likelihood_thin"]``, see
        :func:`~bayes_dp.estimate_epsilon`).
    log_likelihood_index : array of int (bases,), optional
        When given, the arrays of ``log_likelihood`` hold one column per distinct base
        (chains, draws, distinct) and base i's values are column ``log_likelihood_index[i]``;
        :attr:`log_likelihood` and :meth:`to_arviz` expand them to one column per base.

    Examples
    --------
    >>> import bayes_dp as bdp
    >>> counts = bdp.AttackCounts(fp=[40, 50], n_neg=1000, fn=[250, 200], n_pos=1000)
    >>> post = bdp.estimate_epsilon(counts, delta=1e-5, draws=2000, seed=1, check=False)
    >>> lo, hi = post.interval(0.9, "eps")
    >>> bool(0 < lo < post.quantile(0.5, "eps") < hi)
    True
    """

    #: The kind of posterior, as ``settings["model"]`` records it in files (None: counts).
    MODEL: str | None = None

    def __init__(
        self,
        draws: dict,
        sample_stats: dict,
        settings: dict,
        log_likelihood: dict | None = None,
        log_likelihood_index=None,
    ):
        self._draws = {k: np.asarray(v, dtype=np.float64) for k, v in draws.items()}
        self._stats = {k: np.asarray(v) for k, v in sample_stats.items()}
        self.settings = dict(settings)
        self._loglik = (
            None
            if log_likelihood is None
            else {k: np.asarray(v, dtype=np.float64) for k, v in log_likelihood.items()}
        )
        self._ll_index = None
        if log_likelihood_index is not None:
            idx = np.asarray(log_likelihood_index)
            if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer):
                raise TypeError(
                    "`log_likelihood_index` must be a 1-d integer array; found "
                    f"{idx.dtype} of shape {idx.shape}"
                )
            for k, v in (self._loglik or {}).items():
                if idx.size and not (0 <= idx.min() and idx.max() < v.shape[-1]):
                    raise ValueError(
                        f"`log_likelihood_index` must lie in [0, {v.shape[-1]}) (the distinct "
                        f"columns of {k!r}); found values in [{idx.min()}, {idx.max()}]"
                    )
            self._ll_index = idx

    @property
    def log_likelihood(self) -> dict[str, np.ndarray] | None:
        """Pointwise log likelihood per base and draw, ``{"counts": (chains, draws, bases)}``.

        None when it was not kept (``estimate_epsilon(log_likelihood=False)``, MHAAR, or it
        could not be built: ``settings["log_likelihood_skipped"]`` says why). Its draws are
        draws 0, t, 2t, ... of each chain, t = ``settings.get("log_likelihood_thin", 1)``.
        A run stores it per distinct base; this returns a new expanded array on each call.
        """
        if self._loglik is None or self._ll_index is None:
            return self._loglik
        return {k: v[..., self._ll_index] for k, v in self._loglik.items()}

    @property
    def converged(self) -> bool | None:
        """Whether the run converged, as far as the sampler judged it.

        True: an automatic-length run (``draws=None``) met its criteria, r_hat <= 1.01 and
        bulk and tail ESS >= 4000 for every variable. False: a run stopped by its time budget
        (``max_time``) or size limit first; its result is not reliable. None: a run of fixed
        length that finished (see :meth:`check` and :meth:`diagnostics`), or a file from
        before this was recorded.
        """
        return self.settings.get("converged")

    # -- access ---------------------------------------------------------------------------
    @property
    def var_names(self) -> list[str]:
        """Names of the sampled variables."""
        return list(self._draws)

    @property
    def n_chains(self) -> int:
        """Number of chains."""
        return int(self._draws["eps"].shape[0])

    @property
    def n_draws(self) -> int:
        """Number of stored draws per chain."""
        return int(self._draws["eps"].shape[1])

    def draws(self, var: str = "eps") -> np.ndarray:
        """Draws of ``var`` as a (chains, draws) array (a copy)."""
        return self._get(var).copy()

    def _get(self, var: str) -> np.ndarray:
        if not isinstance(var, str):
            raise TypeError(f"`var` must be a variable name; found {var!r}")
        if var not in self._draws:
            fixed = self.settings.get("fixed", {})
            if var in fixed:
                raise ValueError(
                    f"`var` {var!r} was fixed at {fixed[var]} and not sampled; "
                    f"sampled variables: {self.var_names}"
                )
            raise ValueError(f"`var` must be one of {self.var_names}; found {var!r}")
        return self._draws[var]

    @property
    def acceptance(self) -> dict[str, float]:
        """Mean acceptance rate of each move after warm-up.

        Iterations where a move was not attempted (NaN, e.g. the surrogate transition while the
        chain is outside its table) do not count.
        """
        out = {}
        for k, v in self._stats.items():
            if k.startswith("accept"):
                v = np.asarray(v, dtype=np.float64)
                out[k] = float(np.nanmean(v)) if np.any(np.isfinite(v)) else float("nan")
        return out

    # -- statistics ------------------------------------------------------------------------
    def mean(self, var: str = "eps") -> float:
        """Posterior mean of ``var``."""
        return float(np.mean(self._get(var)))

    def quantile(self, q, var: str = "eps"):
        """Posterior quantile(s) of ``var`` (``q`` a float or array in [0, 1])."""
        qa = np.asarray(q, dtype=np.float64)
        if not np.all(np.isfinite(qa)) or np.any((qa < 0) | (qa > 1)):
            raise ValueError(f"`q` must lie in [0, 1]; found {q!r}")
        out = np.quantile(self._get(var), qa)
        return float(out) if out.ndim == 0 else out

    def interval(self, prob: float = 0.9, var: str = "eps") -> tuple[float, float]:
        """Equal-tailed credible interval holding ``prob`` of the posterior mass."""
        prob = check_prob("prob", prob)
        lo, hi = np.quantile(self._get(var), [(1 - prob) / 2, (1 + prob) / 2])
        return float(lo), float(hi)

    def hdi(self, prob: float = 0.9, var: str = "eps") -> tuple[float, float]:
        """Highest-density interval holding ``prob`` of the posterior mass (via ArviZ)."""
        prob = check_prob("prob", prob)
        return arviz_adapter.hdi(self._get(var), prob)

    def prior_sensitivity(
        self, prob: float = 0.9, factors: tuple[float, ...] = (0.5, 2.0)
    ) -> dict[float, dict[str, object]]:
        """How the eps interval moves when the eps prior's scale is multiplied by ``factors``.

        For a Gaussian-DP posterior (:func:`~bayes_dp.estimate_gdp`) the prior of mu is
        rescaled instead (eps is an increasing function of mu).

        With s free the upper tail of eps is set by the prior along s eps = const (the
        likelihood is nearly flat there), so this check belongs next to every interval.  The
        draws are reweighted by p_new(eps) / p_old(eps) (importance sampling: HalfNormal's
        ``scale`` or LogNormal's e^mu times the factor), which needs no new run.

        Parameters
        ----------
        prob : float
            Probability of the equal-tailed interval, in (0, 1).
        factors : sequence of float
            Multipliers (> 0) of the prior's scale.

        Returns
        -------
        dict
            ``{factor: {"interval": (lo, hi), "ess": Kish's effective sample size of the
            weights, "khat": Pareto shape of the largest weights, "tail_ess": the smallest
            over the two ends of Kish's ESS of the weights of the draws beyond that end,
            "reliable": khat <= 0.7 and tail_ess >= 100}}``.  As in PSIS (Vehtari et al.),
            ``khat > 0.7`` means a few draws carry the weights; a small ``tail_ess`` means
            an interval end rests on a few draws even when khat looks fine (measured: a
            factor-2 end off by 4 probability points at khat 0.46 and tail_ess below 100).
            Either way the reweighted interval is unreliable (most often for factors > 1,
            whose tail the draws reach rarely): rerun with that prior instead.

        Raises
        ------
        ValueError
            When the posterior does not record its eps prior (an older file), or for a bad
            ``prob`` or factor.
        TypeError
            When ``factors`` is not a sequence of numbers.
        """
        prob = check_prob("prob", prob)
        if isinstance(factors, str) or not hasattr(factors, "__iter__"):
            raise TypeError(f"`factors` must be a sequence of numbers; found {factors!r}")
        spec, var = self._rescaled_prior()
        if not spec:
            raise ValueError(
                "this posterior does not record its eps prior (`settings['eps_prior']`); "
                "it was written by an older version"
            )
        from scipy import stats

        kind, params = spec[0], [float(v) for v in spec[1:]]

        def logpdf(x, f):
            if kind == "HalfNormal":
                return stats.halfnorm.logpdf(x, scale=params[0] * f)
            if kind == "LogNormal":
                return stats.lognorm.logpdf(x, s=params[1], scale=np.exp(params[0]) * f)
            raise ValueError(
                f"prior sensitivity needs a HalfNormal or LogNormal prior; found {kind}"
            )

        x = np.asarray(self._get("eps"), dtype=float).ravel()
        base = logpdf(np.asarray(self._get(var), dtype=float).ravel(), 1.0)
        q = np.array([(1 - prob) / 2, (1 + prob) / 2])
        order = np.argsort(x)
        out = {}
        for f in factors:
            f = check_real("factors", f, low=0.0, low_open=True)
            lw = logpdf(np.asarray(self._get(var), dtype=float).ravel(), f) - base
            w = np.exp(lw - lw.max())
            w /= w.sum()
            cw = np.cumsum(w[order])
            lo, hi = (float(x[order][min(np.searchsorted(cw, p), x.size - 1)]) for p in q)
            # effective draws behind each end: Kish's ESS of the weights beyond it
            tails = (w[x <= lo], w[x >= hi])
            tail_ess = min(float(t.sum() ** 2 / np.sum(t**2)) if t.size else 0.0 for t in tails)
            khat = _pareto_khat(lw)
            out[f] = {
                "interval": (lo, hi),
                "ess": float(1.0 / np.sum(w**2)),
                "khat": khat,
                "tail_ess": tail_ess,
                "reliable": bool(khat <= KHAT_MAX and tail_ess >= TAIL_ESS_MIN),
            }
        return out

    def _rescaled_prior(self) -> tuple[list | None, str]:
        """Return the recorded prior that :meth:`prior_sensitivity` rescales, and its variable."""
        return self.settings.get("eps_prior"), "eps"

    def diagnostics(self) -> dict[str, dict[str, float]]:
        """r_hat, ess_bulk and ess_tail of each variable (ArviZ's rank-normalised versions)."""
        out = {}
        for v, x in self._draws.items():
            out[v] = {
                "r_hat": arviz_adapter.rhat(x),
                "ess_bulk": arviz_adapter.ess(x, "bulk"),
                "ess_tail": arviz_adapter.ess(x, "tail"),
            }
        return out

    def check(self, *, stacklevel: int = 2) -> list[str]:
        """Warn (:class:`ConvergenceWarning`) where r_hat > 1.01 or an ESS < 100 per chain.

        One warning per problem, worded by :func:`bayes_dp.results.diagnostics.findings` (which owns
        the thresholds, :data:`~bayes_dp.results.diagnostics.RHAT_MAX` and
        :data:`~bayes_dp.results.diagnostics.ESS_PER_CHAIN_MIN`). Whether an automatic-length run
        stopped before its stopping rule held is :attr:`converged`
        (:func:`~bayes_dp.estimate_epsilon` warns about it too).

        Parameters
        ----------
        stacklevel : int
            Passed on to :func:`warnings.warn` (2: the caller of ``check``).

        Returns
        -------
        list of str
            The messages, empty when all is well.
        """
        from bayes_dp.results.diagnostics import findings

        diag = self.diagnostics()
        msgs = []
        for f in findings(self):
            if f.kind in ("r_hat", "ess_bulk", "ess_tail"):
                msgs.append(f.message)
                warnings.warn(
                    ConvergenceWarning(f.message, var=f.var, **diag[f.var]),
                    stacklevel=stacklevel + 1,
                )
        return msgs

    def summary(self, prob: float = 0.9) -> pd.DataFrame:
        """ArviZ's summary table plus equal-tailed quantiles and the HDI at ``prob``.

        Columns: mean, sd, q5%, q50%, q95% (for prob = 0.9), hdi_90%_lo, hdi_90%_hi (the
        ends of the highest-density interval holding ``prob``, named by that probability),
        mcse_mean, mcse_sd, ess_bulk, ess_tail, r_hat; what each means:
        :data:`bayes_dp.results.diagnostics.GLOSSARY`.
        """
        prob = check_prob("prob", prob)
        base = arviz_adapter.summary(self.to_arviz(), self.var_names)
        lo_q, hi_q = (1 - prob) / 2, (1 + prob) / 2
        pct = [f"{100 * lo_q:g}%", "50%", f"{100 * hi_q:g}%"]
        rows = {}
        for v in self.var_names:
            x = self._draws[v]
            qs = np.quantile(x, [lo_q, 0.5, hi_q])
            h = self.hdi(prob, v)
            rows[v] = {
                "mean": float(base.loc[v, "mean"]),
                "sd": float(base.loc[v, "sd"]),
                f"q{pct[0]}": qs[0],
                f"q{pct[1]}": qs[1],
                f"q{pct[2]}": qs[2],
                f"hdi_{100 * prob:g}%_lo": h[0],
                f"hdi_{100 * prob:g}%_hi": h[1],
                "mcse_mean": float(base.loc[v, "mcse_mean"]),
                "mcse_sd": float(base.loc[v, "mcse_sd"]),
                "ess_bulk": float(base.loc[v, "ess_bulk"]),
                "ess_tail": float(base.loc[v, "ess_tail"]),
                "r_hat": float(base.loc[v, "r_hat"]),
            }
        return pd.DataFrame.from_dict(rows, orient="index")

    def __repr__(self) -> str:
        lo, hi = self.interval(0.9, "eps")
        return (
            f"Posterior({self.n_chains} chains x {self.n_draws} draws; vars {self.var_names}; "
            f"eps median {self.quantile(0.5):.3g}, 90% interval [{lo:.3g}, {hi:.3g}])"
        )

    def report(self, path, **kwargs) -> Path:
        """Write a self-contained HTML report to ``path``.

        The report holds the inputs, summary, warnings, figures and how to reproduce the run;
        keyword arguments go to :func:`bayes_dp.report.write_report`.

        Returns
        -------
        pathlib.Path
            The file written.

        A posterior of :func:`~bayes_dp.estimate_gdp` gets its own page
        (:func:`bayes_dp.report.gdp_page.write_gdp_report`: mu and eps(delta), the fit check, and
        the table of :func:`~bayes_dp.compare_estimators` when passed as ``comparison=``).

        Raises
        ------
        NotImplementedError
            For posteriors of :func:`~bayes_dp.estimate_one_run`, which the report does not
            cover yet.
        """
        # The package's one lazy import of a module that imports this one: the report draws
        # plots of a Posterior (tests/project/test_import_graph.py allows this edge and no other;
        # the report hands Gaussian-DP posteriors to their own page).
        from bayes_dp.report import write_report

        return write_report(self, path, **kwargs)

    # -- ArviZ and files --------------------------------------------------------------------
    def to_arviz(self):
        """Return the ArviZ data object.

        That is ``InferenceData`` (arviz 0.x) or ``DataTree`` (arviz 1.x), groups
        ``posterior`` and ``sample_stats`` with dims (chain, draw), and ``log_likelihood``
        (dims chain, draw, base) when it was kept.
        """
        attrs = {
            "bayes_dp_settings": json.dumps(self.settings),
            "bayes_dp_format": 1,
            # netCDF files list variables in alphabetical order; keep the sampler's order
            "bayes_dp_var_names": json.dumps(self.var_names),
        }
        try:
            loglik = self.log_likelihood
        except MemoryError as e:  # the draws must still reach the caller (and the file)
            from bayes_dp.core.exceptions import OutputSkippedWarning

            why = f"MemoryError: {e}"
            warnings.warn(
                OutputSkippedWarning(
                    f"the log_likelihood group was left out ({why})",
                    output="log_likelihood",
                    reason=why,
                ),
                stacklevel=2,
            )
            loglik = None
        return arviz_adapter.from_dict(
            dict(self._draws), dict(self._stats), attrs, log_likelihood=loglik
        )

    def to_netcdf(self, path) -> Path:
        """Write the posterior (draws, sampler statistics, settings) to a netCDF file.

        The file is written under a temporary name in the same folder and then renamed, so
        ``path`` never holds a half-written file (not even after Ctrl-C).
        """
        from bayes_dp.core.files import atomic_path

        path = Path(path)
        data = self.to_arviz()
        with atomic_path(path) as tmp:
            arviz_adapter.to_netcdf(data, tmp)
        return path


class CountsPosterior(Posterior):
    """The posterior of :func:`~bayes_dp.estimate_epsilon`: MCMC draws from attack counts.

    Variables eps, the attack strengths (``s``, ``s_<group>``) and the over-dispersion
    parameters of correlated groups (``tau_<group>``, ``rho_<group>``); the sampler's
    acceptance statistics and, for the exact sampler, the pointwise log-likelihood. Groups of
    one-run audits (likelihood ``"guesses"``) are recorded with ``kind`` ``"one_run"`` in
    ``settings["groups"]``, as :class:`OneRunPosterior` records its audits.
    """

    #: ``settings["model"]`` of this kind (absent from the settings of a counts posterior).
    MODEL = None


class GdpPosterior(Posterior):
    """The posterior of :func:`~bayes_dp.estimate_gdp`: the Gaussian-DP mu and eps at delta.

    Independent draws from a grid (``chains`` only splits them for the diagnostics). The prior
    is on mu, so :meth:`prior_sensitivity` rescales mu's prior (eps is an increasing function
    of mu), and :meth:`epsilon_at` converts the draws of mu to eps at any delta.
    """

    MODEL = "gdp"

    def epsilon_at(self, delta: float) -> np.ndarray:
        """Draws of eps at ``delta`` of a Gaussian-DP posterior (:func:`bayes_dp.estimate_gdp`).

        Each draw of ``mu`` is converted exactly (:func:`bayes_dp.gdp_epsilon`), so any delta
        can be asked for after the run.

        Parameters
        ----------
        delta : float
            In (0, 1).

        Returns
        -------
        ndarray (chains, draws)

        Raises
        ------
        ValueError
            For a ``delta`` outside (0, 1).
        """
        # the draws of mu are finite and >= 0: only delta needs a check (as in gdp_epsilon)
        delta = check_delta(delta, positive=True)
        return gaussian_epsilon_array(self._draws["mu"], delta)

    def _rescaled_prior(self) -> tuple[list | None, str]:
        return self.settings.get("mu_prior"), "mu"


class OneRunPosterior(Posterior):
    """The posterior of :func:`~bayes_dp.estimate_one_run`: eps (and s) from one-run audits.

    Independent draws from a grid (``chains`` only splits them for the diagnostics). The HTML
    report does not cover it yet.
    """

    MODEL = "one_run"


#: ``settings["model"]`` -> the class of that kind of posterior.
_KINDS = {cls.MODEL: cls for cls in (CountsPosterior, GdpPosterior, OneRunPosterior)}


#: First bytes of an HDF5 file (netCDF-4, what :meth:`Posterior.to_netcdf` writes).
_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
_EXPECTED = (
    "expected a netCDF posterior file written by Posterior.to_netcdf or `bayes-dp estimate` "
    "(DIR/posterior.nc)"
)


def load_posterior(path) -> Posterior:
    """Read a posterior written by :meth:`Posterior.to_netcdf`.

    Parameters
    ----------
    path : str or path-like
        The netCDF file.

    Returns
    -------
    Posterior
        Of the class of the run that wrote it (:class:`CountsPosterior`, :class:`GdpPosterior`
        or :class:`OneRunPosterior`, from ``settings["model"]``).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If ``path`` is a folder, is not a netCDF file (the message names the file and shows how
        it starts), or is a netCDF file that bayes_dp did not write.
    """
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{str(path)!r} is a folder; {_EXPECTED}")
    if not path.is_file():
        raise FileNotFoundError(f"`path` does not exist: {str(path)!r}")
    with path.open("rb") as fh:
        head = fh.read(64)
    if not (head.startswith(_HDF5_SIGNATURE) or head.startswith(b"CDF")):
        shown = head.split(b"\n")[0][:40].decode("utf-8", "replace")
        raise ValueError(
            f"{str(path)!r} is not a netCDF file (it starts with {shown!r}); {_EXPECTED}"
        )
    try:
        data = arviz_adapter.from_netcdf(path)
        post = arviz_adapter.group(data, "posterior")
        stats = arviz_adapter.group(data, "sample_stats")
    except (OSError, KeyError, AttributeError, ValueError) as e:
        raise ValueError(
            f"{str(path)!r} could not be read as a bayes_dp posterior ({e}); {_EXPECTED}"
        ) from None
    raw = arviz_adapter.attrs(data).get("bayes_dp_settings")
    if raw is None:
        raise ValueError(
            f"{str(path)!r} was not written by bayes_dp (no settings recorded); {_EXPECTED}"
        )
    settings = json.loads(raw)
    names = _run_order(list(post.data_vars), arviz_adapter.attrs(data), settings)
    draws = {v: post[v].transpose("chain", "draw").values for v in names}
    sstats = {v: stats[v].transpose("chain", "draw").values for v in stats.data_vars}
    loglik = None
    if arviz_adapter.has_group(data, "log_likelihood"):
        ll = arviz_adapter.group(data, "log_likelihood")
        loglik = {v: ll[v].transpose("chain", "draw", ...).values for v in ll.data_vars}
    model = settings.get("model")
    if model not in _KINDS:
        raise ValueError(
            f"{str(path)!r} holds a posterior of an unknown kind (settings['model'] = {model!r}; "
            f"known: {sorted(_KINDS, key=str)}); {_EXPECTED}"
        )
    return _KINDS[model](draws, sstats, settings, log_likelihood=loglik)


def _run_order(names: list[str], attrs: dict, settings: dict) -> list[str]:
    """Return the variables in the order the run made them (netCDF lists them alphabetically).

    Files record the order; for older ones it is rebuilt from the groups in the settings:
    eps, the strengths in order of first use, then tau and rho group by group.
    """
    order = json.loads(attrs.get("bayes_dp_var_names", "[]"))
    if sorted(order) == sorted(names):
        return order
    expected = ["eps"]
    for g in settings.get("groups", []):
        s = "s" if g.get("strength") == "shared" else f"s_{g.get('name')}"
        if s not in expected:
            expected.append(s)
    for g in settings.get("groups", []):
        expected += [f"tau_{g.get('name')}", f"rho_{g.get('name')}"]
    rank = {v: i for i, v in enumerate(expected)}
    return sorted(names, key=lambda v: (rank.get(v, len(expected)), names.index(v)))
