"""The HTML report of a Gaussian-DP posterior (:func:`bayes_dp.estimate_gdp`).

The page of :mod:`bayes_dp.report` for posteriors of mu: what the audit shows (the claim
sentence), the posterior of mu and of eps at the run's delta and at other deltas (figures and
a table), the fit check of each score group, the evidence groups, the side-by-side table of
:func:`bayes_dp.compare_estimators` when it is given, and what is needed to reproduce the run.
Kept apart from ``report.py`` (whose helpers it uses) because the two pages share little.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bayes_dp import plots
from bayes_dp.core.files import atomic_path
from bayes_dp.report.html_parts import (
    COLUMN_PX,
    PX_PER_INCH,
    _fmt,
    _table,
    claim_html,
    figures_html,
    page_head,
    plain_warnings,
)
from bayes_dp.results.claim import audit_claim

if TYPE_CHECKING:
    from bayes_dp.results.posterior import Posterior

#: Deltas of the table of eps(delta) (the run's delta is added).
TABLE_DELTAS = (1e-2, 1e-3, 1e-5, 1e-8, 1e-10)


def _groups_html(st: dict) -> str:
    rows = []
    for g in st.get("groups", []):
        kind = g.get("kind")
        if kind == "gdp":
            a, b = np.asarray(g["out_counts"]), np.asarray(g["in_counts"])
            what = f"{int(b.sum())} in- and {int(a.sum())} out-scores in {a.size} bins"
        elif kind == "counts":
            what = (
                f"{len(g['fp'])} challenge base(s), fp {g['fp']}, fn {g['fn']}, n_neg "
                f"{g['n_neg']}, n_pos {g['n_pos']}; audited at δ = {g['delta']:g}"
            )
        else:
            what = f"one-run audit(s): m {g['m']}, r {g['r']}, v {g['v']}"
        rows.append([g.get("name", "-"), kind or "?", g.get("strength", "shared"), what])
    return _table(["group", "kind", "strength", "evidence"], rows, left=4)


def _fit_html(st: dict) -> str:
    from bayes_dp.gdp.core import FIT_P_MIN

    checks = st.get("fit_check")
    if not checks:
        return "<p>No score group: no fit check.</p>" if "fit_check" in st else ""
    rows = [
        [name, _fmt(p, 3), "fails: the Gaussian shape does not fit" if p < FIT_P_MIN else "passes"]
        for name, p in checks.items()
    ]
    return (
        "<p>Posterior predictive check of each score group's binned counts (Pearson's X², "
        f"docs/validation/gdp.md section 2): a p-value below {FIT_P_MIN} says the equal-variance "
        f"binormal "
        "(Gaussian trade-off) shape does not fit, and eps at small δ, which that shape "
        "extrapolates, should not be trusted.</p>" + _table(["group", "p-value", "verdict"], rows)
    )


def _eps_table(post: Posterior, prob: float) -> str:
    delta = post.settings["delta"]
    deltas = sorted({*TABLE_DELTAS, delta}, reverse=True)
    q = [(1 - prob) / 2, 0.5, (1 + prob) / 2]
    rows = []
    for d in deltas:
        lo, med, hi = np.quantile(post.epsilon_at(d), q)
        rows.append([f"{d:g}" + (" (the run's)" if d == delta else ""), med, lo, hi])
    pct = f"{100 * prob:g}%"
    return (
        "<p>eps at several δ from the same draws of mu (exact conversion, Dong, Roth and Su); "
        "at small δ it is the Gaussian shape extrapolated far below the false-positive rates "
        "the data see (docs/validation/gdp.md section 1).</p>"
        + _table(["δ", "median ε", f"{pct} lower", f"{pct} upper"], rows)
    )


def _compare_html(comparison) -> str:
    if comparison is None:
        return (
            "<p>No side-by-side table: pass <code>comparison=bayes_dp.compare_estimators(...)"
            "</code> to <code>Posterior.report</code>, or run <code>bayes-dp estimate</code> "
            "with <code>--compare</code>.</p>"
        )
    rows = [
        [
            str(name),
            *(r[c] for c in ("lower", "median", "upper", "width")),
            "yes" if r.get("gaussian_shape", False) else "no",
            str(r["assumes"]),
        ]
        for name, r in comparison.iterrows()
    ]
    return (
        "<p>The same scores, other estimators (bayes_dp.compare_estimators): ε at the run's "
        "δ; for the bounds, <i>lower</i> is the frequentist lower bound. Rows that assume the "
        "Gaussian shape can lie above the ε of a mechanism that is not Gaussian.</p>"
        + _table(
            ["estimator", "lower", "median", "upper", "width", "Gaussian shape", "assumes"],
            rows,
            left=1,
        )
    )


def _headline_html(posterior: Posterior, claim, prob: float) -> str:
    """Write the result line: the shape-free bound first, the Gaussian figures if fit."""
    delta = posterior.settings["delta"]
    lo, hi = posterior.interval(prob, "eps")
    mlo, mhi = posterior.interval(prob, "mu")
    pct = f"{100 * prob:g}%"
    gauss = (
        f"{pct} credible interval for mu: [{mlo:.3g}, {mhi:.3g}]; for ε at δ = {delta:g}: "
        f"[{lo:.3g}, {hi:.3g}], posterior median {posterior.quantile(0.5, 'eps'):.3g}"
    )
    if claim.shape_free_lower is None:
        return f'<p id="headline"><b>Result (assumes the Gaussian shape):</b> {gauss}.</p>'
    free = (
        f"ε ≥ {claim.shape_free_lower:.3g} at δ = {delta:g} with "
        f"{100 * claim.prob:g}% posterior probability, whatever the shape of the trade-off curve"
    )
    if claim.gaussian_shape == "does not fit":
        return (
            f'<p id="headline"><b>Result:</b> {free}. <b>The Gaussian shape does not fit the '
            f"scores</b>: the whole-ROC figures ({gauss}) are not a finding.</p>"
        )
    verdict = "fit check passes" if claim.gaussian_shape == "fits" else "shape not checked"
    return (
        f'<p id="headline"><b>Result:</b> {free}. If the mechanism is Gaussian ({verdict}): '
        f"{gauss}.</p>"
    )


def _figures(post: Posterior, prob: float, claim) -> list[tuple[object, str]]:
    """Draw the page's figures: the claim first (:func:`bayes_dp.plots.plot_claim`)."""
    import matplotlib.pyplot as plt

    full = COLUMN_PX / PX_PER_INCH
    delta = post.settings["delta"]
    fig, ax = plt.subplots(figsize=(full, 3.5), layout="constrained")
    plots.plot_claim(post, claim, legend="right", ax=ax)
    first = (
        fig,
        "What the audit shows: the bound the claim signs (black), the posterior of ε if the "
        "mechanism is Gaussian (its credible interval shaded) and the frequentist bound beside "
        "it, on one axis.",
    )
    fig, axs = plt.subplots(1, 2, figsize=(full, 4.4), layout="constrained")
    plots.plot_marginal(post, "mu", prob=prob, legend="below", ax=axs[0])
    plots.plot_marginal(post, "eps", prob=prob, legend="below", ax=axs[1])
    out = [
        (
            fig,
            f"Left: posterior of the Gaussian-DP parameter mu. Right: posterior of ε at δ = "
            f"{delta:g} (each draw of mu converted exactly). Shaded: the {100 * prob:g}% "
            "credible interval.",
        )
    ]
    fig, ax = plt.subplots(figsize=(full * 0.7, 4.4), layout="constrained")
    ds = np.logspace(-12, -1, 45)
    q = np.array(
        [np.quantile(post.epsilon_at(d), [(1 - prob) / 2, 0.5, (1 + prob) / 2]) for d in ds]
    )
    ax.fill_between(ds, q[:, 0], q[:, 2], alpha=0.3, label=f"{100 * prob:g}% interval")
    ax.plot(ds, q[:, 1], label="median")
    ax.axvline(delta, color="grey", ls="--", lw=1, label=f"run's δ = {delta:g}")
    ax.set_xscale("log")
    ax.set_xlabel("δ")
    ax.set_ylabel("ε(δ)")
    ax.legend(fontsize="small")
    out.append(
        (
            fig,
            "The privacy profile: ε at each δ for the posterior draws of mu (median and "
            "credible band).",
        )
    )
    return [first, *out]


