"""A self-contained HTML report of a :class:`~bayes_dp.Posterior` (``Posterior.report``).

One file, no external resources: the figures are embedded as base64 PNG, styles are inline. It
holds the inputs (counts per group, delta, priors), the summary table with diagnostics and
acceptance rates, the classical estimates for comparison, warnings in plain words, the figures,
and what is needed to reproduce the run (seed, settings, versions, the ``bayes-dp`` command and
a Python snippet).

The figures are drawn for the page's column (1100 CSS pixels wide) at 90 pixels per inch and
shown at that size, so a 10-point tick label is 12.5 pixels high on screen whatever ``dpi`` the
images are rendered at.

It is long because the report is one self-contained HTML page: its sections, tables, figures and
reproduction commands are written here.
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path

import numpy as np

from bayes_dp import plots
from bayes_dp.core.files import atomic_path
from bayes_dp.core.observations import AttackCounts
from bayes_dp.core.region import (
    classical_epsilon,
    clopper_pearson_epsilon,
    largest_classical_epsilon,
)
from bayes_dp.core.validation import check_prob
from bayes_dp.inference.settings import cli_options
from bayes_dp.report.html_parts import (
    COLUMN_PX,
    PX_PER_INCH,
    _fmt,
    _table,
    claim_html,
    figures_html,
    folded,
    page_head,
    plain_warnings,
)
from bayes_dp.results.claim import audit_claim
from bayes_dp.results.claim_counts import reads_reflected
from bayes_dp.results.diagnostics import (  # noqa: F401
    ACCEPT_RANGE,
    ESS_PER_CHAIN_MIN,
    RHAT_MAX,
    findings,
    glossary,
)
from bayes_dp.results.posterior import (
    ROUGH_REWEIGHTING,
    GdpPosterior,
    OneRunPosterior,
    Posterior,
)

__all__ = ["write_report", "plain_warnings"]

#: Group names that ``estimate_epsilon`` and ``bayes-dp`` give when none was chosen.
_DEFAULT_NAMES = ("counts",)


def _unreliable(posterior: Posterior) -> str:
    """Why the result must not be used (empty when nothing is wrong with the sampling)."""
    found = [f for f in findings(posterior) if f.convergence]
    for f in found:
        if f.kind == "not_converged":
            return f.message
    if found:
        bad = list(dict.fromkeys(f.var for f in found))
        return (
            f"The chains have not converged or mixed enough for {', '.join(bad)} (r_hat above "
            f"{RHAT_MAX} or ESS below {ESS_PER_CHAIN_MIN} per chain; see Warnings): run longer."
        )
    return ""


# -- inputs in words ----------------------------------------------------------------------------
def _parse_prior(text):
    """Return the :class:`~bayes_dp.Prior` recorded (as its repr) in the settings, or None.

    Parsed by :func:`bayes_dp.core.priors.parse_prior`: nothing is evaluated.
    """
    from bayes_dp.core.priors import parse_prior

    return parse_prior(text)


def _eps_words(eps) -> str:
    from bayes_dp.core.priors import HalfNormal

    if isinstance(eps, HalfNormal):
        sc = eps.scale
        return (
            f"half-normal with scale {sc:g}: median {0.6745 * sc:.3g}, 95% of the prior mass "
            f"below {1.96 * sc:.3g}"
        )
    lo, hi = math.exp(eps.mu - 1.96 * eps.sigma), math.exp(eps.mu + 1.96 * eps.sigma)
    return (
        f"log-normal, log ε ~ Normal({eps.mu:g}, {eps.sigma:g}²): median {math.exp(eps.mu):.3g}, "
        f"95% of the prior mass between {lo:.3g} and {hi:.3g}"
    )


def _beta_words(b, what: str = "[0, 1]") -> str:
    if b.a == 1.0 and b.b == 1.0:
        return f"uniform on {what} (Beta(1, 1))"
    return f"Beta({b.a:g}, {b.b:g}) on {what}: mean {b.a / (b.a + b.b):.3g}"


def _is_default_name(name: str, n_groups: int) -> bool:
    return n_groups == 1 and name in _DEFAULT_NAMES


def _strength_var(g: dict) -> str:
    return "s" if g.get("strength") == "shared" else f"s_{g['name']}"


def _prior_rows(st: dict) -> list[list[str]]:
    """Describe the priors in words, one row per variable, only those the run used."""
    prior = _parse_prior(st.get("prior", ""))
    if prior is None:
        return [["prior", str(st.get("prior", "?"))]]
    groups = st.get("groups", [])
    fixed = st.get("fixed", {})
    rows = [["ε (privacy parameter)", _eps_words(prior.eps)]]
    users: dict[str, list[str]] = {}
    for g in groups:
        users.setdefault(_strength_var(g), []).append(str(g["name"]))
    if not users:
        users = {"s": []}
    for var, names in users.items():
        shown = [n for n in names if not _is_default_name(n, len(groups))]
        label = f"{var} (attack strength" + (f" of {', '.join(shown)})" if shown else ")")
        if var in fixed:
            val = float(fixed[var])
            what = (
                "the attack is assumed optimal on a worst-case challenge base"
                if val == 1.0
                else "the interval for ε holds only if the attack is that strong"
            )
            rows.append([label, f"fixed at {val:g}, not inferred: {what}"])
        else:
            rows.append([label, _beta_words(prior.s)])
    for g in groups:
        lik, name, fix = g.get("likelihood"), str(g["name"]), g.get("fix", {})
        if lik in ("bivariate_normal", "beta_binomial"):
            label = f"tau_{name} (correlation of two decisions under one hypothesis)"
            if "tau" in fix:
                rows.append([label, f"fixed at {float(fix['tau']):g}"])
            else:
                rows.append([label, _beta_words(prior.tau, "(0, 1)")])
        if lik == "bivariate_normal":
            label = f"rho_{name} (correlation of a false positive with a false negative)"
            if "rho" in fix:
                rows.append([label, f"fixed at {float(fix['rho']):g}"])
            else:
                rows.append([label, f"uniform on its admissible interval given tau_{name}"])
    return rows


def _base_numbers(st: dict, sizes: list[int]) -> tuple[str, list[list[int]]]:
    """Column name and numbers of the challenge bases of each group.

    The rows of the counts file when ``bayes-dp`` recorded them (the numbers its error messages
    use), otherwise 1, 2, ... through the groups in order (the rows of the reproduction's
    ``counts.csv``).
    """
    rec = st.get("input", {}).get("rows") if isinstance(st.get("input"), dict) else None
    if rec is not None and [len(r) for r in rec] == sizes:
        return "row", [[int(i) for i in r] for r in rec]
    out, start = [], 1
    for n in sizes:
        out.append(list(range(start, start + n)))
        start += n
    return "base", out


# -- how to reproduce ---------------------------------------------------------------------------
def _recorded_run(st: dict):
    """Return the :class:`~bayes_dp.inference.model.Model` and sampler settings in ``st``."""
    from bayes_dp.inference.model import Model
    from bayes_dp.inference.settings import SamplerSettings

    return Model.from_settings(st), SamplerSettings.from_settings(st)


def _reproduce_snippet(st: dict) -> str:
    """Python that repeats the run: written from the model and sampler settings recorded."""
    try:
        model, cfg = _recorded_run(st)
    except (TypeError, ValueError) as e:
        return f"# the recorded settings describe no run that can be repeated: {e}"
    group_lines, model_args = model.to_python()
    lines = [
        "import bayes_dp as bdp",
        "from bayes_dp import Beta, HalfNormal, LogNormal, Prior  # noqa: F401",
        "",
        *group_lines,
    ]
    seed = st.get("seed")
    seed_txt = repr(seed) if isinstance(seed, int) else "None  # the run used a Generator"
    if st.get("draws_requested", cfg.draws) is None and cfg.method == "exact":
        lines.append(
            f"# the run chose its length ({cfg.draws} draws per chain, "
            f"{st.get('stop_reason', 'stopped')}); asking for that length gives the same draws"
        )
    lines.append(
        f"post = bdp.estimate_epsilon(groups, {model_args}, {cfg.to_python()}, seed={seed_txt})"
    )
    return "\n".join(lines)


def _cli_reproduction(st: dict) -> tuple[str, str] | str:
    """``(counts.csv text, bayes-dp command)`` that repeat the run, or why there are none."""
    from bayes_dp.core.priors import Beta, HalfNormal

    try:
        model, cfg = _recorded_run(st)
    except (TypeError, ValueError) as e:
        return f"settings that describe no run ({e})"
    why = []
    prior = model.prior
    groups = model.groups
    if not isinstance(prior.eps, HalfNormal):
        why.append("a log-normal prior of ε")
    if prior.tau != Beta(1.0, 1.0):
        why.append("a prior of tau other than Beta(1, 1)")
    strengths = [g.strength for g in groups]
    if strengths != ["shared"] + ["own"] * (len(groups) - 1):
        why.append(
            "a strength shared by several groups (the command gives each later group its own)"
        )
    if any(g.fix for g in groups):
        why.append("fixed tau or rho of a group")
    if not isinstance(st.get("seed"), int):
        why.append("a numpy Generator as seed")
    if not cfg.log_likelihood:
        why.append("log_likelihood=False")
    if any(g.likelihood == "guesses" for g in groups):
        why.append("one-run audits (guesses), which a counts file does not hold")
    if why:
        return "; ".join(why)

    with_group = len(groups) > 1 or not _is_default_name(groups[0].name, 1)
    with_lik = {g.likelihood for g in groups} != {"binomial"}
    header = ["fp", "n_neg", "fn", "n_pos"] + ["group"] * with_group + ["likelihood"] * with_lik
    _, numbers = _base_numbers(st, [len(g.counts) for g in groups])
    rows = []
    for g, nums in zip(groups, numbers, strict=True):
        c = g.counts.to_dict()
        for k, num in enumerate(nums):
            cells = [str(c[col][k]) for col in ("fp", "n_neg", "fn", "n_pos")]
            cells += [g.name] * with_group + [g.likelihood] * with_lik
            rows.append((num, ",".join(cells)))
    rows.sort(key=lambda r: r[0])  # the file's own row order, when it was recorded
    csv_text = "\n".join([",".join(header), *(r for _, r in rows)]) + "\n"

    cmd = ["bayes-dp estimate counts.csv", f"--delta {model.delta!r}", "--out results"]
    cmd += [f"--seed {st['seed']}", f"--chains {cfg.chains}", f"--tune {cfg.tune}"]
    cmd.append(f"--draws {cfg.draws}")
    if cfg.method != "exact":
        cmd.append(f"--sampler {cfg.method}")
    cmd += cli_options(cfg.sampler)  # the sampler's options, by field
    if prior.eps.scale != 10.0:
        cmd.append(f"--prior-eps-scale {prior.eps.scale!r}")
    if prior.s_fixed:
        cmd.append(f"--s {float(prior.s)!r}")
    elif (prior.s.a, prior.s.b) != (1.0, 1.0):
        cmd.append(f"--prior-s-beta {prior.s.a!r} {prior.s.b!r}")
    return csv_text, " ".join(cmd)


# -- figures ------------------------------------------------------------------------------------
def _figures(
    posterior: Posterior, prob: float, confidence: float, claim=None
) -> list[tuple[object, str]]:
    """Draw the report's figures with their captions, each at most the column's width.

    The first shows the claim (the bound it signs, the posterior and the frequentist
    companions on one axis: :func:`bayes_dp.plots.plot_claim`; without a claim, the posterior of
    ε beside the classical estimates), the last the MCMC diagnostics.
    """
    import matplotlib.pyplot as plt

    full = COLUMN_PX / PX_PER_INCH  # inches
    st = posterior.settings
    delta = st.get("delta")
    has_counts = bool(plots.posterior_counts(posterior)) and delta is not None
    out = []
    fig, ax = plt.subplots(figsize=(full, 3.5), layout="constrained")
    if claim is not None:
        plots.plot_claim(posterior, claim, legend="right", ax=ax)
        caption = (
            "What the audit shows: the bound the claim signs (black), the posterior of ε "
            "(histogram, kernel density, its credible interval shaded) and the frequentist "
            "bounds beside it, on one axis."
        )
    else:
        plots.plot_eps_posterior(posterior, prob=prob, confidence=confidence, legend="right", ax=ax)
        caption = (
            "Posterior of ε: histogram and kernel density of the draws, the credible interval "
            "(shaded), the classical point estimate and the classical Clopper-Pearson interval."
        )
    out.append((fig, caption))
    s_vars = [v for v in posterior.var_names if v == "s" or v.startswith("s_")]
    for v in s_vars:
        fig, axs = plt.subplots(1, 2, figsize=(full, 5.0), layout="constrained")
        plots.plot_marginal(posterior, v, prob=prob, legend="below", ax=axs[0])
        plots.plot_joint(posterior, "eps", v, ax=axs[1])
        out.append(
            (
                fig,
                f"Left: posterior of the attack strength {v} (1 = optimal attack on a worst-case "
                f"base). Right: joint posterior of ε and {v}; the ridge along s·ε = const is why "
                "ε has a long upper tail when s is unknown.",
            )
        )
    if has_counts:
        fig, ax = plt.subplots(figsize=(10.5, 6.0), layout="constrained")  # square axes
        plots.plot_region(posterior, ax=ax)
        out.append(
            (
                fig,
                "Observed (FPR, FNR) of each challenge base with 95% Clopper-Pearson bars, over "
                "the lower-left boundary of the privacy region R(ε, δ) for posterior draws of ε "
                "(an inset magnifies the rates and the boundary next to them when they fill "
                "little of the axes). An (ε, δ)-DP algorithm admits no test below its boundary; "
                "R_s, the band an attack of strength s reaches, ends at the dashed inner edge.",
            )
        )
    out.append(
        (
            plots.plot_diagnostics(posterior, width=full),
            "MCMC diagnostics per variable: traces (chains should overlap), rank histograms "
            "(should be flat within the grey band) and autocorrelation (should fall to 0 fast).",
        )
    )
    return out


def _prior_sensitivity_html(posterior: Posterior, prob: float) -> str:
    """Show the eps interval with the eps prior's scale halved and doubled (reweighted draws)."""
    if not posterior.settings.get("eps_prior") or "eps" not in posterior.var_names:
        return ""
    try:
        sens = posterior.prior_sensitivity(prob, factors=(0.5, 2.0))
    except ValueError:
        return ""
    lo, hi = posterior.interval(prob, "eps")
    rows = [["as estimated", _fmt(lo, 3), _fmt(hi, 3), ""]]
    for f, r in sens.items():
        note = "" if r["reliable"] else ROUGH_REWEIGHTING
        rows.append([f"scale x{f:g}", _fmt(r["interval"][0], 3), _fmt(r["interval"][1], 3), note])
    return (
        f"<p><b>Prior sensitivity</b> of the {100 * prob:g}% interval of ε (with s free its "
        "upper end is set by the prior along s·ε = const): the draws reweighted to the eps "
        "prior with its scale halved and doubled.</p>"
        + _table(["eps prior", "lower", "upper", ""], rows, left=1)
    )


