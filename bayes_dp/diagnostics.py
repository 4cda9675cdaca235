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

if TYPE_CHECKING:  # pragma: no cover
    from .posterior import Posterior

__all__ = [
    "ACCEPT_RANGE",
    "ESS_PER_CHAIN_MIN",
    "RHAT_MAX",
    "Finding",
    "findings",
    "stopping_rule",
]

#: r_hat above this value is reported.
RHAT_MAX = 1.01
#: Bulk or tail ESS below this many per chain is reported.
ESS_PER_CHAIN_MIN = 100
#: Acceptance rates outside this range are reported (the warm-up tunes towards 0.3).
ACCEPT_RANGE = (0.1, 0.6)

#: Kinds of finding that say the chains may not have converged or mixed enough.
CONVERGENCE_KINDS = ("not_converged", "r_hat", "ess_bulk", "ess_tail")


@dataclass(frozen=True)
class Finding:
    """One problem with a run.

    Attributes
    ----------
    kind : str
        ``"not_converged"``, ``"r_hat"``, ``"ess_bulk"``, ``"ess_tail"``, ``"acceptance"`` or
        ``"fixed"`` (see :mod:`bayes_dp.diagnostics`).
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
    from .estimate import AUTO_ESS_MIN, AUTO_RHAT_MAX

    return (
        f"every variable reached r_hat <= {AUTO_RHAT_MAX} and bulk and tail ESS >= {AUTO_ESS_MIN}"
    )


def _worst(diag: dict) -> str:
    """Name the variable furthest from the stopping rule.

    That is the highest r_hat above it, else the smallest ESS.
    """
    from .estimate import AUTO_RHAT_MAX

    high = [v for v, d in diag.items() if not d["r_hat"] <= AUTO_RHAT_MAX]
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
        from .estimate import AUTO_MAX_DRAWS

        why = f"it reached the largest run the sampler makes ({AUTO_MAX_DRAWS} draws per chain)"
        todo = (
            "The chains mix too slowly for an automatic run: look at the trace plots, or run a "
            "fixed, longer `draws` (--draws on the command line)."
        )
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
    from .posterior import Posterior

    if not isinstance(posterior, Posterior):
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
