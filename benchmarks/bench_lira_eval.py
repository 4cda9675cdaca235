"""Milliseconds per evaluation of the binomial log likelihood of a simulated LiRA run.

The scores, halves and counts are those of ``benchmarks/bench_lira_scale.py`` (same simulation,
same seed); the counts become the exact sampler's model
(``bayes_dp.inference.runners.kernel_model``,
default priors, delta = 1e-5), and ``samplers.model.binomial_block.fill_log_lik`` is timed at
three points near the posterior (eps 1.9 and 2.8, s 0.01 and 0.3): median of ``--repeats``
calls after one untimed call. Printed per case: distinct rows, distinct (N0, N1) sizes, blocks,
bases evaluated on their own, milliseconds per evaluation at each point, and the summed log
likelihood (to compare two versions of the kernel: equal to ~1e-8).

    python benchmarks/bench_lira_eval.py --sizes 64x1000 64x10000 --halves balanced independent
    python benchmarks/bench_lira_eval.py --sizes 256x50000 --halves independent --repeats 5
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from bench_lira_scale import HALVES, SIZES, simulate

POINTS = ((1.9, 0.01), (1.9, 0.3), (2.8, 0.01))


def kernel_model(size: str, halves: str, seed: int):
    """The exact sampler's model of the simulated run's counts (binomial likelihood)."""
    import mia
    from bayes_dp.core.priors import Prior
    from bayes_dp.inference.model import Model
    from bayes_dp.inference.runners import kernel_model as build

    m, t = (int(v) for v in size.split("x"))
    scores, keep, _ = simulate(m, t, halves, seed)
    res = mia.counts_from_score_matrix(scores, keep, 0.1, skip=True)
    ev = res.to_evidence(name="lira", likelihood="binomial")
    return build(Model.build(ev, delta=1e-5, prior=Prior()))[0]


def time_points(M, repeats: int):
    """Median seconds per evaluation at each of POINTS, and the summed log likelihood there."""
    from samplers.model.binomial_block import fill_log_lik

    ll = np.empty(M.b_grp.size)
    out = []
    for eps, s in POINTS:
        sv = np.array([s])
        fill_log_lik(M.B, M.Q, M.b_k, eps, sv, M.delta, -1, ll, False)
        ts = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fill_log_lik(M.B, M.Q, M.b_k, eps, sv, M.delta, -1, ll, False)
            ts.append(time.perf_counter() - t0)
        out.append((float(np.median(ts)), float(np.dot(M.b_mult, ll))))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", nargs="+", choices=SIZES, default=["64x1000"])
    p.add_argument("--halves", nargs="+", choices=HALVES, default=["balanced", "independent"])
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    pts = "  ".join(f"ms at ({e:g}, {s:g})" for e, s in POINTS)
    print(
        f"{'models x targets':>16} {'halves':>11} {'rows':>6} {'sizes':>5} {'blocks':>6} "
        f"{'alone':>5}  {pts}  summed log lik"
    )
    for size in a.sizes:
        for halves in a.halves:
            M = kernel_model(size, halves, a.seed)
            Q = M.Q
            sizes = np.unique(np.stack([M.B.n0, M.B.n1], 1), axis=0).shape[0]
            blocks = 0 if Q is None else Q.k.size
            alone = M.b_grp.size if Q is None else Q.rest.size
            res = time_points(M, a.repeats)
            ms = "  ".join(f"{1e3 * t:>15.2f}" for t, _ in res)
            tot = " ".join(f"{v:.6f}" for _, v in res)
            print(
                f"{size:>16} {halves:>11} {M.b_grp.size:6d} {sizes:5d} {blocks:6d} "
                f"{alone:5d}  {ms}  {tot}",
                flush=True,
            )


if __name__ == "__main__":
    main()
