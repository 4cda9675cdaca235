"""Coverage of a known eps by audits built from LiRA-style score matrices (bring your own scores).

The mechanism is the Gaussian mechanism on one example, applied to every target: a model's score
of a target is N(0, 1) when the target is OUT and N(mu, 1) when it is IN (mu = sensitivity /
sigma), so its (eps, delta) curve is known (``mia.canary.gaussian_mechanism_epsilon``). Each
simulated audit draws a score matrix (``mia.simulate_score_matrix``: n_models models, each target
IN for exactly half of them), turns it into cross-fed counts (``mia.counts_from_score_matrix``,
paper Alg. 5 with one challenge base per target), and samples the posterior of eps with the
bivariate-normal likelihood (paper eq. 7) under the default prior (eps ~ HalfNormal(10),
s ~ Beta(1, 1)). The table gives how often the 90% equal-tailed interval covers the true eps.

eps is fixed here, not drawn from the prior, so nominal coverage is not guaranteed: the estimate
only sees one (alpha, beta) point per target, and the prior of s says how far inside the privacy
region that point may lie. The table also gives the "visible" eps, the tightest (eps, delta)
region through the exact test's error point (alpha, beta(alpha)), and how often it is covered.
Measured (16 targets, delta = 1e-5, 50 audits per mu): the true eps is covered in 4-8% of the
audits (never with an interval entirely above it), the visible eps in 98-100% for mu <= 1; with
4 targets the intervals are wide and cover the true eps always. Discussion:
``docs/validation/lira.md``.

Run: ``python benchmarks/score_matrix_coverage.py [--audits 50] [--mu 0.5 1 2] [--png out.png]``
(about 1-2 s per audit and mu on one core after the first compilation). The study itself is
``mia.coverage.score_matrix_coverage`` (one audit: ``mia.coverage.score_matrix_audit``); this
script prints and plots it.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import mia
from mia.coverage import score_matrix_coverage


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--audits", type=int, default=50, help="audits per mu (default 50)")
    ap.add_argument("--mu", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    ap.add_argument("--n-models", type=int, default=64)
    ap.add_argument("--n-targets", type=int, default=16)
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--method", choices=mia.scores.METHODS, default="online")
    ap.add_argument("--fixed-variance", action="store_true")
    ap.add_argument(
        "--likelihood",
        choices=("bivariate_normal", "binomial", "beta_binomial"),
        default="bivariate_normal",
        help="likelihood of the counts (default bivariate_normal, the first table's)",
    )
    ap.add_argument("--draws", type=int, default=1000, help="draws per chain (2 chains)")
    ap.add_argument("--tune", type=int, default=500)
    ap.add_argument("--jobs", type=int, default=2, help="parallel audits (default 2)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--png", default=None, help="also draw the intervals into this PNG file")
    args = ap.parse_args()
    t0 = time.perf_counter()
    out = score_matrix_coverage(
        args.mu,
        args.audits,
        seed=args.seed,
        n_jobs=args.jobs,
        n_models=args.n_models,
        n_targets=args.n_targets,
        alpha=args.alpha,
        delta=args.delta,
        method=args.method,
        fixed_variance=args.fixed_variance,
        likelihood=args.likelihood,
        draws=args.draws,
        tune=args.tune,
    )
    fv = ", fixed variance" if args.fixed_variance else ""
    print(
        f"Gaussian mechanism, {args.n_targets} targets x {args.n_models} models (half IN), "
        f"{args.method} test{fv} at alpha = {args.alpha:g}, delta = {args.delta:g}, "
        f"{args.likelihood} evidence, default prior; {args.audits} audits per mu in "
        f"{time.perf_counter() - t0:.0f} s"
    )
    print(
        f"{'mu':>5} {'true eps':>9} {'90% coverage':>13} {'(95% CI)':>14} {'truth below':>12} "
        f"{'truth above':>12} {'med. width':>11} {'med. eps':>9} {'FPR':>6} {'FNR':>6} "
        f"{'visible eps':>12} {'its coverage':>13} {'r_hat>1.01':>11}"
    )
    for mu, r in out.items():
        lo, hi = r.ci("true_eps")
        ci = f"({lo:.2f}, {hi:.2f})"
        print(
            f"{mu:5.2f} {r.target['true_eps'][0]:9.2f} {r.rate('true_eps'):13.2f} {ci:>14} "
            f"{r.below('true_eps'):12.2f} {r.above('true_eps'):12.2f} "
            f"{r.width('true_eps'):11.2f} {np.median(r.stats['median']):9.2f} "
            f"{r.stats['fpr'].mean():6.3f} {r.stats['fnr'].mean():6.3f} "
            f"{r.target['visible_eps'][0]:12.2f} {r.rate('visible_eps'):13.2f} "
            f"{np.mean(r.stats['max_r_hat'] > 1.01):11.2f}"
        )
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, len(out), figsize=(3.2 * len(out), 3.6), squeeze=False)
        for ax, (mu, r) in zip(axes[0], out.items(), strict=True):
            lower, upper = r.lower["true_eps"], r.upper["true_eps"]
            order = np.argsort(lower)
            x = np.arange(order.size)
            ax.vlines(x, lower[order], upper[order], lw=0.8, color="C0")
            ax.axhline(r.target["true_eps"][0], color="k", ls="--", lw=1, label="true eps")
            ax.axhline(
                r.target["visible_eps"][0], color="C1", ls=":", lw=1, label="eps visible at alpha"
            )
            ax.set_title(f"mu = {mu:g}: coverage {r.rate('true_eps'):.2f}", fontsize=9)
            ax.set_xlabel("audit (sorted by lower bound)")
            ax.legend(fontsize=8, loc="upper left")
        axes[0][0].set_ylabel("90% interval of eps")
        fig.tight_layout()
        fig.savefig(args.png, dpi=110)
        print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
