"""Would a prior with mass on R's boundary make the model's lower end of eps signable?

The band model puts each error point uniformly on R_s(eps, delta) = R(eps) minus R(s eps),
s ~ Beta(1, 1). Where the attack is optimal (its error point on the boundary of R(eps)) the
posterior's 5% quantile of eps lies above the truth in far more than 5% of audits
(docs/validation/claims.md, "What the audit shows"). The candidate repair left open on issue 32:
give the strength an
atom at s = 1 (the point *on* the boundary), s ~ (1 - w) Beta(1, 1) + w delta_1. The atom's
likelihood is the band's limit as s -> 1, g(eps) / |R|'(eps), where g is the density of the
visible eps e(p) = min{e : p in R(e, delta)} under the counts' likelihood and |R|' the
derivative of the region's area; so the posterior of eps needs only the distribution of e(p).

This study computes that posterior by quadrature, without the sampler
(``tests/reference/boundary_prior.py``: the distribution of e(p) under the counts' Beta
likelihood by Monte Carlo, ``--samples`` draws a target, seeded; eps on a grid of 0.005 up to
8, s on 200 midpoints, eps ~ HalfNormal(10), the default). It counts, for each atom weight w,
the audits whose 90% interval lies entirely above the truth (a false accusation) and entirely
below it (a false assurance), in four cases: the Laplace test's point (0.1, 0.728) on the
boundary of R(1); the randomized-response corner on that boundary; 64 targets at the Laplace
point with 128 trials a side (a score matrix's shape, binomial counts); an attack weaker than
the mechanism (its point on the boundary of R(0.5), the truth 1).

    python benchmarks/boundary_prior.py --audits 200 --weights 0 0.25 0.5 0.75 0.9   # the docs'
    python benchmarks/boundary_prior.py --audits 40 --cases laplace rr

w = 0 (the default prior) gives the rates the sampler gives in docs/validation/claims.md ("What the
audit shows"),
a check of the quadrature against the library.
"""

from __future__ import annotations

import argparse
import time

from scipy import stats

from tests.reference.boundary_prior import CASES, study


def _rate(k, n):
    lo = 0.0 if k == 0 else stats.beta.ppf(0.025, k, n - k + 1)
    hi = 1.0 if k == n else stats.beta.ppf(0.975, k + 1, n - k)
    return f"{k}/{n} ({lo:.3f}, {hi:.3f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", nargs="+", choices=sorted(CASES), default=list(CASES))
    ap.add_argument("--weights", nargs="+", type=float, default=[0.0, 0.25, 0.5, 0.9])
    ap.add_argument("--audits", type=int, default=100)
    ap.add_argument("--samples", type=int, default=40000, help="draws of e(p) per target")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print(
        "| case | (FPR, FNR) | targets x trials a side | atom weight w | audits | interval "
        "above truth (95% CI) | interval below truth (95% CI) | median lower / truth | "
        "median upper / truth |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for i, case in enumerate(args.cases):
        t0 = time.perf_counter()
        a, b, n, targets, _ = CASES[case]
        for row in study(case, args.weights, args.audits, args.seed + i, args.samples):
            print(
                f"| {case} | ({a:.3f}, {b:.3f}) | {targets} x {n} | {row[1]:g} | {row[2]} | "
                f"{_rate(row[3], row[2])} | {_rate(row[4], row[2])} | {row[5]:.3f} | "
                f"{row[6]:.3f} |",
                flush=True,
            )
        print(f"<!-- {case}: {time.perf_counter() - t0:.0f} s -->", flush=True)


if __name__ == "__main__":
    main()
