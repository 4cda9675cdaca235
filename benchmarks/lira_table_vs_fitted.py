"""ESS per second with and without the surrogate table on simulated LiRA counts (issue 23, item 2).

From ``samplers.exact.driver.TABLE_MAX_BASES`` binomial bases on, the exact sampler builds no
surrogate table and its independence move proposes from the Student t fitted to the warm-up.
This script runs the same counts both ways in one process, one after the other (the table way
by raising ``TABLE_MAX_BASES`` above the number of bases), with a fixed number of draws, and
prints the seconds, the smallest bulk and tail ESS of eps and s, ESS per second, the acceptance
of the independence move and which move each chain took. The counts are those of
``benchmarks/bench_lira_scale.py`` (95% of the targets barely exposed, 5% very exposed; online
test at alpha 0.1).

    python benchmarks/lira_table_vs_fitted.py --size 64x10000
    python benchmarks/lira_table_vs_fitted.py --size 64x1000 --halves independent
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_lira_scale import HALVES, simulate  # noqa: E402

import bayes_dp as bdp  # noqa: E402
import mia  # noqa: E402
from samplers.exact import driver  # noqa: E402


def run(ev, *, draws: int, chains: int, seed: int) -> dict:
    """One fixed-length run; its time, ESS of eps and s, and independence-move acceptance."""
    t0 = time.perf_counter()
    post = bdp.estimate_epsilon(
        ev,
        delta=1e-5,
        seed=seed,
        draws=draws,
        chains=chains,
        check=False,
        progress=False,
        log_likelihood=False,
    )
    sec = time.perf_counter() - t0
    diag = post.diagnostics()
    ess = min(min(d["ess_bulk"], d["ess_tail"]) for d in diag.values())
    return {
        "seconds": sec,
        "ess": {v: (d["ess_bulk"], d["ess_tail"]) for v, d in diag.items()},
        "ess_per_s": ess / sec,
        "r_hat": max(d["r_hat"] for d in diag.values()),
        "accept_indep": post.acceptance.get("accept_table", float("nan")),
        "moves": post.settings.get("surrogate_moves"),
        "eps_90": post.interval(0.9, "eps"),
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--size", default="64x10000", help="models x targets")
    p.add_argument("--halves", choices=HALVES, default="balanced")
    p.add_argument("--draws", type=int, default=2000)
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    m, t = (int(v) for v in a.size.split("x"))
    scores, keep, _ = simulate(m, t, a.halves, a.seed)
    res = mia.counts_from_score_matrix(scores, keep, 0.1, skip=True)
    ev = res.to_evidence(name="lira")
    print(
        f"{a.size} {a.halves}: {len(res.counts)} targets counted, binomial, "
        f"{a.draws} draws x {a.chains} chains"
    )
    default = driver.TABLE_MAX_BASES
    for label, limit in (("table", np.iinfo(np.int64).max), ("no table (default)", default)):
        driver.TABLE_MAX_BASES = limit
        try:
            r = run(ev, draws=a.draws, chains=a.chains, seed=a.seed)
        finally:
            driver.TABLE_MAX_BASES = default
        ess = ", ".join(f"{v} {b:.0f}/{tl:.0f}" for v, (b, tl) in r["ess"].items())
        lo, hi = r["eps_90"]
        print(
            f"{label:>19}: {r['seconds']:6.1f} s, ESS bulk/tail {ess}, min ESS/s "
            f"{r['ess_per_s']:.1f}, r_hat {r['r_hat']:.3f}, independence move accepted "
            f"{r['accept_indep']:.3f}, moves {r['moves']}, eps 90% [{lo:.3f}, {hi:.3f}]",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
