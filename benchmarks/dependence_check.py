"""Check the design effect of mia.dependence against replicate score matrices (known truth).

For each scenario, ``--reps`` score matrices of ``--models`` x ``--targets`` are drawn with the
same per-target shifts (a Gaussian mechanism, shifts uniform on [0, 2], optionally a per-model
shift of sd ``shift``), turned into decisions (cross-fed: ``mia.counts_from_score_matrix``
online at alpha = 0.1; fixed: thresholds at the true OUT quantile), and the empirical design
effect Var(pooled count) / sum_t n p_t (1 - p_t) (p_t: the target's mean rate over replicates)
is compared with the mean of the estimated one. Prints one row per scenario and side.

    python benchmarks/dependence_check.py --reps 300
"""

import argparse
import time
import warnings

import numpy as np
from scipy.special import ndtri

import mia
from bayes_dp.core.exceptions import DependenceWarning
from mia.dependence import estimate_dependence


def draw(rng, n_models, n_targets, mu, shift):
    scores, keep = mia.simulate_score_matrix(n_models, n_targets, mu, seed=rng)
    return scores + shift * rng.standard_normal((n_models, 1)), keep


def run(fit, shift, reps, n_models, n_targets, alpha, seed):
    rng = np.random.default_rng(seed)
    mu = np.linspace(0.0, 2.0, n_targets)
    z = float(ndtri(1 - alpha))
    s_fp, s_fn, fp_t, fn_t, est_fp, est_fn, disp = [], [], [], [], [], [], []
    for _ in range(reps):
        scores, keep = draw(rng, n_models, n_targets, mu, shift)
        if fit == "cross_fed":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DependenceWarning)
                res = mia.counts_from_score_matrix(scores, keep, alpha)
            d, dec = res.dependence, res.decisions
        else:
            sd = np.sqrt(1 + shift**2)
            dec = scores > z * sd  # the true OUT quantile: no fit
            d = estimate_dependence(dec, keep, threshold_var=0.0, scores=scores, fit="fixed")
        fp = (dec & ~keep).sum(axis=0)
        fn = (~dec & keep).sum(axis=0)
        s_fp.append(fp.sum())
        s_fn.append(fn.sum())
        fp_t.append(fp)
        fn_t.append(fn)
        est_fp.append(d.fp_design_effect)
        est_fn.append(d.fn_design_effect)
        disp.append((d.fp_model_dispersion, d.fn_model_dispersion))
    n1 = keep.sum(axis=0)
    n0 = n_models - n1
    rows = []
    for side, s, per, n, est in (
        ("FP", s_fp, fp_t, n0, est_fp),
        ("FN", s_fn, fn_t, n1, est_fn),
    ):
        p = np.mean(per, axis=0) / n
        v = float((n * p * (1 - p)).sum())
        emp = float(np.var(s, ddof=1) / v)
        rows.append(
            (side, emp, emp * np.sqrt(2 / (reps - 1)), float(np.mean(est)), float(np.std(est)))
        )
    return rows, np.mean(disp, axis=0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--models", type=int, default=64)
    ap.add_argument("--targets", type=int, default=200)
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    print(f"{a.models} models x {a.targets} targets, {a.reps} replicates, alpha = {a.alpha}")
    print(
        "fit        shift side  empirical deff (+- MC sd)  estimated deff (sd)  "
        "per-model rate dispersion"
    )
    for fit in ("cross_fed", "fixed"):
        for shift in (0.0, 0.25, 0.5):
            t0 = time.perf_counter()
            rows, disp = run(fit, shift, a.reps, a.models, a.targets, a.alpha, a.seed)
            for (side, emp, emp_sd, est, est_sd), dsp in zip(rows, disp, strict=True):
                print(
                    f"{fit:10s} {shift:5.2f} {side:4s}  {emp:7.2f} (+- {emp_sd:.2f})"
                    f"            {est:7.2f} ({est_sd:.2f})        {dsp:.2f}"
                )
            print(f"   ({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
