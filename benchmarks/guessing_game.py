"""The guessing game on score matrices (issue 49): its bound beside today's claim, and its cost.

``table``: Laplace-mechanism score matrices (each target exactly eps-DP: OUT scores Laplace(0,
1), IN scores Laplace(eps, 1), as ``mia.coverage.score_matrix_audit(mechanism="laplace")``
draws them), 1,000 exposed targets, delta 1e-5, ``--audits`` per row: 64 / 256 models, the
independent design (every membership a fair coin) and balanced halves (every target IN for
exactly half of the models), eps 2 and 4, and 64 independent models with 10,000 more targets
that show nothing (eps 0) at eps 4, beside 1,000 or 15 exposed ones. Per row, medians over
the audits of today's claim (the frequentist part of ``bayes_dp.audit_claim`` on the default
score-matrix evidence: ``mia.counts_from_score_matrix(alpha=0.1)``, ``to_evidence()``, the
larger of the per-target and pooled bounds,
``bayes_dp.results.claim_scores.score_matrix_bound``) and of the guessing game's bounds
(``mia.guessing_game`` at defaults, ``bounds(delta)``: eps at delta over the k grid with
Bonferroni, at the k predicted from reference information, and the two combined at half the
error each), and how many audits put each above the truth.

``real``: the real digits run of ``tests/_support/lira_real.py`` (64 MLPs, 3% canaries), with
the canaries declared: today's claim (``to_evidence(focus=canaries)``) beside the game on the
canaries (``canaries=...``); and on all targets undeclared. ``--save DIR`` keeps the trained
matrix (training takes a few minutes; a rerun only analyses).

``scale``: time and peak memory (tracemalloc) of ``mia.guessing_game`` plus its bounds at
64 x 50,000 and 256 x 50,000 (targets: 1 min and 5 min, 2 GB).

    python benchmarks/guessing_game.py table --audits 10
    python benchmarks/guessing_game.py real --save /tmp/lira_real
    python benchmarks/guessing_game.py scale

Figures: ``docs/validation/guessing_game.md``.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests._support

ROWS = [  # (models, design, eps, padding targets, exposed targets)
    (64, "independent", 2.0, 0, 1000),
    (64, "independent", 4.0, 0, 1000),
    (64, "balanced", 2.0, 0, 1000),
    (64, "balanced", 4.0, 0, 1000),
    (256, "independent", 2.0, 0, 1000),
    (256, "independent", 4.0, 0, 1000),
    (256, "balanced", 2.0, 0, 1000),
    (256, "balanced", 4.0, 0, 1000),
    (64, "independent", 4.0, 10_000, 1000),
    (64, "independent", 4.0, 10_000, 15),
]


def laplace_matrix(rng, n_models, design, eps, n_exposed=1000, padding=0):
    """A Laplace score matrix: ``n_exposed`` targets at eps, ``padding`` targets at 0."""
    n = n_exposed + padding
    if design == "independent":
        keep = rng.random((n_models, n)) < 0.5
    else:
        keep = np.argsort(rng.random((n_models, n)), axis=0) < n_models // 2
    shift = np.r_[np.full(n_exposed, eps), np.zeros(padding)]
    return rng.laplace(0.0, 1.0, keep.shape) + shift * keep, keep


def todays_claim(scores, keep, delta, focus=None, seed=0):
    """The frequentist lower end of today's claim on the default score-matrix evidence."""
    import mia
    from bayes_dp.results.claim_scores import score_matrix_bound

    res = mia.counts_from_score_matrix(scores, keep, 0.1, skip=True, seed=seed)
    ev = res.to_evidence(name="lira", **({} if focus is None else {"focus": focus}))
    st = {
        "delta": delta,
        "groups": [
            {
                "name": ev.name,
                "likelihood": ev.likelihood,
                "counts": ev.counts.to_dict(),
                "dependence": dict(ev.dependence),
            }
        ],
    }
    return score_matrix_bound(st, 0.95)["lower"]


