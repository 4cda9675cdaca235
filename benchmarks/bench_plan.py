"""Speed of ``bayes_dp.plan_audit``: a table of 5 designs x 50 simulated audits (issue 27).

The issue's question: 20 challenge bases, a mechanism at eps = 4 attacked with s = 0.7, delta =
1e-5, a claimed eps = 2; designs with 100, 300, 1,000, 3,000 and 10,000 models per hypothesis
and base. A first, small plan compiles the kernels (numba cache) and is not timed.

Prints the plan, the wall-clock seconds and the CPU seconds of the process (all threads): on a
machine shared with other work the wall time says little, and CPU seconds / cores is what the
plan would take on idle cores when its threads run in parallel (they release the GIL in the
likelihood kernel). The target is <= 60 s on 2 cores.

``--before`` runs the grid settings before issue 27's changes (step 2 in the refinement of
models of many bases, no second grid in (log eps, logit s) when the mass reaches s -> 0,
few-base models in (log(s eps), logit s) with one zoom), for a comparison in one session.

Run: ``python benchmarks/bench_plan.py [--reps R] [--cores C] [--bases B] [--before]``.
"""

import argparse
import time

import bayes_dp as bdp
from bayes_dp.planning import grid


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--bases", type=int, default=20)
    ap.add_argument("--before", action="store_true", help="the grid settings before issue 27")
    args = ap.parse_args()
    if args.before:
        grid.MANY = grid.MANY._replace(step=2.0)
        grid.FEW = grid.FEW._replace(coarse=(12,), coords="uv")
        grid.S_LOW = 0.0
    truth = {"eps": 4.0, "s": 0.7}
    designs = [{"bases": args.bases, "n": n} for n in (100, 300, 1000, 3000, 10_000)]
    bdp.plan_audit(truth, designs[:1], delta=1e-5, reps=2, seed=1)  # compile, not timed
    wall, cpu = time.perf_counter(), time.process_time()
    plan = bdp.plan_audit(
        truth, designs, delta=1e-5, claim=2.0, reps=args.reps, seed=0, cores=args.cores
    )
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(plan)
    print(
        f"{len(designs)} designs x {args.reps} audits: {wall:.1f} s wall, {cpu:.1f} CPU s "
        f"({cpu / args.cores:.1f} s on {args.cores} idle cores); target <= 60 s on 2 cores"
    )


if __name__ == "__main__":
    main()