def _dependence_html(st: dict) -> str:
    """Show the dependence diagnostic of score-matrix groups and the companion bounds."""
    parts = []
    rows = []
    for g in st.get("groups", []):
        rec = g.get("dependence")
        if not isinstance(rec, dict):
            continue
        rows.append(
            [
                g.get("name", "?"),
                f"{rec['fp_within']:.2f} + {rec['fp_between']:.2f}",
                f"{rec['fn_within']:.2f} + {rec['fn_between']:.2f}",
                f"{rec['fp_info_ratio']:.2f} / {rec['fn_info_ratio']:.2f}",
                f"{rec['fp_model_dispersion']:.2f} / {rec['fn_model_dispersion']:.2f}",
                "yes" if rec.get("corrected") else "no",
            ]
        )
    if rows:
        parts.append('<h2 id="dependence">Dependence of the pooled counts</h2>')
        parts.append(
            "<p>The held-out decisions of a score matrix share the models' fits. Design effect "
            "= variance of the pooled count / binomial variance (within a target + across "
            "targets through the per-model effect); information ratio = 1 / design effect, "
            "the information the pooled counts carry relative to independent decisions. Below "
            "0.5, a claim from a likelihood that treats the counts as independent is marked "
            'not reliable (docs/validation/lira.md, "Dependence of the pooled counts").</p>'
        )
        parts.append(
            _table(
                [
                    "group",
                    "FP design effect",
                    "FN design effect",
                    "information ratio FP / FN",
                    "per-model rate dispersion FP / FN",
                    "corrected",
                ],
                rows,
                left=1,
            )
        )
    comp = st.get("companion")
    if isinstance(comp, dict) and comp.get("bounds"):
        parts.append('<h2 id="companion">Frequentist lower bounds (companion)</h2>')
        parts.append(
            f"<p>Lower bounds of ε at {100 * comp['confidence']:g}% confidence, δ = "
            f"{comp['delta']:g}, computed from the same score matrix without a prior; each "
            "holds under what it assumes. The posterior adds the attack strength and the "
            "uncertainty of every target's rates at once (docs/validation/lira.md, \"The "
            "frequentist "
            'companion").</p>'
        )
        parts.append(
            _table(
                ["bound", "ε ≥", "assumes"],
                [
                    [b["name"], "n/a" if b["eps"] is None else f"{b['eps']:.3g}", b["assumes"]]
                    for b in comp["bounds"]
                ],
                left=1,
            )
        )
    return "\n".join(parts)


