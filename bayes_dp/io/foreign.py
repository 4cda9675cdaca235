"""The one entry into ``mia`` for inputs that ``mia``'s own readers read.

Score matrices (``mia.read_score_file``) and result folders of the LiRA reference code (and its
PyTorch port), Privacy Meter and privacy-estimates (``mia.read_results``) become evidence here:
score matrices through ``mia.guessing_game`` (one group of guesses, the default; its claim:
docs/validation/guessing_game.md) or ``mia.counts_from_score_matrix`` (one binomial group per
target, ``evidence="targets"``, docs/validation/lira.md);
privacy-estimates' attack results are counts already; whole-ROC inputs (a privacy-estimates
game's scores and challenge bits, its attack results read as one game's ROC, or one model's
scores under a global threshold, ``score_method="global"``) become
:class:`~bayes_dp.GdpEvidence` for :func:`~bayes_dp.estimate_gdp`. ``mia`` builds on
``bayes_dp``, so it is imported lazily, inside :func:`evidence_from_mia` only
(``tests/project/test_conventions.py`` allows that one function).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

#: the membership tests of score matrices: LiRA's online and offline tests (``-fixed``: one
#: variance pooled over targets), and ``global``, one threshold for every target (a whole ROC)
SCORE_METHODS = ("online", "offline", "online-fixed", "offline-fixed", "global")


#: Evidence a score matrix becomes (:func:`evidence_from_mia`'s ``evidence``).
EVIDENCE_KINDS = ("game", "targets")
#: Seed of the guessing game's split of the models and its matchings: fixed, so that the same
#: score matrix gives the same game (and the claim cannot be shopped for over splits).
GAME_SEED = 0


def evidence_from_mia(
    paths,
    kind: str,
    *,
    alpha: float = 0.1,
    score_method: str = "online",
    epoch: int | str | None = None,
    signals: str | None = None,
    indices=None,
    select=None,
    skip_one_sided: bool = False,
    same_challenges: str | None = None,
    target_model: int = 0,
    bins=None,
    direction: str = "auto",
    log: Callable[[str], None] | None = None,
    delta: float | None = None,
    extras: dict | None = None,
    focus=None,
    evidence: str = "game",
) -> list:
    """Read a score matrix or result folder with ``mia`` and return its evidence.

    Parameters
    ----------
    paths : str, path-like, or a list of them
        The input (several only for privacy-estimates files).
    kind : {"score_matrix", "result_folder", "attack_results"}
        As :func:`bayes_dp.io.detect_input` says.
    alpha, score_method
        The membership test of score matrices and score folders: type-I error, and one of
        :data:`SCORE_METHODS` ("online", "offline", "online-fixed", "offline-fixed": LiRA's
        tests, ``-fixed`` with one variance pooled over targets; "global": one threshold for
        every target, which needs no reference model: the scores of model ``target_model``
        read as a whole ROC).
    epoch, signals, indices, select, skip_one_sided, same_challenges, direction
        As in :func:`mia.read_results`.
    target_model : int
        ``score_method="global"``: the row whose members' and non-members' scores form the ROC.
    bins : int or array_like, optional
        Whole-ROC inputs from scores: the bins of :func:`bayes_dp.gdp_evidence`.
    log : callable, optional
        Receives one line per thing read and per note of the reader (default: none).
    delta : float, optional
        With ``extras``: the delta of the frequentist companion bounds of a score matrix.
    extras : dict, optional
        Receives ``"companion"``: :func:`mia.bounds.companion_bounds` of the counted scores at
        ``delta`` (score matrices and score folders only), and ``"in_out"``: the in- and
        out-scores of a whole-ROC input read from scores.
    focus : array_like or str or path-like, optional
        Score matrices and score folders: the targets declared before the audit (canaries):
        the game's candidates (``mia.guessing_game(canaries=...)``), or, with
        ``evidence="targets"``, ``mia.ScoreMatrixCounts.to_evidence(focus=...)``.
    evidence : {"game", "targets"}
        Score matrices and score folders: ``"game"`` (default), the guessing game with
        abstention (:func:`mia.guessing_game`: tests fitted on a reference half of the models,
        guesses of the other half's memberships; one group of guesses, likelihood
        ``"guesses"``); ``"targets"``, one challenge base per target from the cross-fed
        decisions of Algorithm 5 (:func:`mia.counts_from_score_matrix`, the binomial band
        model; each target's test fitted with the tested model left out of its own side only).

    Returns
    -------
    list of Evidence or list of GdpEvidence
        Counts: one group, "attack" for privacy-estimates counts, "lira" for scores (the
        game's guesses, or the targets' counts).
        Whole-ROC inputs: :class:`~bayes_dp.GdpEvidence` groups, for
        :func:`~bayes_dp.estimate_gdp`.
    """
    import mia
    from bayes_dp.core.evidence import Evidence
    from bayes_dp.gdp.core import gdp_evidence

    say = log if log is not None else (lambda msg: None)
    if score_method not in SCORE_METHODS:
        raise ValueError(f"`score_method` must be one of {SCORE_METHODS}; found {score_method!r}")
    if evidence not in EVIDENCE_KINDS:
        raise ValueError(f"`evidence` must be one of {EVIDENCE_KINDS}; found {evidence!r}")
    if kind == "score_matrix":
        for name, v in (("select", select), ("skip_one_sided", skip_one_sided)):
            if v:
                raise ValueError(f"`{name}` applies to result folders; {paths} is a score file")
        scores, keep = mia.read_score_file(paths)
        scores, keep = np.asarray(scores, dtype=np.float64), np.asarray(keep).astype(bool)
        side = "auto"
        run = None
    elif kind in ("result_folder", "attack_results"):
        run = mia.read_results(
            paths,
            epoch=epoch,
            signals=signals,
            indices=indices,
            select=select,
            skip_one_sided=skip_one_sided,
            same_challenges=same_challenges,
            direction=direction,
        )
        for note in run.notes:
            say(note)
        if isinstance(run, (mia.AttackResultsRun, mia.ChallengeScores)):
            if focus is not None:
                raise ValueError(
                    "`focus` (--focus-targets) applies to score matrices and score folders; "
                    f"found {run.source}"
                )
            if score_method not in ("online", "global"):
                raise ValueError(
                    f"`score_method` ({score_method!r}) applies to score matrices and score "
                    f"folders; found {run.source}"
                )
        if isinstance(run, mia.ChallengeScores):
            say(f"read {run.describe()}")
            x_in, x_out = run.in_out_scores()
            if extras is not None:
                extras["in_out"] = (x_in, x_out)
            ev = gdp_evidence(x_in, x_out, bins=bins, name="challenges")
            say(
                f"whole ROC of {x_in.size} members' and {x_out.size} non-members' scores in "
                f"{ev.n_bins} bins at pooled quantiles (fixed without the challenge bits)"
            )
            return [ev]
        if isinstance(run, mia.AttackResultsRun):
            shown = ", ".join(str(f) for f in run.files)
            if run.roc is not None:
                say(f"privacy-estimates ROC points: {len(run.roc)} game(s) from {shown}")
                return list(run.roc)
            if score_method == "global":
                raise ValueError(
                    "`score_method='global'` (--score-method global) applies to score matrices "
                    f"and score folders; found {run.source}"
                )
            say(f"privacy-estimates attack results: {len(run.counts)} challenge bases from {shown}")
            return [Evidence(run.counts, name="attack")]
        say(f"read {run.describe()}")
        scores, keep = run.scores, run.keep
        side = "greater" if run.direction == "higher" else "less"
    else:
        raise ValueError(
            f"`kind` must be 'score_matrix', 'result_folder' or 'attack_results'; found {kind!r}"
        )
    if score_method == "global":
        if run is None:
            from mia.readers._common import ScoreRun, direction_of

            d, how = direction_of(scores, keep, direction, "higher", "score-matrix")
            run = ScoreRun(scores, keep, d, how, f"score matrix {paths}")
        x_in, x_out = run.in_out_scores(target_model)
        if extras is not None:
            extras["in_out"] = (x_in, x_out)
        ev = gdp_evidence(x_in, x_out, bins=bins, name="global")
        label = run.models[target_model] if run.models else f"row {target_model}"
        say(
            f"global threshold: the scores of model {target_model} ({label}) of its "
            f"{x_in.size} members and {x_out.size} non-members read as one ROC in {ev.n_bins} "
            "bins at pooled quantiles (fixed without the memberships; no reference model needed)"
        )
        return [ev]
    _check_countable(keep, score_method)
    method, _, fixed = score_method.partition("-")
    if evidence == "game":
        from mia.guessing import companion_rows
        from mia.score_checks import check_focus

        canaries = None if focus is None else check_focus(focus, keep.shape[1])
        game = mia.guessing_game(
            scores,
            keep,
            design=None if run is None else run.design,
            method=method,
            fixed_variance=bool(fixed),
            canaries=canaries,
            alpha=alpha,
            seed=GAME_SEED,
        )
        ev = game.to_evidence(name="lira", delta=0.0 if delta is None else delta)
        src = ev.source
        which = (
            f"{len(game.candidates)} declared canaries"
            if game.declared
            else f"the {len(game.candidates)} targets most exposed on the reference half"
        )
        say(
            f"guessing game on {keep.shape[0]} models x {keep.shape[1]} targets: design "
            f"{game.design} ({game.design_reason}); a test fitted on "
            f"{len(game.reference_models)} reference models guesses the memberships of "
            f"{len(game.test_models)} test models in {which}: {game.m} coins; {src['v']} of "
            f"{src['k']} right at the k predicted from the reference half"
        )
        if extras is not None and delta is not None:
            extras["companion"] = companion_rows(src)
        return [ev]
    res = mia.counts_from_score_matrix(
        scores,
        keep,
        alpha,
        method,
        fixed_variance=bool(fixed),
        skip=True,
        side=side if method == "offline" else "auto",
    )
    say(
        f"scores of {keep.shape[1]} targets under {keep.shape[0]} models: "
        f"{score_method} test at alpha={res.alpha:g}, {len(res.counts)} targets counted, "
        f"{res.n_skipped} skipped (too few IN/OUT models or no spread)"
    )
    if res.dependence is not None:
        say(f"dependence of the pooled counts: {res.dependence!r}")
    if extras is not None and delta is not None:
        from mia.bounds import companion_bounds

        extras["companion"] = companion_bounds(res, delta=delta, scores=scores, keep=keep)
    evidence = res.to_evidence(name="lira", focus=focus)
    if focus is not None:
        declared = evidence.dependence["focus_targets"]
        counted = np.isin(declared, res.targets).sum()
        say(f"targets declared in advance: {len(declared)}, of which {counted} counted")
    return [evidence]


def _check_countable(keep: np.ndarray, score_method: str) -> None:
    """Refuse score runs where no target has the 2 IN and 2 OUT models any per-target test needs.

    Such runs (a LOSS audit with no reference model: one pair of models, each target IN for
    one and OUT for the other) are read with one threshold for all targets instead.
    """
    n_in = keep.sum(axis=0)
    n_out = keep.shape[0] - n_in
    if np.any((n_in >= 2) & (n_out >= 2)):
        return
    raise ValueError(
        f"no target has 2 IN and 2 OUT models (at most {int(n_in.max())} IN and "
        f"{int(n_out.max())} OUT among {keep.shape[0]} models), so no per-target test "
        f"({score_method}) can be fitted, not even with one pooled variance (online-fixed). A "
        "global threshold needs no reference model: --score-method global reads the target "
        "model's scores as one whole ROC (a Gaussian-DP posterior; --target-model N picks the "
        "model); or train more models"
    )
