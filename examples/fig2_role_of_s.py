"""Paper Fig. 2: how the attack strength s drives the width of the credible interval for eps.

One challenge base (n = 1) with N challenges per hypothesis and X = Y = 0.4 N errors, i.e. an
attack with alpha = beta = 0.4, at delta = 1e-5 with the HalfNormal(10) prior on eps.

Left: the 90% credible interval of eps against a *fixed* s (N = 1000). Right: the width of the
90% interval against N, for fixed s = 0, 0.5, 0.9 and for s inferred (Beta(1, 1) prior).
The classical point estimate log(0.6 / 0.4) = 0.405 ignores all of this.

Run: ``python examples/fig2_role_of_s.py [--out DIR]`` (about a minute); writes
``DIR/fig2_role_of_s.png`` (default: the current folder; ``--out examples/figures`` replaces the
figure the docs show).
"""

import argparse
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import bayes_dp as bdp  # noqa: E402

DELTA = 1e-5
S_GRID = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95]
N_GRID = [10, 100, 1000, 10_000, 100_000]
SETTINGS = dict(chains=4, draws=20_000, tune=5000, check=False)
NAME = "fig2_role_of_s.png"


def run(n: int, s, seed: int) -> bdp.Posterior:
    counts = bdp.AttackCounts(fp=round(0.4 * n), n_neg=n, fn=round(0.4 * n), n_pos=n)
    prior = bdp.Prior(eps=bdp.HalfNormal(10.0), s=s)
    return bdp.estimate_epsilon(counts, delta=DELTA, prior=prior, seed=seed, **SETTINGS)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=".", metavar="DIR", help="folder of the figure (default .)")
    out = Path(p.parse_args(argv).out) / NAME
    t0 = time.perf_counter()
    eps_hat = float(bdp.classical_epsilon(0.4, 0.4, DELTA))
    rows = []
    for j, s in enumerate(S_GRID):
        post = run(1000, s, seed=j)
        lo, hi = post.interval(0.9)
        rows.append((s, lo, post.quantile(0.5), hi))
        print(f"N = 1000, s = {s:4.2f}: 90% interval [{lo:.3f}, {hi:.3f}], width {hi - lo:.3f}")
    rows = np.array(rows)

    widths = {}
    for k, s in enumerate([0.0, 0.5, 0.9, bdp.Beta(1.0, 1.0)]):
        label = "s inferred, Beta(1, 1) prior" if isinstance(s, bdp.Beta) else f"s fixed at {s}"
        w = []
        for i, n in enumerate(N_GRID):
            post = run(n, s, seed=100 + 10 * k + i)
            lo, hi = post.interval(0.9)
            w.append(hi - lo)
            print(f"{label:30s} N = {n:6d}: width {hi - lo:.3f}")
        widths[label] = w

    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.6), layout="constrained")
    a.fill_between(rows[:, 0], rows[:, 1], rows[:, 3], color="C0", alpha=0.25, label="90% interval")
    a.plot(rows[:, 0], rows[:, 1], "o-", color="C0", ms=4, lw=1)
    a.plot(rows[:, 0], rows[:, 3], "o-", color="C0", ms=4, lw=1)
    a.plot(rows[:, 0], rows[:, 2], "s--", color="k", ms=4, lw=1, label="posterior median")
    a.axhline(eps_hat, color="C3", ls=":", label=f"classical estimate {eps_hat:.3f}")
    a.set_yscale("log")
    a.set_xlabel("attack strength s (fixed)")
    a.set_ylabel("ε (log scale)")
    a.set_title("90% credible interval of ε vs fixed s (N = 1000, X = Y = 400)")
    a.legend(fontsize="small")
    for (label, w), m in zip(widths.items(), "osD^", strict=True):
        b.plot(N_GRID, w, marker=m, label=label)
    b.set_xscale("log")
    b.set_yscale("log")
    b.set_xlabel("challenges per hypothesis N (X = Y = 0.4 N)")
    b.set_ylabel("width of the 90% interval of ε (log scale)")
    b.set_title("Interval width vs N: only a strong s makes more data pay off")
    b.legend(fontsize="small")
    fig.suptitle(
        "Paper Fig. 2: one attack with α = β = 0.4, δ = 1e-5, HalfNormal(10) prior on ε "
        f"({SETTINGS['chains']} chains x {SETTINGS['draws']} draws per run)"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    print(f"wrote {out} ({out.stat().st_size / 1024:.0f} KB) in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
