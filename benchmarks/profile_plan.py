"""Where ``plan_audit``'s time goes: likelihood points and CPU seconds per stage of the grid.

Runs ``grid_posterior`` (the planner's per-audit posterior) on simulated audits of the
benchmark's setting (eps = 4, s = 0.7, delta = 1e-5; ``--bases`` bases of N = 100, 1,000 and
10,000, ``--reps`` audits each) and counts, per stage of ``grid_posterior`` (the zoom passes,
the optimiser, the grid on the final box, the refinement), the points the likelihood kernel
evaluates and its CPU seconds. CPU seconds, not wall time: the numbers hold on a loaded machine.
Table and reading: ``docs/validation/planning.md`` (section *Speed*).

Run: ``python benchmarks/profile_plan.py [--bases B] [--reps R]``.
"""

import argparse
import collections
import sys
import time

import bayes_dp as bdp
import samplers.exact.grid
from bayes_dp.core.simulate import simulate_counts
from bayes_dp.planning import core as planning


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bases", type=int, default=20)
    ap.add_argument("--reps", type=int, default=4)
    args = ap.parse_args()
    kernel = samplers.exact.grid.log_lik_points
    points, cpu = collections.Counter(), collections.Counter()

    def counted(M, C, eps, s, out, stop):
        f = sys._getframe(1)
        while f.f_code.co_name != "grid_posterior":
            f = f.f_back
        line = f.f_code.co_filename, f.f_lineno
        t = time.process_time()
        ok = kernel(M, C, eps, s, out, stop)
        points[line] += eps.size
        cpu[line] += time.process_time() - t
        return ok

    samplers.exact.grid.log_lik_points = counted
    sizes = (100, 1000, 10_000)
    audits = [
        simulate_counts(4.0, 0.7, 1e-5, [n] * args.bases, [n] * args.bases, seed=i)[0]
        for n in sizes
        for i in range(args.reps)
    ]
    planning.grid_posterior(audits[0], 1e-5, bdp.Prior())  # compile, not counted
    points.clear()
    cpu.clear()
    t = time.process_time()
    for c in audits:
        planning.grid_posterior(c, 1e-5, bdp.Prior())
    total = time.process_time() - t
    import linecache

    print(f"{len(audits)} audits of {args.bases} bases (N = {sizes}): {total:.2f} CPU s")
    for line in sorted(points):
        code = linecache.getline(*line).strip()
        print(f"  line {line[1]:4d} {code:45.45s} {points[line]:7d} points {cpu[line]:6.2f} s")
    print(f"  outside the kernel: {total - sum(cpu.values()):.2f} s")


if __name__ == "__main__":
    main()
