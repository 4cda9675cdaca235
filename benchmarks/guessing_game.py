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

``real``: the real digits run of ``benchmarks/_support/lira_real.py`` (64 MLPs, 3% canaries), with
the canaries declared: today's claim (``to_evidence(focus=canaries)``) beside the game on the
canaries (``canaries=...``); and on all targets undeclared. ``--save DIR`` keeps the trained
matrix (training takes a few minutes; a rerun only analyses).

``scale``: time and peak memory (tracemalloc) of ``mia.guessing_game`` plus its bounds at
64 x 50,000 and 256 x 50,000 (targets: 1 min and 5 min, 2 GB), then the default posterior.

``posterior``: the default posterior on the game (``game.to_evidence``, ``estimate_epsilon`` at
its automatic length) on null matrices (eps = 0, 64 models x 2,000 targets) of both designs,
its 5% quantile and claim; and its 5% quantile when 300 / 1,000 / 10,000 targets that show
nothing are added to 1,000 at eps = 2.

"claim now" (``table``, ``real``) is the frequentist lower end of the claim on the game's
evidence, the default since issue 49 (``bayes_dp.results.claim_game.game_bound``: the game's
combined bound and the pooled bound, each at its share of the error); "before" is the claim of
the cross-fed default it replaced.

    python benchmarks/guessing_game.py table --audits 10
    python benchmarks/guessing_game.py real --save /tmp/lira_real
    python benchmarks/guessing_game.py scale
    python benchmarks/guessing_game.py posterior --audits 20

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
sys.path.insert(0, str(ROOT))  # benchmarks._support

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


def new_claim(game, delta: float) -> float:
    """The frequentist lower end of the claim on the game's evidence (the default since #49)."""
    from bayes_dp.results.claim_game import game_bound

    st = {"delta": delta, "groups": [{"name": "lira", "source": game.record(delta)}]}
    return game_bound(st, 0.95)["lower"]


def table(audits: int, delta: float, seed: int, only=None) -> None:
    import mia

    print(
        "models design       eps  exposed+pad | before (med, >truth) | game grid (med, >truth, k) "
        "| game predicted (med, >truth, k) | combined | claim now | design m"
    )
    rows = ROWS if only is None else [ROWS[i] for i in only]
    for n_models, design, eps, pad, exposed in rows:
        rng = np.random.default_rng([seed, n_models, int(eps), pad, design == "balanced"])
        today, grid, pred, both, kg, kp, claim = [], [], [], [], [], [], []
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
            claim.append(new_claim(game, delta))
        truth = eps + 2.0 * np.log1p(-delta)

        def fmt(x, truth=truth):
            x = np.asarray(x)
            return f"{np.median(x):5.2f} {int(np.sum(x > truth)):2d}/{x.size}"

        print(
            f"{n_models:6d} {design:12s} {eps:3.0f} {exposed:4d}+{pad:5d} | {fmt(today):19s} | "
            f"{fmt(grid)} k~{int(np.median(kg)):6d}   | {fmt(pred)} k~{int(np.median(kp)):6d}"
            f"          | {fmt(both)} | {fmt(claim)} | {game.design} {game.m}  "
            f"({time.time() - t0:.0f} s)",
            flush=True,
        )


