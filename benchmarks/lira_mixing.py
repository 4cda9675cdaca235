"""How the exact sampler mixes on simulated LiRA counts (issue 23, items 1-2).

Simulates a LiRA run the issue's way (``tests/_lira_sim.py``: Gaussian scores, every target IN
for a random half of the models, per-target effect sizes mostly tiny, a few large), turns it
into cross-fed counts with ``mia.counts_from_score_matrix`` (alpha = 0.05), and runs
``bayes_dp.estimate_epsilon`` at its defaults (seed 0, delta 1e-5, no pointwise
log-likelihood). Prints the number of distinct count rows, the seconds, the draws per chain,
convergence and the summary. Run it twice: the first run of a changed kernel includes numba's
compilation.

Run: ``python benchmarks/lira_mixing.py --models 64 --targets 10000 --likelihood binomial``
(``--likelihood bivariate_normal`` is the default of ``res.to_evidence()``).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _lira_sim import lira_counts  # noqa: E402

import bayes_dp as bdp  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", type=int, default=64)
    p.add_argument("--targets", type=int, default=1000)
    p.add_argument("--likelihood", default="bivariate_normal")
    p.add_argument("--max-time", type=float, default=300.0)
    p.add_argument("--seed", type=int, default=1, help="seed of the simulated scores")
    a = p.parse_args(argv)
    if a.models < 6 or a.targets < 1:
        p.error(f"need at least 6 models and 1 target; found {a.models} and {a.targets}")
    res = lira_counts(a.models, a.targets, a.seed)
    c = res.counts
    rows = np.stack([c.fp, c.n_neg, c.fn, c.n_pos], axis=1)
    print(
        f"{a.models} models x {a.targets} targets, {a.likelihood}: "
        f"{len(np.unique(rows, axis=0))} distinct count rows"
    )
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        post = bdp.estimate_epsilon(
            res.to_evidence(likelihood=a.likelihood),
            delta=1e-5,
            seed=0,
            max_time=a.max_time,
            log_likelihood=False,
        )
    seconds = time.perf_counter() - t0
    print(f"seconds {seconds:.1f}; draws per chain {post.n_draws}; converged {post.converged}")
    for w in caught:
        print(f"warning: {str(w.message).splitlines()[0]}")
    print(post.summary().to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
