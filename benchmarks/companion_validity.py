"""How often each companion bound (mia.bounds) lies above the true eps of a Laplace mechanism.

Score matrices of a Laplace mechanism (eps0 = sensitivity / scale, its privacy profile
eps(delta) = eps0 + 2 log(1 - delta)), ``--models`` x ``--targets``, balanced (every target IN
for half of the models) or independent halves, with and without a per-model shift of sd 0.25;
``mia.counts_from_score_matrix`` (online, alpha = 0.1) and ``mia.companion_bounds`` at 95%
confidence. Prints, per scenario and bound, the audits whose bound lies above eps(delta), the
exact (Clopper-Pearson) 95% interval of that rate, and the median bound.

    python benchmarks/companion_validity.py --reps 200
    python benchmarks/companion_validity.py --reps 100 --models 256 --eps0 2 --split \
        --designs balanced

``--split`` adds the prototype row "max over selected targets, split models"
(``mia.split_selection_bound``, the model split seeded from the audit's generator).
"""

import argparse
import time
import warnings

import numpy as np
from scipy import stats

import mia
from bayes_dp.core.exceptions import DependenceWarning


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--models", type=int, default=64)
    ap.add_argument("--targets", type=int, default=64)
    ap.add_argument("--eps0", type=float, default=3.0)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--split", action="store_true", help="also the split-models bound")
    ap.add_argument("--designs", nargs="+", default=["balanced", "independent"])
    a = ap.parse_args()
    truth = a.eps0 + 2 * np.log1p(-a.delta)
    print(
        f"Laplace eps0 = {a.eps0}, eps({a.delta:g}) = {truth:.5f}; {a.models} x {a.targets}, "
        f"{a.reps} audits per row, bounds at 95% confidence"
    )
    for design in a.designs:
        for shift in (0.0, 0.25):
            rng = np.random.default_rng(a.seed)
            t0 = time.perf_counter()
            vals: dict = {}
            for _ in range(a.reps):
                if design == "balanced":
                    _, keep = mia.simulate_score_matrix(a.models, a.targets, 0.0, seed=rng)
                else:
                    keep = rng.random((a.models, a.targets)) < 0.5
                scores = rng.laplace(0.0, 1.0, keep.shape) + a.eps0 * keep
                scores += shift * rng.standard_normal((a.models, 1))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DependenceWarning)
                    res = mia.counts_from_score_matrix(scores, keep, 0.1, skip=True)
                b = mia.companion_bounds(
                    res,
                    delta=a.delta,
                    scores=scores,
                    keep=keep,
                    split=rng if a.split else None,
                )
                for r in b["bounds"]:
                    if r["eps"] is not None:
                        vals.setdefault(r["name"], []).append(r["eps"])
            for name, v in vals.items():
                k = int(np.sum(np.asarray(v) > truth))
                ci = stats.binomtest(k, len(v)).proportion_ci(0.95, method="exact")
                print(
                    f"{design:11s} shift {shift:4.2f}  {name:38s} above truth {k:3d}/{len(v)} "
                    f"(95% CI [{ci.low:.3f}, {ci.high:.3f}]), median bound "
                    f"{np.median(v):.3f}"
                )
            print(f"   ({time.perf_counter() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
