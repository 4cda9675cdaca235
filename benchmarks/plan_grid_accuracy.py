"""Accuracy of the planner's grid posterior against the quadrature reference (issue 27).

For each simulated audit (``--bases``, ``--n``, ``--truths``, ``--seeds``) prints the error of
the grid's 5%, 50% and 95% points of eps and of s, in probability points: the reference's CDF
(``tests.reference.posterior_grid``, HalfNormal(10) and Beta(1, 1) priors, as ``bdp.Prior()``)
at the grid's quantile minus the level. ``--before`` runs the settings before the fix (few-base
models gridded in (log(s eps), logit s) with one zoom of 12 nodes). The 20-base references take
minutes each (about 11 min at N = 10,000). Run from the repository root:

``python benchmarks/plan_grid_accuracy.py [--before] [--bases 1 3] [--n 100 1000 10000]``
"""

import argparse
import time

import numpy as np

import bayes_dp as bdp
from bayes_dp import _plan_grid

from tests import reference as ref

Q = np.array([0.05, 0.5, 0.95])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bases", type=int, nargs="+", default=[1, 3])
    ap.add_argument("--n", type=int, nargs="+", default=[100, 1000, 10_000])
    ap.add_argument("--truths", nargs="+", default=["4,0.9", "3,0.05", "2,0.5"], help="eps,s")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1])
    ap.add_argument("--before", action="store_true", help="the settings before the fix")
    args = ap.parse_args()
    if args.before:
        _plan_grid.FEW = _plan_grid.FEW._replace(coarse=(12,), coords="uv")
    worst = 0.0
    for bases in args.bases:
        for n in args.n:
            for truth in args.truths:
                eps, s = (float(x) for x in truth.split(","))
                for seed in args.seeds:
                    counts, _, _ = bdp.simulate.simulate_counts(
                        eps, s, 1e-5, [n] * bases, [n] * bases, seed=seed
                    )
                    t = time.process_time()
                    g = _plan_grid.grid_posterior(counts, 1e-5, bdp.Prior())
                    cpu = time.process_time() - t
                    r = ref.posterior_grid(
                        (counts.fp, counts.n_neg, counts.fn, counts.n_pos),
                        1e-5,
                        eps_prior=("halfnormal", 10.0),
                        s_prior=("beta", 1.0, 1.0),
                        zoom=None,
                    )
                    e_eps = 100 * (r.eps_cdf(g.quantile(Q)) - Q)
                    e_s = 100 * (r.s_cdf(g.s_quantile(Q)) - Q)
                    worst = max(worst, np.abs(e_eps).max(), np.abs(e_s).max())
                    print(
                        f"{bases} x {n} eps={eps:g} s={s:g} seed={seed}: eps {np.round(e_eps, 2)}"
                        f" s {np.round(e_s, 2)} (grid {cpu:.2f} CPU s)",
                        flush=True,
                    )
    print(f"worst {worst:.2f} probability points")


if __name__ == "__main__":
    main()
