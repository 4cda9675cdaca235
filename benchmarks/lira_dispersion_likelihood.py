"""The cross-fed dependence inside the likelihood (issue 32, item 2): false accusations, measured.

On score matrices of a Laplace mechanism (exactly mu-DP; 64 models x 64 targets, every target
IN for half of the models, online test at alpha = 0.1, optional per-model shift; drawn as
``mia.coverage.score_matrix_audit`` draws them), the band model's posterior of eps at delta = 0
is computed by deterministic quadrature (``tests/reference/overdispersed.py``, per-side
dispersion) under several likelihoods of a target's counts, on the same matrices
(``benchmarks/_support/dispersion_study.py`` defines the rows):

* ``binomial``: FP and FN binomial (what ``to_evidence()`` uses);
* ``fn_design``: FN beta-binomial at the design's dispersion tau_fn = (d_FN - 1) / (n_pos - 1),
  d_FN the group's within-target FN design effect (``res.dependence.fn_within``), FP binomial;
* ``fn_free``: FN beta-binomial with one tau_fn, Beta(1, 20) prior, FP binomial;
* ``both_free``: both sides beta-binomial with one shared tau, Beta(1, 20).

Per row: how many 90% intervals lie entirely above the true eps (= mu; a false accusation), with
its Clopper-Pearson 95% interval, the coverage, the median q5 / truth and width, and, paired
against the binomial, the audits accused by one row only with a one-sided sign test.

    python benchmarks/lira_dispersion_likelihood.py --audits 100 --mu 1 --shifts 0 0.25 \\
        --rows binomial fn_design --refine --check-mcmc 4      # 9.5 min on 2 loaded cores
    python benchmarks/lira_dispersion_likelihood.py --audits 25 --mu 3 --shifts 0 \\
        --rows binomial fn_design fn_free both_free --refine   # 15 min
    python benchmarks/lira_dispersion_likelihood.py --audits 30 --mu 1 --shifts 0 0.25 \\
        --rows binomial fn_design fn_free both_free            # 27 min

``--check-mcmc K`` also runs the default estimate (``to_evidence()``, ``estimate_epsilon`` at
delta = 1e-5, defaults, 4 chains x 1,000 draws) on the first K matrices of the first cell and
prints its 5% / 95% quantiles next to the quadrature's binomial row. ``--m`` and ``--n-eps`` set
the quadrature's resolution (alpha midpoints; log-spaced eps nodes); ``--refine`` recomputes the
first matrix at twice both and prints the change of the quantiles.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for benchmarks._support

from benchmarks._support.dispersion_study import ROWS, audit_rows, draw_counts, row_posterior  # noqa: E402


def clopper_pearson(k, n, level=0.95):
    """Exact binomial interval of k successes in n."""
    a = (1 - level) / 2
    lo = 0.0 if k == 0 else float(stats.beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - a, k + 1, n - k))
    return lo, hi


def sign_test(b, c):
    """One-sided p of b or more of b + c discordant pairs going one way under p = 1/2."""
    return float(stats.binom.sf(b - 1, b + c, 0.5)) if b + c else 1.0


def cell(mu, shift, n_audits, seed, rows, kw):
    """Every row on ``n_audits`` matrices (generator ``default_rng(seed).spawn(n_audits)``)."""
    out = []
    for rng in np.random.default_rng(seed).spawn(n_audits):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(audit_rows(rng, mu, shift, rows, **kw))
    return out


def summarize(res, rows, truth):
    """Table rows (dicts) of one cell."""
    lines = []
    acc = {r: np.array([a[r][0] > truth for a in res]) for r in rows}
    for r in rows:
        q = np.array([a[r] for a in res])
        k, n = int(acc[r].sum()), len(res)
        line = {
            "row": r,
            "above": k,
            "n": n,
            "rate": k / n,
            "ci": clopper_pearson(k, n),
            "coverage": float(np.mean((q[:, 0] <= truth) & (q[:, 1] >= truth))),
            "median_q5": float(np.median(q[:, 0]) / truth),
            "median_width": float(np.median(q[:, 1] - q[:, 0])),
        }
        if r != "binomial" and "binomial" in rows:
            b = int((acc[r] & ~acc["binomial"]).sum())
            c = int((~acc[r] & acc["binomial"]).sum())
            line.update(
                only_this=b, only_binomial=c, p_more=sign_test(b, c), p_less=sign_test(c, b)
            )
            line["median_dq5"] = float(
                np.median(q[:, 0] - np.array([a["binomial"][0] for a in res]))
            )
        if r + "_tau" in res[0]:
            line["median_tau"] = float(np.median([a[r + "_tau"] for a in res]))
        lines.append(line)
    return lines


def print_table(title, lines):
    print(f"\n{title}")
    print(
        "| likelihood | above truth | rate (95% CI) | coverage | median q5 / truth | median width "
        "| only this / only binomial (sign-test p, more; less) | median q5 - binomial q5 |"
    )
    print("| --- " * 8 + "|")
    for ln in lines:
        lo, hi = ln["ci"]
        paired = (
            f"{ln['only_this']} / {ln['only_binomial']} ({ln['p_more']:.2g}; {ln['p_less']:.2g})"
            if "only_this" in ln
            else ""
        )
        dq = f"{ln['median_dq5']:+.3f}" if "median_dq5" in ln else ""
        print(
            f"| {ln['row']} | {ln['above']} / {ln['n']} | {ln['rate']:.2f} ({lo:.3f}, {hi:.3f}) "
            f"| {ln['coverage']:.2f} | {ln['median_q5']:.3f} | {ln['median_width']:.3f} "
            f"| {paired} | {dq} |"
        )


def check_mcmc(mu, shift, seed, k, kw):
    """The default estimate (delta 1e-5) against the quadrature's binomial row (delta 0)."""
    import bayes_dp as bdp
    from mia import counts_from_score_matrix, simulate_score_matrix

    print(f"\nMCMC default (delta 1e-5, 4 x 1,000 draws) vs quadrature binomial (delta 0), mu {mu}")
    print("| matrix | MCMC q5 | MCMC q95 | quadrature q5 | quadrature q95 |")
    print("| --- " * 5 + "|")
    for i, rng in enumerate(np.random.default_rng(seed).spawn(k)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            counts, dep = draw_counts(rng, mu, shift)
            # the same matrix again, counted by the library's own call
            rng2 = np.random.default_rng(seed).spawn(k)[i]
            scores, keep = simulate_score_matrix(64, 64, mu, seed=rng2)
            scores = rng2.laplace(0.0, 1.0, keep.shape) + mu * keep
            if shift > 0:
                scores = scores + rng2.normal(0.0, shift, (64, 1))
            res = counts_from_score_matrix(scores, keep, 0.1, "online")
            assert np.array_equal(res.counts.fn, counts.fn)
            post = bdp.estimate_epsilon(
                res.to_evidence(), delta=1e-5, chains=4, draws=1000, seed=i, check=False
            )
        q = np.quantile(post.draws("eps"), [0.05, 0.95])
        ref = row_posterior("binomial", counts, dep, **kw).eps_quantile([0.05, 0.95])
        print(f"| {i} | {q[0]:.3f} | {q[1]:.3f} | {ref[0]:.3f} | {ref[1]:.3f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--audits", type=int, default=50, help="matrices per cell")
    ap.add_argument("--mu", type=float, default=1.0, help="Laplace shift = true eps")
    ap.add_argument("--shifts", type=float, nargs="+", default=[0.0, 0.25])
    ap.add_argument("--rows", nargs="+", default=["binomial", "fn_design"], choices=ROWS)
    ap.add_argument("--seed", type=int, default=0, help="cell i uses seed + i")
    ap.add_argument("--m", type=int, default=300, help="alpha midpoints of the quadrature")
    ap.add_argument("--n-eps", type=int, default=600, help="log-spaced eps nodes")
    ap.add_argument("--n-tau", type=int, default=12, help="tau nodes of the free rows")
    ap.add_argument("--check-mcmc", type=int, default=0, metavar="K")
    ap.add_argument("--refine", action="store_true")
    ap.add_argument("--save", help="JSON file for every audit's quantiles")
    args = ap.parse_args()
    kw = {"m": args.m, "n_eps": args.n_eps, "n_tau": args.n_tau}
    truth = args.mu
    saved = {"args": vars(args), "cells": {}}
    print(
        f"Laplace, mu = true eps = {truth}, 64 x 64, alpha 0.1, delta 0, rows {args.rows}, "
        f"m {args.m}, n_eps {args.n_eps}, n_tau {args.n_tau}, seed {args.seed}"
    )
    all_res = []
    for i, shift in enumerate(args.shifts):
        t0 = time.perf_counter()
        res = cell(args.mu, shift, args.audits, args.seed + i, args.rows, kw)
        sec = (time.perf_counter() - t0) / len(res)
        d_fn = np.median([a["fn_within"] for a in res])
        print_table(
            f"shift sd {shift}: {len(res)} matrices, {sec:.1f} s a matrix, median d_FN {d_fn:.2f}",
            summarize(res, args.rows, truth),
        )
        saved["cells"][str(shift)] = res
        all_res += res
    if len(args.shifts) > 1:
        print_table(f"all {len(all_res)} matrices", summarize(all_res, args.rows, truth))
    if args.refine:
        rng = np.random.default_rng(args.seed).spawn(1)[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            counts, dep = draw_counts(rng, args.mu, args.shifts[0])
        print("\nresolution: change of (q5, q50, q95) from (m, n_eps) to twice both")
        fine = {**kw, "m": 2 * args.m, "n_eps": 2 * args.n_eps}
        for r in args.rows:
            a = row_posterior(r, counts, dep, **kw).eps_quantile([0.05, 0.5, 0.95])
            b = row_posterior(r, counts, dep, **fine).eps_quantile([0.05, 0.5, 0.95])
            print(
                f"  {r}: {np.round(a, 4)} -> {np.round(b, 4)}, max change {np.abs(a - b).max():.1e}"
            )
    if args.check_mcmc:
        check_mcmc(args.mu, args.shifts[0], args.seed, args.check_mcmc, kw)
    if args.save:
        Path(args.save).write_text(json.dumps(saved, indent=1))


if __name__ == "__main__":
    main()
