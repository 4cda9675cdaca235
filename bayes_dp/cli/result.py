"""The ``--json`` object of ``bayes-dp estimate``, the exit statuses, the output folder check."""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path

import numpy as np

from bayes_dp.core.thresholds import AUTO_ESS_MIN, ESS_PER_CHAIN_MIN, RHAT_MAX
from bayes_dp.io.counts import InputError

#: Exit statuses of ``bayes-dp`` and what they mean (also in the ``--json`` output).
EXIT_STATUSES = {
    0: "success (warnings, if any, are listed but do not change the status)",
    1: "bad input, or a file that cannot be read or written; nothing was sampled or the "
    "results were not written",
    2: "usage error: unknown, missing or malformed command-line options",
    3: "not converged: the result fails the convergence checks (the time budget, --max-time, "
    f"ran out before every variable reached r_hat <= {RHAT_MAX} and bulk and tail ESS >= "
    f"{AUTO_ESS_MIN}, or a run of fixed --draws ended with r_hat > {RHAT_MAX} or an ESS below "
    f"{ESS_PER_CHAIN_MIN} per chain); the results "
    "were written but are not reliable (nothing is written when not even the warm-up "
    "finished)",
    4: "Gaussian-DP run whose scores the Gaussian shape does not fit (the fit check fails): "
    "the whole-ROC figures are not a finding; the claim states the bound that assumes no shape "
    "instead (results and report written)",
    130: "interrupted (Ctrl-C); no result files were written",
}


#: Exit status of a run that did not converge within its time budget.
NOT_CONVERGED = 3
#: Exit status of a Gaussian-DP run whose scores fail the fit check of the Gaussian shape.
SHAPE_NOT_FIT = 4


def _finite(x):
    """``x`` as a float, or None where it is NaN or infinite (JSON has neither)."""
    x = float(x)
    return x if math.isfinite(x) else None


def _prior_text(prior, uses_tau: bool) -> str:
    """Write the prior as ``Prior(eps=..., s=...)``, with tau only when a group has a tau."""
    tau = f", tau={prior.tau!r}" if uses_tau else ""
    return f"Prior(eps={prior.eps!r}, s={prior.s!r}{tau})"


def _uses_tau(likelihoods) -> bool:
    return any(lik in ("bivariate_normal", "beta_binomial") for lik in likelihoods)


def _result_json(post, files: dict, prob: float = 0.9) -> dict:
    """Build the ``--json`` object of a posterior (see the README's command-line section).

    Its exit status is 3 (:data:`NOT_CONVERGED`) when the result fails the convergence checks
    (:func:`~bayes_dp.results.diagnostics.passes_convergence_checks`), however the run's length was
    set, and 0 otherwise.
    """
    from bayes_dp.core.priors import parse_prior
    from bayes_dp.report import plain_warnings
    from bayes_dp.results.claim import audit_claim
    from bayes_dp.results.diagnostics import glossary, passes_convergence_checks

    st = post.settings
    diag = post.diagnostics()
    lo_q, hi_q = (1 - prob) / 2, (1 + prob) / 2
    variables = {}
    for v in post.var_names:
        q = post.quantile([0.05, 0.25, 0.5, 0.75, 0.95], v)
        lo, hi = post.interval(prob, v)
        h_lo, h_hi = post.hdi(prob, v)
        variables[v] = {
            "mean": _finite(post.mean(v)),
            "median": _finite(q[2]),
            "sd": _finite(np.std(post.draws(v))),
            "quantiles": {
                f"{p:g}": _finite(x) for p, x in zip((0.05, 0.25, 0.5, 0.75, 0.95), q, strict=True)
            },
            "interval": [_finite(lo), _finite(hi)],
            "hdi": [_finite(h_lo), _finite(h_hi)],
            "r_hat": _finite(diag[v]["r_hat"]),
            "ess_bulk": _finite(diag[v]["ess_bulk"]),
            "ess_tail": _finite(diag[v]["ess_tail"]),
        }
    eps = variables["eps"]
    converged = passes_convergence_checks(post)
    status = 0 if converged else NOT_CONVERGED
    prior = parse_prior(st.get("prior", ""))
    groups = st.get("groups", [])
    if prior is not None:
        prior = _prior_text(prior, _uses_tau(g.get("likelihood") for g in groups))
    else:
        prior = st.get("prior")
    return {
        "exit_status": status,
        "exit_status_meaning": EXIT_STATUSES[status],
        "converged": converged,
        "stop_reason": st.get("stop_reason"),
        "sampling_seconds": st.get("seconds"),
        "max_time": st.get("max_time"),
        "eps": {
            "median": eps["median"],
            "credible_interval": eps["interval"],
            "prob": prob,
            "quantile_probs": [round(lo_q, 12), 0.5, round(hi_q, 12)],
        },
        "claim": audit_claim(post, hi_q).to_dict(),
        "delta": st.get("delta"),
        "variables": variables,
        "diagnostics": {
            v: {k: _finite(d[k]) for k in ("r_hat", "ess_bulk", "ess_tail")}
            for v, d in diag.items()
        },
        "acceptance": {k: _finite(a) for k, a in post.acceptance.items()},
        "warnings": plain_warnings(post) + _dependence_warnings(st),
        # score matrices: how dependent the pooled counts are (mia.dependence), and the
        # frequentist lower bounds of eps beside the posterior (mia.bounds.companion_bounds)
        "dependence": {
            g.get("name"): g["dependence"] for g in groups if isinstance(g.get("dependence"), dict)
        }
        or None,
        "companion": st.get("companion"),
        "fixed": st.get("fixed", {}),
        "groups": [_group_json(g) for g in groups],
        "seed": st.get("seed"),
        "chains": post.n_chains,
        "draws": post.n_draws,
        "tune": st.get("tune"),
        "prior": prior,
        "versions": st.get("versions", {}),
        "files": files,
        # the meaning of every statistic above, as the text summary prints it
        "glossary": glossary(
            [
                *next(iter(variables.values()), {}),
                "q",
                "converged",
                "sampling_seconds",
                *post.acceptance,
            ]
        ),
    }


