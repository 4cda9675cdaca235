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
4 targets the intervals are wide and cover the true eps always. Discussion: ``docs/lira.md``.

Run: ``python benchmarks/score_matrix_coverage.py [--audits 50] [--mu 0.5 1 2] [--png out.png]``
(about 1-2 s per audit and mu on one core after the first compilation).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from joblib import Parallel, delayed
from scipy import stats

import bayes_dp as bdp
import mia
from mia.canary import gaussian_mechanism_epsilon


def one_audit(
    seed,
    mu: float,
    *,
    n_models: int = 64,
    n_targets: int = 16,
    alpha: float = 0.1,
    delta: float = 1e-5,
    method: str = "online",
    fixed_variance: bool = False,
    chains: int = 2,
    draws: int = 1000,
    tune: int = 500,
) -> dict:
    """One audit of the Gaussian mechanism with shift ``mu``: counts, 90% interval, truth."""
    rng = np.random.default_rng(seed)
    scores, keep = mia.simulate_score_matrix(n_models, n_targets, mu, seed=rng)
    res = mia.counts_from_score_matrix(scores, keep, alpha, method, fixed_variance=fixed_variance)
    post = bdp.estimate_epsilon(
        res.to_evidence(name="lira"),
        delta=delta,
        chains=chains,
        draws=draws,
        tune=tune,
        seed=rng,
        cores=1,
        check=False,
    )
    lo, hi = post.interval(0.9, "eps")
    c = res.counts
    # the eps "visible" to a level-alpha test: the tightest (eps, delta) region that contains
    # the exact test's error point (alpha, beta(alpha)) of N(0, 1) vs N(mu, 1)
    beta = stats.norm.cdf(stats.norm.isf(alpha) - abs(mu))
    return {
        "lo": float(lo),
        "hi": float(hi),
        "median": float(np.median(post.draws("eps"))),
        "truth": gaussian_mechanism_epsilon(1.0, delta, sensitivity=abs(mu)),
        "visible": float(bdp.classical_epsilon(alpha, beta, delta)),
        "fpr": float(c.fp.sum() / c.n_neg.sum()),
        "fnr": float(c.fn.sum() / c.n_pos.sum()),
    }


def coverage_study(
    mus=(0.5, 1.0, 2.0), audits: int = 50, seed: int = 0, n_jobs: int = 2, **kwargs
) -> dict:
    """Coverage of the true eps by the 90% interval over ``audits`` audits for every ``mu``."""
    out = {}
    for k, mu in enumerate(mus):
        seeds = np.random.SeedSequence([seed, k]).spawn(audits)
        rows = Parallel(n_jobs=n_jobs)(delayed(one_audit)(sd, mu, **kwargs) for sd in seeds)
        keys = ("lo", "hi", "median", "truth", "visible", "fpr", "fnr")
        lo, hi, med, truth, vis, fpr, fnr = (np.array([r[key] for r in rows]) for key in keys)
        covered = (lo <= truth) & (truth <= hi)
        n_cov = int(covered.sum())
        out[float(mu)] = {
            "truth": float(truth[0]),
            "coverage": n_cov / audits,
            # 95% Clopper-Pearson interval of the coverage
            "ci": (
                float(stats.beta.ppf(0.025, n_cov, audits - n_cov + 1)) if n_cov else 0.0,
                float(stats.beta.ppf(0.975, n_cov + 1, audits - n_cov)) if n_cov < audits else 1.0,
            ),
            "visible": float(vis[0]),
            "coverage_visible": float(np.mean((lo <= vis) & (vis <= hi))),
            "below": float(np.mean(truth < lo)),  # interval entirely above the truth
            "above": float(np.mean(truth > hi)),  # interval entirely below the truth
            "width": float(np.median(hi - lo)),
            "median": float(np.median(med)),
            "fpr": float(fpr.mean()),
            "fnr": float(fnr.mean()),
            "lower": lo,
            "upper": hi,
        }
    return out


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
    ap.add_argument("--draws", type=int, default=1000, help="draws per chain (2 chains)")
    ap.add_argument("--tune", type=int, default=500)
    ap.add_argument("--jobs", type=int, default=2, help="parallel audits (default 2)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--png", default=None, help="also draw the intervals into this PNG file")
    args = ap.parse_args()
    t0 = time.perf_counter()
    out = coverage_study(
        args.mu,
        args.audits,
        args.seed,
        args.jobs,
        n_models=args.n_models,
        n_targets=args.n_targets,
        alpha=args.alpha,
        delta=args.delta,
        method=args.method,
        fixed_variance=args.fixed_variance,
        draws=args.draws,
        tune=args.tune,
    )
    fv = ", fixed variance" if args.fixed_variance else ""
    print(
        f"Gaussian mechanism, {args.n_targets} targets x {args.n_models} models (half IN), "
        f"{args.method} test{fv} at alpha = {args.alpha:g}, delta = {args.delta:g}, "
        f"bivariate-normal evidence, default prior; {args.audits} audits per mu in "
        f"{time.perf_counter() - t0:.0f} s"
    )
    print(
        f"{'mu':>5} {'true eps':>9} {'90% coverage':>13} {'(95% CI)':>14} {'truth below':>12} "
        f"{'truth above':>12} {'med. width':>11} {'med. eps':>9} {'FPR':>6} {'FNR':>6} "
        f"{'visible eps':>12} {'its coverage':>13}"
    )
    for mu, d in out.items():
        ci = f"({d['ci'][0]:.2f}, {d['ci'][1]:.2f})"
        print(
            f"{mu:5.2f} {d['truth']:9.2f} {d['coverage']:13.2f} {ci:>14} {d['below']:12.2f} "
            f"{d['above']:12.2f} {d['width']:11.2f} {d['median']:9.2f} {d['fpr']:6.3f} "
            f"{d['fnr']:6.3f} {d['visible']:12.2f} {d['coverage_visible']:13.2f}"
        )
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, len(out), figsize=(3.2 * len(out), 3.6), squeeze=False)
        for ax, (mu, d) in zip(axes[0], out.items(), strict=True):
            order = np.argsort(d["lower"])
            x = np.arange(order.size)
            ax.vlines(x, d["lower"][order], d["upper"][order], lw=0.8, color="C0")
            ax.axhline(d["truth"], color="k", ls="--", lw=1, label="true eps")
            ax.axhline(d["visible"], color="C1", ls=":", lw=1, label="eps visible at alpha")
            ax.set_title(f"mu = {mu:g}: coverage {d['coverage']:.2f}", fontsize=9)
            ax.set_xlabel("audit (sorted by lower bound)")
            ax.legend(fontsize=8, loc="upper left")
        axes[0][0].set_ylabel("90% interval of eps")
        fig.tight_layout()
        fig.savefig(args.png, dpi=110)
        print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
