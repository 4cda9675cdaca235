"""Padding of the claim: how far do targets that show nothing move what ``audit_claim`` states?

The padded score matrices of ``benchmarks/lira_padding.py`` (``benchmarks._support.lira_sim``:
``--exposed`` targets with Gaussian effect sizes mu ~ Uniform(2, 4), then ``--pad`` targets with
mu = 0; 64 models, balanced halves, online test at alpha 0.1, delta 1e-5; the exposed targets'
counts are the same in every row of one seed). For each padding, the default evidence
(``to_evidence()``: binomial on raw counts) is sampled (``--chains`` x ``--draws`` after
``--tune``) and ``bdp.audit_claim(post, 0.95)`` read: the claim's lower end, its frequentist
part (the larger of the bound pooled over targets with the models as units, ``pooled``, and the
largest per-target Clopper-Pearson bound on effective counts, Bonferroni over the 2 T rates, each
with half of the error; ``score_matrix_bound``, also with ``--no-posterior``) and the posterior's
5% quantile, each over the exposed-only value of the same seed.

The per-target part moves through two channels, separated in the last columns: the Bonferroni
level (the exposed targets' own counts and design effects, bounded at level 0.05 / (2 T):
``bonferroni only``) and the design effects, which are estimated from all the targets of the
matrix (``FP deff``, ``FN deff``). ``best (0/n, 0/n)`` is the closed form of the best target
a balanced matrix of ``--models`` = 2 n models can hold (no error on either side;
docs/validation/lira.md,
"Padding of the claim"), on raw counts. ``--split`` adds ``mia.split_selection_bound`` (a
prototype: 5 targets selected on half of the models, bounded on the other half; the larger of
that and the all-target bound, each at half the level), seeded by the row's seed. ``--focus``
adds the claim's frequentist part with the exposed targets declared in advance
(``to_evidence(focus=...)``: their rates get 90% of the error, the others 10%, a weighted
Bonferroni correction; ``bayes_dp.results.claim_scores.score_matrix_bound``).

    python benchmarks/lira_claim_padding.py                       # seed 1, + 300 / 1,000 / 10,000
    python benchmarks/lira_claim_padding.py --seeds 1 2 3 4 5 --no-posterior --split
    python benchmarks/lira_claim_padding.py --seeds 1 2 3 --no-posterior --split --models 128
    python benchmarks/lira_claim_padding.py --seeds 1 2 3 4 5 --no-posterior --focus
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import bayes_dp as bdp
import mia
from bayes_dp.core.region import clopper_pearson_target_bounds
from bayes_dp.results.claim_scores import score_matrix_bound

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for benchmarks._support

from benchmarks._support.lira_sim import padded_matrix  # noqa: E402

DELTA = 1e-5
PROB = 0.95


def best_target_bound(n_targets: int, n: int = 32, f_fp: float = 1.0, f_fn: float = 1.0) -> float:
    """Closed form of the bound of a target with FP 0/n and FN 0/n among ``n_targets``.

    Level a = (1 - PROB) / (2 T) per rate; the two-sided Clopper-Pearson upper end of a rate with
    no error in n / f trials is 1 - (a / 2)^(f / n); the bound is log((q_fp - delta) / (1 -
    q_fn)) with q = (a / 2)^(f / n), the larger of the two orders (docs/validation/lira.md).
    """
    a2 = (1.0 - PROB) / (4.0 * n_targets)
    q_fp, q_fn = a2 ** (f_fp / n), a2 ** (f_fn / n)
    e1 = np.log((q_fp - DELTA) / (1.0 - q_fn))
    e2 = np.log((q_fn - DELTA) / (1.0 - q_fp))
    return float(max(e1, e2, 0.0))


def frequentist_parts(res, rows, n_targets: int) -> dict:
    """The bound of ``rows`` at the padded level, as a function of the design effects."""
    c = res.counts
    d = res.dependence
    f_fp, f_fn = max(d.fp_design_effect, 1.0), max(d.fn_design_effect, 1.0)
    args = (c.fp[rows], c.n_neg[rows], c.fn[rows], c.n_pos[rows], DELTA, PROB)
    return {
        "f_fp": f_fp,
        "f_fn": f_fn,
        "at_level": lambda deff: float(
            clopper_pearson_target_bounds(
                *args,
                n_rates=2 * n_targets,
                fp_design_effect=deff[0],
                fn_design_effect=deff[1],
            ).max()
        ),
    }


def claim_bound(res, focus=None) -> dict:
    """The claim's frequentist part (``score_matrix_bound``), targets ``focus`` declared."""
    ev = res.to_evidence(focus=focus)
    c = {k: getattr(res.counts, k).tolist() for k in ("fp", "n_neg", "fn", "n_pos")}
    st = {"delta": DELTA, "groups": [{"name": "lira", "counts": c, "dependence": ev.dependence}]}
    return score_matrix_bound(st, PROB)


def declared_bound(res, n_exposed: int) -> float:
    """The claim's frequentist part with the first ``n_exposed`` columns declared in advance."""
    return claim_bound(res, np.arange(n_exposed))["lower"]


