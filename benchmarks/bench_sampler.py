"""Speed of MCMC-DP-Est: iterations/s and ESS_bulk/s of eps and s.

Data: the paper's strong-attack counts (Sec. 4.1, n = 10, N = 1000) and a 20-base case (n = 20,
N = 100, rates drawn once with a fixed seed). Configurations: the paper's (uniform auxiliary
proposal, K = 1000), the default (truncated-normal likelihood-shaped proposal, K = 16, two
iterations per stored draw) and the alternatives measured to choose it. Wall time excludes
numba compilation (a warm-up call compiles first).

Run: ``python benchmarks/bench_sampler.py [--quick]``
"""

import argparse
import time
import tracemalloc

import numpy as np

import bayes_dp as bdp
from bayes_dp import _arviz

STRONG = bdp.AttackCounts(
    fp=[40, 50, 60, 100, 100, 110, 120, 200, 200, 200],
    n_neg=1000,
    fn=[250, 200, 150, 100, 120, 100, 100, 80, 70, 60],
    n_pos=1000,
)


def twenty_bases(seed=12345):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.02, 0.3, 20)
    b = np.clip(0.7 - a - rng.uniform(0.0, 0.3, 20), 0.01, None)
    return bdp.AttackCounts(rng.binomial(100, a), 100, rng.binomial(100, b), 100)


def run(counts, draws, tune, **kw):
    t0 = time.perf_counter()
    post = bdp.estimate_epsilon(
        counts, delta=1e-5, chains=4, draws=draws, tune=tune, seed=1, check=False, **kw
    )
    wall = time.perf_counter() - t0
    its = 4 * (tune + post.settings["thin"] * draws) / wall
    ess_e = _arviz.ess(post.draws("eps"), "bulk")
    ess_s = _arviz.ess(post.draws("s"), "bulk") if "s" in post.var_names else float("nan")
    return wall, its, ess_e / wall, ess_s / wall, post


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    draws = 5000 if args.quick else 20000
    # compile once
    bdp.estimate_epsilon(STRONG, delta=1e-5, chains=1, draws=10, tune=10, check=False)
    print(
        f"{'data':<8} {'config':<32} {'wall s':>7} {'iter/s':>8} {'ESS/s eps':>10} "
        f"{'ESS/s s':>9} {'eps 5%':>7} {'eps 95%':>8}"
    )
    configs = [
        ("default (normal, K=16, thin 2)", dict()),
        ("normal, K=8, thin 2", dict(n_aux=8)),
        ("normal, K=16, thin 1", dict(thin=1)),
        ("Beta-lik., K=16, thin 2", dict(aux_proposal="likelihood")),
        ("Beta-lik., K=32, thin 1", dict(aux_proposal="likelihood", n_aux=32, thin=1)),
        ("paper (unif., K=1000)", dict(aux_proposal="uniform", n_aux=1000, thin=1)),
    ]
    for label, counts in (("strong", STRONG), ("20-base", twenty_bases())):
        for name, kw in configs:
            d = draws // 4 if kw.get("n_aux", 32) >= 1000 else draws
            wall, its, ee, es, post = run(counts, d, 2000, **kw)
            lo, hi = post.interval(0.9)
            print(
                f"{label:<8} {name:<32} {wall:7.2f} {its:8.0f} {ee:10.0f} {es:9.0f} "
                f"{lo:7.2f} {hi:8.2f}"
            )
    # correlated-count likelihood on the 20-base case: cost relative to the binomial one
    c20 = twenty_bases()
    ev = bdp.Evidence(c20, likelihood="bivariate_normal", name="x")
    bdp.estimate_epsilon(ev, delta=1e-5, chains=1, draws=10, tune=10, check=False)
    w_bin, its_bin, e_bin, _, _ = run(c20, draws, 2000)
    print(f"\n20-base, binomial:         {its_bin:8.0f} iter/s, ESS/s eps {e_bin:6.0f}")
    for label, kw in (
        ("auxiliary pairs (default)", dict()),
        ("integrated", dict(integrate_latents=True)),
    ):
        w_bvn, its_bvn, e_bvn, s_bvn, post = run(ev, draws, 2000, **kw)
        rhat = max(_arviz.rhat(post.draws(v)) for v in ("eps", "s", "tau_x", "rho_x"))
        e_tau = _arviz.ess(post.draws("tau_x"), "bulk") / w_bvn
        print(
            f"20-base, bivariate normal, {label:<21} {its_bvn:8.0f} iter/s, ESS/s eps "
            f"{e_bvn:6.0f}, s {s_bvn:6.0f}, tau {e_tau:6.0f}, max r_hat {rhat:.3f}, "
            f"wall-time ratio to binomial {w_bvn / w_bin:.2f}, ESS/s-of-eps ratio "
            f"{e_bin / e_bvn:.1f}"
        )

    # memory: the draws and nothing per iteration
    tracemalloc.start()
    bdp.estimate_epsilon(
        STRONG, delta=1e-5, chains=4, draws=draws, tune=2000, seed=1, check=False, cores=1
    )
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(
        f"\npeak Python-side memory for 4 x {draws} draws: {peak / 1e6:.1f} MB "
        f"(draw arrays alone: {4 * draws * 8 * 2 / 1e6:.1f} MB)"
    )


if __name__ == "__main__":
    main()