def write_report(
    posterior: Posterior,
    path,
    *,
    title: str | None = None,
    prob: float = 0.9,
    confidence: float = 0.95,
    dpi: int = 90,
    comparison=None,
) -> Path:
    """Write a self-contained HTML report of ``posterior`` to ``path``.

    A Gaussian-DP posterior (:func:`~bayes_dp.estimate_gdp`) gets its own page
    (:func:`bayes_dp.report.gdp_page.write_gdp_report`: mu and eps(delta), the fit check).

    Parameters
    ----------
    posterior : Posterior
    path : str or path-like
        The HTML file to write (its folder must exist). It is written under a temporary name
        and renamed when complete.
    title : str, optional
        Heading of the report.
    prob : float
        Credible mass of the intervals in the table and figures. Default 0.9.
    confidence : float
        Confidence of the classical Clopper-Pearson interval. Default 0.95.
    dpi : int
        Pixels per inch of the embedded images (90: one image pixel per screen pixel; 180
        for sharp figures on high-density screens). The figures are shown at the same size
        whatever the value.
    comparison : pandas.DataFrame, optional
        Gaussian-DP posteriors only: the table of :func:`~bayes_dp.compare_estimators` for the
        same scores, shown side by side.

    Returns
    -------
    pathlib.Path
        The file written.
    """
    if isinstance(posterior, OneRunPosterior):
        raise NotImplementedError(
            "the HTML report does not cover 'one_run' posteriors yet (estimate_one_run); "
            "use summary() and to_netcdf(), or combine the audits in estimate_gdp"
        )
    if isinstance(posterior, GdpPosterior):
        # Gaussian-DP posteriors have their own page (mu and eps(delta), the fit check)
        from bayes_dp.report.gdp_page import write_gdp_report

        return write_gdp_report(
            posterior, path, title=title, prob=prob, comparison=comparison, dpi=dpi
        )
    if comparison is not None:
        raise ValueError(
            "`comparison` is shown for Gaussian-DP posteriors (estimate_gdp) only; found one "
            f"for a {posterior.settings.get('model', 'count')!r} posterior"
        )
    if not isinstance(posterior, Posterior):
        raise TypeError(
            f"`posterior` must be a bayes_dp.Posterior; found {type(posterior).__name__}"
        )
    prob = check_prob("prob", prob)
    path = Path(path)
    st = posterior.settings
    title = title or "bayes-dp: posterior of the privacy parameter ε"
    parts = page_head(
        title,
        st,
        "MCMC-DP-Est (Yildirim, Kaya, Yildirim, Savas), the posterior of ε and the "
        "attack strength s given the attack's false-positive and false-negative counts.",
    )

    # the claim first, then the figure that shows it, the warnings (one verdict with the
    # claim), the summary and the other figures; the inputs' long tables folded after them, the
    # diagnostics last
    head: list[str] = []
    claim = _headline(head, posterior, prob)
    figures = _figures(posterior, prob, confidence, claim)
    # the claim's box, its figure, then the result line (the interval) under them
    parts += [*head[:-1], *figures_html(figures[:1], dpi), head[-1]]
    _warnings_section(parts, posterior, claim)
    groups = plots.posterior_counts(posterior)
    _summary(parts, posterior, prob, confidence, groups)
    parts.append("<h2>Figures</h2>")
    parts += figures_html(figures[1:-1], dpi, start=2)
    _inputs(parts, posterior)
    dep_html = _dependence_html(st)
    if dep_html:
        parts.append(dep_html)
    parts.append("<h2>Diagnostics</h2>")
    parts += figures_html(figures[-1:], dpi, start=len(figures))
    _reproduce(parts, st)
    parts.append("</body></html>")
    with atomic_path(path) as tmp:  # never a half-written report, not even after Ctrl-C
        tmp.write_text("\n".join(parts), encoding="utf-8")
    return path


