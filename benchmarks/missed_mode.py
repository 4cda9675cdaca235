"""A mode the chains missed: default runs on score matrices of pure noise.

Score matrices of ``--models`` models x ``--targets`` targets whose scores are N(0, 1) whatever
the membership (no target is exposed: eps = 0), each model trained on an independent random half
(``keep`` drawn with probability 1/2), counted by ``mia.counts_from_score_matrix`` at the online
test's ``--alpha``; ``to_evidence()`` at defaults (binomial on raw counts) and
``bdp.estimate_epsilon`` at defaults (4 chains until r_hat <= 1.01 and ESS >= 4,000, at most
600 s). Prints, per seed, whether the first chains missed the band model's mode at eps ~ 0
(``post.settings["mode_restart"]``: the point found, by how much it beat the chains' best draw,
which chains missed it, the first chains' quantiles), the result's 5 / 50 / 95% quantiles of
eps, whether it converged, the seconds, and the line above the claim
(``AuditClaim.interval_words``). docs/validation/lira.md, "A mode the chains missed", has the
figures.

    python benchmarks/missed_mode.py --seeds 0 1
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np


def main(argv=None) -> None:
    """Run the null matrices and print what the sampler did with the mode at eps ~ 0."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", type=int, default=64)
    ap.add_argument("--targets", type=int, default=300)
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    args = ap.parse_args(argv)

    import bayes_dp as bdp
    import mia

    for seed in args.seeds:
        rng = np.random.default_rng(seed)
        keep = rng.random((args.models, args.targets)) < 0.5
        scores = rng.normal(size=keep.shape)
        res = mia.counts_from_score_matrix(scores, keep, args.alpha)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the dependence diagnostic; read from the claim
            post = bdp.estimate_epsilon(res.to_evidence(), delta=args.delta, seed=0, progress=False)
        seconds = time.perf_counter() - t0
        q = post.quantile([0.05, 0.5, 0.95], "eps")
        r = post.settings.get("mode_restart")
        print(f"== seed {seed}: {args.models} models x {args.targets} targets, eps = 0 ==")
        if r is None:
            print("the first chains missed no mode")
        else:
            fq = r["first_eps_quantiles"]
            print(
                f"first chains ({r['first_draws']} draws/chain, stop: {r['first_stop_reason']}): "
                f"eps 5/50/95% [{fq[0]:.3g}, {fq[1]:.3g}, {fq[2]:.3g}]; chains {r['chains']} "
                f"missed a point at eps = {r['eps']:.2g}, "
                f"{r['log_post'] - r['log_post_draws']:.0f} log units above their best draw"
            )
        print(
            f"result: eps 5/50/95% [{q[0]:.3g}, {q[1]:.3g}, {q[2]:.3g}]; converged "
            f"{post.converged} (stop: {post.settings['stop_reason']}); {seconds:.0f} s"
        )
        print(bdp.audit_claim(post).interval_words())


if __name__ == "__main__":
    main()
