"""Accuracy of the planner's grid posterior against the quadrature reference (issue 27).

For each simulated audit (``--bases``, ``--n``, ``--truths``, ``--seeds``) prints the error of
the grid's 5%, 50% and 95% points of eps and of s, in probability points: the reference's CDF
(``tests.reference.posterior_grid``, HalfNormal(10) and Beta(1, 1) priors, as ``bdp.Prior()``)
at the grid's quantile minus the level. ``--before`` runs the settings before issue 27's fix
(everything gridded in (log(s eps), logit s) with one zoom, step 2 for many bases). The
20-base references take minutes each (about 11 min at N = 10,000). Run from the repository root:

``python benchmarks/plan_grid_accuracy.py [--before] [--bases 1 3] [--n 100 1000 10000]``
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import bayes_dp as bdp
from bayes_dp.planning import grid

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for benchmarks._support

from benchmarks._support.plan_grid_check import grid_errors  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bases", type=int, nargs="+", default=[1, 3])
    ap.add_argument("--n", type=int, nargs="+", default=[100, 1000, 10_000])
    ap.add_argument("--truths", nargs="+", default=["4,0.9", "3,0.05", "2,0.5"], help="eps,s")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1])
    ap.add_argument("--before", action="store_true", help="the settings before the fix")
    args = ap.parse_args()
    if args.before:
        grid.FEW = grid.FEW._replace(coarse=(12,), coords="uv")
        grid.MANY = grid.MANY._replace(step=2.0)
        grid.S_LOW = 0.0
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
                    e_eps, e_s = grid_errors(counts)  # the grid and the reference
                    cpu = time.process_time() - t
                    worst = max(worst, np.abs(e_eps).max(), np.abs(e_s).max())
                    print(
                        f"{bases} x {n} eps={eps:g} s={s:g} seed={seed}: eps {np.round(e_eps, 2)}"
                        f" s {np.round(e_s, 2)} (grid and reference {cpu:.1f} CPU s)",
                        flush=True,
                    )
    print(f"worst {worst:.2f} probability points")


if __name__ == "__main__":
    main()