def table(audits: int, delta: float, seed: int, only=None) -> None:
    import mia

    print(
        "models design       eps  exposed+pad | today (med, >truth) | game grid (med, >truth, k) "
        "| game predicted (med, >truth, k) | combined | design m"
    )
    rows = ROWS if only is None else [ROWS[i] for i in only]
    for n_models, design, eps, pad, exposed in rows:
        rng = np.random.default_rng([seed, n_models, int(eps), pad, design == "balanced"])
        today, grid, pred, both, kg, kp = [], [], [], [], [], []
        t0 = time.time()
        for i in range(audits):
            scores, keep = laplace_matrix(rng, n_models, design, eps, exposed, pad)
            today.append(todays_claim(scores, keep, delta, seed=i))
            game = mia.guessing_game(scores, keep, seed=i)
            b = game.bounds(delta)
            grid.append(b["grid"]["eps"])
            kg.append(b["grid"]["eps_k"])
            pred.append(b["predicted"]["eps"])
            both.append(b["combined"]["eps"]["eps"])
            kp.append(b["predicted"]["eps_k"])
        truth = eps + 2.0 * np.log1p(-delta)

        def fmt(x, truth=truth):
            x = np.asarray(x)
            return f"{np.median(x):5.2f} {int(np.sum(x > truth)):2d}/{x.size}"

        print(
            f"{n_models:6d} {design:12s} {eps:3.0f} {exposed:4d}+{pad:5d} | {fmt(today):19s} | "
            f"{fmt(grid)} k~{int(np.median(kg)):6d}   | {fmt(pred)} k~{int(np.median(kp)):6d}"
            f"          | {fmt(both)} | {game.design} {game.m}  ({time.time() - t0:.0f} s)",
            flush=True,
        )


def real(save: str | None, delta: float) -> None:
    import mia

    from tests._support.lira_real import algorithm, design, train_scores

    X, y, canary, keep = design(64, None, 0.03, 0)
    algo = algorithm("mlp", 100, 0.01, 2.5)
    path = None if save is None else f"{save}/mlp_64.npz"
    t0 = time.time()
    scores, info = train_scores(algo, X, y, keep, 0, path, meta={"canary": canary})
    print(f"score matrix {scores.shape} ({info}, {time.time() - t0:.0f} s)")
    cols = np.flatnonzero(canary)
    print(f"today's claim, canaries declared: {todays_claim(scores, keep, delta, cols):.3f}")
    game = mia.guessing_game(scores, keep, canaries=cols, seed=0)
    b = game.bounds(delta)
    print(
        f"game on the {cols.size} canaries ({game.design}, m = {game.m}): grid "
        f"{b['grid']['eps']:.3f} (k {b['grid']['eps_k']}, v {b['grid']['eps_v']}), predicted "
        f"{b['predicted']['eps']:.3f} (k {b['predicted']['eps_k']}, v {b['predicted']['eps_v']}),"
        f" combined {b['combined']['eps']['eps']:.3f}"
    )
    print(f"today's claim, all targets undeclared: {todays_claim(scores, keep, delta):.3f}")
    game = mia.guessing_game(scores, keep, seed=0)
    b = game.bounds(delta)
    print(
        f"game on all targets ({game.design}, m = {game.m}, {game.candidates.size} candidates): "
        f"grid {b['grid']['eps']:.3f} (k {b['grid']['eps_k']}, v {b['grid']['eps_v']}), "
        f"predicted {b['predicted']['eps']:.3f} (k {b['predicted']['eps_k']}, "
        f"v {b['predicted']['eps_v']}), combined {b['combined']['eps']['eps']:.3f}"
    )


def scale(delta: float) -> None:
    import mia

    for n_models in (64, 256):
        rng = np.random.default_rng(n_models)
        scores, keep = laplace_matrix(rng, n_models, "independent", 2.0, n_exposed=50_000)
        tracemalloc.start()
        t0 = time.time()
        game = mia.guessing_game(scores, keep, seed=0)
        game.bounds(delta)
        game.record(delta)
        took = time.time() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(
            f"{n_models} x 50,000: {took:.1f} s, peak {peak / 2**30:.2f} GB above the "
            f"{scores.nbytes / 2**30:.2f} GB matrix (m = {game.m})",
            flush=True,
        )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("part", choices=["table", "real", "scale"])
    ap.add_argument("--audits", type=int, default=10)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rows", type=int, nargs="+", help="table: only these rows (0-based)")
    ap.add_argument("--save", metavar="DIR", help="real: store (and resume) the score matrix")
    a = ap.parse_args(argv)
    # today's counts warn that cross-fed decisions are dependent (their claim deflates them)
    warnings.simplefilter("ignore")
    if a.part == "table":
        table(a.audits, a.delta, a.seed, a.rows)
    elif a.part == "real":
        real(a.save, a.delta)
    else:
        scale(a.delta)


if __name__ == "__main__":
    main()