def one(
    n_exposed,
    n_pad,
    seed,
    posterior,
    chains,
    draws,
    tune,
    n_models=64,
    split=False,
    focus=False,
):
    """One padded matrix: the figures of a row (the posterior's only when ``posterior``)."""
    scores, keep = padded_matrix(n_exposed, n_pad, seed, n_models)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mia.counts_from_score_matrix(scores, keep, 0.1)
    if len(res.skipped):
        raise RuntimeError(f"columns skipped: {res.skipped}")
    T = len(res.counts.fp)
    fr = frequentist_parts(res, slice(0, n_exposed), T)
    out = {
        "pad": n_pad,
        "T": T,
        "f_fp": fr["f_fp"],
        "f_fn": fr["f_fn"],
        "at_level": fr["at_level"],
        "best": best_target_bound(T, n_models // 2),
    }
    if focus:
        out["focus"] = declared_bound(res, n_exposed)
    if split:
        out["split"] = mia.split_selection_bound(
            scores, keep, alpha=0.1, delta=DELTA, confidence=PROB, seed=seed, counts=res
        )
    if posterior:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            post = bdp.estimate_epsilon(
                res.to_evidence(),
                delta=DELTA,
                chains=chains,
                draws=draws,
                tune=tune,
                seed=seed,
                progress=False,
                cores=1,
            )
            claim = bdp.audit_claim(post, PROB)
        out.update(
            lower=claim.lower,
            freq=claim.frequentist_lower,
            post_q05=claim.posterior_lower,
            fb=claim.frequentist,
            seconds=time.perf_counter() - t0,
        )
    else:
        fb = claim_bound(res)
        out["freq"] = fb["lower"]
        out["fb"] = fb
    out["pooled"] = (out["fb"]["pooled"] or {}).get("eps", float("nan"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--exposed", type=int, default=15)
    ap.add_argument("--pad", type=int, nargs="+", default=[300, 1000, 10000])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1])
    ap.add_argument("--models", type=int, default=64)
    ap.add_argument(
        "--split", action="store_true", help="also mia.split_selection_bound (prototype)"
    )
    ap.add_argument(
        "--focus", action="store_true", help="also the bound with the exposed targets declared"
    )
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--tune", type=int, default=500)
    ap.add_argument(
        "--no-posterior", action="store_true", help="the frequentist part only (no sampling)"
    )
    args = ap.parse_args()
    post = not args.no_posterior
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average "
        f"{os.getloadavg()[0]:.2f} at the start; {args.exposed} exposed targets, "
        f"{args.models} models, "
        f"binomial on raw counts, {args.chains} x {args.draws} draws after {args.tune}"
    )
    head = "| seed | added | T | "
    if post:
        head += "claim | / exposed-only | posterior 5% | / exposed-only | "
    head += (
        "frequentist | / exposed-only | pooled | bonferroni only | / exposed-only | FP deff | "
        "FN deff | "
        "best (0/n, 0/n) | / exposed-only |"
    )
    if args.split:
        head += " split (selected, all) | / exposed-only |"
    if args.focus:
        head += " declared | / exposed-only |"
    if post:
        head += " set by (FP, FN) | s |"
    print(head)
    print("|" + " --- |" * (head.count("|") - 1))
    for seed in args.seeds:
        base = None
        for n_pad in [0, *args.pad]:
            r = one(
                args.exposed,
                n_pad,
                seed,
                post,
                args.chains,
                args.draws,
                args.tune,
                args.models,
                args.split,
                args.focus,
            )
            if base is None:
                base = r
                d0 = (r["f_fp"], r["f_fn"])
            bonf = r["at_level"](d0)
            row = f"| {seed} | {n_pad:,} | {r['T']:,} | "
            if post:
                row += (
                    f"{r['lower']:.3f} | {r['lower'] / base['lower']:.3f} | {r['post_q05']:.3f} "
                    f"| {r['post_q05'] / base['post_q05']:.3f} | "
                )
            row += (
                f"{r['freq']:.3f} | {r['freq'] / base['freq']:.3f} | {r['pooled']:.3f} | "
                f"{bonf:.3f} | "
                f"{bonf / base['freq']:.3f} | {r['f_fp']:.2f} | {r['f_fn']:.2f} | "
                f"{r['best']:.3f} | {r['best'] / base['best']:.3f} |"
            )
            if args.split:
                sp = r["split"]
                row += (
                    f" {sp['eps']:.3f} ({sp['split']:.3f}, {sp['full']:.3f}) | "
                    f"{sp['eps'] / base['split']['eps']:.3f} |"
                )
            if args.focus:
                row += f" {r['focus']:.3f} | {r['focus'] / base['focus']:.3f} |"
            if post:
                fb = r["fb"]
                row += f" {fb['fp']}/{fb['n_neg']}, {fb['fn']}/{fb['n_pos']} | {r['seconds']:.0f} |"
            print(row, flush=True)


if __name__ == "__main__":
    main()