# The sections of the counts report, in page order; each appends its HTML to ``parts``.
def _headline(parts: list[str], posterior: Posterior, prob: float):
    """Append what the audit shows (two sentences to cite) and the interval, or why not reliable.

    The result line (the interval, or why it is not reliable) is the last element appended.
    Returns the claim (None for a posterior without eps).
    """
    delta = posterior.settings.get("delta")
    lo, hi = posterior.interval(prob, "eps")
    pct = f"{100 * prob:g}%"
    at = f", at δ = {delta:g}" if delta is not None else ""
    median = posterior.quantile(0.5, "eps")
    unreliable = _unreliable(posterior)
    claim = None
    if "eps" in posterior.var_names:
        # first, what the audit shows, in a sentence to cite (NOT RELIABLE first when it is not)
        claim = audit_claim(posterior, (1 + prob) / 2)
        parts.append(claim_html(claim, bool(unreliable)))
        if claim.dependence and not unreliable and not claim.reliable:
            unreliable = (
                "The pooled counts are dependent and the likelihood treats them as independent "
                "(see Dependence of the pooled counts)."
            )
    if unreliable and claim is not None and claim.lower_from_counts and not claim.dependence:
        # the bound reads the counts, not the draws: it stands; the model's figures do not
        if claim.upper_source == "minor_mode":
            model = (
                "The model's figures are not reported: its chains missed a mode of much higher "
                "posterior density at ε ~ 0 (see Warnings), so the draws' quantiles are not the "
                "posterior's."
            )
        else:
            model = (
                f"{html.escape(unreliable)} For orientation only, the model's draws give a "
                f"{pct} credible interval for ε of [{lo:.3g}, {hi:.3g}]; its lower end is not a "
                "finding."
            )
        parts.append(
            f'<p class="warn" id="headline"><b>Result:</b> ε ≥ {claim.lower:.3g}{at} (the '
            f"sentence above; it reads the counts only, not the chains). {model}</p>"
        )
    elif unreliable:
        parts.append(
            f'<p class="warn" id="headline"><b>Result not reliable.</b> {html.escape(unreliable)} '
            f"For orientation only, these draws give a {pct} credible interval for ε of "
            f"[{lo:.3g}, {hi:.3g}] and a median of {median:.3g}{at}.</p>"
        )
    elif claim is not None and not claim.cites_model_lower:
        # the model's lower end is not what the claim signs: the bound it signs heads the page
        q_hi = f"upper {(1 + prob) / 2 * 100:.3g}% quantile of ε"
        if claim.upper_source == "data":
            up = f"The model's {q_hi} is {hi:.3g} and its median {median:.3g}"
        else:  # the claim calls it the prior's, the attack level's or the model's
            up = (
                f"The model's {q_hi}, {hi:.3g}, and its median, {median:.3g}, are not findings "
                "(the sentence above says why)"
            )
        parts.append(
            f'<p id="headline"><b>Result:</b> ε ≥ {claim.lower:.3g}{at} (the sentence above). '
            f"{up}; its lower {(1 - prob) / 2 * 100:.3g}% quantile, {lo:.3g}, is "
            "not a finding.</p>"
        )
    else:
        parts.append(
            f'<p id="headline"><b>Result:</b> {pct} credible interval for ε: '
            f"[{lo:.3g}, {hi:.3g}], posterior median {median:.3g}{at}.</p>"
        )
    return claim


