"""Why cross-fed counts need the correlated likelihood: interval coverage over repeated audits.

Each simulated audit draws eps and the attack strength s from the prior, and the true error
probabilities (alpha_i, beta_i) of n challenge bases uniformly on R_s(eps, delta), as the model
says. Base i is then realised as a loss-based membership test: the loss of z is N(0, 1) without z
(H0) and N(mu_i, 1) with z (H1), with mu_i chosen so that the exact test at type-I error alpha_i
has type-II error beta_i. Its error counts come from the cross-fed measurement of the paper's
Alg. 5: N models per hypothesis, each in turn the target and the others its shadow models,
normals fitted to the shadows, likelihood-ratio test at alpha_i. Every decision of a base uses
nearly the same fitted normals, so the counts are over-dispersed and correlated.

The same counts are analysed with the binomial likelihood (independent decisions, paper eq. 1)
and the bivariate normal one (eq. 7, tau and rho inferred). Since eps is drawn from the prior
the analysis uses, a calibrated posterior covers it with its 90% interval in 90% of the audits;
the binomial posterior is too sure of each base's error rates and covers less often.

The simulation and the study are ``mia.coverage.cross_fed_audit`` and
``mia.coverage.cross_fed_coverage`` (run by ``bayes_dp.evaluation.calibration.coverage_study``);
this
script prints and plots them.

Run: ``python examples/correlated_counts.py [--reps 200] [--seed 7] [--jobs 2] [--png out.png]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mia.coverage import cross_fed_coverage

N_BASES = 10
N_MODELS = 100
DELTA = 1e-5


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--jobs", type=int, default=2, help="parallel audits (default 2)")
    ap.add_argument("--png", default=None)
    args = ap.parse_args()
    t0 = time.perf_counter()
    out = cross_fed_coverage(
        args.reps,
        seed=args.seed,
        n_jobs=args.jobs,
        n_bases=N_BASES,
        n_models=N_MODELS,
        delta=DELTA,
    )
    sd = np.sqrt(0.09 / args.reps)
    print(
        f"{N_BASES} bases, N = {N_MODELS} cross-fed models per hypothesis, delta = {DELTA:g}; "
        f"{args.reps} audits in {time.perf_counter() - t0:.0f} s (binomial sd of a coverage "
        f"{sd:.3f})"
    )
    print(
        f"{'likelihood':<18} {'90% coverage':>13} {'(95% CI)':>14} {'truth below':>12} "
        f"{'truth above':>12} {'median width':>13}"
    )
    for name in out.labels:
        lo, hi = out.ci(name)
        ci = f"({lo:.3f}, {hi:.3f})"
        print(
            f"{name:<18} {out.rate(name):13.3f} {ci:>14} {out.below(name):12.3f} "
            f"{out.above(name):12.3f} {out.width(name):13.2f}"
        )
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7.5, 4))
        for k, name in enumerate(out.labels):
            rel_lo = out.lower[name] / out.target[name]
            rel_hi = out.upper[name] / out.target[name]
            order = np.argsort(rel_lo)
            x = np.arange(order.size) + 0.35 * k
            ax.vlines(
                x,
                rel_lo[order],
                np.minimum(rel_hi[order], 4),
                color=f"C{k}",
                lw=0.8,
                label=f"{name}: 90% coverage {out.rate(name):.2f}",
            )
        ax.axhline(1.0, color="k", ls="--", lw=1, label="true eps")
        ax.set_yscale("log")
        ax.set_xlabel("simulated audit (sorted by lower bound)")
        ax.set_ylabel("90% interval of eps / true eps")
        ax.set_title("Cross-fed counts (Alg. 5): binomial vs correlated likelihood")
        ax.legend(fontsize=8, loc="upper left")
        fig.tight_layout()
        fig.savefig(args.png, dpi=110)
        print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