def _group_json(g: dict) -> dict:
    """Name, likelihood and strength of a group; a group of one-run audits adds its evidence.

    That is, per audit, ``m``, ``r`` (the guesses, k of the game), ``v`` (right), ``pairs``
    (the design: matched pairs of models, or membership bits), ``delta_slack`` and the
    ``source`` record of how the guesses were made.
    """
    out = {k: g.get(k) for k in ("name", "likelihood", "strength")}
    if g.get("kind") == "one_run":
        out.update({k: g.get(k) for k in ("m", "r", "v", "pairs", "delta_slack", "source")})
    return out


def _dependence_warnings(st: dict) -> list[str]:
    """One warning per evidence group whose pooled counts are dependent (deflated or not)."""
    from bayes_dp.results.claim import DEPENDENCE_INFO_MIN

    out = []
    for g in st.get("groups", []):
        rec = g.get("dependence")
        if isinstance(rec, dict) and (rec.get("info_ratio") or 1.0) < DEPENDENCE_INFO_MIN:
            how = (
                "the interval was computed on effective counts, which raised false accusations "
                "where measured (docs/validation/lira.md)"
                if rec.get("corrected", False)
                else "the interval treats them as independent and is optimistic"
            )
            out.append(
                f"group {g.get('name')!r}: the pooled counts carry {rec['info_ratio']:.2f} of "
                "the information independent decisions would (design effect FP "
                f"{rec['fp_design_effect']:.2f}, FN {rec['fn_design_effect']:.2f}); {how}"
            )
    return out


def _not_converged_words(post) -> str:
    """Why a result fails the convergence checks and what to do, in one line."""
    from bayes_dp.results.diagnostics import ESS_PER_CHAIN_MIN, RHAT_MAX, findings

    if post.converged is False:
        return (
            "the run stopped (time budget or largest run) before it converged: the result is "
            "not reliable; give more time (--max-time)"
        )
    found = [f for f in findings(post) if f.convergence]
    vs = ", ".join(dict.fromkeys(f.var for f in found))
    return (
        f"the {post.n_draws} draws per chain fail the convergence checks for {vs} (r_hat above "
        f"{RHAT_MAX} or ESS below {ESS_PER_CHAIN_MIN} per chain): the result is not reliable; "
        "run longer (--draws, or leave --draws out to run until converged)"
    )


def _check_writable_dir(outdir: Path) -> None:
    """Raise InputError unless ``outdir`` is, or can be created as, a writable folder.

    Nothing is left behind: when ``outdir`` does not exist yet, a temporary folder is made and
    removed in its nearest existing parent.
    """
    probe_in = outdir
    while not probe_in.exists():
        if probe_in.parent == probe_in:
            break
        probe_in = probe_in.parent
    if probe_in.exists() and not probe_in.is_dir():
        what = "exists" if probe_in == outdir else f"cannot be created: {probe_in} exists"
        raise InputError(f"--out {outdir} {what} and is not a folder")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".bayes-dp-probe-", dir=probe_in))
    except OSError as e:
        raise InputError(
            f"--out {outdir}: cannot create or write files in {probe_in} "
            f"({e.strerror or e}); choose a writable folder"
        ) from None
