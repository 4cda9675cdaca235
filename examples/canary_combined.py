"""Combine canary-audit evidence with LiRA evidence in one epsilon posterior.

Run: ``PYTHONPATH=. python examples/canary_combined.py`` (a few seconds without the sampler).

The canary group comes from a one-shot audit of the Gaussian mechanism (sigma = 1.54, true
epsilon 3.0 at delta = 1e-6): the threshold is set at a 5% false-positive rate of the exact
cosine null and fresh null cosines are counted, so the counts are honest binomial draws. The
LiRA group is given as counts (replace them by the output of your LiRA audit). Each group gets
its own attack strength; epsilon is shared.
"""

from __future__ import annotations

import bayes_dp as bdp
from mia.canary import CosineNull, counts_from_scores, one_shot_gaussian_mechanism, to_evidence

DELTA = 1e-6


def main() -> None:
    """Build the evidence groups and, if the sampler is available, the posterior."""
    d, k = 10**6, 1000
    audit = one_shot_gaussian_mechanism(
        d, k, 1.54, DELTA, method="mean_only", simulation="gram", seed=7
    )
    print(
        f"one-shot audit: eps_est (mean only) = {audit.epsilon:.3f}, "
        f"true eps = {audit.epsilon_analytic:.3f}"
    )
    canary = counts_from_scores(audit.cosines, CosineNull(d), 0.05, n_null=k, seed=8)
    lira = bdp.AttackCounts(fp=[48, 52, 45], n_neg=1000, fn=[610, 590, 640], n_pos=1000)
    evidence = [
        to_evidence(canary, name="canary", strength="own"),
        bdp.Evidence(lira, likelihood="binomial", name="lira", strength="own"),
    ]
    print(f"canary counts (threshold {canary.threshold:.3e}): {canary.counts}")
    print(f"lira counts: {lira}")
    post = bdp.estimate_epsilon(
        evidence, delta=DELTA, prior=bdp.Prior(), chains=4, draws=20_000, seed=1
    )
    lo, hi = post.interval(0.9, "eps")
    print(f"posterior 90% interval for epsilon: [{lo:.3f}, {hi:.3f}]")


if __name__ == "__main__":
    main()