def _warnings_section(parts: list[str], posterior: Posterior, claim=None) -> None:
    """Append the diagnostics' warnings in plain words, or that there are none.

    "No problems found" only when the claim is reliable too: a claim not reliable for a
    reason the sampler's checks do not see (dependent pooled counts) gets that reason here, so
    that the section never says the opposite of the headline.
    """
    parts.append("<h2>Warnings</h2>")
    warns = plain_warnings(posterior)
    if claim is not None and not claim.reliable:
        why = [t for n, t in claim.details if n in ("dependence", "convergence")]
        warns = warns + [w for w in why if w not in warns]
    if warns:
        parts += [f'<div class="warn">{html.escape(w)}</div>' for w in warns]
    else:
        parts.append(
            f'<div class="ok">No problems found: r_hat <= {RHAT_MAX}, ESS >= '
            f"{ESS_PER_CHAIN_MIN} per chain, acceptance rates in range.</div>"
        )


def _inputs(parts: list[str], posterior: Posterior) -> list:
    """Append delta, the priors and each group's challenge bases; return the groups' counts."""
    st = posterior.settings
    delta = st.get("delta")
    parts.append("<h2>Inputs</h2>")
    parts.append(
        _table(
            ["setting", "value"],
            [["δ (delta)", _fmt(delta, 6) if delta is not None else "?"]]
            + [[f"prior of {v}", w] for v, w in _prior_rows(st)],
            left=2,
        )
    )
    meta = [g for g in st.get("groups", []) if g.get("kind") != "one_run"]
    groups = plots.posterior_counts(posterior)
    col, numbers = _base_numbers(st, [len(c) for _, c in groups])
    source = st.get("input", {}).get("file") if isinstance(st.get("input"), dict) else None
    _one_run_inputs(parts, st)
    for g, (name, c), nums in zip(meta, groups, numbers, strict=True):
        about = (
            f"likelihood {g['likelihood']}, strength variable {_strength_var(g)}, "
            f"{len(c)} challenge base{'s' * (len(c) != 1)}"
        )
        if _is_default_name(name, len(groups)):
            parts.append(f"<h3>Challenge bases</h3><p>{html.escape(about)}.</p>")
        else:
            parts.append(f"<h3>Group {html.escape(name)}</h3><p>{html.escape(about)}.</p>")
        # each base read as the claim reads it: a score-matrix target's decisions as made (a
        # test worse than random shows nothing, not an infinite eps by the opposite test)
        reflect = reads_reflected(g)
        eh = (
            np.atleast_1d(classical_epsilon(c.fpr, c.fnr, delta, reflect=reflect))
            if delta is not None
            else [np.nan] * len(c)
        )
        rows = [
            [
                str(nums[i]),
                int(c.fp[i]),
                int(c.n_neg[i]),
                int(c.fn[i]),
                int(c.n_pos[i]),
                c.fpr[i],
                c.fnr[i],
                eh[i],
            ]
            for i in range(len(c))
        ]
        read = "" if reflect else " (decisions as made)"
        table = _table(
            [col, "fp", "n_neg", "fn", "n_pos", "FPR", "FNR", f"classical ε{read}"], rows, left=1
        )
        parts.append(folded(f"the {len(c)} challenge bases of this group", table, len(c)))
    if groups:
        where = f"the data rows of {source}" if col == "row" and source else "1, 2, ... in order"
        parts.append(
            f"<p>Challenge bases are numbered by {html.escape(where)}, as in bayes-dp's error "
            "messages.</p>"
        )
    return groups


