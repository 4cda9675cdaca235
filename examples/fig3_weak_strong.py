"""Paper Fig. 3: joint estimation of eps and the attack strength s from ten attacks.

Ten challenge bases with N = 1000 challenges per hypothesis each, delta = 1e-5, priors
HalfNormal(10) on eps and Beta(1, 1) on s.

* Weak attacks: error probabilities alpha_i, beta_i ~ Beta(10, 10) (evenly spread, near
  random guessing), counts X_i ~ Binom(1000, alpha_i), Y_i ~ Binom(1000, beta_i), seed 2024.
* Strong attacks: the paper's table (X = 40, 50, ..., Y = 250, 200, ...).

Each row shows the observed rates over the region R(eps, delta) for posterior draws of eps, the
marginal posteriors of eps (with the classical estimates) and of s, and their joint density.

Run: ``python examples/fig3_weak_strong.py [--out DIR]`` (about a minute); writes
``DIR/fig3_weak.png`` and ``DIR/fig3_strong.png`` (default: the current folder;
``--out examples/figures`` replaces the figures the docs show).
"""

import argparse
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import bayes_dp as bdp  # noqa: E402
from bayes_dp import plots  # noqa: E402

DELTA = 1e-5
N = 1000
STRONG_FP = [40, 50, 60, 100, 100, 110, 120, 200, 200, 200]
STRONG_FN = [250, 200, 150, 100, 120, 100, 100, 80, 70, 60]


def weak_counts(seed: int = 2024) -> bdp.AttackCounts:
    rng = np.random.default_rng(seed)
    alpha = rng.beta(10, 10, size=10)
    beta = rng.beta(10, 10, size=10)
    return bdp.AttackCounts(fp=rng.binomial(N, alpha), n_neg=N, fn=rng.binomial(N, beta), n_pos=N)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=".", metavar="DIR", help="folder of the figures (default .)")
    figures = Path(p.parse_args(argv).out)
    figures.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    scenarios = {
        "weak attacks (α, β ~ Beta(10, 10))": weak_counts(),
        "strong attacks (paper's table)": bdp.AttackCounts(
            fp=STRONG_FP, n_neg=N, fn=STRONG_FN, n_pos=N
        ),
    }
    for key, (name, counts) in zip(("weak", "strong"), scenarios.items(), strict=True):
        post = bdp.estimate_epsilon(
            counts, delta=DELTA, chains=4, draws=20_000, tune=5000, seed=0, check=False
        )
        print(f"\n== {name}: fp={counts.fp.tolist()}, fn={counts.fn.tolist()}")
        print(post.summary().round(3).to_string())
        fig, row = plt.subplots(1, 4, figsize=(22, 5.2), layout="constrained")
        plots.plot_region(post, ax=row[0], seed=0)
        row[0].set_title("observed rates over R(ε, δ)")
        row[0].legend(fontsize="x-small", loc="upper right" if key == "strong" else "lower left")
        plots.plot_eps_posterior(post, ax=row[1])
        row[1].legend(fontsize="x-small")
        plots.plot_marginal(post, "s", ax=row[2])
        row[2].legend(fontsize="x-small")
        plots.plot_joint(post, ax=row[3])
        fig.suptitle(
            f"Paper Fig. 3, {name}: ten attacks, N = 1000 challenges each, δ = 1e-5, priors "
            "HalfNormal(10) on ε and Beta(1, 1) on s; 4 chains x 20,000 draws",
            fontsize=14,
        )
        out = figures / f"fig3_{key}.png"
        fig.savefig(out, dpi=72)
        plt.close(fig)
        print(f"wrote {out} ({out.stat().st_size / 1024:.0f} KB)")
    print(f"done in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
