"""What is wrong with a sampling run: the thresholds and the words, in one place.

:func:`findings` checks a :class:`~bayes_dp.Posterior` and returns one :class:`Finding` per
problem, each with a sentence in plain words that says what to do. Everything that reports on a
run formats these findings and nothing else: :meth:`Posterior.check` and
:func:`bayes_dp.estimate_epsilon` (as :class:`~bayes_dp.ConvergenceWarning`),
:func:`bayes_dp.report.plain_warnings` (the HTML report and ``bayes-dp``'s warnings and
``--json`` object).

The checks:

* ``"not_converged"``: an automatic-length run stopped (time budget or largest run) before its
  own stopping rule held (:func:`stopping_rule`);
* ``"r_hat"``: rank-normalised split r_hat above :data:`RHAT_MAX`;
* ``"ess_bulk"``, ``"ess_tail"``: effective sample size below :data:`ESS_PER_CHAIN_MIN` per chain;
* ``"acceptance"``: the acceptance rate of a move outside :data:`ACCEPT_RANGE`;
* ``"fixed"``: an attack strength (or another variable) fixed rather than inferred.

The kinds of the first three items are about convergence (:attr:`Finding.convergence`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from bayes_dp.core.thresholds import (
    ACCEPT_RANGE,
    AUTO_ESS_MIN,
    AUTO_MAX_DRAWS,
    ESS_PER_CHAIN_MIN,
    RHAT_MAX,
)

if TYPE_CHECKING:  # pragma: no cover (for type checkers: this module does not import Posterior)
    from bayes_dp.results.posterior import Posterior

__all__ = [
    "ACCEPT_RANGE",
    "ESS_PER_CHAIN_MIN",
    "RHAT_MAX",
    "GLOSSARY",
    "Finding",
    "findings",
    "glossary",
    "passes_convergence_checks",
    "stopping_rule",
]


#: Every statistic and diagnostic the summary table, the report and ``bayes-dp`` show, in plain
#: words (:func:`glossary` picks the entries a run shows).
GLOSSARY = {
    "mean": "posterior mean",
    "sd": "posterior standard deviation",
    "q": "qP%: the P% posterior quantile (P% of the draws lie below it); q5% and q95% are the "
    "ends of the equal-tailed 90% credible interval",
    "hdi": "hdi_P%_lo, hdi_P%_hi: the ends of the highest-density interval holding P% of the "
    "posterior (the shortest such interval)",
    "mcse_mean": "Monte Carlo standard error of the posterior mean: how much the mean would "
    "vary between repeated runs of the sampler",
    "mcse_sd": "Monte Carlo standard error of the posterior sd",
    "ess_bulk": f"effective sample size for the centre of the distribution (mean, median): the "
    f"number of independent draws the correlated chains are worth; want >= {ESS_PER_CHAIN_MIN} "
    "per chain",
    "ess_tail": "effective sample size for the 5% and 95% quantiles (the interval ends); "
    f"want >= {ESS_PER_CHAIN_MIN} per chain",
    "r_hat": f"rank-normalised split R-hat: compares the chains with each other; want <= "
    f"{RHAT_MAX} (higher: the chains disagree, run longer)",
    "accept_joint": "acceptance rate of the random-walk move on all variables at once "
    f"(tuned towards 0.3; reported outside {ACCEPT_RANGE[0]}-{ACCEPT_RANGE[1]})",
    "accept_ridge": "acceptance rate of the move along the ridge s * eps = const, where the "
    "likelihood is nearly flat when s is inferred",
    "accept_table": "acceptance rate of the exact sampler's table walk (a few dozen cheap "
    "steps on an interpolated table of the likelihood, then one exact correction; near 1: the "
    "table is accurate)",
    "accept_overdispersion": "acceptance rate of MHAAR's move on the correlation parameters "
    "(tau, rho) of correlated-count groups",
    "converged": "True: the automatic-length run met its stopping rule; False: it stopped "
    "first (time budget or largest run) or a fixed-length run fails the checks; the result is "
    "then not reliable",
    "sampling_seconds": "seconds the sampler ran, from building the model to the last draw "
    "(compilation of the kernels included on a first run)",
    "classical eps": "the eps an optimal attack on a worst-case challenge base (s = 1) would "
    "imply from the observed rates; the usual audit's point estimate",
    "Clopper-Pearson": "the classical confidence interval of eps from exact binomial bounds of "
    "every error rate; its lower end is the usual audit's lower bound",
    "s": "attack strength: 1 is an optimal attack on a worst-case challenge base, smaller "
    "values a weaker attack; inferred from the data unless fixed",
    "R_s": "the band of (FPR, FNR) pairs an attack of strength s can reach under (eps, delta)-"
    "DP; its inner edge is the boundary scaled by s",
    "prior sensitivity": "the eps interval with the eps prior's scale halved and doubled, by "
    "reweighting the draws; a large move means the prior, not the data, sets that end",
}


#: What :func:`findings` reads of a posterior.
_POSTERIOR_ATTRS = ("diagnostics", "settings", "converged", "n_chains", "n_draws", "acceptance")

#: Kinds of finding that say the chains may not have converged or mixed enough.
CONVERGENCE_KINDS = ("not_converged", "r_hat", "ess_bulk", "ess_tail")


@dataclass(frozen=True)
class Finding:
    """One problem with a run.

    Attributes
    ----------
    kind : str
        ``"not_converged"``, ``"r_hat"``, ``"ess_bulk"``, ``"ess_tail"``, ``"acceptance"`` or
        ``"fixed"`` (see :mod:`bayes_dp.results.diagnostics`).
    var : str
        The variable concerned (for ``"acceptance"``: the move; for ``"not_converged"``: the
        variable furthest from the stopping rule).
    value : float
        What was found (r_hat, ESS, acceptance rate, the fixed value; for ``"not_converged"``
        the draws per chain).
    limit : float or None
        The threshold it crossed (None for ``"fixed"`` and ``"not_converged"``).
    message : str
        One sentence in plain words: what is wrong and what to do.
    """

    kind: str
    var: str
    value: float
    limit: float | None
    message: str

    @property
    def convergence(self) -> bool:
        """Whether this finding says the chains may not have converged or mixed enough."""
        return self.kind in CONVERGENCE_KINDS


def stopping_rule() -> str:
    """Return the criteria an automatic-length run (``draws=None``) stops at, in words.

    Examples
    --------
    >>> stopping_rule()
    'every variable reached r_hat <= 1.01 and bulk and tail ESS >= 4000'
    """
    return f"every variable reached r_hat <= {RHAT_MAX} and bulk and tail ESS >= {AUTO_ESS_MIN}"


def glossary(terms=None) -> dict[str, str]:
    """Plain-words meaning of the statistics and diagnostics that bayes-dp shows.

    Parameters
    ----------
    terms : iterable of str, optional
        Column names or move names (``"q5%"``, ``"hdi_90%_lo"``, ``"accept_joint"``, ...);
        quantile and HDI columns map to the entries ``"q"`` and ``"hdi"``. Default: all.

    Returns
    -------
    dict of str -> str
        One entry per distinct term that has a meaning, in order of first appearance.

    Raises
    ------
    TypeError
        If ``terms`` is a string rather than an iterable of them.

    Examples
    --------
    >>> list(glossary(["mean", "q5%", "q95%", "hdi_90%_lo", "r_hat"]))
    ['mean', 'q', 'hdi', 'r_hat']
    """
    if terms is None:
        return dict(GLOSSARY)
    if isinstance(terms, str):
        raise TypeError(f"`terms` must be an iterable of names, not one string; found {terms!r}")
    out = {}
    for t in terms:
        key = str(t)
        if key.startswith("hdi"):
            key = "hdi"
        elif key.startswith("q") and key.endswith("%"):
            key = "q"
        if key in GLOSSARY:
            out.setdefault(key, GLOSSARY[key])
    return out


def _worst(diag: dict) -> str:
    """Name the variable furthest from the stopping rule.

    That is the highest r_hat above it, else the smallest ESS.
    """
    high = [v for v, d in diag.items() if not d["r_hat"] <= RHAT_MAX]
    if high:
        return max(high, key=lambda v: diag[v]["r_hat"])
    return min(diag, key=lambda v: min(diag[v]["ess_bulk"], diag[v]["ess_tail"]))


def _not_converged(posterior: Posterior, diag: dict) -> Finding:
    st = posterior.settings
    reason = st.get("stop_reason")
    if reason == "max_time":
        budget = st.get("max_time")
        why = f"its time budget{f' of {budget:g} s' if budget else ''} ran out"
        todo = "Run again with more time (max_time, or --max-time on the command line)."
    elif reason == "max_draws":
        why = f"it reached the largest run the sampler makes ({AUTO_MAX_DRAWS} draws per chain)"
        todo = (
            "The chains mix too slowly for an automatic run: look at the trace plots, or run a "
            "fixed, longer `draws` (--draws on the command line)."
        )
    elif reason == "minor_mode":
        m = st.get("minor_mode") or {}
        eps, lp = m.get("eps", float("nan")), m.get("log_post", float("nan"))
        gap = lp - m.get("log_post_draws", float("nan"))
        r = st.get("mode_restart") or {}
        again = (
            "no time was left to sample again from there"
            if r.get("no_draws") or not r
            else "chains sampled again from a point of that mode missed it again"
        )
        message = (
            f"Not converged: the chains sit in a minor mode. At eps = {eps:.2g} the log posterior "
            f"density is {lp:.2f}, {gap:.1f} above the best of the chains' draws, and {again}; "
            "the result is not reliable. With many barely exposed bases (LiRA score matrices) "
            "the model has a mode at eps ~ 0; see docs/validation/lira.md, 'Which likelihood for "
            "a score "
            "matrix' and 'A mode the chains missed'."
        )
        return Finding("not_converged", "eps", float(posterior.n_draws), None, message)
    else:
        why = "it stopped early"
        todo = "Run again with more time (max_time, or --max-time on the command line)."
    asked = st.get("draws_requested")
    goal = f"the {asked} draws per chain asked for" if asked is not None else stopping_rule()
    var = _worst(diag)
    d = diag[var]
    message = (
        f"Not converged: the run stopped after {posterior.n_draws} draws per chain because "
        f"{why}, before {goal} ({var}: r_hat {d['r_hat']:.3f}, ESS bulk {d['ess_bulk']:.0f}, "
        f"tail {d['ess_tail']:.0f}); the result is not reliable. {todo}"
    )
    return Finding("not_converged", var, float(posterior.n_draws), None, message)


def findings(posterior: Posterior) -> list[Finding]:
    """Check a run and return its problems, most serious first (empty when all is well).

    Parameters
    ----------
    posterior : Posterior

    Returns
    -------
    list of Finding
        The run stopping before it converged, then per variable r_hat and bulk and tail ESS,
        then acceptance rates, then fixed variables.

    Raises
    ------
    TypeError
        If ``posterior`` is not a :class:`~bayes_dp.Posterior`.

    Examples
    --------
    >>> import numpy as np
    >>> from bayes_dp import Posterior
    >>> rng = np.random.default_rng(0)
    >>> stuck = np.stack([rng.normal(0, 1, 200), rng.normal(3, 1, 200)])  # chains disagree
    >>> found = findings(Posterior({"eps": stuck}, {}, {}))
    >>> [(f.kind, f.var) for f in found][:1]
    [('r_hat', 'eps')]
    >>> print(found[0].message)
    r_hat 1.740 for eps (should be <= 1.01): the chains have not reached the same
    distribution; run longer (more draws and tune).
    """
    # checked by what is used rather than by class: this module does not import Posterior
    if not all(hasattr(posterior, a) for a in _POSTERIOR_ATTRS):
        raise TypeError(
            f"`posterior` must be a bayes_dp.Posterior; found {type(posterior).__name__}"
        )
    out = []
    diag = posterior.diagnostics()
    if posterior.converged is False:
        out.append(_not_converged(posterior, diag))
    min_ess = ESS_PER_CHAIN_MIN * posterior.n_chains
    for v, d in diag.items():
        if not d["r_hat"] <= RHAT_MAX:
            out.append(
                Finding(
                    "r_hat",
                    v,
                    float(d["r_hat"]),
                    RHAT_MAX,
                    f"r_hat {d['r_hat']:.3f} for {v} (should be <= {RHAT_MAX}): the chains have "
                    "not reached the same distribution; run longer (more draws and tune).",
                )
            )
        for kind in ("bulk", "tail"):
            e = d[f"ess_{kind}"]
            if not e >= min_ess:
                what = "the mean and median" if kind == "bulk" else "the interval ends"
                out.append(
                    Finding(
                        f"ess_{kind}",
                        v,
                        float(e),
                        float(min_ess),
                        f"ESS {kind} {e:.0f} for {v} is below {min_ess} ({ESS_PER_CHAIN_MIN} "
                        f"per chain): {what} of {v} are noisy; run longer (more draws).",
                    )
                )
    for move, a in posterior.acceptance.items():
        lo, hi = ACCEPT_RANGE
        if move == "accept_table":
            # the surrogate transition of the exact sampler: the closer to 1 the better
            hi = 1.0
        if not lo <= a <= hi:
            name = move.replace("accept_", "")
            out.append(
                Finding(
                    "acceptance",
                    name,
                    float(a),
                    lo if not a >= lo else hi,
                    f"acceptance rate {a:.2f} of the {name} move is outside [{lo}, {hi}]: the "
                    "chains move inefficiently; use a longer warm-up (tune).",
                )
            )
    for v, val in posterior.settings.get("fixed", {}).items():
        out.append(
            Finding(
                "fixed",
                v,
                float(val),
                None,
                f"{v} was fixed at {val:g} rather than inferred: the interval for eps is only "
                "right if the attack is known to be that strong; s near 1 gives over-confident "
                "intervals.",
            )
        )
    return out


def passes_convergence_checks(posterior: Posterior) -> bool:
    """Tell whether a run's result passes the convergence checks, however its length was set.

    False when :func:`findings` reports a convergence problem: an automatic-length run that
    stopped before its stopping rule held, or (any run) r_hat above :data:`RHAT_MAX` or a bulk
    or tail ESS below :data:`ESS_PER_CHAIN_MIN` per chain. ``bayes-dp`` exits with status 3
    and prints NOT CONVERGED when this is False.

    Parameters
    ----------
    posterior : Posterior

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> from bayes_dp import Posterior
    >>> draws = np.random.default_rng(1).normal(3.0, 0.2, size=(4, 500))
    >>> passes_convergence_checks(Posterior({"eps": draws}, {}, {}))
    True
    >>> draws[0] += 1.0  # one chain elsewhere: r_hat far above 1.01
    >>> passes_convergence_checks(Posterior({"eps": draws}, {}, {}))
    False
    """
    return not any(f.convergence for f in findings(posterior))
