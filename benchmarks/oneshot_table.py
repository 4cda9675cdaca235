"""Reproduce the Gaussian-mechanism table of Andrew et al. (Table 2 of the latest version).

d = 1e6, k = 1e3, delta = 1e-6, 50 runs per sigma; mean and std of the estimate for the
earliest version's mean-only estimator (which produced the published table) and for the
fitted-variance two-Gaussian estimator of the later versions.

Run: ``python benchmarks/oneshot_table.py [--runs 50] [--simulation gram]``.
``--simulation vectors`` draws the canaries in R^1e6 chunk by chunk (about 30 s per run);
``gram`` draws the same joint law exactly from a Wishart factor (about 0.03 s per run).
``--png PATH`` also draws the table (mean +- sd of each estimator per sigma, against the analytic
epsilon), e.g. ``--png examples/figures/oneshot_table.png``.
"""

from __future__ import annotations

import argparse

import numpy as np

from mia.canary import epsilon_from_cosines, gaussian_mechanism_epsilon, simulate_canary_cosines

PUBLISHED = {4.22: (1.0, 0.972, 0.148), 1.54: (3.0, 3.04, 0.137), 0.541: (10.0, 9.98, 0.190)}


def run(runs: int = 50, simulation: str = "gram", seed: int = 2023, d=10**6, k=1000, delta=1e-6):
    """Return rows ``(sigma, eps_true, published mean, std, mean-only mean, std, 2G mean, std)``."""
    rng = np.random.default_rng(seed)
    rows = []
    for sigma, (_, pub_mean, pub_std) in PUBLISHED.items():
        mo, tg = [], []
        for _ in range(runs):
            g = simulate_canary_cosines(d, k, sigma, simulation=simulation, seed=rng)
            mo.append(epsilon_from_cosines(g, d, delta, method="mean_only").epsilon)
            tg.append(epsilon_from_cosines(g, d, delta, method="two_gaussians").epsilon)
        rows.append(
            (
                sigma,
                gaussian_mechanism_epsilon(sigma, delta),
                pub_mean,
                pub_std,
                np.mean(mo),
                np.std(mo),
                np.mean(tg),
                np.std(tg),
            )
        )
    return rows


def plot(rows, path: str, runs: int, simulation: str) -> None:
    """Draw the table: mean +- sd of each estimator per sigma beside the analytic epsilon."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.8), layout="constrained")
    x = np.arange(len(rows))
    series = (
        ("published (Andrew et al.)", 2, "s", "0.35"),
        ("mean-only (v0), this run", 4, "o", "C0"),
        ("two-Gaussian (v1/v2), this run", 6, "D", "C1"),
    )
    for j, (label, col, marker, color) in enumerate(series):
        m = np.array([r[col] for r in rows])
        sd = np.array([r[col + 1] for r in rows])
        ax.errorbar(
            x + (j - 1) * 0.18, m, yerr=sd, fmt=marker, color=color, ms=6, capsize=4, label=label
        )
    for xi, r in zip(x, rows, strict=True):
        ax.hlines(r[1], xi - 0.4, xi + 0.4, color="k", lw=1.2, ls="--")
    ax.plot([], [], "k--", lw=1.2, label="analytic epsilon of the mechanism")
    ax.set_xticks(x, [f"sigma = {r[0]:g}\n(analytic eps = {r[1]:.2f})" for r in rows])
    ax.set_yscale("log")
    ax.set_yticks([0.5, 1, 2, 3, 5, 10, 15], ["0.5", "1", "2", "3", "5", "10", "15"])
    ax.set_xlabel("Gaussian mechanism noise")
    ax.set_ylabel("one-shot estimate of epsilon (mean ± sd)")
    ax.set_title(
        "One-shot canary audit of the Gaussian mechanism\n"
        f"d = 1e6, k = 1000, delta = 1e-6, {runs} runs per sigma ({simulation} simulation)",
        fontsize="medium",
    )
    ax.grid(axis="y", which="both", alpha=0.3)
    ax.legend(fontsize="small", loc="upper left")
    fig.savefig(path, dpi=90)
    plt.close(fig)
    print(f"figure written to {path}")


def main(argv=None) -> None:
    """Print the table (and draw it with ``--png``)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--simulation", choices=["gram", "vectors"], default="gram")
    p.add_argument("--seed", type=int, default=2023)
    p.add_argument("--png", metavar="PATH", help="also draw the table to this PNG")
    a = p.parse_args(argv)
    print(f"d=1e6 k=1000 delta=1e-6, {a.runs} runs, simulation={a.simulation}, seed={a.seed}")
    print("sigma  eps_true | published     | mean-only (v0) | two-Gaussian (v1/v2)")
    rows = run(a.runs, a.simulation, a.seed)
    for s, e, pm, ps, mm, ms, tm, ts in rows:
        print(
            f"{s:5.3f}  {e:7.3f}  | {pm:5.3f}±{ps:.3f}   | {mm:6.3f}±{ms:.3f}   "
            f"| {tm:6.3f}±{ts:.3f}"
        )
    if a.png:
        plot(rows, a.png, a.runs, a.simulation)


if __name__ == "__main__":
    main()
