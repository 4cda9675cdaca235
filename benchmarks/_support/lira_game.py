"""The default audit of a real LiRA run since issue 49: the guessing game and its posterior.

:func:`analyse_game` is :func:`benchmarks._support.lira_real.analyse` for the evidence that
``bayes-dp estimate`` makes of a score matrix by default: ``mia.guessing_game`` (seed 0, as
``bayes_dp.io.foreign.GAME_SEED``), ``to_evidence``, ``bdp.estimate_epsilon`` at defaults and
``bdp.audit_claim`` at 95%. Used by ``benchmarks/lira_real_claim.py --evidence game`` and the
tests of the real runs.
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks._support.lira_real import SUBSETS, run_fields


def analyse_game(
    scores,
    keep,
    canary,
    *,
    subset: str = "all",
    alpha: float = 0.1,
    delta: float = 1e-5,
    seed: int = 0,
    max_time: float | None = None,
    cores: int | None = None,
) -> dict:
    """The default audit of one subset of the targets on the guessing game's evidence.

    ``subset`` as in :func:`benchmarks._support.lira_real.analyse` (``"declared"``: all targets,
    the canaries declared as the game's candidates). Returns the figures the benchmark prints.
    """
    import bayes_dp as bdp
    import mia

    if subset not in SUBSETS:
        raise ValueError(f"`subset` must be one of {SUBSETS}; found {subset!r}")
    cols = {
        "all": np.arange(canary.size),
        "declared": np.arange(canary.size),
        "canaries": np.flatnonzero(canary),
        "others": np.flatnonzero(~canary),
    }[subset]
    canaries = np.flatnonzero(canary) if subset == "declared" else None
    game = mia.guessing_game(scores[:, cols], keep[:, cols], canaries=canaries, alpha=alpha, seed=0)
    ev = game.to_evidence(name="lira", delta=delta)
    t0 = time.perf_counter()
    post = bdp.estimate_epsilon(
        ev, delta=delta, seed=seed, max_time=max_time, cores=cores, check=False
    )
    seconds = time.perf_counter() - t0
    claim = bdp.audit_claim(post)
    fb = claim.frequentist or {}
    src = ev.source
    return {
        "subset": subset,
        "n_targets": int(cols.size),
        "design": game.design,
        "m": game.m,
        "k": src["k"],
        "v": src["v"],
        "n_candidates": int(game.candidates.size),
        "n_canary_candidates": int(canary[cols[game.candidates]].sum()),
        **run_fields(post, claim, seconds),
        "game_bound": (fb.get("game") or {}).get("eps"),
        "pooled_bound": (fb.get("pooled") or {}).get("eps"),
        "sentence": claim.sentence,
    }
