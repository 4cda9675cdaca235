"""Audit four training algorithms on digits with LiRA, as in Sec. 4.2 of Yildirim et al.

The paper's four algorithms (one-hidden-layer MLP, 128 ReLU units, SGD momentum 0.9, learning
rate 0.01, minibatch 100), the A4 noise sweep of its Table 1, and a DP-SGD run whose theoretical
epsilon is printed beside the audit:

    A1  fixed initialisation, no output perturbation
    A2  random initialisation, no output perturbation
    A3  fixed initialisation, output perturbation sigma = 0.1
    A4  random initialisation, output perturbation sigma in {0.1, 0.05, 0.01}
    DP  DP-SGD (noise multiplier 1.0, clipping norm 1.0, Poisson rate 0.1)

For each: 20 challenge bases from scikit-learn's digits (|D| = 999, z drawn at random from the
rest and mislabelled by default: a hard point), N = 100 models per hypothesis, the cross-fed
measurement (Alg. 5) at alpha = 0.1, then a table with the counts, a classical epsilon (pooled
rates: point estimate and 95% lower bound) and, when ``bayes_dp.estimate_epsilon`` is
available, the 90% posterior interval.

Run::

    python examples/lira_digits.py            # full audit (see benchmarks for timings)
    python examples/lira_digits.py --quick    # about 1.5 minutes on 2 cores (see the README)
    python examples/lira_digits.py --png examples/figures/lira_table1.png   # also the figure

``--png PATH`` writes Table 1 as a figure (left: the 90% posterior interval of eps per algorithm,
with the classical point estimate and the DP-SGD bound; right: the error curves over alpha of one
algorithm's challenge bases, ``--curves``, as in the paper's Fig. 4 top).

Losses are stored under ``--out`` (default ``lira_digits_audit/``); an interrupted run resumes.
The paper trains 200 epochs; here the default is 50 (``--epochs``) to keep the full run near half
an hour on 2 cores (``benchmarks/bench_training.py`` measures the cost).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np

import bayes_dp as bdp
import mia


def pooled_epsilon(counts: bdp.AttackCounts, delta: float, confidence: float = 0.95) -> tuple:
    """Classical point estimate and lower confidence bound of eps from the pooled error rates.

    The counts are pooled over the bases (the average attack). The point estimate is
    :func:`bayes_dp.classical_epsilon` of the pooled rates; the lower bound is the lower end of
    :func:`bayes_dp.clopper_pearson_epsilon` of the pooled counts (two-sided Clopper-Pearson
    intervals of both rates, union bound, joint level ``confidence``). Cross-fed counts are
    correlated, so the binomial confidence level is only nominal: this column is the classical
    frequentist audit that the posterior interval improves on.
    """
    fp, n0, fn, n1 = (int(v.sum()) for v in (counts.fp, counts.n_neg, counts.fn, counts.n_pos))
    point = bdp.classical_epsilon(fp / n0, fn / n1, delta)
    lower, _ = bdp.clopper_pearson_epsilon(fp, n0, fn, n1, delta, confidence)
    return point, lower


def algorithms(epochs: int, dp_epochs: int) -> dict:
    common = {"epochs": epochs, "learning_rate": 0.01, "momentum": 0.9, "batch_size": 100}
    return {
        "A1": mia.MLP(init="fixed", **common),
        "A2": mia.MLP(init="random", **common),
        "A3 (sigma=0.1)": mia.MLP(init="fixed", output_noise=0.1, **common),
        "A4 (sigma=0.1)": mia.MLP(init="random", output_noise=0.1, **common),
        "A4 (sigma=0.05)": mia.MLP(init="random", output_noise=0.05, **common),
        "A4 (sigma=0.01)": mia.MLP(init="random", output_noise=0.01, **common),
        "DP-SGD": mia.MLP(
            init="random",
            dp=mia.DPSGD(noise_multiplier=1.0, clip_norm=1.0),
            **{**common, "epochs": dp_epochs},
        ),
    }


#: Target type I errors of the error curves in the ``--png`` figure.
CURVE_ALPHAS = np.round(np.linspace(0.01, 0.5, 50), 4)


def plot_table(rows: list, curves: tuple | None, args, path: str) -> None:
    """Write Table 1 as a figure: posterior intervals per algorithm and one algorithm's curves."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bayes_dp import plots

    fig, (ax, ax2) = plt.subplots(
        1, 2, figsize=(13, 5.6), gridspec_kw={"width_ratios": [1.35, 1]}, layout="constrained"
    )
    ys = np.arange(len(rows))[::-1]
    for y, r in zip(ys, rows, strict=True):
        if "ci" in r:
            lo, hi = r["ci"]
            ax.plot([lo, hi], [y, y], color="C0", lw=7, solid_capstyle="butt", alpha=0.75)
            ax.text(hi + 0.15, y, f"[{lo:.2f}, {hi:.2f}]", va="center", fontsize="small")
        ax.plot(r["point"], y, "k|", ms=16, mew=2.2)
        ax.plot(r["lower"], y, marker=4, color="0.45", ms=9, ls="none")
        if r["theory"] is not None:
            ax.plot(r["theory"], y, "*", color="C3", ms=14)
            ax.text(r["theory"], y - 0.38, f"{r['theory']:.2f}", ha="center", fontsize="small")
    ax.plot([], [], color="C0", lw=7, alpha=0.75, label="90% posterior interval of eps")
    ax.plot([], [], "k|", ms=12, mew=2.2, label="classical point estimate (pooled rates)")
    ax.plot([], [], marker=4, color="0.45", ms=9, ls="none", label="classical 95% lower bound")
    ax.plot([], [], "*", color="C3", ms=12, ls="none", label="DP-SGD theoretical eps (PLD)")
    labels = [r["label"] + (" *" if r.get("warned") else "") for r in rows]
    ax.set_yticks(ys, labels)
    ax.set_ylim(-0.8, len(rows) - 0.4)
    top = max([r["point"] for r in rows] + [r["ci"][1] for r in rows if "ci" in r])
    top = max([top] + [r["theory"] for r in rows if r["theory"] is not None])
    ax.set_xlim(0, top * 1.18)
    ax.set_xlabel(f"epsilon at delta = {args.delta:g}")
    ax.set_ylabel("training algorithm")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize="small", loc="lower right")
    sub = f"LiRA on digits, {args.bases} bases x 2 x {args.models} models, alpha = {args.alpha}"
    if any(r.get("warned") for r in rows):
        sub += "\n* ConvergenceWarning: some chains warn; see docs/validation/correlated.md"
    ax.set_title(f"Table 1 as a figure: epsilon per algorithm\n{sub}", fontsize="medium")
    if curves is not None:
        label, fp, fn, n = curves
        plots.plot_error_curves(CURVE_ALPHAS, fp, fn, n, highlight=args.alpha, ax=ax2)
        ax2.set_title(
            f"{label}: errors of each base over alpha* in "
            f"[{CURVE_ALPHAS[0]:g}, {CURVE_ALPHAS[-1]:g}]\n(paper Fig. 4 top; cross-fed, N = {n})",
            fontsize="medium",
        )
    else:
        ax2.set_axis_off()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    print(f"figure written to {path}")


