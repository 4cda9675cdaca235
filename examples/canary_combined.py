"""Combine canary-audit evidence with LiRA evidence in one epsilon posterior.

Run: ``python examples/canary_combined.py [--png PATH]`` (about 20 s on 2 cores,
numba compilation included; compiled kernels are cached for later runs).

The canary group comes from a one-shot audit of the Gaussian mechanism (sigma = 1.54, true
epsilon 3.0 at delta = 1e-6): the threshold is set at a 5% false-positive rate of the exact
cosine null and fresh null cosines are counted, so the counts are honest binomial draws. The
LiRA group is given as counts (illustrative numbers: replace them by the output of your LiRA
audit). Each group gets its own attack strength; epsilon is shared. Besides the combined
posterior, the posterior from each group alone is sampled (same prior, chains and draws), to
show what combining buys.

``--png PATH`` draws the figure shown in the README
(``--png examples/figures/canary_combined.png``): left, the eps posterior of the combined
evidence against that of each group alone, with 90% intervals; right, both groups' observed
error rates over the privacy region, with each group's inner edge of R_s at its own median
strength.
"""

from __future__ import annotations

import argparse

import bayes_dp as bdp
from mia.canary import CosineNull, counts_from_scores, one_shot_gaussian_mechanism, to_evidence

DELTA = 1e-6
#: Colours of the groups (as in the region plot: group order) and of the combined posterior.
COLORS = {"canary": "C0", "lira": "C1", "combined": "k"}


def plot_figure(posts: dict, eps_true: float, draws: int, path: str) -> None:
    """Write the two-panel figure: eps posteriors compared, and the region with both groups."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bayes_dp import plots

    with plt.rc_context({"font.size": 11}):
        fig, (ax1, ax2) = plt.subplots(
            1, 2, figsize=(12.5, 7.0), layout="constrained", width_ratios=[1.2, 1.0]
        )
        shown = {
            "canary + LiRA (combined)": posts["combined"],
            "canary only": posts["canary"],
            "LiRA only": posts["lira"],
        }
        plots.plot_compare(
            shown,
            "eps",
            prob=0.9,
            colors=[COLORS["combined"], COLORS["canary"], COLORS["lira"]],
            ax=ax1,
        )
        ax1.axvline(eps_true, color="C3", ls=":", lw=1.5)
        ax1.annotate(
            f"true ε of the audited\nGaussian mechanism: {eps_true:.2f}",
            xy=(eps_true, 0.97),
            xycoords=("data", "axes fraction"),
            xytext=(6, 0),
            textcoords="offset points",
            va="top",
            fontsize="small",
            color="C3",
        )
        ax1.set_title("Posterior of ε: combined evidence vs each group alone")
        plots.plot_region(posts["combined"], seed=0, ax=ax2)
        ax2.set_title(f"Both groups over the privacy region (δ = {DELTA:g})")
        ax2.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.12))
        fig.suptitle(
            "Canary audit + LiRA audit (illustrative counts) in one posterior: ε shared, "
            "each group its own strength s\n"
            f"(each posterior: {posts['combined'].n_chains} chains x {draws:,} draws; "
            "region: the combined posterior)",
            fontsize=12,
        )
        fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"wrote {path}")


def main(argv: list[str] | None = None) -> None:
    """Build the evidence groups, the combined and single-group posteriors, and the figure."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--png", metavar="PATH", help="write the figure (PNG) to PATH")
    p.add_argument("--draws", type=int, default=20_000, help="draws per chain (4 chains)")
    p.add_argument("--seed", type=int, default=1, help="seed of the samplers")
    args = p.parse_args(argv)

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
    evidence = {
        "canary": to_evidence(canary, name="canary", strength="own"),
        "lira": bdp.Evidence(lira, likelihood="binomial", name="lira", strength="own"),
    }
    print(f"canary counts (threshold {canary.threshold:.3e}): {canary.counts}")
    print(f"lira counts: {lira}")
    posts = {}
    for name, groups in [
        ("combined", list(evidence.values())),
        ("canary", [evidence["canary"]]),
        ("lira", [evidence["lira"]]),
    ]:
        posts[name] = bdp.estimate_epsilon(
            groups, delta=DELTA, prior=bdp.Prior(), chains=4, draws=args.draws, seed=args.seed
        )
    lo, hi = posts["combined"].interval(0.9, "eps")
    print(f"{'posterior 90% interval for epsilon:':<37}[{lo:.3f}, {hi:.3f}]")
    for name in ("canary", "lira"):
        lo, hi = posts[name].interval(0.9, "eps")
        print(f"{f'  from the {name} group alone:':<37}[{lo:.3f}, {hi:.3f}]")
    if args.png:
        plot_figure(posts, audit.epsilon_analytic, args.draws, args.png)


if __name__ == "__main__":
    main()
