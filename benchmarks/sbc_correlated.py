"""Simulation-based calibration of the joint sampler with the correlated (bivariate-normal) model.

Each replicate draws (eps, s, tau, rho) from the prior, counts from the model (5 challenge bases,
N = 1000 per hypothesis, bivariate normal of the paper's eq. 7, rounded to integers), runs
MCMC-DP-Est and records whether each 90% equal-tailed interval covers the truth and the rank of
the truth among the draws. Calibrated inference covers at 90% (binomial sd over 200 replicates:
2.1 points) and gives uniform ranks. The machinery is the package's
(``bayes_dp.evaluation.calibration.run_sbc`` with ``sbc_replicate``); this script sets the study up
and
prints and plots it.

Run: ``python benchmarks/sbc_correlated.py [--reps 200] [--seed 2026] [--jobs 2] [--png sbc.png]
[--likelihood beta_binomial --n 200] [--integrate]``
"""

from __future__ import annotations

import argparse
import functools
import time

import numpy as np

import bayes_dp as bdp
from bayes_dp.evaluation.calibration import run_sbc, sbc_replicate

PRIOR = bdp.Prior(eps=bdp.HalfNormal(3.0), s=bdp.Beta(2.0, 2.0), tau=bdp.Beta(1.0, 20.0))
N_BASES = 5
N = 1000
DELTA = 1e-5


def sbc(
    reps: int = 200,
    seed: int = 2026,
    n_jobs: int = 2,
    n: int = N,
    likelihood: str = "bivariate_normal",
    integrate_latents: bool = False,
) -> bdp.calibration.SBCResult:
    """SBC of the package's model with this study's prior, 5 bases of ``n`` challenges each."""
    replicate = functools.partial(
        sbc_replicate,
        prior=PRIOR,
        delta=DELTA,
        n_neg=[n] * N_BASES,
        n_pos=[n] * N_BASES,
        likelihood=likelihood,
        **({"sampler": bdp.MHAAR(integrate_latents=True)} if integrate_latents else {}),
    )
    return run_sbc(replicate, reps, seed=seed, n_jobs=n_jobs, level=0.9, thin=10)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--jobs", type=int, default=2, help="parallel replicates (default 2)")
    ap.add_argument("--png", default=None)
    ap.add_argument("--n", type=int, default=N, help="challenges per hypothesis")
    ap.add_argument(
        "--likelihood", default="bivariate_normal", choices=["bivariate_normal", "beta_binomial"]
    )
    ap.add_argument(
        "--integrate",
        action="store_true",
        help="integrate the latent rates out by quadrature (integrate_latents=True)",
    )
    args = ap.parse_args()
    t0 = time.perf_counter()
    out = sbc(
        args.reps,
        seed=args.seed,
        n_jobs=args.jobs,
        n=args.n,
        likelihood=args.likelihood,
        integrate_latents=args.integrate,
    )
    sd = np.sqrt(0.9 * 0.1 / args.reps)
    print(
        f"{args.likelihood}, N = {args.n}"
        f"{', latents integrated' if args.integrate else ''}: {args.reps} replicates in "
        f"{time.perf_counter() - t0:.0f} s; nominal 0.90 "
        f"(binomial sd {sd:.3f})"
    )
    for v in out.names:
        lo, hi = out.coverage.ci(v)
        print(
            f"  {v:<6} coverage {out.coverage.rate(v):.3f} (95% CI {lo:.3f}-{hi:.3f})   "
            f"rank uniformity: chi2 p = {out.uniformity(v):.3f}, "
            f"KS p = {out.uniformity(v, method='ks'):.3f}"
        )
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        names = out.names
        fig, axes = plt.subplots(1, len(names), figsize=(3.2 * len(names), 3), sharey=True)
        for ax, v in zip(axes, names, strict=True):
            ax.hist(out.normalised_ranks(v), bins=10, range=(0, 1), color="C0", edgecolor="white")
            ax.axhline(args.reps / 10, color="k", ls="--", lw=1, label="uniform")
            ax.set_title(f"{v}: 90% coverage {out.coverage.rate(v):.2f}")
            ax.set_xlabel("normalised rank of the truth")
        axes[0].set_ylabel("replicates")
        axes[0].legend()
        fig.suptitle(
            f"Simulation-based calibration, {args.likelihood} counts, {N_BASES} bases, N = {args.n}"
        )
        fig.tight_layout()
        fig.savefig(args.png, dpi=110)
        print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
