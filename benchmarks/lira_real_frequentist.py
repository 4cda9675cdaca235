"""The claim's frequentist part on stored real score matrices, without sampling (issue 32).

Reads the score matrices ``benchmarks/lira_real_claim.py --save DIR`` stored (``.npz`` with
``scores`` and ``keep``; the file name carries the canary rate ``c...`` and the seed), redraws
the canaries from the seed (``benchmarks._support.lira_real.design``) and prints, for all
targets, the canaries only and all targets with the canaries declared
(``to_evidence(focus=...)``), what ``bayes_dp.results.claim_scores.score_matrix_bound`` gives at
95% and delta = 1e-5: the frequentist part, its per-target part and its pooled part (the mean
per-model FP and FN rates of the test models and their betting upper bounds;
``docs/validation/lira.md``, "The pooled bound"). The posterior is not sampled: the claim is at
most this figure.

    python benchmarks/lira_real_frequentist.py lira_real/*.npz
"""

from __future__ import annotations

import argparse
import re
import sys
import warnings
from pathlib import Path

import numpy as np

import mia
from bayes_dp.results.claim_scores import score_matrix_bound

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for benchmarks._support

from benchmarks._support.lira_real import design  # noqa: E402

DELTA, PROB = 1e-5, 0.95


def parts(scores, keep, focus=None) -> dict:
    """The claim's frequentist part of a score matrix (online test at alpha 0.1)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mia.counts_from_score_matrix(scores, keep, 0.1, skip=True)
    ev = res.to_evidence(focus=focus)
    c = {k: getattr(res.counts, k).tolist() for k in ("fp", "n_neg", "fn", "n_pos")}
    st = {"delta": DELTA, "groups": [{"name": "lira", "counts": c, "dependence": ev.dependence}]}
    return score_matrix_bound(st, PROB)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", type=Path)
    a = ap.parse_args()
    print(
        "| file | subset | frequentist part | per-target part | pooled part | mean FP rate "
        "(upper) | mean FN rate (upper) | pooled over |"
    )
    print("|" + " --- |" * 8)
    for f in a.files:
        m = re.search(r"_c([0-9.]+)_seed(\d+)\.npz$", f.name)
        if m is None:
            raise ValueError(f"`files`: no canary rate and seed in the name {f.name!r}")
        d = np.load(f)
        scores, keep = d["scores"], d["keep"]
        _, _, canary, keep_design = design(scores.shape[0], scores.shape[1], float(m[1]), int(m[2]))
        if not np.array_equal(keep_design, keep):
            raise ValueError(f"{f.name}: the memberships are not the design's of its seed")
        cols = np.flatnonzero(canary)
        for subset, sub, focus in (
            ("all", slice(None), None),
            ("canaries", cols, None),
            ("declared", slice(None), cols),
        ):
            b = parts(scores[:, sub], keep[:, sub], focus)
            p = b["pooled"]
            pooled = (
                f"{p['eps']:.3f} | {p['fpr_mean']:.3f} ({p['fpr_upper']:.3f}) | "
                f"{p['fnr_mean']:.3f} ({p['fnr_upper']:.3f}) | {p['n_targets']} {p['targets']}"
                if p
                else "- | - | - | -"
            )
            print(
                f"| {f.stem} | {subset} | {b['lower']:.3f} | {b['target_lower']:.3f} | {pooled} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
