"""No false accusations: how often does a score-matrix audit's 90% interval lie above the truth?

Mechanisms of exactly known eps (``mia.coverage.score_matrix_audit``): the Gaussian mechanism
(scores N(0, 1) OUT, N(mu, 1) IN; eps(delta) from ``mia.canary.gaussian_mechanism_epsilon``) and
the Laplace mechanism (Laplace(0, 1) OUT, Laplace(mu, 1) IN; eps(delta) = mu + 2 log(1 -
delta)), each with and without a per-model shift (every score of model m shifted by the same
N(0, sd^2) draw). Every target is IN for half of the models (balanced), online test at alpha
0.1, delta 1e-5, the likelihood asked for (default: the score-matrix default, the exposure
mixture), 2 chains of ``--draws`` draws after ``--tune``. For each configuration the table
gives the number of audits, how many 90% intervals lie entirely above the true eps (a false
accusation), that rate's exact (Clopper-Pearson) 95% interval, the coverage of the true eps,
the median lower end over the truth, the median width, the median FN design effect and the
largest r_hat. ``--dependence correct`` feeds the likelihood the effective counts
(:func:`mia.effective_counts`, the pooled counts deflated by their design effects) instead of
the raw ones; with the same ``--seed`` both see the same score matrices. The last columns give
what ``bdp.audit_claim`` states at 95% (the smaller of the posterior's 5% quantile and the
largest per-target Clopper-Pearson bound on effective counts): how often it lies above the true
eps (with that rate's exact 95% interval), its median and largest ratio to the truth, in how
many audits the per-target bound is above 0, the claim's ceiling over the truth (the most the
claim can state on the design: a target with no error, at the claim's Bonferroni level; a
mechanism whose eps is above it cannot be falsely accused, so only cells with a ceiling above
1 test the claim) and, as a control, in how many audits the largest per-target bound on raw
counts without the correction over targets lies above the truth. The line above the claim
(``claim.interval_words()``) prints the claim's bound as the lower end, never the model's, so it
is above the truth only where the claim is; it prints the model's 95% quantile as an upper end
only where the claim calls it the data's (``upper_source`` ``"data"``). The last three columns:
how often the model's 95% quantile lies below the truth (a false assurance, were it read as an
upper bound), how often it is printed as an upper end and lies below the truth, and how often
the printed interval (unbounded above where no upper end is printed) holds the truth.
``--models`` sets the number of models (every target IN for half of them).

    python benchmarks/lira_false_accusations.py --audits 25 --targets 64
    python benchmarks/lira_false_accusations.py --audits 25 --likelihood binomial \
        --dependence correct
    python benchmarks/lira_false_accusations.py --audits 10 --targets 1000 --configs gaussian:0
    python benchmarks/lira_false_accusations.py --audits 50 --models 256 --mu 2 --likelihood \
        binomial --configs laplace:0 laplace:0.25
    python benchmarks/lira_false_accusations.py --likelihood exposure_mixture --as-made \
        --eps-prior "HalfNormal(20.0)" --draws 300 --tune 200 --audits 2 --models 256 \
        --targets 1000 --mu 1e-6 --configs gaussian:0 --seed 80
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings

import numpy as np
from scipy import stats

import bayes_dp as bdp
from bayes_dp.core.priors import parse_prior
from mia.coverage import score_matrix_audit

#: mechanism:shift sd, the configurations studied by default.
CONFIGS = ("gaussian:0", "gaussian:0.25", "laplace:0", "laplace:0.25")


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact binomial interval of a rate k / n."""
    a = (1 - level) / 2
    lo = 0.0 if k == 0 else float(stats.beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - a, k + 1, n - k))
    return lo, hi


