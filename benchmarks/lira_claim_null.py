"""Cross-fed decisions that point the wrong way: the claim's bound on score matrices of eps = 0.

Scores independent of membership (N(0, 1) for every model and target: the mechanism's eps is
0 at every delta), ``--models`` x ``--targets``, balanced halves or independent ones, counted by
``mia.counts_from_score_matrix`` (online test, alpha = 0.1). For each matrix: the largest
per-target Clopper-Pearson bound on effective counts (Bonferroni over the 2 T rates, 95%) with
the reflected rates (the bound before this check) and without them (``reflect=False``, what
the claim states), the same on raw counts with the reflection, the counts of the target that
sets the reflected bound, and how many targets had every IN model decided "non-member".
Any bound above 0 is a false accusation.

    python benchmarks/lira_claim_null.py --sizes 64x1000 256x1000 256x10000 --seeds 1 2 3
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

import mia
from bayes_dp.core.region import clopper_pearson_target_bounds as bounds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", nargs="+", default=["64x1000", "256x1000", "256x10000"])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--designs", nargs="+", default=["balanced", "independent"])
    args = ap.parse_args()
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average "
        f"{os.getloadavg()[0]:.2f} at the start; eps = 0, delta = 1e-5, 95%"
    )
    print(
        "| models x targets | design | seed | effective, reflected | effective, as made (claim) "
        "| raw, reflected | set by (FP, FN) | targets with FN = n_pos | pooled FPR + FNR | s |"
    )
    print("|" + " --- |" * 10)
    for size in args.sizes:
        n_models, n_targets = (int(v) for v in size.split("x"))
        for design in args.designs:
            for seed in args.seeds:
                t0 = time.perf_counter()
                rng = np.random.default_rng(seed)
                if design == "balanced":
                    _, keep = mia.simulate_score_matrix(n_models, n_targets, 0.0, seed=rng)
                else:
                    keep = rng.random((n_models, n_targets)) < 0.5
                scores = rng.normal(size=keep.shape)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = mia.counts_from_score_matrix(scores, keep, 0.1, skip=True)
                c, d = res.counts, res.dependence
                args_ = (c.fp, c.n_neg, c.fn, c.n_pos, 1e-5, 0.95)
                deff = {
                    "fp_design_effect": d.fp_design_effect,
                    "fn_design_effect": d.fn_design_effect,
                }
                refl = bounds(*args_, **deff)
                made = bounds(*args_, reflect=False, **deff)
                raw = bounds(*args_)
                i = int(np.argmax(refl))
                pooled = c.fp.sum() / c.n_neg.sum() + c.fn.sum() / c.n_pos.sum()
                print(
                    f"| {n_models} x {n_targets:,} | {design} | {seed} | {refl.max():.3f} | "
                    f"{made.max():.3f} | {raw.max():.3f} | {c.fp[i]}/{c.n_neg[i]}, "
                    f"{c.fn[i]}/{c.n_pos[i]} | {int((c.fn == c.n_pos).sum())} | {pooled:.3f} | "
                    f"{time.perf_counter() - t0:.0f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