def _one_run_inputs(parts: list[str], st: dict) -> None:
    """Append each group of one-run audits: its guesses, design and one-run bound per audit."""
    from bayes_dp.core.one_run_bound import one_run_bounds

    delta = st.get("delta")
    for g in st.get("groups", []):
        if g.get("kind") != "one_run":
            continue
        m, r, v = (np.atleast_1d(g[k]) for k in ("m", "r", "v"))
        pairs = np.broadcast_to(np.asarray(g.get("pairs", False), dtype=bool), m.shape)
        about = (
            f"one-run audits (guessing games), likelihood {g.get('likelihood', 'guesses')}, "
            f"strength variable {_strength_var(g)}, {m.size} audit{'s' * (m.size != 1)}"
        )
        parts.append(f"<h3>Group {html.escape(str(g['name']))}</h3><p>{html.escape(about)}.</p>")
        bound = np.full(m.size, np.nan)
        if delta is not None:
            for i in range(m.size):
                args = (m[i : i + 1], r[i : i + 1], v[i : i + 1], delta, 0.95)
                # an audit of pairs: the bound on 2 eps at 2 delta, halved
                bound[i] = (
                    one_run_bounds(*args, pairs=True) if pairs[i] else one_run_bounds(*args)
                )[0]
        rows = [
            [
                str(i + 1),
                "pairs of models (2 ε, 2 δ)" if pairs[i] else "membership bits (ε, δ)",
                int(m[i]),
                int(r[i]),
                int(v[i]),
                v[i] / r[i] if r[i] else np.nan,
                bound[i],
            ]
            for i in range(m.size)
        ]
        parts.append(
            _table(
                ["audit", "coins", "m", "guesses r", "right v", "accuracy", "one-run ε bound"],
                rows,
                left=2,
            )
        )
        parts.append(
            "<p>Each audit guessed r of m fair coins and got v right (Steinke, Nasr and "
            "Jagielski's game). The one-run ε bound is each audit's own at 95% confidence "
            "(their Theorem 3.3, no correction for several audits; the claim above shares its "
            "error among all audits and bases).</p>"
        )
        src = g.get("source")
        if isinstance(src, dict) and src:
            parts.append(
                "<p>How the guesses were made (recorded):</p>"
                f"<pre>{html.escape(json.dumps(src, indent=1, default=str))}</pre>"
            )