def write_gdp_report(
    posterior: Posterior,
    path,
    *,
    title: str | None = None,
    prob: float = 0.9,
    comparison=None,
    dpi: int = 90,
) -> Path:
    """Write the HTML report of a Gaussian-DP posterior (see the module's docstring).

    Parameters
    ----------
    posterior : Posterior
        From :func:`~bayes_dp.estimate_gdp` (a :class:`~bayes_dp.results.posterior.GdpPosterior`).
    path : str or path-like
        The HTML file; written under a temporary name and renamed when complete.
    title : str, optional
    prob : float
        Credible mass of the intervals. Default 0.9.
    comparison : pandas.DataFrame, optional
        The table of :func:`~bayes_dp.compare_estimators` on the scores, shown side by side.
    dpi : int
        Pixels per inch of the embedded images.

    Returns
    -------
    pathlib.Path
    """
    from bayes_dp.core.validation import check_prob

    prob = check_prob("prob", prob)
    if comparison is not None and not {"lower", "median", "upper", "width", "assumes"} <= set(
        getattr(comparison, "columns", ())
    ):
        raise TypeError(
            "`comparison` must be the DataFrame of bayes_dp.compare_estimators; found "
            f"{type(comparison).__name__}"
        )
    path = Path(path)
    st = posterior.settings
    delta = st["delta"]
    title = title or "bayes-dp: posterior of Gaussian DP (mu) and ε(δ)"
    claim = audit_claim(posterior, (1 + prob) / 2)
    parts = page_head(
        title,
        st,
        "the posterior of the Gaussian-DP parameter mu from the attack's whole ROC (binned "
        "scores, binormal shape), one-run audits and attack counts (bayes_dp.estimate_gdp, "
        "docs/validation/gdp.md); exact draws from a grid.",
    )
    figures = _figures(posterior, prob, claim)
    warns = plain_warnings(posterior)
    # the claim first, then the figure that shows it
    parts += [
        claim_html(claim, claim.gaussian_shape == "does not fit"),
        *figures_html(figures[:1], dpi),
        _headline_html(posterior, claim, prob),
        "<h2>Warnings</h2>",
    ]
    checks = st.get("fit_check") or {}
    from bayes_dp.gdp.core import FIT_P_MIN

    warns += [
        f"Group {k!r}: the Gaussian trade-off shape does not fit its scores (fit check p-value "
        f"{p:.3g} < {FIT_P_MIN})."
        for k, p in checks.items()
        if p < FIT_P_MIN
    ]
    if warns:
        parts += [f'<div class="warn">{html.escape(w)}</div>' for w in warns]
    else:
        parts.append('<div class="ok">No problems found.</div>')
    parts.append('<h2 id="fit-check">Fit check</h2>')
    parts.append(_fit_html(st))
    parts.append("<h2>Evidence</h2>")
    parts.append(_groups_html(st))
    spec = st.get("mu_prior") or ["?"]
    mu_prior = f"{spec[0]}({', '.join(f'{float(x):g}' for x in spec[1:])})"
    prior_rows = [["δ (delta)", f"{delta:g}"], ["prior of mu", mu_prior]]
    prior_rows.append(["attack strength s", str(st.get("fixed", {}).get("s", st.get("s_prior")))])
    parts.append(_table(["setting", "value"], prior_rows, left=2))
    parts.append("<h2>Posterior summary</h2>")
    summ = posterior.summary(prob)
    cols = list(summ.columns)
    rows = [[v, *(_fmt(summ.loc[v, c], 4) for c in cols)] for v in summ.index]
    parts.append(_table(["variable", *cols], rows, left=1))
    parts.append(_eps_table(posterior, prob))
    parts.append('<h2 id="side-by-side">Side by side</h2>')
    parts.append(_compare_html(comparison))
    parts.append("<h2>Figures</h2>")
    parts += figures_html(figures[1:], dpi, start=2)
    parts.append("<h2>How to reproduce</h2>")
    parts.append(
        f"<p>Seed: <code>{html.escape(str(st.get('seed')))}</code>; the same seed, evidence and "
        "settings give the same draws. All settings as recorded:</p>"
    )
    lines = [f"{k}: {json.dumps(v, default=str)}" for k, v in st.items()]
    parts.append(f"<pre>{html.escape(chr(10).join(lines))}</pre>")
    parts.append("</body></html>")
    with atomic_path(path) as tmp:
        tmp.write_text("\n".join(parts), encoding="utf-8")
    return path
