"""The claim on designed bases where the attack is optimal: posterior lower end against the truth.

Each audit draws the counts of ``--bases`` challenge bases of ``--n`` negatives and ``--n``
positives whose true error point lies on the boundary of R(``--visible``, delta) (the attack
is optimal when ``--visible`` equals the mechanism's eps ``--eps``; below it, the attack is
weaker than the mechanism allows): ``--point laplace`` at FPR ``--fpr`` (the likelihood-ratio
test of a Laplace mechanism: FNR = 1 - delta - e^eps FPR), ``--point rr`` at the corner
FPR = FNR = (1 - delta) / (1 + e^eps) (randomized response). It runs the default posterior
(2 chains x 1,000 draws after 500) and :func:`bayes_dp.audit_claim` at 95%, and counts the
audits whose posterior 5% quantile of eps (the lower end of the 90% interval) and whose claim
lie above the mechanism's eps: a false accusation.

    python benchmarks/claim_boundary.py --audits 30                         # Laplace, eps 1
    python benchmarks/claim_boundary.py --audits 30 --point rr --eps 1
    python benchmarks/claim_boundary.py --audits 30 --eps 1 --visible 0.5   # a weaker attack
    python benchmarks/claim_boundary.py --audits 30 --bases 10 --n 200
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for benchmarks._support

from benchmarks._support.claim_boundary import audit, boundary_point  # noqa: E402


def cp_rate(k: int, n: int) -> str:
    lo = 0.0 if k == 0 else stats.beta.ppf(0.025, k, n - k + 1)
    hi = 1.0 if k == n else stats.beta.ppf(0.975, k + 1, n - k)
    return f"{k}/{n} ({lo:.3f}, {hi:.3f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--audits", type=int, default=30)
    ap.add_argument("--point", choices=("laplace", "rr"), default="laplace")
    ap.add_argument("--eps", type=float, default=1.0, help="the mechanism's eps")
    ap.add_argument("--visible", type=float, default=None, help="the attack's (default: --eps)")
    ap.add_argument("--fpr", type=float, default=0.1)
    ap.add_argument("--n", type=int, default=1000, help="negatives and positives per base")
    ap.add_argument("--bases", type=int, default=1)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    vis = args.eps if args.visible is None else args.visible
    a, b = boundary_point(args.point, vis, args.delta, args.fpr)
    rngs = np.random.default_rng(args.seed).spawn(args.audits)
    t0 = time.perf_counter()
    rows = np.array([audit(r, a, b, args.n, args.bases, args.delta) for r in rngs])
    post, claim, cp = rows.T
    truth = args.eps
    print(
        "| point | eps | attack's eps | (FPR, FNR) | bases x n | audits | posterior 5% above "
        "truth (95% CI) | claim above truth (95% CI) | median posterior 5% / truth | median "
        "claim / truth | s/audit |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    print(
        f"| {args.point} | {truth:g} | {vis:g} | ({a:.3f}, {b:.3f}) | {args.bases} x {args.n} | "
        f"{args.audits} | {cp_rate(int(np.sum(post > truth)), args.audits)} | "
        f"{cp_rate(int(np.sum(claim > truth)), args.audits)} | {np.median(post) / truth:.3f} | "
        f"{np.median(claim) / truth:.3f} | {(time.perf_counter() - t0) / args.audits:.1f} |"
    )
    assert np.all(claim <= cp + 1e-12) and np.all(claim <= post + 1e-12)


if __name__ == "__main__":
    main()