def real(save: str | None, delta: float) -> None:
    import mia

    from benchmarks._support.lira_real import algorithm, design, train_scores

    X, y, canary, keep = design(64, None, 0.03, 0)
    algo = algorithm("mlp", 100, 0.01, 2.5)
    path = None if save is None else f"{save}/mlp_64.npz"
    t0 = time.time()
    scores, info = train_scores(algo, X, y, keep, 0, path, meta={"canary": canary})
    print(f"score matrix {scores.shape} ({info}, {time.time() - t0:.0f} s)")
    cols = np.flatnonzero(canary)
    print(f"before, canaries declared: {todays_claim(scores, keep, delta, cols):.3f}")
    game = mia.guessing_game(scores, keep, canaries=cols, seed=0)
    print(f"claim now, canaries declared: {new_claim(game, delta):.3f}")
    b = game.bounds(delta)
    print(
        f"game on the {cols.size} canaries ({game.design}, m = {game.m}): grid "
        f"{b['grid']['eps']:.3f} (k {b['grid']['eps_k']}, v {b['grid']['eps_v']}), predicted "
        f"{b['predicted']['eps']:.3f} (k {b['predicted']['eps_k']}, v {b['predicted']['eps_v']}),"
        f" combined {b['combined']['eps']['eps']:.3f}"
    )
    print(f"before, all targets undeclared: {todays_claim(scores, keep, delta):.3f}")
    game = mia.guessing_game(scores, keep, seed=0)
    print(f"claim now, all targets undeclared: {new_claim(game, delta):.3f}")
    b = game.bounds(delta)
    print(
        f"game on all targets ({game.design}, m = {game.m}, {game.candidates.size} candidates): "
        f"grid {b['grid']['eps']:.3f} (k {b['grid']['eps_k']}, v {b['grid']['eps_v']}), "
        f"predicted {b['predicted']['eps']:.3f} (k {b['predicted']['eps_k']}, "
        f"v {b['predicted']['eps_v']}), combined {b['combined']['eps']['eps']:.3f}"
    )


def _posterior(game, delta: float, seed: int):
    """The default posterior of the game (sampler at its automatic length) and its claim."""
    import bayes_dp as bdp

    post = bdp.estimate_epsilon(game.to_evidence(name="lira", delta=delta), delta=delta, seed=seed)
    lo, hi = post.interval(0.9)
    return lo, hi, post.converged, bdp.audit_claim(post).lower


def posterior(audits: int, delta: float, seed: int) -> None:
    """Null matrices (eps = 0) of both designs, and padding, through the default posterior."""
    import mia

    print("eps = 0, 64 models x 2,000 targets, the default posterior's 5% quantile:")
    for design in ("independent", "balanced"):
        rng = np.random.default_rng([seed, design == "balanced"])
        q5, claims, conv = [], [], []
        t0 = time.time()
        for i in range(audits):
            scores, keep = laplace_matrix(rng, 64, design, 0.0, 2000)
            lo, hi, ok, claim = _posterior(mia.guessing_game(scores, keep, seed=i), delta, i)
            q5.append(lo)
            claims.append(claim)
            conv.append(ok)
        q5 = np.asarray(q5)
        print(
            f"  {design:12s}: 5% quantile below 0.1 in {int(np.sum(q5 < 0.1))} of {audits} "
            f"(max {q5.max():.3g}); claim above 0 in {int(np.sum(np.asarray(claims) > 0))}; "
            f"converged {int(np.sum(conv))} of {audits} ({time.time() - t0:.0f} s)",
            flush=True,
        )
    print("padding: 64 independent models, 1,000 targets at eps 2 plus n that show nothing:")
    for i in range(audits):
        rng = np.random.default_rng([seed, 99, i])
        base = None
        line = []
        for pad in (0, 300, 1000, 10_000):
            r = np.random.default_rng([seed, 99, i])  # the same exposed targets every time
            scores, keep = laplace_matrix(r, 64, "independent", 2.0, 1000, 0)
            if pad:
                extra_s, extra_k = laplace_matrix(rng, 64, "independent", 0.0, pad, 0)
                scores, keep = np.c_[scores, extra_s], np.c_[keep, extra_k]
            lo, hi, ok, claim = _posterior(mia.guessing_game(scores, keep, seed=0), delta, 0)
            base = lo if base is None else base
            line.append(f"+{pad}: q5 {lo:.3f} ({lo / base - 1:+.1%}), claim {claim:.3f}")
        print("  audit", i, "; ".join(line), flush=True)


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
        t1 = time.time()
        lo, hi, ok, claim = _posterior(game, delta, 0)
        print(
            f"{n_models} x 50,000: game {took:.1f} s, peak {peak / 2**30:.2f} GB above the "
            f"{scores.nbytes / 2**30:.2f} GB matrix (m = {game.m}); posterior "
            f"{time.time() - t1:.1f} s (converged {ok}, 90% interval [{lo:.3g}, {hi:.3g}], "
            f"claim {claim:.3g})",
            flush=True,
        )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("part", choices=["table", "real", "scale", "posterior"])
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
    elif a.part == "posterior":
        posterior(a.audits, a.delta, a.seed)
    else:
        scale(a.delta)


if __name__ == "__main__":
    main()