def _summary(parts: list[str], posterior: Posterior, prob: float, confidence: float, groups):
    """Append the summary, acceptance, glossary, classical comparison, prior sensitivity."""
    delta = posterior.settings.get("delta")
    parts.append("<h2>Posterior summary</h2>")
    summ = posterior.summary(prob)
    cols = list(summ.columns)

    def cell(col, x):
        if col.startswith("ess"):
            return f"{x:.0f}"
        if col == "r_hat":
            return f"{x:.3f}"
        return _fmt(x, 4)

    rows = [[v, *(cell(c, summ.loc[v, c]) for c in cols)] for v in summ.index]
    parts.append(_table(["variable", *cols], rows, left=1))
    acc = posterior.acceptance
    parts.append(_table(["move", "acceptance rate"], [[k, v] for k, v in acc.items()], left=1))
    gloss = glossary([*cols, *acc])
    parts.append(
        '<p id="glossary"><b>What the columns and rates mean</b></p><dl>'
        + "".join(
            f"<dt><code>{html.escape(k)}</code></dt><dd>{html.escape(v)}</dd>"
            for k, v in gloss.items()
        )
        + "</dl>"
    )
    meta = [g for g in posterior.settings.get("groups", []) if g.get("kind") != "one_run"]
    # the classical reading reflects a test worse than random; the claim reads score-matrix
    # groups as their decisions were made (reads_reflected), and its bound and the companion
    # bounds stand there in its place
    if groups and delta is not None and all(reads_reflected(g) for g in meta):
        allc = AttackCounts.concat([c for _, c in groups])  # the groups shown above
        point = largest_classical_epsilon(allc, delta)
        clo, chi = clopper_pearson_epsilon(
            allc.fp, allc.n_neg, allc.fn, allc.n_pos, delta, confidence
        )
        parts.append(
            f"<p><b>Classical comparison</b> (assumes the attack is optimal on a worst-case "
            f"base, s = 1): point estimate max over bases {point:.3g}; {100 * confidence:g}% "
            f"Clopper-Pearson interval [{clo:.3g}, {chi:.3g}] (exact binomial bounds of every "
            "rate, union bound over all rates); its lower end is the usual audit lower bound "
            "of ε.</p>"
        )

    sens = _prior_sensitivity_html(posterior, prob)
    if sens:
        parts.append(sens)