def study(
    config,
    n_audits,
    n_targets,
    mu,
    likelihood,
    draws,
    tune,
    seed,
    dependence="ignore",
    n_models=64,
    reflect=True,
    prior=None,
):
    """Run ``n_audits`` audits of one configuration; return their results (list of dicts)."""
    mech, shift = config.split(":")
    rngs = np.random.default_rng(seed).spawn(n_audits)
    out = []
    for rng in rngs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(
                score_matrix_audit(
                    rng,
                    mu=mu,
                    n_models=n_models,
                    n_targets=n_targets,
                    likelihood=likelihood,
                    mechanism=mech,
                    model_shift=float(shift),
                    draws=draws,
                    tune=tune,
                    dependence=dependence,
                    reflect=reflect,
                    prior=prior,
                )
            )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--audits", type=int, default=25, help="audits per configuration")
    ap.add_argument("--models", type=int, default=64)
    ap.add_argument("--targets", type=int, default=64)
    ap.add_argument("--mu", type=float, default=1.0)
    ap.add_argument("--configs", nargs="+", default=list(CONFIGS))
    ap.add_argument("--likelihood", default="exposure_mixture")
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--tune", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--dependence",
        choices=("ignore", "correct"),
        default="ignore",
        help="raw pooled counts, or effective counts deflated by their design effects",
    )
    ap.add_argument(
        "--as-made", action="store_true", help="Evidence(reflect=False): decisions as made"
    )
    ap.add_argument(
        "--eps-prior",
        default=None,
        help="prior of eps as its repr, e.g. 'HalfNormal(20.0)' or 'LogNormal(0.0, 3.0)' "
        "(default: bayes_dp.Prior()'s)",
    )
    ap.add_argument("--save", default=None, help="write every audit's result to this JSON file")
    args = ap.parse_args()
    prior = None
    if args.eps_prior is not None:
        eps_prior = parse_prior(args.eps_prior)
        if not isinstance(eps_prior, (bdp.HalfNormal, bdp.LogNormal)):
            ap.error(f"--eps-prior must be a HalfNormal or LogNormal; found {args.eps_prior!r}")
        prior = bdp.Prior(eps=eps_prior)
    saved = {}
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average "
        f"{os.getloadavg()[0]:.2f} at the start"
    )
    print(
        f"{args.models} models x {args.targets} targets, mu = {args.mu}, {args.likelihood}, "
        f"dependence {args.dependence}, {args.draws} draws after {args.tune}, seed {args.seed}, "
        f"eps prior {prior.eps if prior is not None else bdp.Prior().eps}"
    )
    print(
        "| mechanism | shift sd | true eps | audits | above truth | rate (95% CI) | coverage | "
        "median lower / truth | median width | median FN deff | max r_hat | s/audit | "
        "claim above truth | claim rate (95% CI) | median claim / truth | max claim / truth | "
        "median pooled / truth | max pooled / truth | "
        "per-target bound > 0 | claim ceiling / truth | uncorrected above truth | "
        "model's 95% quantile below truth | printed upper end below truth | "
        "printed interval covers |"
    )
    print("| --- " * 24 + "|")
    total_k = total_n = total_c = 0
    for i, config in enumerate(args.configs):
        t0 = time.perf_counter()
        res = study(
            config,
            args.audits,
            args.targets,
            args.mu,
            args.likelihood,
            args.draws,
            args.tune,
            args.seed + i,
            args.dependence,
            args.models,
            not args.as_made,
            prior,
        )
        sec = (time.perf_counter() - t0) / len(res)
        saved[config] = res
        truth = res[0]["true_eps"][2]
        k = int(sum(r["above_truth"] for r in res))
        n = len(res)
        total_k, total_n = total_k + k, total_n + n
        lo, hi = clopper_pearson(k, n)
        # ratios to the truth are nan for a mechanism with eps = 0 (any claim above 0 accuses)
        scale = truth if truth > 0 else float("nan")
        ratio = np.median([r["true_eps"][0] / scale for r in res])
        cover = np.mean([r["true_eps"][0] <= truth <= r["true_eps"][1] for r in res])
        width = np.median([r["width"] for r in res])
        deff = np.median([r["fn_design_effect"] for r in res])
        mech, shift = config.split(":")
        kc = int(sum(r["claim_above_truth"] for r in res))
        total_c += kc
        claim = np.median([r["claim_lower"] / scale for r in res])
        pos = sum(r["target_lower"] > 0 for r in res)
        pooled = [r["pooled_lower"] / scale for r in res if r["pooled_lower"] is not None]
        p_med = np.median(pooled) if pooled else float("nan")
        p_max = max(pooled) if pooled else float("nan")
        c_lo, c_hi = clopper_pearson(kc, n)
        c_max = max(r["claim_lower"] / scale for r in res)
        ceiling = np.median([r["claim_ceiling"] for r in res]) / scale
        unc = int(sum(r["uncorrected_lower"] > truth for r in res))
        below = int(sum(r["true_eps"][1] < truth for r in res))
        p_below = int(sum(r["claim_interval"][1] < truth for r in res))
        held = np.mean([r["claim_interval"][0] <= truth <= r["claim_interval"][1] for r in res])
        print(
            f"| {mech} | {shift} | {truth:.3f} | {n} | {k} | {k / n:.3f} ({lo:.3f}, {hi:.3f}) | "
            f"{cover:.3f} | {ratio:.3f} | {width:.3f} | {deff:.2f} | "
            f"{max(r['max_r_hat'] for r in res):.3f} | {sec:.1f} | {kc} | "
            f"{kc / n:.3f} ({c_lo:.3f}, {c_hi:.3f}) | {claim:.3f} | {c_max:.3f} | "
            f"{p_med:.3f} | {p_max:.3f} | {pos} | "
            f"{ceiling:.3f} | {unc} | {below} | {p_below} | {held:.3f} |",
            flush=True,
        )
    lo, hi = clopper_pearson(total_k, total_n)
    clo, chi = clopper_pearson(total_c, total_n)
    print(
        f"| all | | | {total_n} | {total_k} | {total_k / total_n:.3f} ({lo:.3f}, {hi:.3f}) "
        f"| | | | | | | {total_c} | {total_c / total_n:.3f} ({clo:.3f}, {chi:.3f}) | | | | | | | "
        "| | | |"
    )
    if args.save:
        with open(args.save, "w") as f:
            json.dump({"args": vars(args), "audits": saved}, f)


if __name__ == "__main__":
    main()