def say(msg: str) -> None:
    """Print a progress line on stderr at once (also when stderr is not a terminal)."""
    print(msg, file=sys.stderr, flush=True)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="5 bases, N = 20, 10 epochs")
    p.add_argument("--bases", type=int, default=20)
    p.add_argument("--models", type=int, default=100, help="N, models per hypothesis")
    p.add_argument("--epochs", type=int, default=50)
    p.add_argument("--dp-epochs", type=int, default=20)
    p.add_argument("--alpha", type=float, default=0.1)
    p.add_argument("--delta", type=float, default=1e-5)
    p.add_argument("--z", choices=("random", "mislabelled"), default="mislabelled")
    p.add_argument("--out", default="lira_digits_audit")
    p.add_argument("--jobs", type=int, default=-1)
    p.add_argument("--seed", type=int, default=2024)
    p.add_argument("--png", metavar="PATH", help="write Table 1 as a figure (PNG) to PATH")
    p.add_argument("--curves", default="A2", help="algorithm whose error curves the PNG shows")
    args = p.parse_args(argv)
    if args.quick:
        args.bases, args.models, args.epochs, args.dp_epochs = 5, 20, 10, 5
        args.out += "_quick"

    X, y = mia.load_digits()
    bases = mia.draw_challenge_bases(X, y, args.bases, size=999, z=args.z, seed=args.seed)
    has_posterior = hasattr(bdp, "estimate_epsilon")
    rows, curves = [], None
    t_all = time.perf_counter()
    algos = algorithms(args.epochs, args.dp_epochs)
    for i, (label, algo) in enumerate(algos.items()):
        t0 = time.perf_counter()
        # progress on stderr, one line per step: the run is silent for minutes otherwise
        say(
            f"[{i + 1}/{len(algos)}] {label}: training 2 x {args.models} models on each of "
            f"{args.bases} bases ..."
        )
        res = mia.run_audit(
            algo,
            bases,
            args.models,
            f"{args.out}/{label.split()[0]}_{algo.output_noise:g}_{i}",
            seed=args.seed + i,
            n_jobs=args.jobs,
            progress=not args.quick,
        )
        counts = res.counts(args.alpha)
        if args.png and label.split()[0] == args.curves.split()[0] and curves is None:
            curves = (label, *res.error_curves(CURVE_ALPHAS), args.models)
        point, lower = pooled_epsilon(counts, args.delta)
        row = {
            "label": label,
            "fp": int(counts.fp.sum()),
            "fn": int(counts.fn.sum()),
            "n": int(counts.n_neg.sum()),
            "point": point,
            "lower": lower,
            "theory": algo.epsilon(args.delta, 1000, accountant="pld")
            if algo.dp is not None
            else None,
            "secs": time.perf_counter() - t0,
        }
        say(f"[{i + 1}/{len(algos)}] {label}: trained in {time.perf_counter() - t0:.0f} s")
        if has_posterior:
            t1 = time.perf_counter()
            say(f"[{i + 1}/{len(algos)}] {label}: sampling the posterior of eps (20,000 draws) ...")
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", bdp.ConvergenceWarning)
                post = bdp.estimate_epsilon(
                    res.to_evidence(args.alpha, name="lira"),
                    delta=args.delta,
                    draws=20_000,
                    seed=args.seed,
                )
            for w in caught:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            row["warned"] = any(issubclass(w.category, bdp.ConvergenceWarning) for w in caught)
            row["ci"] = tuple(float(v) for v in post.interval(0.9, "eps"))
            say(f"[{i + 1}/{len(algos)}] {label}: sampled in {time.perf_counter() - t1:.0f} s")
        row["secs"] = time.perf_counter() - t0
        rows.append(row)

    print(
        f"\nLiRA audit on digits: {args.bases} bases x 2 x {args.models} models, "
        f"alpha = {args.alpha}, delta = {args.delta:g}, z = {args.z}, MLP epochs = {args.epochs}"
    )
    head = f"{'algorithm':<15} {'FP':>6} {'FN':>6} {'of':>6} {'eps point':>9} {'eps LB95':>8}"
    head += f" {'90% CI (posterior)':>20} {'eps theory':>10} {'time':>6}"
    print(head)
    print("-" * len(head))
    for r in rows:
        ci = f"[{r['ci'][0]:.2f}, {r['ci'][1]:.2f}]" if "ci" in r else "n/a"
        th = f"{r['theory']:.2f}" if r["theory"] is not None else "-"
        print(
            f"{r['label']:<15} {r['fp']:>6} {r['fn']:>6} {r['n']:>6} {r['point']:>9.2f} "
            f"{r['lower']:>8.2f} {ci:>20} {th:>10} {r['secs']:>5.0f}s"
        )
    if not has_posterior:
        print(
            "\nbayes_dp.estimate_epsilon is not available in this installation: showing the "
            "counts and classical bounds only (no posterior intervals)."
        )
    print(f"total {time.perf_counter() - t_all:.0f} s; losses stored in {args.out}/")
    if args.png:
        plot_table(rows, curves, args, args.png)


if __name__ == "__main__":
    main()