def _reproduce(parts: list[str], st: dict) -> None:
    """Append the versions, seed, command line and Python code that repeat the run."""
    parts.append("<h2>How to reproduce</h2>")
    vers = st.get("versions", {})
    parts.append(_table(["package", "version"], [[k, str(v)] for k, v in vers.items()], left=2))
    parts.append(
        f"<p>Seed: <code>{html.escape(str(st.get('seed')))}</code>. The same seed, inputs, "
        "settings and versions give the same draws (a run that was extended until it converged "
        "gives the same draws as one asked for its final length at once).</p>"
    )
    cli = _cli_reproduction(st)
    if isinstance(cli, tuple):
        csv_text, command = cli
        parts.append("<p>On the command line: save the counts as <code>counts.csv</code></p>")
        parts.append(f"<pre>{html.escape(csv_text)}</pre>")
        parts.append("<p>and run</p>")
        parts.append(f"<pre>{html.escape(command)}</pre>")
    else:
        parts.append(
            f"<p>The <code>bayes-dp</code> command cannot repeat this run ({html.escape(cli)}); "
            "use Python.</p>"
        )
    parts.append("<p>In Python:</p>")
    parts.append(f"<pre>{html.escape(_reproduce_snippet(st))}</pre>")
    parts.append("<p>All settings as recorded:</p>")
    lines = [f"{k}: {json.dumps(v, default=str)}" for k, v in st.items()]
    parts.append(f"<pre>{html.escape(chr(10).join(lines))}</pre>")
