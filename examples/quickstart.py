"""Quickstart: the posterior of eps from the paper's strong-attack counts (Sec. 4.1).

Ten challenge bases, 1000 challenges per hypothesis each, delta = 1e-5, priors HalfNormal(10) on
eps and Beta(1, 1) on the attack strength s. Prints the posterior summary and, for comparison,
the classical point estimate (which assumes the attack is optimal on a worst-case base).

Run: ``python examples/quickstart.py``

What it prints on stdout is shown in the README and checked by ``tests/project/test_readme.py``
(regenerate the README's block with ``python docs/update_readme.py``). It depends only on the
seed and the package versions, not on the machine's speed, as long as the run converges within
its time budget; the time it took goes to stderr.
"""

import sys
import textwrap
import time

import numpy as np

import bayes_dp as bdp
from bayes_dp.results.posterior import ROUGH_REWEIGHTING

# Yildirim et al., Sec. 4.1, "relatively accurate attacks"
STRONG_FP = [40, 50, 60, 100, 100, 110, 120, 200, 200, 200]
STRONG_FN = [250, 200, 150, 100, 120, 100, 100, 80, 70, 60]


def main() -> None:
    counts = bdp.AttackCounts(fp=STRONG_FP, n_neg=1000, fn=STRONG_FN, n_pos=1000)
    prior = bdp.Prior(eps=bdp.HalfNormal(scale=10.0), s=bdp.Beta(1.0, 1.0))
    t0 = time.perf_counter()
    # draws=None (default): run until r_hat <= 1.01 and ESS >= 4,000 for eps and s. The rounds
    # of the run end on those criteria alone; the time budget only matters if it runs out
    # (then the draws so far depend on the machine's speed), so it is generous here.
    post = bdp.estimate_epsilon(counts, delta=1e-5, prior=prior, chains=4, max_time=1800, seed=0)
    seconds = time.perf_counter() - t0

    status = str(post.converged)
    if not post.converged:
        status += f" (stop reason: {post.settings.get('stop_reason')})"
    print(
        f"MCMC-DP-Est (exact likelihood) on {len(counts)} challenge bases: 4 chains x "
        f"{post.n_draws} draws, converged: {status}\n"
    )
    print(post.summary().round(3).to_string())
    # the claim: the lower bound to cite, and whether the data or the prior sets the upper end
    claim = bdp.audit_claim(post)
    eps_hat = np.max(bdp.classical_epsilon(counts.fpr, counts.fnr, 1e-5))
    # the interval: the claim's lower bound, and the model's upper end
    print("\n" + textwrap.fill(claim.interval_words(), width=100))
    print(f"classical point estimate (max over bases): {eps_hat:.2f}")
    for f, res in post.prior_sensitivity(0.9).items():  # the upper end's source, the claim's
        flag = "" if res["reliable"] else f" ({ROUGH_REWEIGHTING})"
        print(f"eps prior scale x{f:g}: the model's 95% quantile {res['interval'][1]:.2f}{flag}")
    # the claim in two sentences to cite; claim.details holds its parts (levels, assumptions)
    print("\n" + textwrap.fill(claim.headline, width=100))
    print(f"sampling took {seconds:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
